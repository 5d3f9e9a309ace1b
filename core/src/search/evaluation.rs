//! What the search asks of an evaluator (a network, or a stand-in): priors
//! over the legal actions and a value.

use super::batched::map_each;
use crate::encoding::{encode, INPUT_SIZE, NUM_ACTIONS};
use crate::rules::{Action, Position};

/// What an evaluator says of a position: its legal actions (as
/// [`Position::legal_actions`] gives them, computed once for the priors and
/// the expansion), a prior for each (summing to 1), and the value for the
/// player to act, in [-1, 1].
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The legal actions, in [`Position::legal_actions`]' order.
    pub actions: Vec<Action>,
    /// A prior for each of `actions`, at the same index.
    pub priors: Vec<f32>,
    /// The value for the player to act, in [-1, 1].
    pub value: f32,
}

impl Evaluation {
    /// Whether its value and priors are finite numbers.
    pub fn is_finite(&self) -> bool {
        self.value.is_finite() && self.priors.iter().all(|p| p.is_finite())
    }

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

/// A network as the batched search uses it ([`super::Batched`]): outputs
/// for a batch of encoded positions. Encoding, and priors from the logits,
/// are the search's CPU work.
pub trait Forward {
    /// Policy logits (`n` rows of [`crate::encoding::NUM_ACTIONS`]) and
    /// values (`n`) for `n` positions encoded as [`crate::encoding::encode`]
    /// writes them.
    fn forward(&mut self, input: &[f32], n: usize) -> (Vec<f32>, Vec<f32>);
}

/// Outputs of the network's shape at no cost (all logits and values 0, so
/// uniform priors): for a search guided by nothing but the rules, or for
/// measuring the search's CPU side alone, as it runs beside a fast GPU.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConstantForward;

impl Forward for ConstantForward {
    fn forward(&mut self, _input: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        (vec![0.0; n * NUM_ACTIONS], vec![0.0; n])
    }
}

/// A network evaluates positions through its forward pass: encoded, and
/// priors from the logits of the legal actions (on rayon's threads with the
/// `parallel` feature).
impl<F: Forward> Evaluator for F {
    fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation> {
        let mut input = vec![0.0f32; positions.len() * INPUT_SIZE];
        let mut jobs: Vec<(&mut [f32], &Position)> = input.chunks_mut(INPUT_SIZE).zip(positions).collect();
        map_each(&mut jobs, |(chunk, pos)| encode(pos, chunk));
        let (logits, values) = self.forward(&input, positions.len());
        let mut jobs: Vec<(&Position, &[f32], f32)> =
            positions.iter().zip(logits.chunks(NUM_ACTIONS)).zip(values).map(|((p, l), v)| (p, l, v)).collect();
        map_each(&mut jobs, |&mut (pos, logits, value)| Evaluation::from_logits(pos, logits, value))
    }
}

/// Uniform priors and a value of 0: search guided by nothing but the rules.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation> {
        positions.iter().map(|p| Evaluation::uniform(p, 0.0)).collect()
    }
}
