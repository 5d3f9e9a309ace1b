//! The self-play generator: many games searched at once, their leaves
//! evaluated in network batches.
//!
//! The games are split into two groups whose work interleaves: while the
//! network runs one group's batch (on the calling thread), the search
//! threads do the other group's CPU work: back up its last batch's values
//! (priors from the logits of the legal actions), play where a search is
//! complete (visit-proportional for the first `temperature_actions` actions
//! of a PUCT search, full or cheap, else the search's best: the most
//! visited, or the Gumbel winner), start the next searches, gather up to
//! `search.batch_size` leaves a game and encode them. On a GPU the forward
//! pass is short and this CPU side decides the rate; overlapping the two
//! keeps both busy.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use tch::Device;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use crate::checkpoint::{load_checkpoint_or_older, model_name, ModelSource};
use crate::config::Config;
use crate::encoding::{encode, ENCODING_VERSION, INPUT_SIZE, NUM_ACTIONS};
use crate::games::{GameFile, GameResult, Sample, GAME_FORMAT};
use crate::net::Network;
use crate::rules::{Action, Position};
use crate::search::{Evaluation, Leaf, Tree};

/// A game being played.
struct Slot {
    tree: Tree,
    actions: Vec<Action>,
    samples: Vec<Sample>,
    /// Root visits the current search must reach.
    target: u32,
    /// Whether the current search is a full one (a policy target).
    full: bool,
    /// Whether the current search's root got its noise or its Gumbel candidates.
    root_prepared: bool,
    /// The game's seed, recorded with it.
    seed: u64,
    rng: SmallRng,
}

/// Counts since the generator started.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub games: u64,
    /// Actions played in all games, finished or not.
    pub actions: u64,
    /// Actions of the finished games.
    pub finished_actions: u64,
    pub evaluations: u64,
    pub batches: u64,
    /// Seconds the generator waited for the network's forward passes.
    pub evaluator_seconds: f64,
}

/// The network as self-play uses it: outputs for a batch of encoded
/// positions. The rest of an evaluation (encoding, priors) is self-play's
/// CPU work.
pub trait Forward {
    /// Policy logits (`n` rows of [`NUM_ACTIONS`]) and values (`n`) for `n`
    /// positions encoded as [`crate::encoding::encode`] writes them.
    fn forward(&mut self, input: &[f32], n: usize) -> (Vec<f32>, Vec<f32>);
}

impl Forward for Network {
    fn forward(&mut self, input: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        let start = Instant::now();
        let out = self.infer(input, n);
        self.forward_seconds += start.elapsed().as_secs_f64();
        out
    }
}

/// Outputs of the network's shape at no cost (all logits and values 0): for
/// measuring self-play's CPU side alone, as it runs beside a fast GPU.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConstantForward;

impl Forward for ConstantForward {
    fn forward(&mut self, _input: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        (vec![0.0; n * NUM_ACTIONS], vec![0.0; n])
    }
}

/// Games whose CPU work and network batches alternate with the other group's.
#[derive(Default)]
struct Group {
    slots: Vec<Slot>,
    /// Each slot's leaves in the batch below.
    leaves: Vec<Vec<Leaf>>,
    /// The encoded leaves, waiting for the network.
    input: Vec<f32>,
    count: usize,
    /// The network's outputs for those leaves, waiting to be backed up.
    output: Option<(Vec<f32>, Vec<f32>)>,
}

impl Group {
    /// Backs up the last batch, plays where searches are complete (finished
    /// games are returned, their slots removed), gathers and encodes the
    /// next batch. Runs on the search threads.
    fn cpu_work(&mut self, config: &Config, model: &str, worker: &str, config_json: &serde_json::Value) -> Work {
        if let Some((logits, values)) = self.output.take() {
            let mut outputs = Vec::with_capacity(self.slots.len());
            let (mut logits, mut values) = (logits.as_slice(), values.as_slice());
            for leaves in &self.leaves {
                let (l, rest) = logits.split_at(leaves.len() * NUM_ACTIONS);
                let (v, rest_values) = values.split_at(leaves.len());
                outputs.push((l, v));
                (logits, values) = (rest, rest_values);
            }
            let leaves = std::mem::take(&mut self.leaves);
            self.slots.par_iter_mut().zip(leaves).zip(outputs).for_each(|((slot, leaves), (logits, values))| {
                let evals = leaves
                    .iter()
                    .zip(logits.chunks(NUM_ACTIONS))
                    .zip(values)
                    .map(|((leaf, logits), &value)| {
                        Evaluation::from_logits(slot.tree.leaf_position(leaf), logits, value)
                    })
                    .collect();
                slot.tree.apply(leaves, evals);
                slot.prepare_root(config);
            });
        }
        let mut work = Work::default();
        let played: Vec<u64> = self
            .slots
            .par_iter_mut()
            .map(|slot| {
                let before = slot.actions.len();
                if slot.search_done() {
                    slot.play(config);
                }
                (slot.actions.len() - before) as u64
            })
            .collect();
        work.actions = played.iter().sum();
        let mut i = 0;
        while i < self.slots.len() {
            if self.slots[i].is_over(config) {
                let slot = self.slots.swap_remove(i);
                work.finished_actions += slot.actions.len() as u64;
                work.finished.push(GameFile {
                    format: GAME_FORMAT,
                    encoding_version: ENCODING_VERSION,
                    variant: config.selfplay.variant,
                    result: GameResult::of(slot.tree.root_position()),
                    actions: slot.actions,
                    samples: slot.samples,
                    model: model.to_string(),
                    seed: Some(slot.seed),
                    worker: Some(worker.to_string()),
                    config: config_json.clone(),
                });
            } else {
                i += 1;
            }
        }
        self.gather(config);
        work
    }

    /// Gathers every game's next leaves and encodes them.
    fn gather(&mut self, config: &Config) {
        let search = config.search;
        self.leaves = self
            .slots
            .par_iter_mut()
            .map(|slot| {
                let want = (slot.target.saturating_sub(slot.tree.root_visits()) as usize).clamp(1, search.batch_size);
                slot.tree.gather(want, &search).0
            })
            .collect();
        let positions: Vec<(usize, usize)> =
            self.leaves.iter().enumerate().flat_map(|(s, leaves)| (0..leaves.len()).map(move |l| (s, l))).collect();
        self.count = positions.len();
        self.input.resize(self.count * INPUT_SIZE, 0.0);
        let (slots, leaves) = (&self.slots, &self.leaves);
        self.input.par_chunks_mut(INPUT_SIZE).zip(positions).for_each(|(chunk, (s, l))| {
            encode(slots[s].tree.leaf_position(&leaves[s][l]), chunk);
        });
    }
}

/// What one group's CPU work did.
#[derive(Default)]
struct Work {
    finished: Vec<GameFile>,
    actions: u64,
    finished_actions: u64,
}

/// Plays self-play games, many at once.
pub struct Generator {
    config: Config,
    /// The configuration as recorded in games.
    config_json: serde_json::Value,
    worker: String,
    groups: [Group; 2],
    /// The group whose batch the network runs next.
    current: usize,
    seed_rng: SmallRng,
    /// Games still to start; `None`: no limit.
    to_start: Option<u64>,
    pub stats: Stats,
}

impl Slot {
    fn new(config: &Config, seed: u64) -> Slot {
        let mut slot = Slot {
            tree: Tree::new(Position::new(config.selfplay.variant)),
            actions: Vec::new(),
            samples: Vec::new(),
            target: 0,
            full: false,
            root_prepared: false,
            seed,
            rng: SmallRng::seed_from_u64(seed),
        };
        slot.start_search(config);
        slot
    }

    fn start_search(&mut self, config: &Config) {
        let p = &config.selfplay;
        self.full = p.cheap_simulations >= p.simulations || self.rng.random_bool(p.full_search_fraction);
        // A cheap search may stop at visits already below the reused root; a
        // full search (a training sample, with fresh noise) makes all its own.
        self.target = match self.full {
            true => self.tree.root_visits() + p.simulations,
            false => p.cheap_simulations,
        };
        self.root_prepared = false;
        // A reused root gets its noise or candidates before the first batch.
        self.prepare_root(config);
    }

    /// Once the root is expanded: Gumbel candidates for the search, or
    /// Dirichlet noise for a full PUCT search.
    fn prepare_root(&mut self, config: &Config) {
        let p = &config.selfplay;
        if self.root_prepared || !self.tree.root_expanded() {
            return;
        }
        if p.gumbel_candidates > 0 {
            let budget = self.target.saturating_sub(self.tree.root_visits());
            self.tree.start_gumbel(p.gumbel_candidates, budget, &mut self.rng);
        } else if self.full {
            self.tree.add_root_noise(p.dirichlet_alpha, p.dirichlet_fraction, &mut self.rng);
        }
        self.root_prepared = true;
    }

    fn is_over(&self, config: &Config) -> bool {
        self.tree.root_position().is_over() || self.actions.len() >= config.selfplay.max_actions as usize
    }

    fn search_done(&self) -> bool {
        self.tree.root_expanded() && self.tree.root_visits() >= self.target
    }

    /// Plays the searched action; forced actions (the only legal one) are
    /// played without search.
    fn play(&mut self, config: &Config) {
        let p = &config.selfplay;
        // Cheap searches too, so that games do not share their openings.
        let explore = p.gumbel_candidates == 0 && (self.actions.len() as u32) < p.temperature_actions;
        let chosen = if explore {
            let counts = self.tree.root_visit_counts();
            let weights: Vec<f64> = counts.iter().map(|&(_, v)| (v as f64).powf(1.0 / p.temperature)).collect();
            let total: f64 = weights.iter().sum();
            let mut x = self.rng.random_range(0.0..total.max(f64::MIN_POSITIVE));
            let mut pick = counts.len() - 1;
            for (i, w) in weights.iter().enumerate() {
                if x < *w {
                    pick = i;
                    break;
                }
                x -= w;
            }
            counts[pick].0
        } else {
            self.tree.best_action().expect("a searched root has actions")
        };
        if self.full {
            self.samples.push(Sample {
                ply: self.actions.len(),
                policy: self.tree.policy_target().iter().map(|(a, p)| (a.to_string(), *p)).collect::<BTreeMap<_, _>>(),
                root_value: self.tree.root_value(),
            });
        }
        self.advance(chosen);
        self.skip_forced(config);
        self.start_search(config);
    }

    fn advance(&mut self, action: Action) {
        self.actions.push(action);
        self.tree.advance(action);
    }

    fn skip_forced(&mut self, config: &Config) {
        while !self.is_over(config) {
            let legal = self.tree.root_position().legal_actions();
            if legal.len() != 1 {
                break;
            }
            self.advance(legal[0]);
        }
    }
}

impl Generator {
    /// Plays `games` games (`None`: until stopped), at most `parallel_games`
    /// at once; `worker` names this process in the games.
    pub fn new(config: Config, seed: u64, games: Option<u64>, worker: &str) -> Generator {
        let config_json = serde_json::to_value(&config).expect("a configuration is plain data");
        let mut generator = Generator {
            config,
            config_json,
            worker: worker.to_string(),
            groups: Default::default(),
            current: 0,
            seed_rng: SmallRng::seed_from_u64(seed),
            to_start: games,
            stats: Stats::default(),
        };
        for i in 0..generator.config.selfplay.parallel_games {
            generator.start_game(i % 2);
        }
        generator
    }

    /// Starts a game in group `g` if more are wanted.
    fn start_game(&mut self, g: usize) {
        if self.to_start == Some(0) {
            return;
        }
        self.to_start = self.to_start.map(|n| n - 1);
        let slot = Slot::new(&self.config, self.seed_rng.random());
        self.groups[g].slots.push(slot);
        self.groups[g].leaves.push(Vec::new());
    }

    /// Runs one step: the network evaluates one group's batch on this thread
    /// while `pool` does the other group's CPU work. Returns the games that
    /// finished (played by `model`); their places go to new games while
    /// more are wanted.
    pub fn step(&mut self, forward: &mut dyn Forward, pool: &rayon::ThreadPool, model: &str) -> Vec<GameFile> {
        let [first, second] = &mut self.groups;
        let (evaluated, worked) = if self.current == 0 { (first, second) } else { (second, first) };
        let (config, worker, config_json) = (&self.config, self.worker.as_str(), &self.config_json);
        let (output, work, seconds) = std::thread::scope(|scope| {
            let job = scope.spawn(|| pool.install(|| worked.cpu_work(config, model, worker, config_json)));
            let start = Instant::now();
            let output = (evaluated.count > 0).then(|| forward.forward(&evaluated.input, evaluated.count));
            let seconds = start.elapsed().as_secs_f64();
            (output, job.join().expect("self-play's CPU work does not panic"), seconds)
        });
        if output.is_some() {
            self.stats.evaluations += evaluated.count as u64;
            self.stats.batches += 1;
            self.stats.evaluator_seconds += seconds;
        }
        evaluated.output = output;
        evaluated.count = 0;
        let worked_index = 1 - self.current;
        self.current = worked_index;
        self.stats.actions += work.actions;
        self.stats.games += work.finished.len() as u64;
        self.stats.finished_actions += work.finished_actions;
        for _ in 0..work.finished.len() {
            self.start_game(worked_index);
        }
        work.finished
    }

    /// Games in progress.
    pub fn active(&self) -> usize {
        self.groups.iter().map(|g| g.slots.len()).sum()
    }

    /// Mean length of finished games so far.
    pub fn mean_game_length(&self) -> f64 {
        self.stats.finished_actions as f64 / self.stats.games.max(1) as f64
    }
}

/// How often [`run`] logs a status line.
const STATUS_EVERY: Duration = Duration::from_secs(60);

/// What [`run`] is asked to do.
pub struct RunOptions {
    pub config: Config,
    /// Folder for the shards of finished games (created if missing).
    pub out: PathBuf,
    /// Games to play; `None` plays until `duration` runs out or the process is stopped.
    pub games: Option<u64>,
    pub model: ModelSource,
    pub device: Device,
    pub seed: u64,
    /// This process's name in shard names and games (see [`crate::shards::new_worker_id`]).
    pub worker: String,
    /// Stop after this long, leaving the games in flight unfinished and
    /// unwritten (for measurements: no drain with ever fewer games per batch).
    pub duration: Option<Duration>,
    pub progress: bool,
    /// Measure the bare network too: every couple of seconds, pause and time
    /// its forward pass on a fixed batch of the mean size, so that both
    /// figures come from the same stretch of a shared machine's time.
    pub probe_raw: bool,
    /// Replace the network's forward pass by [`ConstantForward`], to
    /// measure self-play's CPU side alone.
    pub constant_network: bool,
    /// Upload each shard from `out` (then an outbox) into this store,
    /// create-only, removing it locally once stored.
    pub upload: Option<std::sync::Arc<crate::store::Store>>,
    /// Once set, stop at the next step like `duration` (finished games
    /// written, those in flight left unwritten).
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// What [`run`] did.
#[derive(Clone, Copy, Debug)]
pub struct RunReport {
    pub stats: Stats,
    pub seconds: f64,
    /// Seconds in the network's forward passes.
    pub forward_seconds: f64,
    /// Shards written and their bytes.
    pub shards: u64,
    pub shard_bytes: u64,
    /// With `probe_raw`: positions and seconds of the bare forward passes
    /// timed between steps (not counted in the run's seconds), and their batch.
    pub raw: Option<(u64, f64, usize)>,
}

impl RunReport {
    pub fn evaluations_per_second(&self) -> f64 {
        self.stats.evaluations as f64 / self.seconds
    }

    /// The share of the time spent in the evaluator: what is left goes to
    /// search, bookkeeping and writing games.
    pub fn evaluator_share(&self) -> f64 {
        self.stats.evaluator_seconds / self.seconds
    }

    /// The share of the time spent in the network's forward passes: the
    /// throughput self-play reaches, as a share of what the network alone
    /// reaches on the same batches in the same run.
    pub fn forward_share(&self) -> f64 {
        self.forward_seconds / self.seconds
    }

    /// Positions per second of the bare network, from the probes.
    pub fn raw_per_second(&self) -> Option<f64> {
        self.raw.map(|(positions, seconds, _)| positions as f64 / seconds.max(1e-9))
    }

    pub fn mean_batch(&self) -> f64 {
        self.stats.evaluations as f64 / self.stats.batches.max(1) as f64
    }
}

/// Plays games with the network from `options.model`, writing the finished
/// ones in shards into `options.out`. With a model folder, a newer
/// checkpoint there is picked up after each finished game. A checkpoint's
/// description (encoding version, network shape) is checked before it plays.
pub fn run(options: RunOptions) -> Result<RunReport> {
    std::fs::create_dir_all(&options.out)
        .with_context(|| format!("cannot create games folder {}", options.out.display()))?;
    tch::set_num_threads(options.config.selfplay.torch_threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.config.selfplay.search_threads())
        .build()
        .context("cannot start the search threads")?;
    let net_config = options.config.network;
    // A checkpoint that cannot be loaded gives way to the newest older one.
    let load = |path: Option<&PathBuf>| -> Result<(Network, Option<PathBuf>)> {
        match path {
            Some(p) => {
                let (network, _, used) = load_checkpoint_or_older(p, options.device)?;
                Ok((network, Some(used)))
            }
            None => Ok((Network::new(&net_config, options.device, options.seed as i64), None)),
        }
    };
    let p = &options.config.selfplay;
    let mut shards = crate::shards::ShardWriter::new(
        &options.out,
        &options.worker,
        p.shard_games,
        Duration::from_secs_f64(p.shard_seconds),
    )?;
    let mut current = options.model.current()?;
    let (mut network, used) = load(current.as_ref())?;
    let mut model = model_name(used.as_deref());
    tracing::info!(model, device = ?options.device, "self-play starts");

    let bar = match (options.progress, options.games) {
        (false, _) => ProgressBar::hidden(),
        (true, Some(n)) => ProgressBar::new(n),
        (true, None) => ProgressBar::new_spinner(),
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {pos}/{len} games {msg}")
            .expect("valid progress template"),
    );

    let start = Instant::now();
    // Seconds spent probing the bare network, left out of the run's time.
    let mut paused = 0.0;
    let elapsed = |paused: f64| start.elapsed().as_secs_f64() - paused;
    let mut probe: Option<(Vec<f32>, usize)> = None;
    let mut raw = (0u64, 0.0f64);
    let mut last_probe = Instant::now();
    let mut generator = Generator::new(options.config.clone(), options.seed, options.games, &options.worker);
    let mut last_status = Instant::now();
    let mut constant = ConstantForward;
    // Forward-pass seconds of the networks replaced so far.
    let mut forward_before = 0.0;
    while generator.active() > 0 {
        if options.duration.is_some_and(|d| elapsed(paused) >= d.as_secs_f64())
            || options.stop.as_ref().is_some_and(|stop| stop.load(std::sync::atomic::Ordering::Relaxed))
        {
            break;
        }
        if options.probe_raw && generator.stats.batches > 0 && last_probe.elapsed().as_secs() >= 2 {
            let probe_start = Instant::now();
            let (input, batch) = probe.get_or_insert_with(|| {
                let s = generator.stats;
                let batch = (s.evaluations as f64 / s.batches as f64).round().max(1.0) as usize;
                (crate::bench::forward_input(options.config.selfplay.variant, batch), batch)
            });
            // On this thread, which runs self-play's forward passes.
            let (positions, seconds) = crate::bench::time_forward(&network, input, *batch, Duration::from_millis(200));
            raw = (raw.0 + positions, raw.1 + seconds);
            paused += probe_start.elapsed().as_secs_f64();
            last_probe = Instant::now();
        }
        let forward: &mut dyn Forward = if options.constant_network { &mut constant } else { &mut network };
        let finished_games = generator.step(forward, &pool, &model);
        let mut written = shards.flush_if_due()?.is_some();
        for game in finished_games {
            written |= shards.push(game)?.is_some();
            bar.inc(1);
            if options.model.follows_training() {
                let newest = options.model.current()?;
                if newest != current {
                    forward_before += network.forward_seconds;
                    let used;
                    (network, used) = load(newest.as_ref())?;
                    model = model_name(used.as_deref());
                    current = newest;
                    tracing::info!(model, "picked up a new checkpoint");
                }
            }
        }
        if let (true, Some(store)) = (written, &options.upload) {
            // A failure leaves the shard in the outbox for the next try.
            if let Err(e) = store.upload_outbox(&options.out, "") {
                tracing::warn!("uploading shards: {e:#} (kept in {} for the next try)", options.out.display());
            }
        }
        let secs = elapsed(paused).max(1e-9);
        let s = generator.stats;
        if options.progress && last_status.elapsed() >= STATUS_EVERY {
            // One line a minute for logs (a worker's output is rarely a terminal).
            tracing::info!(
                games = s.games,
                games_per_second = format!("{:.2}", s.games as f64 / secs),
                evaluations_per_second = format!("{:.0}", s.evaluations as f64 / secs),
                shards = shards.shards(),
                model,
                "self-play status"
            );
            last_status = Instant::now();
        }
        bar.set_message(format!(
            "| {:.0} actions/s | {:.0} evals/s | mean length {:.1} | {}",
            s.actions as f64 / secs,
            s.evaluations as f64 / secs,
            generator.mean_game_length(),
            model
        ));
    }
    shards.flush()?;
    if let Some(store) = &options.upload {
        crate::store::retry_forever("uploading shards", || store.upload_outbox(&options.out, ""));
    }
    bar.finish();
    let forward_seconds = forward_before + network.forward_seconds;
    let raw = probe.map(|(_, batch)| (raw.0, raw.1, batch));
    let (seconds, stats) = (elapsed(paused), generator.stats);
    Ok(RunReport { stats, seconds, forward_seconds, raw, shards: shards.shards(), shard_bytes: shards.bytes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::UniformEvaluator;

    /// The two groups' interleaved work plays exactly the games asked, each
    /// complete and consistent (read back through the checked parser).
    #[test]
    fn the_interleaved_groups_play_exactly_the_games_asked() {
        let config = Config::parse(include_str!("../configs/tiny.toml")).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let mut generator = Generator::new(config, 3, Some(5), "unit");
        let mut games = Vec::new();
        while generator.active() > 0 {
            games.extend(generator.step(&mut ConstantForward, &pool, "constant"));
        }
        assert_eq!(games.len(), 5);
        assert_eq!(generator.stats.games, 5);
        for game in games {
            let read = GameFile::parse(&serde_json::to_string(&game).unwrap()).unwrap();
            assert!(!read.samples.is_empty() && read.model == "constant");
        }
    }

    /// The next search on a reused root (already expanded) gets its noise
    /// before its first batch is gathered, not after it.
    #[test]
    fn a_reused_root_is_prepared_before_its_first_batch() {
        let mut config = Config::parse(include_str!("../configs/tiny.toml")).unwrap();
        config.selfplay.gumbel_candidates = 0;
        config.selfplay.full_search_fraction = 1.0;
        let mut slot = Slot::new(&config, 1);
        assert!(!slot.root_prepared, "a fresh root is prepared once it is expanded");
        slot.tree.run(&mut UniformEvaluator, 200, &config.search);
        slot.play(&config);
        assert!(slot.tree.root_expanded(), "the root was reused");
        assert!(slot.root_prepared, "its noise came before the first batch");
    }
}
