//! Training samples from a stored game: the positions to learn from, with
//! their policy, value and auxiliary targets, and a sample written as a row
//! of a batch under a board symmetry. The trainer's window and the Python
//! package build them here, so both learn the same thing from a game.

use crate::encoding::{action_index, encode, transform_index};
use crate::games::{GameError, GameFile};
use crate::rules::{Color, Position, Symmetry};

/// One position to learn from.
#[derive(Clone, Debug)]
pub struct TrainingSample {
    /// The position to learn from, as the game reached it.
    pub pos: Position,
    /// The search's policy target, by action index; empty for a position
    /// that was not fully searched (a value target only).
    pub policy: Vec<(u16, f32)>,
    /// The game's result for the player to act (mixed with the search's
    /// root value by `train.root_value_share`).
    pub value: f32,
    /// The auxiliary targets for the player to act, see [`AUX_TARGETS`].
    pub aux: [f32; AUX_TARGETS],
    /// Actions from this position to the game's end (or its cut), for the
    /// value error by game phase.
    pub plies_to_end: u16,
}

/// The auxiliary targets, each in [-1, 1] for the player to act: what the
/// game's end holds beside its result, and what the next few actions win.
/// They give the value head more to learn from per game (as KataGo's score
/// and ownership targets do); the search never uses them.
/// 0. material won by the end: (pieces of the opponent captured - own
///    pieces captured) / the variant's pieces;
/// 1. reserve lead at the end: (own reserve - the opponent's) / the
///    variant's pieces;
/// 2. material won over the next [`AUX_HORIZON`] actions (or to the end),
///    divided by 4 and clipped: a row's worth of captures.
pub const AUX_TARGETS: usize = 3;
/// Actions ahead over which auxiliary target 2 counts the material won.
pub const AUX_HORIZON: usize = 8;

/// How a game becomes samples (from `[train]`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Targets {
    /// Every position a value sample, not only the fully searched ones.
    pub every_position: bool,
    /// The search's root value's share in a searched position's value target.
    pub root_value_share: f32,
    /// λ of that share's return over the later searched positions (0: the
    /// position's own root value), see `root_value_returns`.
    pub root_value_lambda: f32,
}

/// Material won so far by `player`: the opponent's pieces captured less its own.
fn material_won(pos: &Position, player: Color) -> f32 {
    pos.captured(player.opponent()) as f32 - pos.captured(player) as f32
}

/// The training samples of one game: its fully searched decisions, with
/// their policy targets, and with `targets.every_position` all its other
/// positions too, as value targets only.
pub fn game_samples(game: &GameFile, targets: Targets) -> Result<Vec<TrainingSample>, GameError> {
    let mut positions = Vec::with_capacity(game.actions.len() + 1);
    let mut pos = Position::new(game.variant);
    for (ply, &action) in game.actions.iter().enumerate() {
        if pos.to_act().is_none() {
            return Err(GameError::new(format!("an action at ply {ply} after the end of the game")));
        }
        positions.push(pos);
        pos.play(action).map_err(GameError::new)?;
    }
    let last = pos;
    let total = game.variant.total_pieces() as f32;
    let mut samples = Vec::with_capacity(if targets.every_position { game.actions.len() } else { game.samples.len() });
    let players: Vec<Color> = positions.iter().map(|p| p.to_act().expect("checked above")).collect();
    let returns = root_value_returns(game, &players, targets.root_value_lambda);
    let mut next = game.samples.iter().zip(returns).peekable();
    for (ply, (pos, &player)) in positions.iter().zip(&players).enumerate() {
        let result = game.result.value_for(player);
        let ahead = positions.get(ply + AUX_HORIZON).unwrap_or(&last);
        let plies_to_end = (positions.len() - ply).min(u16::MAX as usize) as u16;
        let aux = [
            material_won(&last, player) / total,
            (last.reserve(player) as f32 - last.reserve(player.opponent()) as f32) / total,
            ((material_won(ahead, player) - material_won(pos, player)) / 4.0).clamp(-1.0, 1.0),
        ];
        if let Some((sample, searched)) = next.next_if(|(s, _)| s.ply == ply) {
            let mut policy = Vec::with_capacity(sample.policy.len());
            for (text, &p) in &sample.policy {
                let action = text.parse().map_err(|e| GameError::new(e).context(format!("sample at ply {ply}")))?;
                if !pos.is_legal(action) {
                    return Err(GameError::new(format!("sample at ply {ply}: {text} is not legal there")));
                }
                policy.push((action_index(action) as u16, p));
            }
            let share = targets.root_value_share;
            let value = (1.0 - share) * result + share * searched;
            samples.push(TrainingSample { pos: *pos, policy, value, aux, plies_to_end });
        } else if targets.every_position {
            samples.push(TrainingSample { pos: *pos, policy: Vec::new(), value: result, aux, plies_to_end });
        }
    }
    Ok(samples)
}

/// The searched part of each searched position's value target, for the
/// player to act there, in the order of `game.samples` (`players`: the
/// player to act at each ply). With `lambda` 0 it is the position's own
/// root value; otherwise the λ-return over the searched positions from it
/// to the end, as KataGo's short-term value targets: (1 - λ) times its root
/// value plus λ times the next searched position's return, and the game's
/// result after the last. Larger λ looks further ahead; 1 is the result.
fn root_value_returns(game: &GameFile, players: &[Color], lambda: f32) -> Vec<f32> {
    // The return for White, from the end backwards.
    let mut white = game.result.value_for(Color::White);
    let mut returns: Vec<f32> = game
        .samples
        .iter()
        .rev()
        .map(|sample| {
            // A sample past the game's last ply is no training sample (passed over).
            let Some(&player) = players.get(sample.ply) else { return 0.0 };
            let sign = if player == Color::White { 1.0 } else { -1.0 };
            white = (1.0 - lambda) * sign * sample.root_value.clamp(-1.0, 1.0) + lambda * white;
            sign * white
        })
        .collect();
    returns.reverse();
    returns
}

/// One row of a training batch: `sample` under board symmetry `sym`, its
/// input planes written into `input` ([`crate::encoding::INPUT_SIZE`]
/// floats), its policy target into `policy` and the legal actions' mask
/// into `legal` ([`crate::encoding::NUM_ACTIONS`] each, zero before).
pub fn write_row(sample: &TrainingSample, sym: Symmetry, input: &mut [f32], policy: &mut [f32], legal: &mut [f32]) {
    let pos = sample.pos.transform(sym);
    encode(&pos, input);
    for &(index, p) in &sample.policy {
        policy[transform_index(sym, index as usize)] = p;
    }
    for action in pos.legal_actions() {
        legal[action_index(action)] = 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn searched_only(root_value_share: f32, root_value_lambda: f32) -> Targets {
        Targets { every_position: false, root_value_share, root_value_lambda }
    }

    /// The recursion against the λ-return written as its sum, for the
    /// player to act at i: (1 - λ) Σ_k λ^k v(i + k) + λ^(n - i) z.
    #[test]
    fn root_value_targets_are_the_lambda_return_of_the_later_root_values() {
        let game = GameFile::parse(include_str!("../../tests/fixtures/game-format-1.json")).unwrap();
        let n = game.samples.len();
        let own = game_samples(&game, searched_only(1.0, 0.0)).unwrap();
        assert_eq!(own.len(), n);
        let to_act: Vec<Color> = own.iter().map(|s| s.pos.to_act().unwrap()).collect();
        for lambda in [0.0f32, 0.5, 0.9, 1.0] {
            let got = game_samples(&game, searched_only(1.0, lambda)).unwrap();
            for (i, sample) in got.iter().enumerate() {
                let player = to_act[i];
                let mut expected = lambda.powi((n - i) as i32) * game.result.value_for(player);
                for (k, (later, &theirs)) in game.samples[i..].iter().zip(&to_act[i..]).enumerate() {
                    let sign = if theirs == player { 1.0 } else { -1.0 };
                    expected += (1.0 - lambda) * lambda.powi(k as i32) * sign * later.root_value;
                }
                assert!(
                    (sample.value - expected).abs() < 1e-5,
                    "λ {lambda}, sample {i}: {} != {expected}",
                    sample.value
                );
            }
            // The share mixes that return with the result as before.
            let mixed = game_samples(&game, searched_only(0.25, lambda)).unwrap();
            for ((m, g), player) in mixed.iter().zip(&got).zip(&to_act) {
                let expected = 0.75 * game.result.value_for(*player) + 0.25 * g.value;
                assert!((m.value - expected).abs() < 1e-5);
            }
        }
    }
}
