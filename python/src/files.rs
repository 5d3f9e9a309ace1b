//! Games files from Python: listed, read and written through the core's
//! shards, and their training samples as arrays.

use std::path::PathBuf;

use gipf_core::encoding::{GRID, INPUT_SIZE, NUM_ACTIONS, NUM_PLANES};
use gipf_core::games::{check_worker_name, GameFile};
use gipf_core::rules::Symmetry;
use gipf_core::samples::{game_samples, write_row, Targets, TrainingSample, AUX_TARGETS};
use gipf_core::shards;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::value_error;

/// The games files of `path`, oldest first: a shard or game file itself, a
/// games folder, or a run folder (its `games/`).
#[pyfunction]
pub(crate) fn games_files(path: PathBuf) -> PyResult<Vec<String>> {
    let text = |path: PathBuf| path.to_string_lossy().into_owned();
    if path.is_file() {
        return Ok(vec![text(path)]);
    }
    let folder = match path.join("games").is_dir() {
        true => path.join("games"),
        false => path,
    };
    if !folder.is_dir() {
        return Err(value_error(format!("{}: no such games file or folder", folder.display())));
    }
    let files = shards::list(&folder).map_err(|e| value_error(format!("{e}: {}", source_of(&e))))?;
    Ok(files.into_iter().map(|file| text(file.path)).collect())
}

/// The reason under an error, for a message on one line.
fn source_of(error: &dyn std::error::Error) -> String {
    error.source().map(|cause| cause.to_string()).unwrap_or_default()
}

/// The games of a games file, each checked as the trainer checks it: a
/// shard (a game a line; refused lines are reported as "FILE line N:
/// reason") or an older one-game JSON file (refused whole). Returns the
/// games as JSON and the refused lines.
#[pyfunction]
pub(crate) fn read_games_file(py: Python<'_>, path: PathBuf) -> PyResult<(Vec<String>, Vec<String>)> {
    let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let file = shards::GamesFile { legacy: !name.ends_with(".zst"), name, path };
    let read = py.detach(|| shards::read(&file));
    let read = read.map_err(|e| match &e {
        shards::ShardError::Unreadable { .. } => value_error(format!("{e}: {}", source_of(&e))),
        _ => value_error(e),
    })?;
    let to_json = |game: &GameFile| serde_json::to_string(game).expect("a game is JSON");
    Ok((read.games.iter().map(to_json).collect(), read.bad))
}

/// The training samples of games files as arrays, built as the trainer
/// builds them (`samples` in the core).
struct SampleArrays {
    planes: Vec<f32>,
    policy: Vec<f32>,
    legal: Vec<f32>,
    value: Vec<f32>,
    policy_mask: Vec<f32>,
    aux: Vec<f32>,
    plies_to_end: Vec<u16>,
    symmetry: Vec<u8>,
}

impl SampleArrays {
    fn push(&mut self, sample: &TrainingSample, sym: Symmetry) {
        let start = (self.planes.len(), self.policy.len());
        self.planes.resize(start.0 + INPUT_SIZE, 0.0);
        self.policy.resize(start.1 + NUM_ACTIONS, 0.0);
        self.legal.resize(start.1 + NUM_ACTIONS, 0.0);
        let (input, policy, legal) =
            (&mut self.planes[start.0..], &mut self.policy[start.1..], &mut self.legal[start.1..]);
        write_row(sample, sym, input, policy, legal);
        self.value.push(sample.value);
        self.policy_mask.push(!sample.policy.is_empty() as u8 as f32);
        self.aux.extend(sample.aux);
        self.plies_to_end.push(sample.plies_to_end);
        self.symmetry.push(sym.index() as u8);
    }

    fn into_dict(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let n = self.value.len();
        let dict = PyDict::new(py);
        dict.set_item("planes", PyArray1::from_vec(py, self.planes).reshape([n, NUM_PLANES, GRID, GRID])?)?;
        dict.set_item("policy", PyArray1::from_vec(py, self.policy).reshape([n, NUM_ACTIONS])?)?;
        dict.set_item("legal", PyArray1::from_vec(py, self.legal).reshape([n, NUM_ACTIONS])?)?;
        dict.set_item("value", PyArray1::from_vec(py, self.value))?;
        dict.set_item("policy_mask", PyArray1::from_vec(py, self.policy_mask))?;
        dict.set_item("aux", PyArray1::from_vec(py, self.aux).reshape([n, AUX_TARGETS])?)?;
        dict.set_item("plies_to_end", PyArray1::from_vec(py, self.plies_to_end))?;
        dict.set_item("symmetry", PyArray1::from_vec(py, self.symmetry))?;
        Ok(dict)
    }
}

/// The training samples of `games` (JSON, as `read_games_file` gives
/// them), each under the identity or, with `augment`, a board symmetry
/// drawn in turn from `seed`; targets as `[train]` sets them.
#[pyfunction]
#[pyo3(signature = (games, augment, seed, every_position, root_value_share, root_value_lambda))]
pub(crate) fn samples_of<'py>(
    py: Python<'py>,
    games: Vec<String>,
    augment: bool,
    seed: u64,
    every_position: bool,
    root_value_share: f32,
    root_value_lambda: f32,
) -> PyResult<Bound<'py, PyDict>> {
    if !((0.0..=1.0).contains(&root_value_share) && (0.0..=1.0).contains(&root_value_lambda)) {
        return Err(value_error("root_value_share and root_value_lambda must be from 0 to 1"));
    }
    let targets = Targets { every_position, root_value_share, root_value_lambda };
    let arrays = py.detach(|| {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut arrays = SampleArrays {
            planes: Vec::new(),
            policy: Vec::new(),
            legal: Vec::new(),
            value: Vec::new(),
            policy_mask: Vec::new(),
            aux: Vec::new(),
            plies_to_end: Vec::new(),
            symmetry: Vec::new(),
        };
        for (i, text) in games.iter().enumerate() {
            let game = GameFile::parse(text).map_err(|e| format!("game {i}: {e}"))?;
            for sample in game_samples(&game, targets).map_err(|e| format!("game {i}: {e}"))? {
                let sym = if augment { Symmetry::random(&mut rng) } else { Symmetry::IDENTITY };
                arrays.push(&sample, sym);
            }
        }
        Ok::<_, String>(arrays)
    });
    arrays.map_err(value_error)?.into_dict(py)
}

/// Writes `games` (stored games as JSON, each checked as the trainer will
/// check it) as one shard in `folder`, numbered past `worker`'s shards
/// there, atomically and durably, and returns its path; `worker` names the
/// writer in the shard's name.
#[pyfunction]
pub(crate) fn write_shard(py: Python<'_>, folder: PathBuf, games: Vec<String>, worker: &str) -> PyResult<String> {
    check_worker_name(worker).map_err(value_error)?;
    let parsed = games
        .iter()
        .enumerate()
        .map(|(i, text)| GameFile::parse(text).map_err(|e| value_error(format!("game {i}: {e}"))))
        .collect::<PyResult<Vec<GameFile>>>()?;
    let sequence =
        shards::next_sequence(&folder, worker).map_err(|e| value_error(format!("{e}: {}", source_of(&e))))?;
    let written = py.detach(|| shards::write(&folder, worker, sequence, &parsed));
    Ok(written.map_err(value_error)?.0.to_string_lossy().into_owned())
}
