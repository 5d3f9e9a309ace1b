//! The policy/value network on LibTorch: a residual tower over the input
//! planes of [`crate::encoding`], a policy head over the action indices and a
//! value head; the search evaluates through its [`Forward`].

use std::path::Path;

use anyhow::{Context, Result};
use tch::nn;
use tch::{Device, Kind, Tensor};

use crate::encoding::{GRID, INPUT_SIZE, NUM_ACTIONS, NUM_PLANES};
use crate::error::LoadError;
use crate::search::Forward;

mod device;
mod folded;
mod grow;
pub(crate) mod onnx;
pub(crate) mod onnxruntime;
mod precision;
pub use device::{cuda_summary, parse_device, parse_device_among};
use folded::FoldedNet;
pub use folded::FORWARD;
pub use gipf_core::network::NetConfig;
use onnxruntime::OnnxNet;
pub use precision::{cpu_has_bf16, kind_name, machine_name, Backend, Inference, Precision};

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

/// Whether the variable `name` belongs to a batch-norm layer (`stem_bn`,
/// `bn1` and `bn2` of each block, `policy_bn`, `value_bn`).
pub(crate) fn is_batch_norm(name: &str) -> bool {
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
pub(crate) struct PolicyValueNet {
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
///
/// ```rust
/// use gipf::encoding::{encode, INPUT_SIZE, NUM_ACTIONS};
/// use gipf::net::{NetConfig, Network};
/// use gipf::rules::{Position, Variant};
///
/// let config = NetConfig { blocks: 1, channels: 8, value_hidden: 8, value_pooling: false, aux_targets: false };
/// let network = Network::new(&config, tch::Device::Cpu, 0);
/// let mut input = vec![0.0; 2 * INPUT_SIZE];
/// encode(&Position::new(Variant::Standard), &mut input[..INPUT_SIZE]);
/// encode(&Position::new(Variant::Basic), &mut input[INPUT_SIZE..]);
/// let (logits, values) = network.infer(&input, 2);
/// assert_eq!((logits.len(), values.len()), (2 * NUM_ACTIONS, 2));
/// assert!(values.iter().all(|v| v.abs() <= 1.0));
/// ```
pub struct Network {
    /// The variables, by name. Changing them leaves the layers folded by
    /// [`Network::prepare_for_play`] as they were.
    pub(crate) vs: nn::VarStore,
    pub(crate) net: PolicyValueNet,
    pub(crate) config: NetConfig,
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
    /// shape: every variable, each fp32, of its shape and finite (else a
    /// [`LoadError`]: `Missing` or `Damaged`, which are damage, or
    /// `Unreadable`).
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

    /// The device its variables are on.
    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// Its shape.
    pub fn config(&self) -> &NetConfig {
        &self.config
    }

    /// Every variable by name, batch-norm running statistics included:
    /// tensors sharing the network's storage, so that a change made through
    /// one changes the network (but not a copy folded for play by
    /// [`Network::prepare_for_play`]).
    pub fn variables(&self) -> std::collections::HashMap<String, Tensor> {
        self.vs.variables()
    }

    /// Policy logits `[N, NUM_ACTIONS]` and values `[N]` of the input
    /// planes `xs` (`[N, NUM_PLANES, 7, 7]`, on the network's device), as
    /// training computes them: with `train`, each batch norm normalises by
    /// the batch's statistics and updates its running ones. The unfolded
    /// layers, whatever [`Network::prepare_for_play`] chose.
    pub fn forward_t(&self, xs: &Tensor, train: bool) -> (Tensor, Tensor) {
        self.net.forward_t(xs, train)
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
