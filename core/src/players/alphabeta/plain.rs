//! `alphabeta`'s evaluation: material, the reserve, GIPF pieces and runs of three.

use crate::players::patterns::Lines;
use crate::rules::{Color, GipfRight, Position};

/// Evaluation weights, in hundredths of a piece (tuned against `uct:10000`
/// at depth 2).
const PIECE: i32 = 100;
const RESERVE: i32 = 25;
const GIPF_PIECE: i32 = 60;
const LAST_GIPF_PIECE: i32 = 300;
const THREE_IN_A_LINE: i32 = 40;
/// A run of three of the player to push is worth more: one push may make it a row.
const THREE_TO_PUSH: i32 = 150;
/// Penalties for a reserve of 0, 1, 2 and 3 pieces.
const LOW_RESERVE: [i32; 4] = [400, 200, 100, 40];

/// `color`'s share of the static score: material (reserve plus board; what
/// is captured is gone), the reserve again (a player with none loses), GIPF
/// pieces (losing the last one loses), and runs of three, worth more to the
/// player about to push.
fn side_score(pos: &Position, color: Color) -> i32 {
    let reserve = pos.reserve(color) as i32;
    let mut score = PIECE * (reserve + pos.on_board(color) as i32) + RESERVE * reserve;
    if let Some(&danger) = LOW_RESERVE.get(reserve as usize) {
        score -= danger;
    }
    if pos.variant().has_gipf_pieces() && pos.gipf_right(color) != GipfRight::FirstMustBeGipf {
        let gipfs = (pos.pieces(color) & pos.gipf_pieces()).len() as i32;
        score += GIPF_PIECE * gipfs;
        if gipfs == 1 {
            score -= LAST_GIPF_PIECE;
        }
    }
    let threes = Lines::of(pos.pieces(color)).threes();
    let per_three = if pos.to_move() == color { THREE_IN_A_LINE + THREE_TO_PUSH } else { THREE_IN_A_LINE };
    score + per_three * threes
}

/// The static score of a position not over, for `me`.
pub fn evaluate(pos: &Position, me: Color) -> i32 {
    side_score(pos, me) - side_score(pos, me.opponent())
}
