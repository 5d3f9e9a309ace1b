//! The self-play generator: many games searched at once, their leaves
//! evaluated in network batches.
//!
//! The games are split into two groups whose work interleaves: while the
//! network runs one group's batch (on the calling thread), the search
//! threads do the other group's CPU work: back up its last batch's values
//! (priors from the logits of the legal actions), play where a search is
//! complete (for the first `temperature_actions` actions of a PUCT search,
//! full or cheap, sampled in proportion to visits^(1/temperature), the
//! visits that forced playouts added pruned; after them the search's best:
//! the most visited, or the Gumbel winner), start the next searches, gather up to
//! `search.batch_size` leaves a game and encode them. On a GPU the forward
//! pass is short and this CPU side decides the rate; overlapping the two
//! keeps both busy.

use std::collections::BTreeMap;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use crate::config::Config;
use crate::encoding::{encode, ENCODING_VERSION, INPUT_SIZE, NUM_ACTIONS};
use crate::games::{GameFile, GameResult, Sample, GAME_FORMAT};
use crate::net::Network;
use crate::rules::{Action, Color, Position};
use crate::search::{Evaluation, Leaf, Tree};

mod run;
pub use run::{run, RunOptions, RunReport};

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
                    variant: config.game.variant,
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

/// Whether a position is late in its game: a player has at most
/// `late_reserve` pieces in reserve (0: never).
fn is_late(position: &Position, late_reserve: u8) -> bool {
    late_reserve > 0 && [Color::White, Color::Black].into_iter().any(|color| position.reserve(color) <= late_reserve)
}

impl Slot {
    fn new(config: &Config, seed: u64) -> Slot {
        let mut slot = Slot {
            tree: Tree::new(Position::new(config.game.variant)),
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
        self.full = p.cheap_simulations >= p.simulations
            || is_late(self.tree.root_position(), p.late_reserve)
            || self.rng.random_bool(p.full_search_fraction);
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
            if p.forced_playouts > 0.0 {
                self.tree.start_forced_playouts(p.forced_playouts, &config.search);
            }
        }
        self.root_prepared = true;
    }

    fn is_over(&self, config: &Config) -> bool {
        self.tree.root_position().is_over() || self.actions.len() >= config.game.max_actions as usize
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
            // The visits, pruned of forced playouts where the search forced them.
            let counts = self.tree.policy_target();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::UniformEvaluator;

    /// The two groups' interleaved work plays exactly the games asked, each
    /// complete and consistent (read back through the checked parser).
    #[test]
    fn the_interleaved_groups_play_exactly_the_games_asked() {
        let config = Config::parse(include_str!("../../configs/tiny.toml")).unwrap();
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
        let mut config = Config::parse(include_str!("../../configs/tiny.toml")).unwrap();
        config.selfplay.gumbel_candidates = 0;
        config.selfplay.full_search_fraction = 1.0;
        let mut slot = Slot::new(&config, 1);
        assert!(!slot.root_prepared, "a fresh root is prepared once it is expanded");
        slot.tree.run(&mut UniformEvaluator, 200, &config.search);
        slot.play(&config);
        assert!(slot.tree.root_expanded(), "the root was reused");
        assert!(slot.root_prepared, "its noise came before the first batch");
    }

    /// Late positions (few pieces in reserve) are always searched fully;
    /// with `late_reserve` 0 nothing is late.
    #[test]
    fn late_positions_are_searched_fully() {
        let mut config = Config::parse(include_str!("../../configs/tiny.toml")).unwrap();
        config.selfplay.full_search_fraction = 0.0;
        let start = Position::new(config.game.variant);
        let reserve = start.reserve(Color::White);
        assert!(!is_late(&start, reserve - 1) && is_late(&start, reserve) && !is_late(&start, 0));
        config.selfplay.late_reserve = reserve - 1;
        assert!(!Slot::new(&config, 1).full, "early: the random share (none here)");
        config.selfplay.late_reserve = reserve;
        assert!(Slot::new(&config, 1).full, "late: always full");
        let mut rng = SmallRng::seed_from_u64(5);
        let (mut position, mut was_late) = (start, false);
        while !position.is_over() {
            let actions = position.legal_actions();
            position.play(actions[rng.random_range(0..actions.len())]).unwrap();
            was_late |= is_late(&position, 1);
        }
        assert!(was_late, "a game reaches its late phase before it ends");
    }

    /// A full search with `forced_playouts` forces its root's visits and
    /// prunes them from its policy target; a cheap one does neither.
    #[test]
    fn full_searches_force_playouts_and_prune_their_target() {
        let mut config = Config::parse(include_str!("../../configs/tiny.toml")).unwrap();
        config.selfplay.gumbel_candidates = 0;
        // Large enough to bind under uniform priors (KataGo's 2 binds where
        // the priors are uneven).
        config.selfplay.forced_playouts = 20.0;
        let target_is_visits = |full_search_fraction: f64| {
            let mut config = config.clone();
            config.selfplay.full_search_fraction = full_search_fraction;
            let mut slot = Slot::new(&config, 1);
            slot.tree.run(&mut UniformEvaluator, 1, &config.search);
            slot.prepare_root(&config);
            slot.tree.run(&mut UniformEvaluator, 400, &config.search);
            let total = slot.tree.root_visits() as f32 - 1.0;
            let visits = slot.tree.root_visit_counts();
            slot.tree.policy_target().iter().zip(visits).all(|(&(_, p), (_, v))| (p - v as f32 / total).abs() < 1e-6)
        };
        assert!(!target_is_visits(1.0), "a full search's target is pruned");
        assert!(target_is_visits(0.0), "a cheap search's is its visits");
    }
}
