//! The classic style's quiescence search: at the horizon, the player to
//! push may stand on the static score or make a row of its own, searched
//! on for at most a few more pushes.

use super::{classic, AlphaBeta};
use crate::players::patterns::Lines;
use crate::rules::{Action, Bitboard, Color, Phase, Position};

/// Pushes the classic quiescence search may add beyond the depth: each makes
/// a row of the pusher's (and its removal is searched with it).
const QUIESCENCE_PUSHES: i32 = 4;

impl AlphaBeta {
    /// At the horizon (depth 0 or below, `QUIESCENCE_PUSHES` more at most)
    /// the player to push may stand on the static score or make a row of
    /// its own, whose removal and what follows are searched the same way.
    pub(super) fn quiesce(&mut self, pos: &Position, mut alpha: i32, beta: i32, ply: u32, depth: i32) -> i32 {
        let me = pos.to_move();
        let stand = classic::evaluate(pos, me);
        if depth <= -QUIESCENCE_PUSHES || stand >= beta {
            return stand;
        }
        let candidates = capture_candidates(pos, me);
        if candidates.is_empty() {
            return stand;
        }
        let mut best = stand;
        alpha = alpha.max(stand);
        for action in candidates {
            let mut child = *pos;
            child.play_unchecked(action);
            if !captures(&child, me) {
                continue;
            }
            let value = self.child_value(&child, me, depth - 1, alpha, beta, ply);
            if self.stopped {
                return 0;
            }
            best = best.max(value);
            alpha = alpha.max(value);
            if alpha >= beta {
                break;
            }
        }
        best
    }
}

/// The legal pushes of `me` that may capture: those that change a point
/// of a near row of `me`'s (every push, when the opponent has nothing left
/// in reserve and may lose at once).
pub(super) fn capture_candidates(pos: &Position, me: Color) -> Vec<Action> {
    let mut actions = pos.legal_actions();
    if pos.reserve(me.opponent()) > 0 {
        let near_rows = Lines::of(pos.pieces(me)).near_row_points();
        actions.retain(|&a| changes_any(pos, a, near_rows));
    }
    actions
}

/// Whether `action` (a push) changes what stands on any of `points`: the
/// points from its entry up to the first empty one, which it fills.
fn changes_any(pos: &Position, action: Action, points: Bitboard) -> bool {
    let Action::Push(push) = action else { return true };
    let occupied = pos.occupied();
    for &p in &push.geometry().path {
        if points.contains(p) {
            return true;
        }
        if !occupied.contains(p) {
            return false;
        }
    }
    false
}

/// Whether `me`'s push that led to `child` captures: it made a row of
/// `me`'s to remove, or won.
pub(super) fn captures(child: &Position, me: Color) -> bool {
    match child.phase() {
        Phase::Remove { player, .. } => player == me,
        Phase::Over(outcome) => outcome.winner == me,
        Phase::Push => false,
    }
}
