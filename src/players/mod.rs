//! Players for the arena, the engine protocol and human play: a checkpoint
//! searching with its network, and the core's fixed baselines, described on
//! the command line by a [`PlayerSpec`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use tch::Device;

use crate::checkpoint::load_checkpoint;
use crate::rules::{Action, Position};
use crate::search::{SearchConfig, Tree};
pub use gipf_core::players::{alphabeta, AlphaBeta, GreedyPlayer, Limit, Player, RandomPlayer, Uct};

/// This process's monotonic clock, for the core's time budgets.
pub fn monotonic() -> Duration {
    static START: LazyLock<Instant> = LazyLock::new(Instant::now);
    START.elapsed()
}

/// How long a searching player thinks about each action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    Simulations(u32),
    Time(Duration),
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Budget::Simulations(n) => write!(f, "{n} sims"),
            Budget::Time(d) => write!(f, "{} ms", d.as_millis()),
        }
    }
}

/// A player described on the command line: `random`, `greedy`, `uct:N` (N
/// random playouts per action), `alphabeta:D` (alpha-beta to D pushes) or
/// `alphabeta:MSms` (iterative deepening for MS milliseconds per action), or
/// a checkpoint's weights file (or its URL in an object store, or a store's
/// models folder for its newest: see [`crate::store::fetch_checkpoint`]),
/// optionally with its own budget after `@`:
/// `models/step-00001000.safetensors@200` (simulations) or `...@500ms`
/// (time per action).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    Random,
    Greedy,
    Uct { playouts: u32 },
    AlphaBeta { limit: Limit },
    Network { weights: PathBuf, budget: Budget },
}

impl PlayerSpec {
    /// Reads a spec; checkpoints without their own budget get `default_budget`.
    pub fn parse(text: &str, default_budget: Budget) -> Result<PlayerSpec> {
        Ok(match text {
            "random" => PlayerSpec::Random,
            "greedy" => PlayerSpec::Greedy,
            _ if text.starts_with("uct:") => {
                let n = &text[4..];
                match n.parse::<u32>() {
                    Ok(playouts) if playouts > 0 => PlayerSpec::Uct { playouts },
                    _ => bail!("player '{text}': expected uct:N with N a positive number of playouts"),
                }
            }
            _ if text.starts_with("alphabeta:") => PlayerSpec::AlphaBeta { limit: parse_limit(text)? },
            "" => bail!("empty player: expected random, greedy, uct:N, alphabeta:D or a checkpoint's weights file"),
            _ => {
                let (path, budget) = match text.rsplit_once('@') {
                    Some((path, budget)) => (path, parse_budget(budget).with_context(|| format!("player '{text}'"))?),
                    None => (text, default_budget),
                };
                let weights = match crate::store::is_url(path) {
                    true => crate::store::fetch_checkpoint(path).with_context(|| format!("player '{text}'"))?,
                    false => PathBuf::from(path),
                };
                if !weights.is_file() {
                    bail!(
                        "player '{text}': no such weights file {} (players are random, greedy, uct:N, alphabeta:D or a checkpoint)",
                        weights.display()
                    );
                }
                PlayerSpec::Network { weights, budget }
            }
        })
    }

    /// A short name for tables and rating files.
    pub fn name(&self) -> String {
        match self {
            PlayerSpec::Random => "random".into(),
            PlayerSpec::Greedy => "greedy".into(),
            PlayerSpec::Uct { playouts } => format!("uct:{playouts}"),
            PlayerSpec::AlphaBeta { limit: Limit::Depth(d) } => format!("alphabeta:{d}"),
            PlayerSpec::AlphaBeta { limit: Limit::Time(t) } => format!("alphabeta:{}ms", t.as_millis()),
            PlayerSpec::Network { weights, budget } => {
                let stem =
                    weights.file_stem().map_or_else(|| weights.display().to_string(), |s| s.to_string_lossy().into());
                format!("{stem} ({budget})")
            }
        }
    }

    /// Makes the player; a network is loaded onto `device`.
    pub fn build(&self, device: Device, search: &SearchConfig, seed: u64) -> Result<Box<dyn Player>> {
        Ok(match self {
            PlayerSpec::Random => Box::new(RandomPlayer::new(seed)),
            PlayerSpec::Greedy => Box::new(GreedyPlayer::new(seed)),
            PlayerSpec::Uct { playouts } => Box::new(Uct::new(*playouts, rand::SeedableRng::seed_from_u64(seed))),
            PlayerSpec::AlphaBeta { limit } => Box::new(AlphaBeta::new(*limit, monotonic)),
            PlayerSpec::Network { weights, budget } => Box::new(NetworkPlayer::load(weights, device, *budget, search)?),
        })
    }
}

/// `alphabeta:D` (depth in pushes, 1..=32) or `alphabeta:MSms`.
fn parse_limit(text: &str) -> Result<Limit> {
    let arg = &text["alphabeta:".len()..];
    let limit = match arg.strip_suffix("ms").map(str::parse::<u64>) {
        Some(Ok(ms)) if ms > 0 => Some(Limit::Time(Duration::from_millis(ms))),
        Some(_) => None,
        None => arg.parse::<u32>().ok().filter(|d| (1..=32).contains(d)).map(Limit::Depth),
    };
    limit.with_context(|| {
        format!("player '{text}': expected alphabeta:D with D a depth from 1 to 32, or alphabeta:MSms with MS > 0")
    })
}

/// The budget of command-line options: `movetime` milliseconds when given, else `sims` simulations.
pub fn budget_from_options(sims: u32, movetime: Option<u64>) -> Result<Budget> {
    Ok(match movetime {
        Some(0) => bail!("--movetime must be positive"),
        Some(ms) => Budget::Time(Duration::from_millis(ms)),
        None if sims < 2 => bail!("--sims must be at least 2"),
        None => Budget::Simulations(sims),
    })
}

/// `N` simulations or `Nms` milliseconds.
pub fn parse_budget(text: &str) -> Result<Budget> {
    let (number, millis) = match text.strip_suffix("ms") {
        Some(n) => (n, true),
        None => (text, false),
    };
    match number.parse::<u32>() {
        Ok(n) if millis && n > 0 => Ok(Budget::Time(Duration::from_millis(n as u64))),
        Ok(n) if !millis && n >= 2 => Ok(Budget::Simulations(n)),
        _ => bail!("budget '{text}': expected simulations (N >= 2) or milliseconds (Nms, N > 0)"),
    }
}

/// A checkpoint's network searching each action with PUCT (no noise; the
/// most visited action is played). Under a time budget it keeps its tree
/// from one decision to the next, as engines do, and goes on from the
/// position reached if its last search saw it; under a simulation budget
/// each decision is searched afresh with exactly that many simulations, so
/// that fixed-simulation matches stay a fixed measure.
pub struct NetworkPlayer {
    network: crate::net::Network,
    budget: Budget,
    search: SearchConfig,
    /// The last search's tree, advanced by the action chosen.
    tree: Option<Tree>,
}

/// Actions after the last decision within which a kept tree is searched for
/// the new position: the player's own removal decision, the opponent's push
/// and removal decisions.
const REUSE_DEPTH: usize = 4;

impl NetworkPlayer {
    pub fn load(weights: &Path, device: Device, budget: Budget, search: &SearchConfig) -> Result<NetworkPlayer> {
        let (network, _) = load_checkpoint(weights, device)?;
        Ok(NetworkPlayer { network, budget, search: *search, tree: None })
    }
}

impl Player for NetworkPlayer {
    fn choose(&mut self, pos: &Position) -> Action {
        let legal = pos.legal_actions();
        if legal.len() == 1 {
            return legal[0];
        }
        let action = match self.budget {
            Budget::Simulations(n) => {
                let mut tree = Tree::new(*pos);
                tree.run(&mut self.network, n, &self.search);
                tree.best_action()
            }
            Budget::Time(limit) => {
                let start = Instant::now();
                let mut tree = self.tree.take().unwrap_or_else(|| Tree::new(*pos));
                if !tree.reroot(pos, REUSE_DEPTH) {
                    tree = Tree::new(*pos);
                }
                tree.run(&mut self.network, 2, &self.search);
                while start.elapsed() < limit {
                    tree.run(&mut self.network, self.search.batch_size as u32, &self.search);
                }
                let action = tree.best_action();
                if let Some(action) = action {
                    tree.advance(action);
                    self.tree = Some(tree);
                }
                action
            }
        };
        action.expect("a searched root has actions")
    }

    fn new_game(&mut self, _seed: u64) {
        self.tree = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under a time budget the tree kept after a decision holds the position
    /// after the opponent's reply, and a new game drops it.
    #[test]
    fn a_timed_player_keeps_its_tree_for_the_next_decision() {
        tch::set_num_threads(1);
        let config = crate::config::Config::parse(include_str!("../../configs/tiny.toml")).unwrap();
        let mut player = NetworkPlayer {
            network: crate::net::Network::new(&config.network, Device::Cpu, 1),
            budget: Budget::Time(Duration::from_millis(100)),
            search: config.search,
            tree: None,
        };
        let mut pos = Position::new(crate::rules::Variant::Basic);
        pos.play(player.choose(&pos)).unwrap();
        let kept = player.tree.as_ref().expect("a tree is kept");
        assert_eq!(*kept.root_position(), pos);
        let (reply, visits) = *kept.root_visit_counts().iter().max_by_key(|(_, v)| *v).unwrap();
        assert!(visits > 0, "the reply was searched");
        pos.play(reply).unwrap();
        assert!(player.tree.as_mut().unwrap().reroot(&pos, REUSE_DEPTH));
        pos.play(player.choose(&pos)).unwrap();
        assert_eq!(*player.tree.as_ref().unwrap().root_position(), pos);
        player.new_game(1);
        assert!(player.tree.is_none());
    }

    #[test]
    fn specs_parse_and_bad_ones_are_named() {
        let sims = Budget::Simulations(64);
        assert_eq!(PlayerSpec::parse("random", sims).unwrap(), PlayerSpec::Random);
        assert_eq!(PlayerSpec::parse("uct:1000", sims).unwrap(), PlayerSpec::Uct { playouts: 1000 });
        assert_eq!(PlayerSpec::parse("alphabeta:3", sims).unwrap(), PlayerSpec::AlphaBeta { limit: Limit::Depth(3) });
        let timed = PlayerSpec::parse("alphabeta:250ms", sims).unwrap();
        assert_eq!(timed, PlayerSpec::AlphaBeta { limit: Limit::Time(Duration::from_millis(250)) });
        assert_eq!(timed.name(), "alphabeta:250ms");
        for bad in ["alphabeta:0", "alphabeta:x", "alphabeta:", "alphabeta:0ms", "alphabeta:33", "alphabeta:-1"] {
            let err = PlayerSpec::parse(bad, sims).unwrap_err();
            assert!(format!("{err:#}").contains("expected alphabeta:D"), "{bad}: {err:#}");
        }
        for bad in ["uct:", "uct:0", "uct:x", "", "no/such/file.safetensors", "no/such@12"] {
            assert!(PlayerSpec::parse(bad, sims).is_err(), "{bad}");
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.safetensors");
        std::fs::write(&file, b"x").unwrap();
        let spec = PlayerSpec::parse(&format!("{}@250ms", file.display()), sims).unwrap();
        assert_eq!(
            spec,
            PlayerSpec::Network { weights: file.clone(), budget: Budget::Time(Duration::from_millis(250)) }
        );
        let err = PlayerSpec::parse(&format!("{}@1", file.display()), sims).unwrap_err();
        assert!(format!("{err:#}").contains("budget '1'"), "{err:#}");
    }
}
