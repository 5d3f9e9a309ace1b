//! What a training step needs and leaves on the device: its batch, copied
//! there ahead of the step (on the batch thread), and its losses and errors,
//! added up there and read back once per [`READ_EVERY`] steps, so that the
//! training thread does not wait for the device between steps.

use tch::{Device, Kind, Tensor};

use super::Batch;
use crate::encoding::{GRID, NUM_ACTIONS, NUM_PLANES};
use crate::samples::AUX_TARGETS;

/// Losses and measures of one training step.
#[derive(Clone, Copy, Debug)]
pub struct StepStats {
    /// The policy's cross-entropy against its targets, over the samples that
    /// have one.
    pub policy_loss: f32,
    /// The value's mean squared error against its targets.
    pub value_loss: f32,
    /// The policy's mean entropy over the legal actions, in nats.
    pub entropy: f32,
    /// The value's mean absolute error.
    pub value_error: f32,
    /// The value's mean absolute error by game phase (see [`PHASES`]), for
    /// the phases the batch holds.
    pub value_error_by_phase: [Option<f32>; PHASES.len()],
    /// The auxiliary targets' loss (mean squared error), when trained.
    pub aux_loss: Option<f32>,
    /// The learning rate of the step.
    pub learning_rate: f64,
}

/// The game phases of the value error, by actions to the game's end: the
/// bounds (inclusive) and the TensorBoard tag. Late positions are nearly
/// decided, so their error says whether the value head learns at all; the
/// early ones' error stays high while their games are open.
pub const PHASES: [(u16, &str); 3] = [
    (10, "value/abs_error_last_10_plies"),
    (40, "value/abs_error_11_to_40_plies_to_end"),
    (u16::MAX, "value/abs_error_over_40_plies_to_end"),
];

/// Steps between reads of the losses from the device (and log lines).
pub const READ_EVERY: u64 = 10;

/// A batch's tensors on the training device.
pub struct DeviceBatch {
    pub(crate) size: usize,
    pub(crate) input: Tensor,
    pub(crate) policy: Tensor,
    /// True for legal actions.
    pub(crate) legal: Tensor,
    pub(crate) value: Tensor,
    pub(crate) policy_mask: Tensor,
    pub(crate) aux: Tensor,
    /// Each sample's index in [`PHASES`].
    pub(crate) phase: Tensor,
}

impl DeviceBatch {
    /// The tensors of `batch`, copied to `device`.
    pub fn new(batch: &Batch, device: Device) -> DeviceBatch {
        let n = batch.size as i64;
        let phase: Vec<i64> = batch.plies_to_end.iter().map(|&plies| phase_of(plies) as i64).collect();
        let on_device = |values: &[f32], shape: &[i64]| Tensor::from_slice(values).view(shape).to(device);
        DeviceBatch {
            size: batch.size,
            input: on_device(&batch.input, &[n, NUM_PLANES as i64, GRID as i64, GRID as i64]),
            policy: on_device(&batch.policy, &[n, NUM_ACTIONS as i64]),
            legal: on_device(&batch.legal, &[n, NUM_ACTIONS as i64]).gt(0.5),
            value: on_device(&batch.value, &[n]),
            policy_mask: on_device(&batch.policy_mask, &[n]),
            aux: on_device(&batch.aux, &[n, AUX_TARGETS as i64]),
            phase: Tensor::from_slice(&phase).to(device),
        }
    }
}

/// The index in [`PHASES`] of a sample `plies` actions from its game's end.
fn phase_of(plies: u16) -> usize {
    PHASES.iter().position(|&(bound, _)| plies <= bound).expect("the last bound is the largest")
}

/// The slots of [`StepSums`]'s vector: losses and the mean error, summed
/// over finite steps; then the samples of finite steps, the errors summed by
/// phase and the samples counted by phase.
const POLICY: usize = 0;
const VALUE: usize = 1;
const ENTROPY: usize = 2;
const AUX: usize = 3;
const ERROR: usize = 4;
const SAMPLES: usize = 5;
const PHASE_ERRORS: usize = 6;
const PHASE_SAMPLES: usize = PHASE_ERRORS + PHASES.len();
const SLOTS: usize = PHASE_SAMPLES + PHASES.len();

/// One step's measures, on the device.
pub struct StepMeasures {
    pub policy_loss: Tensor,
    pub value_loss: Tensor,
    pub entropy: Tensor,
    pub aux_loss: Option<Tensor>,
    /// Each sample's absolute value error.
    pub errors: Tensor,
    /// Whether the step's loss was finite (a boolean scalar).
    pub finite: Tensor,
}

/// The measures of the steps since the last read, summed on the device.
pub struct StepSums {
    sums: Tensor,
    /// Steps whose loss was finite.
    finite_steps: Tensor,
    /// Steps in a row whose loss was not finite, up to the newest.
    in_a_row: Tensor,
    /// The newest step's policy and value losses, finite or not.
    newest: Tensor,
    aux_trained: bool,
    /// Steps and samples added since the last read.
    pub steps: u64,
    samples: u64,
}

/// What [`StepSums::read`] found.
#[derive(Clone, Copy, Debug)]
pub struct Interval {
    /// Means over the finite steps (none when every step was skipped);
    /// `learning_rate` is left at 0 for the caller.
    pub stats: Option<StepStats>,
    /// Steps whose loss was finite.
    pub finite_steps: u64,
    /// Steps skipped for a loss that was not finite.
    pub skipped_steps: u64,
    /// Samples of the skipped steps.
    pub skipped_samples: u64,
    /// Steps in a row, up to the newest, whose loss was not finite.
    pub in_a_row: u64,
    /// The newest step's policy and value losses.
    pub newest_losses: (f64, f64),
}

impl StepSums {
    /// Empty sums, on `device`.
    pub fn new(device: Device) -> StepSums {
        let zero = || Tensor::zeros([], (Kind::Float, device));
        StepSums {
            sums: Tensor::zeros([SLOTS as i64], (Kind::Float, device)),
            finite_steps: zero(),
            in_a_row: zero(),
            newest: Tensor::zeros([2], (Kind::Float, device)),
            aux_trained: false,
            steps: 0,
            samples: 0,
        }
    }

    /// Adds a step's measures; a step whose loss was not finite adds nothing
    /// but its count.
    pub fn add(&mut self, batch: &DeviceBatch, step: &StepMeasures) {
        tch::no_grad(|| {
            let device = self.sums.device();
            let phases = PHASES.len() as i64;
            let errors = step.errors.to_kind(Kind::Float);
            let by_phase = Tensor::zeros([phases], (Kind::Float, device)).index_add(0, &batch.phase, &errors);
            let counts = Tensor::zeros([phases], (Kind::Float, device)).index_add(0, &batch.phase, &errors.ones_like());
            let zero = Tensor::zeros([], (Kind::Float, device));
            let aux = step.aux_loss.as_ref().unwrap_or(&zero);
            let scalars = [&step.policy_loss, &step.value_loss, &step.entropy, aux, &errors.mean(Kind::Float)];
            let scalars: Vec<Tensor> = scalars.iter().map(|t| t.to_kind(Kind::Float)).collect();
            let samples = Tensor::full([1], batch.size as f64, (Kind::Float, device));
            let row = Tensor::cat(&[Tensor::stack(&scalars, 0), samples, by_phase, counts], 0);
            self.sums += row.where_self(&step.finite, &zero);
            let finite = step.finite.to_kind(Kind::Float);
            self.finite_steps += &finite;
            self.in_a_row = (&self.in_a_row + 1) * (1 - &finite);
            self.newest = Tensor::stack(&scalars[..2], 0);
        });
        self.aux_trained |= step.aux_loss.is_some();
        self.steps += 1;
        self.samples += batch.size as u64;
    }

    /// Reads the sums back (the one wait for the device) and starts them
    /// again; the count of non-finite steps in a row carries on.
    pub fn read(&mut self) -> Interval {
        let sums = Vec::<f32>::try_from(&self.sums).expect("a float vector");
        let finite_steps = self.finite_steps.double_value(&[]) as u64;
        let in_a_row = self.in_a_row.double_value(&[]) as u64;
        let newest_losses = (self.newest.double_value(&[0]), self.newest.double_value(&[1]));
        let skipped_steps = self.steps - finite_steps;
        let skipped_samples = self.samples - sums[SAMPLES] as u64;
        let stats = (finite_steps > 0).then(|| {
            let mean = |slot: usize| sums[slot] / finite_steps as f32;
            StepStats {
                policy_loss: mean(POLICY),
                value_loss: mean(VALUE),
                entropy: mean(ENTROPY),
                value_error: mean(ERROR),
                value_error_by_phase: std::array::from_fn(|i| {
                    let n = sums[PHASE_SAMPLES + i];
                    (n > 0.0).then(|| sums[PHASE_ERRORS + i] / n)
                }),
                aux_loss: self.aux_trained.then(|| mean(AUX)),
                learning_rate: 0.0,
            }
        });
        let _ = self.sums.zero_();
        let _ = self.finite_steps.zero_();
        (self.steps, self.samples) = (0, 0);
        Interval { stats, finite_steps, skipped_steps, skipped_samples, in_a_row, newest_losses }
    }
}
