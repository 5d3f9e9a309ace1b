//! `gipf` commands on a run in a real S3 server (SeaweedFS on 127.0.0.1,
//! `tests/common/s3.rs`), and the store's faults: stopped and restarted
//! mid-run, a corrupt object, wrong credentials. Each test has its own
//! server; the commands get its settings through their environment.

use crate::common::s3;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use gipf::games::GameFile;
use gipf::store::StoreError;
use s3::{S3Server, BUCKET};

/// The tiny test config, one game a shard, written into `dir`, with a
/// window that holds every game (so that no shard's local copy is removed).
fn config(dir: &Path) -> PathBuf {
    let tiny = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/tiny.toml")).unwrap();
    let tiny = tiny
        .replace("window_fraction = 0.5", "window_fraction = 1.0")
        .replace("window_max = 5000", "window_max = 1000000");
    let path = dir.join("tiny.toml");
    std::fs::write(&path, tiny.replace("[train]", "shard_games = 1\n\n[train]")).unwrap();
    path
}

fn gipf(server: &S3Server, cache: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gipf"));
    command.args(args).envs(server.env()).env("GIPF_CACHE", cache).env("NO_COLOR", "1");
    command
}

fn output(mut command: Command) -> (Output, String) {
    let out = command.output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!text.contains("panicked"), "{text}");
    (out, text)
}

/// The loop's local copy of a run in the store.
fn local_run(cache: &Path, url: &str) -> PathBuf {
    cache.join("runs").join(gipf::store::file_name_of(url)).join("run")
}

/// What the loop consumed: every shard in the store downloaded once, no
/// game twice, the outbox empty, the newest checkpoint published.
fn check_consumed(server: &S3Server, cache: &Path, url: &str, log: &str) -> Vec<String> {
    let stored = server.store(&format!("{url}/games")).list("").unwrap();
    let local = local_run(cache, url);
    let files = gipf::shards::list(&local.join("games")).unwrap();
    let read: Vec<&String> = files.iter().map(|f| &f.name).collect();
    assert_eq!(read, stored.iter().collect::<Vec<_>>(), "every stored shard downloaded, each once: {log}");
    assert_eq!(gipf::shards::list(&local.join("outbox")).unwrap().len(), 0, "the outbox is empty");
    // Every readable shard's games (a damaged one is the corrupt-object test's).
    let all: Vec<GameFile> = files.iter().filter_map(|f| gipf::shards::read(f).ok()).flat_map(|r| r.games).collect();
    let mut fingerprints: Vec<u64> = all.iter().map(GameFile::fingerprint).collect();
    fingerprints.sort();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), all.len(), "no game twice");
    let latest = server.store(&format!("{url}/models")).latest("").unwrap().expect("a checkpoint published");
    let newest = gipf::checkpoint::newest_checkpoint(&local.join("models")).unwrap().unwrap();
    assert_eq!(Some(latest.weights.as_str()), newest.file_name().and_then(|n| n.to_str()), "{log}");
    assert!(latest.step > 0, "the steps advanced: {log}");
    // The store's models folder is pruned as the local one is (tiny.toml:
    // keep_last 3, keep_every_steps 20): the newest three, the first of
    // every 20 steps, and never the checkpoint latest.json names.
    let in_store = server.store(&format!("{url}/models")).list("").unwrap();
    let count = |ext: &str| in_store.iter().filter(|n| n.ends_with(ext)).count() as u64;
    assert!(in_store.contains(&latest.weights), "{in_store:?}");
    assert!(count(".safetensors") <= 3 + latest.step / 20 + 1, "{in_store:?}");
    assert!(count(".optim") <= 3, "{in_store:?}");
    stored
}

/// The loop with its run in the store goes on through an outage: what it
/// could not upload or publish waits and goes once the store is back.
#[test]
fn the_loop_survives_the_store_stopped_and_restarted() {
    let mut server = S3Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (cache, config) = (dir.path().join("cache"), config(dir.path()));
    let url = format!("s3://{BUCKET}/runs/outage");
    let log_path = dir.path().join("loop.log");
    let mut run = gipf(&server, &cache, &["loop", "--config", config.to_str().unwrap(), "--run", &url]);
    run.args(["--generations", "8", "--device", "cpu"]);
    let mut child = run.stdout(Stdio::null()).stderr(std::fs::File::create(&log_path).unwrap()).spawn().unwrap();
    let models = server.store(&format!("{url}/models"));
    let start = Instant::now();
    while models.latest("").unwrap().is_none_or(|l| l.step == 0) {
        assert!(start.elapsed() < Duration::from_secs(120), "no trained checkpoint");
        assert!(child.try_wait().unwrap().is_none(), "the loop ended early");
        std::thread::sleep(Duration::from_millis(100));
    }
    server.stop();
    let signs = ["failed, trying again", "trying again later"];
    crate::common::s3::wait_for_log(&log_path, &signs, Duration::from_secs(60));
    server.restart();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(240), "the loop did not finish");
        std::thread::sleep(Duration::from_millis(200));
    };
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(status.success(), "{log}");
    assert!(log.contains("failed, trying again") || log.contains("trying again later"), "the outage was met: {log}");
    let stored = check_consumed(&server, &cache, &url, &log);
    let games: usize = stored.len();
    assert!(games >= 8 * 2, "{games} games for 8 generations of 2");
}

/// A damaged shard in the store is skipped with a warning naming it; the
/// run goes on. Then the other commands read the run from the store.
#[test]
fn a_corrupt_shard_is_skipped_and_the_commands_read_the_store() {
    let server = S3Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (cache, config) = (dir.path().join("cache"), config(dir.path()));
    let url = format!("s3://{BUCKET}/runs/corrupt");
    let junk = "shard-0000000000001-junk-000000.jsonl.zst";
    assert!(server.store(&format!("{url}/games")).create(junk, b"not zstd at all".to_vec()).unwrap());
    let config = config.to_str().unwrap();
    let (out, log) = output(gipf(
        &server,
        &cache,
        &["loop", "--config", config, "--run", &url, "--generations", "4", "--device", "cpu"],
    ));
    assert!(out.status.success(), "{log}");
    assert!(log.lines().any(|l| l.contains("WARN") && l.contains("skipping") && l.contains(junk)), "{log}");
    check_consumed(&server, &cache, &url, &log);

    // The newest checkpoint by its models folder, one by its own URL.
    let models = format!("{url}/models");
    let (out, text) = output(gipf(
        &server,
        &cache,
        &["arena", &format!("{models}@4"), "random", "--games", "2", "--config", config, "--device", "cpu"],
    ));
    assert!(out.status.success() && text.contains("A = step-"), "{text}");
    let latest = server.store(&models).latest("").unwrap().unwrap();
    let export = dir.path().join("export");
    let checkpoint = format!("{models}/{}", latest.weights);
    let (out, text) = output(gipf(&server, &cache, &["export", &checkpoint, "--out", export.to_str().unwrap()]));
    assert!(out.status.success() && export.join("model.safetensors").is_file(), "{text}");

    // Ratings from the store's checkpoints, their files written back there.
    let (out, text) = output(gipf(
        &server,
        &cache,
        &["ratings", "--run", &url, "--games", "2", "--sims", "4", "--config", config, "--device", "cpu"],
    ));
    assert!(out.status.success(), "{text}");
    let arena = server.store(&format!("{url}/arena"));
    assert_eq!(arena.list("").unwrap(), ["matches.jsonl", "ratings.jsonl", "ratings.png"], "{text}");
}

/// Wrong credentials are a clear error at start, before any work.
#[test]
fn wrong_credentials_are_a_clear_error_at_start() {
    let server = S3Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (cache, config) = (dir.path().join("cache"), config(dir.path()));
    let url = format!("s3://{BUCKET}/runs/refused");
    for args in [
        vec!["loop", "--config", config.to_str().unwrap(), "--run", &url, "--device", "cpu"],
        vec!["ratings", "--run", &url],
    ] {
        let mut command = gipf(&server, &cache, &args);
        command.env("AWS_SECRET_ACCESS_KEY", "not-the-secret");
        let (out, text) = output(command);
        assert!(!out.status.success(), "{args:?}: {text}");
        assert!(text.contains(&format!("{url}: the store refused the credentials")), "{args:?}: {text}");
    }
    assert!(!local_run(&cache, &url).join("models").exists(), "nothing started");
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Stores `files` under `models` with a `latest.json` naming them (the
/// weights as given), as a trainer (or whoever holds the credentials) would.
fn publish(models: &gipf::store::Store, files: &[(&str, &[u8])], weights: &str) -> gipf::checkpoint::Latest {
    let sha256 = files.iter().map(|(name, bytes)| (name.to_string(), sha256(bytes))).collect();
    for (name, bytes) in files {
        models.put(name, bytes.to_vec()).unwrap();
    }
    let latest = gipf::checkpoint::Latest { step: 1, weights: weights.into(), sha256 };
    models.put("latest.json", serde_json::to_vec(&latest).unwrap()).unwrap();
    latest
}

/// Names in `latest.json` become local paths only when they are the
/// trainer's own checkpoint names; a cached checkpoint whose weights differ
/// from `latest.json` (a trainer rolled back, reusing the step's name) is
/// downloaded again; self-play leaves the optimizer state in the store.
#[test]
fn latest_json_reaches_no_file_outside_the_cache_and_stale_weights_are_replaced() {
    let server = S3Server::start();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let models = server.store(&format!("s3://{BUCKET}/runs/names/models"));
    let outside = dir.path().join("outside");
    for hostile in [outside.to_str().unwrap().to_string(), "a/../../outside".to_string()] {
        // Named as the weights, or beside good weights; the store need not
        // even hold such objects: the names are refused before any download.
        let named = |weights: &str| {
            let sha256 = [(hostile.clone(), sha256(b"x")), ("step-00000001.safetensors".into(), sha256(b"w"))];
            gipf::checkpoint::Latest { step: 1, weights: weights.into(), sha256: sha256.into_iter().collect() }
        };
        for latest in [named(&hostile), named("step-00000001.safetensors")] {
            let err = format!("{:#}", models.download_checkpoint("", &latest, &cache, false).unwrap_err());
            assert!(err.contains("latest.json") && err.contains("is not the name of a checkpoint file"), "{err}");
        }
    }
    assert!(!outside.exists() && !dir.path().join("cache/../outside").exists(), "nothing written outside");

    let files = |w: &'static [u8]| {
        [("step-00000001.json", &b"{}"[..]), ("step-00000001.optim", b"o"), ("step-00000001.safetensors", w)]
    };
    let latest = publish(&models, &files(b"first"), "step-00000001.safetensors");
    let weights = models.download_checkpoint("", &latest, &cache, false).unwrap();
    assert_eq!(std::fs::read(&weights).unwrap(), b"first");
    assert!(!cache.join("step-00000001.optim").exists(), "self-play leaves the optimizer state");
    let latest = publish(&models, &files(b"rolled back"), "step-00000001.safetensors");
    let weights = models.download_checkpoint("", &latest, &cache, true).unwrap();
    assert_eq!(std::fs::read(&weights).unwrap(), b"rolled back", "stale cached weights replaced");
    assert_eq!(std::fs::read(cache.join("step-00000001.optim")).unwrap(), b"o", "the trainer takes it");

    // Self-play following the store keeps only the newest few in its cache.
    let worker_cache = dir.path().join("worker");
    for step in 2..=6u64 {
        let stem = format!("step-{step:08}");
        let (json, weights) = (format!("{stem}.json"), format!("{stem}.safetensors"));
        publish(&models, &[(json.as_str(), &b"{}"[..]), (weights.as_str(), stem.as_bytes())], &weights);
        let source = gipf::model_source::ModelSource::remote(
            server.store(&format!("s3://{BUCKET}/runs/names/models")),
            worker_cache.clone(),
        );
        assert_eq!(source.current().unwrap(), Some(worker_cache.join(&weights)));
    }
    let mut cached: Vec<String> = std::fs::read_dir(&worker_cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    cached.sort();
    let newest = (4..=6).flat_map(|step| [format!("step-{step:08}.json"), format!("step-{step:08}.safetensors")]);
    assert_eq!(cached, newest.collect::<Vec<_>>());
}

/// One trainer per run: a second refuses to start while the first's lease
/// is fresh (the `gipf loop` command too, before any work), a stale lease (a
/// killed trainer's) is taken over, and so is one whose heartbeat lies
/// further in the future than clocks may differ; a trainer whose lease was
/// taken over finds out, and a lease given back is gone from the store.
#[test]
fn a_second_trainer_on_a_run_is_refused_and_a_stale_lease_is_taken_over() {
    use gipf::lease::{Lease, LEASE_FILE, MAX_CLOCK_SKEW, STALE};
    use std::sync::Arc;
    let server = S3Server::start();
    let url = format!("s3://{BUCKET}/runs/lease");
    let root = Arc::new(server.store(&url));
    // A heartbeat `age_ms` ago (in the future when negative).
    let write = |owner: &str, age_ms: i64| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        let record = serde_json::json!({"owner": owner, "heartbeat_ms": now.as_millis() as i64 - age_ms});
        root.put(LEASE_FILE, record.to_string().into_bytes()).unwrap();
    };
    let first = Lease::take(root.clone(), "first").unwrap();
    let err = format!("{:#}", Lease::take(root.clone(), "second").err().unwrap());
    assert!(err.contains("another trainer (first) holds this run"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let (cache, config) = (dir.path().join("cache"), config(dir.path()));
    let (out, text) = output(gipf(&server, &cache, &["loop", "--config", config.to_str().unwrap(), "--run", &url]));
    assert!(!out.status.success() && text.contains("another trainer (first) holds this run"), "{text}");
    assert!(server.store(&format!("{url}/models")).list("").unwrap().is_empty(), "nothing published");
    drop(first);
    assert_eq!(root.get(LEASE_FILE).unwrap(), None, "given back");

    write("killed", STALE.as_millis() as i64 + 1000);
    let second = Lease::take_renewing(root.clone(), "second", Duration::from_millis(200)).unwrap();
    second.check().unwrap();
    write("third", 0);
    let start = Instant::now();
    while second.check().is_ok() {
        assert!(start.elapsed() < Duration::from_secs(10), "the loss of the lease was not noticed");
        std::thread::sleep(Duration::from_millis(50));
    }
    let err = format!("{:#}", second.check().unwrap_err());
    assert!(err.contains("the lease was taken over by third"), "{err}");
    drop(second);
    assert!(root.get(LEASE_FILE).unwrap().is_some(), "the third trainer's lease is left alone");

    // A heartbeat a little ahead (clocks differ) is fresh; one further ahead
    // than clocks may differ would never go stale, and is taken over.
    write("ahead", -30_000);
    let err = format!("{:#}", Lease::take(root.clone(), "fourth").err().unwrap());
    assert!(err.contains("another trainer (ahead) holds this run"), "{err}");
    write("future", -(MAX_CLOCK_SKEW.as_millis() as i64) - 3_600_000);
    Lease::take(root.clone(), "fourth").unwrap().check().unwrap();
}

/// An https endpoint goes through rustls with ring's cryptography: a server
/// that hangs up during the handshake is an error at start, not a panic.
#[test]
fn an_https_endpoint_that_hangs_up_is_an_error_at_start() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("https://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || listener.incoming().for_each(drop));
    let settings =
        [("AWS_ENDPOINT_URL", endpoint.as_str()), ("AWS_ACCESS_KEY_ID", "key"), ("AWS_SECRET_ACCESS_KEY", "secret")];
    let settings = settings.map(|(key, value)| (key.to_string(), value.to_string()));
    let error = gipf::store::Store::open_with("s3://bucket/run", settings).expect_err("no server there");
    assert!(format!("{error:#}").contains("s3://bucket/run"), "{error:#}");
}

/// Hostile objects in a run's store: an object larger than its kind may be
/// is refused by the size the store gives, before its body is read; a shard
/// whose name says it finished far in the future is skipped with a warning,
/// and does not hide the shards listed after it.
#[test]
fn oversized_objects_and_shards_from_the_future_are_refused() {
    let server = S3Server::start();
    let url = format!("s3://{BUCKET}/runs/hostile");
    let models = server.store(&format!("{url}/models"));
    models.put("latest.json", vec![b' '; 2 << 20]).unwrap();
    let err = format!("{:#}", models.latest("").unwrap_err());
    assert!(err.contains("latest.json: 2097152 bytes, more than such an object may have"), "{err}");

    let games = std::sync::Arc::new(server.store(&format!("{url}/games")));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let shard = |ms: u64, n: u32| format!("shard-{ms:013}-w-{n:06}.jsonl.zst");
    games.create("shard-9999999999999-x-0.jsonl.zst", Vec::new()).unwrap();
    games.create(&shard(now, 0), Vec::new()).unwrap();
    let mut feed = gipf::store::ShardFeed::new(games.clone(), "");
    assert_eq!(feed.refresh().unwrap(), 1);
    games.create(&shard(now + 1000, 1), Vec::new()).unwrap();
    assert_eq!(feed.refresh().unwrap(), 1, "the next shard is listed");
    let listed: Vec<&String> = feed.listed().collect();
    assert_eq!(listed, [&shard(now, 0), &shard(now + 1000, 1)]);
}

/// Checkpoints of a tiny network at `steps`, saved in `dir`; their weights files.
fn tiny_checkpoints<const N: usize>(dir: &Path, steps: [u64; N]) -> [PathBuf; N] {
    let config = gipf::config::Config::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/tiny.toml")));
    let mut trainer = gipf::train::Trainer::new(&config.unwrap(), tch::Device::Cpu, 1);
    steps.map(|step| {
        trainer.step = step;
        trainer.save(dir).unwrap()
    })
}

/// `latest.json` is published by a conditional write on the version the
/// publisher last saw: a trainer that lost its lease (another published
/// since) is refused with [`StoreError::Superseded`], and the newer
/// `latest.json` stays.
#[test]
fn a_publisher_with_a_stale_view_cannot_overwrite_a_newer_latest_json() {
    let server = S3Server::start();
    let models = server.store(&format!("s3://{BUCKET}/runs/publish/models"));
    let dir = tempfile::tempdir().unwrap();
    let [five, ten, six] = tiny_checkpoints(dir.path(), [5, 10, 6]);
    let first = models.publish_checkpoint("", &five, 5, None).unwrap();
    assert!(first.is_some(), "the store gives a version");
    let newer = models.publish_checkpoint("", &ten, 10, first.as_deref()).unwrap();
    for stale in [first.as_deref(), None] {
        let err = models.publish_checkpoint("", &six, 6, stale).unwrap_err();
        assert!(matches!(StoreError::find(&err), Some(StoreError::Superseded { .. })), "{err:#}");
        assert!(format!("{err:#}").contains("latest.json changed since this process last wrote it"), "{err:#}");
    }
    assert_eq!(models.latest("").unwrap().unwrap().step, 10, "the newer latest.json stays");
    models.publish_checkpoint("", &six, 6, newer.as_deref()).unwrap();
}

/// A conditional write of `latest.json` that landed but whose reply was
/// lost (a 503 from a proxy, a timeout) is tried again and meets its own
/// write: 412. That publish succeeded: `latest.json` names this step and
/// these files' sha256, so the trainer goes on (it stopped as "another
/// trainer published"), first publish and later ones alike; a different
/// checkpoint there is still refused.
#[test]
fn a_publish_whose_reply_was_lost_is_recognised_as_done() {
    let server = S3Server::start();
    let models = server.store(&format!("s3://{BUCKET}/runs/lost-reply/models"));
    let dir = tempfile::tempdir().unwrap();
    let [five, ten] = tiny_checkpoints(dir.path(), [5, 10]);
    let first = models.publish_checkpoint("", &five, 5, None).unwrap();
    let again = models.publish_checkpoint("", &five, 5, None).unwrap();
    assert_eq!(again, first, "the first publish, tried again after a lost reply");
    let second = models.publish_checkpoint("", &ten, 10, first.as_deref()).unwrap();
    let again = models.publish_checkpoint("", &ten, 10, first.as_deref()).unwrap();
    assert_eq!(again, second, "a later publish, tried again after a lost reply");
    let err = models.publish_checkpoint("", &five, 5, first.as_deref()).unwrap_err();
    assert!(matches!(StoreError::find(&err), Some(StoreError::Superseded { .. })), "{err:#}");
}

/// The loop with its run in the store behind a proxy that loses every
/// eighth piece of a reply (the request itself landed):
/// every store call meets lost replies, retried by the client or at the
/// next try. The loop finishes its generations (the only trainer is never
/// stopped as "another trainer"), every game reaches the store once, the
/// newest checkpoint is published.
#[test]
fn the_loop_goes_on_through_lost_replies() {
    let server = S3Server::start();
    let proxy = s3::LossyProxy::start(&server.endpoint, 8);
    let dir = tempfile::tempdir().unwrap();
    let (cache, config) = (dir.path().join("cache"), config(dir.path()));
    let url = format!("s3://{BUCKET}/runs/lossy");
    let mut run = gipf(&server, &cache, &["loop", "--config", config.to_str().unwrap(), "--run", &url]);
    run.args(["--generations", "6", "--device", "cpu"]).env("AWS_ENDPOINT_URL", &proxy.endpoint);
    let (out, log) = output(run);
    assert!(out.status.success(), "{log}");
    let lost = proxy.lost.load(std::sync::atomic::Ordering::Relaxed);
    assert!(lost > 0, "no reply was lost");
    let stored = check_consumed(&server, &cache, &url, &log);
    assert!(stored.len() >= 6 * 2, "{} games for 6 generations of 2", stored.len());
    println!("lost replies: {lost} lost, the loop finished, {} games stored once each", stored.len());
}
