//! Training data: the window of recent samples read from the games folder,
//! and random minibatches, each position under a random board symmetry.
//!
//! The window holds the samples of the newest games, oldest first, and
//! forgets whole games from the front as it grows past its size. A game
//! already in the window (the same actions: one seed played twice) is
//! refused with a warning. A resumed trainer's window reads the files its
//! checkpoint's trainer had not read (new samples, counted for pacing: those
//! after its newest file of each worker, and those that arrived late), then
//! the counted ones from the newest back, only as far as its size needs.
//! With a run in a store, the local copy of a shard is removed once none of
//! its games is in the window (the store keeps the original).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use rand::Rng;

use crate::encoding::{INPUT_SIZE, NUM_ACTIONS};
use crate::games::{EndReason, GameFile};
use crate::rules::{Color, Symmetry, NUM_SYMMETRIES};
use crate::samples::{game_samples, write_row, Targets, TrainingSample, AUX_TARGETS};
use crate::shards::{self, GamesFile};
use crate::store::ShardFeed;

/// What one look at the games folder found.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Games files read.
    pub files: usize,
    /// Older games files passed over, not needed by the window.
    pub passed_over: usize,
    pub games: usize,
    pub samples: usize,
    /// Files or games that could not be read, and why; left out.
    pub skipped: Vec<(PathBuf, String)>,
    /// Games refused because the window already holds them.
    pub duplicates: usize,
    pub total_actions: usize,
    pub no_gipf_piece: usize,
    pub no_reserve: usize,
    pub ply_cap: usize,
    pub white_wins: usize,
    /// Distinct openings (the first [`OPENING_LENGTH`] actions) among the games read.
    pub distinct_openings: usize,
}

impl LoadReport {
    /// Counts a game read into the window with its `samples`.
    fn count(&mut self, game: &GameFile, samples: usize) {
        self.games += 1;
        self.samples += samples;
        self.total_actions += game.actions.len();
        match game.result.reason {
            EndReason::NoGipfPiece => self.no_gipf_piece += 1,
            EndReason::NoReserve => self.no_reserve += 1,
            EndReason::PlyCap => self.ply_cap += 1,
        }
        self.white_wins += (game.result.winner == Some(Color::White)) as usize;
    }
}

/// Actions that make an opening, for counting distinct ones.
pub const OPENING_LENGTH: usize = 10;

/// Where a window reads games: a local folder, and with a run in a store
/// the shards a feed lists there, downloaded into the folder when read.
#[derive(Clone, Copy)]
pub struct GamesSource<'a> {
    pub dir: &'a Path,
    pub feed: Option<&'a ShardFeed>,
}

impl<'a> GamesSource<'a> {
    /// The games in a local folder only.
    pub fn folder(dir: &'a Path) -> GamesSource<'a> {
        GamesSource { dir, feed: None }
    }
}

/// What a checkpoint records of the games files its trainer read, so that a
/// resumed one reads each file's samples as new exactly once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GamesRead {
    /// The newest games file read.
    pub cursor: Option<String>,
    /// The newest shard read of each worker. A worker writes and uploads
    /// its shards in order, so its older ones were there to be read, however
    /// late they all came (an outbox that waited out an outage, a skewed
    /// clock); one entry per self-play process that wrote to the run.
    pub newest_by_worker: BTreeMap<String, String>,
    /// The files read within [`shards::LATE`] before their worker's newest
    /// (before the cursor, for files without a worker and checkpoints
    /// without `newest_by_worker`): a file named in that span but not here
    /// arrived out of order and is new.
    pub recent: Vec<String>,
}

impl GamesRead {
    /// The newest file read that `name` is judged against: its worker's, or
    /// the cursor for a file without a worker and for a record without
    /// `newest_by_worker` (None: nothing of it was read).
    fn newest_for(&self, name: &str) -> Option<&String> {
        match shards::worker_of(name).filter(|_| !self.newest_by_worker.is_empty()) {
            Some(worker) => self.newest_by_worker.get(worker),
            None => self.cursor.as_ref(),
        }
    }

    /// The first name of the span in which `name`'s arrival out of order is
    /// looked for: [`shards::LATE`] before [`GamesRead::newest_for`] it.
    fn horizon(&self, name: &str) -> Option<String> {
        shards::late_horizon(self.newest_for(name)?)
    }

    /// Whether the file `name` was read (or passed over) by this record's
    /// trainer.
    fn counted(&self, name: &str, recent: &HashSet<String>) -> bool {
        self.newest_for(name).is_some_and(|newest| {
            name <= newest.as_str() && (self.horizon(name).is_none_or(|h| name < h.as_str()) || recent.contains(name))
        })
    }
}

/// The samples of the most recent games, oldest first.
#[derive(Default)]
pub struct Window {
    pub targets: Targets,
    /// The run's variant: games of another are refused (none: any).
    pub variant: Option<crate::rules::Variant>,
    samples: VecDeque<TrainingSample>,
    /// The games in the window, oldest first.
    games: VecDeque<WindowGame>,
    /// Games in the window by the file they came from.
    games_of_file: HashMap<Arc<str>, usize>,
    /// Files read or passed over none of whose games is in the window.
    left: Vec<String>,
    fingerprints: HashMap<u64, u32>,
    /// Games files read or passed over, by name.
    seen: HashSet<String>,
    /// What the checkpoint this window resumes from had read.
    counted: GamesRead,
    counted_recent: HashSet<String>,
    /// The newest games file read, and of each worker (from the checkpoint's on).
    pub cursor: Option<String>,
    newest_by_worker: BTreeMap<String, String>,
    /// Samples ever read (from a checkpoint on, for a resumed trainer), which
    /// set the window's size and the pacing.
    pub total_samples: u64,
    pub total_games: u64,
    /// Games files (shards) read since this window started.
    pub total_files: u64,
}

/// A game in the window: its fingerprint, sample count and file.
struct WindowGame {
    fingerprint: u64,
    samples: usize,
    file: Arc<str>,
}

/// A minibatch as flat arrays, ready for tensors.
#[derive(Clone)]
pub struct Batch {
    pub size: usize,
    pub input: Vec<f32>,
    pub policy: Vec<f32>,
    /// 1 for legal actions, 0 for the others.
    pub legal: Vec<f32>,
    pub value: Vec<f32>,
    /// 1 where the sample has a policy target, 0 for value-only samples.
    pub policy_mask: Vec<f32>,
    /// `size * AUX_TARGETS`.
    pub aux: Vec<f32>,
    /// Each sample's actions to the game's end.
    pub plies_to_end: Vec<u16>,
}

/// Removes the local copies of shards that the store keeps (a warning for
/// each that cannot be removed).
fn remove_local_copies(dir: &Path, names: &[String]) {
    for name in names {
        match std::fs::remove_file(dir.join(name)) {
            Ok(()) => tracing::debug!("{name} left the window; its local copy removed"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("removing the local copy of {name}: {e}"),
        }
    }
}

impl Window {
    /// An empty window for training with `config`.
    pub fn new(config: &crate::config::Config) -> Window {
        Window { targets: config.train.targets(), variant: Some(config.game.variant), ..Window::default() }
    }

    /// A window that continues a trainer's count: `samples_read` samples were
    /// read from the files that `read` describes (as a checkpoint records it).
    pub fn resume(config: &crate::config::Config, samples_read: u64, read: GamesRead) -> Window {
        Window {
            total_samples: samples_read,
            cursor: read.cursor.clone(),
            newest_by_worker: read.newest_by_worker.clone(),
            counted_recent: read.recent.iter().cloned().collect(),
            counted: read,
            ..Window::new(config)
        }
    }

    /// What this window has read, as a checkpoint records it.
    pub fn read(&self) -> GamesRead {
        let mut read =
            GamesRead { cursor: self.cursor.clone(), newest_by_worker: self.newest_by_worker.clone(), recent: vec![] };
        let names = self.seen.iter().chain(&self.counted_recent);
        let mut recent: Vec<String> =
            names.filter(|name| read.horizon(name).is_some_and(|h| **name >= h)).cloned().collect();
        recent.sort();
        recent.dedup();
        read.recent = recent;
        read
    }

    /// Reads the games files in `dir` not read before, keeping the window at
    /// `size(total samples)`: the new ones all, oldest first (their samples
    /// are counted as read), then those a resumed trainer counted before,
    /// from the newest back, only while the window has room. A file or game
    /// that cannot be read is reported and skipped.
    pub fn load_new(&mut self, dir: &Path, size: impl Fn(u64) -> usize) -> Result<LoadReport> {
        self.load(GamesSource::folder(dir), size)
    }

    /// [`Window::load_new`] from a source: with a feed, the shards it lists
    /// are downloaded into the folder only when the window reads them. A
    /// download that fails ends this look (warning): the rest waits for the
    /// next.
    pub fn load(&mut self, source: GamesSource, size: impl Fn(u64) -> usize) -> Result<LoadReport> {
        let GamesSource { dir, feed } = source;
        let mut files = shards::list(dir)?;
        if let Some(feed) = feed {
            let local: HashSet<String> = files.iter().map(|f| f.name.clone()).collect();
            let remote = feed.listed().filter(|name| !local.contains(*name));
            files.extend(remote.map(|name| GamesFile { legacy: false, name: name.clone(), path: dir.join(name) }));
            shards::sort(&mut files);
        }
        files.retain(|f| !self.seen.contains(&f.name));
        let counted = |f: &GamesFile| self.counted.counted(&f.name, &self.counted_recent);
        let (old, new): (Vec<GamesFile>, Vec<GamesFile>) = files.into_iter().partition(counted);
        let mut report = LoadReport::default();
        let mut openings = HashSet::new();
        let fetched = |file: &GamesFile| match feed {
            Some(feed) if !file.path.exists() => feed.fetch(&file.name, dir).map_err(|e| {
                tracing::warn!("fetching {}: {e:#} (trying again later)", file.name);
            }),
            _ => Ok(()),
        };
        'read: {
            for file in new {
                if fetched(&file).is_err() {
                    break 'read;
                }
                self.read_file(&file, false, &mut report, &mut openings);
                self.trim(size(self.total_samples));
            }
            for file in old.into_iter().rev() {
                if self.samples.len() >= size(self.total_samples) {
                    report.passed_over += 1;
                    self.note_newest_of_worker(&file.name);
                    self.left.push(file.name.clone());
                    self.seen.insert(file.name);
                    continue;
                }
                if fetched(&file).is_err() {
                    break 'read;
                }
                let (samples, games) = (self.total_samples, self.total_games);
                self.read_file(&file, true, &mut report, &mut openings);
                (self.total_samples, self.total_games) = (samples, games);
                self.trim(size(self.total_samples));
            }
        }
        report.distinct_openings = openings.len();
        let left = std::mem::take(&mut self.left);
        if feed.is_some() {
            remove_local_copies(dir, &left);
        }
        Ok(report)
    }

    fn note_newest_of_worker(&mut self, name: &str) {
        if let Some(worker) = shards::worker_of(name) {
            let newest = self.newest_by_worker.entry(worker.to_string()).or_default();
            if name > newest.as_str() {
                *newest = name.to_string();
            }
        }
    }

    /// Reads one games file into the back of the window (or the front, when
    /// reading from the newest back), counting its samples as read.
    fn read_file(
        &mut self,
        file: &GamesFile,
        to_front: bool,
        report: &mut LoadReport,
        openings: &mut HashSet<Vec<crate::rules::Action>>,
    ) {
        self.seen.insert(file.name.clone());
        let folder = file.path.parent().unwrap_or(Path::new("."));
        let Some(_mark) = super::reading::start(folder, &file.name) else {
            report.skipped.push((file.path.clone(), "its reader stopped while reading it, twice: set aside".into()));
            self.left.push(file.name.clone());
            return;
        };
        let read = match shards::read(file) {
            Ok(read) => read,
            Err(e) => {
                tracing::warn!("skipping {}: {e:#}", file.path.display());
                report.skipped.push((file.path.clone(), format!("{e:#}")));
                return;
            }
        };
        // Only a file read moves the cursor: a damaged one named in the
        // future would otherwise hide the shards named before it.
        if self.cursor.as_ref().is_none_or(|c| file.name > *c) {
            self.cursor = Some(file.name.clone());
        }
        self.note_newest_of_worker(&file.name);
        report.files += 1;
        self.total_files += 1;
        for bad in read.bad {
            tracing::warn!("skipping a game of {}: {bad}", file.path.display());
            report.skipped.push((file.path.clone(), bad));
        }
        let mut games = Vec::with_capacity(read.games.len());
        for game in read.games {
            if let Some(variant) = self.variant.filter(|&v| v != game.variant) {
                let why = format!("a game of the {} variant, not the run's {variant}", game.variant);
                tracing::warn!("skipping {why} in {}", file.path.display());
                report.skipped.push((file.path.clone(), why));
                continue;
            }
            let fingerprint = game.fingerprint();
            if self.fingerprints.contains_key(&fingerprint) {
                tracing::warn!("{}: a game the window already holds (the same actions), refused", file.path.display());
                report.duplicates += 1;
                continue;
            }
            match game_samples(&game, self.targets) {
                Ok(samples) => {
                    *self.fingerprints.entry(fingerprint).or_default() += 1;
                    report.count(&game, samples.len());
                    openings.insert(game.actions.iter().take(OPENING_LENGTH).copied().collect::<Vec<_>>());
                    self.total_samples += samples.len() as u64;
                    self.total_games += 1;
                    games.push((fingerprint, samples));
                }
                Err(e) => {
                    tracing::warn!("skipping a game of {}: {e:#}", file.path.display());
                    report.skipped.push((file.path.clone(), format!("{e:#}")));
                }
            }
        }
        if games.is_empty() {
            self.left.push(file.name.clone());
            return;
        }
        self.insert(&file.name, games, to_front);
    }

    /// Puts a file's games into the window: at the front (older than
    /// every game there) or at the back.
    fn insert(&mut self, file: &str, games: Vec<(u64, Vec<TrainingSample>)>, to_front: bool) {
        let name: Arc<str> = file.into();
        self.games_of_file.insert(name.clone(), games.len());
        let game = |fingerprint, samples: &Vec<TrainingSample>| WindowGame {
            fingerprint,
            samples: samples.len(),
            file: name.clone(),
        };
        if to_front {
            for (fingerprint, samples) in games.into_iter().rev() {
                self.games.push_front(game(fingerprint, &samples));
                for sample in samples.into_iter().rev() {
                    self.samples.push_front(sample);
                }
            }
        } else {
            for (fingerprint, samples) in games {
                self.games.push_back(game(fingerprint, &samples));
                self.samples.extend(samples);
            }
        }
    }

    /// Forgets the oldest games while the window holds more than `keep`
    /// samples without them.
    fn trim(&mut self, keep: usize) {
        while let Some(game) = self.games.front() {
            if self.samples.len() - game.samples < keep {
                break;
            }
            let game = self.games.pop_front().expect("a front game");
            self.samples.drain(..game.samples);
            if let Some(count) = self.fingerprints.get_mut(&game.fingerprint) {
                *count -= 1;
                if *count == 0 {
                    self.fingerprints.remove(&game.fingerprint);
                }
            }
            if let Some(count) = self.games_of_file.get_mut(&game.file) {
                *count -= 1;
                if *count == 0 {
                    self.games_of_file.remove(&game.file);
                    self.left.push(game.file.to_string());
                }
            }
        }
    }

    /// Games in the window.
    pub fn games(&self) -> usize {
        self.games.len()
    }

    /// The bytes the window's samples take in memory (positions, policy
    /// targets, bookkeeping), for measuring.
    pub fn memory_bytes(&self) -> usize {
        let policies: usize = self.samples.iter().map(|s| s.policy.capacity() * size_of::<(u16, f32)>()).sum();
        self.samples.capacity() * size_of::<TrainingSample>()
            + policies
            + self.games.capacity() * size_of::<WindowGame>()
    }

    /// The samples in the window, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = &TrainingSample> {
        self.samples.iter()
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
            aux: Vec::with_capacity(size * AUX_TARGETS),
            plies_to_end: Vec::with_capacity(size),
        };
        for i in 0..size {
            let sample = &self.samples[rng.random_range(0..self.samples.len())];
            let sym = Symmetry::new(rng.random_range(0..NUM_SYMMETRIES));
            let (inputs, rows) = (i * INPUT_SIZE..(i + 1) * INPUT_SIZE, i * NUM_ACTIONS..(i + 1) * NUM_ACTIONS);
            write_row(sample, sym, &mut batch.input[inputs], &mut batch.policy[rows.clone()], &mut batch.legal[rows]);
            batch.value.push(sample.value);
            batch.policy_mask.push(!sample.policy.is_empty() as u8 as f32);
            batch.aux.extend(sample.aux);
            batch.plies_to_end.push(sample.plies_to_end);
        }
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The config's bound on the window's memory holds a sample with a
    /// policy over 40 actions.
    #[test]
    fn a_window_sample_fits_the_configs_bound() {
        let bytes = size_of::<TrainingSample>() + 40 * size_of::<(u16, f32)>();
        assert!(bytes as u64 <= crate::config::WINDOW_SAMPLE_BYTES, "{bytes} bytes");
    }
}
