//! A run in a real S3 server (SeaweedFS on 127.0.0.1, started here; its
//! binary from `scripts/setup-s3.sh`, named by `WEED`): two self-play
//! workers and one trainer share one bucket.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gipf::checkpoint::ModelSource;
use gipf::config::Config;
use gipf::games::GameFile;
use gipf::selfplay::{run, RunOptions};
use gipf::store::Store;
use tch::Device;

const KEY: &str = "gipf-test-key";
const SECRET: &str = "gipf-test-secret";
const BUCKET: &str = "gipf";

/// A SeaweedFS server with one bucket, stopped when dropped.
struct S3Server {
    child: Child,
    endpoint: String,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl S3Server {
    fn start() -> S3Server {
        let weed = std::env::var("WEED").map(PathBuf::from).unwrap_or_else(|_| {
            let home = std::env::var("HOME").unwrap();
            PathBuf::from(home).join(".cache/gipf/seaweedfs/bin/weed")
        });
        assert!(weed.is_file(), "no SeaweedFS at {} (scripts/setup-s3.sh installs it)", weed.display());
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("s3.json");
        let identity = serde_json::json!({"identities": [{"name": "test",
            "credentials": [{"accessKey": KEY, "secretKey": SECRET}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]});
        std::fs::write(&config, identity.to_string()).unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        let ports: Vec<u16> = (0..9).map(|_| free_port()).collect();
        let master = ports[0];
        let args = [
            "server".to_string(),
            "-ip=127.0.0.1".into(),
            "-ip.bind=127.0.0.1".into(),
            format!("-dir={}", dir.path().join("data").display()),
            format!("-master.port={master}"),
            format!("-master.port.grpc={}", ports[1]),
            format!("-volume.port={}", ports[2]),
            format!("-volume.port.grpc={}", ports[3]),
            format!("-filer.port={}", ports[4]),
            format!("-filer.port.grpc={}", ports[5]),
            "-s3".into(),
            format!("-s3.port={}", ports[6]),
            format!("-s3.port.grpc={}", ports[7]),
            format!("-iam.port={}", ports[8]),
            "-s3.port.iceberg=0".into(),
            "-s3.port.lance=0".into(),
            format!("-s3.config={}", config.display()),
            "-master.telemetry=false".into(),
            "-volume.max=50".into(),
            "-master.volumeSizeLimitMB=64".into(),
        ];
        let child = Command::new(&weed)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("weed.log")).unwrap())
            .spawn()
            .unwrap();
        let server = S3Server { child, endpoint: format!("http://127.0.0.1:{}", ports[6]), _dir: dir };
        // The bucket, once the filer behind the S3 gateway answers.
        let start = Instant::now();
        loop {
            let mut shell = Command::new(&weed)
                .args(["shell", &format!("-master=127.0.0.1:{master}.{}", ports[1])])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            use std::io::Write;
            writeln!(shell.stdin.take().unwrap(), "s3.bucket.create -name {BUCKET}").unwrap();
            let out = String::from_utf8_lossy(&shell.wait_with_output().unwrap().stdout).into_owned();
            if out.contains("created bucket") || out.contains("already exists") {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(90), "SeaweedFS did not start: {out}");
            std::thread::sleep(Duration::from_millis(500));
        }
        // And the S3 gateway itself.
        while std::net::TcpStream::connect(("127.0.0.1", ports[6])).is_err() {
            let log = std::fs::read_to_string(server._dir.path().join("weed.log")).unwrap_or_default();
            let tail: String = log.lines().rev().take(20).collect::<Vec<_>>().join("\n");
            assert!(start.elapsed() < Duration::from_secs(90), "SeaweedFS's S3 gateway did not start:\n{tail}");
            std::thread::sleep(Duration::from_millis(200));
        }
        server
    }

    /// The environment that points the store at this server.
    fn env(&self) -> [(&'static str, String); 3] {
        [
            ("AWS_ACCESS_KEY_ID", KEY.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
        ]
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
    for (name, value) in server.env() {
        // One test in this binary: no other thread reads the environment.
        std::env::set_var(name, value);
    }
    std::env::set_var("GIPF_CACHE", cache.path().join("workers"));
    let run_url = format!("s3://{BUCKET}/runs/one");
    let config_path = cache.path().join("tiny.toml");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tiny.toml")).unwrap();
    std::fs::write(&config_path, text.replace("[train]", "shard_games = 2\n\n[train]")).unwrap();
    let mut trainer = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["--config", config_path.to_str().unwrap(), "--run", &run_url, "--device", "cpu"])
        .env("GIPF_CACHE", cache.path().join("trainer"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(cache.path().join("trainer.log")).unwrap())
        .spawn()
        .unwrap();

    let newest: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2u64)
            .map(|w| {
                let (run_url, cache) = (&run_url, cache.path());
                scope.spawn(move || {
                    let model = ModelSource::from_arg(Some(Path::new(&format!("{run_url}/models")))).unwrap();
                    let outbox = cache.join(format!("outbox-{w}"));
                    let mut newest = String::new();
                    let start = Instant::now();
                    // Rounds of two games until a trained checkpoint is picked up.
                    while start.elapsed() < Duration::from_secs(120) {
                        let options = RunOptions {
                            config: tiny(),
                            out: outbox.clone(),
                            games: Some(2),
                            model: model.clone(),
                            device: Device::Cpu,
                            seed: 1000 * w + start.elapsed().as_millis() as u64,
                            worker: format!("w{w}"),
                            duration: None,
                            progress: false,
                            probe_raw: false,
                            constant_network: false,
                            upload: Some(Store::open(&format!("{run_url}/games")).unwrap()),
                        };
                        run(options).unwrap();
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
    // Let the trainer read what was uploaded last.
    std::thread::sleep(Duration::from_secs(4));
    trainer.kill().unwrap();
    trainer.wait().unwrap();
    let log = std::fs::read_to_string(cache.path().join("trainer.log")).unwrap();
    for newest in &newest {
        assert!(!newest.ends_with("step-00000000.safetensors"), "a worker picked up {newest}: {log}");
    }

    let games = Store::open(&format!("{run_url}/games")).unwrap();
    let stored = games.list("").unwrap();
    let latest = Store::open(&format!("{run_url}/models")).unwrap().latest("").unwrap().expect("a checkpoint");
    assert!(latest.step > 0, "the trainer's steps advanced: {log}");
    let local = cache.path().join("trainer/runs").join(gipf::store::file_name_of(&run_url)).join("run");
    let mut read: Vec<String> = std::fs::read_dir(local.join("games"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("shard-"))
        .collect();
    read.sort();
    assert_eq!(read, stored, "the trainer downloaded every stored shard, each once");
    let all = gipf::shards::read_all(&local.join("games")).unwrap();
    let mut fingerprints: Vec<u64> = all.iter().map(GameFile::fingerprint).collect();
    fingerprints.sort();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), all.len(), "no game twice");
}
