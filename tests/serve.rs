//! `gipf serve`'s routes on 127.0.0.1 (`src/serve.rs`), asked with raw
//! HTTP requests so that no client tidies a path first: the page and the
//! model are served with their types, nothing outside their folders is.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;

/// Serves `page`, `model` and maybe `run` from a thread of the test process; the port.
fn start(page: &Path, model: &Path, run: Option<&Path>) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (page, model, run) = (page.to_path_buf(), model.to_path_buf(), run.map(Path::to_path_buf));
    let options = gipf::serve::Options::default();
    std::thread::spawn(move || gipf::serve::serve_on(listener, &page, &model, run.as_deref(), &options).unwrap());
    port
}

/// The status, the headers (lower case) and the body of `GET path`.
fn get(port: u16, path: &str) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").expect("a whole response");
    let head = String::from_utf8_lossy(&response[..split]).to_lowercase();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status");
    (status, head, response[split + 4..].to_vec())
}

#[test]
fn the_page_and_the_model_are_served_and_nothing_outside_them() {
    let dir = tempfile::tempdir().unwrap();
    let (page, model) = (dir.path().join("page"), dir.path().join("model"));
    std::fs::create_dir_all(&page).unwrap();
    std::fs::create_dir_all(&model).unwrap();
    std::fs::write(page.join("index.html"), "<html>board</html>").unwrap();
    std::fs::write(page.join("engine.wasm"), b"\0asm").unwrap();
    let onnx: Vec<u8> = (0..400_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(model.join("model.onnx"), &onnx).unwrap();
    std::fs::write(dir.path().join("secret.txt"), "secret").unwrap();
    std::fs::create_dir_all(dir.path().join("arena")).unwrap();
    std::fs::write(dir.path().join("arena/ratings.png"), "a plot").unwrap();
    let port = start(&page, &model, None);

    let (status, _, body) = get(port, "/");
    assert_eq!((status, body.as_slice()), (200, &b"<html>board</html>"[..]));
    let (status, head, _) = get(port, "/engine.wasm");
    assert!(status == 200 && head.contains("content-type: application/wasm"), "{head}");
    let (status, _, body) = get(port, "/model/model.onnx");
    assert!(status == 200 && body == onnx, "{status}");
    for path in [
        "/missing.js",
        "/model/missing.onnx",
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/model/../../secret.txt",
        "/model/%2e%2e/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/model/..%2F..%2Fsecret.txt",
        "/run/progress.json",
        "/run/ratings.png",
    ] {
        let (status, _, body) = get(port, path);
        assert_eq!(status, 404, "{path}");
        assert!(!String::from_utf8_lossy(&body).contains("secret"), "{path}");
    }

    // 50 requests for the model at once, each answered whole.
    let answers: Vec<(u16, usize)> = std::thread::scope(|scope| {
        let asks: Vec<_> = (0..50).map(|_| scope.spawn(|| get(port, "/model/model.onnx"))).collect();
        asks.into_iter().map(|a| a.join().unwrap()).map(|(status, _, body)| (status, body.len())).collect()
    });
    assert!(answers.iter().all(|&answer| answer == (200, onnx.len())), "{answers:?}");
}

/// With a run folder: its progress as JSON and its Elo plot, nothing else of it.
#[test]
fn a_run_s_progress_and_elo_plot_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let (page, model, run) = (dir.path().join("page"), dir.path().join("model"), dir.path().join("run"));
    for folder in [&page, &model, &run.join("arena")] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(page.join("run.html"), "<html>run</html>").unwrap();
    let config = gipf::config::Config::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml")).unwrap();
    let mut trainer = gipf::train::Trainer::new(&config, tch::Device::Cpu, 1);
    trainer.step = 42;
    trainer.save(&run.join("models")).unwrap();
    let port = start(&page, &model, Some(&run));

    assert_eq!(get(port, "/run/ratings.png").0, 404, "no plot yet");
    let (status, head, body) = get(port, "/run/progress.json");
    assert!(status == 200 && head.contains("content-type: application/json"), "{head}");
    let progress: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(progress["newest"]["step"], 42);
    assert_eq!((&progress["elo_plot"], &progress["selfplay"]), (&serde_json::json!(false), &serde_json::Value::Null));
    std::fs::write(run.join("arena/ratings.png"), "a plot").unwrap();
    let (status, head, body) = get(port, "/run/ratings.png");
    assert!(status == 200 && head.contains("content-type: image/png") && body == b"a plot", "{head}");
    assert_eq!(get(port, "/run.html").2, b"<html>run</html>");
    for path in ["/run/models/step-00000042.json", "/run/../run/arena/ratings.png", "/run/%2e%2e/secret.txt"] {
        assert_eq!(get(port, path).0, 404, "{path}");
    }
    // A link planted at the plot's place (or at its folder's) is not followed out of the run.
    std::fs::write(dir.path().join("secret.txt"), "a secret").unwrap();
    std::fs::remove_file(run.join("arena/ratings.png")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), run.join("arena/ratings.png")).unwrap();
    let (status, _, body) = get(port, "/run/ratings.png");
    assert!(status == 404 && body != b"a secret", "a linked plot was served: {status}");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("ratings.png"), "a secret").unwrap();
    std::fs::remove_dir_all(run.join("arena")).unwrap();
    std::os::unix::fs::symlink(&outside, run.join("arena")).unwrap();
    let (status, _, body) = get(port, "/run/ratings.png");
    assert!(status == 404 && body != b"a secret", "a linked arena folder was served: {status}");
}

/// The status of `GET /` naming `host` in its `Host` header.
fn status_for_host(port: u16, host: &str) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status")
}

/// Many slow clients on loopback (each sends half a request and waits),
/// more than the connections served at once: each is disconnected once its
/// headers are late, and the page still answers meanwhile. A request for a
/// host name the server was not told of (DNS rebinding) is refused.
#[test]
fn slow_clients_are_cut_off_and_foreign_hosts_refused_while_the_page_answers() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let (page, model) = (dir.path().join("page"), dir.path().join("model"));
    for folder in [&page, &model] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(page.join("index.html"), "<html>board</html>").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let limits = gipf::serve::Limits {
        connections: 32,
        header_timeout: Duration::from_secs(1),
        ..gipf::serve::Limits::default()
    };
    let options = gipf::serve::Options { limits, allowed_hosts: vec!["board.example".into()] };
    let served_page = page.clone();
    std::thread::spawn(move || gipf::serve::serve_on(listener, &served_page, &model, None, &options).unwrap());

    let start = Instant::now();
    let slow: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
            stream.write_all(b"GET / HTTP/1.1\r\nHost: 127").unwrap();
            stream
        })
        .collect();
    let (status, _, body) = get(port, "/");
    assert_eq!((status, body.as_slice()), (200, &b"<html>board</html>"[..]));
    let answered = start.elapsed();
    assert!(answered < Duration::from_secs(8), "the page answered after {answered:?}");
    for mut stream in slow {
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut rest = Vec::new();
        let read = stream.read_to_end(&mut rest);
        assert!(read.is_ok(), "a slow client still connected after {:?}: {read:?}", start.elapsed());
    }
    assert!(start.elapsed() < Duration::from_secs(12), "slow clients cut off after {:?}", start.elapsed());

    assert_eq!(status_for_host(port, &format!("127.0.0.1:{port}")), 200);
    assert_eq!(status_for_host(port, &format!("localhost:{port}")), 200);
    assert_eq!(status_for_host(port, "board.example"), 200);
    assert_eq!(status_for_host(port, &format!("rebound.attacker.example:{port}")), 421);
}

/// Clients that ask for the model again and again and never read, and
/// clients that send half a request and wait, from other addresses than a
/// normal client's (127.0.0.2 and 127.0.0.3): each address holds only its
/// share of the connections, a response nobody reads is cut off, and the
/// normal client's page answers within two seconds under both. Before,
/// 256 such clients held every connection for two minutes.
#[test]
fn clients_that_never_read_or_never_finish_cannot_hold_the_server() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let (page, model) = (dir.path().join("page"), dir.path().join("model"));
    for folder in [&page, &model] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(page.join("index.html"), "<html>board</html>").unwrap();
    std::fs::write(model.join("model.onnx"), vec![7u8; 4 << 20]).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let options = gipf::serve::Options::default();
    let served_page = page.clone();
    std::thread::spawn(move || gipf::serve::serve_on(listener, &served_page, &model, None, &options).unwrap());
    let from = |address: &str| {
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        socket.bind(&format!("{address}:0").parse::<std::net::SocketAddr>().unwrap().into()).unwrap();
        socket.connect(&format!("127.0.0.1:{port}").parse::<std::net::SocketAddr>().unwrap().into()).unwrap();
        TcpStream::from(socket)
    };
    let asks = "GET /model/model.onnx HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(8);
    let mut held = Vec::new();
    for _ in 0..300 {
        let mut stream = from("127.0.0.2");
        let _ = stream.write_all(asks.as_bytes());
        held.push(stream);
    }
    std::thread::sleep(Duration::from_millis(500));
    let start = Instant::now();
    let (status, _, body) = get(port, "/");
    assert_eq!((status, body.as_slice()), (200, &b"<html>board</html>"[..]));
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "the page answered after {:?} beside non-readers",
        start.elapsed()
    );
    for _ in 0..400 {
        let mut stream = from("127.0.0.3");
        let _ = stream.write_all(b"GET / HTTP/1.1\r\nHost: 127");
        held.push(stream);
    }
    std::thread::sleep(Duration::from_millis(500));
    let start = Instant::now();
    let (status, _, _) = get(port, "/");
    assert_eq!(status, 200);
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "the page answered after {:?} beside half requests",
        start.elapsed()
    );
}
