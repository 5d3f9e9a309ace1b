//! A SeaweedFS S3 server on 127.0.0.1 for the object-store tests, started
//! by them (its binary from `scripts/setup-s3.sh`, named by `WEED`).

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const KEY: &str = "gipf-test-key";
const SECRET: &str = "gipf-test-secret";
pub const BUCKET: &str = "gipf";

/// A SeaweedFS server with one bucket, stopped when dropped.
pub struct S3Server {
    child: Option<Child>,
    pub endpoint: String,
    weed: PathBuf,
    args: Vec<String>,
    s3_port: u16,
    dir: tempfile::TempDir,
}

/// A free port, never the same twice in this process: servers of tests
/// that run at once must not share one.
fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if GIVEN.lock().unwrap().insert(port) {
            return port;
        }
    }
}

impl S3Server {
    pub fn start() -> S3Server {
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
        let mut server = S3Server {
            child: None,
            endpoint: format!("http://127.0.0.1:{}", ports[6]),
            weed: weed.clone(),
            args: args.to_vec(),
            s3_port: ports[6],
            dir,
        };
        server.spawn();
        let start = Instant::now();
        // The bucket, once the filer behind the S3 gateway answers.
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
        server.wait_for_gateway();
        server
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(self.dir.path().join("weed.log")).unwrap();
        self.child = Some(Command::new(&self.weed).args(&self.args).stdout(Stdio::null()).stderr(log).spawn().unwrap());
    }

    fn wait_for_gateway(&self) {
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.s3_port)).is_err() {
            let log = std::fs::read_to_string(self.dir.path().join("weed.log")).unwrap_or_default();
            let tail: String = log.lines().rev().take(20).collect::<Vec<_>>().join("\n");
            assert!(start.elapsed() < Duration::from_secs(90), "SeaweedFS's S3 gateway did not start:\n{tail}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Stops the server (as a crash would: SIGKILL).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the stopped server again on its data, ports and bucket.
    pub fn restart(&mut self) {
        self.spawn();
        self.wait_for_gateway();
    }

    /// A store client for `url` on this server, configured without touching
    /// this process's environment (tests of one binary run at once).
    pub fn store(&self, url: &str) -> gipf::store::Store {
        gipf::store::Store::open_with(url, self.env().map(|(k, v)| (k.to_string(), v))).unwrap()
    }

    /// The environment that points the store at this server.
    pub fn env(&self) -> [(&'static str, String); 3] {
        [
            ("AWS_ACCESS_KEY_ID", KEY.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
            ("AWS_ENDPOINT_URL", self.endpoint.clone()),
        ]
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A TCP proxy in front of a server that can go silent: it then accepts
/// connections and reads requests but never answers, as an endpoint that
/// drops packets does (a refused connection fails fast; this does not).
pub struct SilentProxy {
    pub endpoint: String,
    silent: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl SilentProxy {
    /// Forwards to `endpoint` (`http://host:port`) until [`SilentProxy::silence`].
    pub fn start(endpoint: &str) -> SilentProxy {
        use std::sync::atomic::{AtomicBool, Ordering};
        let target = endpoint.trim_start_matches("http://").to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy = format!("http://{}", listener.local_addr().unwrap());
        let silent = std::sync::Arc::new(AtomicBool::new(false));
        let flag = silent.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (target, flag) = (target.clone(), flag.clone());
                std::thread::spawn(move || {
                    let Ok(server) = std::net::TcpStream::connect(&target) else { return };
                    let pipe = |mut from: std::net::TcpStream,
                                mut to: std::net::TcpStream,
                                flag: std::sync::Arc<AtomicBool>| {
                        let mut buffer = [0u8; 16384];
                        while let Ok(n @ 1..) = std::io::Read::read(&mut from, &mut buffer) {
                            // Silent: what comes in is swallowed, the connection stays open.
                            if !flag.load(Ordering::Relaxed)
                                && std::io::Write::write_all(&mut to, &buffer[..n]).is_err()
                            {
                                break;
                            }
                        }
                    };
                    let (client2, server2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                    let flag2 = flag.clone();
                    std::thread::spawn(move || pipe(server2, client2, flag2));
                    pipe(client, server, flag);
                });
            }
        });
        SilentProxy { endpoint: proxy, silent }
    }

    pub fn silence(&self) {
        self.silent.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A TCP proxy in front of a server that loses replies: every `every`-th
/// piece of a reply that the server sends (counted over all connections) is
/// swallowed and its connection closed, after the request had landed, as
/// when a proxy answers 503 or a timeout cuts a request short.
pub struct LossyProxy {
    pub endpoint: String,
    /// Replies lost so far.
    pub lost: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl LossyProxy {
    pub fn start(endpoint: &str, every: usize) -> LossyProxy {
        use std::io::{Read, Write};
        use std::sync::atomic::{AtomicUsize, Ordering};
        let target = endpoint.trim_start_matches("http://").to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let proxy = format!("http://{}", listener.local_addr().unwrap());
        let lost = std::sync::Arc::new(AtomicUsize::new(0));
        let pieces = std::sync::Arc::new(AtomicUsize::new(0));
        let counter = lost.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = std::net::TcpStream::connect(&target) else { continue };
                let (mut client_in, mut server_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 16384];
                    while let Ok(n @ 1..) = client_in.read(&mut buffer) {
                        if server_out.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                });
                let (counter, pieces) = (counter.clone(), pieces.clone());
                std::thread::spawn(move || {
                    let (mut server_in, mut client_out) = (server, client);
                    let mut buffer = [0u8; 16384];
                    while let Ok(n @ 1..) = server_in.read(&mut buffer) {
                        if pieces.fetch_add(1, Ordering::Relaxed) % every == every - 1 {
                            counter.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                        if client_out.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = client_out.shutdown(std::net::Shutdown::Both);
                    let _ = server_in.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        LossyProxy { endpoint: proxy, lost }
    }
}

/// Waits until the log file `log` (written by a child process) holds one of
/// `signs`, polling; panics with the log after `within`. An outage is kept
/// until the program has met it, rather than for a fixed time.
pub fn wait_for_log(log: &std::path::Path, signs: &[&str], within: Duration) {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if signs.iter().any(|sign| text.contains(sign)) {
            return;
        }
        assert!(start.elapsed() < within, "none of {signs:?} in the log:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
