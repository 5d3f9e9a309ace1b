//! A game of self-play and how each of its decisions is searched, played
//! and recorded: the settings of `[selfplay]` and [`SelfplayGame`], which
//! the self-play program and the Python package (`gipf.selfplay`) drive
//! through the batched search ([`crate::search::Batched`]).
//!
//! A decision is searched fully (a policy target: fresh root noise and
//! forced playouts, all its own visits) or cheaply (KataGo's playout-cap
//! randomization: stopping at the visits the reused root may already have);
//! late positions are always searched fully. For the first
//! `temperature_actions` actions of a PUCT search the action is sampled in
//! proportion to visits^(1/temperature), the visits that forced playouts
//! added pruned; after them it is the search's best (the most visited, or
//! the Gumbel winner). Forced actions are played without a search.

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::bounds::{check_positive, check_range, check_range_to_key, check_unit, check_up_to, Checked};
use crate::encoding::ENCODING_VERSION;
use crate::games::{GameFile, GameResult, Sample, GAME_FORMAT};
use crate::rules::{Action, Color, Position};
use crate::search::{map_each, BatchError, Batched, Root, Search, SearchConfig, Searching};

/// Self-play settings (`[selfplay]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelfplayConfig {
    /// Simulations of a full search, whose visits become a policy target.
    pub simulations: u32,
    /// Simulations of a cheap search (playout-cap randomization): not a
    /// policy target, no root noise. Equal to `simulations` to turn it off.
    pub cheap_simulations: u32,
    /// Share of decisions searched fully.
    pub full_search_fraction: f64,
    /// Late in a game, where tactics decide, every decision is searched
    /// fully: once a player has at most this many pieces in reserve. 0: off
    /// (only the random share).
    pub late_reserve: u8,
    /// Actions at the start of a game chosen in proportion to visits^(1/temperature).
    pub temperature_actions: u32,
    /// The temperature of those first actions: 1 draws in proportion to
    /// the visits, lower values favour the most visited.
    pub temperature: f64,
    /// The concentration of the Dirichlet noise added to the root's priors
    /// in full searches (smaller: the noise falls on fewer actions).
    pub dirichlet_alpha: f32,
    /// The noise's share of the root's priors in full searches.
    pub dirichlet_fraction: f32,
    /// KataGo's forced playouts in full searches: each root action gets at
    /// least sqrt(k * prior * visits) visits, taken back from the policy
    /// target where PUCT would not have spent them. 0: off; KataGo uses 2.
    pub forced_playouts: f32,
    /// 0: PUCT at the root with Dirichlet noise and the temperature above.
    /// N > 0: Gumbel root selection among N sampled actions (sequential
    /// halving, improved policy as the target), for low simulation counts.
    pub gumbel_candidates: usize,
    /// Games played at once; their leaves share each network batch.
    pub parallel_games: usize,
    /// Threads that search the games' trees and encode positions, for each
    /// self-play worker; 0 divides the cores the trainer's and the workers'
    /// LibTorch threads leave among the workers, at least one each.
    pub search_threads: usize,
    /// Finished games are written in shards of this many games, or sooner
    /// when the oldest has waited `shard_seconds`: a killed self-play
    /// process loses the games not yet written.
    pub shard_games: usize,
    /// A shard is written once its oldest game has waited this long, full
    /// or not.
    pub shard_seconds: f64,
}

/// The settings of `configs/cpu.toml`'s `[selfplay]` (tested there), which
/// the Python package's self-play starts from.
impl Default for SelfplayConfig {
    fn default() -> SelfplayConfig {
        SelfplayConfig {
            simulations: 128,
            cheap_simulations: 32,
            full_search_fraction: 0.25,
            late_reserve: 2,
            temperature_actions: 12,
            temperature: 1.0,
            dirichlet_alpha: 0.3,
            dirichlet_fraction: 0.25,
            forced_playouts: 0.0,
            gumbel_candidates: 0,
            parallel_games: 32,
            search_threads: 0,
            shard_games: 16,
            shard_seconds: 60.0,
        }
    }
}

/// The most leaves one forward pass may evaluate (`gpu.toml`: 2,048).
pub const MAX_LEAVES_PER_PASS: u64 = 65_536;

impl SelfplayConfig {
    /// Checks each setting against its range, naming it as `selfplay.KEY`.
    pub fn validate(&self) -> Checked {
        check_range("selfplay.simulations", self.simulations as i64, 2, crate::search::MAX_SIMULATIONS as i64)?;
        let (cheap, full) = (self.cheap_simulations as i64, self.simulations as i64);
        check_range_to_key("selfplay.cheap_simulations", cheap, 2, full, "selfplay.simulations")?;
        check_unit("selfplay.full_search_fraction", self.full_search_fraction)?;
        check_range("selfplay.late_reserve", self.late_reserve as i64, 0, 100)?;
        check_range("selfplay.temperature_actions", self.temperature_actions as i64, 0, 10_000)?;
        check_positive("selfplay.temperature", self.temperature, 10.0)?;
        check_positive("selfplay.dirichlet_alpha", self.dirichlet_alpha as f64, 10.0)?;
        check_unit("selfplay.dirichlet_fraction", self.dirichlet_fraction as f64)?;
        check_up_to("selfplay.forced_playouts", self.forced_playouts as f64, 100.0)?;
        check_range("selfplay.gumbel_candidates", self.gumbel_candidates as i64, 0, 128)?;
        check_range("selfplay.parallel_games", self.parallel_games as i64, 1, 4096)?;
        check_range("selfplay.search_threads", self.search_threads as i64, 0, 1024)?;
        check_range("selfplay.shard_games", self.shard_games as i64, 1, 1_000_000)?;
        check_positive("selfplay.shard_seconds", self.shard_seconds, 1e6)
    }

    /// The leaves of one forward pass with `search`, `parallel_games ×
    /// search.batch_size`, each in range on its own but not always their
    /// product: a pass allocates its input at once, so it is bounded by
    /// [`MAX_LEAVES_PER_PASS`].
    pub fn check_leaves(&self, search: &SearchConfig) -> Result<(), String> {
        let (games, batch) = (self.parallel_games, search.batch_size);
        let leaves = games as u64 * batch as u64;
        match leaves <= MAX_LEAVES_PER_PASS {
            true => Ok(()),
            false => Err(format!(
                "selfplay.parallel_games × search.batch_size = {games} × {batch} = {leaves} leaves in one forward \
                 pass, more than {MAX_LEAVES_PER_PASS}"
            )),
        }
    }

    /// How a full or a cheap search prepares its root.
    pub fn root(&self, full: bool) -> Root {
        match (self.gumbel_candidates, full) {
            (0, true) => Root::Noise {
                alpha: self.dirichlet_alpha,
                fraction: self.dirichlet_fraction,
                forced_playouts: self.forced_playouts,
            },
            (0, false) => Root::Plain,
            (candidates, _) => Root::Gumbel { candidates },
        }
    }
}

/// A game being played by self-play, with the search of its next decision.
pub struct SelfplayGame {
    search: Search,
    actions: Vec<Action>,
    samples: Vec<Sample>,
    /// Whether the current search is a full one (a policy target).
    full: bool,
    /// The game's seed, recorded with it.
    seed: u64,
    /// A game reaching this many actions ends (a draw).
    max_actions: u32,
}

impl Searching for SelfplayGame {
    fn search(&mut self) -> &mut Search {
        &mut self.search
    }
}

/// Whether a position is late in its game: a player has at most
/// `late_reserve` pieces in reserve (0: never).
fn is_late(position: &Position, late_reserve: u8) -> bool {
    late_reserve > 0 && [Color::White, Color::Black].into_iter().any(|color| position.reserve(color) <= late_reserve)
}

impl SelfplayGame {
    /// A game from `start`, its random source seeded with `seed`, its first
    /// search started.
    pub fn new(start: Position, max_actions: u32, seed: u64, settings: &SelfplayConfig, search: &SearchConfig) -> Self {
        let mut game = SelfplayGame {
            search: Search::new(start, seed),
            actions: Vec::new(),
            samples: Vec::new(),
            full: false,
            seed,
            max_actions,
        };
        game.start_search(settings, search);
        game
    }

    /// Starts the next search: full (a training sample, with fresh noise,
    /// making all its own visits) or cheap (stopping at the visits the
    /// reused root may already have); Gumbel candidates for either.
    fn start_search(&mut self, settings: &SelfplayConfig, search: &SearchConfig) {
        let p = settings;
        self.full = p.cheap_simulations >= p.simulations
            || is_late(self.search.tree().root_position(), p.late_reserve)
            || self.search.rng().random_bool(p.full_search_fraction);
        let target = match self.full {
            true => self.search.tree().root_visits() + p.simulations,
            false => p.cheap_simulations,
        };
        self.search.start(target, p.root(self.full), search).expect("the self-play config's roots are checked");
    }

    /// Whether the game has ended, by the rules or at `max_actions`.
    pub fn is_over(&self) -> bool {
        self.search.tree().root_position().is_over() || self.actions.len() >= self.max_actions as usize
    }

    /// The actions played so far.
    pub fn actions(&self) -> &[Action] {
        &self.actions
    }

    /// Plays while the current search is complete (a cheap search on a
    /// reused root may be complete as it starts) and the game goes on;
    /// returns the actions played, forced ones included.
    pub fn play_searched(&mut self, settings: &SelfplayConfig, search: &SearchConfig) -> usize {
        let before = self.actions.len();
        while self.search.is_done() && !self.is_over() {
            self.play(settings, search);
        }
        self.actions.len() - before
    }

    /// Plays the searched action, then the forced actions after it (the
    /// only legal one, played without search), and starts the next search.
    fn play(&mut self, settings: &SelfplayConfig, search: &SearchConfig) {
        let p = settings;
        // Cheap searches too, so that games do not share their openings.
        let explore = p.gumbel_candidates == 0 && (self.actions.len() as u32) < p.temperature_actions;
        let tree = self.search.tree();
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
        self.search.advance(chosen).expect("the search chose a legal action");
        let room = (self.max_actions as usize).saturating_sub(self.actions.len());
        self.actions.extend(self.search.skip_forced(room));
        self.start_search(settings, search);
    }

    /// The finished game as it is written: played by `model`, in the
    /// process `worker`, under the configuration `config` (as recorded).
    pub fn into_game(self, model: &str, worker: &str, config: &serde_json::Value) -> GameFile {
        let end = self.search.tree().root_position();
        GameFile {
            format: GAME_FORMAT,
            encoding_version: ENCODING_VERSION,
            variant: end.variant(),
            result: GameResult::of(end),
            actions: self.actions,
            samples: self.samples,
            model: model.to_string(),
            seed: Some(self.seed),
            worker: Some(worker.to_string()),
            config: config.clone(),
        }
    }
}

/// The games a self-play run starts: `games` of them (`None`: without end)
/// from `start`, the `i`-th seeded with the `i`-th draw of a generator
/// seeded with `seed`, so that the same evaluations give the same games in
/// the self-play program and the Python package alike.
pub struct GameSource {
    start: Position,
    max_actions: u32,
    seeds: SmallRng,
    remaining: Option<u64>,
}

impl GameSource {
    /// `games` games (`None`: without end) from `start`, each cut after
    /// `max_actions` actions, their seeds drawn from `seed`.
    pub fn new(start: Position, max_actions: u32, seed: u64, games: Option<u64>) -> GameSource {
        GameSource { start, max_actions, seeds: SmallRng::seed_from_u64(seed), remaining: games }
    }

    /// The next game, or `None` once every game wanted has started.
    pub fn next_game(&mut self, settings: &SelfplayConfig, search: &SearchConfig) -> Option<SelfplayGame> {
        if self.remaining == Some(0) {
            return None;
        }
        self.remaining = self.remaining.map(|n| n - 1);
        Some(SelfplayGame::new(self.start, self.max_actions, self.seeds.random(), settings, search))
    }
}

/// What a round of play did: the actions played, and the games that finished.
pub struct Round {
    /// Actions played in all the games, forced ones included.
    pub actions: u64,
    /// The games that ended, taken out of the batch.
    pub finished: Vec<SelfplayGame>,
}

/// Plays each game of `games` whose search is complete (on rayon's threads
/// with the `parallel` feature) and takes out those that are over.
pub fn play_round(
    games: &mut Batched<SelfplayGame>,
    settings: &SelfplayConfig,
    search: &SearchConfig,
) -> Result<Round, BatchError> {
    let played = map_each(games.games_mut(), |game| game.play_searched(settings, search));
    let finished = games.take_if(SelfplayGame::is_over)?;
    Ok(Round { actions: played.iter().sum::<usize>() as u64, finished })
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

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::rules::Variant;
    use crate::search::{Batched, ConstantForward, UniformEvaluator};

    /// `configs/tiny.toml`'s self-play: small searches, Gumbel roots.
    fn tiny() -> SelfplayConfig {
        SelfplayConfig {
            simulations: 16,
            cheap_simulations: 8,
            full_search_fraction: 0.5,
            temperature_actions: 10,
            gumbel_candidates: 4,
            parallel_games: 2,
            ..SelfplayConfig::default()
        }
    }

    fn start() -> Position {
        Position::new(Variant::Standard)
    }

    #[test]
    fn the_defaults_and_tiny_settings_are_in_range() {
        assert_eq!(SelfplayConfig::default().validate(), Ok(()));
        assert_eq!(tiny().validate(), Ok(()));
        let cheap_above_full = SelfplayConfig { cheap_simulations: 200, ..SelfplayConfig::default() };
        assert!(cheap_above_full.validate().unwrap_err().to_string().contains("selfplay.cheap_simulations"));
    }

    /// Games driven in batches end complete and consistent: every action
    /// legal in turn, the result the rules', samples only at searched plies.
    #[test]
    fn batched_games_play_to_their_end() {
        let (settings, search) = (tiny(), SearchConfig::default());
        let mut games = Batched::default();
        for seed in 0..3 {
            games.push(SelfplayGame::new(start(), 300, seed, &settings, &search));
        }
        while !games.is_empty() {
            games.evaluate(&mut ConstantForward, &search, |_| true).unwrap();
            for game in games.games_mut() {
                game.play_searched(&settings, &search);
            }
            for game in games.take_if(SelfplayGame::is_over).unwrap() {
                let record = game.into_game("constant", "unit", &serde_json::Value::Null);
                let read = GameFile::parse(&serde_json::to_string(&record).unwrap()).unwrap();
                assert!(!read.samples.is_empty() && read.samples.len() < read.actions.len());
            }
        }
    }

    /// Late positions (few pieces in reserve) are always searched fully;
    /// with `late_reserve` 0 nothing is late.
    #[test]
    fn late_positions_are_searched_fully() {
        let search = SearchConfig::default();
        let mut settings = SelfplayConfig { full_search_fraction: 0.0, ..tiny() };
        let start = start();
        let reserve = start.reserve(Color::White);
        assert!(!is_late(&start, reserve - 1) && is_late(&start, reserve) && !is_late(&start, 0));
        settings.late_reserve = reserve - 1;
        assert!(!SelfplayGame::new(start, 300, 1, &settings, &search).full, "early: the random share (none here)");
        settings.late_reserve = reserve;
        assert!(SelfplayGame::new(start, 300, 1, &settings, &search).full, "late: always full");
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
        let search = SearchConfig::default();
        // Large enough to bind under uniform priors (KataGo's 2 binds where
        // the priors are uneven).
        let settings = SelfplayConfig { gumbel_candidates: 0, forced_playouts: 20.0, ..tiny() };
        let target_is_visits = |full_search_fraction: f64| {
            let settings = SelfplayConfig { full_search_fraction, ..settings.clone() };
            let mut game = SelfplayGame::new(start(), 300, 1, &settings, &search);
            game.search.tree_mut().run(&mut UniformEvaluator, 1, &search).unwrap();
            game.start_search(&settings, &search);
            let tree = game.search.tree_mut();
            tree.run(&mut UniformEvaluator, 400, &search).unwrap();
            let total = tree.root_visits() as f32 - 1.0;
            let visits = tree.root_visit_counts();
            tree.policy_target().iter().zip(visits).all(|(&(_, p), (_, v))| (p - v as f32 / total).abs() < 1e-6)
        };
        assert!(!target_is_visits(1.0), "a full search's target is pruned");
        assert!(target_is_visits(0.0), "a cheap search's is its visits");
    }
}
