//! PUCT Monte Carlo tree search over the rules core, with leaves gathered in
//! batches for the evaluator.
//!
//! Players do not simply alternate in GIPF: after a removal the same player
//! may act again, and the other player may act out of turn. Values are
//! therefore backed up as seen by White and turned, at each edge, to the view
//! of the player who chose it.

mod analysis;
mod batched;
mod config;
mod evaluation;
mod forced;
mod gumbel;
mod readouts;
mod reuse;
mod solver;

use rand::Rng;
use rand_distr::{Distribution, Gamma};

pub use analysis::{Analysis, Candidate};
pub(crate) use batched::map_each;
pub use batched::{BatchError, Batched, InvalidRoot, NotFinite, Root, Search, Searching};
pub use config::{SearchConfig, MAX_BATCH, MAX_SIMULATIONS};
pub use evaluation::{softmax, ConstantForward, Evaluation, Evaluator, Forward, UniformEvaluator};
use gumbel::{sigma, GumbelRoot};

use crate::rules::{Action, Color, Position};

#[derive(Clone, Debug)]
struct Edge {
    action: Action,
    prior: f32,
    child: Option<u32>,
    visits: u32,
    /// Sum of values as seen by the player choosing this edge.
    value_sum: f32,
    /// Leaves below this edge waiting for evaluation.
    pending: u32,
}

#[derive(Clone, Debug)]
struct Node {
    pos: Position,
    /// Edges `first_edge..first_edge + num_edges`; empty until expanded.
    first_edge: u32,
    num_edges: u32,
    expanded: bool,
    visits: u32,
    /// Sum of backed-up values as seen by White.
    white_value_sum: f32,
    /// The evaluator's value for the player to act, once expanded.
    eval_value: f32,
    /// The winner under best play, once the solver has proven it.
    proven: Option<Color>,
}

/// A search tree rooted at a position.
pub struct Tree {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    root: u32,
    /// Gumbel root selection, when started for the current search.
    gumbel: Option<GumbelRoot>,
    /// KataGo's forced playouts at the root for the current search: their
    /// factor `k`, and the search's PUCT constant for pruning its target.
    forced: Option<Forced>,
}

/// Forced playouts (KataGo, section 3.1 of its paper): each root action `c`
/// gets at least `sqrt(k * P(c) * N)` visits, so that noise-favoured actions
/// are looked at; the policy target then takes back the visits PUCT would not
/// have spent (policy target pruning).
#[derive(Clone, Copy, Debug)]
struct Forced {
    k: f32,
    c_puct: f32,
}

/// A leaf waiting for evaluation: its node and the edges leading to it.
pub struct Leaf {
    node: u32,
    path: Vec<u32>,
}

/// The value of `winner`'s win as seen by White.
fn white_value_of(outcome_winner: Color) -> f32 {
    match outcome_winner {
        Color::White => 1.0,
        Color::Black => -1.0,
    }
}

/// `priors` as softmax(logits / `temperature`) would give them: each raised
/// to 1 / `temperature`, then normalised.
fn with_temperature(priors: &mut [f32], temperature: f32) {
    if temperature == 1.0 {
        return;
    }
    priors.iter_mut().for_each(|p| *p = p.powf(1.0 / temperature));
    let sum: f32 = priors.iter().sum();
    if sum > 0.0 {
        priors.iter_mut().for_each(|p| *p /= sum);
    }
}

fn as_seen_by(white_value: f32, player: Color) -> f32 {
    match player {
        Color::White => white_value,
        Color::Black => -white_value,
    }
}

impl Node {
    /// A node not yet evaluated.
    fn new(pos: Position) -> Node {
        Node {
            pos,
            first_edge: 0,
            num_edges: 0,
            expanded: false,
            visits: 0,
            white_value_sum: 0.0,
            eval_value: 0.0,
            proven: None,
        }
    }
}

impl Tree {
    /// A tree of one node, `pos`, not yet evaluated.
    pub fn new(pos: Position) -> Tree {
        Tree { nodes: vec![Node::new(pos)], edges: Vec::new(), root: 0, gumbel: None, forced: None }
    }

    /// Switches the current search to Gumbel root selection over `candidates`
    /// actions with `simulations` more to share out (visits the root already
    /// has do not count). Does nothing before the root is expanded, or with
    /// fewer than two legal actions.
    pub fn start_gumbel(&mut self, candidates: usize, simulations: u32, rng: &mut impl Rng) {
        let children = self.children(self.root);
        if !self.root_expanded() || children.len() < 2 {
            return;
        }
        let priors: Vec<f32> = children.iter().map(|e| e.prior).collect();
        let base: Vec<u32> = children.iter().map(|e| e.visits).collect();
        self.gumbel = Some(GumbelRoot::new(&priors, base, candidates, simulations, rng));
    }

    fn children(&self, node: u32) -> &[Edge] {
        let n = &self.nodes[node as usize];
        &self.edges[n.first_edge as usize..(n.first_edge + n.num_edges) as usize]
    }

    /// Mixes Dirichlet noise into the root's priors (`fraction` of noise with
    /// concentration `alpha`). Does nothing before the root is expanded. An
    /// alpha that is not positive or a fraction outside [0, 1] is an error,
    /// and the priors stay as they were.
    pub fn add_root_noise(&mut self, alpha: f32, fraction: f32, rng: &mut impl Rng) -> Result<(), InvalidRoot> {
        let asked = Root::Noise { alpha, fraction, forced_playouts: 0.0 };
        let gamma = asked.check().ok().and_then(|_| Gamma::new(alpha as f64, 1.0).ok()).ok_or(InvalidRoot(asked))?;
        let root = &self.nodes[self.root as usize];
        let (first, n) = (root.first_edge as usize, root.num_edges as usize);
        if !root.expanded || n < 2 {
            return Ok(());
        }
        let noise: Vec<f64> = (0..n).map(|_| gamma.sample(rng)).collect();
        let total: f64 = noise.iter().sum::<f64>().max(f64::MIN_POSITIVE);
        for (edge, eta) in self.edges[first..first + n].iter_mut().zip(noise) {
            edge.prior = (1.0 - fraction) * edge.prior + fraction * (eta / total) as f32;
        }
        Ok(())
    }

    /// Runs `simulations` more simulations, evaluating leaves in batches.
    /// A batch with an evaluation whose value or priors are not finite (a
    /// damaged network) is not applied: the search stops with an error,
    /// its gathered leaves' virtual losses taken back (simulations that
    /// ended in finished games stay backed up).
    pub fn run(
        &mut self,
        evaluator: &mut dyn Evaluator,
        simulations: u32,
        config: &SearchConfig,
    ) -> Result<(), NotFinite> {
        let target = self.root_visits() + simulations;
        while self.root_visits() < target {
            let leaves = self.gather_toward(target, config);
            let positions: Vec<Position> = leaves.iter().map(|leaf| *self.leaf_position(leaf)).collect();
            if positions.is_empty() {
                continue;
            }
            let evaluations = evaluator.evaluate(&positions);
            if !evaluations.iter().all(Evaluation::is_finite) {
                self.revert_leaves(&leaves);
                return Err(NotFinite);
            }
            self.apply(leaves, evaluations, config);
        }
        Ok(())
    }

    /// The next batch of a search that runs until the root has `target`
    /// visits: up to `config.batch_size` leaves, never more than the visits
    /// still missing (a simulation that ends in a finished game is backed
    /// up at once and counts among them).
    fn gather_toward(&mut self, target: u32, config: &SearchConfig) -> Vec<Leaf> {
        let want = (target.saturating_sub(self.root_visits()) as usize).clamp(1, config.batch_size.max(1));
        self.gather(want, config).0
    }

    /// Takes back the virtual loss of gathered leaves that will not be applied.
    fn revert_leaves(&mut self, leaves: &[Leaf]) {
        for leaf in leaves {
            self.revert_pending(&leaf.path);
        }
    }

    /// Selects up to `want` distinct leaves for evaluation, with virtual loss
    /// on their paths. Simulations that end in a finished game are backed up
    /// at once and counted in the second number; the total never exceeds `want`.
    pub fn gather(&mut self, want: usize, config: &SearchConfig) -> (Vec<Leaf>, u32) {
        let mut leaves: Vec<Leaf> = Vec::with_capacity(want);
        let mut finished = 0u32;
        let mut attempts = 0;
        while leaves.len() + (finished as usize) < want && attempts < 4 * want {
            attempts += 1;
            match self.select(config) {
                Some(leaf) if leaves.iter().any(|l| l.node == leaf.node) => self.revert_pending(&leaf.path),
                Some(leaf) => leaves.push(leaf),
                None => finished += 1,
            }
        }
        (leaves, finished)
    }

    /// The position a gathered leaf stands for.
    pub fn leaf_position(&self, leaf: &Leaf) -> &Position {
        &self.nodes[leaf.node as usize].pos
    }

    /// Expands gathered leaves with their evaluations and backs the values up.
    pub fn apply(&mut self, leaves: Vec<Leaf>, evaluations: Vec<Evaluation>, config: &SearchConfig) {
        assert_eq!(leaves.len(), evaluations.len(), "one evaluation per leaf");
        for (leaf, mut eval) in leaves.into_iter().zip(evaluations) {
            with_temperature(&mut eval.priors, config.policy_temperature);
            self.expand(leaf.node, &eval.actions, &eval.priors);
            self.nodes[leaf.node as usize].eval_value = eval.value;
            let player = self.nodes[leaf.node as usize].pos.to_act().expect("gathered leaves are not over");
            self.revert_pending(&leaf.path);
            self.backup(leaf.node, &leaf.path, as_seen_by(eval.value, player));
        }
    }

    /// Walks down by PUCT to a leaf. A finished game is backed up at once
    /// (returns `None`); an unexpanded leaf is returned with virtual loss on its path.
    fn select(&mut self, config: &SearchConfig) -> Option<Leaf> {
        let mut node = self.root;
        let mut path = Vec::new();
        loop {
            let n = &self.nodes[node as usize];
            // Below the root a proven position is searched no further; at
            // the root, visits still go to its actions (the policy target).
            let proven = n.proven.filter(|_| config.solver && node != self.root);
            let solved = n.pos.outcome().map(|o| o.winner).or(proven);
            if let Some(winner) = solved {
                self.backup(node, &path, white_value_of(winner));
                if config.solver {
                    self.prove(&path, node, winner);
                }
                return None;
            }
            if !n.expanded {
                for &e in &path {
                    self.edges[e as usize].pending += 1;
                }
                return Some(Leaf { node, path });
            }
            let edge = match node == self.root {
                true if self.gumbel.is_some() => self.gumbel_edge(),
                true => self.forced_edge().unwrap_or_else(|| self.best_edge(node, config)),
                false => self.best_edge(node, config),
            };
            path.push(edge);
            node = match self.edges[edge as usize].child {
                Some(child) => child,
                None => {
                    let mut pos = self.nodes[node as usize].pos;
                    pos.play_unchecked(self.edges[edge as usize].action);
                    let child = self.nodes.len() as u32;
                    self.nodes.push(Node::new(pos));
                    self.edges[edge as usize].child = Some(child);
                    child
                }
            };
        }
    }

    fn best_edge(&self, node: u32, config: &SearchConfig) -> u32 {
        let n = &self.nodes[node as usize];
        let player = n.pos.to_act().expect("a node being descended is not over");
        if config.solver {
            if let Some(i) = self.children(node).iter().position(|e| self.proven(e) == Some(player)) {
                return n.first_edge + i as u32;
            }
        }
        let parent_value = if n.visits > 0 { as_seen_by(n.white_value_sum / n.visits as f32, player) } else { 0.0 };
        let fpu = parent_value - config.fpu_reduction;
        let pending_total: u32 = self.children(node).iter().map(|e| e.pending).sum();
        let sqrt_n = ((n.visits + pending_total) as f32).max(1.0).sqrt();
        let mut best = (f32::NEG_INFINITY, n.first_edge);
        for (i, e) in self.children(node).iter().enumerate() {
            let visits = e.visits + e.pending;
            let q =
                if visits == 0 { fpu } else { (e.value_sum - config.virtual_loss * e.pending as f32) / visits as f32 };
            let u = config.c_puct * e.prior * sqrt_n / (1.0 + visits as f32);
            // A proven win was taken above: a proven edge here is a loss,
            // avoided unless every edge is (a lost position: PUCT as usual).
            let avoid = config.solver && n.proven.is_none() && self.proven(e).is_some();
            let score = if avoid { f32::MIN } else { q + u };
            if score > best.0 {
                best = (score, n.first_edge + i as u32);
            }
        }
        best.1
    }

    fn gumbel_edge(&mut self) -> u32 {
        let first = self.nodes[self.root as usize].first_edge;
        let visits: Vec<u32> = self.children(self.root).iter().map(|e| e.visits + e.pending).collect();
        let q = self.completed_q();
        let max_visits = self.max_root_visits();
        let gumbel = self.gumbel.as_mut().expect("gumbel search started");
        first + gumbel.select(|i| visits[i], |i| q[i], max_visits) as u32
    }

    fn expand(&mut self, node: u32, actions: &[Action], priors: &[f32]) {
        assert_eq!(actions.len(), priors.len(), "one prior per legal action");
        debug_assert_eq!(actions, self.nodes[node as usize].pos.legal_actions(), "the legal actions");
        let first = self.edges.len() as u32;
        self.edges.extend(actions.iter().zip(priors).map(|(&action, &prior)| Edge {
            action,
            prior,
            child: None,
            visits: 0,
            value_sum: 0.0,
            pending: 0,
        }));
        let n = &mut self.nodes[node as usize];
        n.first_edge = first;
        n.num_edges = actions.len() as u32;
        n.expanded = true;
    }

    fn revert_pending(&mut self, path: &[u32]) {
        for &e in path {
            self.edges[e as usize].pending -= 1;
        }
    }

    /// Adds a value (as seen by White) to `leaf` and every edge and node above it.
    fn backup(&mut self, leaf: u32, path: &[u32], white_value: f32) {
        let leaf = &mut self.nodes[leaf as usize];
        leaf.visits += 1;
        leaf.white_value_sum += white_value;
        let mut node = self.root;
        for &e in path {
            let n = &mut self.nodes[node as usize];
            n.visits += 1;
            n.white_value_sum += white_value;
            let chooser = n.pos.to_act().expect("an inner node is not over");
            let edge = &mut self.edges[e as usize];
            edge.visits += 1;
            edge.value_sum += as_seen_by(white_value, chooser);
            node = edge.child.expect("edges on a path lead somewhere");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::{removal_by_the_player_who_did_not_push, win_in_one};
    use crate::rules::WinReason;
    use rand::SeedableRng;

    #[test]
    fn finds_the_winning_removal() {
        let mut tree = Tree::new(win_in_one());
        tree.run(&mut UniformEvaluator, 64, &SearchConfig::default()).unwrap();
        let counts = tree.root_visit_counts();
        let (best, _) = counts.iter().max_by_key(|(_, v)| *v).unwrap();
        assert_eq!(best.to_string(), "xb5,c5,d5,e5,f4,g3,h2");
        let mut pos = *tree.root_position();
        pos.play(*best).unwrap();
        assert_eq!(pos.outcome().map(|o| (o.winner, o.reason)), Some((Color::White, WinReason::NoGipfPiece)));
        assert!(tree.root_value() > 0.5, "the root is seen as won: {}", tree.root_value());
    }

    #[test]
    fn visit_counts_add_up() {
        for batch_size in [1, 4, 16] {
            let mut tree = Tree::new(Position::new(crate::rules::Variant::Standard));
            let config = SearchConfig { batch_size, ..SearchConfig::default() };
            tree.run(&mut UniformEvaluator, 200, &config).unwrap();
            let total: u32 = tree.root_visit_counts().iter().map(|(_, v)| v).sum();
            assert_eq!(tree.root_visits(), 200, "batch {batch_size}");
            assert_eq!(total + 1, 200, "every visit but the root's own expansion goes to a child");
            assert!(tree.edges.iter().all(|e| e.pending == 0));
        }
    }

    /// Black removes rows white's push made, then black pushes: black acts
    /// twice running, and the search must keep black's view for both.
    #[test]
    fn value_sign_holds_when_the_same_player_acts_twice() {
        struct Fixed;
        impl Evaluator for Fixed {
            /// Every position is worth +0.5 to White.
            fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation> {
                positions
                    .iter()
                    .map(|p| Evaluation::uniform(p, if p.to_act() == Some(Color::White) { 0.5 } else { -0.5 }))
                    .collect()
            }
        }
        let pos = removal_by_the_player_who_did_not_push();
        let mut tree = Tree::new(pos);
        // Batches of 8 keep these 100 simulations short of any finished game.
        tree.run(&mut Fixed, 100, &SearchConfig { batch_size: 8, ..SearchConfig::default() }).unwrap();
        assert!((tree.root_value() + 0.5).abs() < 1e-4, "black's root value {}", tree.root_value());
        for e in tree.children(tree.root) {
            if e.visits > 0 {
                assert!((e.value_sum / e.visits as f32 + 0.5).abs() < 1e-4, "black's edge value");
            }
        }
    }

    /// The priors the tree expands with are softmax(logits / T): the
    /// network's priors raised to 1/T and normalised.
    #[test]
    fn a_policy_temperature_flattens_the_priors() {
        struct Skewed;
        impl Evaluator for Skewed {
            /// The first action has prior 0.5, the others share the rest.
            fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation> {
                positions
                    .iter()
                    .map(|p| {
                        let mut e = Evaluation::uniform(p, 0.0);
                        let rest = 0.5 / (e.priors.len() - 1) as f32;
                        e.priors = (0..e.priors.len()).map(|i| if i == 0 { 0.5 } else { rest }).collect();
                        e
                    })
                    .collect()
            }
        }
        for temperature in [1.0f32, 2.0, 0.5] {
            let mut tree = Tree::new(Position::new(crate::rules::Variant::Standard));
            let config = SearchConfig { batch_size: 1, policy_temperature: temperature, ..SearchConfig::default() };
            tree.run(&mut Skewed, 1, &config).unwrap();
            let priors: Vec<f32> = tree.children(tree.root).iter().map(|e| e.prior).collect();
            let rest = 0.5 / (priors.len() - 1) as f32;
            let (first, other) = (0.5f32.powf(1.0 / temperature), rest.powf(1.0 / temperature));
            let sum = first + other * (priors.len() - 1) as f32;
            assert!((priors[0] - first / sum).abs() < 1e-5, "T {temperature}: {} against {}", priors[0], first / sum);
            assert!((priors.iter().sum::<f32>() - 1.0).abs() < 1e-5, "T {temperature}: a distribution");
        }
    }

    #[test]
    fn noise_keeps_priors_a_distribution() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let mut tree = Tree::new(Position::new(crate::rules::Variant::Standard));
        tree.add_root_noise(0.3, 0.25, &mut rng).unwrap();
        assert!(!tree.root_expanded(), "nothing to add noise to yet");
        tree.run(&mut UniformEvaluator, 1, &SearchConfig::default()).unwrap();
        tree.add_root_noise(0.3, 0.25, &mut rng).unwrap();
        let sum: f32 = tree.children(tree.root).iter().map(|e| e.prior).sum();
        assert!((sum - 1.0).abs() < 1e-4);
        assert!(tree.children(tree.root).iter().any(|e| (e.prior - 1.0 / 42.0).abs() > 1e-3));
    }

    #[test]
    fn gumbel_finds_the_winning_removal_within_its_candidates() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(4);
        for candidates in [2, 4, 16] {
            let mut tree = Tree::new(win_in_one());
            tree.run(&mut UniformEvaluator, 1, &SearchConfig::default()).unwrap();
            tree.start_gumbel(candidates, 32, &mut rng);
            tree.run(&mut UniformEvaluator, 32, &SearchConfig::default()).unwrap();
            let visited = tree.root_visit_counts().iter().filter(|(_, v)| *v > 0).count();
            assert!(visited <= candidates, "{visited} actions visited with {candidates} candidates");
            let target = tree.policy_target();
            assert!((target.iter().map(|(_, p)| p).sum::<f32>() - 1.0).abs() < 1e-4);
            // Both root actions are candidates whenever there are two or more.
            assert_eq!(tree.best_action().unwrap().to_string(), "xb5,c5,d5,e5,f4,g3,h2");
            let (best, p) = target.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
            assert_eq!(best.to_string(), "xb5,c5,d5,e5,f4,g3,h2", "improved policy {p}");
        }
    }

    #[test]
    fn gumbel_halving_spreads_then_narrows_the_visits() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
        let mut tree = Tree::new(Position::new(crate::rules::Variant::Standard));
        tree.run(&mut UniformEvaluator, 1, &SearchConfig::default()).unwrap();
        tree.start_gumbel(8, 96, &mut rng);
        tree.run(&mut UniformEvaluator, 96, &SearchConfig { batch_size: 1, ..SearchConfig::default() }).unwrap();
        let mut visits: Vec<u32> = tree.root_visit_counts().iter().map(|(_, v)| *v).filter(|&v| v > 0).collect();
        visits.sort();
        assert_eq!(visits.len(), 8, "every candidate visited in the first phase: {visits:?}");
        // 3 phases of 32: 4 each for 8, then 8 more each for 4, then 16 more each for 2.
        assert_eq!(visits[..4], [4, 4, 4, 4], "{visits:?}");
        assert!(visits[6] >= 28, "the last two share the last phase: {visits:?}");
        assert!(tree.best_action().is_some());
    }

    /// On a root reused from the previous search, whose edges already hold
    /// visits, the new budget is shared out as on a fresh root: every
    /// candidate gets its first-phase share of new visits.
    #[test]
    fn gumbel_on_a_reused_tree_spends_its_budget_on_its_candidates() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(6);
        let config = SearchConfig { batch_size: 1, ..SearchConfig::default() };
        let mut tree = Tree::new(Position::new(crate::rules::Variant::Standard));
        tree.run(&mut UniformEvaluator, 6000, &config).unwrap();
        let (action, _) = *tree.root_visit_counts().iter().max_by_key(|(_, v)| *v).unwrap();
        tree.advance(action).unwrap();
        assert!(tree.root_visits() > 40, "a reused root with visits: {}", tree.root_visits());
        let before: Vec<u32> = tree.root_visit_counts().iter().map(|(_, v)| *v).collect();
        tree.start_gumbel(8, 96, &mut rng);
        let candidates = tree.gumbel.as_ref().unwrap().remaining().to_vec();
        tree.run(&mut UniformEvaluator, 96, &config).unwrap();
        let new: Vec<u32> =
            tree.root_visit_counts().iter().zip(&before).map(|((_, after), before)| after - before).collect();
        assert_eq!(new.iter().sum::<u32>(), 96);
        for &i in &candidates {
            assert!(new[i] >= 4, "candidate {i} got {} new visits: {new:?} (before {before:?})", new[i]);
        }
        assert!(new.iter().enumerate().all(|(i, &n)| n == 0 || candidates.contains(&i)));
    }

    /// An unvisited root action is valued at the mixed value: the root's own
    /// evaluation blended with the visited actions' values by prior.
    #[test]
    fn unvisited_actions_are_completed_with_the_mixed_value() {
        struct Half;
        impl Evaluator for Half {
            /// Every position is worth +0.5 to its player to act.
            fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation> {
                positions.iter().map(|p| Evaluation::uniform(p, 0.5)).collect()
            }
        }
        let mut tree = Tree::new(Position::new(crate::rules::Variant::Standard));
        tree.run(&mut Half, 3, &SearchConfig { batch_size: 1, ..SearchConfig::default() }).unwrap();
        // Two actions visited once, each worth -0.5 to the root player (the opponent acts next).
        let q = tree.completed_q();
        let visited = tree.children(tree.root).iter().filter(|e| e.visits > 0).count();
        assert_eq!(visited, 2);
        let unvisited = q[tree.children(tree.root).iter().position(|e| e.visits == 0).unwrap()];
        // (0.5 + 2 * -0.5) / 3
        assert!((unvisited + 0.5 / 3.0).abs() < 1e-5, "{unvisited}");
    }

    /// A batch whose evaluations are not finite is refused, as the batched
    /// driver refuses such outputs: the search stops with an error, its
    /// tree as before the batch, and goes on when evaluations are finite.
    #[test]
    fn evaluations_that_are_not_finite_are_refused() {
        struct Broken(f32);
        impl Evaluator for Broken {
            fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation> {
                positions.iter().map(|p| Evaluation::uniform(p, self.0)).collect()
            }
        }
        let config = SearchConfig { batch_size: 4, ..SearchConfig::default() };
        let mut tree = Tree::new(Position::new(crate::rules::Variant::Standard));
        tree.run(&mut UniformEvaluator, 20, &config).unwrap();
        let before = tree.root_visit_counts();
        for broken in [f32::NAN, f32::INFINITY] {
            assert_eq!(tree.run(&mut Broken(broken), 8, &config), Err(NotFinite));
            assert_eq!(tree.root_visit_counts(), before, "the tree changed");
        }
        let mut nan_priors = Tree::new(Position::new(crate::rules::Variant::Standard));
        struct NanPriors;
        impl Evaluator for NanPriors {
            fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation> {
                let mut logits = vec![f32::INFINITY; crate::encoding::NUM_ACTIONS];
                logits[0] = f32::NEG_INFINITY;
                positions.iter().map(|p| Evaluation::from_logits(p, &logits, 0.0)).collect()
            }
        }
        assert_eq!(nan_priors.run(&mut NanPriors, 4, &config), Err(NotFinite));
        assert!(!nan_priors.root_expanded());
        tree.run(&mut UniformEvaluator, 8, &config).unwrap();
        assert_eq!(tree.root_visits(), 28);
    }

    /// Bad arguments to the search's public calls are errors that change
    /// nothing, not panics.
    #[test]
    fn bad_arguments_are_errors_that_change_nothing() {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(1);
        let config = SearchConfig::default();
        let mut tree = Tree::new(Position::new(crate::rules::Variant::Standard));
        tree.run(&mut UniformEvaluator, 8, &config).unwrap();
        let priors = |t: &Tree| t.children(t.root).iter().map(|e| e.prior).collect::<Vec<_>>();
        let before = priors(&tree);
        for (alpha, fraction) in [(0.0, 0.25), (-1.0, 0.25), (f32::NAN, 0.25), (f32::INFINITY, 0.25), (0.3, 1.5)] {
            assert!(tree.add_root_noise(alpha, fraction, &mut rng).is_err(), "alpha {alpha}, fraction {fraction}");
            assert_eq!(priors(&tree), before);
        }
        assert!(tree.advance(Action::Leave).is_err(), "leaving is not an action at the start");
        assert_eq!(tree.root_visits(), 8);
        let mut search = Search::new(Position::new(crate::rules::Variant::Standard), 1);
        for root in [Root::Gumbel { candidates: 0 }, Root::Noise { alpha: 0.0, fraction: 0.25, forced_playouts: 0.0 }] {
            assert_eq!(search.start(10, root, &config), Err(InvalidRoot(root)));
        }
        assert_eq!(search.target(), 0, "nothing started");
        assert_eq!(
            search.advance(Action::Leave),
            Err(Position::new(crate::rules::Variant::Standard).check(Action::Leave).unwrap_err())
        );
        assert_eq!(crate::rules::Symmetry::new(12), None);
        assert_eq!(crate::rules::Push::new(42, false), None);
        assert!(crate::rules::Push::new(41, true).is_some());
    }
}
