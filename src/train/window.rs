//! The window of recent samples read from the games folder, and random
//! minibatches, each position under a random board symmetry.
//!
//! The window holds the samples of the newest games, oldest first, and
//! forgets whole games from the front as it grows past its size. A game
//! already in the window (the same actions: one seed played twice) is
//! refused with a warning. A resumed trainer's window reads the files its
//! checkpoint's trainer had not read (new samples, counted for pacing; see
//! [`GamesRead`]), then the counted ones from the newest back, only as far
//! as its size needs.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use rand::Rng;

use crate::encoding::{INPUT_SIZE, NUM_ACTIONS};
use crate::games::{EndReason, GameFile};
use crate::rules::{Color, Symmetry};
use crate::samples::{game_samples, write_row, Targets, TrainingSample, AUX_TARGETS};
use crate::shards::{self, GamesFile};

use super::games_read::GamesRead;
use super::source::GamesSource;

/// What one look at the games folder found.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Games files read.
    pub files: usize,
    /// Older games files passed over, not needed by the window.
    pub passed_over: usize,
    /// Games read into the window.
    pub games: usize,
    /// Their samples.
    pub samples: usize,
    /// Files or games that could not be read, and why; left out.
    pub skipped: Vec<(PathBuf, String)>,
    /// Games refused because the window already holds them.
    pub duplicates: usize,
    /// The actions of the games read, in all.
    pub total_actions: usize,
    /// Games read that ended with a player left without GIPF pieces.
    pub no_gipf_piece: usize,
    /// Games read that ended with a player to push and none in reserve.
    pub no_reserve: usize,
    /// Games read that reached the length cap.
    pub ply_cap: usize,
    /// Games read that White won.
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

/// The samples of the most recent games, oldest first.
#[derive(Default)]
pub struct Window {
    /// How each game read becomes samples (from `[train]`).
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
    /// What this window has read, the checkpoint's included (its `recent`
    /// is filled by [`Window::read`]).
    progress: GamesRead,
    /// Samples ever read (from a checkpoint on, for a resumed trainer), which
    /// set the window's size and the pacing.
    pub total_samples: u64,
    /// Games ever read, counted as `total_samples` is.
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
    /// The samples in the batch.
    pub size: usize,
    /// The encoded positions, `size * INPUT_SIZE`.
    pub input: Vec<f32>,
    /// The policy targets, `size * NUM_ACTIONS`; all 0 for a value-only sample.
    pub policy: Vec<f32>,
    /// 1 for legal actions, 0 for the others.
    pub legal: Vec<f32>,
    /// The value targets, in [-1, 1], for the player to act.
    pub value: Vec<f32>,
    /// 1 where the sample has a policy target, 0 for value-only samples.
    pub policy_mask: Vec<f32>,
    /// `size * AUX_TARGETS`.
    pub aux: Vec<f32>,
    /// Each sample's actions to the game's end.
    pub plies_to_end: Vec<u16>,
}

impl Window {
    /// An empty window of samples with `targets` from games of `variant`.
    pub fn new(targets: Targets, variant: crate::rules::Variant) -> Window {
        Window { targets, variant: Some(variant), ..Window::default() }
    }

    /// This window continuing a trainer's count: `samples_read` samples were
    /// read from the files that `read` describes (as a checkpoint records it).
    pub fn resumed(self, samples_read: u64, read: GamesRead) -> Window {
        Window {
            total_samples: samples_read,
            progress: GamesRead { recent: Vec::new(), ..read.clone() },
            counted_recent: read.recent.iter().cloned().collect(),
            counted: read,
            ..self
        }
    }

    /// What this window has read, as a checkpoint records it.
    pub fn read(&self) -> GamesRead {
        self.progress.with_recent(self.seen.iter().chain(&self.counted_recent))
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
        let mut files = source.list()?;
        files.retain(|f| !self.seen.contains(&f.name));
        let counted = |f: &GamesFile| self.counted.counted(&f.name, &self.counted_recent);
        let (old, new): (Vec<GamesFile>, Vec<GamesFile>) = files.into_iter().partition(counted);
        let mut report = LoadReport::default();
        let mut openings = HashSet::new();
        'read: {
            for file in new {
                if !source.fetch(&file) {
                    break 'read;
                }
                self.read_file(&file, false, &mut report, &mut openings);
                self.trim(size(self.total_samples));
            }
            for file in old.into_iter().rev() {
                if self.samples.len() >= size(self.total_samples) {
                    report.passed_over += 1;
                    self.progress.note_passed_over(&file.name);
                    self.left.push(file.name.clone());
                    self.seen.insert(file.name);
                    continue;
                }
                if !source.fetch(&file) {
                    break 'read;
                }
                let (samples, games) = (self.total_samples, self.total_games);
                self.read_file(&file, true, &mut report, &mut openings);
                (self.total_samples, self.total_games) = (samples, games);
                self.trim(size(self.total_samples));
            }
        }
        report.distinct_openings = openings.len();
        source.let_go(&std::mem::take(&mut self.left));
        Ok(report)
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
                // The error and its cause (the system's reason a file cannot be read).
                let e = anyhow::Error::new(e);
                tracing::warn!("skipping {}: {e:#}", file.path.display());
                report.skipped.push((file.path.clone(), format!("{e:#}")));
                return;
            }
        };
        // Only a file read moves the cursor: a damaged one named in the
        // future would otherwise hide the shards named before it.
        self.progress.note_read(&file.name);
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

    /// The samples in the window.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether the window holds no sample.
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
            let sym = Symmetry::random(rng);
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
    use crate::config::Config;
    use crate::selfplay::{ConstantForward, Generator};
    use crate::shards::ShardWriter;

    fn tiny() -> Config {
        Config::parse(include_str!("../../configs/tiny.toml")).unwrap()
    }

    /// Plays `n` games of self-play with `config` from `seed`, every leaf
    /// valued alike, and writes them into `out` as one shard of `worker`.
    fn play_with(config: Config, out: &Path, n: u64, seed: u64, worker: &str) {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let mut generator = Generator::new(config, seed, Some(n), worker);
        let mut writer = ShardWriter::new(out, worker, n as usize, std::time::Duration::from_secs(3600)).unwrap();
        while generator.active() > 0 {
            for game in generator.step(&mut ConstantForward, &pool, "constant").unwrap() {
                writer.push(game).unwrap();
            }
        }
        writer.flush().unwrap();
    }

    /// An empty window for the tiny configuration's games.
    fn window() -> Window {
        let config = tiny();
        Window::new(config.train.targets(), config.game.variant)
    }

    /// [`play_with`] the tiny configuration.
    fn play(out: &Path, n: u64, seed: u64, worker: &str) {
        play_with(tiny(), out, n, seed, worker);
    }

    /// The config's bound on the window's memory (`WINDOW_SAMPLE_BYTES` a
    /// sample) holds what a window of real games takes, as it counts it.
    #[test]
    fn a_window_sample_fits_the_configs_bound() {
        let dir = tempfile::tempdir().unwrap();
        play(dir.path(), 4, 3, "test");
        let config = tiny();
        let mut window = Window::new(config.train.targets(), config.game.variant);
        window.load_new(dir.path(), |_| 1_000_000).unwrap();
        assert!(window.len() > 100, "{} samples", window.len());
        let per_sample = window.memory_bytes() as f64 / window.len() as f64;
        let searched = window.samples().filter(|s| !s.policy.is_empty()).count();
        assert!(searched > 0, "some samples carry a policy target");
        // At least each sample's own record; at most the bound the config sizes memory by.
        assert!(per_sample >= size_of::<TrainingSample>() as f64, "{per_sample} bytes a sample");
        assert!(per_sample <= crate::config::WINDOW_SAMPLE_BYTES as f64, "{per_sample} bytes a sample");
    }

    #[test]
    fn corrupt_games_are_skipped_and_a_missing_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        play(dir.path(), 1, 9, "test");
        std::fs::write(dir.path().join("game-broken.json"), "{\"format\": 1, \"vari").unwrap();
        let mut window = Window::default();
        let report = window.load_new(dir.path(), |_| 1000).unwrap();
        assert_eq!(report.games, 1);
        assert_eq!(report.skipped.len(), 1);
        assert!(report.skipped[0].0.ends_with("game-broken.json"));
        let err = Window::default().load_new(Path::new("/no/such/games"), |_| 1000).unwrap_err();
        let unreadable = err.chain().find_map(|e| e.downcast_ref::<crate::shards::ShardError>());
        assert!(matches!(unreadable, Some(crate::shards::ShardError::Unreadable { .. })), "{err:#}");
        assert!(format!("{err:#}").contains("cannot read /no/such/games"), "{err:#}");
    }

    /// A resumed window reads the games files after its checkpoint's cursor as
    /// new samples, and of the older ones only what its size needs; a game it
    /// already holds is refused.
    #[test]
    fn a_resumed_window_reads_only_what_it_needs_and_refuses_repeats() {
        let dir = tempfile::tempdir().unwrap();
        for seed in [1, 2, 3] {
            play(dir.path(), 2, seed, &format!("w{seed}"));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let files = shards::list(dir.path()).unwrap();
        assert_eq!(files.len(), 3);
        let mut full = window();
        full.load_new(dir.path(), |_| 100_000).unwrap();
        let mut first_two = window();
        let only = tempfile::tempdir().unwrap();
        for file in &files[..2] {
            std::fs::copy(&file.path, only.path().join(&file.name)).unwrap();
        }
        first_two.load_new(only.path(), |_| 100_000).unwrap();
        let counted = first_two.total_samples;
        let newest_samples = full.total_samples - counted;

        // Resumed after the first two files, with room for a little more than the third.
        assert_eq!(first_two.read().cursor.as_ref(), Some(&files[1].name));
        let mut resumed = window().resumed(counted, first_two.read());
        let room = newest_samples as usize + 1;
        let report = resumed.load_new(dir.path(), |_| room).unwrap();
        assert_eq!(
            resumed.total_samples, full.total_samples,
            "the new file's samples are counted, the old ones not again"
        );
        assert_eq!(report.files, 2, "the new file, then the newest old one while there was room");
        assert_eq!(report.passed_over, 1, "the oldest file is not read");
        assert!(resumed.len() >= room && resumed.len() < full.len(), "{} samples", resumed.len());

        // A copy of a shard under another name: its games are refused.
        let copy = dir.path().join(files[2].name.replace("-000000.", "-000001."));
        std::fs::copy(&files[2].path, &copy).unwrap();
        let report = resumed.load_new(dir.path(), |_| room).unwrap();
        assert_eq!((report.games, report.duplicates), (0, 2));
    }

    /// A shard named before the cursor that the checkpoint's trainer had not
    /// read (it arrived late, as from a worker whose upload waited) is new to a
    /// resumed window: its samples are counted once.
    #[test]
    fn a_shard_arriving_late_is_new_to_a_resumed_window() {
        let dir = tempfile::tempdir().unwrap();
        for seed in [1, 2, 3] {
            play(dir.path(), 1, seed, &format!("w{seed}"));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let files = shards::list(dir.path()).unwrap();
        let mut full = window();
        full.load_new(dir.path(), |_| 100_000).unwrap();
        // The checkpoint's trainer read the first and the third; the second came later.
        let early = tempfile::tempdir().unwrap();
        for file in [&files[0], &files[2]] {
            std::fs::copy(&file.path, early.path().join(&file.name)).unwrap();
        }
        let mut before = window();
        before.load_new(early.path(), |_| 100_000).unwrap();
        assert_eq!(before.read().recent, [files[0].name.clone(), files[2].name.clone()]);

        let mut resumed = window().resumed(before.total_samples, before.read());
        let report = resumed.load_new(dir.path(), |_| 100_000).unwrap();
        assert_eq!(resumed.total_samples, full.total_samples, "the late file's samples counted, the others not again");
        assert_eq!(report.files, 3);
    }

    /// A shard that arrives an hour late (from an outbox that waited out a long
    /// store outage, or a worker whose clock is an hour behind) is new to a
    /// resumed window too: the checkpoint records the newest shard it read of
    /// each worker, and a worker's shards arrive in the order it wrote them.
    #[test]
    fn a_shard_arriving_an_hour_late_is_new_to_a_resumed_window() {
        let dir = tempfile::tempdir().unwrap();
        for seed in [1, 2] {
            play(dir.path(), 1, seed, &format!("w{seed}"));
        }
        let mut full = window();
        full.load_new(dir.path(), |_| 100_000).unwrap();
        // The checkpoint's trainer read w1's shard; w2's, finished an hour
        // before it, arrives after the checkpoint.
        let files = shards::list(dir.path()).unwrap();
        let (read, late) = if files[0].name.contains("-w1-") { (&files[0], &files[1]) } else { (&files[1], &files[0]) };
        let early = tempfile::tempdir().unwrap();
        std::fs::copy(&read.path, early.path().join(&read.name)).unwrap();
        let mut before = window();
        before.load_new(early.path(), |_| 100_000).unwrap();
        let finished: u64 = late.name["shard-".len().."shard-".len() + 13].parse().unwrap();
        let hour_late = late.name.replacen(&format!("{finished:013}"), &format!("{:013}", finished - 3_600_000), 1);
        std::fs::rename(&late.path, dir.path().join(&hour_late)).unwrap();

        let mut resumed = window().resumed(before.total_samples, before.read());
        let report = resumed.load_new(dir.path(), |_| 100_000).unwrap();
        assert_eq!(resumed.total_samples, full.total_samples, "the late file's samples counted, the other's not again");
        let cursor_only = GamesRead { newest_by_worker: Default::default(), ..before.read() };
        let mut by_cursor = window().resumed(before.total_samples, cursor_only);
        by_cursor.load_new(dir.path(), |_| 100_000).unwrap();
        assert!(by_cursor.total_samples < full.total_samples, "a cursor alone takes the late file as read");
        assert_eq!(report.files, 2);
    }

    /// A resumed window whose first look finds its folder empty (a trainer on a
    /// new machine whose store had not answered yet) does not count the
    /// checkpoint's files again when they arrive: it reads them as old ones.
    #[test]
    fn counted_files_arriving_after_the_first_look_are_not_counted_again() {
        let dir = tempfile::tempdir().unwrap();
        for seed in [1, 2] {
            play(dir.path(), 2, seed, &format!("w{seed}"));
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let mut before = window();
        before.load_new(dir.path(), |_| 100_000).unwrap();

        let mut resumed = window().resumed(before.total_samples, before.read());
        let empty = tempfile::tempdir().unwrap();
        resumed.load_new(empty.path(), |_| 100_000).unwrap();
        assert!(resumed.is_empty());
        let report = resumed.load_new(dir.path(), |_| 100_000).unwrap();
        assert_eq!(resumed.total_samples, before.total_samples, "the checkpoint's files are not counted twice");
        assert_eq!((report.files, resumed.len()), (2, before.len()), "read into the window, which had room");
    }

    /// Games of another variant than the run's are skipped with a warning
    /// naming the shard, never trained on (a standard run trained on basic
    /// games without a word).
    #[test]
    fn games_of_another_variant_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let mut basic = tiny();
        basic.game.variant = crate::rules::Variant::Basic;
        play_with(basic, dir.path(), 2, 3, "b");
        let mut window = window();
        let report = window.load_new(dir.path(), |_| 100_000).unwrap();
        assert!(window.is_empty(), "{} samples of basic games in a standard window", window.len());
        assert_eq!(report.skipped.len(), 2, "{:?}", report.skipped);
        assert!(
            report.skipped[0].1.contains("a game of the basic variant, not the run's standard"),
            "{:?}",
            report.skipped
        );
    }

    /// A shard during whose reading the reader stopped twice (killed for its
    /// memory, say: `.reading` names it) is set aside on the next start, with
    /// a warning, instead of killing every restart; the other shards train.
    #[test]
    fn a_shard_that_stopped_its_reader_twice_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        play(dir.path(), 2, 9, "a");
        play(dir.path(), 2, 10, "b");
        let mut shards = shards::list(dir.path()).unwrap();
        shards::sort(&mut shards);
        let killer = shards.first().unwrap().name.clone();
        std::fs::write(dir.path().join(".reading"), format!(r#"{{"file": "{killer}", "tries": 2}}"#)).unwrap();
        let mut window = window();
        let report = window.load_new(dir.path(), |_| 100_000).unwrap();
        assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
        assert!(report.skipped[0].1.contains("its reader stopped while reading it, twice"), "{:?}", report.skipped);
        assert!(dir.path().join(format!(".stopped-reader-{killer}")).is_file());
        assert!(!dir.path().join(".reading").exists(), "no mark left once the files are read");
        assert_eq!(shards.len(), 2);
        assert!(!window.is_empty(), "the other shard trains");
    }
}
