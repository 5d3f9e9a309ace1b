//! Finished self-play games on disk, format [`GAME_FORMAT`]: one JSON file a
//! game, written under a temporary name and renamed into place, so a reader
//! never sees half a game.
//!
//! ```json
//! {"format": 1, "encoding_version": 1, "variant": "standard",
//!  "actions": ["b1-b2", ...],
//!  "samples": [{"ply": 0, "policy": {"a1-b2": 0.12, ...}, "root_value": 0.02}, ...],
//!  "result": {"winner": "white", "reason": "no_gipf_piece"},
//!  "model": "step-000100.safetensors", "config": {...}}
//! ```
//!
//! `samples` holds the fully searched decisions: `ply` indexes `actions`
//! (the action then chosen), `policy` the search's policy target over the
//! legal actions (visit shares, or with Gumbel root selection the improved
//! policy), `root_value` the search's value for the player to act. The
//! result's `winner` is null for a game cut at the configured length
//! (`reason: "ply_cap"`), which training scores as a draw.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::rules::{action_strings, Action, Color, GameRecord, Position, Variant, WinReason};

/// Changes whenever the game file layout changes.
pub const GAME_FORMAT: u32 = 1;

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
#[serde(deny_unknown_fields)]
pub struct GameFile {
    pub format: u32,
    pub encoding_version: u32,
    pub variant: Variant,
    #[serde(with = "action_strings")]
    pub actions: Vec<Action>,
    pub samples: Vec<Sample>,
    pub result: GameResult,
    pub model: String,
    pub config: Config,
}

impl GameFile {
    /// Reads a game file and checks it: format, actions legal from the start,
    /// samples pointing at searched decisions, result matching the replay.
    pub fn read(path: &Path) -> Result<GameFile> {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let game: GameFile =
            serde_json::from_str(&text).with_context(|| format!("{}: not a game file", path.display()))?;
        game.check().with_context(|| format!("{}: inconsistent game", path.display()))?;
        Ok(game)
    }

    fn check(&self) -> Result<()> {
        if self.format != GAME_FORMAT {
            bail!("game format {} (this program reads {GAME_FORMAT})", self.format);
        }
        let record = GameRecord { variant: self.variant, actions: self.actions.clone() };
        let end = record.replay()?;
        let result = GameResult::of(&end);
        if result != self.result {
            bail!("the result says {:?} but the actions end in {:?}", self.result, result);
        }
        for sample in &self.samples {
            if sample.ply >= self.actions.len() {
                bail!("a sample at ply {} is past the game's {} actions", sample.ply, self.actions.len());
            }
        }
        Ok(())
    }

    /// Writes the game into `dir` atomically; returns its path.
    pub fn write_into(&self, dir: &Path, name: &str) -> Result<PathBuf> {
        let path = dir.join(name);
        write_atomic(&path, serde_json::to_string(self)?.as_bytes())?;
        Ok(path)
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder,
/// synced and then renamed, so that `path` is either whole or absent.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().context("a file path needs a file name")?.to_string_lossy();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = std::fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    file.write_all(bytes).and_then(|_| file.sync_all()).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
}
