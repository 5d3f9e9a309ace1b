//! Patterns of one colour's pieces along the board's lines, counted with
//! the line layouts (bit `8g + i` is point `i` of a line; bit `8g + 7` is
//! always clear, so runs never join two lines).

use crate::rules::{line_layout, Bitboard};

/// Windows of four points that start at bit 0 to 4 of a line's byte, so
/// that they stay within it (the fifth to eighth bits are the line's end
/// or its clear bit).
const WINDOW_STARTS: u64 = 0x001f_1f1f_1f1f_1f1f;

/// Runs of two adjacent pieces along a line (a run of three counts twice).
pub fn pairs(own: Bitboard) -> i32 {
    (0..3).map(|d| line_layout(d, own)).map(|m| (m & (m >> 1)).count_ones() as i32).sum()
}

/// Runs of three adjacent pieces along a line: next to a fourth push, a row.
pub fn threes(own: Bitboard) -> i32 {
    (0..3).map(|d| line_layout(d, own)).map(|m| (m & (m >> 1) & (m >> 2)).count_ones() as i32).sum()
}

/// Windows of four consecutive points of a line holding three pieces or
/// more: the only places where one push can make a row (a push moves one
/// piece into a line it crosses, or shifts its own line by one).
pub fn near_rows(own: Bitboard) -> i32 {
    (0..3)
        .map(|d| line_layout(d, own))
        .map(|m| {
            let (a, b, c, e) = (m, m >> 1, m >> 2, m >> 3);
            (((a & b & c) | (a & b & e) | (a & c & e) | (b & c & e)) & WINDOW_STARTS).count_ones() as i32
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Point, NUM_POINTS};

    fn board(points: &[&str]) -> Bitboard {
        let all: Vec<Point> = (0..NUM_POINTS).map(Point::new).collect();
        points.iter().map(|name| *all.iter().find(|p| p.cell().to_string() == *name).unwrap()).collect()
    }

    #[test]
    fn counts_along_lines() {
        // Column b holds four points b2..b5; a gap at b4 leaves a window of three in four.
        let gapped = board(&["b2", "b3", "b5"]);
        assert_eq!((pairs(gapped), threes(gapped), near_rows(gapped)), (1, 0, 1));
        let three = board(&["c2", "c3", "c4"]);
        assert_eq!((pairs(three), threes(three), near_rows(three)), (2, 1, 1), "c2-c5 holds three, c3-c6 two");
        // The ends of two different lines never make a window together.
        let apart = board(&["b5", "c6", "c2"]);
        assert_eq!(near_rows(apart), 0);
    }
}
