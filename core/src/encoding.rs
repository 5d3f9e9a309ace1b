//! The network's view of the game, version [`ENCODING_VERSION`]: input planes
//! for a position, seen from the player to act, and a fixed index space
//! covering every action of every variant.
//!
//! ## Input: `NUM_PLANES` planes of 7x7
//!
//! The 37 points sit on a 7x7 grid at `(q + 3, r + 3)` in axial coordinates
//! (row-major, index `7 * (q + 3) + (r + 3)`); the 12 grid cells off the board are
//! always 0. "Own" is the player to act. Planes:
//!
//! | plane | meaning |
//! |---|---|
//! | 0, 1 | own singles, own GIPF pieces |
//! | 2, 3 | opponent's singles, opponent's GIPF pieces |
//! | 4 | 1 on the 37 points (the board's shape) |
//! | 5 | the runs of the rows the player must resolve now |
//! | 6, 7 | own, opponent's reserve / 18 (constant planes) |
//! | 8, 9 | own, opponent's captured pieces / 18 |
//! | 10 | 1 when the decision is a removal |
//! | 11 | 1 when acting out of turn (removing rows the opponent's push made) |
//! | 12, 13 | own: may bring in a GIPF piece; must (first tournament push) |
//! | 14, 15 | the same for the opponent |
//! | 16, 17, 18 | variant: basic, standard, tournament |
//!
//! ## Actions: `NUM_ACTIONS` indices
//!
//! | indices | action |
//! |---|---|
//! | 0..42 | push a single, by push number (dot, then entry point, in notation order) |
//! | 42..84 | push a GIPF piece, likewise |
//! | 84..121 | remove one point, by point number |
//! | 121..1045 | remove two or more points of one line: for each of the 21 lines in order, each subset of its points (as a bit mask over the line's points, lowest first) of two or more points, in increasing mask order |
//! | 1045 | leave the remaining rows (`x-`) |

use std::sync::LazyLock;

use crate::rules::{
    lines, Action, Bitboard, Color, GipfRight, Phase, Point, Position, Push, Symmetry, Variant, NUM_LINES, NUM_POINTS,
    NUM_PUSHES, NUM_SYMMETRIES,
};

/// Changes whenever the planes or the action indices change.
pub const ENCODING_VERSION: u32 = 1;
/// Side of the square grid holding the hexagonal board.
pub const GRID: usize = 7;
/// Number of input planes, each [`GRID`] by [`GRID`].
pub const NUM_PLANES: usize = 19;
/// What each plane holds (as in the table above), for model cards.
pub const PLANE_NAMES: [&str; NUM_PLANES] = [
    "own singles",
    "own GIPF pieces",
    "opponent's singles",
    "opponent's GIPF pieces",
    "board points",
    "runs of the rows to resolve now",
    "own reserve / 18",
    "opponent's reserve / 18",
    "own captured pieces / 18",
    "opponent's captured pieces / 18",
    "decision is a removal",
    "acting out of turn",
    "own: may bring in a GIPF piece",
    "own: must bring in a GIPF piece",
    "opponent: may bring in a GIPF piece",
    "opponent: must bring in a GIPF piece",
    "variant basic",
    "variant standard",
    "variant tournament",
];
/// Floats in one encoded position.
pub const INPUT_SIZE: usize = NUM_PLANES * GRID * GRID;

const SINGLE_REMOVALS: usize = 2 * NUM_PUSHES;
const LINE_REMOVALS: usize = SINGLE_REMOVALS + NUM_POINTS;
/// Number of action indices.
pub const NUM_ACTIONS: usize = LINE_REMOVALS + 924 + 1;
const LEAVE: usize = NUM_ACTIONS - 1;

struct Tables {
    /// Grid cell of each point.
    grid: [usize; NUM_POINTS],
    /// The action at each index.
    actions: Vec<Action>,
    /// First index of each line's multi-point removals.
    line_offset: [usize; NUM_LINES],
    /// `rank[len][mask]`: position of `mask` among the masks of a line of
    /// `len` points with two or more bits set.
    rank: [[u16; 128]; 8],
    /// `sym[s][i]`: the index of the image of action `i` under symmetry `s`.
    sym: Vec<[u16; NUM_ACTIONS]>,
}

static TABLES: LazyLock<Tables> = LazyLock::new(build);

fn build() -> Tables {
    let mut grid = [0; NUM_POINTS];
    for p in Point::all() {
        let (q, r) = p.cell().axial();
        grid[p.index()] = GRID * (q + 3) as usize + (r + 3) as usize;
    }
    let mut rank = [[u16::MAX; 128]; 8];
    for (len, ranks) in rank.iter_mut().enumerate() {
        let mut n = 0;
        for (mask, rank) in ranks.iter_mut().enumerate().take(1 << len) {
            if mask.count_ones() >= 2 {
                *rank = n;
                n += 1;
            }
        }
    }
    let mut actions: Vec<Action> =
        (0..2 * NUM_PUSHES).map(|i| Action::Push(Push::of(i % NUM_PUSHES, i >= NUM_PUSHES))).collect();
    actions.extend(Point::all().map(|p| Action::Remove(Bitboard::EMPTY.with(p))));
    let mut line_offset = [0; NUM_LINES];
    for (l, line) in lines().iter().enumerate() {
        line_offset[l] = actions.len();
        for mask in 0..(1usize << line.points.len()) {
            if mask.count_ones() >= 2 {
                let points = line.points.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, &p)| p);
                actions.push(Action::Remove(points.collect()));
            }
        }
    }
    actions.push(Action::Leave);
    assert_eq!(actions.len(), NUM_ACTIONS);
    let mut tables = Tables { grid, actions, line_offset, rank, sym: Vec::new() };
    for s in Symmetry::all() {
        let mut image = [0u16; NUM_ACTIONS];
        for (i, slot) in image.iter_mut().enumerate() {
            *slot = index_with(&tables, tables.actions[i].transform(s)) as u16;
        }
        tables.sym.push(image);
    }
    assert_eq!(tables.sym.len(), NUM_SYMMETRIES);
    tables
}

fn index_with(t: &Tables, action: Action) -> usize {
    match action {
        Action::Push(push) => push.index() + if push.is_gipf() { NUM_PUSHES } else { 0 },
        Action::Leave => LEAVE,
        Action::Remove(points) => {
            let mut it = points.iter();
            let first = it.next().expect("a removal removes at least one point");
            let Some(second) = it.next() else { return SINGLE_REMOVALS + first.index() };
            // The line through the first two points holds them all.
            let line = first.lines().into_iter().find(|l| second.lines().contains(l)).expect("two points share a line")
                as usize;
            let on_line = &lines()[line].points;
            let mask =
                on_line.iter().enumerate().filter(|(_, p)| points.contains(**p)).fold(0usize, |m, (i, _)| m | (1 << i));
            assert_eq!(mask.count_ones(), points.len(), "removal {action} is not within one line");
            t.line_offset[line] + t.rank[on_line.len()][mask] as usize
        }
    }
}

/// The index of `action`. Every legal action of every variant has one; a
/// removal of points not within one line (never legal) panics.
pub fn action_index(action: Action) -> usize {
    index_with(&TABLES, action)
}

/// The action at `index` (`index < NUM_ACTIONS`).
pub fn action_at(index: usize) -> Action {
    TABLES.actions[index]
}

/// The index of the image under `sym` of the action at `index`: to carry a
/// policy over a board symmetry.
pub fn transform_index(sym: Symmetry, index: usize) -> usize {
    TABLES.sym[sym.index()][index] as usize
}

/// The grid cell (0..49) of a point.
pub fn grid_cell(point: Point) -> usize {
    TABLES.grid[point.index()]
}

/// Writes the planes of `pos` into `out` (`INPUT_SIZE` floats), from the
/// point of view of the player to act (`to_move` once the game is over).
pub fn encode(pos: &Position, out: &mut [f32]) {
    assert_eq!(out.len(), INPUT_SIZE, "encode: output has {} floats, not {INPUT_SIZE}", out.len());
    out.fill(0.0);
    let me = pos.to_act().unwrap_or(pos.to_move());
    let them = me.opponent();
    let plane = |out: &mut [f32], k: usize, points: Bitboard| {
        for p in points.iter() {
            out[k * GRID * GRID + grid_cell(p)] = 1.0;
        }
    };
    let gipf = pos.gipf_pieces();
    let own = pos.pieces(me);
    let theirs = pos.pieces(them);
    plane(out, 0, Bitboard(own.0 & !gipf.0));
    plane(out, 1, own & gipf);
    plane(out, 2, Bitboard(theirs.0 & !gipf.0));
    plane(out, 3, theirs & gipf);
    plane(out, 4, !Bitboard::EMPTY);
    plane(out, 5, pos.pending_rows().iter().fold(Bitboard::EMPTY, |b, row| b | row.run));
    let right = |c: Color| pos.gipf_right(c);
    let constants = [
        (6, pos.reserve(me) as f32 / 18.0),
        (7, pos.reserve(them) as f32 / 18.0),
        (8, pos.captured(me) as f32 / 18.0),
        (9, pos.captured(them) as f32 / 18.0),
        (10, matches!(pos.phase(), Phase::Remove { .. }) as u8 as f32),
        (11, (me != pos.to_move()) as u8 as f32),
        (12, (right(me) != GipfRight::SinglesOnly) as u8 as f32),
        (13, (right(me) == GipfRight::FirstMustBeGipf) as u8 as f32),
        (14, (right(them) != GipfRight::SinglesOnly) as u8 as f32),
        (15, (right(them) == GipfRight::FirstMustBeGipf) as u8 as f32),
        (16, (pos.variant() == Variant::Basic) as u8 as f32),
        (17, (pos.variant() == Variant::Standard) as u8 as f32),
        (18, (pos.variant() == Variant::Tournament) as u8 as f32),
    ];
    for (k, value) in constants {
        if value != 0.0 {
            for p in Point::all() {
                out[k * GRID * GRID + grid_cell(p)] = value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn random_positions(n: usize, seed: u64) -> Vec<Position> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut out = Vec::new();
        while out.len() < n {
            let mut pos = Position::new(Variant::ALL[out.len() % 3]);
            while !pos.is_over() {
                out.push(pos);
                let legal = pos.legal_actions();
                pos.play(legal[rng.random_range(0..legal.len())]).unwrap();
            }
        }
        out
    }

    #[test]
    fn indices_and_actions_are_a_bijection() {
        for i in 0..NUM_ACTIONS {
            assert_eq!(action_index(action_at(i)), i, "{}", action_at(i));
        }
    }

    #[test]
    fn legal_actions_have_distinct_indices_that_map_back() {
        for pos in random_positions(3000, 1) {
            let legal = pos.legal_actions();
            let mut seen = std::collections::HashSet::new();
            for &a in &legal {
                let i = action_index(a);
                assert!(i < NUM_ACTIONS);
                assert_eq!(action_at(i), a);
                assert!(seen.insert(i), "{a} shares index {i}");
            }
        }
    }

    #[test]
    fn symmetries_of_positions_match_symmetries_of_encodings() {
        let mut rng = SmallRng::seed_from_u64(2);
        let (mut a, mut b) = (vec![0.0; INPUT_SIZE], vec![0.0; INPUT_SIZE]);
        for pos in random_positions(500, 3) {
            let sym = Symmetry::random(&mut rng);
            encode(&pos, &mut a);
            encode(&pos.transform(sym), &mut b);
            for k in 0..NUM_PLANES {
                for p in Point::all() {
                    let here = a[k * GRID * GRID + grid_cell(p)];
                    let there = b[k * GRID * GRID + grid_cell(p.transform(sym))];
                    assert_eq!(here, there, "plane {k} at {p}");
                }
            }
            for &action in &pos.legal_actions() {
                assert_eq!(transform_index(sym, action_index(action)), action_index(action.transform(sym)));
            }
        }
    }

    #[test]
    fn planes_show_the_player_to_act_as_own() {
        let mut pos = Position::new(Variant::Standard);
        let mut out = vec![0.0; INPUT_SIZE];
        encode(&pos, &mut out);
        let e2 = grid_cell("e2".parse::<crate::rules::Cell>().unwrap().point().unwrap());
        assert_eq!(out[GRID * GRID + e2], 1.0, "white's GIPF piece on e2 is own for white");
        pos.play("a1-b2".parse().unwrap()).unwrap();
        encode(&pos, &mut out);
        assert_eq!(out[3 * GRID * GRID + e2], 1.0, "and the opponent's for black");
        let off_board = (0..GRID * GRID).filter(|c| out[4 * GRID * GRID + c] == 0.0).count();
        assert_eq!(off_board, GRID * GRID - NUM_POINTS);
    }
}
