//! Patterns of one colour's pieces along the board's lines, counted with
//! the line layouts (bit `8g + i` is point `i` of a line; bit `8g + 7` is
//! always clear, so runs never join two lines).

use crate::rules::{line_layout, lines, Bitboard, LINES_PER_DIRECTION};

/// Windows of four points that start at bit 0 to 4 of a line's byte, so
/// that they stay within it (the fifth to eighth bits are the line's end
/// or its clear bit).
const WINDOW_STARTS: u64 = 0x001f_1f1f_1f1f_1f1f;

/// One colour's pieces in the three directions' line layouts.
pub struct Lines([u64; 3]);

impl Lines {
    pub fn of(own: Bitboard) -> Lines {
        Lines([0, 1, 2].map(|d| line_layout(d, own)))
    }

    /// Runs of two adjacent pieces along a line (a run of three counts twice).
    pub fn pairs(&self) -> i32 {
        self.0.iter().map(|m| (m & (m >> 1)).count_ones() as i32).sum()
    }

    /// Runs of three adjacent pieces along a line: next to a fourth push, a row.
    pub fn threes(&self) -> i32 {
        self.0.iter().map(|m| (m & (m >> 1) & (m >> 2)).count_ones() as i32).sum()
    }

    /// Windows of four consecutive points of a line holding three pieces or
    /// more: the only places where one push can make a row (a push moves one
    /// piece into a line it crosses, or shifts its own line by one).
    pub fn near_rows(&self) -> i32 {
        self.0.iter().map(|&m| window_starts(m).count_ones() as i32).sum()
    }

    /// The points of the windows [`Lines::near_rows`] counts: a push makes
    /// a row only if it changes one of them.
    pub fn near_row_points(&self) -> Bitboard {
        let mut points = Bitboard::EMPTY;
        for (d, &m) in self.0.iter().enumerate() {
            let mut starts = window_starts(m);
            while starts != 0 {
                let bit = starts.trailing_zeros() as usize;
                starts &= starts - 1;
                let line = &lines()[d * LINES_PER_DIRECTION + bit / 8].points;
                let first = bit % 8;
                points = line[first..line.len().min(first + 4)].iter().fold(points, |b, &p| b.with(p));
            }
        }
        points
    }
}

/// The starts of windows of four holding three set bits or more.
fn window_starts(m: u64) -> u64 {
    let (a, b, c, e) = (m, m >> 1, m >> 2, m >> 3);
    ((a & b & c) | (a & b & e) | (a & c & e) | (b & c & e)) & WINDOW_STARTS
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
        let gapped = Lines::of(board(&["b2", "b3", "b5"]));
        assert_eq!((gapped.pairs(), gapped.threes(), gapped.near_rows()), (1, 0, 1));
        assert_eq!(gapped.near_row_points(), board(&["b2", "b3", "b4", "b5"]));
        let three = Lines::of(board(&["c2", "c3", "c4"]));
        assert_eq!((three.pairs(), three.threes(), three.near_rows()), (2, 1, 1), "c2-c5 holds three, c3-c6 two");
        // The ends of two different lines never make a window together.
        let apart = Lines::of(board(&["b5", "c6", "c2"]));
        assert_eq!(apart.near_rows(), 0);
        assert_eq!(apart.near_row_points(), Bitboard::EMPTY);
    }
}
