//! The games folder of a run. Self-play writes its finished games in shards:
//! many games a file, one game's JSON a line ([`crate::games`]), compressed
//! with zstd, written atomically and durably, and named
//!
//! `shard-<unix milliseconds when finished, 13 digits>-<worker>-<sequence>.jsonl.zst`
//!
//! so that sorting by name sorts by the time a shard was finished. A shard
//! never changes once written. Runs from before shards hold one
//! `game-*.json` file a game; those stay readable and count as older than
//! every shard.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rand::Rng;

use crate::durable::{remove_stale_temporaries, write_atomic};
use crate::games::{self, GameError, GameFile};

pub use crate::games::{SHARD_PREFIX, SHARD_SUFFIX};
const LEGACY_PREFIX: &str = "game-";
const LEGACY_SUFFIX: &str = ".json";

/// How late a shard may arrive (after shards of other workers finished
/// later) and still be read exactly once: the trainer's store listing looks
/// back this far, and each checkpoint names the files it read in this span
/// before its cursor.
pub const LATE: std::time::Duration = std::time::Duration::from_secs(600);

/// When the shard `name` finished, in milliseconds since the epoch (None
/// for a name without a finish time).
pub fn finished_ms(name: &str) -> Option<u64> {
    name.strip_prefix(SHARD_PREFIX)?.get(..13)?.parse().ok()
}

/// The first shard name of the span [`LATE`] before the shard `name`
/// finished (None for a name without a finish time).
pub fn late_horizon(name: &str) -> Option<String> {
    let ms = finished_ms(name)?;
    Some(format!("{SHARD_PREFIX}{:013}", ms.saturating_sub(LATE.as_millis() as u64)))
}

/// The worker that wrote the shard `name` (None for a name that is not a
/// shard's).
pub fn worker_of(name: &str) -> Option<&str> {
    let rest = name.strip_prefix(SHARD_PREFIX)?.strip_suffix(SHARD_SUFFIX)?;
    let (_finished, rest) = rest.split_once('-')?;
    let (worker, _sequence) = rest.rsplit_once('-')?;
    Some(worker).filter(|w| !w.is_empty())
}

/// Milliseconds since the Unix epoch by this machine's clock: the time in
/// shard names.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// How far ahead of this machine's clock a shard's finish time may lie.
pub const MAX_SHARD_AHEAD: std::time::Duration = std::time::Duration::from_secs(3600);

/// Checks a shard's name read from a listing before it counts: a finish
/// time, a worker, and a finish time not far in the future (listings start
/// from the newest name, so one such name would hide every new shard).
pub fn check_name(name: &str, now_ms: u64) -> std::result::Result<(), String> {
    let finished = finished_ms(name).ok_or("no finish time in its name")?;
    worker_of(name).ok_or("no worker in its name")?;
    let ahead = finished.saturating_sub(now_ms);
    if ahead > MAX_SHARD_AHEAD.as_millis() as u64 {
        return Err(format!("its name says it finished {} s in the future", ahead / 1000));
    }
    Ok(())
}

/// A file of games in a games folder.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct GamesFile {
    /// One game a file (format 1 runs); sorted before every shard.
    pub legacy: bool,
    pub name: String,
    pub path: PathBuf,
}

/// The games files of `dir`, oldest first. Hidden files (temporaries) and
/// other names are left out.
pub fn list(dir: &Path) -> Result<Vec<GamesFile>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read games folder {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let shard = name.starts_with(SHARD_PREFIX) && name.ends_with(SHARD_SUFFIX);
        let legacy = name.starts_with(LEGACY_PREFIX) && name.ends_with(LEGACY_SUFFIX);
        if shard || legacy {
            files.push(GamesFile { legacy, name, path: entry.path() });
        }
    }
    sort(&mut files);
    Ok(files)
}

/// Sorts games files oldest first: legacy files, then shards by name.
pub fn sort(files: &mut [GamesFile]) {
    // Legacy files (`legacy: true`) first: `false < true`, so reverse that key.
    files.sort_by(|a, b| b.legacy.cmp(&a.legacy).then_with(|| a.name.cmp(&b.name)));
}

/// What reading one games file gave: its games in order, and the games that
/// could not be read (a line number and the reason), which are left out.
#[derive(Debug, Default)]
pub struct FileGames {
    pub games: Vec<GameFile>,
    pub bad: Vec<String>,
}

/// Reads a games file. A file that cannot be read or decompressed is an
/// error; a bad line in a shard loses that game only.
pub fn read(file: &GamesFile) -> Result<FileGames> {
    let path = &file.path;
    if file.legacy {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let game = GameFile::parse(&text).with_context(|| path.display().to_string())?;
        return Ok(FileGames { games: vec![game], bad: Vec::new() });
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut out = parse(&bytes).with_context(|| path.display().to_string())?;
    for bad in out.bad.iter_mut() {
        *bad = format!("{} {bad}", path.display());
    }
    Ok(out)
}

/// Reads a shard's bytes: zstd-compressed JSON lines, one game each. Bad
/// lines are reported (`line N: reason`) and left out.
pub fn parse(bytes: &[u8]) -> Result<FileGames> {
    let mut out = FileGames::default();
    for (line, game) in parse_lines(bytes)? {
        match game {
            Ok(game) => out.games.push(game),
            Err(e) => out.bad.push(format!("line {line}: {e}")),
        }
    }
    Ok(out)
}

/// Each game line of a shard in order, by its line number (from 1): the
/// game, or why it is refused.
pub fn parse_lines(bytes: &[u8]) -> Result<Vec<(usize, Result<GameFile, GameError>)>> {
    let text = decompress(bytes, games::MAX_SHARD_BYTES)?;
    let text = String::from_utf8(text).context("not UTF-8 text")?;
    Ok(games::parse_lines(&text))
}

/// `bytes` decompressed, refused past `limit` bytes.
fn decompress(bytes: &[u8], limit: u64) -> Result<Vec<u8>> {
    let decoder = zstd::Decoder::new(bytes).context("not a zstd-compressed shard")?;
    let mut text = Vec::new();
    decoder.take(limit + 1).read_to_end(&mut text).context("not a zstd-compressed shard, or cut short")?;
    anyhow::ensure!(text.len() as u64 <= limit, "decompresses to more than {limit} bytes, the most a shard may hold");
    Ok(text)
}

/// Every game in `dir`, oldest first; any unreadable file or game is an
/// error (the test suites of the three crates read their runs' games so).
pub fn read_all(dir: &Path) -> Result<Vec<GameFile>> {
    let mut games = Vec::new();
    for file in list(dir)? {
        let read = read(&file)?;
        if let Some(bad) = read.bad.first() {
            anyhow::bail!("{bad}");
        }
        games.extend(read.games);
    }
    Ok(games)
}

/// The compressed bytes of a shard holding `games`.
pub fn encode(games: &[GameFile]) -> Result<Vec<u8>> {
    let mut encoder = zstd::Encoder::new(Vec::new(), games::SHARD_ZSTD_LEVEL)?;
    for game in games {
        serde_json::to_writer(&mut encoder, game)?;
        encoder.write_all(b"\n")?;
    }
    Ok(encoder.finish()?)
}

/// A self-play process's own name in shard names and games: the host name
/// and four random hexadecimal digits, so that two processes on one machine,
/// or one restarted, never share it.
pub fn new_worker_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    let host: String =
        host.trim().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_').take(32).collect();
    let tag: u16 = rand::rng().random();
    if host.is_empty() {
        format!("worker.{tag:04x}")
    } else {
        format!("{host}.{tag:04x}")
    }
}

/// The outboxes in `dir` named `{prefix}N` with N not in `kept` (those of
/// workers a run no longer has).
pub fn stray_outboxes(dir: &Path, prefix: &str, kept: std::ops::Range<usize>) -> Result<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut strays = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let number = name.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok());
        if number.is_some_and(|n| !kept.contains(&n)) && entry.path().is_dir() {
            strays.push(entry.path());
        }
    }
    Ok(strays)
}

/// Moves the shards of `strays` (outboxes of workers a run no longer has)
/// into `outbox`, whose uploader sends them: a shard left there by an
/// earlier run with more workers is not stranded.
pub fn gather_outboxes(outbox: &Path, strays: &[PathBuf]) -> Result<usize> {
    let mut moved = 0;
    for stray in strays {
        for file in list(stray)? {
            std::fs::create_dir_all(outbox).with_context(|| format!("cannot create {}", outbox.display()))?;
            let to = outbox.join(&file.name);
            std::fs::rename(&file.path, &to)
                .with_context(|| format!("cannot move {} to {}", file.path.display(), to.display()))?;
            moved += 1;
        }
    }
    if moved > 0 {
        tracing::info!(shards = moved, outbox = %outbox.display(), "shards of earlier workers' outboxes moved here");
    }
    Ok(moved)
}

/// Checks a worker name given by a user: it becomes part of file names.
pub fn check_worker_id(worker: &str) -> Result<()> {
    Ok(games::check_worker_name(worker)?)
}

/// Collects finished games and writes them as shards: when `games_per_shard`
/// games are waiting, when the oldest has waited `max_wait`, and at
/// [`ShardWriter::flush`]. A killed process loses the games not yet written.
pub struct ShardWriter {
    dir: PathBuf,
    worker: String,
    games_per_shard: usize,
    max_wait: Duration,
    pending: Vec<GameFile>,
    since: Instant,
    written: u64,
    /// Bytes of the shards written so far.
    pub bytes: u64,
}

impl ShardWriter {
    /// A writer into `dir` (created if missing); temporaries older than an
    /// hour, left there by killed writers, are removed.
    pub fn new(dir: &Path, worker: &str, games_per_shard: usize, max_wait: Duration) -> Result<ShardWriter> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create games folder {}", dir.display()))?;
        remove_stale_temporaries(dir, Duration::from_secs(3600));
        Ok(ShardWriter {
            dir: dir.to_path_buf(),
            worker: worker.to_string(),
            games_per_shard: games_per_shard.max(1),
            max_wait,
            pending: Vec::new(),
            since: Instant::now(),
            written: 0,
            bytes: 0,
        })
    }

    /// Adds a finished game; writes a shard when one is due.
    pub fn push(&mut self, game: GameFile) -> Result<Option<PathBuf>> {
        if self.pending.is_empty() {
            self.since = Instant::now();
        }
        self.pending.push(game);
        self.flush_if_due()
    }

    /// Writes a shard if enough games wait or the oldest has waited long enough.
    pub fn flush_if_due(&mut self) -> Result<Option<PathBuf>> {
        let due = self.pending.len() >= self.games_per_shard
            || (!self.pending.is_empty() && self.since.elapsed() >= self.max_wait);
        if due {
            self.flush()
        } else {
            Ok(None)
        }
    }

    /// Writes the waiting games as one shard, if any.
    pub fn flush(&mut self) -> Result<Option<PathBuf>> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        let bytes = encode(&self.pending)?;
        let name = games::shard_name(now_ms(), &self.worker, self.written);
        let path = self.dir.join(name);
        write_atomic(&path, &bytes).context("writing a shard of finished games")?;
        self.written += 1;
        self.bytes += bytes.len() as u64;
        self.pending.clear();
        Ok(Some(path))
    }

    /// Games finished but not yet written.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Shards written so far.
    pub fn shards(&self) -> u64 {
        self.written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small shard that expands past the bound is refused without
    /// decompressing more than the bound.
    #[test]
    fn a_shard_decompressing_past_the_bound_is_refused() {
        let limit = 1 << 20;
        let bomb = zstd::encode_all(&vec![b' '; 64 << 20][..], 3).unwrap();
        assert!(bomb.len() < 16 << 10, "{} bytes", bomb.len());
        let err = format!("{:#}", decompress(&bomb, limit).unwrap_err());
        assert!(err.contains("decompresses to more than 1048576 bytes"), "{err}");
        let fits = zstd::encode_all(&vec![b' '; limit as usize][..], 1).unwrap();
        assert_eq!(decompress(&fits, limit).unwrap().len(), limit as usize);
        let err = format!("{:#}", parse(b"not zstd").unwrap_err());
        assert!(err.contains("not a zstd-compressed shard"), "{err}");
    }

    #[test]
    fn a_shard_name_gives_its_worker() {
        assert_eq!(worker_of("shard-1764600000000-host.a1b2.0-000012.jsonl.zst"), Some("host.a1b2.0"));
        assert_eq!(worker_of("shard-1764600000000-my-worker-000000.jsonl.zst"), Some("my-worker"));
        for name in ["game-000001.json", "shard-1764600000000-000001.jsonl.zst", "shard-x.jsonl.zst", "readme"] {
            assert_eq!(worker_of(name), None, "{name}");
        }
    }
}
