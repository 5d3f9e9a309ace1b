//! The engine against the slow reference implementation: thousands of random
//! games, compared state by state and legal action by legal action.

use crate::common;
use crate::reference;

use gipf::rules::{Color, Phase, Position, Setup, StateJson, Variant};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use reference::RefGame;

/// What the compared games went through, so that the test fails if they
/// never reach the hard parts of the rules.
#[derive(Default, Debug)]
struct Coverage {
    actions: u64,
    removal_decisions: u64,
    several_rows_pending: u64,
    leave_offered: u64,
    other_player_decides: u64,
    gipf_losses: u64,
    reserve_losses: u64,
}

fn ref_from(setup: &Setup, pos: &Position) -> RefGame {
    let board: Vec<(String, char)> =
        setup.board.0.iter().map(|(cell, letter)| (cell.clone(), letter.chars().next().unwrap())).collect();
    let allowed = setup.gipf_allowed.map_or([false; 2], |a| [a.white, a.black]);
    RefGame::from_setup(
        setup.variant,
        &board,
        [pos.reserve(Color::White) as i32, pos.reserve(Color::Black) as i32],
        [pos.captured(Color::White) as i32, pos.captured(Color::Black) as i32],
        setup.to_move.index(),
        allowed,
    )
}

/// Plays random actions through both, comparing after each one.
fn play_both(mut pos: Position, mut reference: RefGame, rng: &mut SmallRng, coverage: &mut Coverage) {
    for _ in 0..400 {
        let engine_state = StateJson::of(&pos);
        assert_eq!(engine_state, reference.state(), "engine and reference disagree");
        let legal = pos.legal_actions();
        assert_eq!(legal.len(), engine_state.legal.len(), "duplicate legal actions: {legal:?}");
        match pos.phase() {
            Phase::Over(outcome) => {
                match outcome.reason {
                    gipf::rules::WinReason::NoGipfPiece => coverage.gipf_losses += 1,
                    gipf::rules::WinReason::NoReserve => coverage.reserve_losses += 1,
                }
                return;
            }
            Phase::Remove { player, .. } => {
                coverage.removal_decisions += 1;
                coverage.several_rows_pending += (pos.pending_rows().len() > 1) as u64;
                coverage.leave_offered += engine_state.legal.iter().any(|a| a == "x-") as u64;
                coverage.other_player_decides += (player != pos.to_move()) as u64;
            }
            Phase::Push => {}
        }
        let action = legal[rng.random_range(0..legal.len())];
        pos.play(action).unwrap();
        reference.play(&action.to_string());
        coverage.actions += 1;
    }
}

#[test]
fn random_games_from_the_start_agree() {
    let mut rng = SmallRng::seed_from_u64(7);
    let mut coverage = Coverage::default();
    for variant in Variant::ALL {
        for _ in 0..1000 {
            play_both(Position::new(variant), RefGame::new(variant), &mut rng, &mut coverage);
        }
    }
    eprintln!("{coverage:?}");
    assert!(coverage.actions > 50_000, "{coverage:?}");
    assert!(coverage.removal_decisions > 0 && coverage.reserve_losses > 0, "{coverage:?}");
}

#[test]
fn random_games_from_crowded_positions_agree() {
    let mut rng = SmallRng::seed_from_u64(11);
    let mut coverage = Coverage::default();
    let mut games = 0;
    while games < 4000 {
        let variant = Variant::ALL[games % 3];
        let crowd = rng.random_range(10..=30);
        let gipf_share = rng.random_range(0.1..1.0);
        let white_share = [0.5, 0.85, 0.15][rng.random_range(0..3)];
        let gipf_row = rng.random_bool(0.3);
        let setup = common::random_setup(&mut rng, variant, crowd, gipf_share, white_share, gipf_row);
        let Ok(pos) = setup.to_position() else { continue };
        let reference = ref_from(&setup, &pos);
        play_both(pos, reference, &mut rng, &mut coverage);
        games += 1;
    }
    eprintln!("{coverage:?}");
    assert!(coverage.removal_decisions > 1000, "{coverage:?}");
    assert!(coverage.several_rows_pending > 50, "{coverage:?}");
    assert!(coverage.leave_offered > 200, "{coverage:?}");
    assert!(coverage.other_player_decides > 300, "{coverage:?}");
    assert!(coverage.gipf_losses > 100 && coverage.reserve_losses > 100, "{coverage:?}");
}
