//! The `classic` player's evaluation: features of what decides GIPF, for
//! the player to push, each weighted by a logistic fit of the features to
//! the results of the project's own games (`gipf tune`,
//! `scripts/tune-classic.sh`), so that a score is a hundred times the
//! log-odds of a win.

mod weights;

use std::sync::LazyLock;

use crate::players::patterns::Lines;
use crate::rules::{Bitboard, Cell, Color, GipfRight, Point, Position, NUM_POINTS};
/// The weight of each feature of [`FEATURE_NAMES`], in hundredths of a logit
/// (kept in `weights.rs`, which `gipf tune --write` rewrites).
pub const WEIGHTS: [i32; FEATURES] = weights::WEIGHTS;

/// How many features a position has.
pub const FEATURES: usize = 16;

/// The features' names, in order ("diff": the pusher's less the opponent's).
pub const FEATURE_NAMES: [&str; FEATURES] = [
    "to push",
    "reserve diff",
    "centre pieces diff",
    "middle ring pieces diff",
    "outer ring pieces diff",
    "GIPF pieces diff",
    "last GIPF piece diff",
    "reserve at most 1 diff",
    "reserve at most 3 diff",
    "reserve at most 6 diff",
    "near rows, pusher",
    "near rows, opponent",
    "threes, pusher",
    "threes, opponent",
    "pairs diff",
    "GIPF pieces on the outer ring diff",
];

/// The board's points by distance from the centre (e5): the centre and its
/// six neighbours, the ring at distance 2, the outer ring at 3.
static RINGS: LazyLock<[Bitboard; 3]> = LazyLock::new(|| {
    let centre = Cell::from_column_number(4, 5).expect("e5 is on the board").axial();
    let mut rings = [Bitboard::EMPTY; 3];
    for p in (0..NUM_POINTS).map(Point::new) {
        let (q, r) = p.cell().axial();
        let (dq, dr) = ((q - centre.0) as i32, (r - centre.1) as i32);
        let distance = (dq.abs() + dr.abs() + (dq + dr).abs()) / 2;
        let ring = (distance as usize).saturating_sub(1);
        rings[ring] = rings[ring].with(p);
    }
    rings
});

/// One side's share of the features that are differences.
struct Side {
    reserve: i32,
    rings: [i32; 3],
    gipfs: i32,
    last_gipf: i32,
    low_reserve: [i32; 3],
    near_rows: i32,
    threes: i32,
    pairs: i32,
    outer_gipfs: i32,
}

fn side(pos: &Position, color: Color) -> Side {
    let own = pos.pieces(color);
    let reserve = pos.reserve(color) as i32;
    let counts_gipfs = pos.variant().has_gipf_pieces() && pos.gipf_right(color) != GipfRight::FirstMustBeGipf;
    let gipf_pieces = own & pos.gipf_pieces();
    let gipfs = gipf_pieces.len() as i32;
    let lines = Lines::of(own);
    Side {
        reserve,
        rings: RINGS.map(|ring| (own & ring).len() as i32),
        gipfs: if counts_gipfs { gipfs } else { 0 },
        last_gipf: (counts_gipfs && gipfs == 1) as i32,
        low_reserve: [1, 3, 6].map(|k| (reserve <= k) as i32),
        near_rows: lines.near_rows(),
        threes: lines.threes(),
        pairs: lines.pairs(),
        outer_gipfs: (gipf_pieces & RINGS[2]).len() as i32,
    }
}

/// The features of `pos` (waiting for a push) for the player to push.
pub fn features(pos: &Position) -> [i32; FEATURES] {
    let me = pos.to_move();
    let (mine, theirs) = (side(pos, me), side(pos, me.opponent()));
    [
        1,
        mine.reserve - theirs.reserve,
        mine.rings[0] - theirs.rings[0],
        mine.rings[1] - theirs.rings[1],
        mine.rings[2] - theirs.rings[2],
        mine.gipfs - theirs.gipfs,
        mine.last_gipf - theirs.last_gipf,
        mine.low_reserve[0] - theirs.low_reserve[0],
        mine.low_reserve[1] - theirs.low_reserve[1],
        mine.low_reserve[2] - theirs.low_reserve[2],
        mine.near_rows,
        theirs.near_rows,
        mine.threes,
        theirs.threes,
        mine.pairs - theirs.pairs,
        mine.outer_gipfs - theirs.outer_gipfs,
    ]
}

/// The static score of `pos` (waiting for `me`'s push) for `me`.
pub fn evaluate(pos: &Position, me: Color) -> i32 {
    debug_assert_eq!(pos.to_move(), me, "the classic evaluation scores positions for the player to push");
    features(pos).iter().zip(WEIGHTS).map(|(f, w)| f * w).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures::setup;
    use crate::rules::Variant;

    #[test]
    fn rings_cover_the_board() {
        let sizes = RINGS.map(|r| r.len());
        assert_eq!(sizes, [7, 12, 18]);
        assert_eq!(RINGS.iter().fold(Bitboard::EMPTY, |a, &b| a | b).len() as usize, NUM_POINTS);
    }

    #[test]
    fn features_are_for_the_player_to_push() {
        let start = Position::new(Variant::Standard);
        let f = features(&start);
        assert_eq!(f[0], 1);
        assert!(f[1..].iter().all(|&x| x == 0), "the start is symmetric: {f:?}");
        let pos = setup(
            r#"{"variant": "basic", "board": {"c2": "w", "c3": "w", "c4": "w", "e5": "b"},
                "reserve": {"white": 10, "black": 14}, "to_move": "black"}"#,
        );
        let f = features(&pos);
        assert_eq!(f[1], 4, "black has 4 more in reserve");
        assert_eq!(f[2], 1, "black holds the centre");
        assert_eq!((f[10], f[11], f[12], f[13]), (0, 1, 0, 1), "white's three threatens");
    }
}
