//! The classic evaluation's weights, one per feature, in hundredths of a
//! logit. Written by `scripts/tune-classic.sh` (208 games, 13757 positions).

use super::FEATURES;

pub const WEIGHTS: [i32; FEATURES] = [
    11,  // to push
    98,  // reserve diff
    137, // centre pieces diff
    113, // middle ring pieces diff
    99,  // outer ring pieces diff
    76,  // GIPF pieces diff
    -27, // last GIPF piece diff
    -65, // reserve at most 1 diff
    -25, // reserve at most 3 diff
    -8,  // reserve at most 6 diff
    2,   // near rows, pusher
    -2,  // near rows, opponent
    -4,  // threes, pusher
    7,   // threes, opponent
    7,   // pairs diff
    6,   // GIPF pieces on the outer ring diff
];
