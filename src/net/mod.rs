//! The policy/value network on LibTorch: a residual tower over the input
//! planes of [`crate::encoding`], a policy head over the action indices and a
//! value head; the search evaluates through its [`Forward`].

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use tch::nn;
use tch::{Device, Kind, Tensor};

use crate::encoding::{GRID, INPUT_SIZE, NUM_ACTIONS, NUM_PLANES};
use crate::error::LoadError;
use crate::search::Forward;

mod folded;
mod grow;
pub(crate) mod onnx;
pub mod onnxruntime;
use folded::FoldedNet;
pub use folded::FORWARD;
pub use gipf_core::network::NetConfig;
use onnxruntime::OnnxNet;

/// The number format of forward passes (`play.precision`) or of training
/// steps (`train.precision`). Half precision runs two to
/// four times the positions per second where the hardware has it (GPUs;
/// CPUs with AVX512-BF16 or AMX) and is emulated, slowly, where it has not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    #[default]
    Fp32,
    Bf16,
    Fp16,
    /// bf16 on CUDA devices and on CPUs whose flags show bf16 units, fp32
    /// elsewhere (fp16 is for GPUs older than bf16: say it by name).
    Auto,
}

impl Precision {
    /// The tensor kind of the forward passes on `device`.
    pub fn kind(self, device: Device) -> Kind {
        self.kind_where(device, cpu_has_bf16())
    }

    /// The kind on `device` of a machine whose CPU has bf16 units or not.
    fn kind_where(self, device: Device, cpu_bf16: bool) -> Kind {
        match self {
            Precision::Fp32 => Kind::Float,
            Precision::Bf16 => Kind::BFloat16,
            Precision::Fp16 => Kind::Half,
            Precision::Auto if device.is_cuda() || cpu_bf16 => Kind::BFloat16,
            Precision::Auto => Kind::Float,
        }
    }

    /// Its name in configs: `fp32`, `bf16`, `fp16` or `auto`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
            Precision::Auto => "auto",
        }
    }

    /// The precision of that name.
    pub fn parse(name: &str) -> Option<Precision> {
        [Precision::Fp32, Precision::Bf16, Precision::Fp16, Precision::Auto].into_iter().find(|p| p.name() == name)
    }
}

/// The library that runs the forward passes at play (`play.backend`).
/// Training runs on LibTorch whatever it says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// ONNX Runtime for fp32 on a CPU where its library loads (the faster
    /// there), LibTorch for bf16, fp16 and GPUs.
    #[default]
    Auto,
    Libtorch,
    /// fp32 on the CPU only.
    Onnxruntime,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Auto, Backend::Libtorch, Backend::Onnxruntime];

    /// Its name in configs: `auto`, `libtorch` or `onnxruntime`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Libtorch => "libtorch",
            Backend::Onnxruntime => "onnxruntime",
        }
    }

    /// The backend of that name.
    pub fn parse(name: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == name)
    }

    /// The backend that runs passes in `kind` on `device`: never `Auto`.
    /// ONNX Runtime asked for where it cannot run (not fp32 on the CPU, or
    /// its library missing) is an error; `Auto` then runs LibTorch.
    pub fn resolve(self, device: Device, kind: Kind) -> Result<Backend> {
        let fits = device == Device::Cpu && kind == Kind::Float;
        match self {
            Backend::Libtorch => Ok(Backend::Libtorch),
            Backend::Onnxruntime if !fits => {
                bail!("ONNX Runtime runs fp32 forward passes on the CPU, not {} on {device:?}", kind_name(kind))
            }
            Backend::Onnxruntime => onnxruntime::load_library().map(|()| Backend::Onnxruntime),
            Backend::Auto if !fits => Ok(Backend::Libtorch),
            Backend::Auto => match onnxruntime::load_library() {
                Ok(()) => Ok(Backend::Onnxruntime),
                Err(why) => {
                    static WARNED: std::sync::Once = std::sync::Once::new();
                    WARNED.call_once(|| tracing::warn!("{why}: forward passes on LibTorch"));
                    Ok(Backend::Libtorch)
                }
            },
        }
    }

    /// How a resolved backend's forward pass runs, as a match record names
    /// it: a faster one is a stronger player at a time per action.
    pub fn forward_name(self) -> &'static str {
        debug_assert!(self != Backend::Auto, "a resolved backend is named");
        match self {
            Backend::Onnxruntime => "onnxruntime, folded",
            Backend::Auto | Backend::Libtorch => FORWARD,
        }
    }
}

/// How a network's forward passes run at play: their number format and
/// the library that runs them (`play.precision`, `play.backend`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inference {
    pub precision: Precision,
    pub backend: Backend,
}

impl Inference {
    /// fp32 on LibTorch: the forward pass that training's matches.
    pub const FP32_LIBTORCH: Inference = Inference { precision: Precision::Fp32, backend: Backend::Libtorch };

    /// What runs on `device`: the kind and the backend resolved (see
    /// [`Backend::resolve`]). ONNX Runtime asked for in `auto` precision
    /// runs fp32, the one it runs.
    pub fn resolve(self, device: Device) -> Result<(Kind, Backend)> {
        let kind = match (self.backend, self.precision) {
            (Backend::Onnxruntime, Precision::Auto) => Kind::Float,
            _ => self.precision.kind(device),
        };
        Ok((kind, self.backend.resolve(device, kind)?))
    }
}

/// The name of a tensor kind of play: fp32, bf16 or fp16.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::BFloat16 => "bf16",
        Kind::Half => "fp16",
        _ => "fp32",
    }
}

/// Whether this CPU computes in bf16 natively (`avx512_bf16` or `amx_bf16`
/// among its flags).
pub fn cpu_has_bf16() -> bool {
    flags_show_bf16(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
}

/// Whether the `flags` lines of a `/proc/cpuinfo` text name bf16 units.
fn flags_show_bf16(cpuinfo: &str) -> bool {
    cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|flag| flag == "avx512_bf16" || flag == "amx_bf16"))
}

/// This machine in a few words, for a checkpoint's lineage: the CPU's model
/// name, its cores, and whether it has bf16 units.
pub fn machine_name() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model =
        info.lines().find_map(|l| l.strip_prefix("model name")).map(|rest| rest.trim_start_matches([' ', '\t', ':']));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let bf16 = if cpu_has_bf16() { ", bf16 units" } else { "" };
    format!("{} ({cores} cores{bf16})", model.unwrap_or(std::env::consts::ARCH).trim())
}

/// The number of auxiliary outputs of a network with `aux_targets`.
pub const AUX_OUTPUTS: i64 = crate::samples::AUX_TARGETS as i64;

/// Runs `draw` with LibTorch's random generator seeded with `seed`.
/// LibTorch has one generator for the process: seeding it and drawing is
/// one step, or another thread's draws (another network built at the same
/// time) would change what `draw` draws. Every draw from it goes through here.
pub(crate) fn seeded<T>(seed: i64, draw: impl FnOnce() -> T) -> T {
    static DRAWING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _drawing = DRAWING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    tch::manual_seed(seed);
    draw()
}

/// `n` random inputs (drawn from `n`), for the unit tests.
#[cfg(test)]
pub(crate) fn random_input(n: i64) -> Tensor {
    seeded(n, || Tensor::rand([n, INPUT_SIZE as i64], (Kind::Float, Device::Cpu))).view([n, -1, 7, 7])
}

/// The smallest network, for the unit tests.
#[cfg(test)]
pub(crate) const TINY: NetConfig =
    NetConfig { blocks: 1, channels: 8, value_hidden: 8, value_pooling: false, aux_targets: false };

/// Reads `auto`, `cpu`, `cuda` or `cuda:N`; `auto` picks CUDA when present.
pub fn parse_device(text: &str) -> Result<Device> {
    parse_device_among(text, tch::Cuda::device_count().max(0) as usize)
}

/// [`parse_device`] on a machine where LibTorch sees `cuda_count` GPUs.
pub fn parse_device_among(text: &str, cuda_count: usize) -> Result<Device> {
    let device = match text {
        "auto" if cuda_count > 0 => Device::Cuda(0),
        "auto" => Device::Cpu,
        "cpu" => Device::Cpu,
        "cuda" => Device::Cuda(0),
        _ => match text.strip_prefix("cuda:").and_then(|n| n.parse().ok()) {
            Some(n) => Device::Cuda(n),
            None => bail!("unknown device '{text}': expected auto, cpu, cuda or cuda:N"),
        },
    };
    if let Device::Cuda(n) = device {
        anyhow::ensure!(
            n < cuda_count,
            "device {text}: LibTorch sees {cuda_count} CUDA devices (no driver, no GPU, or libtorch_cuda.so not loaded)"
        );
    }
    Ok(device)
}

/// What LibTorch sees of CUDA, in one line.
pub fn cuda_summary() -> String {
    let count = tch::Cuda::device_count();
    match count {
        0 => "CUDA: not available (CPU only)".to_string(),
        n => format!("CUDA: {n} device(s), cuDNN {}", if tch::Cuda::cudnn_is_available() { "yes" } else { "no" }),
    }
}

/// Whether the variable `name` belongs to a batch-norm layer (`stem_bn`,
/// `bn1` and `bn2` of each block, `policy_bn`, `value_bn`).
pub fn is_batch_norm(name: &str) -> bool {
    let layer = name.rsplit('.').nth(1).unwrap_or_default();
    layer.ends_with("_bn") || layer == "bn1" || layer == "bn2"
}

/// The batch norms' epsilon (LibTorch's default), which folding needs.
const BATCH_NORM_EPS: f64 = 1e-5;

fn batch_norm(p: nn::Path, c: i64) -> nn::BatchNorm {
    nn::batch_norm2d(p, c, nn::BatchNormConfig { eps: BATCH_NORM_EPS, ..Default::default() })
}

fn conv(p: nn::Path, c_in: i64, c_out: i64, k: i64) -> nn::Conv2D {
    let config = nn::ConvConfig { padding: k / 2, bias: false, ..Default::default() };
    nn::conv2d(p, c_in, c_out, k, config)
}

#[derive(Debug)]
struct ResBlock {
    conv1: nn::Conv2D,
    bn1: nn::BatchNorm,
    conv2: nn::Conv2D,
    bn2: nn::BatchNorm,
}

impl ResBlock {
    fn new(p: &nn::Path, c: i64) -> ResBlock {
        ResBlock {
            conv1: conv(p / "conv1", c, c, 3),
            bn1: batch_norm(p / "bn1", c),
            conv2: conv(p / "conv2", c, c, 3),
            bn2: batch_norm(p / "bn2", c),
        }
    }

    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        let y = x.apply(&self.conv1).apply_t(&self.bn1, train).relu().apply(&self.conv2).apply_t(&self.bn2, train);
        (y + x).relu()
    }
}

/// The network's layers.
#[derive(Debug)]
pub struct PolicyValueNet {
    stem: nn::Conv2D,
    stem_bn: nn::BatchNorm,
    blocks: Vec<ResBlock>,
    policy_conv: nn::Conv2D,
    policy_bn: nn::BatchNorm,
    policy_fc: nn::Linear,
    value_conv: nn::Conv2D,
    value_bn: nn::BatchNorm,
    value_fc1: nn::Linear,
    value_fc2: nn::Linear,
    value_pooling: bool,
    value_aux: Option<nn::Linear>,
}

const CELLS: i64 = (GRID * GRID) as i64;

impl PolicyValueNet {
    pub fn new(p: &nn::Path, config: &NetConfig) -> PolicyValueNet {
        let c = config.channels;
        PolicyValueNet {
            stem: conv(p / "stem", NUM_PLANES as i64, c, 3),
            stem_bn: batch_norm(p / "stem_bn", c),
            blocks: (0..config.blocks).map(|i| ResBlock::new(&(p / "blocks" / i), c)).collect(),
            policy_conv: conv(p / "policy_conv", c, 2, 1),
            policy_bn: batch_norm(p / "policy_bn", 2),
            policy_fc: nn::linear(p / "policy_fc", 2 * CELLS, NUM_ACTIONS as i64, Default::default()),
            value_conv: conv(p / "value_conv", c, 1, 1),
            value_bn: batch_norm(p / "value_bn", 1),
            value_fc1: nn::linear(
                p / "value_fc1",
                CELLS + if config.value_pooling { c } else { 0 },
                config.value_hidden,
                Default::default(),
            ),
            value_fc2: nn::linear(p / "value_fc2", config.value_hidden, 1, Default::default()),
            value_pooling: config.value_pooling,
            value_aux: config
                .aux_targets
                .then(|| nn::linear(p / "value_aux", config.value_hidden, AUX_OUTPUTS, Default::default())),
        }
    }

    /// `xs`: `[N, NUM_PLANES, 7, 7]`. Returns policy logits `[N, NUM_ACTIONS]`
    /// and values in [-1, 1] for the player to act, `[N]`.
    pub fn forward_t(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
        let (policy, value, _) = self.forward_all_t(xs, train);
        (policy, value)
    }

    /// As [`Self::forward_t`], with the auxiliary outputs in [-1, 1],
    /// `[N, AUX_OUTPUTS]`, when the network has them.
    pub fn forward_all_t(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor, Option<Tensor>) {
        let mut x = xs.apply(&self.stem).apply_t(&self.stem_bn, train).relu();
        for block in &self.blocks {
            x = block.forward_t(&x, train);
        }
        let policy =
            x.apply(&self.policy_conv).apply_t(&self.policy_bn, train).relu().flatten(1, -1).apply(&self.policy_fc);
        let mut features = x.apply(&self.value_conv).apply_t(&self.value_bn, train).relu().flatten(1, -1);
        if self.value_pooling {
            features = Tensor::cat(&[features, x.mean_dim(&[2i64, 3][..], false, None::<Kind>)], 1);
        }
        let hidden = features.apply(&self.value_fc1).relu();
        let value = hidden.apply(&self.value_fc2).tanh().squeeze_dim(1);
        let aux = self.value_aux.as_ref().map(|layer| hidden.apply(layer).tanh());
        (policy, value, aux)
    }
}

/// A network with its weights, on a device.
pub struct Network {
    pub vs: nn::VarStore,
    pub net: PolicyValueNet,
    pub config: NetConfig,
    /// The kind of [`Network::infer`]'s forward passes (see [`Network::prepare_for_play`]).
    kind: Kind,
    /// The layers [`Network::infer`] runs once the network is prepared for
    /// play on LibTorch.
    folded: Option<FoldedNet>,
    /// The session [`Network::infer`] runs once the network is prepared for
    /// play on ONNX Runtime.
    onnx: Option<OnnxNet>,
}

impl Network {
    /// A freshly initialised network (weights drawn from `seed`).
    pub fn new(config: &NetConfig, device: Device, seed: i64) -> Network {
        seeded(seed, || {
            let vs = nn::VarStore::new(device);
            let net = PolicyValueNet::new(&vs.root(), config);
            Network { vs, net, config: *config, kind: Kind::Float, folded: None, onnx: None }
        })
    }

    /// Loads weights saved by [`Network::save`] into a network of `config`'s
    /// shape: every variable, each fp32, of its shape and finite (else
    /// [`LoadError::Damaged`]).
    pub fn load(path: &Path, config: &NetConfig, device: Device) -> Result<Network, LoadError> {
        let network = Network::new(config, device, 0);
        let variables = network.vs.variables();
        let tensors = crate::weights::read(path, &network.shapes())?;
        crate::weights::require(&tensors, variables.keys(), path)?;
        tch::no_grad(|| {
            for (name, tensor) in &tensors {
                variables[name].shallow_clone().copy_(&crate::weights::tensor(tensor));
            }
        });
        Ok(network)
    }

    /// The shape of each variable, by name.
    pub fn shapes(&self) -> std::collections::BTreeMap<String, Vec<usize>> {
        let shape = |t: &Tensor| t.size().iter().map(|&n| n as usize).collect();
        self.vs.variables().iter().map(|(name, var)| (name.clone(), shape(var))).collect()
    }

    /// Saves the weights (safetensors when the name ends in `.safetensors`).
    pub fn save(&self, path: &Path) -> Result<()> {
        self.vs.save(path).with_context(|| format!("cannot save weights to {}", path.display()))
    }

    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// Runs [`Network::infer`] as `inference` says from now on, with
    /// each batch norm folded into the convolution before it (a fifth more
    /// positions per second on a CPU); ONNX Runtime's threads are
    /// LibTorch's intra-op threads at this call. For play only: the folded
    /// copy does not follow later changes to the weights, and such a
    /// network is not trained. On CUDA, cuDNN's autotuner picks each
    /// convolution's fastest algorithm for the batch sizes it meets
    /// (self-play's stay close).
    pub fn prepare_for_play(&mut self, inference: Inference) -> Result<()> {
        if self.device().is_cuda() {
            tch::Cuda::cudnn_set_benchmark(true);
        }
        let (kind, backend) = inference.resolve(self.device())?;
        let folded = FoldedNet::new(&self.net, kind);
        // Nothing changes until every part is built: a refusal leaves the network as it was.
        let (folded, onnx) = match backend {
            Backend::Onnxruntime => (None, Some(OnnxNet::new(&folded, tch::get_num_threads().max(1) as usize)?)),
            _ => (Some(folded), None),
        };
        (self.kind, self.folded, self.onnx) = (kind, folded, onnx);
        Ok(())
    }

    /// The network as an ONNX model (input `planes`, `[N, 19, 7, 7]`;
    /// output `policy_value`, `[N, NUM_ACTIONS + 1]`): its current weights in
    /// fp32, each batch norm folded into the convolution before it.
    pub fn onnx_model(&self) -> Vec<u8> {
        onnx::model(&FoldedNet::new(&self.net, Kind::Float))
    }

    /// The backend [`Network::infer`] runs on.
    pub fn backend(&self) -> Backend {
        if self.onnx.is_some() {
            Backend::Onnxruntime
        } else {
            Backend::Libtorch
        }
    }

    /// A network of the same shape in `kind`, for a trainer to run its
    /// steps' forward and backward passes in half precision: its weights
    /// are the trainer's fp32 weights, copied in before each step.
    /// Its batch-norm layers stay in fp32 (LibTorch runs them on half
    /// inputs): their running statistics move by a tenth of a batch's
    /// difference a step, which bf16's three digits would often round away.
    pub fn half_copy(&self, kind: Kind) -> Network {
        let vs = nn::VarStore::new(self.device());
        let net = PolicyValueNet::new(&vs.root(), &self.config);
        for (name, mut var) in vs.variables() {
            if !is_batch_norm(&name) {
                var.set_data(&var.to_kind(kind));
            }
        }
        Network { vs, net, config: self.config, kind, folded: None, onnx: None }
    }

    /// The kind of the forward passes at play.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The trainable variables by name, sorted (batch-norm running
    /// statistics excluded).
    pub fn trainable(&self) -> Vec<(String, Tensor)> {
        let mut vars: Vec<(String, Tensor)> =
            self.vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
        vars.sort_by(|a, b| a.0.cmp(&b.0));
        vars
    }

    /// Runs the network on `n` encoded positions (`n * INPUT_SIZE` floats) in
    /// inference mode. Returns the logits (`n * NUM_ACTIONS`) and values (`n`).
    pub fn infer(&self, input: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        assert_eq!(input.len(), n * INPUT_SIZE);
        if let Some(onnx) = &self.onnx {
            // As LibTorch's own failures do: a run that fails here is out of memory or a broken library.
            return onnx.forward(input, n).unwrap_or_else(|e| panic!("{e:#}"));
        }
        let _guard = tch::no_grad_guard();
        let xs = Tensor::from_slice(input)
            .view([n as i64, NUM_PLANES as i64, GRID as i64, GRID as i64])
            .to_device(self.device())
            .to_kind(self.kind);
        let (policy, value) = match &self.folded {
            Some(folded) => folded.forward(&xs),
            None => self.net.forward_t(&xs, false),
        };
        let policy = policy.to_kind(Kind::Float).to(Device::Cpu).contiguous().view(-1);
        let value = value.to_kind(Kind::Float).to(Device::Cpu).contiguous();
        (Vec::<f32>::try_from(&policy).expect("float logits"), Vec::<f32>::try_from(&value).expect("float values"))
    }
}

impl Forward for Network {
    fn forward(&mut self, input: &[f32], n: usize) -> (Vec<f32>, Vec<f32>) {
        self.infer(input, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::encode;
    use crate::rules::{Position, Variant};
    use crate::search::{Evaluation, Evaluator};

    #[test]
    fn a_cuda_device_libtorch_does_not_see_is_refused() {
        let missing = format!("cuda:{}", tch::Cuda::device_count());
        let err = format!("{:#}", parse_device(&missing).unwrap_err());
        assert!(err.contains(&format!("device {missing}: LibTorch sees")), "{err}");
        assert!(format!("{:#}", parse_device("gpu").unwrap_err()).contains("unknown device 'gpu'"));
        assert!(parse_device("cuda:x").is_err());
        assert_eq!(parse_device("cpu").unwrap(), Device::Cpu);
    }

    /// The reference model in bf16 and fp16 against fp32, on about 300
    /// positions of random games: the same top action wherever fp32's leads
    /// the second by a point or more (bf16 measured: 275 of 275, and 313 of
    /// 317 with near-ties), values within 0.005 on average and 0.05 at worst
    /// (bf16 measured: 0.0012 and 0.013; fp16: 0.0001 and 0.0008).
    #[test]
    fn half_precision_agrees_with_fp32() {
        use rand::{seq::IndexedRandom, SeedableRng};
        let weights = concat!(env!("CARGO_MANIFEST_DIR"), "/models/reference.safetensors");
        let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
        let mut positions = Vec::new();
        while positions.len() < 300 {
            let mut pos = Position::new(Variant::Standard);
            for _ in 0..80 {
                let legal = pos.legal_actions();
                let Some(&action) = legal.choose(&mut rng) else { break };
                positions.push(pos);
                pos.play(action).unwrap();
            }
        }
        let (mut fp32, _) = crate::checkpoint::load_checkpoint(Path::new(weights), Device::Cpu).unwrap();
        let reference = fp32.evaluate(&positions);
        for (precision, value_tolerance) in [(Precision::Bf16, 0.05), (Precision::Fp16, 0.005)] {
            let (mut half, _) = crate::checkpoint::load_checkpoint(Path::new(weights), Device::Cpu).unwrap();
            half.prepare_for_play(Inference { precision, backend: Backend::Libtorch }).unwrap();
            assert_ne!(half.kind(), Kind::Float);
            let evaluations = half.evaluate(&positions);
            let top = |e: &Evaluation| e.priors.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0;
            let same = reference.iter().zip(&evaluations).filter(|(a, b)| top(a) == top(b)).count();
            let lead = |e: &Evaluation| {
                let mut p = e.priors.clone();
                p.sort_by(|a, b| b.total_cmp(a));
                p[0] - p.get(1).copied().unwrap_or(0.0)
            };
            let clear: Vec<_> = reference.iter().zip(&evaluations).filter(|(a, _)| lead(a) >= 0.01).collect();
            let clear_same = clear.iter().filter(|(a, b)| top(a) == top(b)).count();
            let errors: Vec<f32> = reference.iter().zip(&evaluations).map(|(a, b)| (a.value - b.value).abs()).collect();
            let worst = errors.iter().copied().fold(0.0, f32::max);
            let n = positions.len();
            let mean = errors.iter().sum::<f32>() / n as f32;
            assert_eq!(clear_same, clear.len(), "{precision:?}: the top action where it leads by a point or more");
            assert!(same * 100 >= 97 * n, "{precision:?}: the same top action in {same} of {n}");
            assert!(worst <= value_tolerance, "{precision:?}: values differ by up to {worst}");
            assert!(mean <= value_tolerance / 10.0, "{precision:?}: values differ by {mean} on average");
        }
    }

    /// `auto` is bf16 on CUDA and where the CPU's flags name bf16 units
    /// (AVX512-BF16 or AMX), fp32 elsewhere; a named precision is itself.
    #[test]
    fn auto_is_bf16_where_the_cpu_has_bf16_units_and_on_cuda() {
        let zen5 = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 avx512_vnni\nbugs\t\t: sysret_ss_attrs\n";
        let xeon = "flags\t\t: fpu avx2 amx_bf16 amx_tile\n";
        // The words on another line than the flags' name no unit.
        let zen3 = "flags\t\t: fpu avx2 fma\nmodel name\t: not avx512_bf16\n";
        assert!(flags_show_bf16(zen5) && flags_show_bf16(xeon));
        assert!(!flags_show_bf16(zen3) && !flags_show_bf16(""));
        assert_eq!(Precision::Auto.kind_where(Device::Cpu, true), Kind::BFloat16);
        assert_eq!(Precision::Auto.kind_where(Device::Cpu, false), Kind::Float);
        assert_eq!(Precision::Auto.kind_where(Device::Cuda(0), false), Kind::BFloat16);
        assert_eq!(Precision::Fp32.kind_where(Device::Cuda(0), true), Kind::Float);
        assert_eq!(Precision::Fp16.kind_where(Device::Cpu, true), Kind::Half);
    }

    /// A seed gives the same weights while other threads draw from
    /// LibTorch's one random generator at the same time (other networks
    /// built, other seeds set), as in `gipf loop` and in parallel tests.
    #[test]
    fn a_seed_gives_the_same_weights_beside_other_threads() {
        let weights = |net: &Network| -> Vec<Vec<f32>> {
            net.vs.trainable_variables().iter().map(|t| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap()).collect()
        };
        let config = NetConfig { blocks: 2, channels: 16, ..TINY };
        let alone = weights(&Network::new(&config, Device::Cpu, 7));
        let built: Vec<_> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..4)
                .map(|i| {
                    scope.spawn(move || {
                        (0..20).map(|_| weights(&Network::new(&config, Device::Cpu, 7 + i % 2))).collect::<Vec<_>>()
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        for (i, nets) in built.iter().enumerate() {
            match i % 2 {
                0 => assert!(nets.iter().all(|w| *w == alone), "thread {i}: other weights from the same seed"),
                _ => assert!(nets.iter().all(|w| *w != alone), "thread {i}: the same weights from another seed"),
            }
        }
    }

    #[test]
    fn shapes_priors_and_values() {
        let mut net = Network::new(&TINY, Device::Cpu, 1);
        let positions = [Position::new(Variant::Standard), Position::new(Variant::Tournament)];
        let evals = net.evaluate(&positions);
        for (pos, eval) in positions.iter().zip(&evals) {
            assert_eq!(eval.priors.len(), pos.legal_actions().len());
            assert!((eval.priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert!(eval.value.abs() <= 1.0);
        }
    }

    #[test]
    fn saved_weights_load_back_to_the_same_outputs() {
        let net = Network::new(&TINY, Device::Cpu, 2);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.safetensors");
        net.save(&path).unwrap();
        let loaded = Network::load(&path, &TINY, Device::Cpu).unwrap();
        let mut input = vec![0.0; INPUT_SIZE];
        encode(&Position::new(Variant::Basic), &mut input);
        assert_eq!(net.infer(&input, 1), loaded.infer(&input, 1));
        let other = NetConfig { channels: 16, ..TINY };
        assert!(Network::load(&path, &other, Device::Cpu).is_err());
        assert!(Network::load(&dir.path().join("missing.safetensors"), &TINY, Device::Cpu).is_err());
    }

    /// Global pooling and the auxiliary outputs change the value head only;
    /// such a network saves and loads as any other, and not as the plain one.
    #[test]
    fn pooling_and_auxiliary_outputs() {
        let config = NetConfig { value_pooling: true, aux_targets: true, ..TINY };
        let net = Network::new(&config, Device::Cpu, 3);
        let mut input = vec![0.0; 2 * INPUT_SIZE];
        encode(&Position::new(Variant::Standard), &mut input[..INPUT_SIZE]);
        encode(&Position::new(Variant::Basic), &mut input[INPUT_SIZE..]);
        let xs = Tensor::from_slice(&input).view([2, NUM_PLANES as i64, GRID as i64, GRID as i64]);
        let (policy, value, aux) = net.net.forward_all_t(&xs, false);
        assert_eq!((policy.size(), value.size()), (vec![2, NUM_ACTIONS as i64], vec![2]));
        let aux = aux.expect("auxiliary outputs");
        assert_eq!(aux.size(), [2, AUX_OUTPUTS]);
        assert!(aux.abs().max().double_value(&[]) <= 1.0);
        assert!(Network::new(&TINY, Device::Cpu, 3).net.forward_all_t(&xs, false).2.is_none());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.safetensors");
        net.save(&path).unwrap();
        assert_eq!(net.infer(&input, 2), Network::load(&path, &config, Device::Cpu).unwrap().infer(&input, 2));
        assert!(Network::load(&path, &TINY, Device::Cpu).is_err(), "the plain network's shape differs");
        // Descriptions written before these options read as without them.
        let old: NetConfig = serde_json::from_str(r#"{"blocks": 1, "channels": 8, "value_hidden": 8}"#).unwrap();
        assert_eq!(old, TINY);
        assert_eq!(serde_json::to_string(&TINY).unwrap(), r#"{"blocks":1,"channels":8,"value_hidden":8}"#);
    }
}
