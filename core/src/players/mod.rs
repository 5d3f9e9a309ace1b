//! Players that need no network: the trait every player implements, and the
//! fixed baselines (uniform random, a greedy one-ply player, plain UCT with
//! random playouts, classical alpha-beta search: `alphabeta` and `classic`).

pub mod alphabeta;
mod baseline;
mod patterns;
mod uct;

use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;

use crate::rules::{Action, Color, Phase, Position, Variant};
use crate::search::Analysis;
pub use alphabeta::{AlphaBeta, Clock, Limit, Style};
pub use baseline::{Baseline, BaselineError, MAX_DEPTH, MAX_MILLIS, MAX_UCT_PLAYOUTS};
pub use uct::Uct;

/// Plays one game of uniformly random legal actions of `variant`, cut at
/// `max_actions`; returns the actions played (`legal` is scratch space).
pub fn random_game(variant: Variant, max_actions: u32, rng: &mut impl rand::Rng, legal: &mut Vec<Action>) -> u64 {
    let mut pos = Position::new(variant);
    let mut played = 0;
    while played < max_actions as u64 {
        pos.legal_actions_into(legal);
        if legal.is_empty() {
            break;
        }
        pos.play_unchecked(legal[rng.random_range(0..legal.len())]);
        played += 1;
    }
    played
}

/// Why a player chose no action.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlayerError {
    /// The position is over: there is nothing to choose.
    #[error("the game is over: there is no action to choose")]
    GameOver,
    /// A network player's network gave outputs that are not finite.
    #[error(transparent)]
    NotFinite(#[from] crate::search::NotFinite),
}

/// Something that chooses actions.
pub trait Player: Send {
    /// The action to play in `pos` ([`PlayerError::GameOver`] where it is
    /// over).
    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError>;

    /// Starts a new game, drawing any randomness from `seed`, so that a game
    /// plays the same whichever thread plays it.
    fn new_game(&mut self, _seed: u64) {}

    /// A fresh search of `pos` (not over) with `simulations` simulations,
    /// as data: the root's value and its `candidates` most visited actions
    /// with their lines of play. `None` for a player that searches no tree.
    fn analyse(
        &mut self,
        _pos: &Position,
        _simulations: u32,
        _candidates: usize,
    ) -> Result<Option<Analysis>, PlayerError> {
        Ok(None)
    }

    /// The variant a model was trained on (`None`: a player for any).
    fn trained_on(&self) -> Option<Variant> {
        None
    }
}

/// Uniformly random among the legal actions.
pub struct RandomPlayer {
    rng: SmallRng,
}

impl RandomPlayer {
    /// A player whose draws come from `seed`.
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer { rng: SmallRng::seed_from_u64(seed) }
    }
}

impl Player for RandomPlayer {
    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        pos.legal_actions().choose(&mut self.rng).copied().ok_or(PlayerError::GameOver)
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }
}

/// One ply deep: the action after which its material (reserve plus pieces
/// on the board) leads the opponent's by the most, removal decisions that
/// follow at once included; ties broken at random.
pub struct GreedyPlayer {
    rng: SmallRng,
}

impl GreedyPlayer {
    /// A player whose tie-breaks come from `seed`.
    pub fn new(seed: u64) -> GreedyPlayer {
        GreedyPlayer { rng: SmallRng::seed_from_u64(seed) }
    }
}

/// Pieces still in play: in reserve or on the board (a GIPF piece counts two).
fn material(pos: &Position, color: Color) -> i32 {
    pos.reserve(color) as i32 + pos.on_board(color) as i32
}

/// `me`'s score of `pos`: a win or a loss, else twice the material lead
/// plus the reserve lead (pieces back in reserve keep a player alive).
/// Removal decisions still pending are resolved by their chooser's best.
fn greedy_score(pos: &Position, me: Color) -> i32 {
    if let Some(outcome) = pos.outcome() {
        return if outcome.winner == me { 10_000 } else { -10_000 };
    }
    let chooser = pos.to_act().expect("a game not over has a player to act");
    if matches!(pos.phase(), Phase::Remove { .. }) {
        let scores = pos.legal_actions().into_iter().map(|a| {
            let mut next = *pos;
            next.play_unchecked(a);
            greedy_score(&next, me)
        });
        return if chooser == me { scores.max() } else { scores.min() }.expect("a removal decision has choices");
    }
    let them = me.opponent();
    2 * (material(pos, me) - material(pos, them)) + pos.reserve(me) as i32 - pos.reserve(them) as i32
}

impl Player for GreedyPlayer {
    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        let me = pos.to_act().ok_or(PlayerError::GameOver)?;
        let scored: Vec<(Action, i32)> = pos
            .legal_actions()
            .into_iter()
            .map(|a| {
                let mut next = *pos;
                next.play_unchecked(a);
                (a, greedy_score(&next, me))
            })
            .collect();
        let best = scored.iter().map(|&(_, s)| s).max().expect("a game not over has legal actions");
        let ties: Vec<Action> = scored.into_iter().filter(|&(_, s)| s == best).map(|(a, _)| a).collect();
        Ok(*ties.choose(&mut self.rng).expect("at least one action has the best score"))
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = SmallRng::seed_from_u64(seed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Setup, Variant};

    #[test]
    fn baselines_play_legal_actions_to_the_end() {
        fn never() -> std::time::Duration {
            std::time::Duration::ZERO
        }
        let mut players: Vec<Box<dyn Player>> = vec![
            Box::new(RandomPlayer::new(1)),
            Box::new(GreedyPlayer::new(2)),
            Box::new(Uct::new(20, SmallRng::seed_from_u64(3))),
            Box::new(AlphaBeta::new(Limit::Depth(1), never)),
            Box::new(AlphaBeta::classic(Limit::Depth(2), never)),
        ];
        for variant in [Variant::Basic, Variant::Tournament] {
            let mut pos = Position::new(variant);
            let mut turn = 0;
            while !pos.is_over() && turn < 2000 {
                let n = players.len();
                let action = players[turn % n].choose(&pos).unwrap();
                pos.play(action).unwrap();
                turn += 1;
            }
            assert!(pos.is_over(), "{variant}: the game ends");
        }
    }

    /// A finished game gives each baseline nothing to choose: an error, not a panic.
    #[test]
    fn a_finished_game_has_no_action_to_choose() {
        fn never() -> std::time::Duration {
            std::time::Duration::ZERO
        }
        let mut pos = crate::rules::fixtures::win_in_one();
        let winning = pos.legal_actions().into_iter().find(|&a| {
            let mut after = pos;
            after.play_unchecked(a);
            after.is_over()
        });
        pos.play(winning.unwrap()).unwrap();
        let players: Vec<Box<dyn Player>> = vec![
            Box::new(RandomPlayer::new(1)),
            Box::new(GreedyPlayer::new(2)),
            Box::new(Uct::new(20, SmallRng::seed_from_u64(3))),
            Box::new(AlphaBeta::classic(Limit::Depth(2), never)),
        ];
        for mut player in players {
            assert_eq!(player.choose(&pos), Err(PlayerError::GameOver));
        }
    }

    /// White can capture two black pieces by completing a row; greedy does.
    #[test]
    fn greedy_takes_the_capture() {
        let pos = Setup::from_json(
            r#"{"variant": "basic", "board": {"c2": "w", "c3": "w", "c4": "w", "c5": "b"},
                "reserve": {"white": 12, "black": 14}, "to_move": "white"}"#,
        )
        .unwrap()
        .to_position()
        .unwrap();
        let mut greedy = GreedyPlayer::new(1);
        let action = greedy.choose(&pos).unwrap();
        let mut after = pos;
        after.play(action).unwrap();
        while after.to_act() == Some(Color::White) && matches!(after.phase(), Phase::Remove { .. }) {
            after.play(greedy.choose(&after).unwrap()).unwrap();
        }
        assert!(material(&after, Color::Black) < material(&pos, Color::Black), "{action} captures nothing");
    }
}
