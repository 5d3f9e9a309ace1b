//! Plain UCT: UCB1 selection, one new node per playout, uniformly random
//! playouts to the end of the game. A baseline that knows nothing but the
//! rules; its strength grows with the playouts.

use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;

use super::{Player, PlayerError};
use crate::rules::{Action, Color, Position};

/// Exploration constant of UCB1 for results in [-1, 1].
const EXPLORATION: f32 = 1.4;
/// A playout reaching this many actions counts as a draw.
const PLAYOUT_CAP: u32 = 1000;

struct Node {
    pos: Position,
    /// Actions not yet expanded into children.
    untried: Vec<Action>,
    children: Vec<(Action, usize)>,
    visits: u32,
    /// Sum of results as seen by the player who chose the action into this node.
    value_sum: f32,
}

impl Node {
    fn new(pos: Position) -> Node {
        let untried = if pos.is_over() { Vec::new() } else { pos.legal_actions() };
        Node { pos, untried, children: Vec::new(), visits: 0, value_sum: 0.0 }
    }
}

/// UCT with a fixed number of playouts per action.
pub struct Uct {
    playouts: u32,
    rng: SmallRng,
}

impl Uct {
    /// A player running `playouts` random playouts per action, drawing from `rng`.
    pub fn new(playouts: u32, rng: SmallRng) -> Uct {
        Uct { playouts, rng }
    }

    /// White's result of a random playout from `pos`: 1, -1, or 0 at the cap.
    fn playout(&mut self, mut pos: Position) -> f32 {
        let mut legal = Vec::new();
        for _ in 0..PLAYOUT_CAP {
            if let Some(outcome) = pos.outcome() {
                return if outcome.winner == Color::White { 1.0 } else { -1.0 };
            }
            pos.legal_actions_into(&mut legal);
            pos.play_unchecked(*legal.choose(&mut self.rng).expect("a game not over has legal actions"));
        }
        0.0
    }
}

fn as_seen_by(white_result: f32, player: Color) -> f32 {
    if player == Color::White {
        white_result
    } else {
        -white_result
    }
}

impl Player for Uct {
    fn new_game(&mut self, seed: u64) {
        self.rng = rand::SeedableRng::seed_from_u64(seed);
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        if pos.is_over() {
            return Err(PlayerError::GameOver);
        }
        let mut nodes = vec![Node::new(*pos)];
        for _ in 0..self.playouts {
            // Down by UCB1 while nodes are fully expanded.
            let mut path = vec![0usize];
            let mut node = 0;
            while nodes[node].untried.is_empty() && !nodes[node].children.is_empty() {
                let parent_log = (nodes[node].visits.max(1) as f32).ln();
                let &(_, child) = nodes[node]
                    .children
                    .iter()
                    .max_by(|a, b| {
                        let ucb = |c: usize| {
                            let n = &nodes[c];
                            n.value_sum / n.visits as f32 + EXPLORATION * (parent_log / n.visits as f32).sqrt()
                        };
                        ucb(a.1).total_cmp(&ucb(b.1))
                    })
                    .expect("children exist");
                node = child;
                path.push(node);
            }
            // One new child, at random among the untried actions.
            if !nodes[node].untried.is_empty() {
                let k = rand::Rng::random_range(&mut self.rng, 0..nodes[node].untried.len());
                let action = nodes[node].untried.swap_remove(k);
                let mut next = nodes[node].pos;
                next.play_unchecked(action);
                nodes.push(Node::new(next));
                let child = nodes.len() - 1;
                nodes[node].children.push((action, child));
                node = child;
                path.push(node);
            }
            let result = self.playout(nodes[node].pos);
            // Each node's value is seen by the player who chose the action into it.
            for w in path.windows(2) {
                let chooser = nodes[w[0]].pos.to_act().expect("an inner node is not over");
                let child = &mut nodes[w[1]];
                child.visits += 1;
                child.value_sum += as_seen_by(result, chooser);
            }
            nodes[0].visits += 1;
        }
        let root = &nodes[0];
        Ok(match root.children.iter().max_by_key(|&&(_, c)| nodes[c].visits) {
            Some(&(action, _)) => action,
            None => root.untried[0],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::win_in_one;
    use rand::SeedableRng;

    /// White to remove a run holding black's last GIPF piece: UCT finds the win.
    #[test]
    fn finds_the_winning_removal() {
        let pos = win_in_one();
        let mut uct = Uct::new(300, SmallRng::seed_from_u64(5));
        let mut after = pos;
        after.play(uct.choose(&pos).unwrap()).unwrap();
        assert_eq!(after.outcome().map(|o| o.winner), Some(Color::White));
    }
}
