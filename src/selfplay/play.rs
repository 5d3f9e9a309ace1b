//! The self-play driver: plays games with the network of a model source and
//! writes the finished ones in shards. Each piece owns one job: [`Follower`]
//! the network and newer checkpoints, [`Sink`] the shards and their upload,
//! [`RawProbe`] the bare network's timing for benchmarks, [`Status`] the
//! progress bar and status lines; [`play`] joins them.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::report;
use anyhow::{Context, Result};
use tch::Device;

use super::{ConstantForward, Forward, Generator, Stats};
use crate::checkpoint::load_checkpoint_or_older;
use crate::config::Config;
use crate::games::GameFile;
use crate::model_source::{model_name, ModelSource};
use crate::net::Network;
use crate::shards::ShardWriter;
use crate::store::Store;

/// How often [`run`] logs a status line.
const STATUS_EVERY: Duration = Duration::from_secs(60);

/// What [`play`] is asked to do; [`PlayOptions::new`] gives the defaults.
#[derive(Clone)]
pub struct PlayOptions {
    /// The configuration: the game, the search, self-play's settings, and the
    /// network's shape for a fresh model.
    pub config: Config,
    /// Folder for the shards of finished games (created if missing).
    pub out: PathBuf,
    /// Games to play; `None` plays until `duration` runs out or the process is stopped.
    pub games: Option<u64>,
    /// Where the weights come from (a folder or a store is followed as training
    /// writes more).
    pub model: ModelSource,
    /// The device the network runs on.
    pub device: Device,
    /// Seeds the games (and a fresh network's weights); each of several workers
    /// derives its own from it.
    pub seed: u64,
    /// This process's name in shard names and games (see [`crate::shards::new_worker_id`]).
    pub worker: String,
    /// Stop after this long, leaving the games in flight unfinished and
    /// unwritten (for measurements: no drain with ever fewer games per batch).
    pub duration: Option<Duration>,
    /// Whether to show a progress bar (the first worker's only, with several).
    pub progress: bool,
    /// Measure the bare network too: every couple of seconds, pause and time
    /// its forward pass on a fixed batch of the mean size, so that both
    /// figures come from the same stretch of a shared machine's time.
    pub probe_raw: bool,
    /// Replace the network's forward pass by [`ConstantForward`], to
    /// measure self-play's CPU side alone.
    pub constant_network: bool,
    /// Upload each shard from `out` (then an outbox) into this store,
    /// create-only, removing it locally once stored.
    pub upload: Option<Arc<Store>>,
    /// Once set, stop at the next step like `duration` (finished games
    /// written, those in flight left unwritten).
    pub stop: Option<Arc<AtomicBool>>,
}

impl PlayOptions {
    /// Self-play with `model` into `out` as `worker`, on the CPU with seed
    /// 0, until stopped, quietly, without a store; callers change the rest
    /// with struct update syntax.
    pub fn new(config: Config, out: PathBuf, model: ModelSource, worker: impl Into<String>) -> PlayOptions {
        PlayOptions {
            config,
            out,
            games: None,
            model,
            device: Device::Cpu,
            seed: 0,
            worker: worker.into(),
            duration: None,
            progress: false,
            probe_raw: false,
            constant_network: false,
            upload: None,
            stop: None,
        }
    }
}

/// What [`play`] did.
#[derive(Clone, Copy, Debug)]
pub struct PlayReport {
    /// Counts of the play, all the workers' together.
    pub stats: Stats,
    /// Wall-clock seconds of the play.
    pub seconds: f64,
    /// Shards written and their bytes.
    pub shards: u64,
    /// The bytes of those shards.
    pub shard_bytes: u64,
    /// With `probe_raw`: positions and seconds of the bare forward passes
    /// timed between steps (not counted in the run's seconds), and their
    /// batch; none for several workers, whose probes share the device.
    pub raw: Option<(u64, f64, usize)>,
    /// The workers that played at once.
    pub workers: u64,
}

impl PlayReport {
    /// Positions evaluated per second, all the workers together.
    pub fn evaluations_per_second(&self) -> f64 {
        self.stats.evaluations as f64 / self.seconds
    }

    /// The share of the time a worker's playing thread spent in the
    /// network's forward passes, on average over the workers (what is left
    /// goes to the search's CPU work not overlapped with them, bookkeeping
    /// and writing games).
    pub fn forward_share(&self) -> f64 {
        self.stats.forward_seconds / (self.seconds * self.workers.max(1) as f64)
    }

    /// Positions per second of the bare network, from the probes.
    pub fn raw_per_second(&self) -> Option<f64> {
        self.raw.map(|(positions, seconds, _)| positions as f64 / seconds.max(1e-9))
    }

    /// Positions per forward pass, on average.
    pub fn mean_batch(&self) -> f64 {
        self.stats.evaluations as f64 / self.stats.batches.max(1) as f64
    }
}

/// Plays games with the network from `options.model`, writing the finished
/// ones in shards into `options.out`. With a model folder, a newer
/// checkpoint there is picked up after each finished game. A checkpoint's
/// description (encoding version, network shape) is checked before it plays.
pub fn play(options: PlayOptions) -> Result<PlayReport> {
    std::fs::create_dir_all(&options.out)
        .with_context(|| format!("cannot create games folder {}", options.out.display()))?;
    let config = &options.config;
    crate::config::warn_if_past_the_cores(
        "self-play (play.torch_threads + selfplay.search_threads)",
        config.play.torch_threads.max(1) as usize + config.search_threads(),
    );
    tch::set_num_threads(config.play.torch_threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.search_threads())
        .build()
        .context("cannot start the search threads")?;
    let mut follower = Follower::start(&options)?;
    tracing::info!(model = follower.name, device = ?options.device, kind = ?follower.network.kind(), "self-play starts");
    let mut sink = Sink::new(&options)?;
    let mut status = Status::new(options.progress, options.games);
    let mut probe = RawProbe::new(options.probe_raw);
    let mut generator = Generator::new(options.config.clone(), options.seed, options.games, &options.worker);
    let mut constant = ConstantForward;
    let start = Instant::now();
    let elapsed = |probe: &RawProbe| start.elapsed().as_secs_f64() - probe.paused;
    while generator.active() > 0 && !stopping(&options, elapsed(&probe)) {
        probe.measure(&follower.network, &generator.stats, options.config.game.variant);
        let forward: &mut dyn Forward = if options.constant_network { &mut constant } else { &mut follower.network };
        let finished = generator
            .step(forward, &pool, &follower.name)
            .map_err(|e| anyhow::anyhow!("self-play with {}: {e}", follower.name))?;
        let count = finished.len() as u64;
        sink.take(finished)?;
        if count > 0 {
            follower.pick_up_newer(&options)?;
        }
        status.step(count, &generator, sink.writer.shards(), &follower.name, elapsed(&probe));
    }
    sink.finish()?;
    status.finish();
    if crate::stop::requested() {
        tracing::info!(
            worker = options.worker,
            games = generator.stats.games,
            "self-play stopped: finished games written"
        );
    }
    let (seconds, stats) = (elapsed(&probe), generator.stats);
    let (shards, shard_bytes) = (sink.writer.shards(), sink.writer.bytes);
    Ok(PlayReport { stats, seconds, raw: probe.report(), shards, shard_bytes, workers: 1 })
}

/// Plays with a worker at each of `places` (its device and threads) at
/// once, each on a thread of its own with its own copy of the network, so
/// that one worker's batch runs while another gathers its next one: worker
/// `w` is named `{worker}.{w}` and seeded apart, the games are divided among
/// them, and with an upload each has an outbox of its own (worker 0 `out`,
/// worker `w` `out/w`; shards left in another worker's outbox by an earlier
/// run go to `out` first). A worker that fails stops the others. One place
/// plays as [`play`]. Returns their reports summed.
pub fn play_workers(options: PlayOptions, places: &[crate::layout::Worker]) -> Result<PlayReport> {
    anyhow::ensure!(!places.is_empty(), "self-play needs a worker");
    if options.upload.is_some() {
        let strays = super::stray_outboxes(&options.out, "", 1..places.len())?;
        super::gather_outboxes(&options.out, &strays)?;
    }
    let stop = options.stop.clone().unwrap_or_default();
    let for_worker = |w: usize| -> Result<PlayOptions> {
        let mut one = options.clone();
        one.config.selfplay.search_threads = places[w].search_threads;
        one.device = places[w].device;
        if places.len() > 1 {
            let n = places.len() as u64;
            one.worker = format!("{}.{w}", options.worker);
            crate::games::check_worker_name(&one.worker)?;
            one.seed = options.seed ^ (w as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            one.games = options.games.map(|games| games / n + u64::from((w as u64) < games % n));
            one.progress = options.progress && w == 0;
            one.stop = Some(stop.clone());
            if one.upload.is_some() && w > 0 {
                one.out = options.out.join(w.to_string());
            }
        }
        Ok(one)
    };
    if places.len() == 1 {
        return play(for_worker(0)?);
    }
    let workers: Vec<PlayOptions> = (0..places.len()).map(for_worker).collect::<Result<_>>()?;
    let reports: Vec<Result<PlayReport>> = std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .into_iter()
            .map(|one| {
                let stop = stop.clone();
                scope.spawn(move || {
                    let report = play(one);
                    if report.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    report
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("a self-play worker panicked"))))
            .collect()
    });
    let mut total = reports.into_iter().collect::<Result<Vec<_>>>()?.into_iter();
    let first = total.next().context("no worker reported")?;
    Ok(total.fold(first, PlayReport::add))
}

impl PlayReport {
    /// Two workers' reports as one: counts added, the longer time (they ran
    /// at once), no probe (each was taken beside the other's passes).
    fn add(self, other: PlayReport) -> PlayReport {
        let (a, b) = (self.stats, other.stats);
        let stats = Stats {
            games: a.games + b.games,
            actions: a.actions + b.actions,
            finished_actions: a.finished_actions + b.finished_actions,
            evaluations: a.evaluations + b.evaluations,
            batches: a.batches + b.batches,
            forward_seconds: a.forward_seconds + b.forward_seconds,
        };
        PlayReport {
            stats,
            seconds: self.seconds.max(other.seconds),
            shards: self.shards + other.shards,
            shard_bytes: self.shard_bytes + other.shard_bytes,
            raw: None,
            workers: self.workers + other.workers,
        }
    }
}

/// Whether the run's time is up or it was asked to stop (a signal among
/// the ways: see [`crate::stop`]).
fn stopping(options: &PlayOptions, elapsed: f64) -> bool {
    options.duration.is_some_and(|d| elapsed >= d.as_secs_f64())
        || options.stop.as_ref().is_some_and(|stop| stop.load(Ordering::Relaxed))
        || crate::stop::requested()
}

/// The network self-play plays with, following its model source: when
/// games finish, a newer checkpoint (of a folder or a store) replaces it. A checkpoint that cannot be loaded gives way to the newest older one.
struct Follower {
    network: Network,
    /// The checkpoint the source named last.
    current: Option<PathBuf>,
    /// The model's name in games and logs.
    name: String,
}

impl Follower {
    fn start(options: &PlayOptions) -> Result<Follower> {
        let current = options.model.current()?;
        let (network, name) = Follower::load(options, current.as_ref())?;
        Ok(Follower { network, current, name })
    }

    /// The network of `path` (none: a fresh one), in the config's precision.
    fn load(options: &PlayOptions, path: Option<&PathBuf>) -> Result<(Network, String)> {
        let (mut network, name) = match path {
            Some(p) => {
                let (network, _, used) = load_checkpoint_or_older(p, options.device)?;
                (network, model_name(Some(&used)))
            }
            None => (Network::new(&options.config.network, options.device, options.seed as i64), model_name(None)),
        };
        network.prepare_for_play(options.config.play.inference())?;
        Ok((network, name))
    }

    fn pick_up_newer(&mut self, options: &PlayOptions) -> Result<()> {
        if !options.model.follows_training() {
            return Ok(());
        }
        let newest = options.model.current()?;
        if newest != self.current {
            (self.network, self.name) = Follower::load(options, newest.as_ref())?;
            self.current = newest;
            tracing::info!(model = self.name, "picked up a new checkpoint");
        }
        Ok(())
    }
}

/// Where finished games go: shards in the games folder (or outbox), each
/// uploaded to the run's store when it has one, by an [`Uploader`] off the
/// playing thread. A failed upload leaves the shard in the outbox for the
/// next try.
struct Sink {
    writer: ShardWriter,
    uploader: Option<Uploader>,
}

impl Sink {
    fn new(options: &PlayOptions) -> Result<Sink> {
        let p = &options.config.selfplay;
        let shard_seconds = Duration::from_secs_f64(p.shard_seconds);
        let writer = ShardWriter::new(&options.out, &options.worker, p.shard_games, shard_seconds)?;
        let uploader = match &options.upload {
            Some(store) => Some(Uploader::start(store.clone(), options.out.clone())?),
            None => None,
        };
        Ok(Sink { writer, uploader })
    }

    /// Adds finished games, writing a shard when one is full or due.
    fn take(&mut self, games: Vec<GameFile>) -> Result<()> {
        let mut written = self.writer.flush_if_due()?.is_some();
        for game in games {
            written |= self.writer.push(game)?.is_some();
        }
        if let (true, Some(uploader)) = (written, &self.uploader) {
            uploader.wake();
        }
        Ok(())
    }

    /// Writes the games left and uploads every shard of the outbox.
    fn finish(&mut self) -> Result<()> {
        self.writer.flush()?;
        if let Some(uploader) = self.uploader.take() {
            uploader.finish();
        }
        Ok(())
    }
}

/// Uploads the outbox's shards on its own thread whenever woken, so that a
/// store that is slow or silent (each request may wait out its timeout)
/// never holds up the games.
struct Uploader {
    store: Arc<Store>,
    outbox: PathBuf,
    wake: std::sync::mpsc::Sender<()>,
    thread: std::thread::JoinHandle<()>,
}

impl Uploader {
    fn start(store: Arc<Store>, outbox: PathBuf) -> Result<Uploader> {
        let (wake, woken) = std::sync::mpsc::channel::<()>();
        let (thread_store, thread_outbox) = (store.clone(), outbox.clone());
        let thread = std::thread::Builder::new()
            .name("shard-upload".into())
            .spawn(move || {
                while woken.recv().is_ok() {
                    // One pass uploads every shard there: the wakes since are served.
                    while woken.try_recv().is_ok() {}
                    if let Err(e) = thread_store.upload_outbox(&thread_outbox, "") {
                        tracing::warn!(
                            "uploading shards: {e:#} (kept in {} for the next try)",
                            thread_outbox.display()
                        );
                    }
                }
            })
            .context("cannot start the shard uploader")?;
        Ok(Uploader { store, outbox, wake, thread })
    }

    fn wake(&self) {
        // Sending fails only once the thread is gone; `finish` uploads what it left.
        let _ = self.wake.send(());
    }

    /// Lets the upload in flight finish, ends the thread, then uploads every
    /// shard left, trying until the store takes them.
    fn finish(self) {
        drop(self.wake);
        if self.thread.join().is_err() {
            tracing::warn!("the shard uploader panicked (the outbox is uploaded next)");
        }
        crate::store::retry_forever("uploading shards", || self.store.upload_outbox(&self.outbox, ""));
    }
}

/// With `probe_raw`, every couple of seconds: the bare network timed on a
/// fixed batch of self-play's mean size, on the thread that runs
/// self-play's forward passes; its time is left out of the run's.
struct RawProbe {
    enabled: bool,
    /// The probe's input and batch, fixed at the first probe.
    input: Option<(Vec<f32>, usize)>,
    positions: u64,
    seconds: f64,
    last: Instant,
    /// Seconds spent probing.
    paused: f64,
}

impl RawProbe {
    fn new(enabled: bool) -> RawProbe {
        RawProbe { enabled, input: None, positions: 0, seconds: 0.0, last: Instant::now(), paused: 0.0 }
    }

    fn measure(&mut self, network: &Network, stats: &Stats, variant: crate::rules::Variant) {
        if !self.enabled || stats.batches == 0 || self.last.elapsed() < Duration::from_secs(2) {
            return;
        }
        let start = Instant::now();
        let (input, batch) = self.input.get_or_insert_with(|| {
            let batch = (stats.evaluations as f64 / stats.batches as f64).round().max(1.0) as usize;
            (crate::bench::forward_input(variant, batch), batch)
        });
        let (positions, seconds) = crate::bench::time_forward(network, input, *batch, Duration::from_millis(200));
        self.positions += positions;
        self.seconds += seconds;
        self.paused += start.elapsed().as_secs_f64();
        self.last = Instant::now();
    }

    fn report(&self) -> Option<(u64, f64, usize)> {
        self.input.as_ref().map(|(_, batch)| (self.positions, self.seconds, *batch))
    }
}

/// The progress bar, and one status line a minute for logs (a worker's
/// output is rarely a terminal).
struct Status {
    progress: bool,
    bar: report::Reporter,
    last_status: Instant,
}

impl Status {
    fn new(progress: bool, games: Option<u64>) -> Status {
        let bar = if progress { report::Reporter::counting(games, "games", None) } else { report::Reporter::hidden() };
        Status { progress, bar, last_status: Instant::now() }
    }

    fn step(&mut self, finished: u64, generator: &Generator, shards: u64, model: &str, seconds: f64) {
        self.bar.add(finished);
        let (s, secs) = (generator.stats, seconds.max(1e-9));
        if self.progress && self.last_status.elapsed() >= STATUS_EVERY {
            tracing::info!(
                games = s.games,
                games_per_second = format!("{:.2}", s.games as f64 / secs),
                evaluations_per_second = format!("{:.0}", s.evaluations as f64 / secs),
                shards,
                model,
                "self-play status"
            );
            self.last_status = Instant::now();
        }
        self.bar.message(format!(
            "| {:.0} actions/s | {:.0} evals/s | mean length {:.1} | {}",
            s.actions as f64 / secs,
            s.evaluations as f64 / secs,
            generator.mean_game_length(),
            model
        ));
    }

    fn finish(&self) {
        self.bar.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Worker;

    /// Several workers in one process divide the games, each under its own
    /// name and seed, and their report adds up: every game written, the
    /// forward share an average, no probe.
    #[test]
    fn workers_divide_the_games_and_their_report_adds_up() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::parse(include_str!("../../configs/tiny.toml")).unwrap();
        let place = Worker { device: Device::Cpu, search_threads: 1, torch_threads: 1 };
        let options = PlayOptions {
            games: Some(3),
            seed: 7,
            ..PlayOptions::new(config, dir.path().to_path_buf(), ModelSource::Fresh, "unit")
        };
        let report = play_workers(options, &[place, place]).unwrap();
        assert_eq!((report.stats.games, report.workers, report.raw), (3, 2, None));
        assert!(report.forward_share() > 0.0 && report.forward_share() <= 1.0, "{}", report.forward_share());
        let games = crate::shards::read_all(dir.path()).unwrap();
        let mut by_worker: Vec<(String, usize)> = Vec::new();
        for game in &games {
            let name = game.worker.clone().unwrap();
            match by_worker.iter_mut().find(|(w, _)| *w == name) {
                Some((_, n)) => *n += 1,
                None => by_worker.push((name, 1)),
            }
        }
        by_worker.sort();
        assert_eq!(by_worker, [("unit.0".to_string(), 2), ("unit.1".to_string(), 1)]);
        assert_ne!(games[0].actions, games[1].actions, "seeded apart");
        let none = PlayOptions::new(Config::parse("").unwrap(), dir.path().into(), ModelSource::Fresh, "x");
        assert!(play_workers(none, &[]).is_err(), "no worker: an error, not a panic");
    }
}
