//! What the search asks of an evaluator (a network, or a stand-in): priors
//! over the legal actions and a value.

use crate::rules::{Action, Position};

/// What an evaluator says of a position: its legal actions (as
/// [`Position::legal_actions`] gives them, computed once for the priors and
/// the expansion), a prior for each (summing to 1), and the value for the
/// player to act, in [-1, 1].
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    pub actions: Vec<Action>,
    pub priors: Vec<f32>,
    pub value: f32,
}

impl Evaluation {
    /// Equal priors over the legal actions of `pos`, and `value`.
    pub fn uniform(pos: &Position, value: f32) -> Evaluation {
        let actions = pos.legal_actions();
        let n = actions.len();
        Evaluation { actions, priors: vec![1.0 / n as f32; n], value }
    }
}

impl Evaluation {
    /// The evaluation a network gives `pos` (not over) with `logits` over
    /// all the action indices of [`crate::encoding`]: the legal actions'
    /// softmax as priors, and `value`.
    pub fn from_logits(pos: &Position, logits: &[f32], value: f32) -> Evaluation {
        let actions = pos.legal_actions();
        let mut priors: Vec<f32> = actions.iter().map(|&a| logits[crate::encoding::action_index(a)]).collect();
        softmax(&mut priors);
        Evaluation { actions, priors, value }
    }
}

/// Turns logits into probabilities, in place.
pub fn softmax(logits: &mut [f32]) {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    logits.iter_mut().for_each(|x| *x = (*x - max).exp());
    let sum: f32 = logits.iter().sum();
    logits.iter_mut().for_each(|x| *x /= sum);
}

/// Evaluates positions in batches (a network, or a simple stand-in).
pub trait Evaluator {
    /// One evaluation per position; none of them is over.
    fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation>;
}

/// Uniform priors and a value of 0: search guided by nothing but the rules.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation> {
        positions.iter().map(|p| Evaluation::uniform(p, 0.0)).collect()
    }
}
