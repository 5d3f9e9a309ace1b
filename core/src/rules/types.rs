//! The words of the game: players and their colours, variants, pieces,
//! GIPF rights, phases, outcomes, rows, and why an action is refused.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::geometry::{Bitboard, Point};

/// A player, and the colour of their pieces.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    /// The player who pushes first.
    White,
    /// The player who pushes second.
    Black,
}

impl Color {
    /// Both colours, white first.
    pub const BOTH: [Color; 2] = [Color::White, Color::Black];

    /// 0 for white, 1 for black.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The other colour.
    pub fn opponent(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// `white` or `black`, as in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no colour or no variant (what [`Color`]'s and
/// [`Variant`]'s `FromStr` return).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name given for a colour.
    #[error("unknown colour '{0}': expected white or black")]
    Color(String),
    /// The name given for a variant.
    #[error("unknown variant '{0}': expected basic, standard or tournament")]
    Variant(String),
}

impl std::str::FromStr for Color {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Color, NameError> {
        Color::BOTH.into_iter().find(|c| c.name() == s).ok_or_else(|| NameError::Color(s.to_string()))
    }
}

/// The three ways to play, which differ in the start and in GIPF pieces.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Singles only; 3 on the board and 12 in reserve each.
    Basic,
    /// 3 GIPF pieces on the board and 12 singles in reserve each.
    Standard,
    /// Empty board, 18 in reserve; GIPF pieces are brought in first.
    Tournament,
}

impl Variant {
    /// The three variants, from the simplest.
    pub const ALL: [Variant; 3] = [Variant::Basic, Variant::Standard, Variant::Tournament];

    /// Pieces each player has in all: board (a GIPF piece counts two), reserve and captured.
    pub fn total_pieces(self) -> u8 {
        match self {
            Variant::Basic => 15,
            Variant::Standard | Variant::Tournament => 18,
        }
    }

    /// Whether a player loses on having no GIPF piece on the board.
    pub fn has_gipf_pieces(self) -> bool {
        self != Variant::Basic
    }

    /// `basic`, `standard` or `tournament`, as in JSON and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Basic => "basic",
            Variant::Standard => "standard",
            Variant::Tournament => "tournament",
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Variant {
    type Err = NameError;
    fn from_str(s: &str) -> Result<Variant, NameError> {
        Variant::ALL.into_iter().find(|v| v.name() == s).ok_or_else(|| NameError::Variant(s.to_string()))
    }
}

/// A piece on the board.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Piece {
    /// Whose piece it is.
    pub color: Color,
    /// Whether it is a GIPF piece (two singles stacked) rather than a single.
    pub gipf: bool,
}

impl Piece {
    /// `w`/`b` for singles, `W`/`B` for GIPF pieces.
    pub fn letter(self) -> char {
        match (self.color, self.gipf) {
            (Color::White, false) => 'w',
            (Color::Black, false) => 'b',
            (Color::White, true) => 'W',
            (Color::Black, true) => 'B',
        }
    }

    /// The piece a letter of [`Piece::letter`] stands for; `None` for any other character.
    pub fn from_letter(c: char) -> Option<Piece> {
        let color = match c.to_ascii_lowercase() {
            'w' => Color::White,
            'b' => Color::Black,
            _ => return None,
        };
        Some(Piece { color, gipf: c.is_ascii_uppercase() })
    }

    /// Pieces it is made of: 2 for a GIPF piece.
    pub fn weight(self) -> u8 {
        1 + self.gipf as u8
    }
}

/// What kind of push a player may make with respect to GIPF pieces.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GipfRight {
    /// Tournament, before the player's first push: it must bring in a GIPF piece.
    FirstMustBeGipf,
    /// Tournament, after GIPF pushes only: GIPF pieces or singles.
    GipfOrSingle,
    /// Singles only: the other variants, or after the first single.
    SinglesOnly,
}

/// How a game was won: what the loser lacked.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WinReason {
    /// The loser has no GIPF piece left on the board.
    NoGipfPiece,
    /// The loser had to push with nothing (or not enough) in reserve.
    NoReserve,
}

/// The end of a game.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Outcome {
    /// The player who won.
    pub winner: Color,
    /// What the loser lacked.
    pub reason: WinReason,
}

/// What the game is waiting for.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Phase {
    /// `to_move` must push.
    Push,
    /// `player` must choose how to remove their rows. `done_lines` (a bit per
    /// line) are the lines where a run was removed in this resolution, whose
    /// kept GIPF pieces are not offered again until a later push.
    Remove {
        /// The player removing, who may be the one not to move.
        player: Color,
        /// Bit `l` is set when a run on line `l` (an index into [`crate::rules::lines`])
        /// was removed in this resolution.
        done_lines: u32,
    },
    /// The game has ended so.
    Over(Outcome),
}

/// A row to resolve: its line and its run (the whole unbroken stretch of
/// occupied points containing four or more pieces of the owner's colour).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Row {
    /// The line's index into [`crate::rules::lines`] (0..21).
    pub line: u8,
    /// The points of the run.
    pub run: Bitboard,
}

/// Why an action was refused.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum IllegalAction {
    /// No action is legal once the game is over.
    #[error("the game is over")]
    GameOver,
    /// A push while this player has rows to remove.
    #[error("{0} must first decide how to remove their rows")]
    RemovalPending(Color),
    /// A removal or `x-` while this player must push.
    #[error("{0} must push; no row is waiting to be removed")]
    PushPending(Color),
    /// A push onto a line full from this entry point to the rim.
    #[error("the line from {0} is full up to the rim; the push would push a piece off the board")]
    LineFull(Point),
    /// A push by this player with an empty reserve.
    #[error("{0} has no piece left in reserve")]
    EmptyReserve(Color),
    /// A GIPF push by this player with one piece in reserve.
    #[error("{0} needs two pieces in reserve to bring in a GIPF piece")]
    ReserveTooSmallForGipf(Color),
    /// A GIPF push in the basic or standard variant.
    #[error("GIPF pieces are brought in only in the tournament variant")]
    GipfPushNotInVariant,
    /// A GIPF push in the tournament variant by this player, who has pushed a single.
    #[error("{0} has pushed a single and may no longer bring in GIPF pieces")]
    GipfPushNoLonger(Color),
    /// A single as this player's first push in the tournament variant.
    #[error("{0}'s first push must bring in a GIPF piece")]
    FirstPushMustBeGipf(Color),
    /// A removal that is no row's run less some of its GIPF pieces.
    #[error("it removes no row's run less some of its GIPF pieces; see the legal removals")]
    NotARemoval,
    /// `x-` while a row with a single in it remains.
    #[error("rows with singles in them remain; only rows made of GIPF pieces alone may be left")]
    CannotLeave,
}
