//! The games folder of a run, the one home of its format. Self-play writes
//! its finished games in shards: many games a file, one game's JSON a line
//! ([`crate::games`]), compressed with zstd, written atomically and
//! durably, and named
//!
//! `shard-<unix milliseconds when finished, 13 digits>-<worker>-<sequence>.jsonl.zst`
//!
//! so that sorting by name sorts by the time a shard was finished. A shard
//! never changes once written. Runs from before shards hold one
//! `game-*.json` file a game; those stay readable and count as older than
//! every shard. The trainer, self-play and the Python package all read,
//! list and write games through here.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::durable::{remove_stale_temporaries, write_atomic};
use crate::games::{self, shard_name, GameError, GameFile, MAX_SHARD_BYTES, SHARD_ZSTD_LEVEL};

pub use crate::games::{SHARD_PREFIX, SHARD_SUFFIX};
const LEGACY_PREFIX: &str = "game-";
const LEGACY_SUFFIX: &str = ".json";

/// Why a games file or folder cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShardError {
    /// The file or folder is there but cannot be read.
    #[error("cannot read {}", path.display())]
    Unreadable {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a games file: not zstd, cut short, larger
    /// decompressed than a shard may be, not text; a one-game file that
    /// is not a game; with [`read_all`], a game refused.
    #[error("{}: {why}", path.display())]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

/// How late a shard may arrive (after shards of other workers finished
/// later) and still be read exactly once: the trainer's store listing looks
/// back this far, and each checkpoint names the files it read in this span
/// before its cursor.
pub const LATE: Duration = Duration::from_secs(600);

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

/// The worker that wrote the shard `name` and its sequence number among
/// that worker's (None for a name that is not a shard's).
fn worker_and_sequence(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(SHARD_PREFIX)?.strip_suffix(SHARD_SUFFIX)?;
    let (_finished, rest) = rest.split_once('-')?;
    rest.rsplit_once('-').filter(|(worker, _)| !worker.is_empty())
}

/// The worker that wrote the shard `name` (None for a name that is not a
/// shard's).
pub fn worker_of(name: &str) -> Option<&str> {
    worker_and_sequence(name).map(|(worker, _)| worker)
}

/// Milliseconds since the Unix epoch by this machine's clock: the time in
/// shard names.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// How far ahead of this machine's clock a shard's finish time may lie.
pub const MAX_SHARD_AHEAD: Duration = Duration::from_secs(3600);

/// Checks a shard's name read from a listing before it counts: a finish
/// time, a worker, and a finish time not far in the future (listings start
/// from the newest name, so one such name would hide every new shard).
pub fn check_name(name: &str, now_ms: u64) -> Result<(), String> {
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
    /// The file's name, which orders shards by the time they were finished.
    pub name: String,
    /// Where the file is.
    pub path: PathBuf,
}

impl GamesFile {
    /// `path` as a games file, when its name is a shard's or a one-game
    /// file's.
    pub fn at(path: &Path) -> Option<GamesFile> {
        let name = path.file_name()?.to_string_lossy().into_owned();
        let shard = name.starts_with(SHARD_PREFIX) && name.ends_with(SHARD_SUFFIX);
        let legacy = name.starts_with(LEGACY_PREFIX) && name.ends_with(LEGACY_SUFFIX);
        (shard || legacy).then(|| GamesFile { legacy, name, path: path.to_path_buf() })
    }
}

/// The games files of `dir`, oldest first. Hidden files (temporaries) and
/// other names are left out.
pub fn list(dir: &Path) -> Result<Vec<GamesFile>, ShardError> {
    let unreadable = |source| ShardError::Unreadable { path: dir.to_path_buf(), source };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        files.extend(GamesFile::at(&entry.map_err(unreadable)?.path()));
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
/// could not be read (`FILE line N: reason`), which are left out.
#[derive(Debug, Default)]
pub struct FileGames {
    /// The games read, in the file's order.
    pub games: Vec<GameFile>,
    /// Each game left out: `FILE line N: reason`.
    pub bad: Vec<String>,
}

/// Reads a games file. A file that cannot be read or decompressed is an
/// error; a bad line in a shard loses that game only.
pub fn read(file: &GamesFile) -> Result<FileGames, ShardError> {
    let path = &file.path;
    let damaged = |why: String| ShardError::Damaged { path: path.clone(), why };
    let bytes = std::fs::read(path).map_err(|source| ShardError::Unreadable { path: path.clone(), source })?;
    if file.legacy {
        let game = GameFile::parse(&String::from_utf8_lossy(&bytes)).map_err(|e| damaged(e.to_string()))?;
        return Ok(FileGames { games: vec![game], bad: Vec::new() });
    }
    let mut out = parse(&bytes).map_err(damaged)?;
    for bad in out.bad.iter_mut() {
        *bad = format!("{} {bad}", path.display());
    }
    Ok(out)
}

/// Reads a shard's bytes: zstd-compressed JSON lines, one game each. Bad
/// lines are reported (`line N: reason`) and left out; the error says why
/// the bytes are not a shard.
pub fn parse(bytes: &[u8]) -> Result<FileGames, String> {
    let mut out = FileGames::default();
    for (line, game) in parse_lines(bytes)? {
        match game {
            Ok(game) => out.games.push(game),
            Err(e) => out.bad.push(format!("line {line}: {e}")),
        }
    }
    Ok(out)
}

/// A shard's game lines in order, by their line numbers (from 1): the
/// game, or why it is refused.
pub type GameLines = Vec<(usize, Result<GameFile, GameError>)>;

/// Each game line of a shard in order ([`GameLines`]); the error says why
/// the bytes are not a shard.
pub fn parse_lines(bytes: &[u8]) -> Result<GameLines, String> {
    let text = decompress(bytes, MAX_SHARD_BYTES)?;
    let text = String::from_utf8(text).map_err(|_| "not UTF-8 text")?;
    Ok(games::parse_lines(&text))
}

/// `bytes` decompressed, refused past `limit` bytes.
fn decompress(bytes: &[u8], limit: u64) -> Result<Vec<u8>, String> {
    let decoder = zstd::Decoder::new(bytes).map_err(|e| format!("not a zstd-compressed shard ({e})"))?;
    let mut text = Vec::new();
    let read = decoder.take(limit + 1).read_to_end(&mut text);
    read.map_err(|e| format!("not a zstd-compressed shard, or cut short ({e})"))?;
    if text.len() as u64 > limit {
        return Err(format!("decompresses to more than {limit} bytes, the most a shard may hold"));
    }
    Ok(text)
}

/// Every game in `dir`, oldest first; any unreadable file or game is an
/// error (the test suites read their runs' games so).
pub fn read_all(dir: &Path) -> Result<Vec<GameFile>, ShardError> {
    let mut games = Vec::new();
    for file in list(dir)? {
        let read = read(&file)?;
        if let Some(bad) = read.bad.into_iter().next() {
            // `bad` names the file already: `FILE line N: reason`.
            let why = bad.strip_prefix(&format!("{} ", file.path.display())).map(str::to_owned).unwrap_or(bad);
            return Err(ShardError::Damaged { path: file.path, why });
        }
        games.extend(read.games);
    }
    Ok(games)
}

/// The compressed bytes of a shard holding `games`.
pub fn encode(games: &[GameFile]) -> std::io::Result<Vec<u8>> {
    let mut encoder = zstd::Encoder::new(Vec::new(), SHARD_ZSTD_LEVEL)?;
    for game in games {
        serde_json::to_writer(&mut encoder, game)?;
        encoder.write_all(b"\n")?;
    }
    encoder.finish()
}

/// Writes `games` as the shard numbered `sequence` of `worker` in `dir`,
/// finished now, atomically and durably; returns its path and size.
pub fn write(dir: &Path, worker: &str, sequence: u64, games: &[GameFile]) -> std::io::Result<(PathBuf, u64)> {
    let bytes = encode(games)?;
    let path = dir.join(shard_name(now_ms(), worker, sequence));
    write_atomic(&path, &bytes)?;
    Ok((path, bytes.len() as u64))
}

/// The sequence number of `worker`'s next shard in `dir`: one past the
/// highest there (0 for none).
pub fn next_sequence(dir: &Path, worker: &str) -> Result<u64, ShardError> {
    let sequences = list(dir)?.into_iter().filter_map(|file| {
        let (by, sequence) = worker_and_sequence(&file.name)?;
        (by == worker).then(|| sequence.parse::<u64>().ok()).flatten()
    });
    Ok(sequences.max().map_or(0, |highest| highest.saturating_add(1)))
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
    let tag: u16 = rand::random();
    match host.is_empty() {
        true => format!("worker.{tag:04x}"),
        false => format!("{host}.{tag:04x}"),
    }
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
    pub fn new(dir: &Path, worker: &str, games_per_shard: usize, max_wait: Duration) -> std::io::Result<ShardWriter> {
        std::fs::create_dir_all(dir)
            .map_err(|e| std::io::Error::new(e.kind(), format!("cannot create games folder {}: {e}", dir.display())))?;
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
    pub fn push(&mut self, game: GameFile) -> std::io::Result<Option<PathBuf>> {
        if self.pending.is_empty() {
            self.since = Instant::now();
        }
        self.pending.push(game);
        self.flush_if_due()
    }

    /// Writes a shard if enough games wait or the oldest has waited long enough.
    pub fn flush_if_due(&mut self) -> std::io::Result<Option<PathBuf>> {
        let due = self.pending.len() >= self.games_per_shard
            || (!self.pending.is_empty() && self.since.elapsed() >= self.max_wait);
        match due {
            true => self.flush(),
            false => Ok(None),
        }
    }

    /// Writes the waiting games as one shard, if any.
    pub fn flush(&mut self) -> std::io::Result<Option<PathBuf>> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        let (path, bytes) = write(&self.dir, &self.worker, self.written, &self.pending)?;
        self.written += 1;
        self.bytes += bytes;
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
        let err = decompress(&bomb, limit).unwrap_err();
        assert!(err.contains("decompresses to more than 1048576 bytes"), "{err}");
        let fits = zstd::encode_all(&vec![b' '; limit as usize][..], 1).unwrap();
        assert_eq!(decompress(&fits, limit).unwrap().len(), limit as usize);
        let err = parse(b"not zstd").unwrap_err();
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

    /// A worker's next shard is numbered past its highest, whatever other
    /// workers (one whose name ends like it included) wrote, and whatever
    /// was removed below it.
    #[test]
    fn the_next_sequence_is_past_the_workers_highest() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(next_sequence(dir.path(), "a").unwrap(), 0);
        // A name from before worker names were checked may hold a '-'.
        for (worker, sequence) in [("a", 0), ("a", 4), ("b.a", 9), ("x-a", 7)] {
            std::fs::write(dir.path().join(shard_name(1, worker, sequence)), b"").unwrap();
        }
        assert_eq!(next_sequence(dir.path(), "a").unwrap(), 5);
        assert_eq!(next_sequence(dir.path(), "b.a").unwrap(), 10);
        assert_eq!(next_sequence(dir.path(), "c").unwrap(), 0);
    }

    /// A whole game of random legal actions.
    fn random_game(seed: u64) -> GameFile {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut pos = crate::rules::Position::new(crate::rules::Variant::Basic);
        let mut actions = Vec::new();
        while !pos.is_over() {
            let legal = pos.legal_actions();
            let action = legal[rng.random_range(0..legal.len())];
            pos.play_unchecked(action);
            actions.push(action);
        }
        GameFile {
            format: games::GAME_FORMAT,
            encoding_version: crate::encoding::ENCODING_VERSION,
            variant: crate::rules::Variant::Basic,
            actions,
            samples: Vec::new(),
            result: games::GameResult::of(&pos),
            model: "random".into(),
            seed: Some(seed),
            worker: Some("w".into()),
            config: serde_json::Value::Null,
        }
    }

    /// Games written are read back, in order, by name and by folder.
    #[test]
    fn shards_written_are_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let games: Vec<GameFile> = (0..3).map(random_game).collect();
        let mut writer = ShardWriter::new(dir.path(), "w", 2, Duration::MAX).unwrap();
        for g in &games {
            writer.push(g.clone()).unwrap();
        }
        assert_eq!((writer.shards(), writer.pending()), (1, 1));
        writer.flush().unwrap();
        let files = list(dir.path()).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(read(&files[0]).unwrap().games, games[..2]);
        assert_eq!(read_all(dir.path()).unwrap(), games);
        assert_eq!(next_sequence(dir.path(), "w").unwrap(), 2);
    }
}
