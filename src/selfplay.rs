//! The self-play generator: many games searched at once, the leaves of all
//! their trees evaluated in one network batch per step.
//!
//! Each step: every game whose search is complete chooses its action
//! (visit-proportional for the first `temperature_actions` actions of a
//! PUCT search, full or cheap, else the search's best: the most visited, or
//! the Gumbel winner) and starts the next search; every game
//! gathers up to `search.batch_size` leaves (in parallel, on rayon threads);
//! one evaluator call scores them all; the values are backed up.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use tch::Device;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use crate::checkpoint::{load_checkpoint, model_name, ModelSource};
use crate::config::Config;
use crate::encoding::ENCODING_VERSION;
use crate::games::{GameFile, GameResult, Sample, GAME_FORMAT};
use crate::net::Network;
use crate::rules::{Action, Position};
use crate::search::{Evaluator, Leaf, Tree};

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
    /// Seconds spent in the evaluator (encoding, forward pass, priors).
    pub evaluator_seconds: f64,
}

/// Plays self-play games and hands each finished one to a callback.
pub struct Generator {
    config: Config,
    /// The configuration as recorded in games.
    config_json: serde_json::Value,
    worker: String,
    slots: Vec<Slot>,
    seed_rng: SmallRng,
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
    /// Starts `games` games at once (at most `parallel_games`); `worker`
    /// names this process in the games.
    pub fn new(config: Config, seed: u64, games: usize, worker: &str) -> Generator {
        let mut seed_rng = SmallRng::seed_from_u64(seed);
        let n = games.min(config.selfplay.parallel_games);
        let slots = (0..n).map(|_| Slot::new(&config, seed_rng.random())).collect();
        let config_json = serde_json::to_value(&config).expect("a configuration is plain data");
        Generator { config, config_json, worker: worker.to_string(), slots, seed_rng, stats: Stats::default() }
    }

    /// Runs one step: moves where searches are complete, then one batch of
    /// leaf evaluations. Finished games go to `finished` (with the model name
    /// given), and their slots start new games while `more_games` says so.
    pub fn step(
        &mut self,
        evaluator: &mut dyn Evaluator,
        model: &str,
        more_games: &mut dyn FnMut() -> bool,
        finished: &mut dyn FnMut(GameFile),
    ) {
        let config = &self.config;
        let mut i = 0;
        while i < self.slots.len() {
            let slot = &mut self.slots[i];
            if slot.search_done() {
                let before = slot.actions.len();
                slot.play(config);
                self.stats.actions += (slot.actions.len() - before) as u64;
            }
            if slot.is_over(config) {
                let slot = self.slots.swap_remove(i);
                self.stats.games += 1;
                self.stats.finished_actions += slot.actions.len() as u64;
                finished(GameFile {
                    format: GAME_FORMAT,
                    encoding_version: ENCODING_VERSION,
                    variant: config.selfplay.variant,
                    result: GameResult::of(slot.tree.root_position()),
                    actions: slot.actions,
                    samples: slot.samples,
                    model: model.to_string(),
                    seed: Some(slot.seed),
                    worker: Some(self.worker.clone()),
                    config: self.config_json.clone(),
                });
                if more_games() {
                    let seed = self.seed_rng.random();
                    self.slots.push(Slot::new(config, seed));
                }
                continue;
            }
            i += 1;
        }
        if self.slots.is_empty() {
            return;
        }

        let search = config.search;
        let gathered: Vec<Vec<Leaf>> = self
            .slots
            .par_iter_mut()
            .map(|slot| {
                let want = (slot.target.saturating_sub(slot.tree.root_visits()) as usize).clamp(1, search.batch_size);
                slot.tree.gather(want, &search).0
            })
            .collect();
        let positions: Vec<Position> = self
            .slots
            .iter()
            .zip(&gathered)
            .flat_map(|(slot, leaves)| leaves.iter().map(|leaf| *slot.tree.leaf_position(leaf)))
            .collect();
        if positions.is_empty() {
            return;
        }
        let evaluator_start = Instant::now();
        let mut evaluations = evaluator.evaluate(&positions).into_iter();
        self.stats.evaluator_seconds += evaluator_start.elapsed().as_secs_f64();
        self.stats.evaluations += positions.len() as u64;
        self.stats.batches += 1;
        let per_slot: Vec<_> =
            gathered.iter().map(|leaves| evaluations.by_ref().take(leaves.len()).collect()).collect();
        self.slots.par_iter_mut().zip(gathered).zip(per_slot).for_each(|((slot, leaves), evals)| {
            slot.tree.apply(leaves, evals);
            slot.prepare_root(config);
        });
    }

    /// Games in progress.
    pub fn active(&self) -> usize {
        self.slots.len()
    }

    /// Mean length of finished games so far.
    pub fn mean_game_length(&self) -> f64 {
        self.stats.finished_actions as f64 / self.stats.games.max(1) as f64
    }
}

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
    let load = |path: Option<&PathBuf>| -> Result<Network> {
        match path {
            Some(p) => Ok(load_checkpoint(p, options.device)?.0),
            None => Ok(Network::new(&net_config, options.device, options.seed as i64)),
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
    let mut network = load(current.as_ref())?;
    let mut model = model_name(current.as_deref());
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
    let parallel = options.config.selfplay.parallel_games as u64;
    let mut started = options.games.map_or(parallel, |n| n.min(parallel));
    let mut generator = Generator::new(options.config.clone(), options.seed, started as usize, &options.worker);
    // Forward-pass seconds of the networks replaced so far.
    let mut forward_before = 0.0;
    while generator.active() > 0 {
        let mut finished_games = Vec::new();
        if options.duration.is_some_and(|d| elapsed(paused) >= d.as_secs_f64()) {
            break;
        }
        if options.probe_raw && generator.stats.batches > 0 && last_probe.elapsed().as_secs() >= 2 {
            let probe_start = Instant::now();
            let (input, batch) = probe.get_or_insert_with(|| {
                let s = generator.stats;
                let batch = (s.evaluations as f64 / s.batches as f64).round().max(1.0) as usize;
                (crate::bench::forward_input(options.config.selfplay.variant, batch), batch)
            });
            // On the thread that runs self-play's forward passes.
            let (net, batch) = (&mut network, *batch);
            let (positions, seconds) =
                pool.install(move || crate::bench::time_forward(net, input, batch, Duration::from_millis(200)));
            raw = (raw.0 + positions, raw.1 + seconds);
            paused += probe_start.elapsed().as_secs_f64();
            last_probe = Instant::now();
        }
        let mut more = || {
            let more = options.games.is_none_or(|n| started < n);
            started += more as u64;
            more
        };
        pool.install(|| generator.step(&mut network, &model, &mut more, &mut |game| finished_games.push(game)));
        shards.flush_if_due()?;
        for game in finished_games {
            shards.push(game)?;
            bar.inc(1);
            if let ModelSource::Folder(_) = options.model {
                let newest = options.model.current()?;
                if newest != current {
                    forward_before += network.forward_seconds;
                    network = load(newest.as_ref())?;
                    model = model_name(newest.as_deref());
                    current = newest;
                    tracing::info!(model, "picked up a new checkpoint");
                }
            }
        }
        let secs = elapsed(paused).max(1e-9);
        let s = generator.stats;
        bar.set_message(format!(
            "| {:.0} actions/s | {:.0} evals/s | mean length {:.1} | {}",
            s.actions as f64 / secs,
            s.evaluations as f64 / secs,
            generator.mean_game_length(),
            model
        ));
    }
    shards.flush()?;
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
