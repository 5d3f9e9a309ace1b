//! Throughput measurements printed by `gipf bench`.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::encoding::{encode, INPUT_SIZE};
use crate::net::{Backend, Inference, Network, Precision};
use crate::players::{AlphaBeta, Limit, Player, Style};
use crate::rules::{Position, Variant};
use crate::search::{SearchConfig, Tree, UniformEvaluator};

/// What a run of random games measured.
#[derive(Clone, Copy, Debug)]
pub struct RulesThroughput {
    /// Games played, each to its end or the length cap.
    pub games: u64,
    /// Actions played in all.
    pub actions: u64,
    /// Wall-clock seconds they took.
    pub seconds: f64,
}

impl RulesThroughput {
    /// Actions played per second.
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
        actions += gipf_core::players::random_game(variant, max_actions, &mut rng, &mut legal);
        games += 1;
    }
    RulesThroughput { games, actions, seconds: start.elapsed().as_secs_f64() }
}

/// What a run of searches measured.
#[derive(Clone, Copy, Debug)]
pub struct SearchThroughput {
    /// Simulations run in all.
    pub simulations: u64,
    /// Wall-clock seconds they took.
    pub seconds: f64,
}

impl SearchThroughput {
    /// Simulations run per second.
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
        tree.run(&mut UniformEvaluator, simulations, &config).expect("uniform priors are finite");
        total += tree.root_visits() as u64;
    }
    SearchThroughput { simulations: total, seconds: start.elapsed().as_secs_f64() }
}

/// What timed classical searches of a set of positions measured.
#[derive(Clone, Copy, Debug)]
pub struct ClassicalThroughput {
    /// Positions searched.
    pub positions: u32,
    /// Nodes visited in all.
    pub nodes: u64,
    /// Wall-clock seconds the searches took.
    pub seconds: f64,
    /// The mean depth of the deepest finished iteration.
    pub mean_depth: f64,
}

impl ClassicalThroughput {
    /// Nodes visited per second.
    pub fn nodes_per_second(&self) -> f64 {
        self.nodes as f64 / self.seconds
    }
}

/// `positions` positions waiting for a push, reached by 10 to 70 random
/// actions of the standard variant (the same ones for every seed 1 run).
pub fn midgame_positions(positions: u32) -> Vec<Position> {
    let mut rng = SmallRng::seed_from_u64(1);
    let mut out = Vec::new();
    while out.len() < positions as usize {
        let mut pos = Position::new(Variant::Standard);
        for _ in 0..rng.random_range(10..70) {
            let legal = pos.legal_actions();
            if legal.is_empty() {
                break;
            }
            pos.play_unchecked(legal[rng.random_range(0..legal.len())]);
        }
        if !pos.is_over() && pos.phase() == crate::rules::Phase::Push {
            out.push(pos);
        }
    }
    out
}

/// Searches each position with a classical player of `style` for
/// `per_position` on this thread: nodes per second and the depth reached.
pub fn classical_search(style: Style, positions: &[Position], per_position: Duration) -> ClassicalThroughput {
    let mut player = AlphaBeta::with_style(style, Limit::Time(per_position), crate::players::monotonic);
    let (mut nodes, mut depth) = (0, 0);
    let start = Instant::now();
    for pos in positions {
        player.new_game(0);
        player.search(pos);
        nodes += player.nodes();
        depth += player.depth_reached();
    }
    ClassicalThroughput {
        positions: positions.len() as u32,
        nodes,
        seconds: start.elapsed().as_secs_f64(),
        mean_depth: depth as f64 / positions.len() as f64,
    }
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

/// The forward passes worth comparing on `device`: fp32 on LibTorch, on
/// ONNX Runtime where it runs, and bf16 on LibTorch where the device has
/// bf16 units.
pub fn forwards_to_compare(device: tch::Device) -> Vec<Inference> {
    let mut forwards = vec![Inference::FP32_LIBTORCH];
    let ort = Inference { precision: Precision::Fp32, backend: Backend::Onnxruntime };
    if ort.resolve(device).is_ok() {
        forwards.push(ort);
    }
    if device.is_cuda() || crate::net::cpu_has_bf16() {
        forwards.push(Inference { precision: Precision::Bf16, backend: Backend::Libtorch });
    }
    forwards
}

/// Positions per second of each of `forwards` on a fresh network of
/// `shape`, at each of `batches` (each batch's forwards measured one after
/// another, so that the machine's drift touches them alike), on positions
/// of `variant`: one row a batch, in `forwards`' order.
pub fn compare_forwards(
    shape: &crate::net::NetConfig,
    variant: Variant,
    device: tch::Device,
    forwards: &[Inference],
    batches: &[usize],
    duration: Duration,
) -> anyhow::Result<Vec<Vec<f64>>> {
    let mut networks = Vec::new();
    for &inference in forwards {
        let mut network = Network::new(shape, device, 0);
        network.prepare_for_play(inference)?;
        networks.push(network);
    }
    let rows = batches
        .iter()
        .map(|&batch| networks.iter().map(|n| net_throughput(n, variant, batch, duration)).collect())
        .collect();
    Ok(rows)
}

/// Writes random games of `variant` into `dir` as shards of `games_per_shard`
/// until they hold at least `positions` positions: every position a value
/// sample, every fourth one with a random policy target over its legal
/// actions, as self-play would store them. For measuring the trainer's start
/// on a large run. Returns the games and positions written.
pub fn synthetic_games(
    dir: &std::path::Path,
    variant: Variant,
    positions: u64,
    games_per_shard: usize,
    seed: u64,
) -> anyhow::Result<(u64, u64)> {
    use crate::games::{GameFile, GameResult, Sample, GAME_FORMAT};
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut writer = crate::shards::ShardWriter::new(dir, "synthetic", games_per_shard, Duration::MAX)?;
    let (mut games, mut written) = (0u64, 0u64);
    while written < positions {
        let mut pos = Position::new(variant);
        let (mut actions, mut samples) = (Vec::new(), Vec::new());
        while !pos.is_over() && actions.len() < 600 {
            let legal = pos.legal_actions();
            if actions.len() % 4 == 0 {
                let weights: Vec<f32> = legal.iter().map(|_| rng.random::<f32>()).collect();
                let total: f32 = weights.iter().sum();
                let policy = legal.iter().zip(weights).map(|(a, w)| (a.to_string(), w / total)).collect();
                samples.push(Sample { ply: actions.len(), policy, root_value: rng.random_range(-1.0..1.0) });
            }
            let action = legal[rng.random_range(0..legal.len())];
            pos.play_unchecked(action);
            actions.push(action);
        }
        written += actions.len() as u64;
        games += 1;
        writer.push(GameFile {
            format: GAME_FORMAT,
            encoding_version: crate::encoding::ENCODING_VERSION,
            variant,
            result: GameResult::of(&pos),
            actions,
            samples,
            model: "synthetic".into(),
            seed: Some(games),
            worker: Some("synthetic".into()),
            config: serde_json::Value::Null,
        })?;
    }
    writer.flush()?;
    Ok((games, written))
}

/// This process's resident memory now and at its peak, in bytes (Linux).
pub fn memory_bytes() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}
