//! A set of interior points as the bits of a `u64`.

use super::geometry::{Point, Symmetry};

/// A set of interior points; bit `i` stands for `Point(i)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct Bitboard(pub u64);

impl Bitboard {
    pub const EMPTY: Bitboard = Bitboard(0);

    pub fn contains(self, p: Point) -> bool {
        self.0 & p.bit() != 0
    }

    pub fn with(self, p: Point) -> Bitboard {
        Bitboard(self.0 | p.bit())
    }

    pub fn without(self, p: Point) -> Bitboard {
        Bitboard(self.0 & !p.bit())
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    pub fn is_subset(self, other: Bitboard) -> bool {
        self.0 & !other.0 == 0
    }

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
        Bitboard(!self.0 & ((1 << super::geometry::NUM_POINTS) - 1))
    }
}

impl FromIterator<Point> for Bitboard {
    fn from_iter<I: IntoIterator<Item = Point>>(iter: I) -> Bitboard {
        iter.into_iter().fold(Bitboard::EMPTY, Bitboard::with)
    }
}
