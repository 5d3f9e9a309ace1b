//! `Game`: a game of GIPF for Python, its start, the actions played and
//! where they lead, with the network's view of it.

use gipf_core::encoding::{action_at, action_index, encode, GRID, INPUT_SIZE, NUM_ACTIONS, NUM_PLANES};
use gipf_core::games::GameResult;
use gipf_core::rules::{picture, Action, Color, Phase, Position, RecordError, Setup, StateJson};
use numpy::{PyArray1, PyArray3, PyArrayMethods};
use pyo3::prelude::*;

use crate::{parse_action, parse_variant, symmetry, value_error};

fn color_name(color: Option<Color>) -> Option<&'static str> {
    color.map(|c| match c {
        Color::White => "white",
        Color::Black => "black",
    })
}

/// A game of GIPF: its start, the actions played and where they lead.
#[pyclass(module = "gipf._core")]
#[derive(Clone)]
pub(crate) struct Game {
    start: Position,
    actions: Vec<Action>,
    pub(crate) pos: Position,
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
