//! Counting action sequences, to pin move generation down.

use super::position::Position;

/// The number of legal action sequences of length `depth` from `pos` (a
/// finished game ends a sequence early and counts once).
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 || pos.is_over() {
        return 1;
    }
    let actions = pos.legal_actions();
    if depth == 1 {
        return actions.len() as u64;
    }
    actions
        .iter()
        .map(|&action| {
            let mut next = *pos;
            next.play_unchecked(action);
            perft(&next, depth - 1)
        })
        .sum()
}
