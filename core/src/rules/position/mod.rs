//! The game state and its state machine: pushes and the end of the game
//! here, rows and their removal in `rows`.

mod rows;

use super::action::{Action, Push};
use super::geometry::{self, Bitboard, Point, Symmetry, NUM_LINES, NUM_PUSHES};
use super::types::{Color, GipfRight, IllegalAction, Outcome, Phase, Piece, Row, Variant, WinReason};

/// A complete game state: board, reserves, captured pieces, whose turn, and
/// the decision pending. Fixed-size and `Copy`.
///
/// ```rust
/// use gipf_core::rules::{Action, Color, Position, Variant};
///
/// let mut pos = Position::new(Variant::Standard);
/// assert_eq!(pos.to_act(), Some(Color::White));
/// // At the start every one of the 42 pushes is open, with singles only.
/// let legal = pos.legal_actions();
/// assert_eq!(legal.len(), 42);
/// let push: Action = "a1-b2".parse().unwrap();
/// assert!(legal.contains(&push));
/// pos.play(push).unwrap();
/// assert_eq!(pos.reserve(Color::White), 11);
/// assert_eq!(pos.to_act(), Some(Color::Black));
/// // An illegal action is refused and leaves the position as it was.
/// assert!(pos.play("Ga1-b2".parse().unwrap()).is_err());
/// assert_eq!(pos.to_act(), Some(Color::Black));
/// ```
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

    /// The variant being played.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The decision pending: a push, a removal, or none when the game is over.
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

    /// Who won and why, or `None` while the game goes on.
    pub fn outcome(&self) -> Option<Outcome> {
        match self.phase {
            Phase::Over(outcome) => Some(outcome),
            _ => None,
        }
    }

    /// Whether the game has ended.
    pub fn is_over(&self) -> bool {
        matches!(self.phase, Phase::Over(_))
    }

    /// The piece on `point`, or `None` when it is empty.
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

    /// The points holding a piece of either colour.
    pub fn occupied(&self) -> Bitboard {
        self.pieces[0] | self.pieces[1]
    }

    /// Pieces `color` has left to bring in (a GIPF piece takes two).
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

    /// What `color` may bring in with respect to GIPF pieces.
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
        if rows.as_slice().len() > 1 {
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
