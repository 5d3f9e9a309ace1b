//! The web board in a real headless Chromium (Debian's `chromium`, driven by
//! npm `playwright-core` from `web/tests/browser.mjs`), served by `gipf
//! serve` on 127.0.0.1: the static files of `scripts/web-build.sh` in
//! `web/dist/`, and a checkpoint it exports for the page. A whole game against the model played by
//! clicks, illegal clicks refused with a message, undo, a removal keeping a
//! GIPF piece, no request off the page's origin, and parity with the native
//! engine: the same network outputs within 1e-4 and the same choices.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gipf::config::Config;
use gipf::encoding::{encode, INPUT_SIZE};
use gipf::players::{Budget, NetworkPlayer, Player};
use gipf::rules::{Position, Variant};
use gipf::search::SearchConfig;
use gipf::train::Trainer;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const SIMULATIONS: u32 = 64;

/// `gipf serve` on 127.0.0.1, stopped when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `gipf serve` of `weights` (exported into the cache `cache`) and the built page.
fn serve(weights: &Path, cache: &Path) -> (Server, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(env!("CARGO_BIN_EXE_gipf"))
        .args(["serve", "--model", weights.to_str().unwrap(), "--port", &port.to_string()])
        .current_dir(ROOT)
        .env("GIPF_CACHE", cache)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut server = Server(child);
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(server.0.try_wait().unwrap().is_none(), "gipf serve stopped");
        assert!(start.elapsed() < Duration::from_secs(120), "gipf serve did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, format!("http://127.0.0.1:{port}/"))
}

/// Positions of the standard game after a few random actions, with the actions.
fn positions(n: usize) -> Vec<(Vec<String>, Position)> {
    let mut rng = SmallRng::seed_from_u64(11);
    let mut found = Vec::new();
    while found.len() < n {
        let mut pos = Position::new(Variant::Standard);
        let mut actions = Vec::new();
        for _ in 0..rng.random_range(2..50) {
            if pos.is_over() {
                break;
            }
            let action = *pos.legal_actions().choose(&mut rng).unwrap();
            pos.play(action).unwrap();
            actions.push(action.to_string());
        }
        if !pos.is_over() {
            found.push((actions, pos));
        }
    }
    found
}

#[test]
fn the_web_board_plays_in_a_browser_as_the_native_engine() {
    let dist = Path::new(ROOT).join("web/dist");
    assert!(dist.join("engine.wasm").is_file(), "no {}: scripts/web-build.sh makes it", dist.display());
    for page in ["index.html", "app.js", "worker.js", "run.html", "run.js", "style.css"] {
        let (source, built) = (std::fs::read(Path::new(ROOT).join("web").join(page)), std::fs::read(dist.join(page)));
        assert_eq!(
            source.unwrap(),
            built.unwrap(),
            "web/dist/{page} is older than web/{page}: run scripts/web-build.sh"
        );
    }
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(Path::new(&chromium).is_file(), "no Chromium at {chromium} (scripts/setup-web.sh installs it)");

    // A checkpoint of the CPU config's network, which `gipf serve` exports for the page.
    let dir = tempfile::tempdir().unwrap();
    let config = Config::load(&Path::new(ROOT).join("configs/cpu.toml")).unwrap();
    let weights = Trainer::new(&config, tch::Device::Cpu, 5).save(&dir.path().join("models")).unwrap();

    let search = SearchConfig { batch_size: 4, ..config.search };
    let cases = positions(20);
    let planes: Vec<Vec<f32>> = cases
        .iter()
        .map(|(_, pos)| {
            let mut input = vec![0.0; INPUT_SIZE];
            encode(pos, &mut input);
            input
        })
        .collect();
    let (_server, url) = serve(&weights, &dir.path().join("cache"));
    let job = dir.path().join("job.json");
    let actions: Vec<&Vec<String>> = cases.iter().map(|(a, _)| a).collect();
    let spec = json!({"url": url, "chromium": chromium, "positions": actions, "planes": planes,
        "simulations": SIMULATIONS, "search": search});
    std::fs::write(&job, spec.to_string()).unwrap();
    let out = Command::new("node")
        .arg("tests/browser.mjs")
        .arg(&job)
        .current_dir(Path::new(ROOT).join("web"))
        .output()
        .expect("node runs (scripts/setup-web.sh installs it)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));

    assert_eq!(report["errors"], json!([]), "no errors in the page");
    assert_eq!(report["off_origin"], json!([]), "no request leaves the page's origin");
    let game = &report["game"];
    assert!(game["winner"].is_string(), "the game was played to its end: {game}");
    assert_eq!(game["moves"], game["shown_moves"], "the move list shows every action: {game}");
    assert!(game["status"].as_str().unwrap().ends_with("wins."), "{game}");
    // The model's thinking on the board after its first move: arrows, the value bar, a plotted value.
    let shown = &game["shown"];
    assert!(shown["arrows"].as_u64().unwrap() >= 1, "arrows for the model's candidate pushes: {game}");
    let bar: f64 = shown["bar"].as_str().unwrap().trim_end_matches('%').parse().unwrap();
    assert!((0.0..=100.0).contains(&bar) && shown["plotted"].as_u64().unwrap() >= 1, "{game}");
    assert!(game["values"].as_u64().unwrap() > shown["plotted"].as_u64().unwrap(), "a value per model move: {game}");
    // The script's two illegal clicks: e5, then a1 and e5.
    let illegal = report["illegal"].as_array().unwrap();
    assert_eq!(illegal.len(), 2, "every illegal click reported: {illegal:?}");
    for refused in illegal {
        assert_eq!(refused["moves"], 0, "nothing played: {refused}");
        assert!(!refused["message"].as_str().unwrap().is_empty(), "a visible message: {refused}");
    }
    assert_eq!(report["undo"], json!({"before": 2, "after": 0, "to_act": "white"}));
    // Analysis of the player's moves: the board is not busy meanwhile, a
    // click during a 100,000-simulation analysis played at once (the random
    // opponent replied), and the analysis of the new position was shown.
    let analysis = &report["analysis"];
    assert_eq!((&analysis["busy_while_analysing"], &analysis["moves"]), (&json!(false), &json!(2)), "{analysis}");
    let values = analysis["values"].as_array().unwrap();
    assert!(values.len() > analysis["values_before"].as_u64().unwrap() as usize, "{analysis}");
    assert_eq!(values.last().unwrap()[0], 2, "the last value is the analysis at move 2: {analysis}");
    assert!(analysis["arrows"].as_u64().unwrap() >= 1, "{analysis}");
    let removal = &report["removal"];
    assert_eq!(removal["legal"], json!(["xc2,c3,c4,c5", "xc2,c4,c5"]));
    assert_eq!(removal["board"], json!({"c3": "W", "e5": "B", "f5": "B"}), "the GIPF piece kept: {removal}");
    assert_eq!(removal["reserve"]["white"], 14, "the three others back in reserve");
    assert_eq!(removal["gipf_pieces_shown"], 3, "c3, e5 and f5 drawn as GIPF pieces: {removal}");

    // Parity: the same outputs, the same choices, and the speed of each
    // (on one thread, as the page's).
    tch::set_num_threads(1);
    let (network, _) = gipf::checkpoint::load_checkpoint(&weights, tch::Device::Cpu).unwrap();
    let mut player = NetworkPlayer::load(
        &weights,
        tch::Device::Cpu,
        Default::default(),
        Budget::Simulations(SIMULATIONS),
        false,
        &search,
    )
    .unwrap();
    let (mut browser_seconds, mut native_seconds) = (0.0, 0.0);
    let parity = report["parity"].as_array().unwrap();
    assert_eq!(parity.len(), cases.len(), "an answer for every position");
    for (i, ((actions, pos), answer)) in cases.iter().zip(parity).enumerate() {
        assert!(answer["error"].is_null(), "position {i}: {answer}");
        let (logits, values) = network.infer(&planes[i], 1);
        let outputs: Vec<f64> = answer["outputs"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(outputs.len(), logits.len() + 1);
        let native = logits.iter().chain(&values).map(|&v| v as f64);
        let worst = outputs.iter().zip(native).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(worst < 1e-4, "position {i} ({actions:?}): outputs differ by {worst}");
        let start = Instant::now();
        let action = player.choose(pos).unwrap();
        native_seconds += start.elapsed().as_secs_f64();
        browser_seconds += answer["seconds"].as_f64().unwrap();
        assert_eq!(answer["action"], action.to_string(), "position {i} ({actions:?})");
    }
    let simulations = (SIMULATIONS as usize * cases.len()) as f64;
    println!(
        "simulations/s with the 4x32 network, batches of 4, one thread: browser {:.0}, native {:.0} ({:.2} of native)",
        simulations / browser_seconds,
        simulations / native_seconds,
        native_seconds / browser_seconds
    );
}
