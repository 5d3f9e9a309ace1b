//! A picture of a position for the terminal.

use std::fmt::Write;

use super::geometry::Cell;
use super::position::Position;
use super::types::{Color, Phase, WinReason};

/// Draws the board (a rim dot by its name, such as `a1`, `+` an empty point,
/// `w`/`b` singles, `W`/`B` GIPF pieces) with both reserves, captured counts
/// and who acts.
pub fn picture(pos: &Position) -> String {
    // Columns are 4 characters apart; each step up a column is two text rows,
    // and neighbouring columns are offset by one row.
    let mut grid = vec![vec![' '; 4 * 9 + 2]; 17];
    for cell in Cell::all() {
        let (q, r) = cell.axial();
        let row = (8 - (2 * r + q)) as usize;
        let col = 2 + 4 * cell.column() as usize;
        match cell.point() {
            // Cells in one text row are 8 characters apart: room for a name.
            None => {
                for (i, c) in cell.to_string().chars().enumerate() {
                    grid[row][col + i] = c;
                }
            }
            Some(p) => grid[row][col] = pos.piece_at(p).map_or('+', |piece| piece.letter()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Variant;

    #[test]
    fn the_rim_dots_are_named() {
        let text = picture(&Position::new(Variant::Standard));
        for cell in Cell::all().filter(|c| c.point().is_none()) {
            assert_eq!(text.matches(&cell.to_string()).count(), 1, "{cell} in\n{text}");
        }
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0].trim(), "e9");
        assert_eq!(lines[16].trim(), "e1");
        assert!(lines[12].starts_with("  a1") && lines[12].trim_end().ends_with("i1"), "{}", lines[12]);
    }
}
