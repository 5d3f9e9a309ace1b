//! The tree search's settings and their bounds.

use crate::bounds::{check_positive, check_range, check_unit, check_up_to, Checked};

/// The most simulations one search may be asked for (a self-play decision,
/// an analysis, the web board's and the Python package's searches), so
/// that no request can take a machine's memory.
pub const MAX_SIMULATIONS: u32 = 100_000;

/// The tree search's settings (`[search]`): self-play, the arena, the
/// engine and the web board search with them.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// Exploration constant of PUCT.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value
    /// less this.
    pub fpu_reduction: f32,
    /// Leaves gathered from one tree for each call to the evaluator.
    pub batch_size: usize,
    /// Visits a pending leaf counts as lost, so that one batch spreads out.
    pub virtual_loss: f32,
    /// MCTS-solver: finished games found in the tree prove wins and losses
    /// upwards (a position is won when one action wins it, lost when every
    /// action loses it); the search then always takes a proven win, never
    /// a proven loss while another action is open, and stops spending
    /// simulations below proven positions.
    #[serde(default)]
    pub solver: bool,
    /// The priors are the network's policy softmax(logits / T) with this
    /// T: above 1 the search spreads wider than the policy (Leela Chess
    /// Zero's policy softmax temperature), 1 takes the policy as it is.
    #[serde(default = "one")]
    pub policy_temperature: f32,
}

fn one() -> f32 {
    1.0
}

impl SearchConfig {
    /// Checks each setting against its range, naming it as `search.KEY`.
    pub fn validate(&self) -> Checked {
        check_positive("search.c_puct", self.c_puct as f64, 100.0)?;
        check_unit("search.fpu_reduction", self.fpu_reduction as f64)?;
        check_range("search.batch_size", self.batch_size as i64, 1, MAX_BATCH as i64)?;
        check_positive("search.policy_temperature", self.policy_temperature as f64, 10.0)?;
        check_up_to("search.virtual_loss", self.virtual_loss as f64, 10.0)
    }
}

/// The most leaves one tree gathers for a batch.
pub const MAX_BATCH: usize = 256;

/// The settings of `configs/cpu.toml`'s `[search]` (tested there), which
/// the web board's engine uses when a request sends none.
impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            c_puct: 1.5,
            fpu_reduction: 0.2,
            batch_size: 4,
            virtual_loss: 1.0,
            solver: false,
            policy_temperature: 1.0,
        }
    }
}
