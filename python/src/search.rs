//! `Searches`: the core's batched search for an evaluator in Python, and
//! the checks on what the evaluator gives back.

use gipf_core::encoding::{GRID, NUM_ACTIONS, NUM_PLANES};
use gipf_core::search::{Batched, Root, Search, SearchConfig, Searching, MAX_SIMULATIONS};
use numpy::{PyArray1, PyArray4, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::game::Game;
use crate::value_error;

fn parse_root(root: &str, alpha: f32, fraction: f32, candidates: usize) -> PyResult<Root> {
    match root {
        "plain" => Ok(Root::Plain),
        "noise" => Ok(Root::Noise { alpha, fraction, forced_playouts: 0.0 }),
        "gumbel" => Ok(Root::Gumbel { candidates }),
        _ => Err(value_error(format!("root {root:?}: expected plain, noise or gumbel"))),
    }
}

/// The gathered leaves' input planes: float32 of shape (n, planes, 7, 7).
pub(crate) fn planes<'py, G: Searching + Send>(
    py: Python<'py>,
    batched: &Batched<G>,
) -> PyResult<Bound<'py, PyArray4<f32>>> {
    PyArray1::from_slice(py, batched.input()).reshape([batched.count(), NUM_PLANES, GRID, GRID])
}

/// Applies an evaluator's outputs for the gathered leaves, each checked
/// first: policy logits of shape (n, NUM_ACTIONS) and values from -1 to 1
/// of shape (n,); a refused batch changes nothing.
pub(crate) fn apply_outputs<G: Searching + Send>(
    py: Python<'_>,
    batched: &mut Batched<G>,
    config: &SearchConfig,
    logits: PyReadonlyArray2<'_, f32>,
    values: PyReadonlyArray1<'_, f32>,
) -> PyResult<()> {
    if !batched.is_waiting() {
        return Err(value_error("no batch is waiting for its outputs"));
    }
    let n = batched.count();
    if logits.shape() != [n, NUM_ACTIONS] || values.shape() != [n] {
        return Err(value_error(format!(
            "expected logits of shape ({n}, {NUM_ACTIONS}) and values of shape ({n},), got {:?} and {:?}",
            logits.shape(),
            values.shape()
        )));
    }
    let (logits, values) = (logits.as_slice()?, values.as_slice()?);
    if values.iter().any(|v| v.abs() > 1.0) {
        return Err(value_error("values must be from -1 to 1"));
    }
    py.detach(|| batched.apply(logits, values, config)).map_err(value_error)
}

/// The core's batched search over many games at once, as self-play runs
/// it, for an evaluator outside it: `gather()` gives the leaves' input
/// planes, the evaluator's policy logits and values go back through
/// `apply()`, until `gather()` gives none. `gipf.search` drives it with a
/// Python callable.
#[pyclass(module = "gipf._core")]
pub(crate) struct Searches {
    batched: Batched<Search>,
    config: SearchConfig,
}

#[pymethods]
impl Searches {
    /// One search per game (its current position) of `simulations`
    /// simulations, the game's `i` seeded with `seed + i`; root "plain",
    /// "noise" (Dirichlet noise: `noise` = (alpha, fraction)) or "gumbel"
    /// (Gumbel root selection among `candidates` actions).
    #[new]
    #[pyo3(signature = (games, simulations, batch_size = 4, seed = 0, root = "plain", noise = (0.3, 0.25), candidates = 8))]
    fn new(
        games: Vec<PyRef<'_, Game>>,
        simulations: u32,
        batch_size: usize,
        seed: u64,
        root: &str,
        noise: (f32, f32),
        candidates: usize,
    ) -> PyResult<Searches> {
        if !(1..=MAX_SIMULATIONS).contains(&simulations) {
            return Err(value_error(format!("simulations must be from 1 to {MAX_SIMULATIONS}")));
        }
        let (alpha, fraction) = noise;
        let root = parse_root(root, alpha, fraction, candidates)?;
        let config = SearchConfig { batch_size, ..SearchConfig::default() };
        config.validate().map_err(value_error)?;
        let mut batched = Batched::default();
        for (i, game) in games.iter().enumerate() {
            if game.pos.is_over() {
                return Err(value_error(format!("game {i} is over: there is nothing to search")));
            }
            let mut search = Search::new(game.pos, seed.wrapping_add(i as u64));
            search.start(simulations, root, &config).map_err(value_error)?;
            batched.push(search);
        }
        Ok(Searches { batched, config })
    }

    /// Gathers the next leaves and returns their input planes, float32 of
    /// shape (n, planes, 7, 7); n is 0 once every search is done.
    fn gather<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray4<f32>>> {
        py.detach(|| self.batched.gather(&self.config, |_| true)).map_err(value_error)?;
        planes(py, &self.batched)
    }

    /// Applies the evaluator's outputs for the gathered leaves: policy
    /// logits, float32 of shape (n, NUM_ACTIONS), and values for the player
    /// to act in [-1, 1], float32 of shape (n,).
    fn apply(
        &mut self,
        py: Python<'_>,
        logits: PyReadonlyArray2<'_, f32>,
        values: PyReadonlyArray1<'_, f32>,
    ) -> PyResult<()> {
        apply_outputs(py, &mut self.batched, &self.config, logits, values)
    }

    /// Each game's result: the best action, the root's visits by action,
    /// the root's value for the player to act, and the policy target (the
    /// visits, or Gumbel's improved policy) by action.
    fn results<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.batched
            .games()
            .iter()
            .map(|search| {
                let tree = search.tree();
                let result = PyDict::new(py);
                result.set_item("done", search.is_done())?;
                result.set_item("best", tree.best_action().map(|a| a.to_string()))?;
                let visits: Vec<(String, u32)> =
                    tree.root_visit_counts().into_iter().map(|(a, n)| (a.to_string(), n)).collect();
                result.set_item("visits", visits)?;
                result.set_item("value", tree.root_value())?;
                let policy: Vec<(String, f32)> =
                    tree.policy_target().into_iter().map(|(a, p)| (a.to_string(), p)).collect();
                result.set_item("policy", policy)?;
                Ok(result)
            })
            .collect()
    }

    fn __len__(&self) -> usize {
        self.batched.len()
    }
}
