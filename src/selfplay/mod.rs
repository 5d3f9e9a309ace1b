//! The self-play generator: many games searched at once by the core's
//! batched driver ([`crate::search::Batched`]), their leaves evaluated in
//! network batches.
//!
//! The games are split into two groups whose work interleaves: while the
//! network runs one group's batch (on the calling thread), the search
//! threads do the other group's CPU work: back up its last batch's values
//! (priors from the logits of the legal actions), play where a search is
//! complete (for the first `temperature_actions` actions of a PUCT search,
//! full or cheap, sampled in proportion to visits^(1/temperature), the
//! visits that forced playouts added pruned; after them the search's best:
//! the most visited, or the Gumbel winner; again at once where a cheap
//! search's reused root already has its visits), start the next searches, gather up to
//! `search.batch_size` leaves a game and encode them. On a GPU the forward
//! pass is short and this CPU side decides the rate; overlapping the two
//! keeps both busy.

use std::collections::BTreeMap;
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use crate::config::Config;
use crate::encoding::ENCODING_VERSION;
use crate::games::{GameFile, GameResult, Sample, GAME_FORMAT};
use crate::rules::{Action, Color, Position};
use crate::search::{Batched, NotFinite, Root, Search, Searching};
pub use crate::search::{ConstantForward, Forward};

mod play;
pub use play::{play, PlayOptions, PlayReport};

/// A game being played.
struct Slot {
    search: Search,
    actions: Vec<Action>,
    samples: Vec<Sample>,
    /// Whether the current search is a full one (a policy target).
    full: bool,
    /// The game's seed, recorded with it.
    seed: u64,
}

impl Searching for Slot {
    fn search(&mut self) -> &mut Search {
        &mut self.search
    }
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
    pub forward_seconds: f64,
}

/// Games whose CPU work and network batches alternate with the other group's.
#[derive(Default)]
struct Group {
    games: Batched<Slot>,
    /// The network's outputs for the gathered batch, waiting to be applied.
    output: Option<(Vec<f32>, Vec<f32>)>,
}

impl Group {
    /// Applies the last batch, plays where searches are complete (finished
    /// games are returned, their slots removed), gathers and encodes the
    /// next batch. Runs on the search threads.
    fn cpu_work(
        &mut self,
        config: &Config,
        model: &str,
        worker: &str,
        config_json: &serde_json::Value,
    ) -> Result<Work, NotFinite> {
        if let Some((logits, values)) = self.output.take() {
            self.games.apply(&logits, &values, &config.search)?;
        }
        let played: Vec<u64> = self
            .games
            .games_mut()
            .par_iter_mut()
            .map(|slot| {
                let before = slot.actions.len();
                // A cheap search on a reused root may be done as it starts.
                while slot.search.is_done() && !slot.is_over(config) {
                    slot.play(config);
                }
                (slot.actions.len() - before) as u64
            })
            .collect();
        let finished = self.games.take_if(|slot| slot.is_over(config));
        let work = Work {
            actions: played.iter().sum(),
            finished_actions: finished.iter().map(|slot| slot.actions.len() as u64).sum(),
            finished: finished.into_iter().map(|slot| slot.into_game(config, model, worker, config_json)).collect(),
        };
        self.games.gather(&config.search, |_| true);
        Ok(work)
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
        let search = Search::new(Position::new(config.game.variant), seed);
        let mut slot = Slot { search, actions: Vec::new(), samples: Vec::new(), full: false, seed };
        slot.start_search(config);
        slot
    }

    /// Starts the next search: full (a training sample, with fresh noise,
    /// making all its own visits) or cheap (stopping at the visits the
    /// reused root may already have); Gumbel candidates for either.
    fn start_search(&mut self, config: &Config) {
        let p = &config.selfplay;
        self.full = p.cheap_simulations >= p.simulations
            || is_late(self.search.tree().root_position(), p.late_reserve)
            || self.search.rng().random_bool(p.full_search_fraction);
        let target = match self.full {
            true => self.search.tree().root_visits() + p.simulations,
            false => p.cheap_simulations,
        };
        let root = match (p.gumbel_candidates, self.full) {
            (0, true) => Root::Noise {
                alpha: p.dirichlet_alpha,
                fraction: p.dirichlet_fraction,
                forced_playouts: p.forced_playouts,
            },
            (0, false) => Root::Plain,
            (candidates, _) => Root::Gumbel { candidates },
        };
        self.search.start(target, root, &config.search);
    }

    fn is_over(&self, config: &Config) -> bool {
        self.search.tree().root_position().is_over() || self.actions.len() >= config.game.max_actions as usize
    }

    /// Plays the searched action, then the forced actions after it (the
    /// only legal one, played without search), and starts the next search.
    fn play(&mut self, config: &Config) {
        let p = &config.selfplay;
        let tree = self.search.tree();
        // Cheap searches too, so that games do not share their openings.
        let explore = p.gumbel_candidates == 0 && (self.actions.len() as u32) < p.temperature_actions;
        let chosen = match explore {
            true => sample_visits(&tree.policy_target(), p.temperature, self.search.rng()),
            false => tree.best_action().expect("a searched root has actions"),
        };
        let tree = self.search.tree();
        if self.full {
            self.samples.push(Sample {
                ply: self.actions.len(),
                policy: tree.policy_target().iter().map(|(a, p)| (a.to_string(), *p)).collect::<BTreeMap<_, _>>(),
                root_value: tree.root_value(),
            });
        }
        self.actions.push(chosen);
        self.search.advance(chosen);
        let room = (config.game.max_actions as usize).saturating_sub(self.actions.len());
        self.actions.extend(self.search.skip_forced(room));
        self.start_search(config);
    }

    /// The finished game as it is written.
    fn into_game(self, config: &Config, model: &str, worker: &str, config_json: &serde_json::Value) -> GameFile {
        GameFile {
            format: GAME_FORMAT,
            encoding_version: ENCODING_VERSION,
            variant: config.game.variant,
            result: GameResult::of(self.search.tree().root_position()),
            actions: self.actions,
            samples: self.samples,
            model: model.to_string(),
            seed: Some(self.seed),
            worker: Some(worker.to_string()),
            config: config_json.clone(),
        }
    }
}

/// An action drawn in proportion to visits^(1/temperature), from the
/// visits the search counts for its policy target (pruned of forced playouts
/// where it forced them).
fn sample_visits(counts: &[(Action, f32)], temperature: f64, rng: &mut SmallRng) -> Action {
    let weights: Vec<f64> = counts.iter().map(|&(_, v)| (v as f64).powf(1.0 / temperature)).collect();
    let total: f64 = weights.iter().sum();
    let mut x = rng.random_range(0.0..total.max(f64::MIN_POSITIVE));
    for (&(action, _), w) in counts.iter().zip(&weights) {
        if x < *w {
            return action;
        }
        x -= w;
    }
    counts[counts.len() - 1].0
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
        self.groups[g].games.push(slot);
    }

    /// Runs one step: the network evaluates one group's batch on this thread
    /// while `pool` does the other group's CPU work. Returns the games that
    /// finished (played by `model`); their places go to new games while
    /// more are wanted. A network output that is not finite is an error.
    pub fn step(
        &mut self,
        forward: &mut dyn Forward,
        pool: &rayon::ThreadPool,
        model: &str,
    ) -> Result<Vec<GameFile>, NotFinite> {
        let [first, second] = &mut self.groups;
        let (evaluated, worked) = if self.current == 0 { (first, second) } else { (second, first) };
        let (config, worker, config_json) = (&self.config, self.worker.as_str(), &self.config_json);
        let (output, work, seconds) = std::thread::scope(|scope| {
            let job = scope.spawn(|| pool.install(|| worked.cpu_work(config, model, worker, config_json)));
            let start = Instant::now();
            let count = evaluated.games.count();
            let output = (count > 0).then(|| forward.forward(evaluated.games.input(), count));
            let seconds = start.elapsed().as_secs_f64();
            (output, job.join().expect("self-play's CPU work does not panic"), seconds)
        });
        let work = work?;
        if output.is_some() {
            self.stats.evaluations += evaluated.games.count() as u64;
            self.stats.batches += 1;
            self.stats.forward_seconds += seconds;
        }
        evaluated.output = output;
        let worked_index = 1 - self.current;
        self.current = worked_index;
        self.stats.actions += work.actions;
        self.stats.games += work.finished.len() as u64;
        self.stats.finished_actions += work.finished_actions;
        for _ in 0..work.finished.len() {
            self.start_game(worked_index);
        }
        Ok(work.finished)
    }

    /// Games in progress.
    pub fn active(&self) -> usize {
        self.groups.iter().map(|g| g.games.len()).sum()
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
            games.extend(generator.step(&mut ConstantForward, &pool, "constant").unwrap());
        }
        assert_eq!(games.len(), 5);
        assert_eq!(generator.stats.games, 5);
        for game in games {
            let read = GameFile::parse(&serde_json::to_string(&game).unwrap()).unwrap();
            assert!(!read.samples.is_empty() && read.model == "constant");
        }
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
            slot.search.tree_mut().run(&mut UniformEvaluator, 1, &config.search);
            slot.start_search(&config);
            let tree = slot.search.tree_mut();
            tree.run(&mut UniformEvaluator, 400, &config.search);
            let total = tree.root_visits() as f32 - 1.0;
            let visits = tree.root_visit_counts();
            tree.policy_target().iter().zip(visits).all(|(&(_, p), (_, v))| (p - v as f32 / total).abs() < 1e-6)
        };
        assert!(!target_is_visits(1.0), "a full search's target is pruned");
        assert!(target_is_visits(0.0), "a cheap search's is its visits");
    }
}
