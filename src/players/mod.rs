//! Players for the arena, the engine protocol and human play: a checkpoint
//! searching with its network ([`NetworkPlayer`], here), and the core's fixed
//! baselines, described on the command line by a [`PlayerSpec`] (`spec`).

mod spec;

use std::path::Path;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use anyhow::Result;
use tch::Device;

use crate::checkpoint::load_for_play;
use crate::net::Inference;
use crate::rules::{Action, Position, Variant};
use crate::search::{Analysis, SearchConfig, Tree};
pub use gipf_core::players::{
    alphabeta, AlphaBeta, Baseline, GreedyPlayer, Limit, Player, PlayerError, RandomPlayer, Style, Uct,
};
pub use spec::{budget_from_options, parse_budget, Budget, PlayerSpec, TIMED_BATCH};

/// This process's monotonic clock, for the core's time budgets.
pub fn monotonic() -> Duration {
    static START: LazyLock<Instant> = LazyLock::new(Instant::now);
    START.elapsed()
}

/// A checkpoint's network searching each action with PUCT (no noise; the
/// most visited action is played). A player that keeps its tree goes on,
/// at its next decision, from the position reached if its last search saw
/// it, and adds its budget (simulations or time) to what is there; one that
/// does not searches each decision afresh.
pub struct NetworkPlayer {
    network: crate::net::Network,
    budget: Budget,
    keep_tree: bool,
    search: SearchConfig,
    /// The last search's tree, advanced by the action chosen.
    tree: Option<Tree>,
    /// The variant the model was trained on.
    variant: Option<Variant>,
}

/// Actions after the last decision within which a kept tree is searched for
/// the new position: the player's own removal decision, the opponent's push
/// and removal decisions.
const REUSE_DEPTH: usize = 4;

impl NetworkPlayer {
    /// Loads the checkpoint `weights` onto `device` to run as `inference` says,
    /// searching with `search`'s settings for `budget` a decision; `keep_tree`
    /// keeps its tree between decisions.
    pub fn load(
        weights: &Path,
        device: Device,
        inference: Inference,
        budget: Budget,
        keep_tree: bool,
        search: &SearchConfig,
    ) -> Result<NetworkPlayer> {
        let (network, meta) = load_for_play(weights, device, inference)?;
        let variant = meta.variant();
        Ok(NetworkPlayer { network, budget, keep_tree, search: *search, tree: None, variant })
    }
}

impl Player for NetworkPlayer {
    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        if pos.is_over() {
            return Err(PlayerError::GameOver);
        }
        if let Some(only) = pos.only_action() {
            return Ok(only);
        }
        let start = Instant::now();
        let mut tree = self.tree.take().unwrap_or_else(|| Tree::new(*pos));
        if !tree.reroot(pos, REUSE_DEPTH) {
            tree = Tree::new(*pos);
        }
        match self.budget {
            Budget::Simulations(n) => tree.run(&mut self.network, n, &self.search)?,
            Budget::Time(limit) => {
                tree.run(&mut self.network, 2, &self.search)?;
                // A root the solver has proven needs no more time.
                while start.elapsed() < limit && !tree.root_proven() {
                    tree.run(&mut self.network, self.search.batch_size as u32, &self.search)?;
                }
            }
        }
        let action = tree.best_action().expect("a searched root has actions");
        if self.keep_tree {
            tree.advance(action).expect("the search chose a legal action");
            self.tree = Some(tree);
        }
        Ok(action)
    }

    fn trained_on(&self) -> Option<Variant> {
        self.variant
    }

    fn new_game(&mut self, _seed: u64) {
        self.tree = None;
    }

    fn analyse(
        &mut self,
        pos: &Position,
        simulations: u32,
        candidates: usize,
    ) -> Result<Option<Analysis>, PlayerError> {
        if pos.is_over() {
            return Err(PlayerError::GameOver);
        }
        let mut tree = Tree::new(*pos);
        tree.run(&mut self.network, simulations, &self.search)?;
        Ok(Some(tree.analysis(candidates, ANALYSIS_DEPTH)))
    }
}

/// The longest principal variation an analysis gives.
const ANALYSIS_DEPTH: usize = 12;

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
            keep_tree: true,
            search: config.search,
            tree: None,
            variant: None,
        };
        let mut pos = Position::new(crate::rules::Variant::Basic);
        pos.play(player.choose(&pos).unwrap()).unwrap();
        let kept = player.tree.as_ref().expect("a tree is kept");
        assert_eq!(*kept.root_position(), pos);
        let (reply, visits) = *kept.root_visit_counts().iter().max_by_key(|(_, v)| *v).unwrap();
        assert!(visits > 0, "the reply was searched");
        pos.play(reply).unwrap();
        assert!(player.tree.as_mut().unwrap().reroot(&pos, REUSE_DEPTH));
        pos.play(player.choose(&pos).unwrap()).unwrap();
        assert_eq!(*player.tree.as_ref().unwrap().root_position(), pos);
        player.new_game(1);
        assert!(player.tree.is_none());
    }

    /// A network whose outputs overflow (finite weights, far too large)
    /// gives no action and no analysis: an error, not NaN priors searched.
    #[test]
    fn a_network_whose_outputs_are_not_finite_chooses_nothing() {
        tch::set_num_threads(1);
        let config = crate::config::Config::parse(include_str!("../../configs/tiny.toml")).unwrap();
        let network = crate::net::Network::new(&config.network, Device::Cpu, 1);
        tch::no_grad(|| {
            for (name, mut var) in network.vs.variables() {
                if name.starts_with("policy_fc") {
                    let _ = var.fill_(3e38);
                }
            }
        });
        let mut player = NetworkPlayer {
            network,
            budget: Budget::Simulations(16),
            keep_tree: true,
            search: config.search,
            tree: None,
            variant: None,
        };
        let pos = Position::new(crate::rules::Variant::Basic);
        let not_finite = PlayerError::NotFinite(crate::search::NotFinite);
        assert_eq!(player.choose(&pos), Err(not_finite.clone()));
        assert!(player.tree.is_none(), "no tree is kept");
        assert_eq!(player.analyse(&pos, 8, 1).unwrap_err(), not_finite);
    }

    /// Under a simulation budget the tree is kept only when asked, and the
    /// kept one goes on from the position reached.
    #[test]
    fn a_player_with_a_simulation_budget_keeps_its_tree_only_when_asked() {
        tch::set_num_threads(1);
        let config = crate::config::Config::parse(include_str!("../../configs/tiny.toml")).unwrap();
        for keep_tree in [false, true] {
            let mut player = NetworkPlayer {
                network: crate::net::Network::new(&config.network, Device::Cpu, 1),
                budget: Budget::Simulations(16),
                keep_tree,
                search: config.search,
                tree: None,
                variant: None,
            };
            let mut pos = Position::new(crate::rules::Variant::Basic);
            for _ in 0..2 {
                pos.play(player.choose(&pos).unwrap()).unwrap();
                assert_eq!(player.tree.as_ref().map(|t| *t.root_position()), keep_tree.then_some(pos));
            }
        }
    }

    /// `reference` is the model shipped with the program, and it plays.
    #[test]
    fn the_reference_model_loads_and_plays() {
        let spec = PlayerSpec::parse("reference@8", Budget::Simulations(64)).unwrap();
        assert_eq!(spec.name(), "reference (8 sims)");
        let mut player = spec.build(Device::Cpu, Inference::FP32_LIBTORCH, &SearchConfig::default(), 1).unwrap();
        let pos = crate::rules::Position::new(crate::rules::Variant::Standard);
        assert!(pos.is_legal(player.choose(&pos).unwrap()));
    }
}
