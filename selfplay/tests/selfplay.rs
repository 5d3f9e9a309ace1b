//! Self-play with a real tiny network on the CPU: complete games written to
//! disk in shards, read back and checked; checkpoints picked up from a model
//! folder; the binary's streams unique; a killed writer loses only the shard
//! in progress.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gipf::config::Config;
use gipf::games::{EndReason, GameFile};
use gipf::model_source::ModelSource;
use gipf::rules::{Action, Position};
use gipf::selfplay::{play, PlayOptions};
use gipf::shards;
use gipf::train::Trainer;
use tch::Device;

fn tiny() -> Config {
    Config::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tiny.toml")).unwrap()
}

fn options(out: &Path, model: ModelSource, games: u64) -> PlayOptions {
    PlayOptions { games: Some(games), seed: 5, ..PlayOptions::new(tiny(), out.to_path_buf(), model, "test") }
}

fn games_in(dir: &Path) -> Vec<GameFile> {
    shards::read_all(dir).unwrap()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Both root selections: PUCT with noise and temperature, and Gumbel.
#[test]
fn a_tiny_network_plays_complete_games_that_read_back() {
    for gumbel_candidates in [0, 4] {
        let dir = tempfile::tempdir().unwrap();
        let mut options = options(dir.path(), ModelSource::Fresh, 2);
        options.config.selfplay.gumbel_candidates = gumbel_candidates;
        let config = options.config.clone();
        let report = play(options).unwrap();
        assert_eq!(report.stats.games, 2);
        assert!(report.stats.evaluations > 0);
        let games = games_in(dir.path());
        assert_eq!(games.len(), 2);
        let files = files_in(dir.path());
        assert_eq!(files.len(), 1, "one shard, no temporary files left: {files:?}");
        assert!(files[0].starts_with("shard-") && files[0].ends_with("-test-000000.jsonl.zst"), "{files:?}");
        check_games(&games, &config);
    }
}

fn check_games(games: &[GameFile], config: &Config) {
    for game in games {
        assert_eq!(game.model, "fresh");
        assert_eq!(game.config, serde_json::to_value(config).unwrap());
        assert_eq!(game.worker.as_deref(), Some("test"));
        assert!(!game.samples.is_empty());
        // Replay: every sample's visits cover exactly the legal actions there,
        // add up to the search, and the chosen action was legal.
        let mut pos = Position::new(game.variant);
        let mut samples = game.samples.iter().peekable();
        for (ply, &action) in game.actions.iter().enumerate() {
            if let Some(sample) = samples.next_if(|s| s.ply == ply) {
                let mut legal: Vec<String> = pos.legal_actions().iter().map(Action::to_string).collect();
                legal.sort();
                assert_eq!(sample.policy.keys().cloned().collect::<Vec<_>>(), legal);
                let total: f32 = sample.policy.values().sum();
                assert!((total - 1.0).abs() < 1e-4, "policy sums to {total}");
                assert!(sample.policy[&action.to_string()] > 0.0, "the chosen action has a share");
                assert!(sample.root_value.abs() <= 1.0);
            }
            pos.play(action).unwrap();
        }
        assert!(samples.next().is_none(), "every sample was at a ply of the game and checked");
        match game.result.reason {
            EndReason::PlyCap => assert_eq!(game.actions.len(), config.game.max_actions as usize),
            _ => assert_eq!(pos.outcome().map(|o| o.winner), game.result.winner),
        }
    }
}

/// Games of a finished shard, then what the games seeds say: all distinct.
fn check_distinct_seeds(games: &[GameFile]) {
    let mut seeds: Vec<u64> = games.iter().map(|g| g.seed.expect("format 2 games carry their seed")).collect();
    seeds.sort();
    seeds.dedup();
    assert_eq!(seeds.len(), games.len());
}

#[test]
fn the_newest_checkpoint_in_the_model_folder_plays() {
    let models = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let config = tiny();
    for step in [1, 20] {
        let mut trainer = Trainer::new(&config, Device::Cpu, step as i64);
        trainer.step = step;
        trainer.save(models.path()).unwrap();
    }
    std::fs::write(models.path().join("notes.txt"), "not a checkpoint").unwrap();
    play(options(out.path(), ModelSource::Folder(models.path().to_path_buf()), 1)).unwrap();
    let games = games_in(out.path());
    assert_eq!(games.len(), 1, "one game asked, one played");
    assert_eq!(games[0].model, "step-00000020.safetensors");

    // A checkpoint whose description says another encoding is refused before it plays.
    let meta = models.path().join("step-00000020.json");
    let text = std::fs::read_to_string(&meta).unwrap().replace("\"encoding_version\": 1", "\"encoding_version\": 7");
    std::fs::write(&meta, text).unwrap();
    let err =
        format!("{:#}", play(options(out.path(), ModelSource::Folder(models.path().to_path_buf()), 1)).unwrap_err());
    assert!(err.contains("step-00000020.json: encoding version 7"), "{err}");
}

/// A newest checkpoint cut short (a crash, a full disk) gives way to the one
/// before it, with a warning; self-play goes on.
#[test]
fn a_damaged_newest_checkpoint_gives_way_to_the_one_before() {
    let models = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    for step in [1, 20, 30] {
        let mut trainer = Trainer::new(&tiny(), Device::Cpu, step as i64);
        trainer.step = step;
        trainer.save(models.path()).unwrap();
    }
    std::fs::write(models.path().join("step-00000030.safetensors"), b"").unwrap();
    let weights = models.path().join("step-00000020.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    std::fs::write(&weights, &bytes[..bytes.len() / 2]).unwrap();
    play(options(out.path(), ModelSource::Folder(models.path().to_path_buf()), 1)).unwrap();
    assert_eq!(games_in(out.path())[0].model, "step-00000001.safetensors");
}

#[test]
fn corrupt_shards_and_games_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    play(options(dir.path(), ModelSource::Fresh, 1)).unwrap();
    let file = shards::list(dir.path()).unwrap().remove(0);
    let bytes = std::fs::read(&file.path).unwrap();
    std::fs::write(&file.path, &bytes[..bytes.len() / 2]).unwrap();
    let err = format!("{:#}", shards::read(&file).unwrap_err());
    assert!(err.contains(&file.path.display().to_string()) && err.contains("cut short"), "{err}");

    // One bad game in a shard loses that game only.
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/game-format-1.json");
    let good = std::fs::read_to_string(fixture).unwrap();
    let broken = good.replacen("\"format\":1", "\"format\":99", 1);
    let text = format!("{}\n{broken}\n{}\n", good.trim(), good.trim());
    std::fs::write(&file.path, zstd::encode_all(text.as_bytes(), 3).unwrap()).unwrap();
    let read = shards::read(&file).unwrap();
    assert_eq!(read.games.len(), 2);
    assert_eq!(read.bad.len(), 1);
    assert!(read.bad[0].contains("line 2") && read.bad[0].contains("game format 99"), "{:?}", read.bad);

    let mut value: serde_json::Value = serde_json::from_str(&good).unwrap();
    value["result"] = serde_json::json!({"winner": null, "reason": "ply_cap"});
    assert!(format!("{:#}", GameFile::parse(&value.to_string()).unwrap_err()).contains("the result says"));
    let first = good.split('"').find(|s| s.contains('-') && s.len() == 5).unwrap().to_string();
    assert!(GameFile::parse(&good.replacen(&format!("\"{first}\""), "\"e5-e5\"", 1)).is_err());
    assert!(format!("{:#}", GameFile::parse(&good[..good.len() / 2]).unwrap_err()).contains("not a game file"));
}

fn selfplay() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_selfplay"));
    command.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).stdout(Stdio::null()).stderr(Stdio::piped());
    command
}

/// Two processes started alike, without `--seed`, play different games.
#[test]
fn two_processes_without_a_seed_share_no_game() {
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let out = selfplay()
            .args(["--config", "configs/tiny.toml", "--games", "3", "--out", dir.path().to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let games = games_in(dir.path());
    assert_eq!(games.len(), 6);
    let workers: std::collections::BTreeSet<_> = games.iter().map(|g| g.worker.clone().unwrap()).collect();
    assert_eq!(workers.len(), 2, "one worker name a process: {workers:?}");
    check_distinct_seeds(&games);
    let mut fingerprints: Vec<u64> = games.iter().map(GameFile::fingerprint).collect();
    fingerprints.sort();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), 6, "no game in common");
}

/// A self-play process killed with SIGKILL while it writes shards leaves
/// only whole shards behind: every one reads back complete.
#[test]
fn a_killed_writer_leaves_only_whole_shards() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    let tiny = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/tiny.toml")).unwrap();
    std::fs::write(&config, tiny.replace("[train]", "shard_games = 2\n\n[train]")).unwrap();
    let games = dir.path().join("games");
    let mut child = selfplay()
        .args(["--config", config.to_str().unwrap(), "--out", games.to_str().unwrap(), "--worker", "w1"])
        .spawn()
        .unwrap();
    let start = Instant::now();
    while shards::list(&games).map_or(0, |f| f.len()) < 3 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let files = shards::list(&games).unwrap();
    assert!(files.len() >= 3, "{} shards written before the kill", files.len());
    for file in &files {
        let read = shards::read(file).unwrap();
        assert_eq!((read.games.len(), read.bad.len()), (2, 0), "{}", file.name);
    }
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "names sort in the order the shards were written");
    check_distinct_seeds(&shards::read_all(&games).unwrap());
}

#[test]
fn the_binary_refuses_bad_arguments_clearly() {
    let bin = env!("CARGO_BIN_EXE_selfplay");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[network]\nblocks = 0\n").unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["--config", "/no/such.toml", "--out", "x"], "cannot read config /no/such.toml"),
        (&["--config", bad.to_str().unwrap(), "--out", "x"], "network.blocks = 0 is out of range"),
        (&["--config", "configs/tiny.toml", "--out", "x", "--model", "/no/model"], "model /no/model does not exist"),
    ];
    for (args, expected) in cases {
        let out =
            Command::new(bin).args(args).current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"));
    }
}
