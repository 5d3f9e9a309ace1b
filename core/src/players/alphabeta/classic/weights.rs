//! The classic evaluation's weights, one per feature, in hundredths of a
//! logit. Written by `scripts/tune-classic.sh` (658 games, 44417 positions).

use super::FEATURES;

pub const WEIGHTS: [i32; FEATURES] = [
    12,  // to push
    103, // reserve diff
    130, // centre pieces diff
    107, // middle ring pieces diff
    102, // outer ring pieces diff
    89,  // GIPF pieces diff
    19,  // last GIPF piece diff
    -73, // reserve at most 1 diff
    -36, // reserve at most 3 diff
    -1,  // reserve at most 6 diff
    7,   // near rows, pusher
    -7,  // near rows, opponent
    -5,  // threes, pusher
    7,   // threes, opponent
    10,  // pairs diff
    -3,  // GIPF pieces on the outer ring diff
];
