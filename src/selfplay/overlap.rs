//! How well self-play keeps a GPU busy, measured without one: a stand-in
//! device ([`SimulatedDevice`]) with a fixed latency for each batch, spent
//! partly on the host (the copies in and out, which may overlap another
//! batch) and partly on the device itself, which runs one batch at a time.
//! With one worker the device waits while the host copies; with two, one
//! worker's batch runs while the other's is copied, and evaluations/s
//! approach the device's own rate instead of the sum of both sides' times.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::Generator;
use crate::config::Config;
use crate::encoding::NUM_ACTIONS;
use crate::search::Forward;

/// A batch's latency on the stand-in device.
#[derive(Clone, Copy, Debug)]
pub struct Latency {
    /// Host time on each side of the run (the copy in, and the copy out).
    pub copy: Duration,
    /// Time the device is held, one batch at a time.
    pub run: Duration,
}

/// A forward pass that waits as a GPU would and returns uniform logits
/// and zero values. Clones share the device (and its busy time).
#[derive(Clone)]
pub struct SimulatedDevice {
    latency: Latency,
    busy: Arc<Mutex<Duration>>,
}

impl SimulatedDevice {
    /// A device that takes `latency` for each batch.
    pub fn new(latency: Latency) -> SimulatedDevice {
        SimulatedDevice { latency, busy: Arc::default() }
    }

    /// The time the device has been held so far.
    pub fn busy(&self) -> Duration {
        *self.busy.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Forward for SimulatedDevice {
    fn forward(&mut self, _input: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        std::thread::sleep(self.latency.copy);
        {
            let mut busy = self.busy.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let start = Instant::now();
            std::thread::sleep(self.latency.run);
            *busy += start.elapsed();
        }
        std::thread::sleep(self.latency.copy);
        (vec![0.0; n * NUM_ACTIONS], vec![0.0; n])
    }
}

/// What [`measure`] saw.
#[derive(Clone, Copy, Debug)]
pub struct Overlap {
    /// Positions evaluated by all the workers.
    pub evaluations: u64,
    /// Batches run.
    pub batches: u64,
    /// Wall-clock seconds of the measurement.
    pub seconds: f64,
    /// The share of the time the device was held.
    pub device_busy: f64,
}

impl Overlap {
    /// Positions evaluated per second.
    pub fn evaluations_per_second(&self) -> f64 {
        self.evaluations as f64 / self.seconds
    }

    /// Positions per batch, on average.
    pub fn mean_batch(&self) -> f64 {
        self.evaluations as f64 / self.batches.max(1) as f64
    }
}

/// Self-play with `workers` generators (each on its own thread with
/// `search_threads` search threads, as `gipf loop` runs them on a GPU)
/// sharing one [`SimulatedDevice`] of `latency`, for `duration`.
pub fn measure(
    config: &Config,
    workers: usize,
    search_threads: usize,
    latency: Latency,
    duration: Duration,
) -> Result<Overlap> {
    let device = SimulatedDevice::new(latency);
    let start = Instant::now();
    let counts = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let mut forward = device.clone();
                scope.spawn(move || -> Result<(u64, u64)> {
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(search_threads)
                        .build()
                        .context("cannot start the search threads")?;
                    let mut generator = Generator::new(config.clone(), w as u64, None, &format!("overlap.{w}"));
                    while start.elapsed() < duration {
                        generator.step(&mut forward, &pool, "simulated").map_err(|e| anyhow::anyhow!("{e}"))?;
                    }
                    Ok((generator.stats.evaluations, generator.stats.batches))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a measuring worker does not panic")).collect::<Result<Vec<_>>>()
    })?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(Overlap {
        evaluations: counts.iter().map(|c| c.0).sum(),
        batches: counts.iter().map(|c| c.1).sum(),
        seconds,
        device_busy: device.busy().as_secs_f64() / seconds,
    })
}
