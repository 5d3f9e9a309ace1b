//! Training: SGD with momentum on minibatches from the window of recent
//! games, checkpoints that resume exactly, TensorBoard scalars.
//!
//! A checkpoint `step-NNNNNNNN` in the models folder is three files: the
//! weights (`.safetensors`, written last, so self-play never sees a partial
//! checkpoint), the momentum buffers (`.optim`, safetensors too) and a small
//! JSON (`.json`: step, samples seen, encoding version, network shape, config).

pub mod data;
pub mod run;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use tch::{Device, Kind, Tensor};
use tensorboard_rs::summary_writer::SummaryWriter;

use crate::checkpoint::{newest_checkpoint, read_meta, CheckpointMeta};
use crate::config::Config;
use crate::encoding::{ENCODING_VERSION, GRID, NUM_ACTIONS, NUM_PLANES};
use crate::games::write_atomic;
use crate::net::Network;
use data::{Batch, LoadReport, Window};

/// Losses and measures of one training step.
#[derive(Clone, Copy, Debug)]
pub struct StepStats {
    pub policy_loss: f32,
    pub value_loss: f32,
    pub entropy: f32,
    pub value_error: f32,
    pub learning_rate: f64,
}

/// A network being trained, with its optimizer state.
pub struct Trainer {
    pub network: Network,
    momentum: BTreeMap<String, Tensor>,
    pub step: u64,
    pub samples_seen: u64,
    pub config: Config,
}

fn checkpoint_stem(step: u64) -> String {
    format!("step-{step:08}")
}

impl Trainer {
    /// A fresh network (weights drawn from `seed`).
    pub fn new(config: &Config, device: Device, seed: i64) -> Trainer {
        let network = Network::new(&config.network, device, seed);
        let momentum = trainable(&network).into_iter().map(|(name, var)| (name, var.zeros_like())).collect();
        Trainer { network, momentum, step: 0, samples_seen: 0, config: config.clone() }
    }

    /// Resumes from the newest checkpoint in `models`, or starts fresh when there is none.
    pub fn resume_or_new(config: &Config, models: &Path, device: Device, seed: i64) -> Result<Trainer> {
        match newest_checkpoint(models)? {
            Some(weights) => Trainer::load(config, &weights, device),
            None => Ok(Trainer::new(config, device, seed)),
        }
    }

    /// Loads a checkpoint from its weights file (the `.json` and `.optim` beside it too).
    pub fn load(config: &Config, weights: &Path, device: Device) -> Result<Trainer> {
        let meta = read_meta(weights)?;
        let meta_path = weights.with_extension("json");
        anyhow::ensure!(
            meta.network == config.network,
            "{}: network {:?} differs from the config's {:?}",
            meta_path.display(),
            meta.network,
            config.network
        );
        let network = Network::load(weights, &config.network, device)?;
        let optim_path = weights.with_extension("optim");
        let saved = Tensor::read_safetensors(&optim_path)
            .with_context(|| format!("cannot read optimizer state {}", optim_path.display()))?;
        let mut saved: BTreeMap<String, Tensor> = saved.into_iter().collect();
        let mut momentum = BTreeMap::new();
        for (name, var) in trainable(&network) {
            let buf = saved.remove(&name).with_context(|| format!("{}: no state for {name}", optim_path.display()))?;
            anyhow::ensure!(buf.size() == var.size(), "{}: {name} has the wrong shape", optim_path.display());
            momentum.insert(name, buf.to(device));
        }
        Ok(Trainer { network, momentum, step: meta.step, samples_seen: meta.samples_seen, config: config.clone() })
    }

    /// Writes a checkpoint for the current step; returns the weights' path.
    pub fn save(&self, models: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(models).with_context(|| format!("cannot create {}", models.display()))?;
        let stem = checkpoint_stem(self.step);
        let meta = CheckpointMeta {
            step: self.step,
            samples_seen: self.samples_seen,
            encoding_version: ENCODING_VERSION,
            network: self.config.network,
            config: self.config.clone(),
        };
        write_atomic(&models.join(format!("{stem}.json")), serde_json::to_string_pretty(&meta)?.as_bytes())?;
        let optim_tmp = models.join(format!(".{stem}.optim.tmp"));
        let named: Vec<(&str, &Tensor)> = self.momentum.iter().map(|(n, t)| (n.as_str(), t)).collect();
        Tensor::write_safetensors(&named, &optim_tmp)
            .with_context(|| format!("cannot write {}", optim_tmp.display()))?;
        std::fs::rename(&optim_tmp, models.join(format!("{stem}.optim")))?;
        // Weights last: their appearance marks a complete checkpoint.
        let weights_tmp = models.join(format!(".tmp-{stem}.safetensors"));
        let weights = models.join(format!("{stem}.safetensors"));
        self.network.save(&weights_tmp)?;
        std::fs::rename(&weights_tmp, &weights)?;
        Ok(weights)
    }

    pub fn learning_rate(&self) -> f64 {
        let t = &self.config.train;
        match t.lr_drop_every {
            0 => t.learning_rate,
            every => t.learning_rate * t.lr_drop_factor.powi((self.step / every) as i32),
        }
    }

    /// One SGD step on `batch`.
    pub fn train_step(&mut self, batch: &Batch) -> StepStats {
        let device = self.network.device();
        let n = batch.size as i64;
        let x = Tensor::from_slice(&batch.input).view([n, NUM_PLANES as i64, GRID as i64, GRID as i64]).to(device);
        let target = Tensor::from_slice(&batch.policy).view([n, NUM_ACTIONS as i64]).to(device);
        let legal = Tensor::from_slice(&batch.legal).view([n, NUM_ACTIONS as i64]).to(device).gt(0.5);
        let z = Tensor::from_slice(&batch.value).to(device);
        let mask = Tensor::from_slice(&batch.policy_mask).to(device);

        let (logits, value) = self.network.net.forward_t(&x, true);
        let log_p = logits.masked_fill(&legal.logical_not(), -1e9).log_softmax(-1, Kind::Float);
        // Cross-entropy over the samples with a policy target only.
        let cross_entropy = -(&target * &log_p).sum_dim_intlist(1, false, Kind::Float);
        let policy_loss = (cross_entropy * &mask).sum(Kind::Float) / mask.sum(Kind::Float).clamp_min(1.0);
        let value_loss = (&value - &z).square().mean(Kind::Float);
        let loss = &policy_loss + &value_loss * self.config.train.value_loss_weight;

        for (_, var) in trainable(&self.network).iter_mut() {
            var.zero_grad();
        }
        loss.backward();
        let lr = self.learning_rate();
        let (mu, wd) = (self.config.train.momentum, self.config.train.weight_decay);
        tch::no_grad(|| {
            for (name, mut var) in trainable(&self.network) {
                let grad = var.grad() + &var * wd;
                let buf = self.momentum.get_mut(&name).expect("a buffer per variable");
                let updated = &*buf * mu + grad;
                buf.copy_(&updated);
                let _ = var.g_sub_(&(&updated * lr));
            }
        });
        self.step += 1;
        self.samples_seen += batch.size as u64;

        let (entropy, value_error) = tch::no_grad(|| {
            let p = log_p.exp();
            let entropy = -(&p * log_p.clamp_min(-1e4)).sum_dim_intlist(1, false, Kind::Float).mean(Kind::Float);
            (entropy, (&value - &z).abs().mean(Kind::Float))
        });
        StepStats {
            policy_loss: policy_loss.double_value(&[]) as f32,
            value_loss: value_loss.double_value(&[]) as f32,
            entropy: entropy.double_value(&[]) as f32,
            value_error: value_error.double_value(&[]) as f32,
            learning_rate: lr,
        }
    }
}

/// The trainable variables by name (batch-norm running statistics excluded).
fn trainable(network: &Network) -> Vec<(String, Tensor)> {
    let mut vars: Vec<(String, Tensor)> =
        network.vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    vars
}

/// The window size for `total` samples seen: a fraction of them, within bounds.
pub fn window_size(config: &Config, total: u64) -> usize {
    let t = &config.train;
    ((total as f64 * t.window_fraction) as usize).clamp(t.window_min, t.window_max)
}

/// TensorBoard scalars for training.
pub struct Logs {
    writer: SummaryWriter,
}

impl Logs {
    pub fn new(dir: &Path) -> Result<Logs> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create logs folder {}", dir.display()))?;
        Ok(Logs { writer: SummaryWriter::new(dir) })
    }

    pub fn step(&mut self, step: u64, stats: &StepStats, samples_per_second: f64, window: usize) {
        let s = step as usize;
        let w = &mut self.writer;
        w.add_scalar("loss/policy", stats.policy_loss, s);
        w.add_scalar("loss/value", stats.value_loss, s);
        w.add_scalar("policy/entropy", stats.entropy, s);
        w.add_scalar("value/abs_error", stats.value_error, s);
        w.add_scalar("train/learning_rate", stats.learning_rate as f32, s);
        w.add_scalar("train/samples_per_second", samples_per_second as f32, s);
        w.add_scalar("data/window_size", window as f32, s);
    }

    /// A gating match: the new checkpoint's score against the best, and the best's step after it.
    pub fn gate(&mut self, step: u64, score: f64, best_step: u64) {
        self.writer.add_scalar("arena/gate_score", score as f32, step as usize);
        self.writer.add_scalar("arena/best_step", best_step as f32, step as usize);
    }

    pub fn games(&mut self, step: u64, report: &LoadReport, total_games: u64) {
        if report.games == 0 {
            return;
        }
        let (s, n) = (step as usize, report.games as f32);
        let w = &mut self.writer;
        w.add_scalar("games/total", total_games as f32, s);
        w.add_scalar("games/mean_length", report.total_actions as f32 / n, s);
        w.add_scalar("games/ended_no_gipf_piece", report.no_gipf_piece as f32 / n, s);
        w.add_scalar("games/ended_no_reserve", report.no_reserve as f32 / n, s);
        w.add_scalar("games/ended_ply_cap", report.ply_cap as f32 / n, s);
        w.add_scalar("games/white_win_rate", report.white_wins as f32 / n, s);
        w.add_scalar("games/distinct_opening_share", report.distinct_openings as f32 / n, s);
    }

    pub fn flush(&mut self) {
        self.writer.flush();
    }
}

/// Where a run keeps its files.
#[derive(Clone, Debug)]
pub struct RunDir {
    pub root: PathBuf,
}

impl RunDir {
    pub fn games(&self) -> PathBuf {
        self.root.join("games")
    }
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }
}

/// Reads new games and runs `steps` training steps, logging as it goes.
/// Returns the number of steps taken (0 while the window holds fewer than
/// `train.min_samples`).
pub fn train_steps(
    trainer: &mut Trainer,
    window: &mut Window,
    logs: &mut Logs,
    games: &Path,
    steps: u64,
    rng: &mut impl rand::Rng,
    bar: &indicatif::ProgressBar,
) -> Result<u64> {
    let config = trainer.config.clone();
    let report = window.load_new(games, |total| window_size(&config, total))?;
    logs.games(trainer.step, &report, window.total_games);
    if window.len() < config.train.min_samples {
        tracing::info!(samples = window.len(), needed = config.train.min_samples, "waiting for more samples");
        return Ok(0);
    }
    for _ in 0..steps {
        let start = Instant::now();
        let batch = window.batch(config.train.batch_size, rng);
        let stats = trainer.train_step(&batch);
        let rate = batch.size as f64 / start.elapsed().as_secs_f64();
        logs.step(trainer.step, &stats, rate, window.len());
        bar.inc(1);
        bar.set_message(format!(
            "step {} | policy {:.3} | value {:.3} | {:.0} samples/s",
            trainer.step, stats.policy_loss, stats.value_loss, rate
        ));
    }
    logs.flush();
    Ok(steps)
}
