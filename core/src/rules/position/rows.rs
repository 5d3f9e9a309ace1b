//! Rows and their removal: finding a player's rows, the rows a removal
//! decision waits on, taking pieces off, and the end of a resolution.

use super::Position;
use crate::rules::geometry::{self, Bitboard, LINES_PER_DIRECTION, NUM_LINES};
use crate::rules::types::{Color, GipfRight, Outcome, Phase, Row, WinReason};

/// Up to 21 rows (one per line at most).
pub(super) struct Rows {
    rows: [Row; NUM_LINES],
    len: usize,
}

impl Rows {
    pub(super) fn as_slice(&self) -> &[Row] {
        &self.rows[..self.len]
    }
}

impl Position {
    /// `player`'s rows, on lines not in `done_lines`.
    pub(super) fn rows(&self, player: Color, done_lines: u32) -> Rows {
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
    pub(super) fn take_off(&mut self, remover: Color, points: Bitboard) {
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
    pub(super) fn resolve(&mut self, player: Color, done_lines: u32) {
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

    pub(super) fn end_resolution(&mut self, player: Color) {
        if player == self.to_move {
            self.resolve(player.opponent(), 0);
        } else {
            self.to_move = player;
            self.phase = Phase::Push;
            self.check_can_push();
        }
    }

    /// After `remover` removed pieces: does a player lack a GIPF piece?
    pub(super) fn gipf_loss(&self, remover: Color) -> Option<Outcome> {
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
}
