//! Recorded match pieces (`gipf arena --record`): any text is pieces or
//! refused; what is read sums to a tally within a match's bound, whose
//! score and interval are numbers (never NaN).
#![no_main]

use gipf::arena::record::{read_pieces, total};
use gipf::arena::MAX_MATCH_GAMES;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let dir = std::env::temp_dir().join(format!("gipf-fuzz-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("target.jsonl");
    std::fs::write(&path, text).unwrap();
    if let Ok(pieces) = read_pieces(&path) {
        for piece in &pieces {
            assert!(piece.tally.games() <= MAX_MATCH_GAMES, "a piece read past the bound");
        }
        let sum = total(&pieces);
        let (lo, hi) = sum.score_interval();
        assert!(!sum.score().is_nan() && !lo.is_nan() && !hi.is_nan() && lo <= hi);
    }
});
