//! Training data: the window of recent samples read from the games folder,
//! and random minibatches, each position under a random board symmetry.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rand::Rng;

use crate::encoding::{action_index, encode, transform_index, INPUT_SIZE, NUM_ACTIONS};
use crate::games::{EndReason, GameFile};
use crate::rules::{Color, Position, Symmetry, NUM_SYMMETRIES};

/// One position to learn from.
#[derive(Clone, Debug)]
pub struct TrainingSample {
    pub pos: Position,
    /// The search's policy target, by action index; empty for a position
    /// that was not fully searched (a value target only).
    pub policy: Vec<(u16, f32)>,
    /// The game's result for the player to act.
    pub value: f32,
}

/// What one look at the games folder found.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    pub games: usize,
    pub samples: usize,
    pub skipped: Vec<(PathBuf, String)>,
    pub total_actions: usize,
    pub no_gipf_piece: usize,
    pub no_reserve: usize,
    pub ply_cap: usize,
    pub white_wins: usize,
    /// Distinct openings (the first [`OPENING_LENGTH`] actions) among the games read.
    pub distinct_openings: usize,
}

/// Actions that make an opening, for counting distinct ones.
pub const OPENING_LENGTH: usize = 10;

/// The samples of the most recent games, in the order they were read.
#[derive(Default)]
pub struct Window {
    /// Every position of a game is a value sample, not only the fully searched ones.
    pub value_every_position: bool,
    samples: Vec<TrainingSample>,
    seen: HashSet<PathBuf>,
    /// Samples ever read, which sets the window's size.
    pub total_samples: u64,
    pub total_games: u64,
}

/// A minibatch as flat arrays, ready for tensors.
pub struct Batch {
    pub size: usize,
    pub input: Vec<f32>,
    pub policy: Vec<f32>,
    /// 1 for legal actions, 0 for the others.
    pub legal: Vec<f32>,
    pub value: Vec<f32>,
    /// 1 where the sample has a policy target, 0 for value-only samples.
    pub policy_mask: Vec<f32>,
}

/// The training samples of one game: its fully searched decisions, with
/// their policy targets, and with `every_position` all its other positions
/// too, as value targets only.
pub fn game_samples(game: &GameFile, every_position: bool) -> Result<Vec<TrainingSample>> {
    let mut pos = Position::new(game.variant);
    let mut samples = Vec::with_capacity(if every_position { game.actions.len() } else { game.samples.len() });
    let mut next = game.samples.iter().peekable();
    for (ply, &action) in game.actions.iter().enumerate() {
        let player = pos.to_act().with_context(|| format!("an action at ply {ply} after the end of the game"))?;
        let value = game.result.value_for(player);
        if let Some(sample) = next.next_if(|s| s.ply == ply) {
            let mut policy = Vec::with_capacity(sample.policy.len());
            for (text, &p) in &sample.policy {
                let action = text.parse().with_context(|| format!("sample at ply {ply}"))?;
                anyhow::ensure!(pos.is_legal(action), "sample at ply {ply}: {text} is not legal there");
                policy.push((action_index(action) as u16, p));
            }
            samples.push(TrainingSample { pos, policy, value });
        } else if every_position {
            samples.push(TrainingSample { pos, policy: Vec::new(), value });
        }
        pos.play(action)?;
    }
    Ok(samples)
}

impl Window {
    /// An empty window for training with `config`.
    pub fn new(config: &crate::config::Config) -> Window {
        Window { value_every_position: config.train.value_every_position, ..Window::default() }
    }

    /// Reads the games in `dir` not read before (in name order, which is the
    /// order they were written), then trims the window to its size. A file
    /// that cannot be read is reported and skipped.
    pub fn load_new(&mut self, dir: &Path, size: impl Fn(u64) -> usize) -> Result<LoadReport> {
        let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read games folder {}", dir.display()))?;
        let mut paths: Vec<PathBuf> = Vec::new();
        for entry in entries {
            let path = entry.with_context(|| format!("cannot list {}", dir.display()))?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name.ends_with(".json") && !name.starts_with('.') && !self.seen.contains(&path) {
                paths.push(path);
            }
        }
        paths.sort();
        let mut report = LoadReport::default();
        let mut openings = HashSet::new();
        for path in paths {
            self.seen.insert(path.clone());
            let read =
                GameFile::read(&path).and_then(|game| Ok((game_samples(&game, self.value_every_position)?, game)));
            let (samples, game) = match read {
                Ok(ok) => ok,
                Err(e) => {
                    tracing::warn!("skipping {}: {e:#}", path.display());
                    report.skipped.push((path, format!("{e:#}")));
                    continue;
                }
            };
            report.games += 1;
            report.samples += samples.len();
            report.total_actions += game.actions.len();
            match game.result.reason {
                EndReason::NoGipfPiece => report.no_gipf_piece += 1,
                EndReason::NoReserve => report.no_reserve += 1,
                EndReason::PlyCap => report.ply_cap += 1,
            }
            report.white_wins += (game.result.winner == Some(Color::White)) as usize;
            openings.insert(game.actions.iter().take(OPENING_LENGTH).copied().collect::<Vec<_>>());
            self.total_samples += samples.len() as u64;
            self.total_games += 1;
            self.samples.extend(samples);
        }
        report.distinct_openings = openings.len();
        let keep = size(self.total_samples);
        if self.samples.len() > keep {
            self.samples.drain(..self.samples.len() - keep);
        }
        Ok(report)
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// `size` samples drawn at random, each under a random symmetry.
    pub fn batch(&self, size: usize, rng: &mut impl Rng) -> Batch {
        assert!(!self.samples.is_empty(), "no samples to draw from");
        let mut batch = Batch {
            size,
            input: vec![0.0; size * INPUT_SIZE],
            policy: vec![0.0; size * NUM_ACTIONS],
            legal: vec![0.0; size * NUM_ACTIONS],
            value: Vec::with_capacity(size),
            policy_mask: Vec::with_capacity(size),
        };
        for i in 0..size {
            let sample = &self.samples[rng.random_range(0..self.samples.len())];
            let sym = Symmetry::new(rng.random_range(0..NUM_SYMMETRIES));
            let pos = sample.pos.transform(sym);
            encode(&pos, &mut batch.input[i * INPUT_SIZE..(i + 1) * INPUT_SIZE]);
            let row = i * NUM_ACTIONS;
            for &(index, p) in &sample.policy {
                batch.policy[row + transform_index(sym, index as usize)] = p;
            }
            for action in pos.legal_actions() {
                batch.legal[row + action_index(action)] = 1.0;
            }
            batch.value.push(sample.value);
            batch.policy_mask.push(!sample.policy.is_empty() as u8 as f32);
        }
        batch
    }
}
