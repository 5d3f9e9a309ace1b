//! The MCTS-solver: wins and losses proven by finished games below a node,
//! carried up the tree.

use super::{Edge, Tree};
use crate::rules::Color;

impl Tree {
    /// Marks `node` (at the end of `path`) won by `winner` and carries the
    /// proof up the path as far as it goes.
    pub(super) fn prove(&mut self, path: &[u32], node: u32, winner: Color) {
        self.nodes[node as usize].proven = Some(winner);
        let mut above: Vec<u32> = vec![self.root];
        above.extend(path.iter().map(|&e| self.edges[e as usize].child.expect("edges on a path lead somewhere")));
        above.pop();
        for &parent in above.iter().rev() {
            let player = self.nodes[parent as usize].pos.to_act().expect("an inner node is not over");
            let lost = self.children(parent).iter().all(|e| self.proven(e) == Some(player.opponent()));
            let proven = match winner == player {
                true => player,
                false if lost => winner,
                false => return,
            };
            self.nodes[parent as usize].proven = Some(proven);
        }
    }

    /// The winner proven below an edge, if any.
    pub(super) fn proven(&self, edge: &Edge) -> Option<Color> {
        edge.child.and_then(|child| self.nodes[child as usize].proven)
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::rules::fixtures::win_in_one;
    use rand::SeedableRng;

    /// With the solver, a win found in the tree takes every later visit
    /// and the search's choice; without it, visits still spread by PUCT.
    #[test]
    fn the_solver_takes_a_proven_win() {
        let visits_to_win = |solver: bool| {
            let mut tree = Tree::new(win_in_one());
            tree.run(&mut UniformEvaluator, 400, &SearchConfig { solver, ..SearchConfig::default() }).unwrap();
            let player = tree.root_position().to_act().unwrap();
            let win = tree.children(tree.root).iter().find(|e| tree.proven(e) == Some(player)).map(|e| e.action);
            assert_eq!(win.is_some(), solver, "the winning action is proven only by the solver");
            assert_eq!(tree.nodes[tree.root as usize].proven, solver.then_some(player));
            assert_eq!(tree.best_action().unwrap().to_string(), "xb5,c5,d5,e5,f4,g3,h2");
            let counts = tree.root_visit_counts();
            counts.iter().find(|(a, _)| a.to_string() == "xb5,c5,d5,e5,f4,g3,h2").unwrap().1
        };
        let (with, without) = (visits_to_win(true), visits_to_win(false));
        assert!(with > without && with > 300, "visits to the win: {with} with the solver, {without} without");
    }

    /// Every proof in a solver's tree follows from its children (a win from
    /// one child won by the player to act, a loss from every child lost),
    /// and finished games from their outcome; losses are proven too.
    #[test]
    fn solver_proofs_follow_from_their_children() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let config = SearchConfig { solver: true, batch_size: 4, ..SearchConfig::default() };
        let (mut wins, mut losses) = (0, 0);
        for _ in 0..20 {
            let mut pos = Position::new(crate::rules::Variant::Standard);
            // Until the player to act is down to its last piece in reserve.
            while pos.to_act().is_some_and(|player| pos.reserve(player) > 1) {
                let actions = pos.legal_actions();
                pos.play(actions[rng.random_range(0..actions.len())]).unwrap();
            }
            if pos.is_over() {
                continue;
            }
            let mut tree = Tree::new(pos);
            tree.run(&mut UniformEvaluator, 3000, &config).unwrap();
            assert_eq!(tree.root_visits(), 3000);
            for (index, n) in tree.nodes.iter().enumerate() {
                let Some(player) = n.pos.to_act() else {
                    let visited = n.visits > 0;
                    assert!(!visited || n.proven == n.pos.outcome().map(|o| o.winner), "node {index}");
                    continue;
                };
                let children: Vec<Option<Color>> = tree.children(index as u32).iter().map(|e| tree.proven(e)).collect();
                match n.proven {
                    Some(w) if w == player => {
                        assert!(children.contains(&Some(player)), "node {index}: a win needs a won child");
                        wins += 1;
                    }
                    Some(_) => {
                        assert!(children.iter().all(|&c| c == Some(player.opponent())), "node {index}: a loss");
                        losses += 1;
                    }
                    None => {}
                }
            }
        }
        assert!(wins > 0 && losses > 0, "proofs of both kinds: {wins} wins, {losses} losses");
    }
}
