//! Throughput measurements printed by `gipf bench`.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::encoding::{encode, INPUT_SIZE};
use crate::net::Network;
use crate::rules::{Position, Variant};
use crate::search::{SearchConfig, Tree, UniformEvaluator};

/// What a run of random games measured.
#[derive(Clone, Copy, Debug)]
pub struct RulesThroughput {
    pub games: u64,
    pub actions: u64,
    pub seconds: f64,
}

impl RulesThroughput {
    pub fn actions_per_second(&self) -> f64 {
        self.actions as f64 / self.seconds
    }
}

/// Plays uniformly random games of `variant` on this thread for about
/// `duration`: each action lists the legal actions, picks one and plays it.
/// Games longer than `max_actions` are cut off.
pub fn random_games(variant: Variant, duration: Duration, max_actions: u32, seed: u64) -> RulesThroughput {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut legal = Vec::with_capacity(64);
    let (mut games, mut actions) = (0u64, 0u64);
    let start = Instant::now();
    while start.elapsed() < duration {
        let mut pos = Position::new(variant);
        for _ in 0..max_actions {
            pos.legal_actions_into(&mut legal);
            if legal.is_empty() {
                break;
            }
            pos.play_unchecked(legal[rng.random_range(0..legal.len())]);
            actions += 1;
        }
        games += 1;
    }
    RulesThroughput { games, actions, seconds: start.elapsed().as_secs_f64() }
}

/// What a run of searches measured.
#[derive(Clone, Copy, Debug)]
pub struct SearchThroughput {
    pub simulations: u64,
    pub seconds: f64,
}

impl SearchThroughput {
    pub fn simulations_per_second(&self) -> f64 {
        self.simulations as f64 / self.seconds
    }
}

/// Searches from the start of `variant` with the uniform evaluator for about
/// `duration`, `simulations` per search: the cost of the tree itself (selection,
/// expansion, backup, rules), without any network.
pub fn uniform_search(variant: Variant, duration: Duration, simulations: u32, batch_size: usize) -> SearchThroughput {
    let config = SearchConfig { batch_size, ..SearchConfig::default() };
    let mut total = 0u64;
    let start = Instant::now();
    while start.elapsed() < duration {
        let mut tree = Tree::new(Position::new(variant));
        tree.run(&mut UniformEvaluator, simulations, &config);
        total += tree.root_visits() as u64;
    }
    SearchThroughput { simulations: total, seconds: start.elapsed().as_secs_f64() }
}

/// `batch` encoded positions from random games of `variant`: the input of
/// the raw forward measurements.
pub fn forward_input(variant: Variant, batch: usize) -> Vec<f32> {
    let mut rng = SmallRng::seed_from_u64(3);
    let mut input = vec![0.0f32; batch * INPUT_SIZE];
    let mut pos = Position::new(variant);
    for chunk in input.chunks_mut(INPUT_SIZE) {
        if pos.is_over() {
            pos = Position::new(variant);
        }
        encode(&pos, chunk);
        let legal = pos.legal_actions();
        pos.play_unchecked(legal[rng.random_range(0..legal.len())]);
    }
    input
}

/// Runs the forward pass on `input` (`batch` positions) for about
/// `duration`; returns the positions done and the seconds taken.
pub fn time_forward(network: &Network, input: &[f32], batch: usize, duration: Duration) -> (u64, f64) {
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < duration {
        network.infer(input, batch);
        calls += 1;
    }
    (calls * batch as u64, start.elapsed().as_secs_f64())
}

/// Raw forward throughput of `network` at `batch` positions a call, in
/// positions per second, over about `duration` (after one warm-up call).
/// The inputs are positions from random games of `variant`.
pub fn net_throughput(network: &Network, variant: Variant, batch: usize, duration: Duration) -> f64 {
    let input = forward_input(variant, batch);
    network.infer(&input, batch);
    let (positions, seconds) = time_forward(network, &input, batch, duration);
    positions as f64 / seconds
}
