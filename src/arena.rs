//! Head-to-head matches between two networks, each searching its moves.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::rules::{Color, Position, Variant};
use crate::search::{Evaluator, SearchConfig, Tree};

/// Wins of each side and games cut by the length cap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatchResult {
    pub a_wins: u32,
    pub b_wins: u32,
    pub draws: u32,
}

/// Plays `games` games between `a` and `b`, colours alternating, each move
/// chosen as the most visited after `simulations.0` (for `a`) or
/// `simulations.1` (for `b`) simulations, without noise. The
/// first action of each game is drawn at random so that games differ; a game
/// reaching `max_actions` counts as a draw.
#[allow(clippy::too_many_arguments)]
pub fn play_match(
    a: &mut dyn Evaluator,
    b: &mut dyn Evaluator,
    variant: Variant,
    games: u32,
    simulations: (u32, u32),
    search: &SearchConfig,
    max_actions: u32,
    seed: u64,
) -> MatchResult {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut result = MatchResult::default();
    for game in 0..games {
        let a_color = if game % 2 == 0 { Color::White } else { Color::Black };
        let mut pos = Position::new(variant);
        let legal = pos.legal_actions();
        pos.play(legal[rng.random_range(0..legal.len())]).expect("a listed action is legal");
        let mut actions = 1;
        while !pos.is_over() && actions < max_actions {
            let player = pos.to_act().expect("the game is not over");
            let (evaluator, sims): (&mut dyn Evaluator, u32) =
                if player == a_color { (&mut *a, simulations.0) } else { (&mut *b, simulations.1) };
            let mut tree = Tree::new(pos);
            tree.run(evaluator, sims, search);
            pos.play(tree.best_action().expect("a searched root has actions")).expect("searched actions are legal");
            actions += 1;
        }
        match pos.outcome() {
            Some(o) if o.winner == a_color => result.a_wins += 1,
            Some(_) => result.b_wins += 1,
            None => result.draws += 1,
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::UniformEvaluator;

    #[test]
    fn every_game_is_counted_once() {
        let config = SearchConfig::default();
        let r = play_match(&mut UniformEvaluator, &mut UniformEvaluator, Variant::Basic, 6, (8, 8), &config, 400, 1);
        assert_eq!(r.a_wins + r.b_wins + r.draws, 6);
    }

    /// A player searching 200 simulations beats one searching 2.
    #[test]
    fn more_search_wins_more() {
        let config = SearchConfig { batch_size: 1, ..SearchConfig::default() };
        let r =
            play_match(&mut UniformEvaluator, &mut UniformEvaluator, Variant::Standard, 10, (200, 2), &config, 600, 2);
        assert!(r.a_wins >= 7, "{r:?}");
    }
}
