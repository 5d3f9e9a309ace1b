//! Training: SGD with momentum on minibatches from the window of recent
//! games, checkpoints that resume exactly, TensorBoard scalars.
//!
//! A checkpoint (written by [`Trainer::save`]) publishes the
//! weights, or their moving average; its optimizer state holds the momentum
//! buffers and, where the weights are an average, the trained weights under
//! `trained/`. A batch
//! whose loss (or whose batch-norm statistics) is not finite changes no
//! variable: weights, running statistics and momentum (its update is masked
//! on the device, so a NaN is never saved and nothing waits for a
//! read-back); [`MAX_NON_FINITE_IN_A_ROW`] of them in a row stop training
//! with an error.

mod driver;
mod from;
mod games_read;
pub mod jobs;
mod logs;
mod reading;
mod run_dir;
mod source;
mod step;
mod window;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use tch::{Device, Kind, Tensor};

use crate::checkpoint::{
    self, checkpoints_newest_first, read_meta, read_optimizer_state, CheckpointMeta, Compute, Lineage, WeightsToWrite,
    CHECKPOINT_FORMAT, TRAINED,
};
use crate::config::{Config, TrainConfig};
use crate::encoding::ENCODING_VERSION;
use crate::error::LoadError;
use crate::net::{machine_name, NetConfig, Network, Precision};
pub use driver::{prefetch, train_steps, Trained, Wait};
pub use from::ParentModel;
pub use games_read::GamesRead;
pub use logs::Logs;
pub use run_dir::RunDir;
pub use source::GamesSource;
use step::StepMeasures;
pub use step::{DeviceBatch, Interval, StepStats, StepSums, PHASES, READ_EVERY};
pub use window::{Batch, LoadReport, Window, OPENING_LENGTH};

/// A network being trained, with its optimizer state.
pub struct Trainer {
    /// The trained weights.
    pub network: Network,
    momentum: BTreeMap<String, Tensor>,
    /// The moving average of the weights that checkpoints publish (with
    /// `train.average_half_life`), by variable name.
    average: Option<BTreeMap<String, Tensor>>,
    /// With a half `train.precision` (bf16; fp16 trains in fp32, having
    /// no loss scaling), the copy of the network that runs each step's
    /// passes; the fp32 weights above take the updates.
    half: Option<Network>,
    /// Training steps taken.
    pub step: u64,
    /// Samples drawn by training.
    pub samples_drawn: u64,
    /// Samples read from self-play, as the window last reported them (saved
    /// with each checkpoint).
    pub samples_read: u64,
    /// The games files read, as the window last reported them (saved with each
    /// checkpoint).
    pub games_read: GamesRead,
    /// Where the weights came from and the compute behind them; its `run`
    /// is brought up to date by each save.
    pub lineage: Lineage,
    /// When this process took the trainer over: the run's hours are those
    /// of its checkpoint, plus the time since.
    resumed_at: Instant,
    /// The configuration it trains with.
    pub config: Config,
}

impl Trainer {
    /// A fresh network (weights drawn from `seed`).
    pub fn new(config: &Config, device: Device, seed: i64) -> Trainer {
        Trainer::with_network(config, Network::new(&config.network, device, seed))
    }

    /// A trainer at step 0 of `network`, with no momentum yet.
    fn with_network(config: &Config, network: Network) -> Trainer {
        let momentum = network.trainable().into_iter().map(|(name, var)| (name, var.zeros_like())).collect();
        let average = (config.train.average_half_life > 0).then(|| copy_weights(&network));
        Trainer {
            half: bf16_step_copy(&network, config.train.precision),
            network,
            momentum,
            average,
            step: 0,
            samples_drawn: 0,
            samples_read: 0,
            games_read: GamesRead::default(),
            lineage: Lineage { machine: machine_name(), ..Lineage::default() },
            resumed_at: Instant::now(),
            config: config.clone(),
        }
    }

    /// Resumes from the newest checkpoint in `models`, or starts fresh when
    /// there is none. A newest checkpoint that is damaged (cut short by a
    /// crash or a full disk, or written wrong) is set aside under a hidden
    /// name (`.damaged-NAME`) with a warning, and the one before it is used.
    /// Any other error (another format or network shape, a file that cannot
    /// be read) stops here and sets nothing aside.
    pub fn resume_or_new(config: &Config, models: &Path, device: Device, seed: i64) -> Result<Trainer> {
        let all = checkpoints_newest_first(models)?;
        let Some(newest) = all.first() else { return Ok(Trainer::new(config, device, seed)) };
        let first = match Trainer::load(config, newest, device) {
            Ok(trainer) => return Ok(trainer),
            Err(e) if !e.is_damaged() => return Err(e.into()),
            Err(e) => anyhow::Error::new(e),
        };
        let mut reason = format!("{first:#}");
        for (damaged, older) in all.iter().zip(&all[1..]) {
            let aside = checkpoint::set_aside(damaged)?;
            tracing::warn!(
                "{}: cannot resume from it ({reason}); set aside as {}, trying {}",
                damaged.display(),
                aside.display(),
                older.display()
            );
            match Trainer::load(config, older, device) {
                Ok(trainer) => return Ok(trainer),
                Err(e) if !e.is_damaged() => return Err(e.into()),
                Err(e) => reason = format!("{e:#}"),
            }
        }
        Err(first).with_context(|| format!("no checkpoint in {} can be resumed from", models.display()))
    }

    /// Loads a checkpoint from its weights file (the `.json` and `.optim` beside it too).
    pub fn load(config: &Config, weights: &Path, device: Device) -> Result<Trainer, LoadError> {
        let meta = read_meta(weights)?;
        check_variant(&meta, config, weights)?;
        check_shape(&meta, &config.network, weights)?;
        let network = Network::load(weights, &config.network, device)?;
        // The published weights, before the trained ones replace them.
        let average = (config.train.average_half_life > 0).then(|| copy_weights(&network));
        let (momentum, trained) = read_optimizer_state(&network, &weights.with_extension("optim"))?;
        // The trained weights, where the checkpoint published an average
        // (without them, training goes on from the published weights).
        if let Some(trained) = trained {
            let variables = network.vs.variables();
            tch::no_grad(|| {
                for (name, value) in trained {
                    variables[&name].shallow_clone().copy_(&value);
                }
            });
        }
        Ok(Trainer {
            half: bf16_step_copy(&network, config.train.precision),
            network,
            momentum,
            average,
            step: meta.step,
            samples_drawn: meta.samples_drawn,
            samples_read: meta.samples_read.unwrap_or(0),
            games_read: GamesRead {
                cursor: meta.games_cursor,
                newest_by_worker: meta.games_newest_by_worker,
                recent: meta.games_recent,
            },
            lineage: resumed_lineage(meta.lineage),
            resumed_at: Instant::now(),
            config: config.clone(),
        })
    }

    /// The kind of the training steps' forward and backward passes.
    pub fn kind(&self) -> Kind {
        self.half.as_ref().map_or(Kind::Float, Network::kind)
    }

    /// Samples drawn per sample read from self-play (bounded by `train.max_reuse`).
    pub fn reuse(&self) -> f64 {
        self.samples_drawn as f64 / self.samples_read.max(1) as f64
    }

    /// The steps this trainer may take now under `train.max_reuse`.
    pub fn steps_allowed(&self) -> u64 {
        let t = &self.config.train;
        let budget = (t.max_reuse * self.samples_read as f64) as u64;
        budget.saturating_sub(self.samples_drawn) / t.batch_size as u64
    }

    /// A window that continues where this trainer's checkpoint left off.
    pub fn window(&self) -> Window {
        let c = &self.config;
        Window::new(c.train.targets(), c.game.variant).resumed(self.samples_read, self.games_read.clone())
    }

    /// Writes a checkpoint for the current step; returns the weights' path.
    /// Weights (batch-norm statistics included) or optimizer state that are
    /// not finite are refused.
    pub fn save(&self, models: &Path) -> Result<PathBuf> {
        let variables = self.network.vs.variables();
        let average = self.average.iter().flatten();
        for (name, tensor) in variables.iter().chain(&self.momentum).chain(average) {
            if tensor.isfinite().all().int64_value(&[]) == 0 {
                bail!("step {}: {name} holds a value that is not finite; no checkpoint written", self.step);
            }
        }
        let meta = CheckpointMeta {
            format: CHECKPOINT_FORMAT,
            step: self.step,
            samples_drawn: self.samples_drawn,
            encoding_version: ENCODING_VERSION,
            network: self.config.network,
            variant: Some(self.config.game.variant),
            samples_read: Some(self.samples_read),
            games_cursor: self.games_read.cursor.clone(),
            games_newest_by_worker: self.games_read.newest_by_worker.clone(),
            games_recent: self.games_read.recent.clone(),
            lineage: Some(self.lineage_now()),
            config: serde_json::to_value(&self.config)?,
        };
        let mut optimizer: Vec<(String, Tensor)> =
            self.momentum.iter().map(|(n, t)| (n.clone(), t.shallow_clone())).collect();
        if self.average.is_some() {
            optimizer.extend(self.network.vs.variables().into_iter().map(|(n, t)| (format!("{TRAINED}{n}"), t)));
        }
        let weights = match &self.average {
            Some(average) => WeightsToWrite::Named(average),
            None => WeightsToWrite::Network(&self.network),
        };
        checkpoint::write(models, &meta, weights, &optimizer)
    }

    /// The lineage with this run's compute up to now.
    pub fn lineage_now(&self) -> Lineage {
        let (steps, samples_drawn, samples_read) = (self.step, self.samples_drawn, self.samples_read);
        let run = Compute { hours: self.run_hours(), steps, samples_drawn, samples_read };
        Lineage { run, ..self.lineage.clone() }
    }

    /// The hours this run has trained: its checkpoint's, and this process's.
    fn run_hours(&self) -> f64 {
        self.lineage.run.hours + self.resumed_at.elapsed().as_secs_f64() / 3600.0
    }

    /// The learning rate of the next step: `train.learning_rate`, times
    /// `lr_drop_factor` for every `lr_drop_every` steps taken and once more past
    /// `lr_drop_after_hours`.
    pub fn learning_rate(&self) -> f64 {
        let t = &self.config.train;
        let drops = match t.lr_drop_every {
            0 => 0,
            every => self.step / every,
        };
        let late = t.lr_drop_after_hours > 0.0 && self.run_hours() >= t.lr_drop_after_hours;
        t.learning_rate * t.lr_drop_factor.powi(drops as i32 + i32::from(late))
    }

    /// One SGD step on `batch`, read back at once. A loss that is not
    /// finite is a [`NonFiniteLoss`] error, and the weights are left as they
    /// were. [`train_steps`] reads back once per [`READ_EVERY`] steps instead.
    pub fn train_step(&mut self, batch: &Batch) -> Result<StepStats> {
        let mut sums = StepSums::new(self.network.device());
        self.step_on_device(&DeviceBatch::new(batch, self.network.device()), &mut sums);
        let interval = self.read(&mut sums);
        let (policy, value) = interval.newest_losses;
        let stats = interval.stats.ok_or(NonFiniteLoss { step: self.step + 1, policy, value })?;
        Ok(StepStats { learning_rate: self.learning_rate(), ..stats })
    }

    /// One SGD step on `batch` that reads nothing back from the device: a
    /// loss that is not finite leaves the weights and momentum as they were
    /// (the update is masked there); the step's measures go into `sums`.
    /// The step is counted now and uncounted by [`Trainer::read`] if it was
    /// skipped.
    pub fn step_on_device(&mut self, batch: &DeviceBatch, sums: &mut StepSums) {
        if let Some(half) = &self.half {
            copy_variables(&self.network, half);
        }
        let network = self.half.as_ref().unwrap_or(&self.network);
        let statistics = statistics_before(network);
        let input = batch.input.to_kind(network.kind());
        let (logits, value, aux) = network.net.forward_all_t(&input, true);
        let (value, aux) = (value.to_kind(Kind::Float), aux.map(|aux| aux.to_kind(Kind::Float)));
        let log_p = logits.masked_fill(&batch.legal.logical_not(), -1e9).log_softmax(-1, Kind::Float);
        // Cross-entropy over the samples with a policy target only.
        let cross_entropy = -(&batch.policy * &log_p).sum_dim_intlist(1, false, Kind::Float);
        let mask = &batch.policy_mask;
        let policy_loss = (cross_entropy * mask).sum(Kind::Float) / mask.sum(Kind::Float).clamp_min(1.0);
        let value_loss = (&value - &batch.value).square().mean(Kind::Float);
        let mut loss = &policy_loss + &value_loss * self.config.train.value_loss_weight;
        let aux_weight = self.config.train.aux_loss_weight;
        let aux_loss = aux.filter(|_| aux_weight > 0.0).map(|aux| {
            let aux_loss = (aux - &batch.aux).square().mean(Kind::Float);
            loss += &aux_loss * aux_weight;
            aux_loss
        });
        // An overflow in the forward pass may leave the loss finite and the
        // statistics not: such a step is skipped too.
        let finite = loss.isfinite().logical_and(&all_finite(&statistics));
        for (_, var) in network.trainable().iter_mut() {
            var.zero_grad();
        }
        loss.backward();
        self.update(&finite);
        // After the backward pass, which reads the statistics it saw.
        keep_statistics_if(&finite, statistics);
        if let Some(half) = &self.half {
            // The batch-norm statistics the step's forward pass updated.
            copy_variables(half, &self.network);
        }
        self.step += 1;
        self.samples_drawn += batch.size as u64;
        let (entropy, errors) = tch::no_grad(|| {
            let p = log_p.exp();
            let entropy = -(&p * log_p.clamp_min(-1e4)).sum_dim_intlist(1, false, Kind::Float).mean(Kind::Float);
            (entropy, (&value - &batch.value).abs().view(-1))
        });
        sums.add(batch, &StepMeasures { policy_loss, value_loss, entropy, aux_loss, errors, finite });
    }

    /// SGD with momentum and weight decay from the gradients, where `finite`
    /// (a boolean scalar on the device) holds; then the moving average.
    fn update(&mut self, finite: &Tensor) {
        let lr = self.learning_rate();
        let (mu, wd) = (self.config.train.momentum, self.config.train.weight_decay);
        let half: Option<BTreeMap<String, Tensor>> =
            self.half.as_ref().map(|half| half.trainable().into_iter().collect());
        tch::no_grad(|| {
            // The learning rate, or 0 for a step that is skipped.
            let rate = finite.to_kind(Kind::Float) * lr;
            for (name, mut var) in self.network.trainable() {
                let grad = match &half {
                    Some(half) => half[&name].grad().to_kind(Kind::Float),
                    None => var.grad(),
                };
                let grad = grad + &var * wd;
                let buf = self.momentum.get_mut(&name).expect("a buffer per variable");
                // A skipped step keeps the buffer, which is finite.
                let updated = (&*buf * mu + grad).where_self(finite, buf);
                buf.copy_(&updated);
                let _ = var.g_sub_(&(updated * &rate));
            }
        });
        if let Some(average) = &mut self.average {
            let decay = average_decay(self.config.train.average_half_life, self.step + 1);
            tch::no_grad(|| {
                for (name, var) in self.network.vs.variables() {
                    let mean = average.get_mut(&name).expect("an average per variable");
                    let _ = mean.g_mul_scalar_(decay).g_add_(&(var * (1.0 - decay)));
                }
            });
        }
    }

    /// Reads `sums` back from the device, uncounting the steps it skipped.
    pub fn read(&mut self, sums: &mut StepSums) -> Interval {
        let interval = sums.read();
        self.step -= interval.skipped_steps;
        self.samples_drawn -= interval.skipped_samples;
        interval
    }
}

/// A checkpoint of another variant than the config's cannot be resumed or
/// continued: its games and its network are another game's.
fn check_variant(meta: &CheckpointMeta, config: &Config, weights: &Path) -> Result<(), LoadError> {
    let path = weights.with_extension("json");
    let Some(found) = meta.variant() else {
        return Err(LoadError::Fields { path, why: "the description names no variant".into() });
    };
    match found == config.game.variant {
        true => Ok(()),
        false => Err(LoadError::Variant { path, found, expected: config.game.variant }),
    }
}

/// A checkpoint's network shape against the config's.
fn check_shape(meta: &CheckpointMeta, network: &NetConfig, weights: &Path) -> Result<(), LoadError> {
    match meta.network == *network {
        true => Ok(()),
        false => {
            Err(LoadError::Shape { path: weights.with_extension("json"), found: meta.network, expected: *network })
        }
    }
}

/// The lineage a resumed run goes on with: its checkpoint's, on this
/// machine too; a checkpoint from before lineages is a run from zero whose
/// hours are unknown.
fn resumed_lineage(lineage: Option<Lineage>) -> Lineage {
    let mut lineage = lineage.unwrap_or_default();
    let here = machine_name();
    if lineage.machine.is_empty() {
        lineage.machine = here;
    } else if !lineage.machine.split(" + ").any(|m| m == here) {
        lineage.machine = format!("{} + {here}", lineage.machine);
    }
    lineage
}

/// A training step whose loss was not finite, taken no further.
#[derive(Debug, thiserror::Error)]
#[error(
    "training step {step}: the loss is not finite (policy {policy}, value {value}), or the batch-norm statistics \
     are not; the weights were left as they were"
)]
pub struct NonFiniteLoss {
    /// The step, which was not taken.
    pub step: u64,
    /// Its policy loss.
    pub policy: f64,
    /// Its value loss.
    pub value: f64,
}

/// Batches in a row whose loss is not finite before training stops: one
/// such batch is skipped, a run of them means the weights themselves are
/// bad, and the newest checkpoint (never a non-finite one) is the last good
/// state to resume from.
pub const MAX_NON_FINITE_IN_A_ROW: u64 = 20;

/// Copies of all the network's variables (batch-norm statistics included).
fn copy_weights(network: &Network) -> BTreeMap<String, Tensor> {
    network.vs.variables().into_iter().map(|(name, var)| (name, var.detach().copy())).collect()
}

/// The copy of `network` that runs the training steps in bf16, when
/// `train.precision` asks for it on this device.
fn bf16_step_copy(network: &Network, precision: Precision) -> Option<Network> {
    match precision.kind(network.device()) {
        Kind::BFloat16 => Some(network.half_copy(Kind::BFloat16)),
        Kind::Half => {
            tracing::warn!("train.precision = fp16 trains in fp32 (it would need loss scaling)");
            None
        }
        _ => None,
    }
}

/// The moving average's decay for the update after `step` steps: a
/// half-life of `half_life` steps, or a quarter of `step` when that is
/// shorter, so that the start of a run is not averaged in for long.
fn average_decay(half_life: u64, step: u64) -> f64 {
    let half_life = (half_life as f64).min(step as f64 / 4.0);
    0.5f64.powf(1.0 / half_life)
}

/// Copies the variables of the fp32 network `from` into its half copy `to`
/// (converting their kind), or back from the half copy only its batch-norm
/// statistics.
fn copy_variables(from: &Network, to: &Network) {
    let statistics_only = from.kind() != Kind::Float;
    let mut to = to.vs.variables();
    tch::no_grad(|| {
        for (name, var) in from.vs.variables() {
            if statistics_only && var.requires_grad() {
                continue;
            }
            to.get_mut(&name).expect("the same variables").copy_(&var);
        }
    });
}

/// The batch-norm running statistics of `network`, each with a copy of its
/// values before a step's forward pass updates them.
fn statistics_before(network: &Network) -> Vec<(Tensor, Tensor)> {
    let statistics = network.vs.variables().into_values().filter(|var| !var.requires_grad());
    statistics.map(|var| (var.detach().copy(), var)).collect()
}

/// Whether every statistic is finite (a boolean scalar on the device).
fn all_finite(statistics: &[(Tensor, Tensor)]) -> Tensor {
    let each: Vec<Tensor> = statistics.iter().map(|(_, var)| var.isfinite().all()).collect();
    Tensor::stack(&each, 0).all()
}

/// Puts back the statistics' values from before the step unless `finite`
/// (a boolean scalar on the device) holds: a skipped step changes nothing.
fn keep_statistics_if(finite: &Tensor, statistics: Vec<(Tensor, Tensor)>) {
    tch::no_grad(|| {
        for (before, mut var) in statistics {
            let kept = var.where_self(finite, &before);
            var.copy_(&kept);
        }
    });
}

/// The window size for `total` samples seen: a fraction of them, within bounds.
pub fn window_size(t: &TrainConfig, total: u64) -> usize {
    ((total as f64 * t.window_fraction) as usize).clamp(t.window_min, t.window_max)
}
