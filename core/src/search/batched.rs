//! Many searches advanced together, their leaves evaluated in one batch: the
//! leaf life cycle (gather, encode, evaluate, apply) that self-play, the
//! arena's batched matches, the web engine and the Python package share (a
//! single player's search takes the same batches through [`Tree::run`]).
//!
//! A [`Search`] is one decision's search on a tree that follows its game:
//! started with the visits its root must reach and how its root is
//! prepared (noise, Gumbel candidates). [`Batched`] holds many games, each
//! with its search, and runs a batch in three steps, so that an evaluator
//! that answers later (a web page's network, another thread) can sit
//! between them: [`Batched::gather`] (leaves selected and encoded),
//! [`Batched::input`] to the network, [`Batched::apply`] with its outputs.

use rand::rngs::SmallRng;
use rand::SeedableRng;

use super::{Evaluation, Forward, Leaf, SearchConfig, Tree};
use crate::encoding::{encode, INPUT_SIZE, NUM_ACTIONS};
use crate::rules::{Action, IllegalAction, Position};

/// How a search prepares its root once the root is expanded.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Root {
    /// PUCT over the network's priors as they are.
    #[default]
    Plain,
    /// Dirichlet noise (`fraction` of noise of concentration `alpha`) mixed
    /// into the priors, and KataGo's forced playouts with factor
    /// `forced_playouts` (0: none).
    Noise {
        /// The Dirichlet concentration, above 0.
        alpha: f32,
        /// The noise's share of each prior, in 0..=1.
        fraction: f32,
        /// The forced playouts' factor, in 0..=100 (0: none).
        forced_playouts: f32,
    },
    /// Gumbel root selection among `candidates` sampled actions.
    Gumbel {
        /// How many actions are sampled, at least 1.
        candidates: usize,
    },
}

/// A [`Root`] whose settings are out of their ranges.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error(
    "root {0:?}: the noise's alpha must be positive, its fraction from 0 to 1 and the forced playouts' factor \
     from 0 to 100, and Gumbel selection needs a candidate"
)]
pub struct InvalidRoot(pub Root);

impl Root {
    /// Whether its settings are in their ranges.
    pub fn check(self) -> Result<Root, InvalidRoot> {
        let valid = match self {
            Root::Plain => true,
            Root::Noise { alpha, fraction, forced_playouts } => {
                alpha > 0.0
                    && alpha.is_finite()
                    && (0.0..=1.0).contains(&fraction)
                    && (0.0..=100.0).contains(&forced_playouts)
            }
            Root::Gumbel { candidates } => candidates >= 1,
        };
        valid.then_some(self).ok_or(InvalidRoot(self))
    }
}

/// One decision's search on a tree that follows its game, with the game's
/// random source (root noise, Gumbel draws, and whatever else the game draws).
pub struct Search {
    tree: Tree,
    /// Root visits the search must reach.
    target: u32,
    root: Root,
    /// Whether the root got its noise or its candidates.
    prepared: bool,
    rng: SmallRng,
}

impl Search {
    /// A search tree at `pos`, not yet started; `seed` seeds its random source.
    pub fn new(pos: Position, seed: u64) -> Search {
        Search {
            tree: Tree::new(pos),
            target: 0,
            root: Root::Plain,
            prepared: true,
            rng: SmallRng::seed_from_u64(seed),
        }
    }

    /// Starts a search that runs until the root has `target` visits (those
    /// a reused root already has count), its root prepared as `root` says:
    /// at once when the root is already expanded, else after its first batch.
    /// Root settings out of their ranges are an error, and nothing starts.
    pub fn start(&mut self, target: u32, root: Root, config: &SearchConfig) -> Result<(), InvalidRoot> {
        self.root = root.check()?;
        self.target = target;
        self.prepared = false;
        self.prepare_root(config);
        Ok(())
    }

    fn prepare_root(&mut self, config: &SearchConfig) {
        if self.prepared || !self.tree.root_expanded() {
            return;
        }
        match self.root {
            Root::Plain => {}
            Root::Noise { alpha, fraction, forced_playouts } => {
                self.tree.add_root_noise(alpha, fraction, &mut self.rng).expect("start checked the noise");
                if forced_playouts > 0.0 {
                    self.tree.start_forced_playouts(forced_playouts, config);
                }
            }
            Root::Gumbel { candidates } => {
                let budget = self.target.saturating_sub(self.tree.root_visits());
                self.tree.start_gumbel(candidates, budget, &mut self.rng);
            }
        }
        self.prepared = true;
    }

    /// Whether the search has reached its visits (and its root has its edges).
    pub fn is_done(&self) -> bool {
        self.tree.root_expanded() && self.tree.root_visits() >= self.target
    }

    /// The visits the root must reach.
    pub fn target(&self) -> u32 {
        self.target
    }

    /// The tree, to read the search's results from.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// The tree, for a test that runs it itself: outside the crate a
    /// search's tree changes only through the search.
    #[cfg(test)]
    pub(crate) fn tree_mut(&mut self) -> &mut Tree {
        &mut self.tree
    }

    /// The game's random source.
    pub fn rng(&mut self) -> &mut SmallRng {
        &mut self.rng
    }

    /// Moves the root down to the position after `action`, keeping the
    /// subtree searched below it; the next search must be started. An
    /// action not legal at the root is an error, and nothing changes.
    pub fn advance(&mut self, action: Action) -> Result<(), IllegalAction> {
        self.tree.advance(action)?;
        self.target = 0;
        Ok(())
    }

    /// Moves on past the forced actions (the only legal one, played without
    /// a search), at most `max` of them; returns them in order.
    pub fn skip_forced(&mut self, max: usize) -> Vec<Action> {
        let mut played = Vec::new();
        while played.len() < max {
            let Some(action) = self.tree.root_position().only_action() else { break };
            self.advance(action).expect("the only legal action is legal");
            played.push(action);
        }
        played
    }

    fn gather(&mut self, config: &SearchConfig) -> Vec<Leaf> {
        match self.is_done() {
            true => Vec::new(),
            false => self.tree.gather_toward(self.target, config),
        }
    }

    fn apply(&mut self, leaves: Vec<Leaf>, evaluations: Vec<Evaluation>, config: &SearchConfig) {
        self.tree.apply(leaves, evaluations, config);
        self.prepare_root(config);
    }
}

/// A game that [`Batched`] advances: it owns a search.
pub trait Searching {
    /// The game's search.
    fn search(&mut self) -> &mut Search;
}

impl Searching for Search {
    fn search(&mut self) -> &mut Search {
        self
    }
}

/// The network gave an output that is not a finite number.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("the network gave a value or logits that are not finite")]
pub struct NotFinite;

/// Why [`Batched`] refused a call: its games and their trees stay as they
/// were.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BatchError {
    /// The outputs hold a number that is not finite.
    #[error(transparent)]
    NotFinite(#[from] NotFinite),
    /// Outputs of another size than the gathered batch's.
    #[error(
        "{logits} logits and {values} values for a batch of {leaves} leaves ({NUM_ACTIONS} logits and one value a \
         leaf expected)"
    )]
    Outputs {
        /// Leaves in the gathered batch.
        leaves: usize,
        /// Logits given.
        logits: usize,
        /// Values given.
        values: usize,
    },
    /// A gathered batch waits for its outputs: games cannot leave, nor a
    /// next batch be gathered, before they are applied.
    #[error("a gathered batch waits for its outputs")]
    Waiting,
}

/// Many games, each with its search, whose leaves share one batch.
///
/// ```rust
/// use gipf_core::encoding::{INPUT_SIZE, NUM_ACTIONS};
/// use gipf_core::rules::{Position, Variant};
/// use gipf_core::search::{Batched, Root, Search, SearchConfig};
///
/// let config = SearchConfig::default();
/// let mut batched = Batched::default();
/// for seed in 0..2 {
///     let mut search = Search::new(Position::new(Variant::Standard), seed);
///     search.start(32, Root::Plain, &config).unwrap();
///     batched.push(search);
/// }
/// loop {
///     let n = batched.gather(&config, |_| true).unwrap();
///     if n == 0 {
///         break;
///     }
///     assert_eq!(batched.input().len(), n * INPUT_SIZE);
///     // A network would run on `batched.input()` here; all zeros stand in
///     // for its outputs (uniform priors, value 0), as `ConstantForward` gives.
///     let (logits, values) = (vec![0.0; n * NUM_ACTIONS], vec![0.0; n]);
///     batched.apply(&logits, &values, &config).unwrap();
/// }
/// for search in batched.games() {
///     assert!(search.is_done() && search.tree().root_visits() >= 32);
///     let best = search.tree().best_action().unwrap();
///     assert!(search.tree().root_position().is_legal(best));
/// }
/// ```
pub struct Batched<G> {
    games: Vec<G>,
    /// Each game's leaves in the gathered batch (empty: none from it).
    leaves: Vec<Vec<Leaf>>,
    /// The gathered leaves, encoded.
    input: Vec<f32>,
}

impl<G> Default for Batched<G> {
    fn default() -> Batched<G> {
        Batched { games: Vec::new(), leaves: Vec::new(), input: Vec::new() }
    }
}

impl<G: Searching + Send> Batched<G> {
    /// The games, in the order they were added.
    pub fn games(&self) -> &[G] {
        &self.games
    }

    /// The games, to play where their searches are done. Games are added
    /// removed only between batches ([`Batched::take_if`]).
    pub fn games_mut(&mut self) -> &mut [G] {
        &mut self.games
    }

    /// The number of games.
    pub fn len(&self) -> usize {
        self.games.len()
    }

    /// Whether there are no games.
    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }

    /// Whether a gathered batch waits for its outputs.
    pub fn is_waiting(&self) -> bool {
        self.leaves.iter().any(|l| !l.is_empty())
    }

    /// Adds a game (while a batch waits too: it has no leaves in it).
    pub fn push(&mut self, game: G) {
        self.games.push(game);
    }

    /// Removes the games for which `done` holds and returns them; the
    /// others keep their order.
    pub fn take_if(&mut self, mut done: impl FnMut(&G) -> bool) -> Result<Vec<G>, BatchError> {
        if self.is_waiting() {
            return Err(BatchError::Waiting);
        }
        let (taken, kept) = std::mem::take(&mut self.games).into_iter().partition(|g| done(g));
        self.games = kept;
        Ok(taken)
    }

    /// Gathers the next leaves (up to `config.batch_size` each) of the
    /// searches not yet done in the games for which `include` holds, and
    /// encodes them ([`Batched::input`]). Returns how many there are.
    pub fn gather(&mut self, config: &SearchConfig, include: impl Fn(&G) -> bool + Sync) -> Result<usize, BatchError> {
        if self.is_waiting() {
            return Err(BatchError::Waiting);
        }
        self.leaves = map_each(&mut self.games, |game| match include(game) {
            true => game.search().gather(config),
            false => Vec::new(),
        });
        let count: usize = self.leaves.iter().map(Vec::len).sum();
        self.input.resize(count * INPUT_SIZE, 0.0);
        let positions = self
            .games
            .iter_mut()
            .zip(&self.leaves)
            .flat_map(|(game, leaves)| {
                let tree = &game.search().tree;
                leaves.iter().map(|leaf| *tree.leaf_position(leaf)).collect::<Vec<_>>()
            })
            .collect::<Vec<Position>>();
        let mut jobs: Vec<(&mut [f32], Position)> = self.input.chunks_mut(INPUT_SIZE).zip(positions).collect();
        map_each(&mut jobs, |(chunk, pos)| encode(pos, chunk));
        Ok(count)
    }

    /// The encoded leaves of the gathered batch, one row of [`INPUT_SIZE`]
    /// each, game by game.
    pub fn input(&self) -> &[f32] {
        &self.input
    }

    /// How many leaves wait for their outputs.
    pub fn count(&self) -> usize {
        self.input.len() / INPUT_SIZE
    }

    /// Applies the network's outputs for the gathered batch: `logits`
    /// ([`NUM_ACTIONS`] a leaf) and `values`, in the order of
    /// [`Batched::input`]. Outputs that are not finite apply nothing and
    /// drop the batch; outputs of another size apply nothing and leave the
    /// batch waiting.
    pub fn apply(&mut self, logits: &[f32], values: &[f32], config: &SearchConfig) -> Result<(), BatchError> {
        let count = self.count();
        if logits.len() != count * NUM_ACTIONS || values.len() != count {
            return Err(BatchError::Outputs { leaves: count, logits: logits.len(), values: values.len() });
        }
        let leaves = std::mem::take(&mut self.leaves);
        if !logits.iter().chain(values).all(|x| x.is_finite()) {
            for (game, leaves) in self.games.iter_mut().zip(&leaves) {
                game.search().tree.revert_leaves(leaves);
            }
            self.input.clear();
            return Err(NotFinite.into());
        }
        let mut jobs = Vec::with_capacity(self.games.len());
        let (mut logits, mut values) = (logits, values);
        for (game, leaves) in self.games.iter_mut().zip(leaves) {
            let (l, rest_logits) = logits.split_at(leaves.len() * NUM_ACTIONS);
            let (v, rest_values) = values.split_at(leaves.len());
            (logits, values) = (rest_logits, rest_values);
            jobs.push((game, leaves, l, v));
        }
        map_each(&mut jobs, |(game, leaves, logits, values)| {
            let search = game.search();
            let leaves = std::mem::take(leaves);
            let evaluations = leaves
                .iter()
                .zip(logits.chunks(NUM_ACTIONS))
                .zip(values.iter())
                .map(|((leaf, logits), &value)| Evaluation::from_logits(search.tree.leaf_position(leaf), logits, value))
                .collect();
            search.apply(leaves, evaluations, config);
        });
        self.input.clear();
        Ok(())
    }

    /// One batch: gathers from the games where `include` holds, runs
    /// `forward` on it and applies its outputs. Returns how many leaves it
    /// evaluated.
    pub fn evaluate(
        &mut self,
        forward: &mut dyn Forward,
        config: &SearchConfig,
        include: impl Fn(&G) -> bool + Sync,
    ) -> Result<usize, BatchError> {
        let count = self.gather(config, include)?;
        if count > 0 {
            let (logits, values) = forward.forward(&self.input, count);
            self.apply(&logits, &values, config)?;
        }
        Ok(count)
    }
}

/// `f` on every item, on rayon's threads with the `parallel` feature (the
/// web build runs them in turn).
pub(crate) fn map_each<T: Send, R: Send>(items: &mut [T], f: impl Fn(&mut T) -> R + Sync + Send) -> Vec<R> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        items.par_iter_mut().map(f).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter_mut().map(f).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Variant;
    use crate::search::{ConstantForward, UniformEvaluator};

    /// Many searches driven in batches reach the same trees as each run
    /// alone with the same evaluations (uniform priors, value 0).
    #[test]
    fn batched_searches_match_searches_run_alone() {
        let config = SearchConfig { batch_size: 4, ..SearchConfig::default() };
        let mut batched = Batched::default();
        let mut alone = Vec::new();
        let mut pos = Position::new(Variant::Standard);
        for i in 0..5u32 {
            let mut search = Search::new(pos, i as u64);
            search.start(10 + 7 * i, Root::Plain, &config).unwrap();
            batched.push(search);
            let mut tree = Tree::new(pos);
            tree.run(&mut UniformEvaluator, 10 + 7 * i, &config).unwrap();
            alone.push(tree);
            pos.play(pos.legal_actions()[0]).unwrap();
        }
        let mut batches = 0;
        while batched.evaluate(&mut ConstantForward, &config, |_| true).unwrap() > 0 {
            batches += 1;
        }
        assert!(batches >= (10 + 7 * 4) / 4, "{batches} batches");
        for (search, tree) in batched.games().iter().zip(&alone) {
            assert!(search.is_done());
            assert_eq!(search.tree().root_visit_counts(), tree.root_visit_counts());
        }
    }

    /// The next search on a reused root (already expanded) gets its noise
    /// before its first batch is gathered, not after it.
    #[test]
    fn a_reused_root_is_prepared_before_its_first_batch() {
        let config = SearchConfig::default();
        let noise = Root::Noise { alpha: 0.3, fraction: 0.25, forced_playouts: 0.0 };
        let mut search = Search::new(Position::new(Variant::Standard), 1);
        search.start(200, noise, &config).unwrap();
        assert!(!search.prepared, "a fresh root is prepared once it is expanded");
        search.tree_mut().run(&mut UniformEvaluator, 200, &config).unwrap();
        search.advance(search.tree().best_action().unwrap()).unwrap();
        assert!(search.tree().root_expanded(), "the root was reused");
        let priors = |s: &Search| s.tree.children(s.tree.root).iter().map(|e| e.prior).collect::<Vec<_>>();
        let before = priors(&search);
        search.start(400, noise, &config).unwrap();
        assert!(search.prepared, "its noise came before the first batch");
        let after = priors(&search);
        assert_ne!(after, before, "the noise is in the root's priors");
        assert!((after.iter().sum::<f32>() - 1.0).abs() < 1e-5, "still a distribution: {after:?}");
    }

    /// Outputs that are not finite, or of another size than the batch's,
    /// are refused and leave the trees as they were; while a batch waits,
    /// neither a next one nor games leaving are allowed.
    #[test]
    fn outputs_that_are_not_finite_apply_nothing() {
        let config = SearchConfig::default();
        let mut batched = Batched::default();
        let mut search = Search::new(Position::new(Variant::Standard), 1);
        search.start(50, Root::Plain, &config).unwrap();
        batched.push(search);
        batched.evaluate(&mut ConstantForward, &config, |_| true).unwrap();
        let before = batched.games()[0].tree().root_visit_counts();
        let n = batched.gather(&config, |_| true).unwrap();
        assert_eq!(batched.gather(&config, |_| true), Err(BatchError::Waiting));
        assert_eq!(batched.take_if(|_| true).err(), Some(BatchError::Waiting));
        let short = batched.apply(&vec![0.0; n * NUM_ACTIONS], &vec![0.0; n - 1], &config);
        assert_eq!(short, Err(BatchError::Outputs { leaves: n, logits: n * NUM_ACTIONS, values: n - 1 }));
        assert!(batched.is_waiting(), "the batch still waits for its outputs");
        let mut values = vec![0.0; n];
        values[n - 1] = f32::NAN;
        assert_eq!(batched.apply(&vec![0.0; n * NUM_ACTIONS], &values, &config), Err(NotFinite.into()));
        assert!(!batched.is_waiting());
        assert_eq!(batched.games()[0].tree().root_visit_counts(), before);
        assert!(batched.evaluate(&mut ConstantForward, &config, |_| true).unwrap() > 0, "the search goes on");
    }

    /// A game left out of a batch keeps its search where it was.
    #[test]
    fn games_left_out_are_not_searched() {
        let config = SearchConfig::default();
        let mut batched = Batched::default();
        for target in [20, 21] {
            let mut search = Search::new(Position::new(Variant::Standard), 1);
            search.start(target, Root::Plain, &config).unwrap();
            batched.push(search);
        }
        batched.evaluate(&mut ConstantForward, &config, |g| g.target() == 20).unwrap();
        assert_eq!(batched.games()[0].tree().root_visits(), 1);
        assert_eq!(batched.games()[1].tree().root_visits(), 0);
    }
}
