//! The game state and its state machine: pushes, rows and their removal, and
//! the end of the game.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::action::{Action, Push};
use super::geometry::{self, Bitboard, Point, Symmetry, LINES_PER_DIRECTION, NUM_LINES, NUM_PUSHES};

/// A player, and the colour of their pieces.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    White,
    Black,
}

impl Color {
    pub const BOTH: [Color; 2] = [Color::White, Color::Black];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn opponent(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

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
    #[error("unknown colour '{0}': expected white or black")]
    Color(String),
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
    pub color: Color,
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
    pub winner: Color,
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
        player: Color,
        done_lines: u32,
    },
    Over(Outcome),
}

/// A row to resolve: its line and its run (the whole unbroken stretch of
/// occupied points containing four or more pieces of the owner's colour).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Row {
    pub line: u8,
    pub run: Bitboard,
}

/// Why an action was refused.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum IllegalAction {
    #[error("the game is over")]
    GameOver,
    #[error("{0} must first decide how to remove their rows")]
    RemovalPending(Color),
    #[error("{0} must push; no row is waiting to be removed")]
    PushPending(Color),
    #[error("the line from {0} is full up to the rim; the push would push a piece off the board")]
    LineFull(Point),
    #[error("{0} has no piece left in reserve")]
    EmptyReserve(Color),
    #[error("{0} needs two pieces in reserve to bring in a GIPF piece")]
    ReserveTooSmallForGipf(Color),
    #[error("GIPF pieces are brought in only in the tournament variant")]
    GipfPushNotInVariant,
    #[error("{0} has pushed a single and may no longer bring in GIPF pieces")]
    GipfPushNoLonger(Color),
    #[error("{0}'s first push must bring in a GIPF piece")]
    FirstPushMustBeGipf(Color),
    #[error("it removes no row's run less some of its GIPF pieces; see the legal removals")]
    NotARemoval,
    #[error("rows with singles in them remain; only rows made of GIPF pieces alone may be left")]
    CannotLeave,
}

/// A complete game state: board, reserves, captured pieces, whose turn, and
/// the decision pending. Fixed-size and `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Position {
    pieces: [Bitboard; 2],
    gipf: Bitboard,
    reserve: [u8; 2],
    captured: [u8; 2],
    variant: Variant,
    to_move: Color,
    gipf_rights: [GipfRight; 2],
    phase: Phase,
}

/// Up to 21 rows (one per line at most).
struct Rows {
    rows: [Row; NUM_LINES],
    len: usize,
}

impl Rows {
    fn as_slice(&self) -> &[Row] {
        &self.rows[..self.len]
    }
}

impl Position {
    /// The start of a game of `variant`, white to push.
    pub fn new(variant: Variant) -> Position {
        let mut pos = Position {
            pieces: [Bitboard::EMPTY; 2],
            gipf: Bitboard::EMPTY,
            reserve: [12, 12],
            captured: [0, 0],
            variant,
            to_move: Color::White,
            gipf_rights: [GipfRight::SinglesOnly; 2],
            phase: Phase::Push,
        };
        match variant {
            Variant::Tournament => {
                pos.reserve = [18, 18];
                pos.gipf_rights = [GipfRight::FirstMustBeGipf; 2];
            }
            Variant::Basic | Variant::Standard => {
                let gipf = variant == Variant::Standard;
                for (names, color) in [(["b5", "e2", "h5"], Color::White), (["b2", "e8", "h2"], Color::Black)] {
                    for name in names {
                        let point = name.parse::<geometry::Cell>().ok().and_then(|c| c.point()).expect("start point");
                        pos.put(point, Piece { color, gipf });
                    }
                }
            }
        }
        pos
    }

    /// Builds a position from its parts, at the start of `to_move`'s push; used
    /// by [`crate::rules::Setup`], which checks them first.
    pub(crate) fn from_parts(
        variant: Variant,
        board: &[(Point, Piece)],
        reserve: [u8; 2],
        captured: [u8; 2],
        to_move: Color,
        gipf_rights: [GipfRight; 2],
    ) -> Position {
        let mut pos = Position {
            pieces: [Bitboard::EMPTY; 2],
            gipf: Bitboard::EMPTY,
            reserve,
            captured,
            variant,
            to_move,
            gipf_rights,
            phase: Phase::Push,
        };
        for &(point, piece) in board {
            pos.put(point, piece);
        }
        pos.phase = match pos.gipf_loss(to_move) {
            Some(outcome) => Phase::Over(outcome),
            None => Phase::Push,
        };
        pos.check_can_push();
        pos
    }

    fn put(&mut self, point: Point, piece: Piece) {
        self.pieces[piece.color.index()] = self.pieces[piece.color.index()].with(point);
        if piece.gipf {
            self.gipf = self.gipf.with(point);
        }
    }

    pub fn variant(&self) -> Variant {
        self.variant
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Whose push it is (during a removal, the player who pushed last).
    pub fn to_move(&self) -> Color {
        self.to_move
    }

    /// The player who must decide now, or `None` when the game is over.
    pub fn to_act(&self) -> Option<Color> {
        match self.phase {
            Phase::Push => Some(self.to_move),
            Phase::Remove { player, .. } => Some(player),
            Phase::Over(_) => None,
        }
    }

    pub fn outcome(&self) -> Option<Outcome> {
        match self.phase {
            Phase::Over(outcome) => Some(outcome),
            _ => None,
        }
    }

    pub fn is_over(&self) -> bool {
        matches!(self.phase, Phase::Over(_))
    }

    pub fn piece_at(&self, point: Point) -> Option<Piece> {
        let gipf = self.gipf.contains(point);
        Color::BOTH.into_iter().find(|c| self.pieces[c.index()].contains(point)).map(|color| Piece { color, gipf })
    }

    /// The points holding `color`'s pieces.
    pub fn pieces(&self, color: Color) -> Bitboard {
        self.pieces[color.index()]
    }

    /// The points holding GIPF pieces of either colour.
    pub fn gipf_pieces(&self) -> Bitboard {
        self.gipf
    }

    pub fn occupied(&self) -> Bitboard {
        self.pieces[0] | self.pieces[1]
    }

    pub fn reserve(&self, color: Color) -> u8 {
        self.reserve[color.index()]
    }

    /// Pieces of `color` captured by the opponent.
    pub fn captured(&self, color: Color) -> u8 {
        self.captured[color.index()]
    }

    /// `color`'s pieces on the board, a GIPF piece counting two.
    pub fn on_board(&self, color: Color) -> u8 {
        let own = self.pieces[color.index()];
        (own.len() + (own & self.gipf).len()) as u8
    }

    pub fn gipf_right(&self, color: Color) -> GipfRight {
        self.gipf_rights[color.index()]
    }

    /// May `color` still bring in GIPF pieces (tournament only)?
    pub fn gipf_allowed(&self, color: Color) -> bool {
        self.gipf_rights[color.index()] != GipfRight::SinglesOnly
    }

    /// Appends the legal actions of `to_act` to `out` (which is cleared first).
    pub fn legal_actions_into(&self, out: &mut Vec<Action>) {
        out.clear();
        match self.phase {
            Phase::Over(_) => {}
            Phase::Push => self.legal_pushes(out),
            Phase::Remove { player, done_lines } => self.legal_removals(player, done_lines, out),
        }
    }

    /// The legal actions of `to_act`, empty when the game is over.
    pub fn legal_actions(&self) -> Vec<Action> {
        let mut out = Vec::with_capacity(NUM_PUSHES);
        self.legal_actions_into(&mut out);
        out
    }

    /// The one legal action, when there is only one: players play it
    /// without a search (a forced removal, mostly).
    pub fn only_action(&self) -> Option<Action> {
        match self.legal_actions().as_slice() {
            &[action] => Some(action),
            _ => None,
        }
    }

    fn legal_pushes(&self, out: &mut Vec<Action>) {
        let me = self.to_move;
        let reserve = self.reserve[me.index()];
        let right = self.gipf_rights[me.index()];
        let singles = reserve >= 1 && right != GipfRight::FirstMustBeGipf;
        let gipfs = reserve >= 2 && right != GipfRight::SinglesOnly;
        let occupied = self.occupied();
        for (i, push) in geometry::pushes().iter().enumerate() {
            if push.mask.is_subset(occupied) {
                continue;
            }
            if singles {
                out.push(Action::Push(Push::of(i, false)));
            }
            if gipfs {
                out.push(Action::Push(Push::of(i, true)));
            }
        }
    }

    fn legal_removals(&self, player: Color, done_lines: u32, out: &mut Vec<Action>) {
        let rows = self.rows(player, done_lines);
        let mut all_gipf = true;
        for row in rows.as_slice() {
            let kept = row.run & self.gipf;
            all_gipf &= row.run == kept;
            // Every subset of the run's GIPF pieces may be kept.
            let mut keep = kept.0;
            loop {
                let removed = Bitboard(row.run.0 & !keep);
                if !removed.is_empty() {
                    out.push(Action::Remove(removed));
                }
                if keep == 0 {
                    break;
                }
                keep = (keep - 1) & kept.0;
            }
        }
        if rows.len > 1 {
            // Identical outcomes count once.
            out.sort_unstable();
            out.dedup();
        }
        if all_gipf {
            out.push(Action::Leave);
        }
    }

    /// Is `action` legal for `to_act` now?
    pub fn is_legal(&self, action: Action) -> bool {
        self.check(action).is_ok()
    }

    /// Says why `action` is not legal now, if it is not.
    pub fn check(&self, action: Action) -> Result<(), IllegalAction> {
        match (self.phase, action) {
            (Phase::Over(_), _) => Err(IllegalAction::GameOver),
            (Phase::Push, Action::Push(push)) => self.check_push(push),
            (Phase::Push, _) => Err(IllegalAction::PushPending(self.to_move)),
            (Phase::Remove { player, .. }, Action::Push(_)) => Err(IllegalAction::RemovalPending(player)),
            (Phase::Remove { player, done_lines }, Action::Remove(removed)) => {
                let rows = self.rows(player, done_lines);
                match rows.as_slice().iter().any(|row| self.is_removal_of(row, removed)) {
                    true => Ok(()),
                    false => Err(IllegalAction::NotARemoval),
                }
            }
            (Phase::Remove { player, done_lines }, Action::Leave) => {
                let rows = self.rows(player, done_lines);
                match rows.as_slice().iter().all(|row| row.run.is_subset(self.gipf)) {
                    true => Ok(()),
                    false => Err(IllegalAction::CannotLeave),
                }
            }
        }
    }

    fn check_push(&self, push: Push) -> Result<(), IllegalAction> {
        let me = self.to_move;
        let reserve = self.reserve[me.index()];
        match (push.is_gipf(), self.gipf_rights[me.index()]) {
            (true, GipfRight::SinglesOnly) if self.variant != Variant::Tournament => {
                return Err(IllegalAction::GipfPushNotInVariant)
            }
            (true, GipfRight::SinglesOnly) => return Err(IllegalAction::GipfPushNoLonger(me)),
            (false, GipfRight::FirstMustBeGipf) => return Err(IllegalAction::FirstPushMustBeGipf(me)),
            (true, _) if reserve < 2 => return Err(IllegalAction::ReserveTooSmallForGipf(me)),
            _ if reserve == 0 => return Err(IllegalAction::EmptyReserve(me)),
            _ => {}
        }
        let geometry = push.geometry();
        if geometry.mask.is_subset(self.occupied()) {
            return Err(IllegalAction::LineFull(geometry.entry()));
        }
        Ok(())
    }

    /// Does removing `removed` take `row`'s run, less some of its GIPF pieces?
    fn is_removal_of(&self, row: &Row, removed: Bitboard) -> bool {
        !removed.is_empty() && removed.is_subset(row.run) && Bitboard(row.run.0 & !removed.0).is_subset(self.gipf)
    }

    /// Plays `action`, or says why it is illegal and leaves the position unchanged.
    pub fn play(&mut self, action: Action) -> Result<(), IllegalAction> {
        self.check(action)?;
        self.play_unchecked(action);
        Ok(())
    }

    /// Plays an action known to be legal (one of [`Position::legal_actions`]).
    /// An illegal one leaves the position in an unspecified state.
    pub fn play_unchecked(&mut self, action: Action) {
        match (self.phase, action) {
            (Phase::Push, Action::Push(push)) => self.apply_push(push),
            (Phase::Remove { player, mut done_lines }, Action::Remove(removed)) => {
                // Every row this removal takes counts as removed (identical outcomes are one action).
                for row in self.rows(player, done_lines).as_slice() {
                    if self.is_removal_of(row, removed) {
                        done_lines |= 1 << row.line;
                    }
                }
                self.take_off(player, removed);
                match self.gipf_loss(player) {
                    Some(outcome) => self.phase = Phase::Over(outcome),
                    None => self.resolve(player, done_lines),
                }
            }
            (Phase::Remove { player, .. }, Action::Leave) => self.end_resolution(player),
            _ => debug_assert!(false, "play_unchecked: {action} is not legal now"),
        }
    }

    fn apply_push(&mut self, push: Push) {
        let me = self.to_move;
        let path = &push.geometry().path;
        let occupied = self.occupied();
        let gap = path.iter().position(|p| !occupied.contains(*p)).expect("legal push has a gap");
        for j in (1..=gap).rev() {
            let (from, to) = (path[j - 1], path[j]);
            let [white, black] = &mut self.pieces;
            for board in [white, black, &mut self.gipf] {
                if board.contains(from) {
                    *board = board.without(from).with(to);
                }
            }
        }
        let piece = Piece { color: me, gipf: push.is_gipf() };
        self.put(path[0], piece);
        self.reserve[me.index()] -= piece.weight();
        if self.variant == Variant::Tournament {
            self.gipf_rights[me.index()] = match piece.gipf {
                true => GipfRight::GipfOrSingle,
                false => GipfRight::SinglesOnly,
            };
        }
        self.resolve(me, 0);
    }

    /// `player`'s rows, on lines not in `done_lines`.
    fn rows(&self, player: Color, done_lines: u32) -> Rows {
        let own = self.pieces[player.index()];
        let mut rows = Rows { rows: [Row { line: 0, run: Bitboard::EMPTY }; NUM_LINES], len: 0 };
        for d in 0..3 {
            let mine = geometry::line_layout(d, own);
            let mut four = mine & (mine >> 1) & (mine >> 2) & (mine >> 3);
            if four == 0 {
                continue;
            }
            let full = geometry::line_layout(d, self.occupied());
            while four != 0 {
                let start = four.trailing_zeros() as usize;
                let group = start / 8;
                four &= !(0xff << (8 * group));
                let line = d * LINES_PER_DIRECTION + group;
                if done_lines & (1 << line) != 0 {
                    continue;
                }
                // The run: extend the row over occupied points both ways (bit
                // 8g+7 is always clear, so this stays within the line).
                let (mut lo, mut hi) = (start, start + 3);
                while lo > 8 * group && full & (1 << (lo - 1)) != 0 {
                    lo -= 1;
                }
                while full & (1 << (hi + 1)) != 0 {
                    hi += 1;
                }
                let points = &geometry::lines()[line].points;
                let run = points[lo - 8 * group..=hi - 8 * group].iter().copied().collect();
                rows.rows[rows.len] = Row { line: line as u8, run };
                rows.len += 1;
            }
        }
        rows
    }

    /// The rows `to_act` must resolve now (empty outside a removal decision).
    pub fn pending_rows(&self) -> Vec<Row> {
        match self.phase {
            Phase::Remove { player, done_lines } => self.rows(player, done_lines).as_slice().to_vec(),
            _ => Vec::new(),
        }
    }

    /// Removes `points`: `remover`'s own pieces go back to their reserve, the
    /// others are captured.
    fn take_off(&mut self, remover: Color, points: Bitboard) {
        for color in Color::BOTH {
            let taken = points & self.pieces[color.index()];
            let count = (taken.len() + (taken & self.gipf).len()) as u8;
            if color == remover {
                self.reserve[color.index()] += count;
            } else {
                self.captured[color.index()] += count;
            }
            self.pieces[color.index()] = Bitboard(self.pieces[color.index()].0 & !points.0);
        }
        self.gipf = Bitboard(self.gipf.0 & !points.0);
    }

    /// Starts or continues `player`'s resolution of their rows: rows that touch
    /// no other row and hold no GIPF piece go without a choice; if rows remain,
    /// `player` must decide.
    fn resolve(&mut self, player: Color, done_lines: u32) {
        let rows = self.rows(player, done_lines);
        let rows = rows.as_slice();
        let mut choice_left = false;
        for (i, row) in rows.iter().enumerate() {
            let alone = rows.iter().enumerate().all(|(j, other)| i == j || (row.run & other.run).is_empty());
            if alone && (row.run & self.gipf).is_empty() {
                self.take_off(player, row.run);
            } else {
                choice_left = true;
            }
        }
        match choice_left {
            true => self.phase = Phase::Remove { player, done_lines },
            false => self.end_resolution(player),
        }
    }

    fn end_resolution(&mut self, player: Color) {
        if player == self.to_move {
            self.resolve(player.opponent(), 0);
        } else {
            self.to_move = player;
            self.phase = Phase::Push;
            self.check_can_push();
        }
    }

    /// At the start of a push: a player who cannot push loses.
    fn check_can_push(&mut self) {
        if self.phase != Phase::Push {
            return;
        }
        let me = self.to_move;
        let need = match self.gipf_rights[me.index()] {
            GipfRight::FirstMustBeGipf => 2,
            _ => 1,
        };
        if self.reserve[me.index()] < need {
            self.phase = Phase::Over(Outcome { winner: me.opponent(), reason: WinReason::NoReserve });
        }
    }

    /// After `remover` removed pieces: does a player lack a GIPF piece?
    fn gipf_loss(&self, remover: Color) -> Option<Outcome> {
        if !self.variant.has_gipf_pieces() {
            return None;
        }
        let lost = |c: Color| {
            (self.pieces[c.index()] & self.gipf).is_empty() && self.gipf_rights[c.index()] != GipfRight::FirstMustBeGipf
        };
        let winner = match (lost(remover), lost(remover.opponent())) {
            (false, false) => return None,
            (_, true) => remover,
            (true, false) => remover.opponent(),
        };
        Some(Outcome { winner, reason: WinReason::NoGipfPiece })
    }

    /// The image of this position under a board symmetry.
    pub fn transform(&self, sym: Symmetry) -> Position {
        let mut pos = *self;
        pos.pieces = self.pieces.map(|b| b.transform(sym));
        pos.gipf = self.gipf.transform(sym);
        if let Phase::Remove { player, done_lines } = self.phase {
            let mut image = 0;
            for l in 0..NUM_LINES {
                if done_lines & (1 << l) != 0 {
                    image |= 1 << sym.line(l);
                }
            }
            pos.phase = Phase::Remove { player, done_lines: image };
        }
        pos
    }
}
