//! `gipf._core`: the rules, the network's encoding and the batched search of
//! `gipf-core` for Python. The package `gipf` (python/gipf/) re-exports it
//! and adds what is written in Python (the PettingZoo environment, the
//! search and self-play loops over a Python evaluator).
//!
//! Every argument from Python is checked here: a bad one raises
//! `ValueError` (or `TypeError` from PyO3's conversions) and changes
//! nothing; a Rust panic reaches Python as `pyo3_runtime.PanicException`.

use gipf_core::encoding::{action_at, action_index, encode, transform_index, ENCODING_VERSION, GRID, INPUT_SIZE};
use gipf_core::encoding::{NUM_ACTIONS, NUM_PLANES};
use gipf_core::games::{check_worker_name, GameFile, GameResult};
use gipf_core::players::random_game;
use gipf_core::rules::{lines, NUM_SYMMETRIES};
use gipf_core::rules::{picture, Action, Color, Phase, Position, RecordError, Setup, StateJson, Symmetry, Variant};
use gipf_core::samples::{game_samples, write_row, Targets, TrainingSample, AUX_TARGETS};
use gipf_core::search::{Batched, Root, Search, SearchConfig, Searching, MAX_SIMULATIONS};
use gipf_core::shards;
use numpy::{PyArray1, PyArray3, PyArray4, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::path::PathBuf;

mod selfplay;

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn parse_variant(variant: &str) -> PyResult<Variant> {
    variant.parse().map_err(value_error)
}

fn parse_action(action: &str) -> PyResult<Action> {
    action.parse().map_err(value_error)
}

fn color_name(color: Option<Color>) -> Option<&'static str> {
    color.map(|c| match c {
        Color::White => "white",
        Color::Black => "black",
    })
}

fn symmetry(k: usize) -> PyResult<Symmetry> {
    Symmetry::new(k).ok_or_else(|| value_error(format!("symmetry {k}: expected 0 to {}", NUM_SYMMETRIES - 1)))
}

/// A game of GIPF: its start, the actions played and where they lead.
#[pyclass(module = "gipf._core")]
#[derive(Clone)]
struct Game {
    start: Position,
    actions: Vec<Action>,
    pos: Position,
}

#[pymethods]
impl Game {
    /// A new game of `variant` (basic, standard or tournament).
    #[new]
    #[pyo3(signature = (variant = "standard"))]
    fn new(variant: &str) -> PyResult<Game> {
        let start = Position::new(parse_variant(variant)?);
        Ok(Game { start, actions: Vec::new(), pos: start })
    }

    /// A game from a position as JSON (the object `state()` gives, or a
    /// setup as docs/rules.md describes it).
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Game> {
        let start = Setup::from_json(text).and_then(|s| s.to_position()).map_err(value_error)?;
        Ok(Game { start, actions: Vec::new(), pos: start })
    }

    /// The current position as JSON (a setup that `from_json` reads back).
    /// A setup is the start of a push: during a removal, ValueError.
    fn to_json(&self) -> PyResult<String> {
        if let Phase::Remove { .. } = self.pos.phase() {
            return Err(value_error("a removal is in progress: a position as JSON starts a push"));
        }
        Ok(serde_json::to_string(&Setup::from_position(&self.pos)).expect("a setup is JSON"))
    }

    #[getter]
    fn variant(&self) -> String {
        self.pos.variant().to_string()
    }

    /// The legal actions in the official notation (empty once the game is over).
    fn legal_actions(&self) -> Vec<String> {
        self.pos.legal_actions().iter().map(Action::to_string).collect()
    }

    /// Plays `action` (notation such as "a1-b2" or "xc3,d4,e5,f5"); a
    /// malformed or illegal one raises ValueError and changes nothing.
    fn play(&mut self, action: &str) -> PyResult<()> {
        self.play_action(parse_action(action)?)
    }

    /// The legal actions as the network's indices, in the order of `legal_actions()`.
    fn legal_indices(&self) -> Vec<usize> {
        self.pos.legal_actions().into_iter().map(action_index).collect()
    }

    /// Plays the action at the network's index `index`; an index out of
    /// range or an illegal action raises ValueError and changes nothing.
    fn play_index(&mut self, index: usize) -> PyResult<()> {
        match index < NUM_ACTIONS {
            true => self.play_action(action_at(index)),
            false => Err(value_error(format!("index {index}: expected 0 to {}", NUM_ACTIONS - 1))),
        }
    }

    /// Takes back the last action; ValueError when there is none.
    fn undo(&mut self) -> PyResult<()> {
        self.actions.pop().ok_or_else(|| value_error("nothing to undo"))?;
        self.pos = self.start;
        for &a in &self.actions {
            self.pos.play_unchecked(a);
        }
        Ok(())
    }

    /// The actions played so far.
    #[getter]
    fn actions(&self) -> Vec<String> {
        self.actions.iter().map(Action::to_string).collect()
    }

    /// "white" or "black", the player to act; None once the game is over.
    #[getter]
    fn to_act(&self) -> Option<&'static str> {
        color_name(self.pos.to_act())
    }

    /// "white" or "black" once the game is won; None before.
    #[getter]
    fn winner(&self) -> Option<&'static str> {
        color_name(self.pos.outcome().map(|o| o.winner))
    }

    #[getter]
    fn is_over(&self) -> bool {
        self.pos.is_over()
    }

    /// The result as a stored game records it: `winner` ("white", "black",
    /// or None for a game cut at its length) and `reason` ("no_gipf_piece",
    /// "no_reserve" or "ply_cap").
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = serde_json::to_string(&GameResult::of(&self.pos)).expect("a result is JSON");
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The state as `gipf rules --json` gives it, as a dict.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = serde_json::to_string(&StateJson::of(&self.pos)).expect("a state is JSON");
        py.import("json")?.call_method1("loads", (text,))
    }

    fn copy(&self) -> Game {
        self.clone()
    }

    fn __copy__(&self) -> Game {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Game {
        self.clone()
    }

    /// The board picture.
    fn __repr__(&self) -> String {
        picture(&self.pos)
    }

    /// The network's input planes of the position, from the view of the
    /// player to act, after board symmetry `symmetry` (0 to 11; 0 is the
    /// identity): float32, shape (planes, 7, 7).
    #[pyo3(signature = (symmetry = 0))]
    fn encode<'py>(&self, py: Python<'py>, symmetry: usize) -> PyResult<Bound<'py, PyArray3<f32>>> {
        let pos = self.pos.transform(self::symmetry(symmetry)?);
        let mut input = vec![0.0f32; INPUT_SIZE];
        encode(&pos, &mut input);
        PyArray1::from_vec(py, input).reshape([NUM_PLANES, GRID, GRID])
    }

    /// The legal actions as a mask over the network's action indices (uint8).
    fn action_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u8>> {
        let mut mask = vec![0u8; NUM_ACTIONS];
        for action in self.pos.legal_actions() {
            mask[action_index(action)] = 1;
        }
        PyArray1::from_vec(py, mask)
    }
}

impl Game {
    fn play_action(&mut self, action: Action) -> PyResult<()> {
        self.pos.play(action).map_err(|reason| {
            let number = self.actions.len() + 1;
            value_error(RecordError::Illegal { number, action: action.to_string(), reason })
        })?;
        self.actions.push(action);
        Ok(())
    }
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

fn parse_root(root: &str, alpha: f32, fraction: f32, candidates: usize) -> PyResult<Root> {
    match root {
        "plain" => Ok(Root::Plain),
        "noise" => Ok(Root::Noise { alpha, fraction, forced_playouts: 0.0 }),
        "gumbel" => Ok(Root::Gumbel { candidates }),
        _ => Err(value_error(format!("root {root:?}: expected plain, noise or gumbel"))),
    }
}

/// The gathered leaves' input planes: float32 of shape (n, planes, 7, 7).
fn planes<'py, G: Searching + Send>(py: Python<'py>, batched: &Batched<G>) -> PyResult<Bound<'py, PyArray4<f32>>> {
    PyArray1::from_slice(py, batched.input()).reshape([batched.count(), NUM_PLANES, GRID, GRID])
}

/// Applies an evaluator's outputs for the gathered leaves, each checked
/// first: policy logits of shape (n, NUM_ACTIONS) and values from -1 to 1
/// of shape (n,); a refused batch changes nothing.
fn apply_outputs<G: Searching + Send>(
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
struct Searches {
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

/// The games files of `path`, oldest first: a shard or game file itself, a
/// games folder, or a run folder (its `games/`).
#[pyfunction]
fn games_files(path: PathBuf) -> PyResult<Vec<String>> {
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
fn read_games_file(py: Python<'_>, path: PathBuf) -> PyResult<(Vec<String>, Vec<String>)> {
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
fn samples_of<'py>(
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
fn write_shard(py: Python<'_>, folder: PathBuf, games: Vec<String>, worker: &str) -> PyResult<String> {
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Game>()?;
    m.add_class::<Searches>()?;
    m.add_class::<selfplay::SelfPlay>()?;
    m.add_function(wrap_pyfunction!(index_of, m)?)?;
    m.add_function(wrap_pyfunction!(action_of, m)?)?;
    m.add_function(wrap_pyfunction!(check_network, m)?)?;
    m.add_function(wrap_pyfunction!(transform_policy, m)?)?;
    m.add_function(wrap_pyfunction!(random_games, m)?)?;
    m.add_function(wrap_pyfunction!(games_files, m)?)?;
    m.add_function(wrap_pyfunction!(read_games_file, m)?)?;
    m.add_function(wrap_pyfunction!(samples_of, m)?)?;
    m.add_function(wrap_pyfunction!(write_shard, m)?)?;
    m.add("NUM_ACTIONS", NUM_ACTIONS)?;
    m.add("NUM_PLANES", NUM_PLANES)?;
    m.add("GRID", GRID)?;
    m.add("NUM_SYMMETRIES", NUM_SYMMETRIES)?;
    m.add("ENCODING_VERSION", ENCODING_VERSION)?;
    Ok(())
}
