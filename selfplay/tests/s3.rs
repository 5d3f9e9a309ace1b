//! A self-play worker writing to a real S3 server (SeaweedFS on 127.0.0.1,
//! `tests/common/s3.rs`) killed with SIGKILL while it uploads: nothing
//! half-written is ever stored, and its next start uploads what it left.

#[path = "../../tests/common/s3.rs"]
mod s3;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gipf::store::Store;
use s3::{S3Server, BUCKET};

#[test]
fn a_worker_killed_mid_upload_loses_nothing_it_finished() {
    let server = S3Server::start();
    let cache = tempfile::tempdir().unwrap();
    let config = cache.path().join("config.toml");
    let tiny = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs/tiny.toml")).unwrap();
    std::fs::write(&config, tiny.replace("[train]", "shard_games = 1\n\n[train]")).unwrap();
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
    for (name, value) in server.env() {
        // One test in this binary: no other thread reads the environment.
        std::env::set_var(name, value);
    }
    let store = Store::open(&url).unwrap();
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
    let left = gipf::shards::list(&outbox).map(|f| f.len()).unwrap_or(0);
    let stored_before = store.list("").unwrap().len();

    // Restarted for one more game, it uploads what the killed one left.
    assert!(worker("1").status().unwrap().success());
    let stored = store.list("").unwrap();
    assert_eq!(stored.len(), stored_before + left + 1, "{left} left in the outbox, then one more game");
    assert_eq!(gipf::shards::list(&outbox).unwrap().len(), 0, "the outbox is empty");
    for name in &stored {
        let bytes = store.get(name).unwrap().unwrap();
        let text = zstd::decode_all(bytes.as_slice()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let lines: Vec<&str> = std::str::from_utf8(&text).unwrap().lines().collect();
        assert_eq!(lines.len(), 1, "{name}: one whole game");
        gipf::games::GameFile::parse(lines[0]).unwrap();
    }
}
