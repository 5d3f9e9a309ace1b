//! Positions as JSON: the `--position` input of `docs/rules.md`, checked before it
//! becomes a [`Position`], and the state object `gipf rules --json` prints.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use thiserror::Error;

use super::action::NotationError;
use super::geometry::{Cell, Point};
use super::position::Position;
use super::types::{Color, GipfRight, Phase, Piece, Variant};

/// A value for each player.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerColor<T> {
    /// White's value.
    pub white: T,
    /// Black's value.
    pub black: T,
}

impl<T: Copy> PerColor<T> {
    /// `color`'s value.
    pub fn get(&self, color: Color) -> T {
        match color {
            Color::White => self.white,
            Color::Black => self.black,
        }
    }

    /// Each player's value `f(color)`.
    pub fn from_fn(f: impl Fn(Color) -> T) -> PerColor<T> {
        PerColor { white: f(Color::White), black: f(Color::Black) }
    }
}

/// The board as a JSON object from cell names to `w`, `b`, `W` or `B`, kept as
/// written (repeated keys included) so that [`Setup::to_position`] can refuse them.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct BoardEntries(pub Vec<(String, String)>);

impl<'de> Deserialize<'de> for BoardEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = BoardEntries;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object from cell names to \"w\", \"b\", \"W\" or \"B\"")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<BoardEntries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, String>()? {
                    entries.push(entry);
                }
                Ok(BoardEntries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor)
    }
}

impl Serialize for BoardEntries {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// A position as a user writes it: possibly illegal until checked by
/// [`Setup::to_position`]. It is the start of `to_move`'s push.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// The variant played.
    pub variant: Variant,
    /// The pieces on the board.
    pub board: BoardEntries,
    /// Pieces each player has left to bring in (a GIPF piece takes two).
    pub reserve: PerColor<u8>,
    /// Pieces of each colour captured by the opponent; `None` makes the
    /// variant's total add up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub captured: Option<PerColor<u8>>,
    /// Whose push it is.
    pub to_move: Color,
    /// Tournament only (and required there): whether each player may still
    /// bring in GIPF pieces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gipf_allowed: Option<PerColor<bool>>,
}

/// Why a position was refused.
#[derive(Debug, Error)]
pub enum SetupError {
    /// The text is not JSON of a position's shape (an unknown key included).
    #[error("malformed position JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// A board key is not a cell.
    #[error("board: {0}")]
    Cell(#[from] NotationError),
    /// A piece on this dot.
    #[error("board: {0} is a dot on the rim; pieces stand only on interior points")]
    OnDot(String),
    /// A point given twice.
    #[error("board: {cell} is given twice")]
    Repeated {
        /// The point's name as written.
        cell: String,
    },
    /// A board value that is not a piece's letter.
    #[error("board: '{value}' at {cell} is not a piece: expected w, b, W or B")]
    NotAPiece {
        /// The point's name as written.
        cell: String,
        /// The value written there.
        value: String,
    },
    /// A GIPF piece on this point in the basic variant.
    #[error("board: {0} holds a GIPF piece, and the basic variant has none")]
    GipfInBasic(String),
    /// A colour whose pieces on the board, in reserve and captured do not add
    /// up to the variant's total.
    #[error("{color}: {on_board} on the board + {reserve} in reserve + {captured} captured = {sum}, but the {variant} variant has {total} pieces each")]
    WrongTotal {
        /// The colour counted.
        color: Color,
        /// Its pieces on the board, a GIPF piece counting two.
        on_board: u32,
        /// Its reserve.
        reserve: u32,
        /// Its pieces captured.
        captured: u32,
        /// The three added up.
        sum: u32,
        /// The variant played.
        variant: Variant,
        /// The variant's pieces for each player.
        total: u8,
    },
    /// With `captured` left out, a colour with more pieces on the board and in
    /// reserve than the variant's total.
    #[error(
        "{color}: {on_board} on the board + {reserve} in reserve is more than the {variant} variant's {total} pieces"
    )]
    TooManyPieces {
        /// The colour counted.
        color: Color,
        /// Its pieces on the board, a GIPF piece counting two.
        on_board: u32,
        /// Its reserve.
        reserve: u32,
        /// The variant played.
        variant: Variant,
        /// The variant's pieces for each player.
        total: u8,
    },
    /// A tournament position without `gipf_allowed`.
    #[error("a tournament position must say gipf_allowed for each player")]
    GipfAllowedMissing,
    /// `gipf_allowed` true for a player outside the tournament variant.
    #[error("gipf_allowed: only the tournament variant brings GIPF pieces in")]
    GipfAllowedOutsideTournament,
    /// A position where both players have lost by having no GIPF piece.
    #[error("neither player has a GIPF piece on the board")]
    NoGipfPieceEither,
}

impl Setup {
    /// Reads a position from JSON.
    pub fn from_json(text: &str) -> Result<Setup, SetupError> {
        Ok(serde_json::from_str(text)?)
    }

    /// Checks the position and makes it playable. The game may already be over
    /// (a player with no GIPF piece, or nothing in reserve to push).
    pub fn to_position(&self) -> Result<Position, SetupError> {
        let variant = self.variant;
        let mut board: Vec<(Point, Piece)> = Vec::new();
        for (name, value) in &self.board.0 {
            let cell: Cell = name.parse()?;
            let point = cell.point().ok_or_else(|| SetupError::OnDot(name.clone()))?;
            if board.iter().any(|&(p, _)| p == point) {
                return Err(SetupError::Repeated { cell: name.clone() });
            }
            let mut letters = value.chars();
            let piece = match (letters.next().and_then(Piece::from_letter), letters.next()) {
                (Some(piece), None) => piece,
                _ => return Err(SetupError::NotAPiece { cell: name.clone(), value: value.clone() }),
            };
            if piece.gipf && !variant.has_gipf_pieces() {
                return Err(SetupError::GipfInBasic(name.clone()));
            }
            board.push((point, piece));
        }

        let total = variant.total_pieces();
        let mut captured = [0u8; 2];
        for color in Color::BOTH {
            let on_board: u32 =
                board.iter().filter(|(_, piece)| piece.color == color).map(|(_, piece)| piece.weight() as u32).sum();
            let reserve = self.reserve.get(color) as u32;
            captured[color.index()] = match self.captured {
                Some(given) => {
                    let captured = given.get(color) as u32;
                    let sum = on_board + reserve + captured;
                    if sum != total as u32 {
                        return Err(SetupError::WrongTotal { color, on_board, reserve, captured, sum, variant, total });
                    }
                    captured as u8
                }
                None => {
                    let rest = (total as u32).checked_sub(on_board + reserve).ok_or(SetupError::TooManyPieces {
                        color,
                        on_board,
                        reserve,
                        variant,
                        total,
                    })?;
                    rest as u8
                }
            };
        }

        let has_gipf = |color: Color| board.iter().any(|(_, piece)| piece.color == color && piece.gipf);
        let rights = match (variant, self.gipf_allowed) {
            (Variant::Tournament, None) => return Err(SetupError::GipfAllowedMissing),
            (Variant::Tournament, Some(allowed)) => [Color::White, Color::Black].map(|color| {
                // A player who may still bring in GIPF pieces and has none on the
                // board has not pushed yet.
                match (allowed.get(color), has_gipf(color)) {
                    (true, false) => GipfRight::FirstMustBeGipf,
                    (true, true) => GipfRight::GipfOrSingle,
                    (false, _) => GipfRight::SinglesOnly,
                }
            }),
            (_, Some(allowed)) if allowed.white || allowed.black => {
                return Err(SetupError::GipfAllowedOutsideTournament)
            }
            _ => [GipfRight::SinglesOnly; 2],
        };
        let lost =
            |c: Color| variant.has_gipf_pieces() && !has_gipf(c) && rights[c.index()] != GipfRight::FirstMustBeGipf;
        if lost(Color::White) && lost(Color::Black) {
            return Err(SetupError::NoGipfPieceEither);
        }
        let reserve = [self.reserve.white, self.reserve.black];
        Ok(Position::from_parts(variant, &board, reserve, captured, self.to_move, rights))
    }

    /// The setup of a position at the start of a push (any pending removal is not recorded).
    pub fn from_position(pos: &Position) -> Setup {
        let board = board_entries(pos).collect();
        let tournament = pos.variant() == Variant::Tournament;
        Setup {
            variant: pos.variant(),
            board: BoardEntries(board),
            reserve: PerColor::from_fn(|c| pos.reserve(c)),
            captured: Some(PerColor::from_fn(|c| pos.captured(c))),
            to_move: pos.to_move(),
            gipf_allowed: tournament.then(|| PerColor::from_fn(|c| pos.gipf_allowed(c))),
        }
    }
}

/// The pieces on the board as (cell name, letter) pairs, in notation order.
fn board_entries(pos: &Position) -> impl Iterator<Item = (String, String)> + '_ {
    Point::all().filter_map(|p| pos.piece_at(p).map(|piece| (p.to_string(), piece.letter().to_string())))
}

/// The state object of the `gipf rules --json` contract.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateJson {
    /// The variant played.
    pub variant: Variant,
    /// Each occupied point's name and its piece's letter (`w`, `b`, `W`, `B`).
    pub board: BTreeMap<String, String>,
    /// Pieces each player has left to bring in.
    pub reserve: PerColor<u8>,
    /// Pieces of each colour captured by the opponent.
    pub captured: PerColor<u8>,
    /// The player who must decide now; `None` once the game is over.
    pub to_act: Option<Color>,
    /// `push`, `remove` or `over`.
    pub phase: String,
    /// The legal actions' notation, sorted by their bytes.
    pub legal: Vec<String>,
    /// The winner once the game is over, else `None`.
    pub winner: Option<Color>,
}

impl StateJson {
    /// The state of `pos`.
    pub fn of(pos: &Position) -> StateJson {
        let mut legal: Vec<String> = pos.legal_actions().iter().map(|a| a.to_string()).collect();
        legal.sort();
        let phase = match pos.phase() {
            Phase::Push => "push",
            Phase::Remove { .. } => "remove",
            Phase::Over(_) => "over",
        };
        StateJson {
            variant: pos.variant(),
            board: board_entries(pos).collect(),
            reserve: PerColor::from_fn(|c| pos.reserve(c)),
            captured: PerColor::from_fn(|c| pos.captured(c)),
            to_act: pos.to_act(),
            phase: phase.to_string(),
            legal,
            winner: pos.outcome().map(|o| o.winner),
        }
    }
}
