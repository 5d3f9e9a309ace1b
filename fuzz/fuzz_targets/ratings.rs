//! A ratings run's matches (`arena/matches.jsonl`): any text is matches or
//! refused; what is read fits into ratings that are numbers (never NaN).
#![no_main]

use gipf::arena::ratings::read_matches;
use gipf::arena::stats::{fit_ratings, Pairing};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let dir = std::env::temp_dir().join(format!("gipf-fuzz-ratings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("matches.jsonl");
    std::fs::write(&path, text).unwrap();
    let Ok(matches) = read_matches(&path) else { return };
    let mut names: Vec<String> = Vec::new();
    let mut index = |name: &String| match names.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            names.push(name.clone());
            names.len() - 1
        }
    };
    let pairings: Vec<Pairing> = matches
        .iter()
        .take(64)
        .filter(|m| m.a != m.b)
        .map(|m| Pairing { a: index(&m.a), b: index(&m.b), tally: m.tally })
        .collect();
    let players = names.len();
    for (elo, margin) in fit_ratings(players, &pairings) {
        assert!(!elo.is_nan() && !margin.is_nan(), "a rating of NaN");
    }
});
