//! A self-play worker on a real S3 server (SeaweedFS on 127.0.0.1,
//! `tests/common/s3.rs`): killed with SIGKILL while it uploads, nothing
//! half-written is ever stored and its next start uploads what it left; with
//! the server stopped and restarted, it plays on and loses nothing.

use crate::s3_server as s3;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use s3::{S3Server, BUCKET};

/// The tiny config with one game a shard, written into `dir`.
fn one_game_a_shard(dir: &Path) -> PathBuf {
    let path = dir.join("config.toml");
    let tiny = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/tiny.toml")).unwrap();
    std::fs::write(&path, tiny.replace("[train]", "shard_games = 1\n\n[train]")).unwrap();
    path
}

/// A run `runs/NAME` in the server's bucket with an untrained checkpoint
/// published as a trainer would; its config (one game a shard) in `dir`.
fn run_with_a_checkpoint(server: &S3Server, dir: &Path, name: &str) -> (PathBuf, String) {
    let config_path = one_game_a_shard(dir);
    let run = format!("s3://{BUCKET}/runs/{name}");
    let config = gipf::config::Config::load(&config_path).unwrap();
    let weights = gipf::train::Trainer::new(&config, tch::Device::Cpu, 1).save(&dir.join("models")).unwrap();
    server.store(&run).publish_checkpoint("models", &weights, 0, None).unwrap();
    (config_path, run)
}

#[test]
fn a_worker_killed_mid_upload_loses_nothing_it_finished() {
    let server = S3Server::start();
    let cache = tempfile::tempdir().unwrap();
    let config = one_game_a_shard(cache.path());
    let url = format!("s3://{BUCKET}/runs/killed/games");
    let worker = |games: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_selfplay"));
        command
            .args(["--config", config.to_str().unwrap(), "--out", &url, "--worker", "w1", "--games", games])
            .env("GIPF_CACHE", cache.path().join("cache"))
            .envs(server.env())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    };
    let store = server.store(&url);
    // Killed at once after its third shard is stored: the next one is being
    // written or uploaded.
    let mut child = worker("0").spawn().unwrap();
    let start = Instant::now();
    while store.list("").unwrap().len() < 3 {
        assert!(start.elapsed() < Duration::from_secs(60), "no shards stored");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let outbox = cache.path().join("cache/runs").join(gipf::store::file_name_of(&url)).join("outbox");
    let left: Vec<String> = gipf::shards::list(&outbox).unwrap_or_default().into_iter().map(|f| f.name).collect();
    // A shard may be both stored and still in the outbox: killed between
    // its upload and its removal.
    let mut expected: std::collections::BTreeSet<String> = store.list("").unwrap().into_iter().collect();
    expected.extend(left.iter().cloned());

    // Restarted for one more game, it uploads what the killed one left.
    assert!(worker("1").status().unwrap().success());
    let stored = store.list("").unwrap();
    assert!(left.iter().all(|name| stored.contains(name)), "what the outbox held is stored: {left:?}");
    assert_eq!(stored.len(), expected.len() + 1, "{} left in the outbox, then one more game", left.len());
    assert_eq!(gipf::shards::list(&outbox).unwrap().len(), 0, "the outbox is empty");
    for name in &stored {
        let bytes = store.get(name).unwrap().unwrap();
        let text = zstd::decode_all(bytes.as_slice()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let lines: Vec<&str> = std::str::from_utf8(&text).unwrap().lines().collect();
        assert_eq!(lines.len(), 1, "{name}: one whole game");
        gipf::games::GameFile::parse(lines[0]).unwrap();
    }
}

/// A worker whose store goes away mid-run keeps playing with the checkpoint
/// it has, keeps its shards in the outbox, and uploads them all once the
/// store is back.
#[test]
fn a_worker_rides_out_the_store_stopped_and_restarted() {
    let mut server = S3Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (config_path, run) = run_with_a_checkpoint(&server, dir.path(), "outage");

    let games = server.store(&format!("{run}/games"));
    let log_path = dir.path().join("worker.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_selfplay"))
        .args(["--config", config_path.to_str().unwrap(), "--worker", "w1", "--games", "12", "--device", "cpu"])
        .args(["--out", &format!("{run}/games"), "--model", &format!("{run}/models")])
        .env("GIPF_CACHE", dir.path().join("cache"))
        .envs(server.env())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while games.list("").unwrap().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "no shards stored");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.stop();
    s3::wait_for_log(&log_path, &["keeping the current one", "kept in"], Duration::from_secs(60));
    server.restart();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(180), "the worker did not finish");
        std::thread::sleep(Duration::from_millis(100));
    };
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(status.success() && !log.contains("panicked"), "{log}");
    assert!(log.contains("keeping the current one") || log.contains("kept in"), "the outage was met: {log}");
    assert_eq!(games.list("").unwrap().len(), 12, "every game stored: {log}");
}

/// A store that stops answering (it accepts connections and never replies)
/// does not throttle self-play: checkpoint polls and uploads wait off the
/// thread that plays, and the shards wait in the outbox.
#[test]
fn a_store_that_stops_answering_does_not_slow_self_play() {
    let server = S3Server::start();
    let proxy = s3::SilentProxy::start(&server.endpoint);
    let dir = tempfile::tempdir().unwrap();
    let (config_path, run) = run_with_a_checkpoint(&server, dir.path(), "silent");

    let games = server.store(&format!("{run}/games"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_selfplay"))
        .args(["--config", config_path.to_str().unwrap(), "--worker", "w1", "--device", "cpu"])
        .args(["--out", &format!("{run}/games"), "--model", &format!("{run}/models")])
        .env("GIPF_CACHE", dir.path().join("cache"))
        .envs(server.env())
        .env("AWS_ENDPOINT_URL", &proxy.endpoint)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while games.list("").unwrap().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "no shards stored");
        std::thread::sleep(Duration::from_millis(20));
    }
    proxy.silence();
    // Each request to the silent store waits out its timeout (30 s): on the
    // playing thread, a few games at most would be written meanwhile.
    let outbox = dir.path().join("cache/runs").join(gipf::store::file_name_of(&format!("{run}/games"))).join("outbox");
    let waiting = || gipf::shards::list(&outbox).map_or(0, |shards| shards.len());
    let silent = Instant::now();
    while waiting() < 10 && silent.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let (written, seconds) = (waiting(), silent.elapsed().as_secs_f64());
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(written >= 10, "{written} shards written in {seconds:.0} s while the store was silent");
}
