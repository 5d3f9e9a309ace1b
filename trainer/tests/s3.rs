//! A run in a real S3 server (SeaweedFS on 127.0.0.1, `tests/common/s3.rs`):
//! two self-play workers and one trainer share one bucket.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gipf::config::Config;
use gipf::games::GameFile;
use gipf::model_source::ModelSource;
use gipf::samples::game_samples;
use gipf::selfplay::{play, PlayOptions};
use gipf::store::ShardFeed;
use gipf::train::{GamesRead, GamesSource, Window};

use crate::s3_server as s3;
use s3::{S3Server, BUCKET};

/// The names of the games files in `dir` (none when it is missing).
fn names(dir: &Path) -> Vec<String> {
    gipf::shards::list(dir).map(|l| l.into_iter().map(|f| f.name).collect()).unwrap_or_default()
}

/// The training samples of a shard's games, with the tiny config's targets.
fn samples_in(shard: &[u8]) -> usize {
    let games = gipf::shards::parse(shard).unwrap().games;
    games.iter().map(|game| game_samples(game, tiny().train.targets()).unwrap().len()).sum()
}

fn tiny() -> Config {
    let mut config = Config::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tiny.toml")).unwrap();
    config.selfplay.shard_games = 2;
    config
}

/// Two workers and a trainer on one bucket: the trainer's steps advance,
/// the workers pick up a newer checkpoint, and every game written is read by
/// the trainer exactly once.
#[test]
fn two_workers_and_a_trainer_share_a_bucket() {
    let server = S3Server::start();
    let cache = tempfile::tempdir().unwrap();
    let run_url = format!("s3://{BUCKET}/runs/one");
    let config_path = cache.path().join("tiny.toml");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tiny.toml")).unwrap();
    // A window that holds every game, so that every shard's local copy stays.
    let text = text
        .replace("window_fraction = 0.5", "window_fraction = 1.0")
        .replace("window_max = 5000", "window_max = 1000000");
    std::fs::write(&config_path, text.replace("[train]", "shard_games = 2\n\n[train]")).unwrap();
    let mut trainer = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["--config", config_path.to_str().unwrap(), "--run", &run_url, "--device", "cpu"])
        .envs(server.env())
        .env("GIPF_CACHE", cache.path().join("trainer"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(cache.path().join("trainer.log")).unwrap())
        .spawn()
        .unwrap();

    let newest: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2u64)
            .map(|w| {
                let (run_url, cache, server) = (&run_url, cache.path(), &server);
                scope.spawn(move || {
                    let models = server.store(&format!("{run_url}/models"));
                    let model = ModelSource::remote(models, cache.join(format!("models-{w}")));
                    let outbox = cache.join(format!("outbox-{w}"));
                    let mut newest = String::new();
                    let start = Instant::now();
                    // Rounds of two games until a trained checkpoint is picked up.
                    while start.elapsed() < Duration::from_secs(120) {
                        let options = PlayOptions {
                            games: Some(2),
                            seed: 1000 * w + start.elapsed().as_millis() as u64,
                            upload: Some(server.store(&format!("{run_url}/games")).into()),
                            ..PlayOptions::new(tiny(), outbox.clone(), model.clone(), format!("w{w}"))
                        };
                        play(options).unwrap();
                        newest = model.current().unwrap().map(|p| p.display().to_string()).unwrap_or_default();
                        if !newest.is_empty() && !newest.ends_with("step-00000000.safetensors") {
                            break;
                        }
                    }
                    assert_eq!(std::fs::read_dir(&outbox).unwrap().count(), 0, "every shard left the outbox");
                    newest
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    // The trainer reads what was uploaded last.
    let games = server.store(&format!("{run_url}/games"));
    let stored = games.list("").unwrap();
    let local = cache.path().join("trainer/runs").join(gipf::store::file_name_of(&run_url)).join("run");
    let read = || names(&local.join("games"));
    let start = Instant::now();
    while read() != stored && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    trainer.kill().unwrap();
    trainer.wait().unwrap();
    let log = std::fs::read_to_string(cache.path().join("trainer.log")).unwrap();
    for newest in &newest {
        assert!(!newest.ends_with("step-00000000.safetensors"), "a worker picked up {newest}: {log}");
    }

    let latest = server.store(&format!("{run_url}/models")).latest("").unwrap().expect("a checkpoint");
    assert!(latest.step > 0, "the trainer's steps advanced: {log}");
    assert_eq!(read(), stored, "the trainer downloaded every stored shard, each once");
    let all = gipf::shards::read_all(&local.join("games")).unwrap();
    let mut fingerprints: Vec<u64> = all.iter().map(GameFile::fingerprint).collect();
    fingerprints.sort();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), all.len(), "no game twice");

    // The trainer's feed lists from a little before the newest shard it has
    // seen: a shard uploaded late but within the lookback is listed, one
    // named long before is left to the next full listing.
    let mut feed = ShardFeed::new(server.store(&format!("{run_url}/games")).into(), "");
    assert_eq!(feed.refresh().unwrap(), stored.len());
    let newest = stored.last().unwrap().clone();
    let newest_ms: u64 = newest["shard-".len().."shard-".len() + 13].parse().unwrap();
    let bytes = games.get(&stored[0]).unwrap().unwrap();
    let late = format!("shard-{:013}-late-000000.jsonl.zst", newest_ms - 1_000);
    let stale = format!("shard-{:013}-stale-000000.jsonl.zst", newest_ms - 3_600_000);
    assert!(games.create(&late, bytes.clone()).unwrap() && games.create(&stale, bytes.clone()).unwrap());
    assert_eq!(feed.refresh().unwrap(), 1);
    assert!(feed.listed().any(|n| *n == late) && !feed.listed().any(|n| *n == stale));

    // A trainer resumed on a new machine from a checkpoint that had read
    // every stored shard, with room for the late shard and a little more:
    // it downloads the late one (new samples), then the newest counted one
    // for the room left, and passes over the rest without downloading them.
    let late_samples = samples_in(&bytes);
    let read = GamesRead { cursor: Some(newest.clone()), recent: stored.clone(), ..GamesRead::default() };
    let config = tiny();
    let mut window = Window::new(config.train.targets(), config.game.variant).resumed(0, read);
    let fresh = cache.path().join("fresh");
    std::fs::create_dir(&fresh).unwrap();
    let report = window.load(GamesSource { dir: &fresh, feed: Some(&feed) }, |_| late_samples + 1).unwrap();
    let local = names(&fresh);
    assert_eq!(local, [late, newest], "only what the window reads is downloaded");
    assert_eq!((report.files, report.passed_over), (2, stored.len() - 1));
    assert_eq!(window.total_samples, late_samples as u64, "only the late shard's samples are new");

    // A new shard that fills the window alone: the games of the two read
    // before leave it, and so do their local copies (the store keeps them).
    assert!(stored.len() >= 3, "a shard neither late nor newest copies: {stored:?}");
    let bytes = games.get(&stored[1]).unwrap().unwrap();
    let new = format!("shard-{:013}-new-000000.jsonl.zst", newest_ms + 1_000);
    assert!(games.create(&new, bytes.clone()).unwrap());
    assert_eq!(feed.refresh().unwrap(), 1);
    let new_samples = samples_in(&bytes);
    window.load(GamesSource { dir: &fresh, feed: Some(&feed) }, |_| new_samples).unwrap();
    assert_eq!(window.len(), new_samples);
    let local = names(&fresh);
    assert_eq!(local, [new], "the copies of shards that left the window are removed");
    assert_eq!(games.list("").unwrap().len(), stored.len() + 3, "the store keeps every shard");
}
