//! The rules of GIPF as `docs/rules.md` states them: board geometry,
//! positions and their state machine, actions and their notation, symmetries,
//! positions as JSON, and game records.

mod action;
#[cfg(test)]
pub(crate) mod fixtures;
mod geometry;
mod perft;
mod picture;
mod position;
mod record;
mod setup;
mod types;

pub use action::{parse_actions, Action, NotationError, Push};
pub use geometry::{
    line_layout, lines, push_index, pushes, Bitboard, Cell, Line, Point, PushGeometry, Symmetry, LINES_PER_DIRECTION,
    NUM_CELLS, NUM_LINES, NUM_POINTS, NUM_PUSHES, NUM_SYMMETRIES,
};
pub use perft::perft;
pub use picture::picture;
pub use position::Position;
pub(crate) use record::action_strings;
pub use record::{replay, replay_with, GameRecord, RecordError};
pub use setup::{BoardEntries, PerColor, Setup, SetupError, StateJson};
pub use types::{Color, GipfRight, IllegalAction, NameError, Outcome, Phase, Piece, Row, Variant, WinReason};
