//! Gumbel root selection (Danihelka et al., "Policy improvement by planning
//! with Gumbel", 2022): sample `m` root actions without replacement by
//! Gumbel-top-k, share the simulations among them by sequential halving, and
//! keep the one with the best `g + logit + sigma(q)`. Good with few
//! simulations, where PUCT with noise explores poorly.

use rand::Rng;

/// `sigma(q) = (C_VISIT + max visits) * C_SCALE * q`, with `q` scaled to [0, 1].
const C_VISIT: f32 = 50.0;
const C_SCALE: f32 = 1.0;

/// The halving state of a root: indices are offsets among the root's edges.
/// Visits are counted from the start of this search, so that a root reused
/// from the previous search shares out its new budget as a fresh one would.
#[derive(Clone, Debug)]
pub(super) struct GumbelRoot {
    /// Gumbel noise plus log prior, for every root edge.
    score: Vec<f32>,
    /// Each edge's visits when this search started.
    base: Vec<u32>,
    /// Candidates still in the halving.
    remaining: Vec<usize>,
    /// Visits every remaining candidate gets before the next halving.
    phase_target: u32,
    phases: u32,
    budget: u32,
}

/// `sigma` of a value in [-1, 1], given the most visits of any root action.
pub(super) fn sigma(q: f32, max_visits: u32) -> f32 {
    (C_VISIT + max_visits as f32) * C_SCALE * (q + 1.0) / 2.0
}

impl GumbelRoot {
    /// Draws the candidates: the `m` best of `log prior + Gumbel noise`.
    /// `base` holds each edge's visits so far.
    pub(super) fn new(priors: &[f32], base: Vec<u32>, m: usize, budget: u32, rng: &mut impl Rng) -> GumbelRoot {
        let score: Vec<f32> = priors
            .iter()
            .map(|&p| {
                let u: f32 = rng.random_range(f32::MIN_POSITIVE..1.0);
                p.max(1e-12).ln() - (-u.ln()).ln()
            })
            .collect();
        let mut order: Vec<usize> = (0..priors.len()).collect();
        order.sort_by(|&a, &b| score[b].total_cmp(&score[a]));
        order.truncate(m.clamp(1, priors.len()));
        let phases = (order.len() as f32).log2().ceil().max(1.0) as u32;
        let mut root = GumbelRoot { score, base, remaining: order, phase_target: 0, phases, budget };
        root.phase_target = root.phase_share();
        root
    }

    fn phase_share(&self) -> u32 {
        (self.budget / (self.phases * self.remaining.len() as u32)).max(1)
    }

    /// The candidate to visit next, halving first when the phase is complete.
    /// `total_visits(i)` counts visits (with pending ones) of root edge `i`,
    /// `q(i)` its value for the root player (completed where unvisited).
    pub(super) fn select(
        &mut self,
        total_visits: impl Fn(usize) -> u32,
        q: impl Fn(usize) -> f32,
        max_visits: u32,
    ) -> usize {
        let visits = |i: usize| total_visits(i).saturating_sub(self.base[i]);
        if self.remaining.len() > 1 && self.remaining.iter().all(|&i| visits(i) >= self.phase_target) {
            let value = |i: usize| self.score[i] + sigma(q(i), max_visits);
            let mut ranked = self.remaining.clone();
            ranked.sort_by(|&a, &b| value(b).total_cmp(&value(a)));
            ranked.truncate(ranked.len().div_ceil(2));
            self.remaining = ranked;
            self.phase_target += self.phase_share();
        }
        *self
            .remaining
            .iter()
            .min_by(|&&a, &&b| visits(a).cmp(&visits(b)).then(self.score[b].total_cmp(&self.score[a])))
            .expect("at least one candidate")
    }

    /// The candidates still in the halving (offsets among the root's edges).
    #[cfg(test)]
    pub(super) fn remaining(&self) -> &[usize] {
        &self.remaining
    }

    /// The action to play: the best remaining candidate.
    pub(super) fn best(&self, q: impl Fn(usize) -> f32, max_visits: u32) -> usize {
        *self
            .remaining
            .iter()
            .max_by(|&&a, &&b| {
                (self.score[a] + sigma(q(a), max_visits)).total_cmp(&(self.score[b] + sigma(q(b), max_visits)))
            })
            .expect("at least one candidate")
    }
}
