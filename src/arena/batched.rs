//! Matches between two networks searching a fixed number of simulations, all
//! games at once, as self-play plays them: every game gathers its leaves,
//! and each network evaluates the leaves of the games where its side is to
//! act in one batch per step. One copy of each network, batches as large as
//! the games in play: what gating needs on a GPU.

use anyhow::Result;

use super::{opening, MatchOptions, MatchReport, Tally};
use crate::net::Network;
use crate::rules::{Color, Position};
use crate::search::{Evaluator, Leaf, Tree};
use rayon::prelude::*;

struct Game {
    index: u32,
    pos: Position,
    actions: u32,
    a_color: Color,
    /// The search of the current decision.
    tree: Option<Tree>,
}

impl Game {
    /// Plays forced actions and the action of a finished search; returns
    /// whether the game is over (ended, or at `max_actions`).
    fn advance(&mut self, simulations: u32, max_actions: u32) -> bool {
        loop {
            if self.pos.is_over() || self.actions >= max_actions {
                return true;
            }
            let action = match &self.tree {
                Some(tree) if tree.root_expanded() && tree.root_visits() >= simulations => {
                    tree.best_action().expect("a searched root has actions")
                }
                Some(_) => return false,
                None => {
                    let legal = self.pos.legal_actions();
                    if legal.len() > 1 {
                        self.tree = Some(Tree::new(self.pos));
                        return false;
                    }
                    legal[0]
                }
            };
            self.pos.play_unchecked(action);
            self.actions += 1;
            self.tree = None;
        }
    }

    fn a_to_act(&self) -> bool {
        self.pos.to_act() == Some(self.a_color)
    }
}

/// Plays `options.games` games (in colour-swapped pairs from the same
/// seeded openings) of `a` against `b`, each action searched with
/// `simulations`, up to `parallel` games at once; the search threads are
/// those of the rayon pool it runs in.
pub fn network_match(
    a: &mut Network,
    b: &mut Network,
    simulations: u32,
    options: &MatchOptions,
    parallel: usize,
) -> Result<MatchReport> {
    let _guard = tch::no_grad_guard();
    let search = options.search;
    let mut next = 0u32;
    let mut games: Vec<Game> = Vec::new();
    let mut tally = Tally::default();
    let mut total_length = 0u64;
    loop {
        while games.len() < parallel.max(1) && next < options.games {
            let pos = opening(options.variant, options.opening_actions, options.seed, next / 2);
            let a_color = if next.is_multiple_of(2) { Color::White } else { Color::Black };
            games.push(Game { index: next, pos, actions: options.opening_actions, a_color, tree: None });
            next += 1;
        }
        let mut i = 0;
        while i < games.len() {
            if games[i].advance(simulations, options.max_actions) {
                let game = games.swap_remove(i);
                match game.pos.outcome().map(|o| o.winner == game.a_color) {
                    Some(true) => tally.wins += 1,
                    Some(false) => tally.losses += 1,
                    None => tally.draws += 1,
                }
                total_length += game.actions as u64;
            } else {
                i += 1;
            }
        }
        if games.is_empty() {
            break;
        }
        games.sort_by_key(|g| g.index);
        let leaves: Vec<Vec<Leaf>> = games
            .par_iter_mut()
            .map(|game| {
                let tree = game.tree.as_mut().expect("a game in play is searching");
                let want = (simulations.saturating_sub(tree.root_visits()) as usize).clamp(1, search.batch_size);
                tree.gather(want, &search).0
            })
            .collect();
        // Each network evaluates the leaves of the games where its side acts.
        let mut evaluations = Vec::with_capacity(games.len());
        for (side_a, network) in [(true, &mut *a), (false, &mut *b)] {
            let positions: Vec<Position> = games
                .iter()
                .zip(&leaves)
                .filter(|(g, _)| g.a_to_act() == side_a)
                .flat_map(|(g, l)| l.iter().map(|leaf| *g.tree.as_ref().expect("searching").leaf_position(leaf)))
                .collect();
            let mut evals = if positions.is_empty() { Vec::new() } else { network.evaluate(&positions) }.into_iter();
            for (g, l) in games.iter().zip(&leaves) {
                if g.a_to_act() == side_a {
                    evaluations.push((g.index, evals.by_ref().take(l.len()).collect::<Vec<_>>()));
                }
            }
        }
        evaluations.sort_by_key(|(index, _)| *index);
        games.par_iter_mut().zip(leaves).zip(evaluations).for_each(|((game, leaves), (_, evals))| {
            game.tree.as_mut().expect("searching").apply(leaves, evals);
        });
    }
    let mean_length = total_length as f64 / tally.games().max(1) as f64;
    // The games move in step, so no player's time per action is its own.
    Ok(MatchReport { tally, decision: None, mean_length, think: Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Variant;
    use tch::Device;

    #[test]
    fn a_batched_match_plays_every_game_and_repeats_with_its_seed() {
        // One intra-op thread, as the command line sets it: several would
        // wait on each other beside the suite's other tests (100 times slower).
        tch::set_num_threads(1);
        let tiny = crate::net::TINY;
        let (mut a, mut b) = (Network::new(&tiny, Device::Cpu, 1), Network::new(&tiny, Device::Cpu, 2));
        let options = MatchOptions {
            variant: Variant::Standard,
            games: 6,
            opening_actions: 2,
            max_actions: 300,
            threads: 1,
            seed: 4,
            sprt: None,
            device: Device::Cpu,
            precision: Default::default(),
            search: crate::search::SearchConfig { batch_size: 4, ..Default::default() },
        };
        let first = network_match(&mut a, &mut b, 8, &options, 4).unwrap();
        assert_eq!(first.tally.games(), 6);
        assert!(first.mean_length > 2.0);
        let again = network_match(&mut a, &mut b, 8, &options, 4).unwrap();
        assert_eq!(first, again, "the same seed, the same games");
    }
}
