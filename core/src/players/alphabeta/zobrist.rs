//! Zobrist keys: a random key for every part of a position, XORed together,
//! so that a transposition table can find a position reached another way.

use std::sync::LazyLock;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::rules::{Color, GipfRight, Phase, Position, NUM_LINES, NUM_POINTS};

/// Random keys for every part of a position.
struct Zobrist {
    /// Per point: white single, black single, white GIPF, black GIPF.
    pieces: [[u64; 4]; NUM_POINTS],
    reserve: [[u64; 40]; 2],
    captured: [[u64; 40]; 2],
    black_to_move: u64,
    rights: [[u64; 3]; 2],
    /// Removal pending, by the deciding player.
    removing: [u64; 2],
    done_lines: [u64; NUM_LINES],
}

static ZOBRIST: LazyLock<Zobrist> = LazyLock::new(|| {
    let mut rng = SmallRng::seed_from_u64(0x6a09_e667_f3bc_c908);
    let mut key = || rng.random::<u64>();
    Zobrist {
        pieces: std::array::from_fn(|_| std::array::from_fn(|_| key())),
        reserve: std::array::from_fn(|_| std::array::from_fn(|_| key())),
        captured: std::array::from_fn(|_| std::array::from_fn(|_| key())),
        black_to_move: key(),
        rights: std::array::from_fn(|_| std::array::from_fn(|_| key())),
        removing: std::array::from_fn(|_| key()),
        done_lines: std::array::from_fn(|_| key()),
    }
});

/// The Zobrist key of a position (the variant is left out: one search never mixes them).
pub fn zobrist(pos: &Position) -> u64 {
    let z = &*ZOBRIST;
    let mut key = 0;
    for color in Color::BOTH {
        let c = color.index();
        for p in pos.pieces(color).iter() {
            let kind = c + 2 * pos.gipf_pieces().contains(p) as usize;
            key ^= z.pieces[p.index()][kind];
        }
        key ^= z.reserve[c][pos.reserve(color).min(39) as usize];
        key ^= z.captured[c][pos.captured(color).min(39) as usize];
        key ^= z.rights[c][match pos.gipf_right(color) {
            GipfRight::FirstMustBeGipf => 0,
            GipfRight::GipfOrSingle => 1,
            GipfRight::SinglesOnly => 2,
        }];
    }
    if pos.to_move() == Color::Black {
        key ^= z.black_to_move;
    }
    if let Phase::Remove { player, done_lines } = pos.phase() {
        key ^= z.removing[player.index()];
        for (line, k) in z.done_lines.iter().enumerate() {
            if done_lines & (1 << line) != 0 {
                key ^= k;
            }
        }
    }
    key
}
