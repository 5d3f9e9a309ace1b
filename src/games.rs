//! A finished self-play game as stored, format [`GAME_FORMAT`] (self-play
//! writes them many to a shard, see [`crate::shards`]; format 1 runs kept
//! one JSON file a game):
//!
//! ```json
//! {"format": 2, "encoding_version": 1, "variant": "standard",
//!  "actions": ["b1-b2", ...],
//!  "samples": [{"ply": 0, "policy": {"a1-b2": 0.12, ...}, "root_value": 0.02}, ...],
//!  "result": {"winner": "white", "reason": "no_gipf_piece"},
//!  "model": "step-000100.safetensors", "seed": 1234, "worker": "host-3f2a",
//!  "config": {...}}
//! ```
//!
//! `samples` holds the fully searched decisions: `ply` indexes `actions`
//! (the action then chosen), `policy` the search's policy target over the
//! legal actions (visit shares, or with Gumbel root selection the improved
//! policy), `root_value` the search's value for the player to act. The
//! result's `winner` is null for a game cut at the configured length
//! (`reason: "ply_cap"`), which training scores as a draw. `seed` (the
//! game's own random seed) and `worker` (the self-play process) are new in
//! format 2. `config` is provenance: the configuration that played the game,
//! kept as written and never checked again, so that changing the program's
//! configuration keys leaves earlier games readable.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::rules::{action_strings, Action, Color, GameRecord, Position, Variant, WinReason};

/// Changes whenever the game layout changes; this program writes it.
pub const GAME_FORMAT: u32 = 2;
/// The oldest format this program still reads.
pub const OLDEST_GAME_FORMAT: u32 = 1;

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    NoGipfPiece,
    NoReserve,
    /// Cut at the configured length; scored as a draw.
    PlyCap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameResult {
    pub winner: Option<Color>,
    pub reason: EndReason,
}

impl GameResult {
    /// The result of a finished position, or a draw by the ply cap.
    pub fn of(pos: &Position) -> GameResult {
        match pos.outcome() {
            Some(o) => GameResult {
                winner: Some(o.winner),
                reason: match o.reason {
                    WinReason::NoGipfPiece => EndReason::NoGipfPiece,
                    WinReason::NoReserve => EndReason::NoReserve,
                },
            },
            None => GameResult { winner: None, reason: EndReason::PlyCap },
        }
    }

    /// The outcome for `player`: 1 won, -1 lost, 0 drawn.
    pub fn value_for(&self, player: Color) -> f32 {
        match self.winner {
            Some(w) if w == player => 1.0,
            Some(_) => -1.0,
            None => 0.0,
        }
    }
}

/// One fully searched decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    pub ply: usize,
    pub policy: BTreeMap<String, f32>,
    pub root_value: f32,
}

/// A finished game as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameFile {
    pub format: u32,
    pub encoding_version: u32,
    pub variant: Variant,
    #[serde(with = "action_strings")]
    pub actions: Vec<Action>,
    pub samples: Vec<Sample>,
    pub result: GameResult,
    pub model: String,
    /// The game's random seed (format 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// The self-play process that played it (format 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// The configuration that played it, as provenance.
    pub config: serde_json::Value,
}

/// Just the format, read first so that a file from a newer program is
/// refused by its format rather than by a field this program does not know.
#[derive(Deserialize)]
struct FormatOnly {
    format: u32,
}

impl GameFile {
    /// Reads a game file and checks it: format, actions legal from the start,
    /// samples pointing at searched decisions, result matching the replay.
    pub fn read(path: &Path) -> Result<GameFile> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        GameFile::parse(&text).with_context(|| path.display().to_string())
    }

    /// Parses and checks one game's JSON.
    pub fn parse(text: &str) -> Result<GameFile> {
        let format = serde_json::from_str::<FormatOnly>(text).context("not a game file")?.format;
        if !(OLDEST_GAME_FORMAT..=GAME_FORMAT).contains(&format) {
            bail!("game format {format} (this program reads formats {OLDEST_GAME_FORMAT} to {GAME_FORMAT})");
        }
        let game: GameFile = serde_json::from_str(text).context("not a game file")?;
        game.check().context("inconsistent game")?;
        Ok(game)
    }

    fn check(&self) -> Result<()> {
        let record = GameRecord { variant: self.variant, actions: self.actions.clone() };
        let end = record.replay()?;
        let result = GameResult::of(&end);
        if result != self.result {
            bail!("the result says {:?} but the actions end in {:?}", self.result, result);
        }
        // At most one sample a decision: a game's memory is bounded by its actions.
        anyhow::ensure!(
            self.samples.len() <= self.actions.len(),
            "{} samples for {} actions (at most one a ply)",
            self.samples.len(),
            self.actions.len()
        );
        for pair in self.samples.windows(2) {
            anyhow::ensure!(pair[0].ply < pair[1].ply, "a sample at ply {} twice, or out of order", pair[1].ply);
        }
        for sample in &self.samples {
            if sample.ply >= self.actions.len() {
                bail!("a sample at ply {} is past the game's {} actions", sample.ply, self.actions.len());
            }
            sample.check().with_context(|| format!("the sample at ply {}", sample.ply))?;
        }
        Ok(())
    }
}

impl Sample {
    /// The targets training may use: a finite root value in [-1, 1] and a
    /// policy that is a distribution (finite, non-negative shares summing
    /// to 1), so that no sample can make the loss non-finite. Whether its
    /// actions are legal is checked where the game is replayed for training.
    fn check(&self) -> Result<()> {
        let value = self.root_value;
        anyhow::ensure!(value.is_finite() && value.abs() <= 1.0 + 1e-4, "root_value {value} is outside [-1, 1]");
        if let Some((action, p)) = self.policy.iter().find(|(_, p)| !(p.is_finite() && **p >= 0.0)) {
            bail!("the policy gives {action} {p}, not a share");
        }
        let sum: f64 = self.policy.values().map(|&p| p as f64).sum();
        anyhow::ensure!((sum - 1.0).abs() <= 1e-3, "the policy sums to {sum}, not 1");
        Ok(())
    }
}

impl GameFile {
    /// A hash of the variant and the actions: equal for two copies of one
    /// game (the same seed played twice), different otherwise. Kept in
    /// memory only; not stable across program versions.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.variant.hash(&mut hasher);
        self.actions.hash(&mut hasher);
        hasher.finish()
    }
}
