//! The long-running jobs: the trainer beside self-play processes
//! ([`trainer`]), and the whole training loop in one process
//! ([`training_loop`], `gipf loop`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::report::Reporter;
use anyhow::{anyhow, Context, Result};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use tch::Device;

use super::GamesSource;
use super::{train_steps, Logs, ParentModel, RunDir, Trainer, Wait};
use crate::arena;
use crate::checkpoint::LATEST_FILE;
use crate::checkpoint::{newest_checkpoint, prune, read_meta};
use crate::config::{Config, TrainConfig};
use crate::layout::Layout;
use crate::lease::Lease;
use crate::model_source::ModelSource;
use crate::selfplay::{self, PlayOptions};
use crate::store::{Store, StoreError};

/// The seed of one self-play stream (a generation, or a worker): mixed with
/// the clock, so that no two streams play the same games, across
/// generations, workers and restarts.
fn self_play_seed(seed: u64, stream: u64) -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    seed.wrapping_mul(1_000_003) ^ now ^ stream.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// How a trainer starts: its device, its seed, and for a new run the model
/// it continues from (`--from`).
#[derive(Clone, Debug)]
pub struct Start {
    /// The device it trains on.
    pub device: Device,
    /// Seeds what it draws: a fresh network's weights, the batches, the games of
    /// self-play and gating.
    pub seed: u64,
    /// The model a new run continues from (`--from`); a run that holds
    /// checkpoints must have started from it.
    pub from: Option<ParentModel>,
}

fn start(config: &Config, run: &RunDir, how: &Start) -> Result<(Trainer, Logs, Publisher)> {
    crate::config::warn_if_past_the_cores("the trainer (train.torch_threads)", config.train.torch_threads as usize);
    for dir in [run.games(), run.models(), run.logs()] {
        std::fs::create_dir_all(&dir)?;
    }
    let mut publisher = Publisher::default();
    if let Some(store) = &run.store {
        let owner = format!("trainer {}", crate::shards::new_worker_id());
        // Its own client: the lease is renewed from a thread of its own.
        let lease_store = Arc::new(Store::open(&store.url(""))?);
        publisher.lease = Some(Lease::take(lease_store, &owner)?);
        publisher.latest_version = store.get_versioned(&format!("models/{LATEST_FILE}"))?.and_then(|(_, v)| v);
        // A trainer on a new machine resumes from the store's newest checkpoint.
        if newest_checkpoint(&run.models())?.is_none() {
            if let Some(latest) = store.latest("models")? {
                store.download_checkpoint("models", &latest, &run.models(), true)?;
            }
        }
    }
    let trainer = Trainer::resume_or_from(config, &run.models(), how.from.as_ref(), how.device, how.seed as i64)?;
    if newest_checkpoint(&run.models())?.is_none() {
        // The first checkpoint is the starting network, so that self-play and
        // the arena have a fixed starting point.
        save(&trainer, run, &mut publisher)?;
    }
    tracing::info!(step = trainer.step, run = %run.root.display(), kind = ?trainer.kind(), "trainer ready");
    Ok((trainer, Logs::new(&run.logs())?, publisher))
}

/// Publishes the trainer's checkpoints to the run's object store. A
/// checkpoint is published at most once per `steps_per_generation` steps
/// (the trainer also saves one locally each time it starts waiting, which
/// would fill the bucket), then the store's models folder is pruned as the
/// local one is; a failed upload (the store away) is tried again at the next
/// save and while the trainer waits, and training goes on meanwhile. Only
/// the holder of the run's lease publishes, and only over the `latest.json`
/// it last saw (a conditional write).
#[derive(Default)]
struct Publisher {
    /// The newest checkpoint not yet published, and its step.
    checkpoint: Option<(PathBuf, u64)>,
    published_step: Option<u64>,
    lease: Option<Lease>,
    /// The version of the store's `latest.json` this trainer last read or
    /// wrote: it publishes only over that one.
    latest_version: Option<String>,
}

impl Publisher {
    /// Publishes the checkpoint when it is due (or `force`); an error only
    /// when the lease was lost.
    fn publish(&mut self, run: &RunDir, t: &TrainConfig, force: bool) -> Result<()> {
        if let Some(lease) = &self.lease {
            lease.check()?;
        }
        let (Some(store), Some((path, step))) = (&run.store, &self.checkpoint) else { return Ok(()) };
        if !force && self.published_step.is_some_and(|last| *step < last + t.steps_per_generation) {
            return Ok(());
        }
        match store.publish_checkpoint("models", path, *step, self.latest_version.as_deref()) {
            Err(e) if matches!(StoreError::find(&e), Some(StoreError::Superseded { .. })) => {
                return Err(
                    e.context("another trainer published to this run; this trainer stops so that only one writes it")
                )
            }
            Ok(version) => {
                self.latest_version = version;
                self.published_step = Some(*step);
                self.checkpoint = None;
                if let Err(e) = store.prune_checkpoints("models", t.keep_last, t.keep_every_steps) {
                    tracing::warn!("removing old checkpoints from the store: {e:#} (trying again at the next)");
                }
            }
            Err(e) => tracing::warn!("publishing {}: {e:#} (trying again later)", path.display()),
        }
        Ok(())
    }

    /// Publishes the newest checkpoint before the trainer ends (each failure
    /// is a warning; the wait doubles up to a minute).
    fn publish_last(&mut self, run: &RunDir, t: &TrainConfig) -> Result<()> {
        let mut backoff = crate::store::Backoff::default();
        self.publish(run, t, true)?;
        while self.checkpoint.is_some() {
            backoff.sleep();
            self.publish(run, t, true)?;
        }
        Ok(())
    }
}

/// Saves a checkpoint (and for a run in an object store, publishes it when
/// due), then applies the retention policy, which keeps the newest.
fn save(trainer: &Trainer, run: &RunDir, publisher: &mut Publisher) -> Result<PathBuf> {
    let path = trainer.save(&run.models())?;
    if run.store.is_some() {
        publisher.checkpoint = Some((path.clone(), trainer.step));
        publisher.publish(run, &trainer.config.train, false)?;
    }
    let t = &trainer.config.train;
    let removed = prune(&run.models(), t.keep_last, t.keep_every_steps)?;
    if !removed.is_empty() {
        tracing::debug!(?removed, "older checkpoints removed");
    }
    Ok(path)
}

/// How often a waiting trainer looks for new games.
const POLL: Duration = Duration::from_secs(2);

/// Trains beside separate self-play processes sharing `run`: reads new games
/// as they appear, writes a checkpoint every `steps_per_generation` steps
/// and whenever it starts waiting, until `total_steps` (or forever). It
/// waits, with a log line, while the window is short of `min_samples` or
/// training has drawn `max_reuse` samples per sample read.
pub fn trainer(config: &Config, run: &RunDir, how: &Start, total_steps: Option<u64>) -> Result<()> {
    let started = start(config, run, how)?;
    train_beside_self_play(config, run, started, how.seed, total_steps, &mut || Ok(()))
}

/// The body of [`trainer`], from a started trainer; `check` is called before
/// each chunk of training, and an error from it stops training.
fn train_beside_self_play(
    config: &Config,
    run: &RunDir,
    (mut trainer, mut logs, mut publisher): (Trainer, Logs, Publisher),
    seed: u64,
    total_steps: Option<u64>,
    check: &mut dyn FnMut() -> Result<()>,
) -> Result<()> {
    let mut window = trainer.window();
    let mut rng = SmallRng::seed_from_u64(seed);
    let bar = Reporter::counting(total_steps, "steps", None);
    bar.start_at(trainer.step);
    let started = Instant::now();
    let mut idle = Duration::ZERO;
    let mut unsaved = 0;
    let mut waiting = false;
    let mut feed = run.feed();
    let games = run.games();
    while total_steps.is_none_or(|n| trainer.step < n) && !crate::stop::requested() {
        check()?;
        let chunk =
            (config.train.steps_per_generation - unsaved).min(total_steps.map_or(u64::MAX, |n| n - trainer.step));
        if let Some(feed) = &mut feed {
            match feed.refresh() {
                Ok(0) => {}
                Ok(new) => tracing::debug!(shards = new, "listed"),
                // Training goes on with what is here until the store answers.
                Err(e) => bar.suspend(|| tracing::warn!("listing new shards: {e:#} (trying again)")),
            }
        }
        let source = GamesSource { dir: &games, feed: feed.as_ref() };
        let trained = train_steps(&mut trainer, &mut window, &mut logs, source, chunk, &mut rng, &bar)?;
        unsaved += trained.steps;
        if trained.steps > 0 {
            if waiting {
                tracing::info!(step = trainer.step, "new games: training again");
            }
            waiting = false;
            logs.pacing(trainer.step, trainer.reuse(), Some(idle.as_secs_f64() / started.elapsed().as_secs_f64()));
        }
        let done = total_steps.is_some_and(|n| trainer.step >= n) || crate::stop::requested();
        if unsaved > 0 && (unsaved >= config.train.steps_per_generation || trained.wait.is_some() || done) {
            let path = save(&trainer, run, &mut publisher)?;
            bar.suspend(|| tracing::info!(checkpoint = %path.display(), "saved"));
            unsaved = 0;
        }
        if let (0, Some(wait)) = (trained.steps, trained.wait) {
            if !waiting {
                bar.suspend(|| tracing::info!(step = trainer.step, "waiting for new games: {wait}"));
                waiting = true;
            }
            std::thread::sleep(POLL);
            idle += POLL;
            publisher.publish(run, &config.train, false)?;
        }
    }
    bar.finish();
    if crate::stop::requested() {
        tracing::info!(step = trainer.step, "training stopped: its steps are saved");
    }
    publisher.publish_last(run, &config.train)
}

/// Where the loop's self-play writes its games: the games folder, or with a
/// run in an object store, the folder `outbox` of the run, whose shards are
/// uploaded (and fetched back into the games folder like any worker's).
fn games_destination(run: &RunDir, outbox: &str) -> Result<(PathBuf, Option<Arc<Store>>)> {
    Ok(match &run.store {
        Some(store) => (run.root.join(outbox), Some(Arc::new(Store::open(&store.url("games"))?))),
        None => (run.games(), None),
    })
}

/// The whole loop on one machine: a generation of self-play with the newest
/// checkpoint (or, with `[gate]`, the best one), training on the window, a
/// new checkpoint (gated against the best); `generations` times
/// (or forever). Stopping it at any point loses at most the game or the
/// training chunk in flight; started again, it resumes from the newest
/// checkpoint and the games on disk.
///
/// The trainer runs on `layout.trainer`, self-play on `layout.workers` (see
/// [`crate::layout::plan`]); generations in turn (`loop.workers = 0`) run on
/// the trainer's device.
pub fn training_loop(
    config: &Config,
    run: &RunDir,
    how: &Start,
    layout: &Layout,
    generations: Option<u64>,
) -> Result<()> {
    // Validated: generations in turn have their games, workers none.
    let Some(games_per_generation) = config.main_loop.games_per_generation else {
        return loop_with_workers(config, run, how, layout, generations);
    };
    let (device, seed) = (how.device, how.seed);
    let (mut trainer, mut logs, mut publisher) = start(config, run, how)?;
    let worker = crate::shards::new_worker_id();
    let (out, upload) = games_destination(run, "outbox")?;
    let mut feed = run.feed();
    let games = run.games();
    if config.gate.is_some() {
        arena::gate::ensure_best(&run.models())?;
    }
    let mut window = trainer.window();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut generation = 0;
    while generations.is_none_or(|n| generation < n) && !crate::stop::requested() {
        generation += 1;
        let t = Instant::now();
        let report = selfplay::play(PlayOptions {
            games: Some(games_per_generation),
            device,
            seed: self_play_seed(seed, 0),
            progress: true,
            upload: upload.clone(),
            ..PlayOptions::new(config.clone(), out.clone(), ModelSource::Folder(run.models()), &worker)
        })?;
        if let Some(feed) = &mut feed {
            if let Err(e) = feed.refresh() {
                tracing::warn!("listing new shards: {e:#} (trying again after the next generation)");
            }
        }
        tracing::info!(
            generation,
            games = report.stats.games,
            seconds = format!("{:.0}", t.elapsed().as_secs_f64()),
            "self-play done"
        );
        let bar = Reporter::counting(Some(config.train.steps_per_generation), "steps", None);
        let trained = train_steps(
            &mut trainer,
            &mut window,
            &mut logs,
            GamesSource { dir: &games, feed: feed.as_ref() },
            config.train.steps_per_generation,
            &mut rng,
            &bar,
        )?;
        bar.clear();
        match trained.wait {
            Some(wait @ Wait::Samples { .. }) => tracing::info!("no training yet: {wait}"),
            Some(wait @ Wait::Reuse { .. }) => {
                tracing::info!(steps = trained.steps, asked = config.train.steps_per_generation, "paced: {wait}")
            }
            None => {}
        }
        if trained.steps > 0 {
            logs.pacing(trainer.step, trainer.reuse(), None);
            let path = save(&trainer, run, &mut publisher)?;
            tracing::info!(generation, step = trainer.step, checkpoint = %path.display(), "trained");
            if let Some(gate) = &config.gate {
                gate_checkpoint(&path, gate, config, run, how, trainer.step, &mut logs)?;
            }
        }
    }
    publisher.publish_last(run, &config.train)
}

/// Plays the new checkpoint `path` (of `step`) against the best so far,
/// logging the score.
fn gate_checkpoint(
    path: &Path,
    gate: &crate::config::GateConfig,
    config: &Config,
    run: &RunDir,
    how: &Start,
    step: u64,
    logs: &mut Logs,
) -> Result<()> {
    let outcome = arena::gate::gate(&run.root, path, gate, config, how.device, how.seed ^ step)?;
    let best = if outcome.accepted { &outcome.candidate } else { &outcome.previous_best };
    logs.gate(step, outcome.tally.score(), read_meta(best)?.step);
    tracing::info!(
        score = format!("{:.2}", outcome.tally.score()),
        accepted = outcome.accepted,
        best = %best.display(),
        "gated"
    );
    Ok(())
}

/// The loop with the layout's self-play workers beside the trainer (a GPU
/// box's processes, in one): each worker plays with the newest checkpoint
/// on its device and writes its games in shards, the trainer trains on them
/// as they appear, paced by `train.max_reuse`, and writes a checkpoint every
/// `steps_per_generation` steps; `generations` counts those checkpoints.
/// Stopped by a signal ([`crate::stop`]), it writes the finished games and
/// saves its steps; killed, it loses the games not yet written (see
/// `selfplay.shard_games`) and the steps since the last checkpoint.
fn loop_with_workers(
    config: &Config,
    run: &RunDir,
    how: &Start,
    layout: &Layout,
    generations: Option<u64>,
) -> Result<()> {
    let seed = how.seed;
    let started = start(config, run, how)?;
    let total_steps = generations.map(|n| started.0.step + n * config.train.steps_per_generation);
    let stop = Arc::new(AtomicBool::new(false));
    let name = crate::shards::new_worker_id();
    if run.store.is_some() {
        let strays = crate::selfplay::stray_outboxes(&run.root, "outbox-", 0..layout.workers.len())?;
        crate::selfplay::gather_outboxes(&run.root.join("outbox-0"), &strays)?;
    }
    let mut workers = Vec::new();
    for (w, place) in layout.workers.iter().enumerate() {
        let mut worker_config = config.clone();
        worker_config.selfplay.search_threads = place.search_threads;
        // Each worker uploads from its own outbox.
        let (out, upload) = games_destination(run, &format!("outbox-{w}"))?;
        let options = PlayOptions {
            device: place.device,
            seed: self_play_seed(seed, w as u64),
            upload,
            stop: Some(stop.clone()),
            ..PlayOptions::new(worker_config, out, ModelSource::Folder(run.models()), format!("{name}.{w}"))
        };
        let worker = std::thread::Builder::new().name(format!("selfplay-{w}")).spawn(move || selfplay::play(options));
        workers.push(worker.context("cannot start a self-play worker")?);
    }
    tracing::info!(workers = workers.len(), "self-play workers started beside the trainer");
    let trained = train_beside_self_play(config, run, started, seed, total_steps, &mut || {
        let stopped = workers.iter().any(|w| w.is_finished()) && !crate::stop::requested();
        anyhow::ensure!(!stopped, "a self-play worker stopped");
        Ok(())
    });
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        // A worker's own error says more than the trainer's.
        worker.join().map_err(|_| anyhow!("a self-play worker panicked"))?.context("self-play worker")?;
    }
    trained
}
