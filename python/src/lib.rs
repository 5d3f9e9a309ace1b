//! `gipf._core`: the rules, the network's encoding and the batched search of
//! `gipf-core` for Python. The package `gipf` (python/gipf/) re-exports it
//! and adds what is written in Python (the PettingZoo environment, the
//! search and self-play loops over a Python evaluator).
//!
//! Every argument from Python is checked here: a bad one raises
//! `ValueError` (or `TypeError` from PyO3's conversions) and changes
//! nothing; a Rust panic reaches Python as `pyo3_runtime.PanicException`.
//!
//! Here: the index helpers (actions and network indices, symmetries of a
//! policy, random games) and the module's contents; `game`, a game;
//! `search`, the batched search; `selfplay`, the self-play pool; `files`,
//! games files and their samples.

use gipf_core::encoding::{action_at, action_index, transform_index, ENCODING_VERSION, GRID, NUM_ACTIONS, NUM_PLANES};
use gipf_core::players::random_game;
use gipf_core::rules::{lines, Action, Symmetry, Variant, NUM_SYMMETRIES};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rand::rngs::SmallRng;
use rand::SeedableRng;

mod files;
mod game;
mod search;
mod selfplay;

pub(crate) fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

pub(crate) fn parse_variant(variant: &str) -> PyResult<Variant> {
    variant.parse().map_err(value_error)
}

pub(crate) fn parse_action(action: &str) -> PyResult<Action> {
    action.parse().map_err(value_error)
}

pub(crate) fn symmetry(k: usize) -> PyResult<Symmetry> {
    Symmetry::new(k).ok_or_else(|| value_error(format!("symmetry {k}: expected 0 to {}", NUM_SYMMETRIES - 1)))
}

/// The network's index of `action` (0 to NUM_ACTIONS - 1).
#[pyfunction]
fn index_of(action: &str) -> PyResult<usize> {
    match parse_action(action)? {
        // A removal of points not within one line has no index (and is never legal).
        Action::Remove(points) if !lines().iter().any(|line| points.0 & !line.mask.0 == 0) => {
            Err(value_error(format!("'{action}' removes points not within one line: it has no index")))
        }
        parsed => Ok(action_index(parsed)),
    }
}

/// The action at the network's index `index`.
/// Checks a network shape (a description's `network`, as JSON) against the
/// bounds the Rust programs hold it to, before anything is built from it.
#[pyfunction]
fn check_network(shape: &str) -> PyResult<()> {
    let shape: gipf_core::network::NetConfig =
        serde_json::from_str(shape).map_err(|e| value_error(format!("a network shape: {e}")))?;
    shape.validate().map_err(value_error)
}

#[pyfunction]
fn action_of(index: usize) -> PyResult<String> {
    match index < NUM_ACTIONS {
        true => Ok(action_at(index).to_string()),
        false => Err(value_error(format!("index {index}: expected 0 to {}", NUM_ACTIONS - 1))),
    }
}

/// A policy over the action indices carried over board symmetry `symmetry`,
/// to go with `Game.encode(symmetry)`.
#[pyfunction]
fn transform_policy<'py>(
    py: Python<'py>,
    policy: PyReadonlyArray1<'py, f32>,
    symmetry: usize,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let sym = self::symmetry(symmetry)?;
    let policy = policy.as_slice()?;
    if policy.len() != NUM_ACTIONS {
        return Err(value_error(format!("a policy has {NUM_ACTIONS} entries, not {}", policy.len())));
    }
    let mut out = vec![0.0f32; NUM_ACTIONS];
    for (index, &p) in policy.iter().enumerate() {
        out[transform_index(sym, index)] = p;
    }
    Ok(PyArray1::from_vec(py, out))
}

/// Plays `n` games of uniformly random legal actions from `seed`, in the
/// core (no Python per action); returns the actions played in all.
#[pyfunction]
#[pyo3(signature = (n, seed = 0, variant = "standard", max_actions = 1000))]
fn random_games(py: Python<'_>, n: usize, seed: u64, variant: &str, max_actions: u32) -> PyResult<u64> {
    let variant = parse_variant(variant)?;
    Ok(py.detach(|| {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut legal = Vec::new();
        (0..n).map(|_| random_game(variant, max_actions, &mut rng, &mut legal)).sum::<u64>()
    }))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<game::Game>()?;
    m.add_class::<search::Searches>()?;
    m.add_class::<selfplay::SelfPlay>()?;
    m.add_function(wrap_pyfunction!(index_of, m)?)?;
    m.add_function(wrap_pyfunction!(action_of, m)?)?;
    m.add_function(wrap_pyfunction!(check_network, m)?)?;
    m.add_function(wrap_pyfunction!(transform_policy, m)?)?;
    m.add_function(wrap_pyfunction!(random_games, m)?)?;
    m.add_function(wrap_pyfunction!(files::games_files, m)?)?;
    m.add_function(wrap_pyfunction!(files::read_games_file, m)?)?;
    m.add_function(wrap_pyfunction!(files::samples_of, m)?)?;
    m.add_function(wrap_pyfunction!(files::write_shard, m)?)?;
    m.add("NUM_ACTIONS", NUM_ACTIONS)?;
    m.add("NUM_PLANES", NUM_PLANES)?;
    m.add("GRID", GRID)?;
    m.add("NUM_SYMMETRIES", NUM_SYMMETRIES)?;
    m.add("ENCODING_VERSION", ENCODING_VERSION)?;
    Ok(())
}
