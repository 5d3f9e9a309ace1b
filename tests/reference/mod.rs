//! A second implementation of the rules, written plainly and slowly from
//! `docs/rules.md`, to check the engine against: cells are `(column, number)` pairs in
//! the official notation, the board is a map, and the lines are found by
//! walking the notation's own neighbour rules. It shares no code with the
//! engine; it only fills the engine's `StateJson` for comparison.

#![allow(dead_code, clippy::needless_range_loop)]

use std::collections::{BTreeMap, BTreeSet};

use gipf::rules::{PerColor, StateJson, Variant};

type Cell = (u8, u8); // column 0..9 (a..i), number from 1

const HEIGHTS: [u8; 9] = [5, 6, 7, 8, 9, 8, 7, 6, 5];

fn on_board((c, n): Cell) -> bool {
    c < 9 && n >= 1 && n <= HEIGHTS[c as usize]
}

fn interior((c, n): Cell) -> bool {
    on_board((c, n)) && (1..=7).contains(&c) && n >= 2 && n < HEIGHTS[c as usize]
}

/// One step in direction `d` (0 up, 1 up-right, 2 down-right, 3 down, 4
/// down-left, 5 up-left), in the official numbering: "up-right" raises the
/// number up to column e and keeps it after; "down-right" keeps it up to e and
/// lowers it after.
fn step((c, n): Cell, d: usize) -> Option<Cell> {
    let (c, n) = (c as i32, n as i32);
    let next = match d {
        0 => (c, n + 1),
        1 => (c + 1, if c < 4 { n + 1 } else { n }),
        2 => (c + 1, if c < 4 { n } else { n - 1 }),
        3 => (c, n - 1),
        4 => (c - 1, if c <= 4 { n - 1 } else { n }),
        5 => (c - 1, if c <= 4 { n } else { n + 1 }),
        _ => unreachable!(),
    };
    if next.0 < 0 || next.1 < 1 || next.0 > 8 {
        return None;
    }
    let cell = (next.0 as u8, next.1 as u8);
    on_board(cell).then_some(cell)
}

pub fn name((c, n): Cell) -> String {
    format!("{}{}", (b'a' + c) as char, n)
}

fn parse_cell(s: &str) -> Cell {
    let b = s.as_bytes();
    (b[0] - b'a', s[1..].parse().unwrap())
}

fn all_cells() -> Vec<Cell> {
    (0..9u8).flat_map(|c| (1..=HEIGHTS[c as usize]).map(move |n| (c, n))).collect()
}

/// Every line through the interior, as its interior cells in order.
fn all_lines() -> Vec<Vec<Cell>> {
    let mut lines = Vec::new();
    for d in 0..3 {
        for start in all_cells() {
            let before = step(start, d + 3);
            if !interior(start) || before.is_some_and(interior) {
                continue;
            }
            let mut line = vec![start];
            while let Some(next) = step(*line.last().unwrap(), d).filter(|&c| interior(c)) {
                line.push(next);
            }
            lines.push(line);
        }
    }
    lines
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Stone {
    pub white: bool,
    pub gipf: bool,
}

#[derive(Clone, Debug)]
pub struct RefGame {
    pub variant: Variant,
    pub board: BTreeMap<Cell, Stone>,
    pub reserve: [i32; 2],
    pub captured: [i32; 2],
    /// 0 = white, 1 = black: whose push it is.
    pub to_move: usize,
    /// Tournament: 0 = first push must be a GIPF piece, 1 = may push either, 2 = singles only.
    pub gipf_state: [u8; 2],
    /// The player resolving rows now, and the lines already removed from in this resolution.
    pub resolving: Option<(usize, Vec<usize>)>,
    pub winner: Option<usize>,
    lines: Vec<Vec<Cell>>,
}

fn color_of(white: bool) -> usize {
    if white {
        0
    } else {
        1
    }
}

impl RefGame {
    pub fn new(variant: Variant) -> RefGame {
        let mut game = RefGame {
            variant,
            board: BTreeMap::new(),
            reserve: [12, 12],
            captured: [0, 0],
            to_move: 0,
            gipf_state: [2, 2],
            resolving: None,
            winner: None,
            lines: all_lines(),
        };
        if variant == Variant::Tournament {
            game.reserve = [18, 18];
            game.gipf_state = [0, 0];
        } else {
            let gipf = variant == Variant::Standard;
            for s in ["b5", "e2", "h5"] {
                game.board.insert(parse_cell(s), Stone { white: true, gipf });
            }
            for s in ["b2", "e8", "h2"] {
                game.board.insert(parse_cell(s), Stone { white: false, gipf });
            }
        }
        game
    }

    /// A game from a checked setup: board as (cell name, letter), reserves and
    /// captured counts, whose push, and (tournament) who may still push GIPF pieces.
    pub fn from_setup(
        variant: Variant,
        board: &[(String, char)],
        reserve: [i32; 2],
        captured: [i32; 2],
        to_move: usize,
        gipf_allowed: [bool; 2],
    ) -> RefGame {
        let mut game = RefGame::new(variant);
        game.board.clear();
        for (cell, letter) in board {
            game.board.insert(
                parse_cell(cell),
                Stone { white: letter.eq_ignore_ascii_case(&'w'), gipf: letter.is_ascii_uppercase() },
            );
        }
        game.reserve = reserve;
        game.captured = captured;
        game.to_move = to_move;
        for p in 0..2 {
            game.gipf_state[p] = if variant != Variant::Tournament || !gipf_allowed[p] {
                2
            } else if game.has_gipf(p) {
                1
            } else {
                0
            };
        }
        for p in 0..2 {
            if game.lost_gipf(p) {
                game.winner = Some(1 - p);
            }
        }
        if game.winner.is_none() {
            game.check_reserve();
        }
        game
    }

    fn has_gipf(&self, p: usize) -> bool {
        self.board.values().any(|s| s.gipf && color_of(s.white) == p)
    }

    fn lost_gipf(&self, p: usize) -> bool {
        self.variant != Variant::Basic && self.gipf_state[p] != 0 && !self.has_gipf(p)
    }

    /// The pushes: (dot, entry, the cells from the entry to the far rim).
    fn pushes(&self) -> Vec<(Cell, Cell, Vec<Cell>)> {
        let mut out = Vec::new();
        for dot in all_cells().into_iter().filter(|&c| !interior(c)) {
            for d in 0..6 {
                let Some(entry) = step(dot, d).filter(|&c| interior(c)) else { continue };
                let mut path = vec![entry];
                while let Some(next) = step(*path.last().unwrap(), d).filter(|&c| interior(c)) {
                    path.push(next);
                }
                out.push((dot, entry, path));
            }
        }
        out
    }

    /// Rows of player `p` not on the given lines: (line number, run).
    fn rows(&self, p: usize, skip: &[usize]) -> Vec<(usize, Vec<Cell>)> {
        let mut rows = Vec::new();
        for (l, line) in self.lines.iter().enumerate() {
            if skip.contains(&l) {
                continue;
            }
            // Split the line into runs of occupied cells; a run holds a row if
            // four cells of p's colour follow each other in it.
            let mut run: Vec<Cell> = Vec::new();
            for i in 0..=line.len() {
                let occupied = i < line.len() && self.board.contains_key(&line[i]);
                if occupied {
                    run.push(line[i]);
                    continue;
                }
                let mut best = 0;
                let mut streak = 0;
                for c in &run {
                    if color_of(self.board[c].white) == p {
                        streak += 1;
                        best = best.max(streak);
                    } else {
                        streak = 0;
                    }
                }
                if best >= 4 {
                    rows.push((l, run.clone()));
                }
                run.clear();
            }
        }
        rows
    }

    /// The removals `p` may choose from, by their notation, each with the set removed.
    fn removal_options(&self, p: usize, done: &[usize]) -> BTreeMap<String, BTreeSet<Cell>> {
        let mut options = BTreeMap::new();
        for (_, run) in self.rows(p, done) {
            let gipfs: Vec<Cell> = run.iter().copied().filter(|c| self.board[c].gipf).collect();
            for keep_mask in 0..(1u32 << gipfs.len()) {
                let removed: BTreeSet<Cell> = run
                    .iter()
                    .copied()
                    .filter(|c| !gipfs.iter().enumerate().any(|(i, g)| g == c && keep_mask & (1 << i) != 0))
                    .collect();
                if removed.is_empty() {
                    continue;
                }
                let text = format!("x{}", removed.iter().map(|&c| name(c)).collect::<Vec<_>>().join(","));
                options.insert(text, removed);
            }
        }
        options
    }

    fn may_leave(&self, p: usize, done: &[usize]) -> bool {
        self.rows(p, done).iter().all(|(_, run)| run.iter().all(|c| self.board[c].gipf))
    }

    pub fn to_act(&self) -> Option<usize> {
        if self.winner.is_some() {
            None
        } else if let Some((p, _)) = &self.resolving {
            Some(*p)
        } else {
            Some(self.to_move)
        }
    }

    /// The legal actions in notation, sorted as strings.
    pub fn legal(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.winner.is_some() {
            return out;
        }
        if let Some((p, done)) = &self.resolving {
            out.extend(self.removal_options(*p, done).into_keys());
            if self.may_leave(*p, done) {
                out.push("x-".to_string());
            }
        } else {
            let p = self.to_move;
            for (dot, entry, path) in self.pushes() {
                if path.iter().all(|c| self.board.contains_key(c)) {
                    continue;
                }
                let text = format!("{}-{}", name(dot), name(entry));
                if self.gipf_state[p] != 0 && self.reserve[p] >= 1 {
                    out.push(text.clone());
                }
                if self.gipf_state[p] != 2 && self.reserve[p] >= 2 {
                    out.push(format!("G{text}"));
                }
            }
        }
        out.sort();
        out
    }

    /// Plays an action given in notation; it must be one of `legal()`.
    pub fn play(&mut self, action: &str) {
        assert!(self.legal().iter().any(|a| a == action), "reference: {action} is not legal");
        if let Some((p, done)) = self.resolving.clone() {
            if action == "x-" {
                self.finish_resolution(p);
                return;
            }
            let removed = self.removal_options(p, &done).remove(action).unwrap();
            let mut done = done;
            for (l, run) in self.rows(p, &done) {
                let all_in_run = removed.iter().all(|c| run.contains(c));
                let rest_gipf = run.iter().all(|c| removed.contains(c) || self.board[c].gipf);
                if all_in_run && rest_gipf {
                    done.push(l);
                }
            }
            for c in &removed {
                self.take(p, *c);
            }
            let (me, other) = (self.lost_gipf(p), self.lost_gipf(1 - p));
            if me || other {
                self.winner = Some(if other { p } else { 1 - p });
                self.resolving = None;
                return;
            }
            self.resolve(p, done);
            return;
        }
        let p = self.to_move;
        let gipf = action.starts_with('G');
        let text = action.trim_start_matches('G');
        let (dot, entry) = text.split_once('-').unwrap();
        let (dot, entry) = (parse_cell(dot), parse_cell(entry));
        let (_, _, path) = self.pushes().into_iter().find(|(d, e, _)| *d == dot && *e == entry).unwrap();
        let gap = path.iter().position(|c| !self.board.contains_key(c)).unwrap();
        for i in (0..gap).rev() {
            let stone = self.board.remove(&path[i]).unwrap();
            self.board.insert(path[i + 1], stone);
        }
        self.board.insert(entry, Stone { white: p == 0, gipf });
        self.reserve[p] -= if gipf { 2 } else { 1 };
        if self.variant == Variant::Tournament {
            self.gipf_state[p] = if gipf { 1 } else { 2 };
        }
        self.resolve(p, Vec::new());
    }

    fn take(&mut self, remover: usize, cell: Cell) {
        let stone = self.board.remove(&cell).unwrap();
        let owner = color_of(stone.white);
        let count = if stone.gipf { 2 } else { 1 };
        if owner == remover {
            self.reserve[owner] += count;
        } else {
            self.captured[owner] += count;
        }
    }

    fn resolve(&mut self, p: usize, done: Vec<usize>) {
        let rows = self.rows(p, &done);
        let mut waiting = false;
        for (i, (_, run)) in rows.iter().enumerate() {
            let touches_other =
                rows.iter().enumerate().any(|(j, (_, other))| j != i && run.iter().any(|c| other.contains(c)));
            let has_gipf = run.iter().any(|c| self.board[c].gipf);
            if touches_other || has_gipf {
                waiting = true;
            }
        }
        // Rows that go without a choice are disjoint from every other row, so
        // removing them changes no other row.
        for (i, (_, run)) in rows.iter().enumerate() {
            let touches_other =
                rows.iter().enumerate().any(|(j, (_, other))| j != i && run.iter().any(|c| other.contains(c)));
            let has_gipf = run.iter().any(|c| self.board.get(c).is_some_and(|s| s.gipf));
            if !touches_other && !has_gipf {
                for c in run {
                    self.take(p, *c);
                }
            }
        }
        if waiting {
            self.resolving = Some((p, done));
        } else {
            self.finish_resolution(p);
        }
    }

    fn finish_resolution(&mut self, p: usize) {
        self.resolving = None;
        if p == self.to_move {
            self.resolve(1 - p, Vec::new());
        } else {
            self.to_move = p;
            self.check_reserve();
        }
    }

    fn check_reserve(&mut self) {
        let p = self.to_move;
        let need = if self.gipf_state[p] == 0 { 2 } else { 1 };
        if self.reserve[p] < need {
            self.winner = Some(1 - p);
        }
    }

    /// The state in the `gipf rules --json` shape.
    pub fn state(&self) -> StateJson {
        let color = |p: usize| if p == 0 { gipf::rules::Color::White } else { gipf::rules::Color::Black };
        StateJson {
            variant: self.variant,
            board: self
                .board
                .iter()
                .map(|(&c, s)| {
                    let letter = match (s.white, s.gipf) {
                        (true, false) => "w",
                        (false, false) => "b",
                        (true, true) => "W",
                        (false, true) => "B",
                    };
                    (name(c), letter.to_string())
                })
                .collect(),
            reserve: PerColor { white: self.reserve[0] as u8, black: self.reserve[1] as u8 },
            captured: PerColor { white: self.captured[0] as u8, black: self.captured[1] as u8 },
            to_act: self.to_act().map(color),
            phase: if self.winner.is_some() {
                "over"
            } else if self.resolving.is_some() {
                "remove"
            } else {
                "push"
            }
            .to_string(),
            legal: self.legal(),
            winner: self.winner.map(color),
        }
    }
}

/// Counts the action sequences of length `depth` from `game` (a finished game
/// ends a sequence early and counts once).
pub fn perft(game: &RefGame, depth: u32) -> u64 {
    if depth == 0 || game.winner.is_some() {
        return 1;
    }
    game.legal()
        .iter()
        .map(|a| {
            let mut next = game.clone();
            next.play(a);
            perft(&next, depth - 1)
        })
        .sum()
}
