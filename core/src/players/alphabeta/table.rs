//! The transposition table: entries on Zobrist keys, each a value with
//! its bound, the depth it was searched to and the best action; win
//! scores stored relative to the node.

use super::WIN_BOUND;
use crate::rules::Action;

/// Entries (a power of two).
const TABLE_SIZE: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Bound {
    Exact,
    /// The value is at least the stored one (a beta cut-off).
    Lower,
    /// The value is at most the stored one (no action raised alpha).
    Upper,
}

#[derive(Clone, Copy)]
pub(super) struct Entry {
    pub key: u64,
    pub depth: i32,
    pub value: i32,
    pub bound: Bound,
    pub best: Option<Action>,
}

/// A table of [`TABLE_SIZE`] entries, one a slot.
pub(super) struct Table {
    slots: Vec<Option<Entry>>,
}

impl Table {
    pub(super) fn new() -> Table {
        Table { slots: vec![None; TABLE_SIZE] }
    }

    /// Empties every slot.
    pub(super) fn clear(&mut self) {
        self.slots.fill(None);
    }

    /// The entry of the position with this key.
    pub(super) fn probe(&self, key: u64) -> Option<Entry> {
        self.slots[key as usize & (TABLE_SIZE - 1)].filter(|e| e.key == key)
    }

    /// Stores `entry`, keeping the deeper entry of another position in its
    /// slot; the same position's is always replaced.
    pub(super) fn store(&mut self, entry: Entry) {
        let slot = &mut self.slots[entry.key as usize & (TABLE_SIZE - 1)];
        if slot.is_some_and(|e| e.key != entry.key && e.depth > entry.depth) {
            return;
        }
        *slot = Some(entry);
    }
}

/// What a node's best value says, given the window it was searched in.
pub(super) fn bound(best: i32, alpha: i32, beta: i32) -> Bound {
    match best {
        v if v >= beta => Bound::Lower,
        v if v <= alpha => Bound::Upper,
        _ => Bound::Exact,
    }
}

/// Win scores are stored relative to the node, so that they hold wherever it is reached.
pub(super) fn to_table(value: i32, ply: u32) -> i32 {
    match value {
        v if v > WIN_BOUND => v + ply as i32,
        v if v < -WIN_BOUND => v - ply as i32,
        v => v,
    }
}

pub(super) fn from_table(value: i32, ply: u32) -> i32 {
    match value {
        v if v > WIN_BOUND => v - ply as i32,
        v if v < -WIN_BOUND => v + ply as i32,
        v => v,
    }
}
