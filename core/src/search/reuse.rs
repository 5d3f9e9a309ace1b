//! Tree reuse: moving the root down to the position played, keeping what
//! was searched below it and freeing the rest.

use super::{Edge, Node, Tree};
use crate::rules::{Action, IllegalAction, Position};

impl Tree {
    /// Moves the root to the child reached by `action`, keeping its subtree
    /// and freeing the rest, so that a tree's memory follows its live part
    /// rather than the whole game. An action not legal at the root is an
    /// error, and the tree stays as it was.
    pub fn advance(&mut self, action: Action) -> Result<(), IllegalAction> {
        let child = self.children(self.root).iter().find(|e| e.action == action).and_then(|e| e.child);
        match child {
            Some(child) => {
                let (mut nodes, mut edges) = (Vec::new(), Vec::new());
                self.copy_subtree(child, &mut nodes, &mut edges);
                *self = Tree { nodes, edges, root: 0, gumbel: None, forced: None };
            }
            None => {
                let mut pos = *self.root_position();
                pos.play(action)?;
                *self = Tree::new(pos);
            }
        }
        Ok(())
    }

    /// Moves the root to the node of `pos`, reached from the root by at most
    /// `max_depth` actions of the tree, keeping its subtree: a player that
    /// searched the previous decision reuses what it saw of the actions
    /// played since. Returns false, and leaves the tree as it was, when the
    /// tree holds no such node.
    pub fn reroot(&mut self, pos: &Position, max_depth: usize) -> bool {
        let mut path = Vec::new();
        if !self.path_to(self.root, pos, max_depth, &mut path) {
            return false;
        }
        for action in path {
            self.advance(action).expect("the actions of a path in the tree are legal");
        }
        true
    }

    /// Depth-first search for `pos` under `node`; the actions on the way are left in `path`.
    pub(super) fn path_to(&self, node: u32, pos: &Position, max_depth: usize, path: &mut Vec<Action>) -> bool {
        if self.nodes[node as usize].pos == *pos {
            return true;
        }
        if max_depth == 0 {
            return false;
        }
        for edge in self.children(node) {
            if let Some(child) = edge.child {
                path.push(edge.action);
                if self.path_to(child, pos, max_depth - 1, path) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }

    /// Appends the subtree under `node` to `nodes` and `edges`; returns its new index.
    pub(super) fn copy_subtree(&self, node: u32, nodes: &mut Vec<Node>, edges: &mut Vec<Edge>) -> u32 {
        let index = nodes.len() as u32;
        nodes.push(self.nodes[node as usize].clone());
        let first = edges.len();
        edges.extend_from_slice(self.children(node));
        nodes[index as usize].first_edge = first as u32;
        for k in 0..self.children(node).len() {
            if let Some(child) = edges[first + k].child {
                let copied = self.copy_subtree(child, nodes, edges);
                edges[first + k].child = Some(copied);
            }
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn advance_keeps_the_subtree() {
        let mut tree = Tree::new(Position::new(crate::rules::Variant::Basic));
        tree.run(&mut UniformEvaluator, 300, &SearchConfig::default()).unwrap();
        let (action, visits) = *tree.root_visit_counts().iter().max_by_key(|(_, v)| *v).unwrap();
        let before = tree.nodes.len();
        tree.advance(action).unwrap();
        assert_eq!(tree.root_visits(), visits);
        assert!(tree.nodes.len() < before / 4, "the other branches are freed: {} of {before}", tree.nodes.len());
        let total: u32 = tree.root_visit_counts().iter().map(|(_, v)| v).sum();
        assert_eq!(total + 1, visits, "the subtree's counts came along");
        tree.run(&mut UniformEvaluator, 50, &SearchConfig::default()).unwrap();
        assert_eq!(tree.root_visits(), visits + 50);
        let mut expected = Position::new(crate::rules::Variant::Basic);
        expected.play(action).unwrap();
        assert_eq!(*tree.root_position(), expected);
    }

    /// Two actions later (a reply and the next push), the tree moves to the
    /// position reached with the visits it had there; a position it never
    /// reached leaves it unchanged.
    #[test]
    fn reroot_finds_a_position_two_actions_down() {
        let mut tree = Tree::new(Position::new(crate::rules::Variant::Basic));
        tree.run(&mut UniformEvaluator, 400, &SearchConfig::default()).unwrap();
        let (first, _) = *tree.root_visit_counts().iter().max_by_key(|(_, v)| *v).unwrap();
        let child = tree.children(tree.root).iter().find(|e| e.action == first).unwrap().child.unwrap();
        let (second, visits) =
            tree.children(child).iter().map(|e| (e.action, e.visits)).max_by_key(|(_, v)| *v).unwrap();
        assert!(visits > 1, "the reply was searched");
        let mut pos = Position::new(crate::rules::Variant::Basic);
        pos.play(first).unwrap();
        pos.play(second).unwrap();

        let mut unseen = pos;
        unseen.play(unseen.legal_actions()[0]).unwrap();
        unseen.play(unseen.legal_actions()[0]).unwrap();
        let before = tree.nodes.len();
        assert!(!tree.reroot(&unseen, 2), "not within two actions");
        assert_eq!((tree.nodes.len(), tree.root_visits()), (before, 400), "unchanged");
        assert!(!tree.reroot(&pos, 1), "two actions away, not one");

        assert!(tree.reroot(&pos, 2));
        assert_eq!(*tree.root_position(), pos);
        assert_eq!(tree.root_visits(), visits);
        tree.run(&mut UniformEvaluator, 20, &SearchConfig::default()).unwrap();
        assert_eq!(tree.root_visits(), visits + 20);
    }
}
