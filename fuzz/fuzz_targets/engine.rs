//! The engine protocol: any bytes, as lines, get one reply each (blank lines
//! and comments none) until `quit`, and the engine never stops otherwise.
#![no_main]

use gipf::engine::Engine;
use gipf::players::RandomPlayer;
use gipf::rules::Variant;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let mut engine = Engine::new(Box::new(RandomPlayer::new(1)), "random".into(), Variant::Standard);
    let mut out = Vec::new();
    engine.serve(bytes, &mut out).unwrap();
    // The replies expected: one per line up to and with the first `quit`.
    let mut expected = 0;
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(text) = std::str::from_utf8(line) else {
            expected += 1;
            continue;
        };
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        expected += 1;
        if text.split_whitespace().next() == Some("quit") {
            break;
        }
    }
    let replies = out.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(replies, expected, "{:?}", String::from_utf8_lossy(&out));
});
