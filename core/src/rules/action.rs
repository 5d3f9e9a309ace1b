//! Actions and their notation: `a1-b2` (push a single), `Ga1-b2` (push a GIPF
//! piece), `xc3,d4,e5,f5` (remove these points), `x-` (leave the remaining rows).

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::geometry::{self, Bitboard, Cell, Point, PushGeometry, Symmetry, NUM_PUSHES};

/// A push: which of the 42 (dot, entry point) pairs, and whether the piece put
/// in is a GIPF piece.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Push {
    index: u8,
    gipf: bool,
}

impl Push {
    /// Push number `index` (0..42, ordered by dot then entry point); `None`
    /// past the last.
    pub fn new(index: usize, gipf: bool) -> Option<Push> {
        (index < NUM_PUSHES).then_some(Push { index: index as u8, gipf })
    }

    /// Push number `index`, which the caller knows to be below [`NUM_PUSHES`].
    pub(crate) fn of(index: usize, gipf: bool) -> Push {
        debug_assert!(index < NUM_PUSHES, "push index {index} out of range");
        Push { index: index as u8, gipf }
    }

    /// The push number (0..42), its index into [`geometry::pushes`].
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// Whether the piece put in is a GIPF piece.
    pub fn is_gipf(self) -> bool {
        self.gipf
    }

    /// The dot, path and mask of this push.
    pub fn geometry(self) -> &'static PushGeometry {
        &geometry::pushes()[self.index()]
    }

    /// The dot on the rim the piece is put on.
    pub fn dot(self) -> Cell {
        self.geometry().dot
    }

    /// The interior point the piece enters at.
    pub fn entry(self) -> Point {
        self.geometry().entry()
    }
}

/// Everything a player can decide.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Action {
    /// Put a piece from the reserve on a dot and push it onto the board.
    Push(Push),
    /// Remove these points: one row's run, less the GIPF pieces kept.
    Remove(Bitboard),
    /// Leave the remaining rows (all of them made only of GIPF pieces) on the board.
    Leave,
}

impl Action {
    /// The image of this action under a board symmetry.
    pub fn transform(self, sym: Symmetry) -> Action {
        match self {
            Action::Push(p) => Action::Push(Push::of(sym.push(p.index()), p.gipf)),
            Action::Remove(points) => Action::Remove(points.transform(sym)),
            Action::Leave => Action::Leave,
        }
    }
}

/// Why a piece of notation could not be read.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum NotationError {
    /// The text is not a column letter and a number.
    #[error("'{0}' is not a cell: expected a column a..i and a number, like e5")]
    NotACell(String),
    /// The text, its column letter, and that column's height: the number is past it.
    #[error("'{0}' is not on the board: column {1} has points 1..{2}")]
    OffBoard(String, char, u8),
    /// The text has the shape of no action.
    #[error("'{0}' is not an action: expected a push like a1-b2 or Ga1-b2, a removal like xc3,d4,e5,f5, or x-")]
    NotAnAction(String),
    /// A push starting from an interior point.
    #[error("'{action}': {dot} is not a dot on the rim, where a push starts")]
    NotADot {
        /// The action as written.
        action: String,
        /// The cell it starts from.
        dot: String,
    },
    /// A push entering at a dot.
    #[error("'{action}': {entry} is a dot, not an interior point")]
    EntryNotInterior {
        /// The action as written.
        action: String,
        /// The cell it enters at.
        entry: String,
    },
    /// A push whose entry point does not touch its dot.
    #[error("'{action}': {entry} is not next to the dot {dot}")]
    NotAdjacent {
        /// The action as written.
        action: String,
        /// The dot it starts from.
        dot: String,
        /// The point it enters at.
        entry: String,
    },
    /// A removal naming a dot.
    #[error("'{action}': {cell} is a dot; only interior points hold pieces")]
    RemoveDot {
        /// The action as written.
        action: String,
        /// The dot named.
        cell: String,
    },
    /// A removal naming a point twice.
    #[error("'{action}': {cell} is named twice")]
    Repeated {
        /// The action as written.
        action: String,
        /// The point named twice.
        cell: String,
    },
}

impl FromStr for Cell {
    type Err = NotationError;

    fn from_str(s: &str) -> Result<Cell, NotationError> {
        let bytes = s.as_bytes();
        let not_a_cell = || NotationError::NotACell(s.to_string());
        if bytes.len() != 2 || !(b'a'..=b'i').contains(&bytes[0]) || !bytes[1].is_ascii_digit() {
            return Err(not_a_cell());
        }
        let column = bytes[0] - b'a';
        Cell::from_column_number(column, bytes[1] - b'0').ok_or_else(|| {
            let height = [5, 6, 7, 8, 9, 8, 7, 6, 5][column as usize];
            NotationError::OffBoard(s.to_string(), bytes[0] as char, height)
        })
    }
}

impl FromStr for Action {
    type Err = NotationError;

    fn from_str(s: &str) -> Result<Action, NotationError> {
        if s == "x-" {
            return Ok(Action::Leave);
        }
        if let Some(list) = s.strip_prefix('x') {
            let mut points = Bitboard::EMPTY;
            for name in list.split(',') {
                if name.is_empty() {
                    return Err(NotationError::NotAnAction(s.to_string()));
                }
                let cell: Cell = name.parse()?;
                let point = cell
                    .point()
                    .ok_or_else(|| NotationError::RemoveDot { action: s.to_string(), cell: name.to_string() })?;
                if points.contains(point) {
                    return Err(NotationError::Repeated { action: s.to_string(), cell: name.to_string() });
                }
                points = points.with(point);
            }
            return Ok(Action::Remove(points));
        }
        let (gipf, rest) = match s.strip_prefix('G') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let (from, to) = rest.split_once('-').ok_or_else(|| NotationError::NotAnAction(s.to_string()))?;
        let (dot, entry): (Cell, Cell) = (from.parse()?, to.parse()?);
        if !dot.is_dot() {
            return Err(NotationError::NotADot { action: s.to_string(), dot: from.to_string() });
        }
        let entry_point = entry
            .point()
            .ok_or_else(|| NotationError::EntryNotInterior { action: s.to_string(), entry: to.to_string() })?;
        let index = geometry::push_index(dot, entry_point).ok_or_else(|| NotationError::NotAdjacent {
            action: s.to_string(),
            dot: from.to_string(),
            entry: to.to_string(),
        })?;
        Ok(Action::Push(Push::of(index, gipf)))
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Push(p) => {
                let g = if p.is_gipf() { "G" } else { "" };
                write!(f, "{g}{}-{}", p.dot(), p.entry())
            }
            Action::Remove(points) => {
                f.write_str("x")?;
                for (i, p) in points.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{p}")?;
                }
                Ok(())
            }
            Action::Leave => f.write_str("x-"),
        }
    }
}

/// Parses whitespace-separated actions, naming the first one that is malformed.
pub fn parse_actions(text: &str) -> Result<Vec<Action>, NotationError> {
    text.split_whitespace().map(str::parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_round_trips() {
        for text in ["a1-b2", "Ga1-b2", "b1-c2", "i5-h5", "xc3,d4,e5,f5,g5", "xe5", "x-"] {
            let action: Action = text.parse().unwrap();
            assert_eq!(action.to_string(), text);
        }
    }

    #[test]
    fn removal_points_are_printed_sorted() {
        let action: Action = "xf5,c3,e5".parse().unwrap();
        assert_eq!(action.to_string(), "xc3,e5,f5");
    }

    #[test]
    fn every_push_prints_and_parses_back() {
        for i in 0..NUM_PUSHES {
            for gipf in [false, true] {
                let a = Action::Push(Push::of(i, gipf));
                assert_eq!(a.to_string().parse::<Action>().unwrap(), a);
            }
        }
    }

    #[test]
    fn malformed_notation_is_refused_with_a_reason() {
        let cases = [
            ("", "not an action"),
            ("a1b2", "not an action"),
            ("j1-b2", "not a cell"),
            ("a6-b2", "not on the board"),
            ("a1-b2-c3", "not a cell"),
            ("b2-c3", "not a dot"),
            ("a1-b1", "is a dot"),
            ("a1-c3", "not next to"),
            ("xa1", "is a dot"),
            ("xb2,b2", "twice"),
            ("xb2,", "not an action"),
            ("x", "not an action"),
            ("gA1-b2", "not a cell"),
            ("e10-e9", "not a cell"),
        ];
        for (text, reason) in cases {
            let err = text.parse::<Action>().unwrap_err().to_string();
            assert!(err.contains(reason), "{text:?}: {err}");
        }
    }
}
