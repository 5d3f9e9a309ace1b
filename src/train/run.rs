//! The long-running drivers: the trainer beside a self-play process, and the
//! whole loop in one process.

use std::time::{Duration, Instant};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use tch::Device;

use super::data::Window;
use super::{train_steps, Logs, RunDir, Trainer};
use crate::arena;
use crate::checkpoint::{read_meta, ModelSource};
use crate::config::Config;
use crate::selfplay::{self, RunOptions};

fn now_nanos() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

fn bar(len: Option<u64>) -> ProgressBar {
    let bar = len.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    bar.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {pos} steps {msg}").expect("template"));
    bar
}

fn start(config: &Config, run: &RunDir, device: Device, seed: u64) -> Result<(Trainer, Logs)> {
    for dir in [run.games(), run.models(), run.logs()] {
        std::fs::create_dir_all(&dir)?;
    }
    let trainer = Trainer::resume_or_new(config, &run.models(), device, seed as i64)?;
    if trainer.step == 0 {
        // The first checkpoint is the untrained network, so that self-play and
        // the arena have a fixed starting point.
        trainer.save(&run.models())?;
    }
    tracing::info!(step = trainer.step, run = %run.root.display(), "trainer ready");
    Ok((trainer, Logs::new(&run.logs())?))
}

/// Trains beside a separate self-play process sharing `run`: reads new games
/// as they appear, writes a checkpoint every `steps_per_generation` steps,
/// until `total_steps` (or forever).
pub fn trainer(config: &Config, run: &RunDir, device: Device, seed: u64, total_steps: Option<u64>) -> Result<()> {
    let (mut trainer, mut logs) = start(config, run, device, seed)?;
    let mut window = Window::new(config);
    let mut rng = SmallRng::seed_from_u64(seed);
    let bar = bar(total_steps);
    bar.set_position(trainer.step);
    while total_steps.is_none_or(|n| trainer.step < n) {
        let chunk = config.train.steps_per_generation.min(total_steps.map_or(u64::MAX, |n| n - trainer.step));
        let taken = train_steps(&mut trainer, &mut window, &mut logs, &run.games(), chunk, &mut rng, &bar)?;
        if taken == 0 {
            std::thread::sleep(Duration::from_secs(5));
            continue;
        }
        let path = trainer.save(&run.models())?;
        tracing::info!(checkpoint = %path.display(), "saved");
    }
    bar.finish();
    Ok(())
}

/// The whole loop on one machine: a generation of self-play with the newest
/// checkpoint (or, with `[gate]`, the best one), training on the window, a
/// new checkpoint (gated against the best); `generations` times
/// (or forever). Stopping it at any point loses at most the game or the
/// training chunk in flight; started again, it resumes from the newest
/// checkpoint and the games on disk.
pub fn self_play_loop(
    config: &Config,
    run: &RunDir,
    device: Device,
    seed: u64,
    generations: Option<u64>,
) -> Result<()> {
    let (mut trainer, mut logs) = start(config, run, device, seed)?;
    if config.gate.is_some() {
        arena::gate::ensure_best(&run.models())?;
    }
    let mut window = Window::new(config);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut generation = 0;
    while generations.is_none_or(|n| generation < n) {
        generation += 1;
        let t = Instant::now();
        let report = selfplay::run(RunOptions {
            config: config.clone(),
            out: run.games(),
            games: Some(config.train.games_per_generation),
            model: ModelSource::Folder(run.models()),
            device,
            // Never the same games twice, across generations and restarts.
            seed: seed.wrapping_mul(1_000_003) ^ now_nanos(),
            duration: None,
            progress: true,
            probe_raw: false,
        })?;
        tracing::info!(
            generation,
            games = report.stats.games,
            seconds = format!("{:.0}", t.elapsed().as_secs_f64()),
            "self-play done"
        );
        let bar = bar(Some(config.train.steps_per_generation));
        let taken = train_steps(
            &mut trainer,
            &mut window,
            &mut logs,
            &run.games(),
            config.train.steps_per_generation,
            &mut rng,
            &bar,
        )?;
        bar.finish_and_clear();
        if taken > 0 {
            let path = trainer.save(&run.models())?;
            tracing::info!(generation, step = trainer.step, checkpoint = %path.display(), "trained");
            if let Some(gate) = &config.gate {
                let outcome = arena::gate::gate(&run.root, &path, gate, config, device, seed ^ trainer.step)?;
                let best = if outcome.accepted { &outcome.candidate } else { &outcome.previous_best };
                let best_step = read_meta(best)?.step;
                logs.gate(trainer.step, outcome.tally.score(), best_step);
                tracing::info!(
                    score = format!("{:.2}", outcome.tally.score()),
                    accepted = outcome.accepted,
                    best = %best.display(),
                    "gated"
                );
            }
        }
    }
    Ok(())
}
