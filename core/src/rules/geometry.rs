//! The board: its 61 cells (37 interior points and 24 rim dots), sets of
//! points as the bits of a `u64`, the 21 lines through the interior, the 42
//! pushes and the 12 symmetries, all as tables computed once.
//!
//! Cells use axial hexagon coordinates `(q, r)`: `q` is the column (`a` = -4 ..
//! `i` = 4), a step up a column is `(0, +1)`, "up-right" is `(+1, 0)` and
//! "down-right" is `(+1, -1)`. The interior is the hexagon of radius 3, the dots
//! its ring of radius 4.

use std::fmt;
use std::sync::LazyLock;

/// Number of cells (interior points and dots).
pub const NUM_CELLS: usize = 61;
/// Number of interior points.
pub const NUM_POINTS: usize = 37;
/// Number of lines through the interior (7 in each of 3 directions).
pub const NUM_LINES: usize = 21;
/// Lines in each of the three directions; lines `7d..7d+7` run in direction `d`.
pub const LINES_PER_DIRECTION: usize = 7;
/// Number of pushes: (dot, entry point) pairs.
pub const NUM_PUSHES: usize = 42;
/// Number of board symmetries (6 rotations, each with and without reflection).
pub const NUM_SYMMETRIES: usize = 12;

const COLUMN_HEIGHTS: [u8; 9] = [5, 6, 7, 8, 9, 8, 7, 6, 5];

/// One of the 61 cells, numbered in notation order (`a1..a5, b1..b6, .., i1..i5`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Cell(u8);

/// One of the 37 interior points, numbered in notation order (`b2..b5, c2..c6, ..`).
/// Bit `i` of a [`Bitboard`] stands for `Point(i)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Point(u8);

/// A line through the interior: its points in order along its direction.
#[derive(Clone, Debug)]
pub struct Line {
    /// The points in order along the line's direction (4 to 7 of them).
    pub points: Vec<Point>,
    /// The same points as a set.
    pub mask: Bitboard,
}

/// A push: a piece put on `dot` enters the interior at `path[0]` and moves
/// pieces ahead of it along `path` towards the far rim.
#[derive(Clone, Debug)]
pub struct PushGeometry {
    /// The dot on the rim the piece is put on.
    pub dot: Cell,
    /// The interior points from the entry point to the far rim.
    pub path: Vec<Point>,
    /// The points of `path` as a set.
    pub mask: Bitboard,
}

impl PushGeometry {
    /// The interior point the piece enters at, `path[0]`.
    pub fn entry(&self) -> Point {
        self.path[0]
    }
}

struct Tables {
    cell_qr: [(i8, i8); NUM_CELLS],
    cell_to_point: [Option<Point>; NUM_CELLS],
    point_to_cell: [Cell; NUM_POINTS],
    lines: Vec<Line>,
    /// For each point, the lines through it (one per direction).
    lines_through: [[u8; 3]; NUM_POINTS],
    pushes: Vec<PushGeometry>,
    /// `push_index[dot][entry point]`, or `u8::MAX` where there is no such push.
    push_index: [[u8; NUM_POINTS]; NUM_CELLS],
    sym_cell: [[Cell; NUM_CELLS]; NUM_SYMMETRIES],
    sym_point: [[Point; NUM_POINTS]; NUM_SYMMETRIES],
    sym_push: [[u8; NUM_PUSHES]; NUM_SYMMETRIES],
    sym_line: [[u8; NUM_LINES]; NUM_SYMMETRIES],
    /// `layout[d][k][byte]`: where the points of byte `k` of a bitboard go in
    /// direction `d`'s line layout.
    layout: Box<[[[u64; 256]; 5]; 3]>,
}

/// The six directions; the first three are the positive senses of the lines.
const DIRECTIONS: [(i8, i8); 6] = [(0, 1), (1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1)];

fn ring(q: i8, r: i8) -> i8 {
    q.abs().max(r.abs()).max((q + r).abs())
}

fn qr_of(column: u8, number: u8) -> (i8, i8) {
    let q = column as i8 - 4;
    (q, number as i8 - 5 - q.min(0))
}

/// Applies symmetry `s`: `s % 6` rotations by 60 degrees, then a reflection if `s >= 6`.
fn transform(s: usize, (mut q, mut r): (i8, i8)) -> (i8, i8) {
    for _ in 0..s % 6 {
        // (q, r, s) -> (-r, -s, -q)
        (q, r) = (-r, q + r);
    }
    if s >= 6 {
        // Swap the r and s axes: a reflection through the column axis.
        r = -q - r;
    }
    (q, r)
}

static TABLES: LazyLock<Tables> = LazyLock::new(build_tables);

fn build_tables() -> Tables {
    let mut cell_qr = [(0i8, 0i8); NUM_CELLS];
    let mut cell_to_point = [None; NUM_CELLS];
    let mut point_to_cell = [Cell(0); NUM_POINTS];
    let mut n = 0usize;
    let mut p = 0usize;
    for (column, &height) in COLUMN_HEIGHTS.iter().enumerate() {
        for number in 1..=height {
            let qr = qr_of(column as u8, number);
            cell_qr[n] = qr;
            if ring(qr.0, qr.1) <= 3 {
                cell_to_point[n] = Some(Point(p as u8));
                point_to_cell[p] = Cell(n as u8);
                p += 1;
            }
            n += 1;
        }
    }
    assert_eq!((n, p), (NUM_CELLS, NUM_POINTS));
    let cell_at = |(q, r): (i8, i8)| cell_qr.iter().position(|&x| x == (q, r)).map(|i| Cell(i as u8));
    let point_at = |qr: (i8, i8)| cell_at(qr).and_then(|c| cell_to_point[c.0 as usize]);

    // Lines: walk from every interior point whose predecessor is not interior.
    let mut lines = Vec::new();
    let mut lines_through = [[0u8; 3]; NUM_POINTS];
    for (d, &(dq, dr)) in DIRECTIONS[..3].iter().enumerate() {
        for c in 0..NUM_CELLS {
            let (q, r) = cell_qr[c];
            if cell_to_point[c].is_none() || point_at((q - dq, r - dr)).is_some() {
                continue;
            }
            let mut points = Vec::new();
            let mut at = (q, r);
            while let Some(pt) = point_at(at) {
                lines_through[pt.0 as usize][d] = lines.len() as u8;
                points.push(pt);
                at = (at.0 + dq, at.1 + dr);
            }
            let mask = points.iter().fold(Bitboard::EMPTY, |m, &pt| m.with(pt));
            lines.push(Line { points, mask });
        }
    }
    assert_eq!(lines.len(), NUM_LINES);

    // Pushes, ordered by dot then entry point.
    let mut pushes = Vec::new();
    let mut push_index = [[u8::MAX; NUM_POINTS]; NUM_CELLS];
    for c in 0..NUM_CELLS {
        if cell_to_point[c].is_some() {
            continue;
        }
        let mut here = Vec::new();
        for &(dq, dr) in &DIRECTIONS {
            let (q, r) = cell_qr[c];
            let mut path = Vec::new();
            let mut at = (q + dq, r + dr);
            while let Some(pt) = point_at(at) {
                path.push(pt);
                at = (at.0 + dq, at.1 + dr);
            }
            if !path.is_empty() {
                here.push(path);
            }
        }
        here.sort_by_key(|path| path[0]);
        for path in here {
            push_index[c][path[0].0 as usize] = pushes.len() as u8;
            let mask = path.iter().fold(Bitboard::EMPTY, |m, &pt| m.with(pt));
            pushes.push(PushGeometry { dot: Cell(c as u8), path, mask });
        }
    }
    assert_eq!(pushes.len(), NUM_PUSHES);

    let mut sym_cell = [[Cell(0); NUM_CELLS]; NUM_SYMMETRIES];
    let mut sym_point = [[Point(0); NUM_POINTS]; NUM_SYMMETRIES];
    let mut sym_push = [[0u8; NUM_PUSHES]; NUM_SYMMETRIES];
    let mut sym_line = [[0u8; NUM_LINES]; NUM_SYMMETRIES];
    for s in 0..NUM_SYMMETRIES {
        for c in 0..NUM_CELLS {
            sym_cell[s][c] = cell_at(transform(s, cell_qr[c])).expect("symmetry maps cells to cells");
        }
        for p in 0..NUM_POINTS {
            let c = sym_cell[s][point_to_cell[p].0 as usize];
            sym_point[s][p] = cell_to_point[c.0 as usize].expect("symmetry keeps the interior");
        }
        for (i, push) in pushes.iter().enumerate() {
            let dot = sym_cell[s][push.dot.0 as usize];
            let entry = sym_point[s][push.entry().0 as usize];
            sym_push[s][i] = push_index[dot.0 as usize][entry.0 as usize];
            assert_ne!(sym_push[s][i], u8::MAX);
        }
        for (i, line) in lines.iter().enumerate() {
            let image: Bitboard = line.points.iter().map(|p| sym_point[s][p.0 as usize]).collect();
            sym_line[s][i] = lines.iter().position(|l| l.mask == image).expect("lines map to lines") as u8;
        }
    }

    // Line layouts: line `g` of direction `d` (lines `7d..7d+7`) takes bits
    // `8g..8g+7`, its points in order; bit `8g+7` always stays clear.
    let mut layout = Box::new([[[0u64; 256]; 5]; 3]);
    for (l, line) in lines.iter().enumerate() {
        let (d, g) = (l / LINES_PER_DIRECTION, l % LINES_PER_DIRECTION);
        for (i, p) in line.points.iter().enumerate() {
            let (k, bit) = (p.0 as usize / 8, p.0 as usize % 8);
            for byte in 0..256 {
                if byte & (1 << bit) != 0 {
                    layout[d][k][byte] |= 1 << (8 * g + i);
                }
            }
        }
    }

    Tables {
        cell_qr,
        cell_to_point,
        point_to_cell,
        lines,
        lines_through,
        pushes,
        push_index,
        sym_cell,
        sym_point,
        sym_push,
        sym_line,
        layout,
    }
}

impl Cell {
    /// All 61 cells in notation order.
    pub fn all() -> impl Iterator<Item = Cell> {
        (0..NUM_CELLS as u8).map(Cell)
    }

    /// The cell at `column` (0 = `a`) and `number` (from 1), if there is one.
    pub fn from_column_number(column: u8, number: u8) -> Option<Cell> {
        let height = *COLUMN_HEIGHTS.get(column as usize)?;
        if number == 0 || number > height {
            return None;
        }
        let before: u8 = COLUMN_HEIGHTS[..column as usize].iter().sum();
        Some(Cell(before + number - 1))
    }

    /// The cell's number in notation order (0..61).
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// Column index, 0 for `a` to 8 for `i`.
    pub fn column(self) -> u8 {
        (TABLES.cell_qr[self.index()].0 + 4) as u8
    }

    /// Number within the column, from 1 at the bottom.
    pub fn number(self) -> u8 {
        let (q, r) = TABLES.cell_qr[self.index()];
        (r + 5 + q.min(0)) as u8
    }

    /// Axial coordinates `(q, r)`.
    pub fn axial(self) -> (i8, i8) {
        TABLES.cell_qr[self.index()]
    }

    /// The interior point at this cell, or `None` for a dot.
    pub fn point(self) -> Option<Point> {
        TABLES.cell_to_point[self.index()]
    }

    /// Whether this is one of the 24 dots on the rim.
    pub fn is_dot(self) -> bool {
        self.point().is_none()
    }

    /// The image of this cell under `sym`.
    pub fn transform(self, sym: Symmetry) -> Cell {
        TABLES.sym_cell[sym.index()][self.index()]
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'a' + self.column()) as char, self.number())
    }
}

impl Point {
    /// All 37 interior points in notation order.
    pub fn all() -> impl Iterator<Item = Point> {
        (0..NUM_POINTS as u8).map(Point)
    }

    /// The point with index `i` (0..37).
    pub fn new(i: usize) -> Point {
        assert!(i < NUM_POINTS, "point index {i} out of range");
        Point(i as u8)
    }

    /// The point's number in notation order (0..37).
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The cell this point is.
    pub fn cell(self) -> Cell {
        TABLES.point_to_cell[self.index()]
    }

    /// The point's bit in a [`Bitboard`]'s `u64`: `1 << index`.
    pub fn bit(self) -> u64 {
        1 << self.0
    }

    /// Indices into [`lines`] of the three lines through this point.
    pub fn lines(self) -> [u8; 3] {
        TABLES.lines_through[self.index()]
    }

    /// The image of this point under `sym`.
    pub fn transform(self, sym: Symmetry) -> Point {
        TABLES.sym_point[sym.index()][self.index()]
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.cell().fmt(f)
    }
}

/// The 21 lines through the interior.
pub fn lines() -> &'static [Line] {
    &TABLES.lines
}

/// `board` in direction `d`'s line layout: bit `8g + i` is point `i` of line
/// `7d + g`. Four in a row along any line of that direction are then four
/// consecutive bits.
#[inline]
pub fn line_layout(d: usize, board: Bitboard) -> u64 {
    let t = &TABLES.layout[d];
    let b = board.0;
    t[0][(b & 0xff) as usize]
        | t[1][((b >> 8) & 0xff) as usize]
        | t[2][((b >> 16) & 0xff) as usize]
        | t[3][((b >> 24) & 0xff) as usize]
        | t[4][((b >> 32) & 0xff) as usize]
}

/// The 42 pushes, ordered by dot and then entry point.
pub fn pushes() -> &'static [PushGeometry] {
    &TABLES.pushes
}

/// The index of the push from `dot` onto `entry`, if they are adjacent.
pub fn push_index(dot: Cell, entry: Point) -> Option<usize> {
    match TABLES.push_index[dot.index()][entry.index()] {
        u8::MAX => None,
        i => Some(i as usize),
    }
}

/// One of the 12 symmetries of the board. `Symmetry(0)` is the identity;
/// `s % 6` is the number of 60-degree rotations, and `s >= 6` adds a reflection.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Symmetry(u8);

impl Symmetry {
    /// The symmetry that leaves every cell where it is.
    pub const IDENTITY: Symmetry = Symmetry(0);

    /// All 12 symmetries, the identity first.
    pub fn all() -> impl Iterator<Item = Symmetry> {
        (0..NUM_SYMMETRIES as u8).map(Symmetry)
    }

    /// Symmetry number `i` (0..12); `None` past the last.
    pub fn new(i: usize) -> Option<Symmetry> {
        (i < NUM_SYMMETRIES).then_some(Symmetry(i as u8))
    }

    /// One of the twelve, drawn uniformly from `rng`.
    pub fn random(rng: &mut impl rand::Rng) -> Symmetry {
        Symmetry(rng.random_range(0..NUM_SYMMETRIES as u8))
    }

    /// The symmetry's number (0..12).
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The symmetry that undoes this one.
    pub fn inverse(self) -> Symmetry {
        Symmetry::all()
            .find(|&t| Cell::all().all(|c| c.transform(self).transform(t) == c))
            .expect("every symmetry has an inverse")
    }

    /// The image of push number `push`.
    pub fn push(self, push: usize) -> usize {
        TABLES.sym_push[self.index()][push] as usize
    }

    /// The image of line number `line`.
    pub fn line(self, line: usize) -> usize {
        TABLES.sym_line[self.index()][line] as usize
    }
}

/// A set of interior points; bit `i` stands for `Point(i)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct Bitboard(pub u64);

impl Bitboard {
    /// The set of no points.
    pub const EMPTY: Bitboard = Bitboard(0);

    /// Whether `p` is in the set.
    pub fn contains(self, p: Point) -> bool {
        self.0 & p.bit() != 0
    }

    /// The set with `p` added.
    pub fn with(self, p: Point) -> Bitboard {
        Bitboard(self.0 | p.bit())
    }

    /// The set with `p` taken out.
    pub fn without(self, p: Point) -> Bitboard {
        Bitboard(self.0 & !p.bit())
    }

    /// Whether the set has no points.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The number of points in the set.
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether every point of this set is in `other`.
    pub fn is_subset(self, other: Bitboard) -> bool {
        self.0 & !other.0 == 0
    }

    /// The points in the set, in increasing index order.
    pub fn iter(self) -> impl Iterator<Item = Point> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(Point::new(i))
        })
    }

    /// The image of the set under `sym`.
    pub fn transform(self, sym: Symmetry) -> Bitboard {
        self.iter().fold(Bitboard::EMPTY, |b, p| b.with(p.transform(sym)))
    }
}

impl std::ops::BitAnd for Bitboard {
    type Output = Bitboard;
    fn bitand(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 & rhs.0)
    }
}

impl std::ops::BitOr for Bitboard {
    type Output = Bitboard;
    fn bitor(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 | rhs.0)
    }
}

impl std::ops::Not for Bitboard {
    type Output = Bitboard;
    fn not(self) -> Bitboard {
        Bitboard(!self.0 & ((1 << NUM_POINTS) - 1))
    }
}

impl FromIterator<Point> for Bitboard {
    fn from_iter<I: IntoIterator<Item = Point>>(iter: I) -> Bitboard {
        iter.into_iter().fold(Bitboard::EMPTY, Bitboard::with)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interior_and_dots_are_as_the_rules_say() {
        let interior: Vec<String> = Point::all().map(|p| p.to_string()).collect();
        let expected: Vec<String> = "bcdefgh"
            .chars()
            .zip([5, 6, 7, 8, 7, 6, 5])
            .flat_map(|(c, top)| (2..=top).map(move |n| format!("{c}{n}")))
            .collect();
        assert_eq!(interior, expected);
        assert_eq!(Cell::all().filter(|c| c.is_dot()).count(), 24);
    }

    #[test]
    fn lines_follow_the_three_directions() {
        let names: Vec<Vec<String>> =
            lines().iter().map(|l| l.points.iter().map(|p| p.to_string()).collect()).collect();
        assert!(names.contains(&vec!["b2".into(), "b3".into(), "b4".into(), "b5".into()]));
        let up_right = ["b2", "c3", "d4", "e5", "f5", "g5", "h5"];
        assert!(names.contains(&up_right.iter().map(|s| s.to_string()).collect()));
        let down_right = ["b5", "c5", "d5", "e5", "f4", "g3", "h2"];
        assert!(names.contains(&down_right.iter().map(|s| s.to_string()).collect()));
        let mut lengths: Vec<usize> = lines().iter().map(|l| l.points.len()).collect();
        lengths.sort();
        assert_eq!(lengths, [4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 7, 7, 7]);
    }

    #[test]
    fn line_layouts_put_each_line_in_its_own_byte() {
        for (l, line) in lines().iter().enumerate() {
            let (d, g) = (l / LINES_PER_DIRECTION, l % LINES_PER_DIRECTION);
            for (i, &p) in line.points.iter().enumerate() {
                assert_eq!(line_layout(d, Bitboard::EMPTY.with(p)), 1 << (8 * g + i));
            }
        }
        let all = !Bitboard::EMPTY;
        assert_eq!((0..3).map(|d| line_layout(d, all).count_ones()).sum::<u32>(), 3 * NUM_POINTS as u32);
    }

    #[test]
    fn corners_have_one_push_and_other_dots_two() {
        for dot in Cell::all().filter(|c| c.is_dot()) {
            let n = pushes().iter().filter(|p| p.dot == dot).count();
            let corner = ["a1", "a5", "e1", "e9", "i1", "i5"].contains(&dot.to_string().as_str());
            assert_eq!(n, if corner { 1 } else { 2 }, "{dot}");
        }
    }

    #[test]
    fn the_seeds_pushes_follow_their_lines() {
        let path = |dot: &str, entry: &str| -> Vec<String> {
            let p = pushes().iter().find(|p| p.dot.to_string() == dot && p.entry().to_string() == entry).unwrap();
            p.path.iter().map(|p| p.to_string()).collect()
        };
        assert_eq!(path("a1", "b2")[..4], ["b2", "c3", "d4", "e5"]);
        assert_eq!(path("b1", "c2")[..4], ["c2", "d3", "e4", "f4"]);
        assert_eq!(path("b1", "b2"), ["b2", "b3", "b4", "b5"]);
    }

    #[test]
    fn symmetries_are_a_group_of_twelve() {
        let images: std::collections::HashSet<Vec<Cell>> =
            Symmetry::all().map(|s| Cell::all().map(|c| c.transform(s)).collect()).collect();
        assert_eq!(images.len(), 12);
        for s in Symmetry::all() {
            let inv = s.inverse();
            assert!(Point::all().all(|p| p.transform(s).transform(inv) == p));
        }
    }

    #[test]
    fn symmetries_keep_adjacency() {
        let adjacent = |a: (i8, i8), b: (i8, i8)| {
            let (dq, dr) = (b.0 - a.0, b.1 - a.1);
            DIRECTIONS.contains(&(dq, dr))
        };
        for s in Symmetry::all() {
            for a in Cell::all() {
                for b in Cell::all() {
                    assert_eq!(
                        adjacent(a.axial(), b.axial()),
                        adjacent(a.transform(s).axial(), b.transform(s).axial())
                    );
                }
            }
        }
    }
}
