//! Faults injected into the training loop (`gipf loop` on the tiny config,
//! one game a shard, every checkpoint kept): killed with SIGKILL at random
//! moments and restarted, a newest checkpoint cut to nothing, a game file of
//! garbage. `FAULT_KILLS` sets the number of kills (3 here;
//! `scripts/faults.sh` makes 50 and adds a full disk and a read-only folder).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The tiny config, one game a shard and every checkpoint kept, in `dir`.
fn config(dir: &Path) -> PathBuf {
    let tiny = std::fs::read_to_string(Path::new(ROOT).join("configs/tiny.toml")).unwrap();
    let text = tiny
        .replace("[train]", "shard_games = 1\n\n[train]")
        .replace("keep_last = 3", "keep_last = 0")
        .replace("keep_every_steps = 20", "keep_every_steps = 0");
    let path = dir.join("tiny.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn gipf_loop(config: &Path, run: &Path, log: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gipf"));
    command
        .args(["loop", "--config", config.to_str().unwrap(), "--run", run.to_str().unwrap(), "--device", "cpu"])
        .stdout(Stdio::null())
        .stderr(std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap());
    command
}

/// The visible files of a folder.
fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// The complete checkpoints (weights present: they are written last) and
/// the shards, each checked to load or read whole.
fn snapshot(run: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let checkpoints: BTreeSet<String> =
        names(&run.join("models")).into_iter().filter(|n| n.ends_with(".safetensors")).collect();
    for name in &checkpoints {
        let weights = run.join("models").join(name);
        gipf::checkpoint::load_checkpoint(&weights, tch::Device::Cpu).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert!(weights.with_extension("optim").is_file(), "{name}: its optimizer state");
    }
    let files = gipf::shards::list(&run.join("games")).unwrap_or_default();
    for file in &files {
        let read = gipf::shards::read(file).unwrap_or_else(|e| panic!("{}: {e:#}", file.name));
        assert!(read.bad.is_empty() && read.games.len() == 1, "{}: {:?}", file.name, read.bad);
    }
    (checkpoints, files.into_iter().map(|f| f.name).collect())
}

/// The step of the newest checkpoint (`step-00000123.safetensors`), if any.
fn newest_step(checkpoints: &BTreeSet<String>) -> Option<u64> {
    let step = |n: &String| n.strip_prefix("step-")?.strip_suffix(".safetensors")?.parse().ok();
    checkpoints.iter().filter_map(step).max()
}

#[test]
fn the_loop_survives_kill_9_at_random_moments() {
    let kills: usize = std::env::var("FAULT_KILLS").ok().and_then(|n| n.parse().ok()).unwrap_or(3);
    let dir = tempfile::tempdir().unwrap();
    let (config, run, log) = (config(dir.path()), dir.path().join("run"), dir.path().join("loop.log"));
    let mut rng = SmallRng::seed_from_u64(23);
    let (mut checkpoints, mut shards) = (BTreeSet::new(), BTreeSet::new());
    for kill in 0..kills {
        let mut child = gipf_loop(&config, &run, &log).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(rng.random_range(300..4000)));
        child.kill().unwrap();
        child.wait().unwrap();
        let (now_checkpoints, now_shards) = snapshot(&run);
        let lost: Vec<_> = checkpoints.difference(&now_checkpoints).collect();
        assert!(lost.is_empty(), "kill {kill}: checkpoints lost {lost:?}");
        let lost: Vec<_> = shards.difference(&now_shards).collect();
        assert!(lost.is_empty(), "kill {kill}: shards lost {lost:?}");
        (checkpoints, shards) = (now_checkpoints, now_shards);
    }
    let status = gipf_loop(&config, &run, &log).args(["--generations", "1"]).status().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(status.success() && !text.contains("panicked"), "{text}");
    let (final_checkpoints, final_shards) = snapshot(&run);
    let set_aside = std::fs::read_dir(run.join("models"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with(".damaged-"));
    assert_eq!(set_aside.count(), 0, "no checkpoint was damaged");
    let (before, after) = (newest_step(&checkpoints), newest_step(&final_checkpoints));
    assert!(after > before, "training went on: newest step {after:?}, {before:?} before the last run");
    println!(
        "{kills} kills survived: {} checkpoints and {} games kept, none lost or damaged",
        final_checkpoints.len(),
        final_shards.len()
    );
}

/// A newest checkpoint cut to nothing and a game file of garbage, between
/// two runs of the loop: both named in a warning, the loop goes on from the
/// checkpoint before.
#[test]
fn a_damaged_checkpoint_and_a_garbage_game_file_are_passed_over() {
    let dir = tempfile::tempdir().unwrap();
    let (config, run, log) = (config(dir.path()), dir.path().join("run"), dir.path().join("loop.log"));
    assert!(gipf_loop(&config, &run, &log).args(["--generations", "2"]).status().unwrap().success());
    let models = run.join("models");
    let newest = gipf::checkpoint::newest_checkpoint(&models).unwrap().unwrap();
    std::fs::write(&newest, b"").unwrap();
    let garbage = "shard-9999999999999-junk-000000.jsonl.zst";
    std::fs::write(run.join("games").join(garbage), b"\x28\xb5\x2f\xfd not what it says").unwrap();
    assert!(gipf_loop(&config, &run, &log).args(["--generations", "1"]).status().unwrap().success());
    let text = std::fs::read_to_string(&log).unwrap();
    let name = newest.file_name().unwrap().to_string_lossy().into_owned();
    assert!(text.lines().any(|l| l.contains("WARN") && l.contains(&name) && l.contains("set aside")), "{text}");
    assert!(text.lines().any(|l| l.contains("WARN") && l.contains(garbage)), "{text}");
    assert!(models.join(format!(".damaged-{name}")).is_file());
}

/// Runs a command that must succeed (mounting, as root).
fn sh(command: &str) {
    let status = Command::new("sh").args(["-c", command]).status().unwrap();
    assert!(status.success(), "{command} failed (the mount tests need root)");
}

/// A run folder on a small tmpfs that fills up: a clear error, no partial
/// file visible, and the loop resumes once space is freed. Mounts a tmpfs,
/// so it needs root: `scripts/faults.sh` runs it.
#[test]
#[ignore = "mounts a tmpfs (root): scripts/faults.sh"]
fn a_full_disk_is_a_clear_error_and_the_loop_resumes_after() {
    let dir = tempfile::tempdir().unwrap();
    let (config, log) = (config(dir.path()), dir.path().join("loop.log"));
    let mount = dir.path().join("small");
    std::fs::create_dir(&mount).unwrap();
    sh(&format!("mount -t tmpfs -o size=2m tmpfs {}", mount.display()));
    let run = mount.join("run");
    let out = gipf_loop(&config, &run, &log).args(["--generations", "10000"]).status().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    let last = text.lines().last().unwrap_or_default().to_string();
    assert!(!out.success() && !text.contains("panicked"), "{text}");
    assert!(last.contains("No space left on device") && last.contains(&run.display().to_string()), "{last}");
    let (checkpoints, shards) = snapshot(&run);
    let hidden: Vec<String> = ["models", "games"]
        .iter()
        .flat_map(|d| std::fs::read_dir(run.join(d)).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "temporaries left: {hidden:?}");
    sh(&format!("mount -o remount,size=64m {}", mount.display()));
    let resumed = gipf_loop(&config, &run, &log).args(["--generations", "1"]).status().unwrap();
    let (after, _) = snapshot(&run);
    sh(&format!("umount {}", mount.display()));
    assert!(resumed.success(), "{}", std::fs::read_to_string(&log).unwrap());
    assert!(after.len() > checkpoints.len(), "training went on after space was freed");
    println!("full disk: {last}; {} checkpoints and {} shards whole", checkpoints.len(), shards.len());
}

/// A read-only run folder: a clear error naming it, nothing changed.
/// Remounts a folder read-only, so it needs root: `scripts/faults.sh` runs it.
#[test]
#[ignore = "remounts a folder read-only (root): scripts/faults.sh"]
fn a_read_only_run_folder_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (config, run, log) = (config(dir.path()), dir.path().join("run"), dir.path().join("loop.log"));
    assert!(gipf_loop(&config, &run, &log).args(["--generations", "1"]).status().unwrap().success());
    let before = snapshot(&run);
    sh(&format!("mount --bind {0} {0} && mount -o remount,ro,bind {0}", run.display()));
    let out = gipf_loop(&config, &run, &log).args(["--generations", "1"]).status().unwrap();
    let after = snapshot(&run);
    sh(&format!("umount {}", run.display()));
    let text = std::fs::read_to_string(&log).unwrap();
    let last = text.lines().last().unwrap_or_default().to_string();
    assert!(!out.success() && !text.contains("panicked"), "{text}");
    assert!(last.contains("Read-only file system") && last.contains(&run.display().to_string()), "{last}");
    assert_eq!(before, after, "nothing changed");
    println!("read-only folder: {last}");
}

/// A run whose trainer has not trained yet (only its step-0 checkpoint)
/// restarted on a full disk: the start fails with a clear error, but the
/// checkpoint that was there stays, and once space is freed the run starts
/// again. Runs in a mount namespace of its own (`unshare`), on an 8 MB tmpfs
/// filled before the start.
#[test]
fn a_full_disk_at_restart_leaves_the_checkpoint_there() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let tiny = gipf::config::Config::load(&config).unwrap();
    let run = dir.path().join("run");
    gipf::train::Trainer::new(&tiny, tch::Device::Cpu, 1).save(&run.join("models")).unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let gipf_loop = |log: &str| {
        format!(
            "s=0; {} loop --config {} --run {}/run --device cpu --generations 1 2>{}/{log} || s=$?; echo $s >{}/{log}.status",
            env!("CARGO_BIN_EXE_gipf"),
            config.display(),
            small.display(),
            dir.path().display(),
            dir.path().display()
        )
    };
    let script = format!(
        "set -e; mount -t tmpfs -o size=8m tmpfs {small}; cp -a {run} {small}/run; \
         dd if=/dev/zero of={small}/fill bs=4k 2>/dev/null || true; {full}; rm {small}/fill; {freed}; \
         ls -a {small}/run/models >{out}/models-after",
        small = small.display(),
        run = run.display(),
        out = dir.path().display(),
        full = gipf_loop("full.log"),
        freed = gipf_loop("freed.log"),
    );
    let status = Command::new("unshare").args(["-r", "-m", "sh", "-c", &script]).status().unwrap();
    assert!(status.success(), "unshare -r -m (a mount namespace) failed: {status:?}");
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let full = read("full.log");
    assert_ne!(read("full.log.status").trim(), "0", "{full}");
    assert!(
        full.contains("No space left on device") && !full.contains("panicked"),
        "{}: {full}",
        read("full.log.status")
    );
    let freed = read("freed.log");
    assert_eq!(read("freed.log.status").trim(), "0", "the run starts again once space is freed: {freed}");
    assert!(read("models-after").contains("step-00000000.json"), "{}", read("models-after"));
}

/// The number in the environment variable `name`, else `default`.
fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|n| n.parse().ok()).unwrap_or(default)
}

/// Asserts that every checkpoint and shard of `before` is in `after`.
fn nothing_lost(before: &(BTreeSet<String>, BTreeSet<String>), after: &(BTreeSet<String>, BTreeSet<String>), at: &str) {
    let lost: Vec<_> = before.0.difference(&after.0).chain(before.1.difference(&after.1)).collect();
    assert!(lost.is_empty(), "{at}: lost {lost:?}");
}

/// The disk fills at a random point of the loop's writes (a shard, a
/// checkpoint's parts, the logs): `FAULT_FILLS` times (2 here;
/// `scripts/faults.sh` makes 30), the run is copied onto a 64 MB tmpfs in a
/// mount namespace of its own, filled to leave 0 to 400 kB, run until it
/// fails, the filler removed and the run started again: it must go on, and
/// no finished checkpoint or game be lost.
#[test]
fn a_disk_filling_at_any_write_loses_nothing_finished() {
    let fills = env_count("FAULT_FILLS", 2);
    let dir = tempfile::tempdir().unwrap();
    let (config, run) = (config(dir.path()), dir.path().join("run"));
    assert!(gipf_loop(&config, &run, &dir.path().join("first.log"))
        .args(["--generations", "1"])
        .status()
        .unwrap()
        .success());
    let mut rng = SmallRng::seed_from_u64(29);
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let (mut failed, mut before) = (0, snapshot(&run));
    let mut writes = std::collections::BTreeMap::new();
    for fill in 0..fills {
        let free_kb = rng.random_range(0..400);
        let gipf = |generations: u32, log: &str| {
            format!(
                "s=0; {} loop --config {} --run {}/run --device cpu --generations {generations} 2>>{} || s=$?; echo $s",
                env!("CARGO_BIN_EXE_gipf"),
                config.display(),
                small.display(),
                dir.path().join(log).display()
            )
        };
        let script = format!(
            "set -e; mount -t tmpfs -o size=64m tmpfs {small}; cp -a {run} {small}/run; \
             avail=$(df --output=avail -k {small} | tail -1); \
             dd if=/dev/zero of={small}/fill bs=1k count=$((avail - {free_kb})) 2>/dev/null || true; \
             {full} >{out}/full.status; rm {small}/fill; {freed} >{out}/freed.status; \
             rm -rf {run}; cp -a {small}/run {run}",
            small = small.display(),
            run = run.display(),
            out = dir.path().display(),
            full = gipf(3, "full.log"),
            freed = gipf(1, "freed.log"),
        );
        let status = Command::new("unshare").args(["-r", "-m", "sh", "-c", &script]).status().unwrap();
        assert!(status.success(), "fill {fill}: unshare -r -m (a mount namespace) failed: {status:?}");
        let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
        if read("full.status").trim() != "0" {
            failed += 1;
            let error = read("full.log").lines().last().unwrap_or_default().to_string();
            let kind =
                ["shard", ".optim", ".json", ".safetensors", "tfevents", "logs"].iter().find(|k| error.contains(*k));
            *writes.entry(kind.copied().unwrap_or("other")).or_insert(0) += 1;
        }
        let tail = |log: &str| read(log).lines().rev().take(12).collect::<Vec<_>>().join("\n");
        assert_eq!(read("freed.status").trim(), "0", "fill {fill} ({free_kb} kB free): {}", tail("freed.log"));
        let after = snapshot(&run);
        nothing_lost(&before, &after, &format!("fill {fill} ({free_kb} kB free)"));
        before = after;
    }
    let logs = read_logs(dir.path(), &["full.log", "freed.log"]);
    assert!(!logs.contains("panicked"), "{logs}");
    println!(
        "full disk at random writes: {fills} fills, {failed} stopped the loop with an error (the write that failed: \
         {writes:?}), the run started again each time, nothing finished lost"
    );
}

fn read_logs(dir: &Path, names: &[&str]) -> String {
    names.iter().map(|n| std::fs::read_to_string(dir.join(n)).unwrap_or_default()).collect()
}

/// coreutils `timeout` stops the loop (the signal to it, then to its
/// process group) at a random moment, `FAULT_TIMEOUTS` times (2 here;
/// `scripts/faults.sh` makes 30): each time it saves and exits 0, and no
/// finished checkpoint or game is lost.
#[test]
fn the_loop_stopped_by_timeout_saves_and_loses_nothing() {
    let stops = env_count("FAULT_TIMEOUTS", 2);
    let dir = tempfile::tempdir().unwrap();
    let (config, run, log) = (config(dir.path()), dir.path().join("run"), dir.path().join("loop.log"));
    let mut rng = SmallRng::seed_from_u64(31);
    let mut before = (BTreeSet::new(), BTreeSet::new());
    for stop in 0..stops {
        let seconds = format!("{:.1}", rng.random_range(1.0..6.0));
        let command = gipf_loop(&config, &run, &log);
        let program = command.get_program().to_owned();
        let args: Vec<_> = command.get_args().map(|a| a.to_owned()).collect();
        let status = Command::new("timeout")
            .args(["--preserve-status", "-s", "TERM", &seconds])
            .arg(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(std::fs::OpenOptions::new().append(true).create(true).open(&log).unwrap())
            .status()
            .unwrap();
        assert!(
            status.success(),
            "stop {stop} after {seconds} s: {status:?}\n{}",
            std::fs::read_to_string(&log).unwrap()
        );
        let after = snapshot(&run);
        nothing_lost(&before, &after, &format!("stop {stop}"));
        before = after;
    }
    println!(
        "timeout: {stops} stops, each saved and exited 0, {} checkpoints and {} games kept",
        before.0.len(),
        before.1.len()
    );
}
