//! Self-play with a real tiny network on the CPU: complete games written to
//! disk, read back and checked; checkpoints picked up from a model folder.

use std::path::Path;
use std::process::Command;

use gipf::checkpoint::ModelSource;
use gipf::config::Config;
use gipf::games::{EndReason, GameFile};
use gipf::net::Network;
use gipf::rules::{Action, Position};
use gipf::selfplay::{run, RunOptions};
use tch::Device;

fn tiny() -> Config {
    Config::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tiny.toml")).unwrap()
}

fn options(out: &Path, model: ModelSource, games: u64) -> RunOptions {
    RunOptions {
        config: tiny(),
        out: out.to_path_buf(),
        games: Some(games),
        model,
        device: Device::Cpu,
        seed: 5,
        duration: None,
        progress: false,
        probe_raw: false,
    }
}

fn games_in(dir: &Path) -> Vec<GameFile> {
    let mut paths: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths.iter().map(|p| GameFile::read(p).unwrap()).collect()
}

/// Both root selections: PUCT with noise and temperature, and Gumbel.
#[test]
fn a_tiny_network_plays_complete_games_that_read_back() {
    for gumbel_candidates in [0, 4] {
        let dir = tempfile::tempdir().unwrap();
        let mut options = options(dir.path(), ModelSource::Fresh, 2);
        options.config.selfplay.gumbel_candidates = gumbel_candidates;
        let config = options.config.clone();
        let report = run(options).unwrap();
        assert_eq!(report.stats.games, 2);
        assert!(report.stats.evaluations > 0);
        let games = games_in(dir.path());
        assert_eq!(games.len(), 2, "one file a game, no temporary files left");
        check_games(&games, &config);
    }
}

fn check_games(games: &[GameFile], config: &Config) {
    for game in games {
        assert_eq!(game.model, "fresh");
        assert_eq!(&game.config, config);
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
        match game.result.reason {
            EndReason::PlyCap => assert_eq!(game.actions.len(), config.selfplay.max_actions as usize),
            _ => assert_eq!(pos.outcome().map(|o| o.winner), game.result.winner),
        }
    }
}

#[test]
fn the_newest_checkpoint_in_the_model_folder_plays() {
    let models = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let config = tiny();
    for step in [1, 20] {
        let net = Network::new(&config.network, Device::Cpu, step);
        net.save(&models.path().join(format!("step-{step:06}.safetensors"))).unwrap();
    }
    std::fs::write(models.path().join("notes.txt"), "not a checkpoint").unwrap();
    run(options(out.path(), ModelSource::Folder(models.path().to_path_buf()), 1)).unwrap();
    let games = games_in(out.path());
    assert_eq!(games.len(), 1, "one game asked, one played");
    assert_eq!(games[0].model, "step-000020.safetensors");
}

#[test]
fn corrupt_and_truncated_game_files_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    run(options(dir.path(), ModelSource::Fresh, 1)).unwrap();
    let path = std::fs::read_dir(dir.path()).unwrap().next().unwrap().unwrap().path();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() / 2]).unwrap();
    let err = format!("{:#}", GameFile::read(&path).unwrap_err());
    assert!(err.contains(&path.display().to_string()) && err.contains("not a game file"), "{err}");
    std::fs::write(&path, text.replacen("\"format\":1", "\"format\":99", 1)).unwrap();
    assert!(format!("{:#}", GameFile::read(&path).unwrap_err()).contains("game format 99"));
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["result"] = serde_json::json!({"winner": null, "reason": "ply_cap"});
    std::fs::write(&path, value.to_string()).unwrap();
    assert!(format!("{:#}", GameFile::read(&path).unwrap_err()).contains("the result says"));
    let first = text.split('"').find(|s| s.contains('-') && s.len() == 5).unwrap().to_string();
    std::fs::write(&path, text.replacen(&format!("\"{first}\""), "\"e5-e5\"", 1)).unwrap();
    assert!(GameFile::read(&path).is_err());
}

#[test]
fn the_binary_refuses_bad_arguments_clearly() {
    let bin = env!("CARGO_BIN_EXE_selfplay");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[network]\nblocks = 1\n").unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["--config", "/no/such.toml", "--out", "x"], "cannot read config /no/such.toml"),
        (&["--config", bad.to_str().unwrap(), "--out", "x"], "missing field"),
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
