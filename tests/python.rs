//! The Python package (python/, installed by `scripts/setup-python.sh`)
//! against the trainer on the same games: `gipf.samples` builds the rows
//! the trainer's window builds from a real shard, under the same
//! symmetries.

use std::path::Path;
use std::process::Command;

use gipf::config::Config;
use gipf::encoding::{INPUT_SIZE, NUM_ACTIONS};
use gipf::games::GameFile;
use gipf::model_source::ModelSource;
use gipf::rules::Symmetry;
use gipf::samples::write_row;
use gipf::selfplay::{play, ConstantForward, Generator, PlayOptions};
use gipf::train::Window;
use rand::rngs::SmallRng;
use rand::SeedableRng;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The window's samples as rows: planes, policy targets and legal masks,
/// under the identity or, with `seed`, each sample's symmetry drawn in turn
/// from it (as `gipf.samples(augment=True, seed=...)` documents).
fn rows(window: &Window, seed: Option<u64>) -> [Vec<f32>; 3] {
    let mut rng = seed.map(SmallRng::seed_from_u64);
    let (mut planes, mut policy, mut legal) = (Vec::new(), Vec::new(), Vec::new());
    for sample in window.samples() {
        let sym = rng.as_mut().map_or(Symmetry::IDENTITY, Symmetry::random);
        let (p, l) = (policy.len(), legal.len());
        planes.resize(planes.len() + INPUT_SIZE, 0.0);
        policy.resize(p + NUM_ACTIONS, 0.0);
        legal.resize(l + NUM_ACTIONS, 0.0);
        let input = planes.len() - INPUT_SIZE;
        write_row(sample, sym, &mut planes[input..], &mut policy[p..], &mut legal[l..]);
    }
    [planes, policy, legal]
}

fn write_floats(path: &Path, values: &[f32]) {
    std::fs::write(path, values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
}

#[test]
fn python_samples_equal_the_trainers_on_a_real_shard() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games");
    let config = Config::parse(include_str!("../configs/tiny.toml")).unwrap();
    let options =
        PlayOptions { games: Some(3), seed: 5, ..PlayOptions::new(config.clone(), games, ModelSource::Fresh, "py") };
    play(options).unwrap();
    let mut window = Window::new(config.train.targets(), config.game.variant);
    window.load_new(&dir.path().join("games"), |_| 1_000_000).unwrap();
    assert!(window.len() > 20, "{} samples", window.len());
    let reference = dir.path().join("reference");
    std::fs::create_dir(&reference).unwrap();
    for (name, seed) in [("plain", None), ("augmented", Some(11))] {
        for (part, values) in ["planes", "policy", "legal"].into_iter().zip(rows(&window, seed)) {
            write_floats(&reference.join(format!("{name}-{part}.f32")), &values);
        }
    }
    let values: Vec<f32> = window.samples().map(|s| s.value).collect();
    write_floats(&reference.join("value.f32"), &values);
    let t = config.train.targets();
    let python = Path::new(ROOT).join(".python");
    let check = Command::new(&python)
        .arg(Path::new(ROOT).join("python/tests/check_samples.py"))
        .args([dir.path(), &reference])
        .args([t.every_position.to_string(), t.root_value_share.to_string(), t.root_value_lambda.to_string()])
        .output()
        .unwrap();
    let output = format!("{}{}", String::from_utf8_lossy(&check.stdout), String::from_utf8_lossy(&check.stderr));
    assert!(check.status.success(), "check_samples.py (scripts/setup-python.sh installs the package): {output}");
    assert!(output.contains(&format!("{} samples equal", window.len())), "{output}");
}

/// Games played from Python (`gipf.selfplay`, its leaves evaluated by a
/// Python function) are a shard the trainer's window reads.
#[test]
fn a_shard_written_from_python_is_read_by_the_trainer() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games");
    let script = "import sys, numpy as np, gipf, gipf.selfplay\n\
        uniform = lambda p: (np.zeros((len(p), gipf.NUM_ACTIONS), np.float32), np.zeros(len(p), np.float32))\n\
        gipf.selfplay.play(uniform, games=2, simulations=8, cheap_simulations=8, max_actions=80, out=sys.argv[1])";
    let python = Command::new(Path::new(ROOT).join(".python")).args(["-c", script]).arg(&games).output().unwrap();
    assert!(python.status.success(), "{}", String::from_utf8_lossy(&python.stderr));
    let read = gipf::shards::read_all(&games).unwrap();
    assert_eq!(read.len(), 2);
    let config = Config::parse(include_str!("../configs/tiny.toml")).unwrap();
    let mut window = Window::new(config.train.targets(), config.game.variant);
    let report = window.load_new(&games, |_| 1_000_000).unwrap();
    assert_eq!((report.games, report.skipped.len()), (2, 0), "{report:?}");
    assert!(window.len() >= read.iter().map(|g| g.samples.len()).sum::<usize>());
}

/// The same self-play from Python as from the Rust generator: from the
/// same seed and settings, with the same (constant) evaluations, the same
/// games, each seeded as the generator seeds it, new games starting in the
/// places of finished ones.
#[test]
fn python_selfplay_plays_the_rust_generators_games() {
    let mut config = Config::parse(include_str!("../configs/tiny.toml")).unwrap();
    config.game.max_actions = 120;
    config.selfplay.late_reserve = 3;
    let (seed, games) = (9, 5);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let mut generator = Generator::new(config.clone(), seed, Some(games), "rust");
    let mut rust = Vec::new();
    while generator.active() > 0 {
        rust.extend(generator.step(&mut ConstantForward, &pool, "constant").unwrap());
    }
    let script = "import json, sys, numpy as np, gipf, gipf.selfplay\n\
        uniform = lambda p: (np.zeros((len(p), gipf.NUM_ACTIONS), np.float32), np.zeros(len(p), np.float32))\n\
        records, _ = gipf.selfplay.play(uniform, games=int(sys.argv[1]), seed=int(sys.argv[2]),\n\
            max_actions=int(sys.argv[3]), search=json.loads(sys.argv[4]), **json.loads(sys.argv[5]))\n\
        print(json.dumps(records))";
    let python = Command::new(Path::new(ROOT).join(".python"))
        .args(["-c", script, &games.to_string(), &seed.to_string(), &config.game.max_actions.to_string()])
        .args([serde_json::to_string(&config.search).unwrap(), serde_json::to_string(&config.selfplay).unwrap()])
        .output()
        .unwrap();
    assert!(python.status.success(), "{}", String::from_utf8_lossy(&python.stderr));
    let python: Vec<GameFile> = serde_json::from_slice(&python.stdout).unwrap();
    let key = |g: &GameFile| (g.seed, g.actions.clone(), serde_json::to_string(&(&g.samples, &g.result)).unwrap());
    let mut rust: Vec<_> = rust.iter().map(key).collect();
    let mut python: Vec<_> = python.iter().map(key).collect();
    rust.sort();
    python.sort();
    assert_eq!(rust.len(), games as usize);
    assert!(rust.iter().all(|(_, actions, _)| actions.len() > 20));
    assert_eq!(python, rust);
}
