//! Forward passes on ONNX Runtime, for play on a CPU in fp32: the folded
//! network written as an ONNX model ([`super::Network::onnx_model`]) and run by the
//! library that `scripts/setup-torch.sh` installs with the `onnxruntime`
//! wheel, loaded when first needed. Training stays on LibTorch.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use anyhow::{anyhow, bail, Context, Result};
use ort::environment::Environment;
use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;
use ort::value::TensorRef;

use super::folded::FoldedNet;
use crate::encoding::{GRID, INPUT_SIZE, NUM_ACTIONS, NUM_PLANES};

/// The environment variable naming the library file, looked at before the
/// other places.
pub const LIBRARY_VARIABLE: &str = "GIPF_ONNXRUNTIME";

/// The link `scripts/setup-torch.sh` makes to the library, in the checkout
/// the program was built from.
const SETUP_LINK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/.onnxruntime");

/// The library's file: [`LIBRARY_VARIABLE`], else `libonnxruntime.so`
/// beside the program (a container image, a bundle), else the setup's link.
fn library_path() -> PathBuf {
    if let Some(named) = std::env::var_os(LIBRARY_VARIABLE) {
        return PathBuf::from(named);
    }
    let beside = std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.join("libonnxruntime.so")));
    beside.filter(|p| p.is_file()).unwrap_or_else(|| PathBuf::from(SETUP_LINK))
}

/// The library's environment, loaded once for the process; the error says
/// why it cannot be.
fn environment() -> Result<&'static Environment> {
    static LOADED: OnceLock<Result<Environment, String>> = OnceLock::new();
    let loaded = LOADED.get_or_init(|| {
        let path = library_path();
        if !path.is_file() {
            return Err(format!(
                "no ONNX Runtime library at {} (run scripts/setup-torch.sh, or set {LIBRARY_VARIABLE} to its file)",
                path.display()
            ));
        }
        let builder = ort::init_from(&path).map_err(|e| format!("cannot load {}: {e}", path.display()))?;
        builder.with_name("gipf").build().map_err(|e| format!("ONNX Runtime from {}: {e}", path.display()))
    });
    loaded.as_ref().map_err(|e| anyhow!("{e}"))
}

/// Loads the library, if it is not loaded yet; the error says why it
/// cannot be.
pub fn load_library() -> Result<()> {
    environment().map(|_| ())
}

fn refused<T>(e: ort::Error<T>) -> anyhow::Error {
    anyhow!("ONNX Runtime refused the network: {e}")
}

/// A session of the folded network, run by one caller at a time.
pub struct OnnxNet {
    session: Mutex<Session>,
}

impl std::fmt::Debug for OnnxNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnnxNet")
    }
}

impl OnnxNet {
    /// A session of `net` (folded in fp32) on `threads` threads. The threads
    /// wait without spinning between passes: self-play runs a search
    /// beside them on the same cores.
    pub(crate) fn new(net: &FoldedNet, threads: usize) -> Result<OnnxNet> {
        OnnxNet::from_model(&super::onnx::model(net), threads)
    }

    /// A session of an ONNX model with [`super::Network::onnx_model`]'s inputs and outputs.
    pub fn from_model(model: &[u8], threads: usize) -> Result<OnnxNet> {
        let session = Session::builder(environment()?)
            .map_err(refused)?
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .map_err(refused)?
            .with_intra_threads(threads.max(1))
            .map_err(refused)?
            .with_inter_threads(1)
            .map_err(refused)?
            .with_intra_op_spinning(false)
            .map_err(refused)?
            // Batch sizes change from one pass to the next: no memory plan kept per shape.
            .with_memory_pattern(false)
            .map_err(refused)?
            .commit_from_memory(model)
            .map_err(refused)?;
        Ok(OnnxNet { session: Mutex::new(session) })
    }

    /// Policy logits (`n * NUM_ACTIONS`) and values (`n`) of `n` encoded
    /// positions.
    pub fn forward(&self, input: &[f32], n: usize) -> Result<(Vec<f32>, Vec<f32>)> {
        if input.len() != n * INPUT_SIZE {
            bail!("{} input values for {n} positions", input.len());
        }
        let shape = [n, NUM_PLANES, GRID, GRID];
        let planes = TensorRef::from_array_view((shape, input)).context("the input tensor")?;
        let mut session = self.session.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let outputs = session.run(ort::inputs![super::onnx::INPUT => planes]).context("ONNX Runtime's forward pass")?;
        let (_, joined) = outputs[super::onnx::OUTPUT].try_extract_tensor::<f32>().context("the output tensor")?;
        if joined.len() != n * (NUM_ACTIONS + 1) {
            bail!("ONNX Runtime returned {} values for {n} positions", joined.len());
        }
        let mut logits = Vec::with_capacity(n * NUM_ACTIONS);
        let mut values = Vec::with_capacity(n);
        for row in joined.chunks_exact(NUM_ACTIONS + 1) {
            logits.extend_from_slice(&row[..NUM_ACTIONS]);
            values.push(row[NUM_ACTIONS]);
        }
        Ok((logits, values))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tch::Device;

    use crate::checkpoint::load_checkpoint;
    use crate::net::{Backend, Inference, Network, Precision};

    fn reference_for(inference: Inference) -> Network {
        let weights = concat!(env!("CARGO_MANIFEST_DIR"), "/models/reference.safetensors");
        let (mut network, _) = load_checkpoint(Path::new(weights), Device::Cpu).unwrap();
        network.prepare_for_play(inference).unwrap();
        network
    }

    /// The reference model on ONNX Runtime computes what it computes on
    /// LibTorch in fp32, to 1e-4, on positions of random games, at a batch
    /// of one and of many.
    #[test]
    fn onnx_runtime_computes_what_libtorch_does() {
        let libtorch = reference_for(Inference::FP32_LIBTORCH);
        let ort = reference_for(Inference { precision: Precision::Fp32, backend: Backend::Onnxruntime });
        assert_eq!((libtorch.backend(), ort.backend()), (Backend::Libtorch, Backend::Onnxruntime));
        for n in [1, 37] {
            let input = crate::export::sample_inputs(n, 9);
            let (want_logits, want_values) = libtorch.infer(&input, n);
            let (logits, values) = ort.infer(&input, n);
            let worst = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
            assert_eq!((logits.len(), values.len()), (want_logits.len(), want_values.len()));
            assert!(worst(&logits, &want_logits) <= 1e-4, "logits differ by {}", worst(&logits, &want_logits));
            assert!(worst(&values, &want_values) <= 1e-4, "values differ by {}", worst(&values, &want_values));
            assert!(values.iter().any(|v| v.abs() > 0.01), "the values are not all near zero: {values:?}");
        }
    }

    /// ONNX Runtime asked for where it cannot run is refused; `auto` then
    /// runs LibTorch, and on the CPU in fp32 runs ONNX Runtime.
    #[test]
    fn the_backend_resolves_by_device_and_precision() {
        let ort = Backend::Onnxruntime;
        let err = ort.resolve(Device::Cpu, tch::Kind::BFloat16).unwrap_err().to_string();
        assert!(err.contains("fp32") && err.contains("bf16"), "{err}");
        assert!(ort.resolve(Device::Cuda(0), tch::Kind::Float).is_err());
        assert_eq!(Backend::Auto.resolve(Device::Cuda(0), tch::Kind::Float).unwrap(), Backend::Libtorch);
        assert_eq!(Backend::Auto.resolve(Device::Cpu, tch::Kind::BFloat16).unwrap(), Backend::Libtorch);
        assert_eq!(Backend::Auto.resolve(Device::Cpu, tch::Kind::Float).unwrap(), Backend::Onnxruntime);
        assert_eq!(Backend::Libtorch.resolve(Device::Cpu, tch::Kind::Float).unwrap(), Backend::Libtorch);
        // Asked for by name in the shipped `auto` precision, it runs fp32 even where auto means bf16.
        let named = Inference { precision: Precision::Auto, backend: Backend::Onnxruntime };
        assert_eq!(named.resolve(Device::Cpu).unwrap(), (tch::Kind::Float, Backend::Onnxruntime));
    }
}
