//! The arena: matches between players (checkpoints with a search budget, or
//! baselines), both colours equally, from seeded random openings, games in
//! parallel; results with intervals, an optional SPRT stop, matches played
//! in pieces, and the ratings of a run's checkpoints.
//!
//! A short match of two baselines:
//!
//! ```rust
//! use gipf::arena::{play_match, MatchOptions};
//! use gipf::players::{Budget, PlayerSpec};
//! use gipf::rules::Variant;
//!
//! let budget = Budget::Simulations(2);
//! let (greedy, random) = (PlayerSpec::parse("greedy", budget)?, PlayerSpec::parse("random", budget)?);
//! let options = MatchOptions {
//!     variant: Variant::Basic,
//!     games: 2,
//!     opening_actions: 2,
//!     max_actions: 300,
//!     threads: 1,
//!     seed: 1,
//!     sprt: None,
//!     device: tch::Device::Cpu,
//!     inference: Default::default(),
//!     search: Default::default(),
//! };
//! let report = play_match(&greedy, &random, &options, &mut |_| {})?;
//! assert_eq!(report.tally.games(), 2);
//! println!("greedy scored {:.2} against random", report.tally.score());
//! # Ok::<(), anyhow::Error>(())
//! ```

pub(crate) mod batched;
pub mod gate;
pub mod ratings;
pub mod record;
pub mod stats;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Result;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use tch::Device;

use crate::net::Inference;
use crate::players::{Player, PlayerError, PlayerSpec};
use crate::rules::{Color, Position, Variant};
use crate::search::SearchConfig;
pub use stats::{Sprt, SprtDecision, Tally, MAX_MATCH_GAMES};

/// How a match is played.
#[derive(Clone, Debug)]
pub struct MatchOptions {
    /// The game played.
    pub variant: Variant,
    /// Games to play (at most, with an SPRT). Games come in pairs: the same
    /// opening with the colours swapped.
    pub games: u32,
    /// Random actions played before the players take over.
    pub opening_actions: u32,
    /// A game reaching this many actions is a draw.
    pub max_actions: u32,
    /// Games played at once (each thread holds its own copy of both players).
    pub threads: usize,
    /// Seeds the openings and the players' own random choices.
    pub seed: u64,
    /// A test that ends the match once it decides; `None` plays every game.
    pub sprt: Option<Sprt>,
    /// The device the networks run on.
    pub device: Device,
    /// The number format of the networks' forward passes.
    pub inference: Inference,
    /// The networks' search settings, besides the budget each spec names.
    pub search: SearchConfig,
}

/// What a match gave.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatchReport {
    /// From A's side.
    pub tally: Tally,
    /// The SPRT's verdict, when one was asked for.
    pub decision: Option<SprtDecision>,
    /// The games' mean length in actions, the random opening's included.
    pub mean_length: f64,
    /// The time A and B took per action.
    pub think: [ThinkTime; 2],
}

/// The wall-clock time a player took per action.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ThinkTime {
    /// The actions timed.
    pub actions: u64,
    /// Their time in all.
    pub total: Duration,
    /// The longest of them.
    pub max: Duration,
}

impl ThinkTime {
    fn add(&mut self, took: Duration) {
        self.actions += 1;
        self.total += took;
        self.max = self.max.max(took);
    }

    fn merge(&mut self, other: &ThinkTime) {
        self.actions += other.actions;
        self.total += other.total;
        self.max = self.max.max(other.max);
    }

    /// The mean time per action (zero before any action).
    pub fn mean(&self) -> Duration {
        self.total / self.actions.max(1) as u32
    }
}

/// Game `game` of a match: where it starts and A's colour. Games 2k and
/// 2k + 1 start from the same opening, A white in the first, black in the
/// second, so that neither the opening nor the first move favours a side.
pub fn pairing(options: &MatchOptions, game: u32) -> (Position, Color) {
    let start = opening(options.variant, options.opening_actions, options.seed, game / 2);
    (start, if game.is_multiple_of(2) { Color::White } else { Color::Black })
}

/// The opening of game pair `pair`: `n` random actions from the start.
pub fn opening(variant: Variant, n: u32, seed: u64, pair: u32) -> Position {
    let mut rng = SmallRng::seed_from_u64(seed ^ (pair as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut pos = Position::new(variant);
    for _ in 0..n {
        if pos.is_over() {
            break;
        }
        pos.play_unchecked(*pos.legal_actions().choose(&mut rng).expect("a game not over has legal actions"));
    }
    pos
}

/// Plays from `pos` to the end or to `max_actions` actions in all; returns
/// the winner (`None` at the cap), the number of actions, and the time
/// each side took (white's, then black's), or why a player chose nothing.
pub fn play_game(
    white: &mut dyn Player,
    black: &mut dyn Player,
    mut pos: Position,
    played: u32,
    max_actions: u32,
) -> Result<(Option<Color>, u32, [ThinkTime; 2]), PlayerError> {
    let mut actions = played;
    let mut think = [ThinkTime::default(); 2];
    while !pos.is_over() && actions < max_actions {
        let color = pos.to_act().expect("the game is not over");
        let start = Instant::now();
        let action = match color {
            Color::White => white.choose(&pos)?,
            Color::Black => black.choose(&pos)?,
        };
        think[color.index()].add(start.elapsed());
        pos.play(action).expect("players choose legal actions");
        actions += 1;
    }
    Ok((pos.outcome().map(|o| o.winner), actions, think))
}

/// Plays a match of `a` against `b`. `on_game` sees the tally after each game.
pub fn play_match(
    a: &PlayerSpec,
    b: &PlayerSpec,
    options: &MatchOptions,
    on_game: &mut dyn FnMut(&Tally),
) -> Result<MatchReport> {
    let threads = options.threads.clamp(1, options.games.max(1) as usize);
    let mut pairs: Vec<(Box<dyn Player>, Box<dyn Player>)> = Vec::new();
    for t in 0..threads as u64 {
        let seed = options.seed.wrapping_add(1000 * t);
        pairs.push((
            a.build(options.device, options.inference, &options.search, seed)?,
            b.build(options.device, options.inference, &options.search, seed + 1)?,
        ));
    }
    for (spec, player) in [(a, &pairs[0].0), (b, &pairs[0].1)] {
        if let Some(trained) = player.trained_on().filter(|&v| v != options.variant) {
            tracing::warn!("{} was trained on the {trained} variant and plays {} here", spec.name(), options.variant);
        }
    }
    let next = AtomicU32::new(0);
    let stop = AtomicBool::new(false);
    let (sender, receiver) = mpsc::channel::<Result<(Option<bool>, u32, [ThinkTime; 2]), PlayerError>>();
    let mut failure = None;
    let mut tally = Tally::default();
    let mut decision = options.sprt.map(|_| SprtDecision::Continue);
    let mut total_length = 0u64;
    let mut think = [ThinkTime::default(); 2];
    std::thread::scope(|scope| {
        for (mut pa, mut pb) in pairs {
            let (next, stop, sender) = (&next, &stop, sender.clone());
            scope.spawn(move || {
                let _guard = tch::no_grad_guard();
                while !stop.load(Ordering::Relaxed) {
                    let game = next.fetch_add(1, Ordering::Relaxed);
                    if game >= options.games {
                        break;
                    }
                    let (start, a_color) = pairing(options, game);
                    let game_seed = options.seed ^ (game as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03);
                    pa.new_game(game_seed);
                    pb.new_game(game_seed.rotate_left(32));
                    let (white, black): (&mut dyn Player, &mut dyn Player) = match a_color {
                        Color::White => (&mut *pa, &mut *pb),
                        Color::Black => (&mut *pb, &mut *pa),
                    };
                    let played = play_game(white, black, start, options.opening_actions, options.max_actions);
                    // A's time first.
                    let result = played.map(|(winner, length, think)| {
                        (
                            winner.map(|w| w == a_color),
                            length,
                            [think[a_color.index()], think[a_color.opponent().index()]],
                        )
                    });
                    if sender.send(result).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for result in receiver {
            let (a_won, length, game_think) = match result {
                Ok(game) => game,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(e);
                    continue;
                }
            };
            think[0].merge(&game_think[0]);
            think[1].merge(&game_think[1]);
            tally.add(a_won);
            total_length += length as u64;
            on_game(&tally);
            // The first verdict stands; games already in flight still count in the tally.
            if let (Some(sprt), Some(SprtDecision::Continue)) = (options.sprt, decision) {
                let verdict = sprt.decide(&tally);
                decision = Some(verdict);
                if verdict != SprtDecision::Continue {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
    });
    if let Some(e) = failure {
        anyhow::bail!("{} against {}: {e}", a.name(), b.name());
    }
    Ok(MatchReport { tally, decision, mean_length: total_length as f64 / tally.games().max(1) as f64, think })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::players::Baseline;

    fn options(games: u32) -> MatchOptions {
        MatchOptions {
            variant: Variant::Standard,
            games,
            opening_actions: 2,
            max_actions: 600,
            threads: 2,
            seed: 7,
            sprt: None,
            device: Device::Cpu,
            inference: Default::default(),
            search: SearchConfig::default(),
        }
    }

    #[test]
    fn a_seeded_match_gives_the_same_results_whatever_the_threads() {
        let (a, b) = (PlayerSpec::Baseline(Baseline::Uct { playouts: 30 }), PlayerSpec::Baseline(Baseline::Greedy));
        let play = |threads| play_match(&a, &b, &MatchOptions { threads, ..options(8) }, &mut |_| {}).unwrap();
        let (one, two) = (play(1), play(3));
        assert_eq!((one.tally, one.mean_length), (two.tally, two.mean_length));
        assert_eq!(one.think.map(|t| t.actions), two.think.map(|t| t.actions));
        assert_eq!(one.think[0].actions + one.think[1].actions, (one.mean_length * 8.0).round() as u64 - 8 * 2);
    }

    #[test]
    fn every_game_is_counted_once_and_openings_repeat_by_pair() {
        let mut seen = 0;
        let r = play_match(
            &PlayerSpec::Baseline(Baseline::Random),
            &PlayerSpec::Baseline(Baseline::Random),
            &options(6),
            &mut |t| {
                seen += 1;
                assert_eq!(t.games(), seen);
            },
        )
        .unwrap();
        assert_eq!(r.tally.games(), 6);
        let options = options(6);
        for pair in 0..3 {
            let ((first, a_first), (second, a_second)) = (pairing(&options, 2 * pair), pairing(&options, 2 * pair + 1));
            assert_eq!(first, second, "pair {pair} shares its opening");
            assert_eq!((a_first, a_second), (Color::White, Color::Black), "pair {pair} swaps colours");
            assert_ne!(first, pairing(&options, 2 * pair + 2).0, "the next pair opens otherwise");
        }
    }

    /// UCT beats random clearly, and the SPRT stops the match early.
    #[test]
    fn the_stronger_player_wins_and_sprt_stops_early() {
        let sprt = Sprt { elo0: 0.0, elo1: 100.0, alpha: 0.05, beta: 0.05 };
        let r = play_match(
            &PlayerSpec::Baseline(Baseline::Uct { playouts: 100 }),
            &PlayerSpec::Baseline(Baseline::Random),
            &MatchOptions { sprt: Some(sprt), ..options(200) },
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(r.decision, Some(SprtDecision::H1), "{r:?}");
        assert!(r.tally.games() < 60, "{r:?}");
        assert!(r.tally.score() > 0.8, "{r:?}");
    }
}
