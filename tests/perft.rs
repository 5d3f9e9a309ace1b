//! Pinned counts of action sequences (perft), from each variant's start and
//! from positions full of rows, checked against the slow reference.

use crate::reference;

use gipf::rules::{perft, Position, Setup, Variant};

/// `tests/fixtures/perft.txt`: one case per line, `name depth count`, where
/// name is a variant (its start) or a position file in `tests/fixtures/`.
fn cases() -> Vec<(String, u32, u64)> {
    let text = include_str!("fixtures/perft.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[1].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect()
}

fn start(name: &str) -> (Position, reference::RefGame) {
    if let Ok(variant) = name.parse::<Variant>() {
        return (Position::new(variant), reference::RefGame::new(variant));
    }
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let setup = Setup::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let pos = setup.to_position().unwrap();
    let board: Vec<(String, char)> =
        setup.board.0.iter().map(|(c, p)| (c.clone(), p.chars().next().unwrap())).collect();
    let allowed = setup.gipf_allowed.map_or([false; 2], |a| [a.white, a.black]);
    let reserve = [setup.reserve.white as i32, setup.reserve.black as i32];
    let captured = [0, 1].map(|i| pos.captured(gipf::rules::Color::BOTH[i]) as i32);
    let game = reference::RefGame::from_setup(setup.variant, &board, reserve, captured, setup.to_move.index(), allowed);
    (pos, game)
}

#[test]
fn perft_counts_match_the_pinned_values_and_the_reference() {
    let cases = cases();
    assert!(cases.len() >= 6);
    for (name, depth, expected) in cases {
        let (pos, game) = start(&name);
        let count = perft(&pos, depth);
        assert_eq!(count, expected, "{name} depth {depth}: engine");
        assert_eq!(reference::perft(&game, depth), expected, "{name} depth {depth}: reference");
    }
}
