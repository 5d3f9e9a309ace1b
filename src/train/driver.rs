//! The step driver: new games read into the window, then as many training
//! steps as the window and the pacing allow, logged as they go.

use std::time::Instant;

use anyhow::{Context, Result};
use rand::{Rng, SeedableRng};

use super::{
    window_size, DeviceBatch, Interval, Logs, NonFiniteLoss, StepStats, StepSums, Trainer, MAX_NON_FINITE_IN_A_ROW,
    READ_EVERY,
};
use super::{GamesSource, Window};
use tch::Device;

/// Why [`train_steps`] stopped short.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wait {
    /// The window holds fewer than `train.min_samples`.
    Samples {
        /// The samples in the window.
        have: usize,
        /// `train.min_samples`.
        need: usize,
    },
    /// Training has drawn `train.max_reuse` samples per sample read.
    Reuse {
        /// Samples drawn by training so far.
        drawn: u64,
        /// Samples read from self-play so far.
        read: u64,
    },
}

impl std::fmt::Display for Wait {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Wait::Samples { have, need } => write!(f, "the window holds {have} samples of the {need} needed to start"),
            Wait::Reuse { drawn, read } => write!(
                f,
                "max_reuse reached: {drawn} samples drawn from {read} read ({:.2} per sample)",
                *drawn as f64 / (*read).max(1) as f64
            ),
        }
    }
}

/// What [`train_steps`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trained {
    /// Training steps taken.
    pub steps: u64,
    /// Set when fewer steps than asked were taken, and why.
    pub wait: Option<Wait>,
}

/// Reads new games, then runs up to `steps` training steps, as many as the
/// window's minimum and the pacing allow, logging as it goes (fewer when a
/// stop is asked for: [`crate::stop`]). Batches are built on a second
/// thread while the network trains.
pub fn train_steps(
    trainer: &mut Trainer,
    window: &mut Window,
    logs: &mut Logs,
    games: GamesSource,
    steps: u64,
    rng: &mut impl Rng,
    bar: &crate::report::Reporter,
) -> Result<Trained> {
    let config = trainer.config.clone();
    // LibTorch keeps this per thread; `gipf loop` may play on this one in turn.
    tch::set_num_threads(config.train.torch_threads);
    let report = window.load(games, |total| window_size(&config.train, total))?;
    logs.games(trainer.step, &report, window.total_games, window.total_files);
    trainer.samples_read = window.total_samples;
    trainer.games_read = window.read();
    if window.len() < config.train.min_samples {
        let wait = Wait::Samples { have: window.len(), need: config.train.min_samples };
        return Ok(Trained { steps: 0, wait: Some(wait) });
    }
    let take = steps.min(trainer.steps_allowed());
    let window: &Window = window;
    let batch_size = config.train.batch_size;
    let device = trainer.network.device();
    let batch_rng = rand::rngs::SmallRng::seed_from_u64(rng.random());
    let mut done = 0;
    std::thread::scope(|scope| -> Result<()> {
        let batches = prefetch(scope, window, batch_size, device, batch_rng, Some(take));
        let mut sums = StepSums::new(device);
        let mut start = Instant::now();
        for i in 0..take {
            let batch: DeviceBatch = batches.recv().context("the batch thread stopped")?;
            trainer.step_on_device(&batch, &mut sums);
            let stopping = crate::stop::requested();
            if sums.steps < READ_EVERY && i + 1 < take && !stopping {
                continue;
            }
            let steps = sums.steps;
            let interval = trainer.read(&mut sums);
            let rate = (steps * batch_size as u64) as f64 / start.elapsed().as_secs_f64();
            start = Instant::now();
            done += interval.finite_steps;
            bar.add(steps);
            report_interval(trainer, logs, &interval, rate, window.len(), bar)?;
            if stopping {
                break;
            }
        }
        Ok(())
    })?;
    logs.flush();
    let wait = (take < steps).then_some(Wait::Reuse { drawn: trainer.samples_drawn, read: window.total_samples });
    Ok(Trained { steps: done, wait })
}

/// Batches of `window` built and copied to `device` on a thread of `scope`
/// while the caller trains on the ones before, at most two ahead: `count`
/// of them (`None`: until the receiver is dropped). Training and the
/// trainer's benchmark both take their batches from here.
pub fn prefetch<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    window: &'scope Window,
    batch_size: usize,
    device: Device,
    mut rng: rand::rngs::SmallRng,
    count: Option<u64>,
) -> std::sync::mpsc::Receiver<DeviceBatch> {
    let (sender, batches) = std::sync::mpsc::sync_channel(2);
    scope.spawn(move || {
        let mut left = count;
        while left != Some(0) {
            left = left.map(|n| n - 1);
            if sender.send(DeviceBatch::new(&window.batch(batch_size, &mut rng), device)).is_err() {
                break;
            }
        }
    });
    batches
}

/// Logs an interval of steps read back: its means, and the batches it
/// skipped for a loss that is not finite; an error once
/// [`MAX_NON_FINITE_IN_A_ROW`] were skipped in a row.
fn report_interval(
    trainer: &Trainer,
    logs: &mut Logs,
    interval: &Interval,
    rate: f64,
    window: usize,
    bar: &crate::report::Reporter,
) -> Result<()> {
    if interval.skipped_steps > 0 {
        let (policy, value) = interval.newest_losses;
        let e = NonFiniteLoss { step: trainer.step + 1, policy, value };
        if interval.in_a_row >= MAX_NON_FINITE_IN_A_ROW {
            return Err(anyhow::Error::new(e).context(format!(
                "{} batches in a row; stopped, so the newest checkpoint is the last good one (a lower \
                 train.learning_rate may help)",
                interval.in_a_row
            )));
        }
        tracing::warn!("{} batches skipped: their loss was not finite ({e})", interval.skipped_steps);
        logs.skipped_batches(trainer.step, interval.skipped_steps);
    }
    if let Some(stats) = interval.stats {
        let stats = StepStats { learning_rate: trainer.learning_rate(), ..stats };
        logs.step(trainer.step, &stats, rate, window);
        bar.message(format!(
            "step {} | policy {:.3} | value {:.3} | {rate:.0} samples/s",
            trainer.step, stats.policy_loss, stats.value_loss
        ));
    }
    Ok(())
}
