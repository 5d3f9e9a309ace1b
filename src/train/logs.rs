//! The trainer's TensorBoard scalars: losses, pacing, games read and skipped.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tensorboard_rs::summary_writer::SummaryWriter;

use super::step::{StepStats, PHASES};
use super::LoadReport;

/// TensorBoard scalars for training. The writer (tensorboard-rs) panics on
/// a write error, so a failure (a full disk) stops the logs with a warning
/// and training goes on.
pub struct Logs {
    writer: Option<SummaryWriter>,
    dir: PathBuf,
    /// Games refused as unreadable or invalid since this process started.
    skipped_games: u64,
    /// Batches skipped for a non-finite loss since this process started.
    skipped_batches: u64,
}

impl Logs {
    /// Opens the logs folder, checking first that it can be written.
    pub fn new(dir: &Path) -> Result<Logs> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create logs folder {}", dir.display()))?;
        crate::durable::check_writable(dir)?;
        quiet_writer_panics();
        let mut logs = Logs { writer: None, dir: dir.to_path_buf(), skipped_games: 0, skipped_batches: 0 };
        match std::panic::catch_unwind(|| SummaryWriter::new(dir)) {
            Ok(writer) => logs.writer = Some(writer),
            Err(_) => logs.stopped(),
        }
        Ok(logs)
    }

    fn stopped(&self) {
        tracing::warn!("TensorBoard logs in {} stopped: their writer failed (a full disk?)", self.dir.display());
    }

    /// Runs `f` on the TensorBoard writer unless it has failed.
    fn guarded(&mut self, f: impl FnOnce(&mut SummaryWriter)) {
        let Some(writer) = self.writer.as_mut() else { return };
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(writer))).is_err() {
            self.stopped();
            // Its drop would panic again.
            std::mem::forget(self.writer.take());
        }
    }

    fn write(&mut self, scalars: &[(&str, f32)], step: u64) {
        self.guarded(|writer| {
            for &(tag, value) in scalars {
                writer.add_scalar(tag, value, step as usize);
            }
        });
    }

    /// Logs a training step: its losses and measures, the samples trained on per
    /// second and the window's size.
    pub fn step(&mut self, step: u64, stats: &StepStats, samples_per_second: f64, window: usize) {
        let mut scalars = vec![
            ("loss/policy", stats.policy_loss),
            ("loss/value", stats.value_loss),
            ("policy/entropy", stats.entropy),
            ("value/abs_error", stats.value_error),
            ("train/learning_rate", stats.learning_rate as f32),
            ("train/samples_per_second", samples_per_second as f32),
            ("data/window_size", window as f32),
        ];
        if let Some(aux_loss) = stats.aux_loss {
            scalars.push(("loss/aux", aux_loss));
        }
        for ((_, tag), error) in PHASES.iter().zip(stats.value_error_by_phase) {
            if let Some(error) = error {
                scalars.push((tag, error));
            }
        }
        self.write(&scalars, step);
    }

    /// Pacing: samples drawn per sample read, and (for a trainer beside
    /// self-play) the share of the wall time it waited for new games.
    pub fn pacing(&mut self, step: u64, reuse: f64, idle_share: Option<f64>) {
        let mut scalars = vec![("train/reuse", reuse as f32)];
        if let Some(idle) = idle_share {
            scalars.push(("train/idle_share", idle as f32));
        }
        self.write(&scalars, step);
    }

    /// A gating match: the new checkpoint's score against the best, and the best's step after it.
    pub fn gate(&mut self, step: u64, score: f64, best_step: u64) {
        self.write(&[("arena/gate_score", score as f32), ("arena/best_step", best_step as f32)], step);
    }

    /// Logs what a look at the games folder read: the games' lengths, endings and
    /// openings, the totals so far, and the games skipped so far.
    pub fn games(&mut self, step: u64, report: &LoadReport, total_games: u64, total_files: u64) {
        if !report.skipped.is_empty() {
            self.skipped_games += report.skipped.len() as u64;
            self.write(&[("games/skipped", self.skipped_games as f32)], step);
        }
        if report.games == 0 {
            return;
        }
        let n = report.games as f32;
        let scalars = [
            ("games/total", total_games as f32),
            ("games/shards_read", total_files as f32),
            ("games/mean_length", report.total_actions as f32 / n),
            ("games/ended_no_gipf_piece", report.no_gipf_piece as f32 / n),
            ("games/ended_no_reserve", report.no_reserve as f32 / n),
            ("games/ended_ply_cap", report.ply_cap as f32 / n),
            ("games/white_win_rate", report.white_wins as f32 / n),
            ("games/distinct_opening_share", report.distinct_openings as f32 / n),
        ];
        self.write(&scalars, step);
    }

    pub(super) fn skipped_batches(&mut self, step: u64, batches: u64) {
        self.skipped_batches += batches;
        self.write(&[("train/skipped_batches", self.skipped_batches as f32)], step);
    }

    /// Writes what is buffered to the event file.
    pub fn flush(&mut self) {
        self.guarded(|writer| writer.flush());
    }
}

impl Drop for Logs {
    /// The writer's drop panics when its thread has failed.
    fn drop(&mut self) {
        if let Some(writer) = self.writer.take() {
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(writer))).is_err() {
                self.stopped();
            }
        }
    }
}

/// The TensorBoard writer's panics (on its own thread too) are reported by
/// [`Logs`] as one warning; every other panic is printed as before.
fn quiet_writer_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            match info.location().is_some_and(|at| at.file().contains("tensorboard-rs")) {
                true => tracing::debug!("the TensorBoard writer: {info}"),
                false => previous(info),
            }
        }));
    });
}
