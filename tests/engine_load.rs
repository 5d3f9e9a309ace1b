//! The engine under a stream of random and malformed protocol lines (valid
//! commands, garbage, invalid UTF-8, binary noise, very long lines): exactly
//! one reply per line (none for blank lines and comments), no exit before
//! the input ends, and memory flat. `ENGINE_LINES` sets the number of lines
//! (3,000 here; `scripts/engine-load.sh` sends 100,000).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

/// One line (without its newline) and whether it asks for a reply.
fn random_line(rng: &mut SmallRng) -> (Vec<u8>, bool) {
    const COMMANDS: [&str; 12] = [
        "new",
        "new basic",
        "new tournament",
        "go",
        "undo",
        "legal",
        "state",
        "show",
        "name",
        "help",
        "play",
        "position",
    ];
    const ACTIONS: [&str; 8] = ["b1-b2", "a1-b2", "Ga1-b2", "xc3,d4,e5,f5", "x-", "i5-h5", "e1-e2", "zz"];
    let line: Vec<u8> = match rng.random_range(0..100) {
        0..=39 => COMMANDS.choose(rng).unwrap().as_bytes().to_vec(),
        40..=59 => format!("play {}", ACTIONS.choose(rng).unwrap()).into_bytes(),
        60..=64 => br#"position {"variant": "basic", "board": {"b2": "w"}, "reserve": {"white": 11, "black": 12}, "to_move": "black"}"#.to_vec(),
        65..=69 => format!("position {{\"variant\": {}", rng.random::<u32>()).into_bytes(),
        70..=79 => (0..rng.random_range(0..80)).map(|_| rng.random_range(b' '..=b'~')).collect(),
        80..=87 => (0..rng.random_range(1..60)).map(|_| rng.random::<u8>()).filter(|&b| b != b'\n').collect(),
        88..=89 => vec![b'x'; rng.random_range(10_000..200_000)],
        90..=92 => vec![0xff, 0xfe, b'g', b'o'],
        93..=95 => Vec::new(),
        96..=97 => b"# a comment".to_vec(),
        _ => b"legal\r".to_vec(),
    };
    let text = String::from_utf8_lossy(&line);
    let trimmed = text.trim();
    let quiet = std::str::from_utf8(&line).is_ok() && (trimmed.is_empty() || trimmed.starts_with('#'));
    if trimmed.split_whitespace().next() == Some("quit") {
        return (b"name".to_vec(), true);
    }
    (line, !quiet)
}

/// The process's resident memory in KiB.
fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn one_reply_per_line_and_memory_flat() {
    let lines: usize = std::env::var("ENGINE_LINES").ok().and_then(|n| n.parse().ok()).unwrap_or(3000);
    let mut rng = SmallRng::seed_from_u64(17);
    let input: Vec<(Vec<u8>, bool)> = (0..lines).map(|_| random_line(&mut rng)).collect();
    let expected = input.iter().filter(|(_, reply)| *reply).count();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gipf"))
        .args(["engine", "--player", "random"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for (line, _) in input {
            stdin.write_all(&line).unwrap();
            stdin.write_all(b"\n").unwrap();
        }
    });
    let start = Instant::now();
    let mut replies = 0;
    let mut memory = Vec::new();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut reply = Vec::new();
    while reader.read_until(b'\n', &mut reply).unwrap() > 0 {
        replies += 1;
        reply.clear();
        if replies % (expected / 10).max(1) == 0 {
            memory.push(resident_kib(pid));
        }
    }
    writer.join().unwrap();
    let status = child.wait().unwrap();
    let stderr = String::from_utf8_lossy(
        &child
            .stderr
            .take()
            .map(|mut e| {
                let mut text = Vec::new();
                std::io::Read::read_to_end(&mut e, &mut text).unwrap();
                text
            })
            .unwrap_or_default(),
    )
    .into_owned();
    assert!(status.success() && !stderr.contains("panicked"), "{status}: {stderr}");
    assert_eq!(replies, expected, "one reply per line that asks for one");
    // Flat: after the first tenth (LibTorch loaded, buffers grown), the
    // resident memory grows by less than 20 MiB.
    let (first, last) = (memory[1], *memory.last().unwrap());
    assert!(last < first + 20 * 1024, "resident memory {memory:?} KiB");
    println!(
        "{lines} lines, {replies} replies in {:.1} s; resident memory {} to {} KiB (max {} KiB)",
        start.elapsed().as_secs_f64(),
        memory[1],
        last,
        memory.iter().max().unwrap()
    );
}
