//! What a search thinks of its root, as data for analysis front-ends: the
//! root's value and visits, and each candidate action with its visits,
//! value, prior and principal variation.

use serde::{Deserialize, Serialize};

use super::Tree;

/// A search's view of its root.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// The root's mean value for the player to act, in [-1, 1].
    pub value: f32,
    /// The root's visits.
    pub visits: u32,
    /// The most visited actions, most visited first.
    pub candidates: Vec<Candidate>,
}

/// One root action as the search saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The action, in the official notation.
    pub action: String,
    /// The simulations that went through it.
    pub visits: u32,
    /// The mean value of its simulations for the player to act at the root
    /// (`None` before any visit).
    pub value: Option<f32>,
    /// The network's prior for it.
    pub prior: f32,
    /// The line of most visited actions from it, this action first.
    pub pv: Vec<String>,
}

impl Tree {
    /// The root's `count` most visited actions (ties by prior), each with a
    /// principal variation of at most `depth` actions.
    pub fn analysis(&self, count: usize, depth: usize) -> Analysis {
        let mut children: Vec<_> = self.children(self.root).iter().collect();
        children.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        let candidates = children
            .into_iter()
            .take(count)
            .map(|edge| Candidate {
                action: edge.action.to_string(),
                visits: edge.visits,
                value: (edge.visits > 0).then(|| edge.value_sum / edge.visits as f32),
                prior: edge.prior,
                pv: std::iter::once(edge.action.to_string())
                    .chain(self.line_from(edge.child, depth.saturating_sub(1)))
                    .collect(),
            })
            .collect();
        Analysis { value: self.root_value(), visits: self.root_visits(), candidates }
    }

    /// The most visited actions from `node` down, at most `depth` of them.
    fn line_from(&self, mut node: Option<u32>, depth: usize) -> Vec<String> {
        let mut line = Vec::new();
        while let Some(n) = node.filter(|_| line.len() < depth) {
            let Some(edge) = self.children(n).iter().filter(|e| e.visits > 0).max_by_key(|e| e.visits) else { break };
            line.push(edge.action.to_string());
            node = edge.child;
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::{Position, Variant};
    use crate::search::{SearchConfig, Tree, UniformEvaluator};

    /// Every root action is a candidate when asked for all; their visits
    /// add up to the root's but its first (the expansion), and each line
    /// starts with its action and is legal from the root.
    #[test]
    fn the_analysis_accounts_for_every_visit_and_its_lines_are_legal() {
        let pos = Position::new(Variant::Standard);
        let mut tree = Tree::new(pos);
        let config = SearchConfig { batch_size: 4, ..SearchConfig::default() };
        tree.run(&mut UniformEvaluator, 200, &config).unwrap();
        let analysis = tree.analysis(usize::MAX, 6);
        assert_eq!(analysis.visits, tree.root_visits());
        assert_eq!(analysis.candidates.len(), pos.legal_actions().len());
        let visits: u32 = analysis.candidates.iter().map(|c| c.visits).sum();
        assert_eq!(visits + 1, analysis.visits);
        assert!(analysis.candidates.windows(2).all(|w| w[0].visits >= w[1].visits));
        for candidate in &analysis.candidates {
            assert_eq!(candidate.pv[0], candidate.action);
            assert!(candidate.pv.len() <= 6);
            let mut line = pos;
            for action in &candidate.pv {
                line.play(action.parse().unwrap()).unwrap();
            }
            assert!(candidate.value.is_none_or(|v| (-1.0..=1.0).contains(&v)));
        }
        assert_eq!(tree.analysis(3, 1).candidates.len(), 3);
    }
}
