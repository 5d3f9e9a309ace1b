//! Matches between two networks searching a fixed number of simulations, all
//! games at once, as self-play plays them: every game gathers its leaves,
//! and each network evaluates the leaves of the games where its side is to
//! act in one batch per step. One copy of each network, batches as large as
//! the games in play: what gating needs on a GPU.

use anyhow::Result;

use super::{pairing, MatchOptions, MatchReport, Tally};
use crate::net::Network;
use crate::rules::{Color, Position};
use crate::search::{Batched, Root, Search, SearchConfig, Searching};

struct Game {
    actions: u32,
    a_color: Color,
    /// The search of the current decision, on a fresh tree.
    search: Search,
}

impl Searching for Game {
    fn search(&mut self) -> &mut Search {
        &mut self.search
    }
}

impl Game {
    fn position(&self) -> &Position {
        self.search.tree().root_position()
    }

    fn is_over(&self, max_actions: u32) -> bool {
        self.position().is_over() || self.actions >= max_actions
    }

    /// Plays the forced actions (the only legal one) and starts the search
    /// of the next decision.
    fn decide(&mut self, simulations: u32, max_actions: u32, config: &SearchConfig) {
        let forced = self.search.skip_forced(max_actions.saturating_sub(self.actions) as usize);
        self.actions += forced.len() as u32;
        self.search = Search::new(*self.position(), 0);
        self.search.start(simulations, Root::Plain, config).expect("a plain root has no settings to refuse");
    }

    /// Plays the action of a finished search and starts the next.
    fn play_if_done(&mut self, simulations: u32, max_actions: u32, config: &SearchConfig) {
        if self.search.is_done() && !self.is_over(max_actions) {
            let action = self.search.tree().best_action().expect("a searched root has actions");
            self.search.advance(action).expect("the search chose a legal action");
            self.actions += 1;
            self.decide(simulations, max_actions, config);
        }
    }

    fn a_to_act(&self) -> bool {
        self.position().to_act() == Some(self.a_color)
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
    let (search, max_actions) = (&options.search, options.max_actions);
    let mut next = 0u32;
    let mut games: Batched<Game> = Batched::default();
    let mut tally = Tally::default();
    let mut total_length = 0u64;
    loop {
        while games.len() < parallel.max(1) && next < options.games {
            let (pos, a_color) = pairing(options, next);
            let mut game = Game { actions: options.opening_actions, a_color, search: Search::new(pos, 0) };
            game.decide(simulations, max_actions, search);
            games.push(game);
            next += 1;
        }
        for game in games.take_if(|g| g.is_over(max_actions))? {
            tally.add(game.position().outcome().map(|o| o.winner == game.a_color));
            total_length += game.actions as u64;
        }
        if games.is_empty() {
            break;
        }
        // Each network evaluates the leaves of the games where its side acts.
        for (side_a, network) in [(true, &mut *a), (false, &mut *b)] {
            games.evaluate(network, search, |g| g.a_to_act() == side_a)?;
        }
        for game in games.games_mut() {
            game.play_if_done(simulations, max_actions, search);
        }
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
            inference: Default::default(),
            search: crate::search::SearchConfig { batch_size: 4, ..Default::default() },
        };
        let first = network_match(&mut a, &mut b, 8, &options, 4).unwrap();
        assert_eq!(first.tally.games(), 6);
        assert!(first.mean_length > 2.0);
        let again = network_match(&mut a, &mut b, 8, &options, 4).unwrap();
        assert_eq!(first, again, "the same seed, the same games");
    }

    /// The tally is A's: the shipped model against an untrained network wins
    /// as A and loses as B.
    #[test]
    fn the_tally_is_player_a_s() {
        tch::set_num_threads(1);
        let reference = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/reference.safetensors");
        let (mut trained, _) = crate::checkpoint::load_checkpoint(&reference, Device::Cpu).unwrap();
        let mut untrained = Network::new(&crate::net::TINY, Device::Cpu, 1);
        let options = MatchOptions {
            variant: Variant::Standard,
            games: 4,
            opening_actions: 2,
            max_actions: 300,
            threads: 1,
            seed: 5,
            sprt: None,
            device: Device::Cpu,
            inference: Default::default(),
            search: crate::search::SearchConfig { batch_size: 4, ..Default::default() },
        };
        let as_a = network_match(&mut trained, &mut untrained, 16, &options, 4).unwrap().tally;
        let as_b = network_match(&mut untrained, &mut trained, 16, &options, 4).unwrap().tally;
        assert!(as_a.wins >= 3 && as_b.losses >= 3, "as A {as_a:?}, as B {as_b:?}");
    }
}
