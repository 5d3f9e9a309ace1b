//! KataGo's forced playouts at the root, and the policy target pruned of them.

use super::{Edge, Forced, SearchConfig, Tree};

impl Tree {
    /// Forced playouts with factor `k` (KataGo uses 2) at the root for the
    /// current search, and a policy target pruned of them; `config` is the
    /// search's. Until the root moves on.
    pub fn start_forced_playouts(&mut self, k: f32, config: &SearchConfig) {
        self.forced = Some(Forced { k, c_puct: config.c_puct });
    }

    /// The visits root action `edge` is owed under forced playouts.
    pub(super) fn forced_visits(&self, k: f32, edge: &Edge) -> f32 {
        (k * edge.prior * self.root_visits() as f32).sqrt()
    }

    /// A root edge short of its forced visits, if any.
    pub(super) fn forced_edge(&self) -> Option<u32> {
        let k = self.forced?.k;
        let first = self.nodes[self.root as usize].first_edge;
        let children = self.children(self.root);
        let short = children.iter().position(|e| ((e.visits + e.pending) as f32) < self.forced_visits(k, e))?;
        Some(first + short as u32)
    }

    /// The root's visits with forced playouts taken back: each action but
    /// the most visited loses up to its forced visits while its PUCT score
    /// stays below the best action's, and one left with a single visit
    /// loses that too.
    pub(super) fn pruned_visits(&self, forced: Forced) -> Vec<f32> {
        let children = self.children(self.root);
        let visits: Vec<f32> = children.iter().map(|e| e.visits as f32).collect();
        let Some(best) = (0..children.len()).max_by_key(|&i| children[i].visits) else {
            return visits;
        };
        let sqrt_n = (self.root_visits() as f32).max(1.0).sqrt();
        let q = |e: &Edge| if e.visits > 0 { e.value_sum / e.visits as f32 } else { 0.0 };
        let b = &children[best];
        let best_score = q(b) + forced.c_puct * b.prior * sqrt_n / (1.0 + b.visits as f32);
        children
            .iter()
            .enumerate()
            .map(|(i, e)| {
                if i == best || e.visits == 0 {
                    return visits[i];
                }
                let gap = best_score - q(e);
                // The fewest visits at which this action's score stays below the best's.
                let needed = if gap > 0.0 { (forced.c_puct * e.prior * sqrt_n / gap).floor() } else { visits[i] };
                let kept = needed.max(visits[i] - self.forced_visits(forced.k, e).floor()).min(visits[i]);
                if kept <= 1.0 {
                    0.0
                } else {
                    kept
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    /// Forced playouts give every root action about sqrt(k * P * N) visits,
    /// which PUCT alone does not; the pruned target takes them back from all
    /// but the most visited action.
    #[test]
    fn forced_playouts_are_given_and_pruned_from_the_target() {
        let config = SearchConfig::default();
        let search = |forced: bool| {
            let mut tree = Tree::new(Position::new(crate::rules::Variant::Standard));
            tree.run(&mut Favours, 1, &config).unwrap();
            if forced {
                tree.start_forced_playouts(2.0, &config);
            }
            tree.run(&mut Favours, 1000, &config).unwrap();
            tree
        };
        let short = |tree: &Tree| {
            let n = tree.root_visits() as f32;
            tree.children(tree.root).iter().filter(|e| (e.visits as f32 + 1.0) < (2.0 * e.prior * n).sqrt()).count()
        };
        let (plain, forced) = (search(false), search(true));
        assert!(short(&plain) > 0, "PUCT alone leaves some action short of the forced visits");
        assert_eq!(short(&forced), 0, "forced playouts give every action its visits");
        let total = forced.root_visits() as f32 - 1.0;
        let raw: Vec<f32> = forced.children(forced.root).iter().map(|e| e.visits as f32 / total).collect();
        let target: Vec<f32> = forced.policy_target().iter().map(|&(_, p)| p).collect();
        assert!((target.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        let best = (0..raw.len()).max_by(|&a, &b| raw[a].total_cmp(&raw[b])).unwrap();
        assert!(target[best] > raw[best], "the best action's share grows: {} > {}", target[best], raw[best]);
        let pruned = target.iter().zip(&raw).enumerate().filter(|&(i, (t, r))| i != best && t < r).count();
        assert!(pruned > raw.len() / 2, "most other actions lose visits: {pruned} of {}", raw.len() - 1);
    }

    /// Priors that favour the first legal action (0.9), values 0.
    struct Favours;
    impl Evaluator for Favours {
        fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation> {
            let favour = |mut e: Evaluation| {
                let rest = 0.1 / (e.priors.len() as f32 - 1.0).max(1.0);
                e.priors = (0..e.priors.len()).map(|i| if i == 0 { 0.9 } else { rest }).collect();
                e
            };
            positions.iter().map(|p| favour(Evaluation::uniform(p, 0.0))).collect()
        }
    }
}
