//! The `gipf` command line: `gipf rules` (whose whole contract
//! `core/tests/cli.rs` tests through `gipf-rules`), the benches, the loop,
//! clear errors with a non-zero exit on bad input.

use std::process::{Command, Output};

use gipf::rules::{Color, StateJson, Variant};

fn gipf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gipf")).args(args).output().expect("gipf runs")
}

/// Runs a command that must fail: non-zero exit, a message containing
/// `expected`, and no panic.
fn refused(args: &[&str], expected: &str) {
    let out = gipf(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: expected {expected:?} in {stderr:?}");
}

#[test]
fn json_contract_after_moves() {
    let out = gipf(&["rules", "--variant", "standard", "--moves", "b1-b2 b6-b5", "--json"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let keys: Vec<&str> = ["variant", "board", "reserve", "captured", "to_act", "phase", "legal", "winner"].to_vec();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value.as_object().unwrap().keys().map(|k| k.as_str()).collect::<Vec<_>>().len(), keys.len());
    let s: StateJson = serde_json::from_str(&text).unwrap();
    assert_eq!(s.variant, Variant::Standard);
    assert_eq!(s.board["b2"], "w");
    assert_eq!(s.board["b3"], "B");
    assert_eq!(s.board["b4"], "W");
    assert_eq!(s.board["b5"], "b");
    assert_eq!((s.reserve.white, s.reserve.black, s.captured.white, s.captured.black), (11, 11, 0, 0));
    assert_eq!((s.to_act, s.phase.as_str(), s.winner), (Some(Color::White), "push", None));
    assert_eq!(s.legal.len(), 40);
    assert!(s.legal.windows(2).all(|w| w[0] < w[1]), "legal actions are sorted");
    assert!(!s.legal.contains(&"b1-b2".to_string()));
    // The rest of the rules command's contract is tested through the core's
    // `gipf-rules` (`core/tests/cli.rs`), which starts without LibTorch.
    refused(&["rules", "--moves", "b1-b2 zz"], "'zz' is not an action");
}

/// The rates before `unit` on each line that has it: every one a positive
/// number (a zero, NaN or missing rate is a broken benchmark).
fn rates(text: &str, unit: &str) -> Vec<f64> {
    let rates: Vec<f64> = text
        .lines()
        .filter_map(|line| line.split_once(unit))
        .map(|(before, _)| before.split_whitespace().last().and_then(|n| n.parse().ok()).unwrap_or(f64::NAN))
        .collect();
    assert!(rates.iter().all(|r| r.is_finite() && *r > 0.0), "{unit}: {rates:?} in\n{text}");
    rates
}

#[test]
fn benches_run_and_print_rates() {
    let out = gipf(&["bench", "rules", "--seconds", "0.05"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert_eq!(rates(&text, " actions/s on one core").len(), 3, "{text}");
    let out = gipf(&["bench", "search", "--seconds", "0.05", "--simulations", "50"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert_eq!(rates(&text, " simulations/s on one core").len(), 3, "{text}");
    let out = gipf(&["bench", "classic", "--ms", "5", "--positions", "2"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert_eq!(rates(&text, " nodes/s on one core").len(), 2, "{text}");
    refused(&["bench", "rules", "--seconds=0"], "--seconds must be positive");
    // A number of games whose pairs would wrap is refused, not played as none.
    refused(&["arena", "random", "random", "--games", "4294967295", "--device", "cpu"], "--games");
}

/// With the full LibTorch wheel installed, binaries must keep libtorch_cuda.so
/// (else the CUDA backend is never registered and a GPU box runs on the CPU).
#[test]
fn binaries_link_libtorch_cuda_when_the_full_wheel_is_installed() {
    let torch =
        std::fs::canonicalize(concat!(env!("CARGO_MANIFEST_DIR"), "/.torch")).expect("scripts/setup-torch.sh ran");
    let full = torch.join("lib/libtorch_cuda.so").exists() && torch.parent().unwrap().join("nvidia").is_dir();
    let out = Command::new("readelf").args(["-d", env!("CARGO_BIN_EXE_gipf")]).output().expect("readelf runs");
    let dynamic = String::from_utf8_lossy(&out.stdout);
    assert_eq!(dynamic.contains("[libtorch_cuda.so]"), full, "{dynamic}");
    assert!(dynamic.contains(&torch.join("lib").display().to_string()), "rpath to LibTorch: {dynamic}");
}

#[test]
fn the_loop_runs_generations_and_resumes_where_it_stopped() {
    let run = tempfile::tempdir().unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let args = ["loop", "--config", "configs/tiny.toml", "--run", run.path().to_str().unwrap(), "--device", "cpu"];
    let once = |generations: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_gipf"))
            .args(args)
            .args(["--generations", generations])
            .current_dir(root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let names = |dir: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(run.path().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let games = || gipf::shards::read_all(&run.path().join("games")).unwrap().len();
    once("1");
    assert_eq!(games(), 2);
    once("1");
    assert_eq!(games(), 4, "the second start keeps the first games");
    let models = names("models");
    assert!(models.contains(&"step-00000000.safetensors".to_string()), "{models:?}");
    assert!(
        models.contains(&"step-00000010.safetensors".to_string()),
        "steps continue from the checkpoint: {models:?}"
    );
    assert!(!models.iter().any(|m| m.starts_with('.')), "no temporary files left: {models:?}");
    assert!(!names("logs").is_empty());
}

/// With `loop.workers`, self-play runs in threads beside the trainer, on
/// each device of `--devices`: games come from every worker, the threads
/// add up to the cores given, training stops after the generations asked
/// (checkpoints of `steps_per_generation` steps), and the workers with it.
#[test]
fn the_loop_on_several_devices_trains_beside_their_workers_and_stops() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/tiny.toml")).unwrap();
    let config = dir.path().join("workers.toml");
    let workers = tiny.replace("workers = 0\ngames_per_generation = 2\n", "workers = 1\n");
    // Each sample read once: the 10 steps need several games, more than one
    // worker finishes while the other is still on its first.
    let workers = workers.replace("max_reuse = 8.0", "max_reuse = 1.0");
    std::fs::write(&config, workers.replace("[train]", "shard_games = 1\n\n[train]")).unwrap();
    let run = dir.path().join("run");
    let (config, run_arg) = (config.to_str().unwrap(), run.to_str().unwrap());
    let args = ["loop", "--config", config, "--run", run_arg, "--generations", "2", "--devices", "cpu,cpu"];
    let out = gipf(&[&args[..], &["--cores", "6"]].concat());
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    // The trainer's thread, and each worker's LibTorch thread and its share of the 3 search threads.
    assert!(log.contains("self-play on cpu: 2 workers, each 1 LibTorch threads and 2/1 search threads"), "{log}");
    assert!(log.contains("threads: 6 on 6 cores"), "{log}");
    assert!(log.contains("self-play workers started beside the trainer workers=2"), "{log}");
    let mut models: Vec<String> = std::fs::read_dir(run.join("models"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".safetensors"))
        .collect();
    models.sort();
    assert_eq!(models.last().map(String::as_str), Some("step-00000010.safetensors"), "{models:?}");
    let workers: std::collections::BTreeSet<String> = gipf::shards::read_all(&run.join("games"))
        .unwrap()
        .into_iter()
        .map(|game| game.worker.expect("each game names its worker"))
        .collect();
    assert_eq!(workers.len(), 2, "games from both workers: {workers:?}");
}

/// `gipf info` names the machine and prints the layout a run would take,
/// as `gipf loop` plans it, with the commands of separate processes.
#[test]
fn info_prints_the_machine_and_the_layout() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(env!("CARGO_BIN_EXE_gipf"))
        .args(["info", "--config", "configs/cpu.toml", "--devices", "cpu,cpu", "--cores", "11"])
        .current_dir(root)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("CUDA: not available"), "{text}");
    // cpu.toml: two workers a device, one trainer thread: 1 + 4 x 1 + (2 + 2 + 1 + 1) = 11.
    assert!(text.contains("self-play on cpu: 4 workers, each 1 LibTorch threads and 2/2/1/1 search threads"), "{text}");
    assert!(text.contains("threads: 11 on 11 cores"), "{text}");
    assert_eq!(text.matches("selfplay --device cpu --cores").count(), 4, "{text}");
}

/// `gipf loop --from` starts a new run from a model: its first checkpoint
/// is the parent's weights and names it; started again, the run resumes.
/// The reference model (4x32) does not fit the tiny config: a clear error.
#[test]
fn the_loop_continues_from_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/tiny.toml");
    let config = gipf::config::Config::load(std::path::Path::new(tiny)).unwrap();
    let mut parent = gipf::train::Trainer::new(&config, tch::Device::Cpu, 5);
    parent.step = 30;
    let weights = parent.save(&dir.path().join("parent")).unwrap();
    let run = dir.path().join("run");
    let args = ["loop", "--config", tiny, "--run", run.to_str().unwrap(), "--generations", "1", "--device", "cpu"];
    let parent_models = dir.path().join("parent");
    let from = [&args[..], &["--from", parent_models.to_str().unwrap()]].concat();
    for _ in 0..2 {
        let out = gipf(&from);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let first = run.join("models/step-00000000.safetensors");
    let read = |path: &std::path::Path| std::fs::read(path).unwrap();
    assert_eq!(read(&first), read(&weights), "the run starts from the parent's weights");
    let meta = gipf::checkpoint::read_meta(&gipf::checkpoint::newest_checkpoint(&run.join("models")).unwrap().unwrap());
    let lineage = meta.unwrap().lineage.unwrap();
    assert_eq!(lineage.parent.unwrap().step, 30);
    assert_eq!(lineage.inherited.steps, 30);
    assert!(lineage.run.steps >= 10, "the second start went on from the first: {:?}", lineage.run);
    let new_run = dir.path().join("new-run");
    let mut from_reference = args.to_vec();
    from_reference[4] = new_run.to_str().unwrap();
    let reference = gipf(&[&from_reference[..], &["--from", "reference"]].concat());
    let err = String::from_utf8_lossy(&reference.stderr);
    assert!(!reference.status.success() && err.contains("give the config its network shape"), "{err}");
}

/// From a folder outside the checkout: the shipped configs are built in, and
/// the export finds ONNX Runtime's library to check its ONNX model with.
#[test]
fn binaries_work_from_any_folder() {
    let elsewhere = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_gipf")).args(args).current_dir(elsewhere.path()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{args:?}: {stderr}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = run(&["arena", "random", "greedy", "--games", "2", "--device", "cpu"]);
    assert!(out.contains("A = random, B = greedy"), "{out}");
    run(&["loop", "--config", "configs/tiny.toml", "--run", "run", "--generations", "1", "--device", "cpu"]);
    assert!(elsewhere.path().join("run/models/step-00000000.safetensors").is_file());
    // `gipf export` ran from a folder outside the checkout too (shared with front_ends).
    let exported = crate::common::exported();
    assert!(exported.stdout.contains("model.onnx (ONNX Runtime matches LibTorch within"), "{}", exported.stdout);
    assert_eq!(std::fs::read_to_string(&exported.victim).unwrap(), "precious", "written through a planted link");
    for name in ["model.onnx", "model.pt"] {
        assert!(exported.dir.join(name).symlink_metadata().unwrap().is_file(), "{name} renamed into place");
    }
    let missing = gipf(&["arena", "random", "greedy", "--config", "configs/none.toml"]);
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read config configs/none.toml"));
}

/// The numbers after `key=` on the lines of `log` that contain `message`.
fn logged(log: &str, message: &str, key: &str) -> Vec<u64> {
    let field = |line: &str| line.split(key).nth(1)?.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok();
    log.lines().filter(|line| line.contains(message)).filter_map(field).collect()
}

/// SIGTERM (how Slurm and Kubernetes stop a job) stops the loop cleanly,
/// with the default `selfplay.shard_games`: every game the workers
/// finished is written, the trainer's steps are saved, and it exits with
/// success.
#[test]
fn sigterm_writes_the_finished_games_and_the_trainers_steps() {
    stop_the_loop(&["-TERM"]);
}

/// coreutils `timeout` signals the loop and then its process group: two
/// signals within a moment are one stop, not a second signal that ends the
/// process at once.
#[test]
fn two_signals_at_once_are_one_clean_stop() {
    stop_the_loop(&["-TERM", "-INT"]);
}

/// Runs the loop with workers for a while, sends it `signals` 0.2 s apart,
/// and checks that it stopped cleanly.
fn stop_the_loop(signals: &[&str]) {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let tiny = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/tiny.toml")).unwrap();
    let config = dir.path().join("workers.toml");
    std::fs::write(&config, tiny.replace("workers = 0\ngames_per_generation = 2\n", "workers = 2\n")).unwrap();
    let run = dir.path().join("run");
    let log_path = dir.path().join("log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_gipf"))
        .args(["loop", "--config", config.to_str().unwrap(), "--run", run.to_str().unwrap(), "--device", "cpu"])
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !run.join("models/step-00000000.safetensors").exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "no first checkpoint");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(10));
    for signal in signals {
        let kill = Command::new("kill").args([*signal, &child.id().to_string()]).status().unwrap();
        assert!(kill.success());
        std::thread::sleep(Duration::from_millis(200));
    }
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "still running a minute after SIGTERM");
        std::thread::sleep(Duration::from_millis(100));
    };
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(status.success(), "{status:?}: {log}");
    let finished = logged(&log, "self-play stopped: finished games written", "games=");
    assert_eq!(finished.len(), 2, "both workers stopped: {log}");
    let written = gipf::shards::read_all(&run.join("games")).unwrap().len() as u64;
    assert!(written > 0 && written == finished.iter().sum::<u64>(), "{written} games written, finished {finished:?}");
    let steps = logged(&log, "training stopped: its steps are saved", "step=");
    let newest = gipf::checkpoint::newest_checkpoint(&run.join("models")).unwrap().unwrap();
    assert_eq!(steps, [gipf::checkpoint::files::step_of(&newest).unwrap()], "{log}");
}

/// `gipf analyse` reviews a record with the reference model: a report, its
/// JSON (which reads back) and the value plot, a decision per action; a
/// record with an illegal action is refused with that decision's number.
#[test]
fn a_record_is_reviewed_and_an_illegal_action_refused_with_its_number() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("game.txt");
    std::fs::write(&record, "# a short game\nb1-b2 b6-b5\ni4-h5\n").unwrap();
    let out = dir.path().join("review");
    // A link planted under the plot's name is replaced, not written through.
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::create_dir(&out).unwrap();
    std::os::unix::fs::symlink(&victim, out.join("review.png")).unwrap();
    let args = ["analyse", record.to_str().unwrap(), "--sims", "8", "--device", "cpu", "--out", out.to_str().unwrap()];
    let done = gipf(&args);
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "written through a planted link");
    let review: gipf::review::Review =
        serde_json::from_str(&std::fs::read_to_string(out.join("review.json")).unwrap()).unwrap();
    let played: Vec<&str> = review.decisions.iter().map(|d| d.played.as_str()).collect();
    assert_eq!(played, ["b1-b2", "b6-b5", "i4-h5"]);
    assert!(review.decisions.iter().all(|d| d.loss >= 0.0 && (-1.0..=1.0).contains(&d.before)));
    assert!(std::fs::read(out.join("review.png")).unwrap().starts_with(b"\x89PNG"));
    assert!(String::from_utf8_lossy(&done.stdout).contains("3 decisions, 8 simulations each"));

    std::fs::write(&record, "b1-b2 b6-b5 b6-b5 i4-h5").unwrap();
    refused(&["analyse", record.to_str().unwrap(), "--sims", "8", "--device", "cpu"], "decision 3 (b6-b5)");
}

/// `gipf analyse` on a shard counts damaged lines in `--game`, and a
/// damaged game is refused with its line (line 1 garbage made `--game 0`
/// review line 2); `--sims 0` is refused as an argument.
#[test]
fn a_shards_damaged_lines_count_in_analyse() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/shard-format-2.jsonl.zst");
    let text = zstd::decode_all(&std::fs::read(fixture).unwrap()[..]).unwrap();
    let damaged = [&b"garbage\n"[..], &text].concat();
    let shard = dir.path().join("shard-1764600000000-w-000000.jsonl.zst");
    std::fs::write(&shard, zstd::encode_all(&damaged[..], 1).unwrap()).unwrap();
    let args = |game: &str, sims: &str| {
        let out = dir.path().join(format!("review-{game}-{sims}"));
        [shard.to_str().unwrap(), "--game", game, "--sims", sims, "--device", "cpu", "--out", out.to_str().unwrap()]
            .map(String::from)
    };
    let run = |game: &str, sims: &str| {
        let args = args(game, sims);
        gipf(&[&["analyse"][..], &args.iter().map(String::as_str).collect::<Vec<_>>()].concat())
    };
    let first = run("0", "4");
    let err = String::from_utf8_lossy(&first.stderr);
    assert!(!first.status.success() && err.contains("game 0 (line 1) is refused"), "{err}");
    let second = run("1", "4");
    assert!(second.status.success(), "{}", String::from_utf8_lossy(&second.stderr));
    let no_sims = run("1", "0");
    let err = String::from_utf8_lossy(&no_sims.stderr);
    assert!(!no_sims.status.success() && err.contains("--sims") && !err.contains("panicked"), "{err}");
}

/// A models folder whose best.json names an older checkpoint than its
/// newest says which one it plays.
#[test]
fn a_models_folder_says_when_it_plays_its_best_not_its_newest() {
    let dir = tempfile::tempdir().unwrap();
    let config =
        gipf::config::Config::load(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/tiny.toml")));
    let mut trainer = gipf::train::Trainer::new(&config.unwrap(), tch::Device::Cpu, 1);
    let models = dir.path().join("models");
    let first = trainer.save(&models).unwrap();
    trainer.step = 5;
    trainer.save(&models).unwrap();
    gipf::checkpoint::set_best_checkpoint(&models, &first).unwrap();
    let player = format!("{}@4", models.display());
    let out = gipf(&["arena", &player, "random", "--games", "2", "--device", "cpu", "--config", "configs/tiny.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("step-00000000.safetensors, which its best.json names") && err.contains("step-00000005"),
        "{err}"
    );
}

/// A match whose output goes to a file (a gate in a log) says how it
/// stands every 10 games, since the progress bar shows only on a terminal.
#[test]
fn a_match_logged_to_a_file_reports_its_progress() {
    let out = gipf(&["arena", "random", "greedy", "--games", "20", "--device", "cpu"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for games in ["10/20 games: A", "20/20 games: A"] {
        assert!(stderr.contains(games), "{games:?} in {stderr:?}");
    }
}

/// Without ONNX Runtime's library, `play.backend = "auto"` warns once and
/// plays on LibTorch; a player that asks for ONNX Runtime by name is
/// refused with the reason.
#[test]
fn without_onnx_runtime_auto_plays_on_libtorch_and_asking_for_it_is_refused() {
    let run = |player: &str| {
        Command::new(env!("CARGO_BIN_EXE_gipf"))
            .args(["arena", player, "random", "--games", "2", "--device", "cpu", "--config", "configs/tiny.toml"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("GIPF_ONNXRUNTIME", "/nonexistent/libonnxruntime.so")
            .output()
            .unwrap()
    };
    let auto = run("reference@4,fp32");
    let stderr = String::from_utf8_lossy(&auto.stderr);
    assert!(auto.status.success(), "{stderr}");
    let warning = "no ONNX Runtime library at /nonexistent/libonnxruntime.so";
    assert!(stderr.contains(warning) && stderr.contains("forward passes on LibTorch"), "{stderr}");
    assert_eq!(stderr.matches(warning).count(), 1, "warned once: {stderr}");
    let asked = run("reference@4,onnxruntime");
    let stderr = String::from_utf8_lossy(&asked.stderr);
    assert!(!asked.status.success() && stderr.contains(warning) && !stderr.contains("panicked"), "{stderr}");
}
