//! What a tree says about its root: its position, visits, value and
//! proof, the action the search recommends and the policy target.

use super::{as_seen_by, sigma, softmax, Tree};
use crate::rules::{Action, Position};

impl Tree {
    /// The position at the root.
    pub fn root_position(&self) -> &Position {
        &self.nodes[self.root as usize].pos
    }

    /// Visits of the root so far.
    pub fn root_visits(&self) -> u32 {
        self.nodes[self.root as usize].visits
    }

    /// The root's value for its player to act (0 before any visit).
    pub fn root_value(&self) -> f32 {
        let root = &self.nodes[self.root as usize];
        match root.pos.to_act() {
            Some(player) if root.visits > 0 => as_seen_by(root.white_value_sum / root.visits as f32, player),
            _ => 0.0,
        }
    }

    /// Whether the solver has proven the root won or lost.
    pub fn root_proven(&self) -> bool {
        self.nodes[self.root as usize].proven.is_some()
    }

    /// The root's legal actions with their visit counts.
    pub fn root_visit_counts(&self) -> Vec<(Action, u32)> {
        self.children(self.root).iter().map(|e| (e.action, e.visits)).collect()
    }

    /// The root edges' values for the root player, unvisited ones completed
    /// with the mixed value of the paper (appendix D): the evaluator's value
    /// of the root blended with the prior-weighted values of the visited edges.
    pub(super) fn completed_q(&self) -> Vec<f32> {
        let children = self.children(self.root);
        let visited = children.iter().filter(|e| e.visits > 0);
        let (mut visits, mut prior_mass, mut weighted_q) = (0.0f32, 0.0f32, 0.0f32);
        for e in visited {
            visits += e.visits as f32;
            prior_mass += e.prior;
            weighted_q += e.prior * e.value_sum / e.visits as f32;
        }
        let raw = self.nodes[self.root as usize].eval_value;
        let mixed = match prior_mass > 0.0 {
            true => (raw + visits * weighted_q / prior_mass) / (1.0 + visits),
            false => raw,
        };
        children.iter().map(|e| if e.visits > 0 { e.value_sum / e.visits as f32 } else { mixed }).collect()
    }

    pub(super) fn max_root_visits(&self) -> u32 {
        self.children(self.root).iter().map(|e| e.visits).max().unwrap_or(0)
    }

    /// The action the search recommends: a proven win if there is one (known
    /// only with [`SearchConfig::solver`](super::SearchConfig::solver)); else
    /// with Gumbel root selection the best remaining candidate; otherwise the
    /// most visited, a proven loss only when every action is one.
    pub fn best_action(&self) -> Option<Action> {
        let children = self.children(self.root);
        let player = self.root_position().to_act()?;
        if let Some(win) = children.iter().find(|e| self.proven(e) == Some(player)) {
            return Some(win.action);
        }
        let index = match &self.gumbel {
            Some(g) => {
                let q = self.completed_q();
                g.best(|i| q[i], self.max_root_visits())
            }
            None => (0..children.len()).max_by_key(|&i| (self.proven(&children[i]).is_none(), children[i].visits))?,
        };
        children.get(index).map(|e| e.action)
    }

    /// The policy target over the root's legal actions: with Gumbel root
    /// selection, softmax(log prior + sigma(completed q)); otherwise the visit
    /// distribution, pruned of forced playouts when the search forced them.
    pub fn policy_target(&self) -> Vec<(Action, f32)> {
        let children = self.children(self.root);
        if self.gumbel.is_some() {
            let q = self.completed_q();
            let max_visits = self.max_root_visits();
            let mut policy: Vec<f32> =
                children.iter().zip(&q).map(|(e, &q)| e.prior.max(1e-12).ln() + sigma(q, max_visits)).collect();
            softmax(&mut policy);
            children.iter().zip(policy).map(|(e, p)| (e.action, p)).collect()
        } else {
            let visits = match self.forced {
                Some(forced) => self.pruned_visits(forced),
                None => children.iter().map(|e| e.visits as f32).collect(),
            };
            let total = visits.iter().sum::<f32>().max(1.0);
            children.iter().zip(visits).map(|(e, v)| (e.action, v / total)).collect()
        }
    }

    /// Whether the root has been evaluated and has its edges.
    pub fn root_expanded(&self) -> bool {
        self.nodes[self.root as usize].expanded
    }
}
