//! The baseline players by name, one grammar and one set of bounds for the
//! command line, the Python package and the web board: `random`, `greedy`,
//! `uct:N` (N random playouts per action), `alphabeta:D` or
//! `alphabeta:MSms` (alpha-beta to D pushes, or iterative deepening for MS
//! milliseconds per action) and `classic:D` or `classic:MSms` (the stronger
//! classical player).

use std::time::Duration;

use rand::SeedableRng;

use super::{AlphaBeta, Clock, GreedyPlayer, Limit, Player, RandomPlayer, Style, Uct};

/// The most random playouts `uct:N` may ask for.
pub const MAX_UCT_PLAYOUTS: u32 = 100_000;
/// The deepest `alphabeta:D` and `classic:D` may search, in pushes.
pub const MAX_DEPTH: u32 = 32;
/// The longest `alphabeta:MSms` and `classic:MSms` may think, in milliseconds.
pub const MAX_MILLIS: u64 = 3_600_000;

/// A baseline player, as its name says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// `random`: [`RandomPlayer`].
    Random,
    /// `greedy`: [`GreedyPlayer`].
    Greedy,
    /// `uct:N`: [`Uct`].
    Uct {
        /// Random playouts per action, 1 to [`MAX_UCT_PLAYOUTS`].
        playouts: u32,
    },
    /// `alphabeta:D`, `alphabeta:MSms`, `classic:D` or `classic:MSms`: [`AlphaBeta`].
    AlphaBeta {
        /// Which of the two.
        style: Style,
        /// How deep or how long it searches.
        limit: Limit,
    },
}

/// A name that starts as a baseline's and does not fit its grammar.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("player '{name}': expected {expected}")]
pub struct BaselineError {
    /// The name as given.
    pub name: String,
    /// The grammar the name should have followed, with its bounds.
    pub expected: String,
}

impl Baseline {
    /// The baseline `name` describes; `None` where it names none (a
    /// checkpoint, say), an error where it starts as one and does not fit.
    pub fn parse(name: &str) -> Option<Result<Baseline, BaselineError>> {
        let error = |expected: String| BaselineError { name: name.to_string(), expected };
        let (kind, arg) = name.split_once(':').unwrap_or((name, ""));
        Some(match (kind, name.contains(':')) {
            ("random", false) => Ok(Baseline::Random),
            ("greedy", false) => Ok(Baseline::Greedy),
            ("uct", true) => match arg.parse::<u32>() {
                Ok(playouts) if (1..=MAX_UCT_PLAYOUTS).contains(&playouts) => Ok(Baseline::Uct { playouts }),
                _ => Err(error(format!("uct:N with N from 1 to {MAX_UCT_PLAYOUTS} random playouts"))),
            },
            ("alphabeta" | "classic", true) => {
                let style = if kind == "classic" { Style::Classic } else { Style::AlphaBeta };
                parse_limit(arg).map(|limit| Baseline::AlphaBeta { style, limit }).ok_or_else(|| {
                    error(format!(
                        "{kind}:D with D a depth from 1 to {MAX_DEPTH}, or {kind}:MSms with MS from 1 to {MAX_MILLIS}"
                    ))
                })
            }
            _ => return None,
        })
    }

    /// Its name, as [`Baseline::parse`] reads it.
    pub fn name(&self) -> String {
        match self {
            Baseline::Random => "random".into(),
            Baseline::Greedy => "greedy".into(),
            Baseline::Uct { playouts } => format!("uct:{playouts}"),
            Baseline::AlphaBeta { style, limit } => {
                let kind = match style {
                    Style::AlphaBeta => "alphabeta",
                    Style::Classic => "classic",
                };
                match limit {
                    Limit::Depth(d) => format!("{kind}:{d}"),
                    Limit::Time(t) => format!("{kind}:{}ms", t.as_millis()),
                }
            }
        }
    }

    /// The player, its randomness drawn from `seed`; a time limit reads
    /// `clock`.
    pub fn build(&self, seed: u64, clock: Clock) -> Box<dyn Player> {
        match *self {
            Baseline::Random => Box::new(RandomPlayer::new(seed)),
            Baseline::Greedy => Box::new(GreedyPlayer::new(seed)),
            Baseline::Uct { playouts } => Box::new(Uct::new(playouts, rand::rngs::SmallRng::seed_from_u64(seed))),
            Baseline::AlphaBeta { style, limit } => Box::new(AlphaBeta::with_style(style, limit, clock)),
        }
    }
}

/// `D` (a depth in pushes) or `MSms`, within the bounds.
fn parse_limit(arg: &str) -> Option<Limit> {
    match arg.strip_suffix("ms") {
        Some(ms) => ms
            .parse::<u64>()
            .ok()
            .filter(|ms| (1..=MAX_MILLIS).contains(ms))
            .map(Duration::from_millis)
            .map(Limit::Time),
        None => arg.parse::<u32>().ok().filter(|d| (1..=MAX_DEPTH).contains(d)).map(Limit::Depth),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each name reads back as itself; names past the bounds or out of the
    /// grammar are errors that say what is expected; other names are none
    /// of the baselines'.
    #[test]
    fn names_parse_within_their_bounds() {
        for name in [
            "random",
            "greedy",
            "uct:1",
            "uct:100000",
            "alphabeta:1",
            "alphabeta:32",
            "classic:250ms",
            "alphabeta:3600000ms",
        ] {
            let baseline = Baseline::parse(name).unwrap().unwrap();
            assert_eq!(baseline.name(), name);
        }
        assert_eq!(
            Baseline::parse("classic:3").unwrap(),
            Ok(Baseline::AlphaBeta { style: Style::Classic, limit: Limit::Depth(3) })
        );
        for (bad, expected) in [
            ("uct:0", "uct:N with N from 1 to 100000"),
            ("uct:100001", "uct:N"),
            ("uct:x", "uct:N"),
            ("alphabeta:0", "alphabeta:D with D a depth from 1 to 32"),
            ("classic:33", "classic:D"),
            ("classic:0ms", "classic:MSms"),
            ("classic:3600001ms", "classic:MSms"),
            ("alphabeta:", "alphabeta:D"),
        ] {
            let err = Baseline::parse(bad).unwrap().unwrap_err();
            assert!(err.to_string().contains(expected), "{bad}: {err}");
        }
        for other in ["reference", "models/step-1.safetensors", "random:3", "greedy:1", "uct", "classic"] {
            assert_eq!(Baseline::parse(other), None, "{other}");
        }
    }
}
