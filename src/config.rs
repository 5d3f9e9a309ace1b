//! Configuration files (TOML), a table for each layer, read by that layer:
//! the game learned, the network's shape, how processes that play run their
//! forward passes, the search, self-play, training and the loop. A key a
//! file leaves out takes its value from the shipped CPU configuration
//! (`configs/cpu.toml`, what a newcomer runs); unknown keys are errors, and
//! every number is checked against its range.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::bounds::{check_positive, check_range, check_range_to_key, check_unit, check_up_to};
use crate::net::{NetConfig, Precision};
use crate::rules::Variant;
use crate::search::SearchConfig;
pub use gipf_core::selfplay::SelfplayConfig;

/// The game learned: read by self-play, the trainer (which labels its
/// checkpoints with the variant) and the arena.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameConfig {
    /// The variant learned: `basic`, `standard` or `tournament` (docs/rules.md).
    pub variant: Variant,
    /// A game reaching this many actions ends and is scored as a draw.
    pub max_actions: u32,
}

/// How a process that plays with the network runs its forward passes:
/// self-play, the arena, the engine and `gipf analyse`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayConfig {
    /// The number format of the forward passes (`auto`: bf16 where the
    /// device computes in it, else fp32).
    pub precision: Precision,
    /// The library of the forward passes: `auto` (ONNX Runtime for fp32 on
    /// a CPU where its library loads, else LibTorch), `libtorch` or
    /// `onnxruntime` (fp32 on the CPU only).
    pub backend: crate::net::Backend,
    /// LibTorch's intra-op threads, and ONNX Runtime's (1 is best on small
    /// CPUs).
    pub torch_threads: i32,
}

impl PlayConfig {
    /// The precision and backend of the forward passes.
    pub fn inference(&self) -> crate::net::Inference {
        crate::net::Inference { precision: self.precision, backend: self.backend }
    }
}

impl TrainConfig {
    /// How a game becomes training samples.
    pub fn targets(&self) -> crate::samples::Targets {
        crate::samples::Targets {
            every_position: self.value_every_position,
            root_value_share: self.root_value_share as f32,
            root_value_lambda: self.root_value_lambda as f32,
        }
    }
}

/// Warns when `asked` threads exceed this machine's cores: they would take
/// turns, each slower (called where the threads start).
pub fn warn_if_past_the_cores(what: &str, asked: usize) {
    if let Some(warning) = past_the_cores(what, asked, cores()) {
        tracing::warn!("{warning}");
    }
}

/// This machine's cores (as its scheduler grants them to the process: its
/// CPU affinity and cgroup quota, as Slurm and Kubernetes set them).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn past_the_cores(what: &str, asked: usize, cores: usize) -> Option<String> {
    (asked > cores).then(|| format!("{what} asks for {asked} threads on {cores} cores: they will take turns"))
}

impl Config {
    /// What each process of a run asks of `cores`, for [`crate::layout::plan`].
    pub fn budget(&self, cores: usize) -> crate::layout::Budget {
        crate::layout::Budget {
            cores,
            trainer_threads: self.train.torch_threads.max(1) as usize,
            play_threads: self.play.torch_threads.max(1) as usize,
            workers_per_device: self.main_loop.workers,
            search_threads: self.selfplay.search_threads,
        }
    }

    /// Self-play's search threads: `selfplay.search_threads`, or when 0 the
    /// cores left beside LibTorch's threads (idle threads spinning beside
    /// the forward pass slow it down on a small machine).
    pub fn search_threads(&self) -> usize {
        match self.selfplay.search_threads {
            0 => cores().saturating_sub(self.play.torch_threads.max(1) as usize).max(1),
            n => n,
        }
    }
}

/// Training settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainConfig {
    /// LibTorch intra-op threads of training.
    pub torch_threads: i32,
    /// The number format of training steps: `bf16` (or `auto` where the
    /// device computes in it) steps a bf16 copy and keeps the weights in
    /// fp32; `fp16` trains in fp32 (it would need loss scaling).
    pub precision: Precision,
    /// Samples in each training step's minibatch.
    pub batch_size: usize,
    /// The learning rate of SGD with momentum, before any drop.
    pub learning_rate: f64,
    /// The rate is multiplied by `lr_drop_factor` every this many steps (0: never).
    pub lr_drop_every: u64,
    /// What each drop multiplies the learning rate by.
    pub lr_drop_factor: f64,
    /// The rate is multiplied by `lr_drop_factor` once more when the run has
    /// trained this many hours, counted across restarts (0: never; a drop
    /// late in a timed run).
    pub lr_drop_after_hours: f64,
    /// A run started from a smaller network (`gipf loop --from`: fewer
    /// blocks, channels or value hidden units, the same options) grows it
    /// to `[network]`'s shape, its function kept (see `net::grow`);
    /// without it another shape is an error.
    pub grow_network: bool,
    /// SGD's momentum.
    pub momentum: f64,
    /// L2 weight decay of SGD.
    pub weight_decay: f64,
    /// The value loss's weight against the policy loss's 1.
    pub value_loss_weight: f64,
    /// Every position of a game is a value target (the game's result), not
    /// only the fully searched ones, which alone carry a policy target.
    pub value_every_position: bool,
    /// The share of the search's root value in the value target of a fully
    /// searched position (the rest is the game's result; 0: the result
    /// alone).
    pub root_value_share: f64,
    /// λ of the root value's return over the later searched positions of
    /// the game (KataGo's short-term value targets; 0: the position's own
    /// root value, 1: the game's result).
    pub root_value_lambda: f64,
    /// The weight of the auxiliary targets' loss (with
    /// `network.aux_targets`; see `samples::AUX_TARGETS`).
    pub aux_loss_weight: f64,
    /// The published weights (each checkpoint's `.safetensors`, which
    /// self-play, the arena and exports read) are an exponential moving
    /// average of the trained weights with this half-life in steps, at most
    /// a quarter of the steps so far; 0 publishes the trained weights.
    pub average_half_life: u64,
    /// The window of recent samples grows with the run, a `window_fraction`
    /// of all samples seen: its smallest size, in samples.
    pub window_min: usize,
    /// The window's largest size, in samples.
    pub window_max: usize,
    /// The window's share of all samples seen.
    pub window_fraction: f64,
    /// Training waits for this many samples before its first step.
    pub min_samples: usize,
    /// A generation: this many training steps, then a checkpoint (published
    /// to a run's object store at most once a generation).
    pub steps_per_generation: u64,
    /// Pacing: training draws at most this many samples per sample read from
    /// self-play (KataGo's bound is 4 to 8); past it the trainer waits for
    /// new games.
    pub max_reuse: f64,
    /// Retention: the newest `keep_last` checkpoints are kept, and of the
    /// older ones the first of every `keep_every_steps` steps (and the best
    /// one under gating); `keep_last = 0` keeps every checkpoint.
    pub keep_last: usize,
    /// Of the checkpoints older than the newest `keep_last`, the first of
    /// every this many steps is kept (0: none of them).
    pub keep_every_steps: u64,
}

/// What `gipf loop` alone reads: how its self-play runs beside its trainer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopConfig {
    /// The devices of the run (`gipf loop --devices` overrides it): `auto`
    /// (every GPU LibTorch sees, else the CPU), `all` (every GPU), or a list
    /// such as `cuda:0,cuda:2` or `cpu`. The trainer runs on the first, self-play
    /// workers on each (see `layout::plan`).
    pub devices: String,
    /// Self-play workers on each device, beside the trainer: threads that
    /// each play `selfplay.parallel_games` games with the newest checkpoint
    /// while the trainer trains on what they wrote, paced by
    /// `train.max_reuse`; they divide the cores the trainer leaves. Two on a
    /// GPU keep it busy (one's batch runs while the other's is gathered).
    /// 0: generations in turn on the first device, `games_per_generation`
    /// games of self-play and then a generation's training (required with
    /// `[gate]`).
    pub workers: usize,
    /// Games of self-play of each generation in turn; only with `workers = 0`.
    pub games_per_generation: Option<u64>,
}

/// Gating (optional): each new checkpoint of the loop plays the best one so
/// far, and self-play moves to it only when it scores `threshold` or more.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// Games of each gating match, in pairs with the colours swapped.
    pub games: u32,
    /// Simulations per action of both checkpoints.
    pub simulations: u32,
    /// The new checkpoint's score needed to replace the best one.
    pub threshold: f64,
    /// Random actions opening each pair of games.
    pub opening_actions: u32,
}

/// A whole configuration file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[game]`: the variant learned and the game's length cap.
    pub game: GameConfig,
    /// `[network]`: the network's shape.
    pub network: NetConfig,
    /// `[play]`: how a process that plays runs its forward passes.
    pub play: PlayConfig,
    /// `[search]`: the tree search's settings.
    pub search: SearchConfig,
    /// `[selfplay]`: how self-play plays and records its games.
    pub selfplay: SelfplayConfig,
    /// `[train]`: training.
    pub train: TrainConfig,
    /// `[loop]`: how `gipf loop` runs self-play beside its trainer.
    #[serde(rename = "loop")]
    pub main_loop: LoopConfig,
    /// `[gate]`: gating; none without the table, and the loop does not gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateConfig>,
}

/// The value of every key a configuration leaves out: the shipped CPU
/// configuration.
pub const DEFAULTS: &str = include_str!("../configs/cpu.toml");

/// Keys that moved to another table: (table, key, where it is now).
const MOVED: [(&str, &str, &str); 6] = [
    ("selfplay", "workers", "loop.workers"),
    ("train", "games_per_generation", "loop.games_per_generation"),
    ("selfplay", "variant", "game.variant"),
    ("selfplay", "max_actions", "game.max_actions"),
    ("selfplay", "torch_threads", "play.torch_threads"),
    ("network", "precision", "play.precision (forward passes) and train.precision (training steps)"),
];

/// Puts `over`'s keys into `base`, table by table.
fn overlay(base: &mut toml::Table, over: toml::Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(base)), toml::Value::Table(over)) => overlay(base, over),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// The configurations of `configs/`, built in.
const SHIPPED: [(&str, &str); 3] = [
    ("cpu.toml", DEFAULTS),
    ("gpu.toml", include_str!("../configs/gpu.toml")),
    ("tiny.toml", include_str!("../configs/tiny.toml")),
];

/// The shipped configuration for a machine whose LibTorch sees `cuda_count`
/// GPUs, and why: `configs/gpu.toml` on every GPU, else `configs/cpu.toml`.
pub fn shipped_for(cuda_count: usize) -> (&'static Path, String) {
    match cuda_count {
        0 => (
            Path::new("configs/cpu.toml"),
            "LibTorch sees no CUDA device (a CPU build, or no driver or GPU)".to_string(),
        ),
        n => (Path::new("configs/gpu.toml"), format!("LibTorch sees {n} CUDA device{}", if n == 1 { "" } else { "s" })),
    }
}

impl Config {
    /// Reads and checks a configuration file. A shipped one named as in the
    /// checkout (`configs/cpu.toml`) that is not there, as when a binary runs
    /// from another folder, is the copy built into the program.
    pub fn load(path: &Path) -> Result<Config> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => match SHIPPED.iter().find(|(name, _)| path == Path::new("configs").join(name)) {
                Some((_, text)) if e.kind() == std::io::ErrorKind::NotFound => text.to_string(),
                _ => return Err(e).with_context(|| format!("cannot read config {}", path.display())),
            },
        };
        Config::parse(&text).with_context(|| format!("config {}", path.display()))
    }

    /// Parses a configuration, every key it leaves out taken from
    /// [`DEFAULTS`]; a key that moved is an error naming its new place.
    pub fn parse(text: &str) -> Result<Config> {
        let table: toml::Table = text.parse()?;
        for (section, key, now) in MOVED {
            if table.get(section).and_then(|keys| keys.get(key)).is_some() {
                bail!("{section}.{key} is now {now} (see configs/cpu.toml)");
            }
        }
        let mut merged: toml::Table = DEFAULTS.parse().expect("the shipped CPU configuration parses");
        overlay(&mut merged, table);
        let config: Config = merged.try_into()?;
        config.validate()?;
        Ok(config)
    }

    /// Checks every key against its range, the keys that depend on each other,
    /// and that the window fits in this machine's memory; an error names the key.
    pub fn validate(&self) -> Result<()> {
        self.network.validate()?;
        check_range("game.max_actions", self.game.max_actions as i64, 10, 100_000)?;
        check_range("play.torch_threads", self.play.torch_threads as i64, 1, 256)?;
        self.search.validate()?;
        self.selfplay.validate()?;
        let t = &self.train;
        check_range("train.torch_threads", t.torch_threads as i64, 1, 256)?;
        check_range("train.batch_size", t.batch_size as i64, 1, 65_536)?;
        check_positive("train.learning_rate", t.learning_rate, 10.0)?;
        check_range("train.lr_drop_every", t.lr_drop_every as i64, 0, i64::MAX)?;
        check_positive("train.lr_drop_factor", t.lr_drop_factor, 1.0)?;
        check_up_to("train.lr_drop_after_hours", t.lr_drop_after_hours, 100_000.0)?;
        check_unit("train.momentum", t.momentum)?;
        check_unit("train.weight_decay", t.weight_decay)?;
        check_positive("train.value_loss_weight", t.value_loss_weight, 100.0)?;
        check_unit("train.root_value_share", t.root_value_share)?;
        check_unit("train.root_value_lambda", t.root_value_lambda)?;
        check_up_to("train.aux_loss_weight", t.aux_loss_weight, 100.0)?;
        anyhow::ensure!(
            t.aux_loss_weight == 0.0 || self.network.aux_targets,
            "train.aux_loss_weight = {} needs network.aux_targets = true",
            t.aux_loss_weight
        );
        check_range("train.average_half_life", t.average_half_life as i64, 0, i64::MAX)?;
        let window_max = t.window_max as i64;
        check_range_to_key("train.window_min", t.window_min as i64, 1, window_max, "train.window_max")?;
        check_range("train.window_max", t.window_max as i64, 1, 100_000_000)?;
        check_unit("train.window_fraction", t.window_fraction)?;
        check_range_to_key("train.min_samples", t.min_samples as i64, 1, window_max, "train.window_max")?;
        check_range("train.steps_per_generation", t.steps_per_generation as i64, 1, 10_000_000)?;
        check_positive("train.max_reuse", t.max_reuse, 1000.0)?;
        check_range("train.keep_last", t.keep_last as i64, 0, 1_000_000)?;
        check_range("train.keep_every_steps", t.keep_every_steps as i64, 0, i64::MAX)?;
        self.validate_loop()?;
        self.validate_products(memory_bytes())?;
        if let Some(g) = &self.gate {
            check_range("gate.games", g.games as i64, 2, 100_000)?;
            check_range("gate.simulations", g.simulations as i64, 2, 100_000)?;
            check_unit("gate.threshold", g.threshold)?;
            check_range("gate.opening_actions", g.opening_actions as i64, 0, 100)?;
        }
        Ok(())
    }

    /// The products of keys that size memory, each in range on its own:
    /// the leaves of one forward pass, and the window's samples against
    /// `memory` (this machine's, in bytes).
    fn validate_products(&self, memory: u64) -> Result<()> {
        self.selfplay.check_leaves(&self.search).map_err(anyhow::Error::msg)?;
        let window = self.train.window_max as u64 * WINDOW_SAMPLE_BYTES;
        anyhow::ensure!(
            window <= memory,
            "train.window_max = {} holds up to {:.1} GB of samples ({WINDOW_SAMPLE_BYTES} bytes each), more than this \
             machine's {:.1} GB of memory",
            self.train.window_max,
            window as f64 / 1e9,
            memory as f64 / 1e9
        );
        Ok(())
    }

    fn validate_loop(&self) -> Result<()> {
        let l = &self.main_loop;
        check_range("loop.workers", l.workers as i64, 0, 256)?;
        // The list's form; the GPUs named are checked where the run starts.
        crate::layout::check_devices_form(&l.devices).context("loop.devices")?;
        match (l.workers, l.games_per_generation) {
            (0, None) => bail!("loop.games_per_generation is needed with loop.workers = 0 (generations in turn)"),
            (0, Some(games)) => Ok(check_range("loop.games_per_generation", games as i64, 1, 1_000_000)?),
            (workers, Some(_)) => {
                bail!("loop.games_per_generation is used only with loop.workers = 0, not {workers}")
            }
            (workers, None) => {
                anyhow::ensure!(
                    self.gate.is_none(),
                    "loop.workers = {workers} cannot be used with [gate]: gating needs generations in turn (workers = 0)"
                );
                Ok(())
            }
        }
    }
}

pub use gipf_core::selfplay::MAX_LEAVES_PER_PASS;

/// What one sample takes in the training window, at most: its position and
/// a searched position's policy target.
pub const WINDOW_SAMPLE_BYTES: u64 = 512;

/// This machine's memory in bytes (`/proc/meminfo`), or no bound where it
/// cannot be read.
fn memory_bytes() -> u64 {
    let info = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let total = info.lines().find_map(|l| l.strip_prefix("MemTotal:"));
    let kb = total.and_then(|t| t.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kb.map_or(u64::MAX, |kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The main job's config follows what LibTorch sees: the GPU config on
    /// any GPU (every one of them: its `loop.devices` is `auto`), else the
    /// CPU config; both are shipped and parse.
    #[test]
    fn the_shipped_config_follows_the_gpus_seen() {
        let (cpu, why) = shipped_for(0);
        assert_eq!(cpu, Path::new("configs/cpu.toml"));
        assert!(why.contains("no CUDA device"), "{why}");
        for n in [1, 8] {
            let (gpu, why) = shipped_for(n);
            assert_eq!(gpu, Path::new("configs/gpu.toml"));
            assert!(why.contains(&format!("sees {n} CUDA device")), "{why}");
        }
        let gpu = Config::load(Path::new("configs/gpu.toml")).unwrap();
        assert_eq!(gpu.main_loop.devices, "auto");
        assert_eq!(gpu.main_loop.workers, 2, "two batches in flight a GPU");
        let eight = crate::layout::parse_devices(&gpu.main_loop.devices, 8).unwrap();
        assert_eq!(crate::layout::plan(&eight, gpu.budget(64)).unwrap().workers.len(), 16);
        assert!(Config::load(cpu).is_ok());
    }

    /// The core's default search settings, which the web board's engine
    /// uses, are configs/cpu.toml's.
    #[test]
    fn the_default_search_is_the_cpu_configs() {
        assert_eq!(Config::parse(DEFAULTS).unwrap().search, crate::search::SearchConfig::default());
        assert_eq!(Config::parse(DEFAULTS).unwrap().selfplay, SelfplayConfig::default());
    }

    /// Keys each in range whose products would allocate without bound are
    /// refused, naming the keys (4,096 games × 256 leaves ended in a
    /// LibTorch allocation panic after gigabytes).
    #[test]
    fn products_that_size_memory_are_bounded() {
        let config = Config::parse("[selfplay]\nparallel_games = 4096\n[search]\nbatch_size = 256").unwrap_err();
        let err = format!("{config:#}");
        assert!(err.contains("selfplay.parallel_games × search.batch_size = 4096 × 256"), "{err}");
        let big = Config::parse("[train]\nwindow_max = 10000000").unwrap();
        let err = format!("{:#}", big.validate_products(1 << 30).unwrap_err());
        assert!(err.contains("train.window_max = 10000000 holds up to 5.1 GB") && err.contains("1.1 GB"), "{err}");
        assert!(big.validate_products(8 << 30).is_ok());
    }

    #[test]
    fn threads_past_the_cores_are_named() {
        assert_eq!(past_the_cores("the trainer", 2, 2), None);
        let warning = past_the_cores("the trainer (train.torch_threads)", 4, 2).unwrap();
        assert!(warning.contains("train.torch_threads") && warning.contains("4 threads on 2 cores"), "{warning}");
    }

    fn shipped(name: &str) -> String {
        std::fs::read_to_string(format!("{}/configs/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    #[test]
    fn shipped_configs_are_valid() {
        for name in ["tiny.toml", "cpu.toml", "gpu.toml"] {
            Config::parse(&shipped(name)).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        }
    }

    #[test]
    fn unknown_keys_and_out_of_range_values_are_refused() {
        let tiny = shipped("tiny.toml");
        let typo = tiny.replace("\nsimulations =", "\nsimulatons =");
        let err = format!("{:#}", Config::parse(&typo).unwrap_err());
        assert!(err.contains("unknown field `simulatons`"), "{err}");
        let extra = format!("{tiny}\n[other]\nx = 1\n");
        assert!(format!("{:#}", Config::parse(&extra).unwrap_err()).contains("unknown field `other`"));
        let gate = format!("{tiny}\n[gate]\ngames = 4\nsimulations = 8\nthreshold = 1.5\nopening_actions = 2\n");
        assert!(format!("{:#}", Config::parse(&gate).unwrap_err()).contains("gate.threshold = 1.5"));
        let workers = tiny.replace("workers = 0\ngames_per_generation = 2\n", "workers = 2\n");
        let gated_workers =
            format!("{workers}\n[gate]\ngames = 4\nsimulations = 8\nthreshold = 0.55\nopening_actions = 2\n");
        let err = format!("{:#}", Config::parse(&gated_workers).unwrap_err());
        assert!(err.contains("loop.workers = 2 cannot be used with [gate]"), "{err}");
        let zero = tiny.replace("blocks = 1", "blocks = 0");
        assert!(format!("{:#}", Config::parse(&zero).unwrap_err()).contains("network.blocks = 0 is out of range"));
        let bad = tiny.replace("dirichlet_fraction = 0.25", "dirichlet_fraction = 1.5");
        assert!(format!("{:#}", Config::parse(&bad).unwrap_err()).contains("selfplay.dirichlet_fraction"));
        let negative = tiny.replace("virtual_loss = 1.0", "virtual_loss = -1.0");
        let err = format!("{:#}", Config::parse(&negative).unwrap_err());
        assert!(err.contains("search.virtual_loss = -1 is out of range 0..=10"), "{err}");
        let nan = tiny.replace("[selfplay]\n", "[selfplay]\nforced_playouts = nan\n");
        let err = format!("{:#}", Config::parse(&nan).unwrap_err());
        assert!(err.contains("selfplay.forced_playouts = NaN is out of range"), "{err}");
        let unused = tiny.replace("workers = 0\n", "workers = 2\n");
        let err = format!("{:#}", Config::parse(&unused).unwrap_err());
        assert!(err.contains("loop.games_per_generation is used only with loop.workers = 0"), "{err}");
        let missing = tiny.replace("games_per_generation = 2\n", "");
        let err = format!("{:#}", Config::parse(&missing).unwrap_err());
        assert!(err.contains("loop.games_per_generation is needed with loop.workers = 0"), "{err}");
        assert!(Config::load(Path::new("/no/such/config.toml"))
            .unwrap_err()
            .to_string()
            .contains("cannot read config"));
    }

    #[test]
    fn a_key_left_out_takes_the_shipped_cpu_value() {
        let cpu = Config::parse(DEFAULTS).unwrap();
        assert_eq!(Config::parse("").unwrap(), cpu);
        let one = Config::parse("[train]\nlearning_rate = 0.5\n").unwrap();
        assert_eq!(one.train.learning_rate, 0.5);
        assert_eq!(
            Config { train: TrainConfig { learning_rate: cpu.train.learning_rate, ..one.train.clone() }, ..one },
            cpu
        );
    }

    #[test]
    fn a_key_that_moved_is_an_error_naming_its_new_place() {
        for (old, new) in [
            ("[selfplay]\nworkers = 2\n", "selfplay.workers is now loop.workers"),
            ("[train]\ngames_per_generation = 40\n", "train.games_per_generation is now loop.games_per_generation"),
            ("[selfplay]\nvariant = \"basic\"\n", "selfplay.variant is now game.variant"),
            ("[network]\nprecision = \"bf16\"\n", "network.precision is now play.precision"),
        ] {
            let err = format!("{:#}", Config::parse(old).unwrap_err());
            assert!(err.contains(new), "{err}");
        }
    }

    #[test]
    fn the_precisions_are_read_and_a_checkpoint_does_not_record_them() {
        let shipped = Config::parse("").unwrap();
        assert_eq!((shipped.play.precision, shipped.train.precision), (Precision::Auto, Precision::Auto));
        let config = Config::parse("[play]\nprecision = \"bf16\"\n[train]\nprecision = \"fp16\"\n").unwrap();
        assert_eq!((config.play.precision, config.train.precision), (Precision::Bf16, Precision::Fp16));
        assert!(!serde_json::to_string(&config.network).unwrap().contains("precision"));
        assert!(Config::parse("[play]\nprecision = \"fp8\"\n").is_err());
    }

    /// The tables and keys of a configuration text.
    fn keys(text: &str) -> Vec<(String, String, toml::Value)> {
        let table: toml::Table = text.parse().unwrap();
        let mut keys = Vec::new();
        for (section, entries) in table {
            for (key, value) in entries.as_table().unwrap() {
                keys.push((section.clone(), key.clone(), value.clone()));
            }
        }
        keys
    }

    /// Values of the same type as `value`, different from it.
    fn others(value: &toml::Value) -> Vec<toml::Value> {
        use toml::Value::*;
        match value {
            Boolean(b) => vec![Boolean(!b)],
            Integer(i) => vec![Integer(i + 1), Integer(i - 1)],
            Float(f) => vec![Float(f * 0.5), Float(f + 0.5), Float(f + 0.01)],
            String(s) if s == "standard" => vec![String("basic".into())],
            String(s) if s == "fp32" => vec![String("bf16".into())],
            // A precision, a backend or a device list.
            String(s) if s == "auto" => vec![String("fp32".into()), String("libtorch".into()), String("cpu".into())],
            String(_) => vec![String("fp32".into())],
            other => panic!("no other value for {other}"),
        }
    }

    /// Every key of every shipped config is read: another value in its
    /// place (of its type) parses to another configuration.
    #[test]
    fn every_key_of_a_shipped_config_is_read() {
        for name in ["tiny.toml", "cpu.toml", "gpu.toml"] {
            let text = shipped(name);
            let config = Config::parse(&text).unwrap();
            let mut fixed = Vec::new();
            for (section, key, value) in keys(&text) {
                // A value out of its range, or one another key forbids, is refused: nothing to compare.
                let changed = others(&value).into_iter().filter(|other| *other != value).find_map(|other| {
                    let mut table: toml::Table = text.parse().unwrap();
                    table[&section].as_table_mut().unwrap().insert(key.clone(), other);
                    Config::parse(&toml::to_string(&table).unwrap()).ok()
                });
                match changed {
                    Some(changed) => assert_ne!(changed, config, "{name}: {section}.{key} changes nothing"),
                    None => fixed.push(format!("{section}.{key}")),
                }
            }
            // Held by another key: the auxiliary targets and their loss weight
            // go together, and no workers go with loop.games_per_generation.
            let held = ["network.aux_targets", "train.aux_loss_weight", "loop.workers"];
            assert!(fixed.iter().all(|k| held.contains(&k.as_str())), "{name}: {fixed:?} could take no other value");
        }
    }

    /// A machine's config states every key the CPU's tuning sets, so that
    /// none of it is inherited unseen: gpu.toml takes its own position on each.
    #[test]
    fn the_gpu_config_states_every_key() {
        let gpu: Vec<(String, String)> = keys(&shipped("gpu.toml")).into_iter().map(|(s, k, _)| (s, k)).collect();
        for (section, key, _) in keys(DEFAULTS) {
            assert!(gpu.contains(&(section.clone(), key.clone())), "gpu.toml leaves out {section}.{key}");
        }
    }
}
