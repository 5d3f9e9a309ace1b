//! `SelfPlay`: the self-play program's games (the core's `SelfplayGame`:
//! full and cheap searches, root noise or Gumbel roots, the temperature,
//! forced actions, reused trees) for an evaluator in Python, which
//! `gipf.selfplay.play` drives.

use gipf_core::bounds::check_range;
use gipf_core::rules::Position;
use gipf_core::search::{BatchError, Batched, SearchConfig};
use gipf_core::selfplay::{play_round, GameSource, SelfplayConfig, SelfplayGame};
use numpy::{PyArray4, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::search::{apply_outputs, planes};
use crate::{parse_variant, value_error};

/// `defaults` with the keys of `overrides` (a JSON object) put in; an
/// unknown key or a value of the wrong type is an error naming `table`.
fn overlay<T: Serialize + DeserializeOwned>(table: &str, defaults: &T, overrides: &str) -> PyResult<T> {
    let mut value = serde_json::to_value(defaults).expect("settings are plain data");
    let overrides: serde_json::Value = serde_json::from_str(overrides).map_err(value_error)?;
    let serde_json::Value::Object(overrides) = overrides else {
        return Err(value_error(format!("{table}: expected an object of settings")));
    };
    let object = value.as_object_mut().expect("settings are a table");
    object.extend(overrides);
    serde_json::from_value(value).map_err(|e| value_error(format!("{table}: {e}")))
}

/// Self-play of `games` games, `selfplay.parallel_games` at once, as the
/// self-play program plays them: the game `i` started is seeded with the
/// `i`-th draw of a generator seeded with `seed`, as there, so that the
/// same evaluations give the same games. `gather()` gives the leaves' input
/// planes (none once every game is over), the evaluator's outputs go back
/// through `apply()`, and `take_finished()` gives the finished games as
/// stored (JSON).
#[pyclass(module = "gipf._core")]
pub struct SelfPlay {
    games: Batched<SelfplayGame>,
    settings: SelfplayConfig,
    search: SearchConfig,
    source: GameSource,
    finished: Vec<SelfplayGame>,
    /// The settings as recorded in the games.
    recorded: serde_json::Value,
}

#[pymethods]
impl SelfPlay {
    /// `settings` and `search`: JSON objects of `[selfplay]` and `[search]`
    /// keys; the keys they leave out take configs/cpu.toml's values.
    #[new]
    #[pyo3(signature = (games, seed = 0, variant = "standard", max_actions = 600, settings = "{}", search = "{}"))]
    fn new(games: u64, seed: u64, variant: &str, max_actions: u32, settings: &str, search: &str) -> PyResult<SelfPlay> {
        let variant = parse_variant(variant)?;
        check_range("max_actions", max_actions as i64, 10, 100_000).map_err(value_error)?;
        let settings: SelfplayConfig = overlay("selfplay", &SelfplayConfig::default(), settings)?;
        let search: SearchConfig = overlay("search", &SearchConfig::default(), search)?;
        settings.validate().map_err(value_error)?;
        search.validate().map_err(value_error)?;
        settings.check_leaves(&search).map_err(value_error)?;
        let recorded = serde_json::json!({
            "source": "gipf.selfplay (Python)",
            "game": {"variant": variant, "max_actions": max_actions},
            "selfplay": settings,
            "search": search,
        });
        let mut play = SelfPlay {
            games: Batched::default(),
            settings,
            search,
            source: GameSource::new(Position::new(variant), max_actions, seed, Some(games)),
            finished: Vec::new(),
            recorded,
        };
        play.start_games();
        Ok(play)
    }

    /// Plays where searches are complete, sets finished games aside, starts
    /// new ones in their places while more are wanted, and gathers the next
    /// leaves: their input planes, float32 of shape (n, planes, 7, 7); n is
    /// 0 once every game is over.
    fn gather<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyArray4<f32>>> {
        if self.games.is_waiting() {
            return Err(value_error(BatchError::Waiting));
        }
        py.detach(|| loop {
            self.finished.extend(play_round(&mut self.games, &self.settings, &self.search)?.finished);
            self.start_games();
            let n = self.games.gather(&self.search, |_| true)?;
            // None gathered with games left: their searches are complete.
            if n > 0 || self.games.is_empty() {
                return Ok::<(), BatchError>(());
            }
        })
        .map_err(value_error)?;
        planes(py, &self.games)
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
        apply_outputs(py, &mut self.games, &self.search, logits, values)
    }

    /// The games finished since the last call, as stored (JSON), played
    /// by `model` in the process `worker`.
    #[pyo3(signature = (model = "python", worker = "python"))]
    fn take_finished(&mut self, model: &str, worker: &str) -> Vec<String> {
        let finished = std::mem::take(&mut self.finished);
        let to_json = |game: SelfplayGame| serde_json::to_string(&game.into_game(model, worker, &self.recorded));
        finished.into_iter().map(|game| to_json(game).expect("a game is JSON")).collect()
    }

    /// Games in progress.
    fn __len__(&self) -> usize {
        self.games.len()
    }
}

impl SelfPlay {
    /// Starts games until `parallel_games` are in progress or none is wanted.
    fn start_games(&mut self) {
        while self.games.len() < self.settings.parallel_games {
            let Some(game) = self.source.next_game(&self.settings, &self.search) else { return };
            self.games.push(game);
        }
    }
}
