//! What users do with checkpoints: matches and ratings in the arena, gating
//! in the loop, the engine protocol, play in the terminal, and the export
//! that PyTorch and onnxruntime load.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use gipf::config::Config;
use gipf::train::Trainer;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn gipf(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gipf"))
        .args(args)
        .current_dir(ROOT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gipf starts");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn success(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn tiny() -> Config {
    Config::load(&Path::new(ROOT).join("configs/tiny.toml")).unwrap()
}

/// Writes checkpoints of the tiny network at `steps` (different weights each)
/// into `run/models`; returns their weights' paths.
fn checkpoints(run: &Path, steps: &[u64]) -> Vec<PathBuf> {
    steps
        .iter()
        .map(|&step| {
            let mut trainer = Trainer::new(&tiny(), tch::Device::Cpu, step as i64 + 1);
            trainer.step = step;
            trainer.save(&run.join("models")).unwrap()
        })
        .collect()
}

const TINY: [&str; 4] = ["--config", "configs/tiny.toml", "--device", "cpu"];

#[test]
fn arena_plays_checkpoints_and_baselines() {
    let run = tempfile::tempdir().unwrap();
    let paths = checkpoints(run.path(), &[0]);
    let a = format!("{}@4", paths[0].display());
    let out = success(&gipf(&[&["arena", &a, "random", "--games", "4"][..], &TINY].concat(), ""));
    assert!(out.contains("A = step-00000000 (4 sims), B = random"), "{out}");
    let line = out.lines().find(|l| l.starts_with("A ") && l.contains("wins")).expect(&out);
    let counts: Vec<u32> =
        line.split_whitespace().filter_map(|w| w.trim_end_matches(',').parse().ok()).take(3).collect();
    assert_eq!(counts.iter().sum::<u32>(), 4, "{line}");
    assert!(out.contains("Elo ") && out.contains("(95%)"), "{out}");

    for (player, expected) in [
        ("uct:", "expected uct:N"),
        ("alphabeta:0", "expected alphabeta:D"),
        ("alphabeta:x", "expected alphabeta:D"),
        ("nothing.safetensors", "no such weights file"),
        ("random@12", "no such weights file"),
    ] {
        let out = gipf(&[&["arena", player, "random", "--games", "2"][..], &TINY].concat(), "");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(expected) && !stderr.contains("panicked"), "{stderr}");
    }
    let out = gipf(&[&["arena", "random", "greedy", "--sprt", "50,0"][..], &TINY].concat(), "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ELO0 < ELO1"));
}

/// A match played in pieces: each piece takes the next free seed, and the
/// output sums every piece of the same match (weights included).
#[test]
fn a_recorded_match_adds_up_its_pieces() {
    let run = tempfile::tempdir().unwrap();
    let paths = checkpoints(run.path(), &[0, 5]);
    let file = run.path().join("target.jsonl");
    let record = file.to_str().unwrap();
    let play = |weights: &Path, extra: &[&str]| {
        let a = format!("{}@4", weights.display());
        let args = [&["arena", &a, "random", "--games", "2", "--record", record][..], extra, &TINY].concat();
        gipf(&args, "")
    };
    success(&play(&paths[0], &[]));
    let out = success(&play(&paths[0], &[]));
    assert!(out.contains("the match in all, seeds 1, 2:"), "{out}");
    let total = out.lines().last().unwrap();
    let counts: Vec<u32> =
        total.split_whitespace().filter_map(|w| w.trim_end_matches(',').parse().ok()).take(3).collect();
    assert_eq!(counts.iter().sum::<u32>(), 4, "{out}");

    // Other weights are another match; a seed already played is refused before playing.
    let out = success(&play(&paths[1], &[]));
    assert!(out.contains("the match in all, seeds 1:"), "{out}");
    let out = play(&paths[0], &["--seed", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("seed 2 of this match is recorded already"), "{stderr}");
    let pieces: Vec<serde_json::Value> =
        std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(pieces.len(), 3);
    assert_eq!(pieces[0]["a"]["precision"], "fp32");
    assert_ne!(pieces[0]["a"]["weights"], pieces[2]["a"]["weights"]);

    // Another variant is another match, and a model trained on another variant is warned of.
    let out = play(&paths[0], &["--variant", "basic"]);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.contains("the match in all, seeds 1:"), "{stdout}{stderr}");
    assert!(stderr.contains("trained on the standard variant"), "{stderr}");
    // A damaged count is refused with its line, never summed (nor wrapped).
    let mut damaged = std::fs::read_to_string(&file).unwrap();
    let last = damaged.lines().last().unwrap().to_string();
    let mut huge: serde_json::Value = serde_json::from_str(&last).unwrap();
    (huge["tally"]["wins"], huge["seed"]) = (serde_json::json!(u32::MAX), serde_json::json!(9));
    damaged.push_str(&format!("{huge}\n"));
    std::fs::write(&file, damaged).unwrap();
    let out = play(&paths[0], &["--variant", "basic"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("line 5"), "{stderr}");
}

#[test]
fn ratings_of_a_run_are_written_plotted_and_resumed() {
    let run = tempfile::tempdir().unwrap();
    checkpoints(run.path(), &[0, 5, 10]);
    let args = [
        &["ratings", "--run", run.path().to_str().unwrap(), "--games", "2", "--sims", "4", "--opponents", "2"][..],
        &TINY,
    ]
    .concat();
    let out = success(&gipf(&args, ""));
    assert!(out.contains("step-00000010"), "{out}");
    let arena = run.path().join("arena");
    let matches = std::fs::read_to_string(arena.join("matches.jsonl")).unwrap();
    assert_eq!(matches.lines().count(), 3, "5 vs 0, 10 vs 5, 10 vs 0: {matches}");
    let ratings: Vec<serde_json::Value> = std::fs::read_to_string(arena.join("ratings.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(ratings.len(), 3);
    assert_eq!(ratings[0]["elo"], 0.0);
    assert_eq!(ratings[2]["step"], 10);
    assert!(ratings.iter().all(|r| r["elo"].as_f64().unwrap().is_finite()));
    let png = std::fs::read(arena.join("ratings.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a PNG file");

    // A second rating plays nothing new; a new checkpoint adds its matches only.
    success(&gipf(&args, ""));
    assert_eq!(std::fs::read_to_string(arena.join("matches.jsonl")).unwrap(), matches);
    checkpoints(run.path(), &[15]);
    success(&gipf(&args, ""));
    assert_eq!(std::fs::read_to_string(arena.join("matches.jsonl")).unwrap().lines().count(), 5);

    std::fs::write(arena.join("matches.jsonl"), format!("{matches}{{\"a\": 1}}\n")).unwrap();
    let out = gipf(&args, "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 4: not a match record"));
    // A count past any match's is refused with its line, never an infinite Elo or a NaN.
    let first = matches.lines().next().unwrap();
    let mut huge: serde_json::Value = serde_json::from_str(first).unwrap();
    huge["tally"]["wins"] = serde_json::json!(u32::MAX);
    std::fs::write(arena.join("matches.jsonl"), format!("{huge}\n{}", &matches[first.len() + 1..])).unwrap();
    let out = gipf(&args, "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("line 1") && stderr.contains("games"), "{stderr}");
}

/// Against fixed anchors the scale is the first anchor's, and each
/// checkpoint plays every anchor.
#[test]
fn ratings_against_fixed_anchors() {
    let run = tempfile::tempdir().unwrap();
    checkpoints(run.path(), &[0, 5]);
    let run_arg = run.path().to_str().unwrap();
    let anchors = ["--anchor", "alphabeta:1", "--anchor", "random", "--opponents", "0"];
    let args = [&["ratings", "--run", run_arg, "--games", "2", "--sims", "4"][..], &anchors, &TINY].concat();
    let done = gipf(&args, "");
    let out = success(&done);
    // Off a terminal (a script's log) each match is a line as it starts.
    let stderr = String::from_utf8_lossy(&done.stderr);
    let started: Vec<&str> = stderr.lines().filter(|l| l.contains(" vs ")).collect();
    assert_eq!(started.len(), 4, "{stderr}");
    assert!(started.iter().any(|l| l.ends_with("step-00000005 vs alphabeta:1")), "{stderr}");
    assert!(out.contains("alphabeta:1") && out.contains("anchor"), "{out}");
    let matches = std::fs::read_to_string(run.path().join("arena/matches.jsonl")).unwrap();
    assert_eq!(matches.lines().count(), 4, "two checkpoints against two anchors: {matches}");
    let ratings: Vec<serde_json::Value> = std::fs::read_to_string(run.path().join("arena/ratings.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(ratings[0]["checkpoint"], "alphabeta:1");
    assert_eq!(ratings[0]["elo"], 0.0);
    assert!(ratings[0].get("step").is_none() && ratings[1].get("step").is_none());
    assert_eq!(ratings[3]["step"], 5);
    let out = gipf(&[&["ratings", "--run", run_arg, "--opponents", "0"][..], &TINY].concat(), "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("without --anchor"));
}

/// A lineage's generations (the reference, the tip, history/) are rated in
/// the order of the samples their training read, each against the one
/// before and the anchors, under names that stay theirs; the same weights
/// under two names are rated once; the Elo per doubling is printed.
#[test]
fn ratings_of_a_lineage_follow_its_compute() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("models");
    let save = |step: u64, samples_read: u64, folder: &Path, name: &str| {
        let mut trainer = Trainer::new(&tiny(), tch::Device::Cpu, step as i64 + 1);
        (trainer.step, trainer.samples_read) = (step, samples_read);
        let saved = trainer.save(&folder.join("saved")).unwrap();
        std::fs::create_dir_all(folder).unwrap();
        for ext in ["safetensors", "json"] {
            std::fs::rename(saved.with_extension(ext), folder.join(format!("{name}.{ext}"))).unwrap();
        }
    };
    save(7, 4_000_000, &models, "tip");
    save(5, 2_000_000, &models, "reference");
    save(3, 1_000_000, &models.join("history"), "step-3-old");
    std::fs::copy(models.join("tip.safetensors"), models.join("history/copy.safetensors")).unwrap();
    std::fs::copy(models.join("tip.json"), models.join("history/copy.json")).unwrap();
    let lineage = models.to_str().unwrap();
    let args = [
        &["ratings", "--lineage", lineage, "--games", "2", "--sims", "4", "--opponents", "1"][..],
        &["--anchor", "random"],
        &TINY,
    ]
    .concat();
    let out = success(&gipf(&args, ""));
    assert!(out.contains("Elo per doubling of the samples read"), "{out}");
    let ratings: Vec<serde_json::Value> = std::fs::read_to_string(models.join("arena/ratings.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let read: Vec<_> = ratings.iter().map(|r| r["samples_read"].as_u64()).collect();
    assert_eq!(read, [None, Some(1_000_000), Some(2_000_000), Some(4_000_000)], "{out}");
    assert!(ratings[3]["checkpoint"].as_str().unwrap().starts_with("step-7-"), "{out}");
    let matches = std::fs::read_to_string(models.join("arena/matches.jsonl")).unwrap();
    assert_eq!(matches.lines().count(), 5, "three against random, two against the one before: {matches}");
    assert!(std::fs::read(models.join("arena/ratings.png")).unwrap().starts_with(b"\x89PNG"));

    // A promotion (the reference to history/, the tip in its place) and a
    // new tip: only the new tip's matches are played.
    for ext in ["safetensors", "json"] {
        std::fs::rename(models.join(format!("reference.{ext}")), models.join(format!("history/step-5-old.{ext}")))
            .unwrap();
    }
    std::fs::copy(models.join("tip.safetensors"), models.join("reference.safetensors")).unwrap();
    std::fs::copy(models.join("tip.json"), models.join("reference.json")).unwrap();
    save(9, 8_000_000, &models, "tip");
    success(&gipf(&args, ""));
    let more = std::fs::read_to_string(models.join("arena/matches.jsonl")).unwrap();
    assert!(more.starts_with(&matches) && more.lines().count() == 7, "{more}");
    std::fs::remove_file(models.join("tip.json")).unwrap();
    let out = gipf(&args, "");
    assert!(!out.status.success() && !String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn the_loop_gates_new_checkpoints_on_the_arena() {
    let run = tempfile::tempdir().unwrap();
    let config = run.path().join("gated.toml");
    let text = std::fs::read_to_string(Path::new(ROOT).join("configs/tiny.toml")).unwrap();
    std::fs::write(
        &config,
        format!("{text}\n[gate]\ngames = 2\nsimulations = 4\nthreshold = 0.5\nopening_actions = 2\n"),
    )
    .unwrap();
    let run_dir = run.path().join("run");
    let args = [
        "loop",
        "--config",
        config.to_str().unwrap(),
        "--run",
        run_dir.to_str().unwrap(),
        "--device",
        "cpu",
        "--generations",
        "2",
    ];
    success(&gipf(&args, ""));
    let gating = std::fs::read_to_string(run_dir.join("arena/gating.jsonl")).unwrap();
    assert_eq!(gating.lines().count(), 2, "{gating}");
    let best: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("models/best.json")).unwrap()).unwrap();
    let best = best["checkpoint"].as_str().unwrap().to_string();
    // The best is the last checkpoint that scored at least half against the best before it.
    let mut expected = "step-00000000".to_string();
    for line in gating.lines() {
        let m: serde_json::Value = serde_json::from_str(line).unwrap();
        let t = &m["tally"];
        let (w, l, d) = (t["wins"].as_f64().unwrap(), t["losses"].as_f64().unwrap(), t["draws"].as_f64().unwrap());
        assert_eq!(m["b"].as_str().unwrap(), expected, "each candidate plays the best so far");
        if (w + d / 2.0) / (w + l + d) >= 0.5 {
            expected = m["a"].as_str().unwrap().to_string();
        }
    }
    assert_eq!(best, format!("{expected}.safetensors"));
}

/// A damaged gating record is found before the match is played: the gate
/// fails with its line named, and the best checkpoint is left as it was
/// (played and then failing, each restart would move the best and never
/// record why).
#[test]
fn a_damaged_gating_record_stops_the_gate_before_it_plays() {
    let run = tempfile::tempdir().unwrap();
    let paths = checkpoints(run.path(), &[0, 10]);
    gipf::checkpoint::set_best_checkpoint(&run.path().join("models"), &paths[0]).unwrap();
    std::fs::create_dir_all(run.path().join("arena")).unwrap();
    std::fs::write(run.path().join("arena/gating.jsonl"), "{\"a\": \"step-00000000\"\n").unwrap();
    let gate = gipf::config::GateConfig { games: 2, simulations: 2, threshold: 0.0, opening_actions: 0 };
    let Err(err) = gipf::arena::gate::gate(run.path(), &paths[1], &gate, &tiny(), tch::Device::Cpu, 1) else {
        panic!("gated over a damaged record")
    };
    assert!(format!("{err:#}").contains("gating.jsonl"), "{err:#}");
    let best = std::fs::read_to_string(run.path().join("models/best.json")).unwrap();
    assert!(best.contains("step-00000000.safetensors"), "the best moved to the candidate: {best}");
}

#[test]
fn the_engine_answers_each_command_once() {
    let run = tempfile::tempdir().unwrap();
    let paths = checkpoints(run.path(), &[0]);
    let session =
        "new basic\nplay b1-b2\ngo\n\nstate\nplay zz\nposition {\"variant\": 3}\nundo\nundo\nundo\nquit\nlegal\n";
    let out = success(&gipf(
        &[&["engine", "--model", paths[0].to_str().unwrap(), "--sims", "4"][..], &TINY].concat(),
        session,
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 10, "one reply per command, none after quit: {out}");
    assert_eq!(&lines[..2], ["ok", "ok"]);
    assert!(lines[2].starts_with("action "), "{}", lines[2]);
    let state: serde_json::Value = serde_json::from_str(lines[3]).unwrap();
    assert_eq!(state["variant"], "basic");
    assert_eq!(state["board"].as_object().unwrap().len(), 8);
    assert!(lines[4].starts_with("error: 'zz'"), "{}", lines[4]);
    assert!(lines[5].starts_with("error: position"), "{}", lines[5]);
    assert_eq!(&lines[6..9], ["ok", "ok", "error: undo: no action to take back"]);
    assert_eq!(lines[9], "bye");

    let out = success(&gipf(&["engine", "--player", "uct:20", "--variant", "tournament"], "go\nname\n"));
    assert!(out.lines().next().unwrap().starts_with("action G"), "tournament starts with a GIPF push: {out}");
    assert_eq!(out.lines().nth(1), Some("name gipf uct:20"));
    // No player named: the reference model shipped with the program.
    let out = success(&gipf(&["engine", "--sims", "8"], "go\nname\n"));
    assert!(out.lines().next().unwrap().starts_with("action "), "{out}");
    assert_eq!(out.lines().nth(1), Some("name gipf reference (8 sims)"), "{out}");
}

#[test]
fn a_person_plays_in_the_terminal() {
    let out =
        success(&gipf(&["play", "--player", "random", "--variant", "basic"], "zz\nlegal\nb1-b2\nb1-b2\nundo\nquit\n"));
    assert!(out.contains("'zz' cannot be played: 'zz' is not an action"), "{out}");
    assert!(out.contains("legal: a1-b2 "), "{out}");
    assert!(out.contains("random plays "), "{out}");
    assert!(out.contains("white: reserve 12"), "the board and both reserves are shown: {out}");
    assert!(out.contains("white: reserve 11"), "{out}");
}

#[test]
fn an_exported_model_loads_in_pytorch_with_the_same_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let crate::common::Exported { weights, dir: export, stdout, .. } = crate::common::exported();
    assert!(stdout.contains("ONNX Runtime matches LibTorch within"), "{stdout}");
    for file in ["model.pt", "model.onnx", "model.safetensors", "model.json"] {
        assert!(export.join(file).is_file(), "{file}");
    }
    let card: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(export.join("model.json")).unwrap()).unwrap();
    assert_eq!(card["step"], 30);
    assert_eq!(card["encoding_version"], gipf::encoding::ENCODING_VERSION);
    assert_eq!(card["actions"].as_array().unwrap().len(), gipf::encoding::NUM_ACTIONS);

    let (network, _) = gipf::checkpoint::load_checkpoint(weights, tch::Device::Cpu).unwrap();
    let n = 6;
    let input = gipf::export::sample_inputs(n, 9);
    // The program's own forward pass, joined as the exported module gives it: logits, then the value.
    let (logits, values) = network.infer(&input, n);
    let output: Vec<f32> = logits
        .chunks(gipf::encoding::NUM_ACTIONS)
        .zip(values)
        .flat_map(|(row, value)| row.iter().copied().chain([value]))
        .collect();
    // LibTorch loads it too.
    let module = tch::CModule::load(export.join("model.pt")).unwrap();
    let xs = tch::Tensor::from_slice(&input).view([n as i64, 19, 7, 7]);
    let traced = Vec::<f32>::try_from(&module.forward_ts(&[xs]).unwrap().contiguous().view(-1)).unwrap();
    assert_eq!(traced.len(), output.len());
    let error = traced.iter().zip(&output).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(error <= 1e-5, "LibTorch's output differs by {error}");

    let reference = dir.path().join("reference.json");
    std::fs::write(&reference, serde_json::json!({"n": n, "input": input, "output": output}).to_string()).unwrap();
    let python = Path::new(ROOT).join(".python");
    assert!(python.exists(), "scripts/setup-torch.sh makes .python, the project environment's Python");
    let check = Command::new(&python)
        .arg(Path::new(ROOT).join("tests/check_export.py"))
        .arg(export)
        .arg(&reference)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{text}{}", String::from_utf8_lossy(&check.stderr));
    assert!(text.contains("torchscript max abs error") && text.contains("onnx max abs error"), "{text}");

    let out = gipf(&["export", "/no/such.safetensors", "--out", dir.path().join("out").to_str().unwrap()], "");
    assert!(String::from_utf8_lossy(&out.stderr).contains("/no/such.safetensors: does not exist"));
}
