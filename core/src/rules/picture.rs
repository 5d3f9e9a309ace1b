//! A picture of a position for the terminal.

use std::fmt::Write;

use super::geometry::Cell;
use super::position::{Color, Phase, Position, WinReason};

/// Draws the board (`.` a rim dot, `+` an empty point, `w`/`b` singles,
/// `W`/`B` GIPF pieces) with both reserves, captured counts and who acts.
pub fn picture(pos: &Position) -> String {
    // Columns are 4 characters apart; each step up a column is two text rows,
    // and neighbouring columns are offset by one row.
    let mut grid = vec![vec![' '; 4 * 9 + 1]; 17];
    for cell in Cell::all() {
        let (q, r) = cell.axial();
        let row = (8 - (2 * r + q)) as usize;
        let col = 2 + 4 * cell.column() as usize;
        grid[row][col] = match cell.point() {
            None => '.',
            Some(p) => pos.piece_at(p).map_or('+', |piece| piece.letter()),
        };
    }
    let mut out = String::new();
    let letters: String = (b'a'..=b'i').map(|c| format!("  {} ", c as char)).collect();
    for line in &grid {
        let line: String = line.iter().collect();
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(out, "{}", letters.trim_end());
    for color in Color::BOTH {
        let _ = writeln!(
            out,
            "{color:>5}: reserve {:>2}, captured {:>2}, on board {:>2}",
            pos.reserve(color),
            pos.captured(color),
            pos.on_board(color)
        );
    }
    let _ = match pos.phase() {
        Phase::Push => writeln!(out, "{} to push ({})", pos.to_move(), pos.variant()),
        Phase::Remove { player, .. } => writeln!(out, "{player} to choose a removal ({})", pos.variant()),
        Phase::Over(outcome) => {
            let why = match outcome.reason {
                WinReason::NoGipfPiece => "no GIPF piece left",
                WinReason::NoReserve => "no reserve to push",
            };
            writeln!(out, "{} wins: {} has {why}", outcome.winner, outcome.winner.opponent())
        }
    };
    out
}
