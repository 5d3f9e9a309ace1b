//! Properties that hold in every position reached by random play: pieces are
//! conserved, the legal actions are exactly the accepted ones, the rules
//! commute with the 12 board symmetries, and games end.

use crate::common;

use gipf::rules::{Action, Bitboard, Color, Position, Push, Setup, Symmetry, Variant, NUM_PUSHES};
use proptest::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn variant() -> impl Strategy<Value = Variant> {
    prop_oneof![Just(Variant::Basic), Just(Variant::Standard), Just(Variant::Tournament)]
}

/// The positions of one random game (from the start, or from a crowded random
/// setup when `crowded`), at most `limit` actions long.
fn random_game(variant: Variant, seed: u64, crowded: bool, limit: usize) -> Vec<Position> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut pos = Position::new(variant);
    if crowded {
        let gipf_row = rng.random_bool(0.3);
        let setup = common::random_setup(&mut rng, variant, 24, 0.4, 0.5, gipf_row);
        if let Ok(p) = setup.to_position() {
            pos = p;
        }
    }
    let mut positions = vec![pos];
    while !pos.is_over() && positions.len() < limit {
        let legal = pos.legal_actions();
        pos.play(legal[rng.random_range(0..legal.len())]).unwrap();
        positions.push(pos);
    }
    positions
}

fn sorted(mut actions: Vec<Action>) -> Vec<Action> {
    actions.sort();
    actions
}

/// Every push, and removals of the pending rows' runs with points added or
/// dropped: candidates that are sometimes legal and sometimes not.
fn candidate_actions(pos: &Position, rng: &mut SmallRng) -> Vec<Action> {
    let mut out: Vec<Action> =
        (0..NUM_PUSHES).flat_map(|i| [false, true].map(|g| Action::Push(Push::new(i, g).unwrap()))).collect();
    out.push(Action::Leave);
    for row in pos.pending_rows() {
        out.push(Action::Remove(row.run));
        for p in row.run.iter() {
            out.push(Action::Remove(row.run.without(p)));
            out.push(Action::Remove(Bitboard::EMPTY.with(p)));
        }
        out.push(Action::Remove(row.run.with(gipf::rules::Point::new(rng.random_range(0..37)))));
    }
    out.push(Action::Remove(Bitboard(rng.random::<u64>() & ((1 << 37) - 1))));
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn pieces_are_conserved(variant in variant(), seed: u64, crowded: bool) {
        for pos in random_game(variant, seed, crowded, 300) {
            for color in Color::BOTH {
                let sum = pos.on_board(color) + pos.reserve(color) + pos.captured(color);
                prop_assert_eq!(sum, variant.total_pieces());
            }
            prop_assert!(pos.occupied().len() <= 36);
        }
    }

    #[test]
    fn listed_actions_are_accepted_and_no_other(variant in variant(), seed: u64, crowded: bool) {
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed);
        for pos in random_game(variant, seed, crowded, 300) {
            let legal = pos.legal_actions();
            for &action in &legal {
                prop_assert!(pos.check(action).is_ok(), "{} listed but refused", action);
                let mut next = pos;
                prop_assert!(next.play(action).is_ok());
            }
            for action in candidate_actions(&pos, &mut rng) {
                let listed = legal.contains(&action);
                let mut next = pos;
                let played = next.play(action);
                prop_assert_eq!(listed, played.is_ok(), "{}: listed {} but play says {:?}", action, listed, played);
                if played.is_err() {
                    prop_assert_eq!(next, pos, "a refused action changed the position");
                }
            }
        }
    }

    #[test]
    fn rules_commute_with_symmetries(variant in variant(), seed: u64, crowded: bool) {
        let mut rng = SmallRng::seed_from_u64(seed);
        for pos in random_game(variant, seed, crowded, 200) {
            let sym = Symmetry::random(&mut rng);
            let image = pos.transform(sym);
            let mapped: Vec<Action> = pos.legal_actions().iter().map(|a| a.transform(sym)).collect();
            prop_assert_eq!(sorted(mapped), sorted(image.legal_actions()));
            if let Some(&action) = pos.legal_actions().first() {
                let (mut a, mut b) = (pos, image);
                a.play(action).unwrap();
                b.play(action.transform(sym)).unwrap();
                prop_assert_eq!(a.transform(sym), b);
            }
            prop_assert_eq!(image.transform(sym.inverse()), pos);
        }
    }

    #[test]
    fn positions_round_trip_through_their_json_setup(variant in variant(), seed: u64, crowded: bool) {
        for pos in random_game(variant, seed, crowded, 300) {
            if pos.phase() != gipf::rules::Phase::Push {
                continue;
            }
            let json = serde_json::to_string(&Setup::from_position(&pos)).unwrap();
            let back = Setup::from_json(&json).unwrap().to_position().unwrap();
            prop_assert_eq!(back, pos, "{}", json);
        }
    }

    #[test]
    fn random_games_end(variant in variant(), seed: u64) {
        let game = random_game(variant, seed, false, 5000);
        prop_assert!(game.last().unwrap().is_over(), "no end after {} actions", game.len());
    }
}
