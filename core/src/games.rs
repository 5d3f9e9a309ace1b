//! A finished self-play game as stored, format [`GAME_FORMAT`] (self-play
//! writes them many to a shard, a game a line, see the main crate's
//! `shards`; format 1 runs kept one JSON file a game):
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

use serde::{Deserialize, Serialize};

use crate::rules::{action_strings, Action, Color, GameRecord, Position, Variant, WinReason};

/// Why a game is refused: what was wrong, after what it was found in
/// (`not a game file: missing field ...`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct GameError(String);

impl GameError {
    pub(crate) fn new(message: impl std::fmt::Display) -> GameError {
        GameError(message.to_string())
    }

    /// The error with `context` before it.
    pub fn context(self, context: impl std::fmt::Display) -> GameError {
        GameError(format!("{context}: {}", self.0))
    }
}

type Result<T> = std::result::Result<T, GameError>;

fn ensure(condition: bool, message: impl FnOnce() -> String) -> Result<()> {
    match condition {
        true => Ok(()),
        false => Err(GameError(message())),
    }
}

/// A shard's name: `shard-`, the time it was finished (milliseconds since
/// the Unix epoch, 13 digits, so that names sort by time), the worker that
/// wrote it, its sequence number among that worker's, `.jsonl.zst`.
pub fn shard_name(finished_ms: u64, worker: &str, sequence: u64) -> String {
    format!("{SHARD_PREFIX}{finished_ms:013}-{worker}-{sequence:06}{SHARD_SUFFIX}")
}

/// How every shard's name begins.
pub const SHARD_PREFIX: &str = "shard-";
/// How every shard's name ends: zstd-compressed JSON lines.
pub const SHARD_SUFFIX: &str = ".jsonl.zst";
/// zstd level of shards: 3 is zstd's default; higher levels gain little on this data.
pub const SHARD_ZSTD_LEVEL: i32 = 3;

/// Checks a worker name given by a user: it becomes part of file names.
pub fn check_worker_name(worker: &str) -> Result<()> {
    ensure(
        !worker.is_empty()
            && worker.len() <= 64
            && worker.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_'),
        || format!("worker name {worker:?}: use 1 to 64 letters, digits, '.' or '_'"),
    )
}

/// The most a shard may hold decompressed: far above any real shard (a
/// game of self-play takes a few hundred kB of JSON at most, so `gpu.toml`'s
/// 256-game shards stay under 100 MB), and a bound on what a small hostile
/// shard can make this process allocate.
pub const MAX_SHARD_BYTES: u64 = 1 << 30;

/// The longest line a game may take: far above a real game (600 actions,
/// each sample's policy over at most about 100 actions, take under 1 MB),
/// and a bound on what one line can make the parser allocate.
pub const MAX_GAME_LINE_BYTES: usize = 16 << 20;

/// Each game line of a shard's text in order, by its line number (from
/// 1): the game, or why it is refused.
pub fn parse_lines(text: &str) -> Vec<(usize, Result<GameFile>)> {
    let lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    lines
        .map(|(i, line)| {
            let game = match line.len() > MAX_GAME_LINE_BYTES {
                true => Err(GameError::new(format!("longer than {MAX_GAME_LINE_BYTES} bytes, more than a game holds"))),
                false => GameFile::parse(line),
            };
            (i + 1, game)
        })
        .collect()
}

/// Changes whenever the game layout changes; this program writes it.
pub const GAME_FORMAT: u32 = 2;
/// The oldest format this program still reads.
pub const OLDEST_GAME_FORMAT: u32 = 1;

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// The loser had no GIPF piece left on the board (standard and tournament).
    NoGipfPiece,
    /// The loser had to push with an empty reserve.
    NoReserve,
    /// Cut at the configured length; scored as a draw.
    PlyCap,
}

/// How a stored game ended: who won and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameResult {
    /// The winner; `None` for a game cut at the ply cap.
    pub winner: Option<Color>,
    /// Why the game ended.
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
    /// Index into the game's `actions` of the action then chosen.
    pub ply: usize,
    /// The search's policy target: each legal action's notation and its share
    /// (the shares sum to 1).
    pub policy: BTreeMap<String, f32>,
    /// The search's value of the position for the player to act, in -1..=1.
    pub root_value: f32,
}

/// A finished game as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameFile {
    /// The layout's format, from [`OLDEST_GAME_FORMAT`] to [`GAME_FORMAT`].
    pub format: u32,
    /// The [`crate::encoding::ENCODING_VERSION`] the game was played with.
    pub encoding_version: u32,
    /// The variant played, from its start.
    pub variant: Variant,
    /// Every action of the game in order, removals included.
    #[serde(with = "action_strings")]
    pub actions: Vec<Action>,
    /// The fully searched decisions, in order of `ply`.
    pub samples: Vec<Sample>,
    /// How the game ended.
    pub result: GameResult,
    /// The checkpoint that played it (its file name).
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
    /// Parses and checks one game's JSON: format, actions legal from the
    /// start, samples pointing at searched decisions, result matching the replay.
    pub fn parse(text: &str) -> Result<GameFile> {
        let not_a_game = |e: serde_json::Error| GameError::new(e).context("not a game file");
        let format = serde_json::from_str::<FormatOnly>(text).map_err(not_a_game)?.format;
        ensure((OLDEST_GAME_FORMAT..=GAME_FORMAT).contains(&format), || {
            format!("game format {format} (this program reads formats {OLDEST_GAME_FORMAT} to {GAME_FORMAT})")
        })?;
        let game: GameFile = serde_json::from_str(text).map_err(not_a_game)?;
        game.check().map_err(|e| e.context("inconsistent game"))?;
        Ok(game)
    }

    fn check(&self) -> Result<()> {
        let record = GameRecord { variant: self.variant, actions: self.actions.clone() };
        let end = record.replay().map_err(GameError::new)?;
        let result = GameResult::of(&end);
        ensure(result == self.result, || {
            format!("the result says {:?} but the actions end in {:?}", self.result, result)
        })?;
        // At most one sample a decision: a game's memory is bounded by its actions.
        ensure(self.samples.len() <= self.actions.len(), || {
            format!("{} samples for {} actions (at most one a ply)", self.samples.len(), self.actions.len())
        })?;
        for pair in self.samples.windows(2) {
            ensure(pair[0].ply < pair[1].ply, || format!("a sample at ply {} twice, or out of order", pair[1].ply))?;
        }
        for sample in &self.samples {
            ensure(sample.ply < self.actions.len(), || {
                format!("a sample at ply {} is past the game's {} actions", sample.ply, self.actions.len())
            })?;
            sample.check().map_err(|e| e.context(format!("the sample at ply {}", sample.ply)))?;
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
        ensure(value.is_finite() && value.abs() <= 1.0 + 1e-4, || format!("root_value {value} is outside [-1, 1]"))?;
        if let Some((action, p)) = self.policy.iter().find(|(_, p)| !(p.is_finite() && **p >= 0.0)) {
            return Err(GameError::new(format!("the policy gives {action} {p}, not a share")));
        }
        let sum: f64 = self.policy.values().map(|&p| p as f64).sum();
        ensure((sum - 1.0).abs() <= 1e-3, || format!("the policy sums to {sum}, not 1"))
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
