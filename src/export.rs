//! Export of a checkpoint for other front-ends: a TorchScript module traced
//! with tch, an ONNX model ([`crate::net::Network::onnx_model`]), the safetensors weights,
//! and a model card (JSON) describing the input planes, the action indices
//! and the output.
//!
//! Each model takes `[N, 19, 7, 7]` float32 planes (see [`crate::encoding`])
//! and returns one `[N, NUM_ACTIONS + 1]` tensor: the policy logits over the
//! action indices, then the value for the player to act, in [-1, 1].

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use tch::{CModule, Device, Tensor};

use crate::checkpoint::{load_checkpoint, CheckpointMeta};
use crate::durable::write_atomic;
use crate::encoding::{
    action_at, encode, grid_cell, ENCODING_VERSION, GRID, INPUT_SIZE, NUM_ACTIONS, NUM_PLANES, PLANE_NAMES,
};
use crate::net::{NetConfig, Network};
use crate::rules::{Point, Position, Variant};

/// The TorchScript module's file in the export's folder.
pub const TORCHSCRIPT_FILE: &str = "model.pt";
/// The ONNX model's file.
pub const ONNX_FILE: &str = "model.onnx";
/// The safetensors weights' file.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// The model card's file.
pub const CARD_FILE: &str = "model.json";

/// The model card: what a front-end needs to feed the model and read it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelCard {
    /// The checkpoint's name: its weights file's stem.
    pub checkpoint: String,
    /// Its training step.
    pub step: u64,
    /// The samples its training drew.
    pub samples_seen: u64,
    /// The variant it plays.
    pub variant: Variant,
    /// The version of the input encoding ([`ENCODING_VERSION`]).
    pub encoding_version: u32,
    /// The network's shape.
    pub network: NetConfig,
    /// `[batch, planes, 7, 7]`, float32.
    pub input_shape: [i64; 4],
    /// The name of each input plane, in order.
    pub input_planes: Vec<String>,
    /// Grid cell (`7 * row + column` of the 7x7 grid) of each board point, by notation.
    pub point_cells: Vec<(String, usize)>,
    /// `[batch, actions + 1]`, float32.
    pub output_shape: [i64; 2],
    /// What the output's columns hold, in words.
    pub output: String,
    /// The action at each policy index, in the move notation.
    pub actions: Vec<String>,
    /// The files of the export, by name.
    pub files: Vec<String>,
}

impl ModelCard {
    fn new(name: &str, meta: &CheckpointMeta) -> Result<ModelCard> {
        Ok(ModelCard {
            checkpoint: name.to_string(),
            step: meta.step,
            samples_seen: meta.samples_drawn,
            variant: meta.variant().context("the description names no variant")?,
            encoding_version: ENCODING_VERSION,
            network: meta.network,
            input_shape: [-1, NUM_PLANES as i64, GRID as i64, GRID as i64],
            input_planes: PLANE_NAMES.iter().map(|s| s.to_string()).collect(),
            point_cells: Point::all().map(|p| (p.cell().to_string(), grid_cell(p))).collect(),
            output_shape: [-1, NUM_ACTIONS as i64 + 1],
            output: format!(
                "columns 0..{NUM_ACTIONS}: policy logits over the action indices (mask the illegal ones, then \
                 softmax); column {NUM_ACTIONS}: the value for the player to act, in [-1, 1]"
            ),
            actions: (0..NUM_ACTIONS).map(|i| action_at(i).to_string()).collect(),
            files: vec![TORCHSCRIPT_FILE.into(), ONNX_FILE.into(), WEIGHTS_FILE.into(), CARD_FILE.into()],
        })
    }
}

/// The network's output as the exported module gives it: logits, then value.
fn joined_output(network: &Network, xs: &Tensor) -> Tensor {
    let (policy, value) = network.net.forward_t(xs, false);
    Tensor::cat(&[policy, value.unsqueeze(1)], 1)
}

/// Encoded sample positions (the start of each variant and positions from a
/// few random actions) for tracing and for checking exports.
pub fn sample_inputs(n: usize, seed: u64) -> Vec<f32> {
    use rand::{rngs::SmallRng, Rng, SeedableRng};
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut input = vec![0.0f32; n * INPUT_SIZE];
    let mut pos = Position::new(Variant::Standard);
    for (i, chunk) in input.chunks_mut(INPUT_SIZE).enumerate() {
        if pos.is_over() || i % 8 == 0 {
            pos = Position::new(Variant::ALL[i % 3]);
        }
        encode(&pos, chunk);
        let legal = pos.legal_actions();
        pos.play_unchecked(legal[rng.random_range(0..legal.len())]);
    }
    input
}

/// How far ONNX Runtime's outputs of the exported ONNX model are from
/// LibTorch's, on sample positions: `None` where its library is not loaded.
/// More than 1e-4 of an output's size is an error.
fn onnx_error(network: &Network, model: &[u8]) -> Result<Option<f32>> {
    if crate::net::onnxruntime::load_library().is_err() {
        return Ok(None);
    }
    let n = 5;
    let input = sample_inputs(n, 2);
    let (logits, values) = crate::net::onnxruntime::OnnxNet::from_model(model, 1)?.forward(&input, n)?;
    let (want_logits, want_values) = network.infer(&input, n);
    let pairs: Vec<(f32, f32)> =
        logits.iter().zip(&want_logits).chain(values.iter().zip(&want_values)).map(|(a, b)| (*a, *b)).collect();
    let worst = pairs.iter().map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
    // Folding changes the rounding: 1e-4 of each output's size. A NaN fails the comparison too.
    anyhow::ensure!(
        pairs.iter().all(|(a, b)| (a - b).abs() <= 1e-4 * (1.0 + b.abs())),
        "the ONNX model differs from the network by {worst} (at most 1e-4 of each output expected)"
    );
    Ok(Some(worst))
}

/// What [`export`] wrote, and how close the ONNX model is to the network
/// (see `onnx_error`).
pub struct Exported {
    /// The files written: the module, the ONNX model, the weights and the card.
    pub files: Vec<PathBuf>,
    /// The largest difference between ONNX Runtime's outputs of the ONNX model
    /// and the network's, on sample positions; `None` where ONNX Runtime's
    /// library does not load.
    pub onnx_error: Option<f32>,
}

/// Writes the TorchScript module, the ONNX model, the weights and the model
/// card of the checkpoint `weights` into `out`.
pub fn export(weights: &Path, out: &Path) -> Result<Exported> {
    let (mut network, meta) = load_checkpoint(weights, Device::Cpu)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let name = weights.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());

    let example = Tensor::from_slice(&sample_inputs(2, 1)).view([2, NUM_PLANES as i64, GRID as i64, GRID as i64]);
    // Traced with the variables frozen, and saved before they are unfrozen:
    // otherwise the saved module does not load.
    network.vs.freeze();
    let traced = {
        let _guard = tch::no_grad_guard();
        CModule::create_by_tracing("GipfNet", "forward", &[example], &mut |xs| vec![joined_output(&network, &xs[0])])
    };
    let script = out.join(TORCHSCRIPT_FILE);
    let saved = crate::durable::write_through(&script, |tmp| {
        let module = traced.context("tracing the network")?;
        module.save(tmp).with_context(|| format!("cannot write {}", tmp.display()))
    });
    network.vs.unfreeze();
    saved?;

    let onnx = out.join(ONNX_FILE);
    let model = network.onnx_model();
    let onnx_error = onnx_error(&network, &model)?;
    write_atomic(&onnx, &model)?;

    let weights_out = out.join(WEIGHTS_FILE);
    let bytes = std::fs::read(weights).with_context(|| format!("cannot read {}", weights.display()))?;
    write_atomic(&weights_out, &bytes)?;
    let card = out.join(CARD_FILE);
    write_atomic(&card, serde_json::to_string_pretty(&ModelCard::new(&name, &meta)?)?.as_bytes())?;
    Ok(Exported { files: vec![script, onnx, weights_out, card], onnx_error })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_maps_every_index_and_point() {
        let meta = CheckpointMeta {
            format: crate::checkpoint::CHECKPOINT_FORMAT,
            step: 3,
            samples_drawn: 10,
            encoding_version: ENCODING_VERSION,
            network: crate::net::TINY,
            variant: Some(Variant::Standard),
            samples_read: None,
            games_cursor: None,
            games_newest_by_worker: Default::default(),
            games_recent: Vec::new(),
            lineage: None,
            config: serde_json::Value::Null,
        };
        let card = ModelCard::new("step-00000003", &meta).unwrap();
        assert_eq!(card.actions.len(), NUM_ACTIONS);
        for (i, action) in card.actions.iter().enumerate() {
            assert_eq!(action.parse::<crate::rules::Action>().unwrap(), action_at(i), "index {i}: {action}");
        }
        assert_eq!(card.point_cells.len(), 37);
        for (name, cell) in &card.point_cells {
            let point = name.parse::<crate::rules::Cell>().unwrap().point().unwrap();
            assert_eq!(*cell, grid_cell(point), "{name}");
        }
        let mut cells: Vec<usize> = card.point_cells.iter().map(|&(_, c)| c).collect();
        cells.sort();
        cells.dedup();
        assert_eq!(cells.len(), 37);
        assert_eq!(card.input_planes.len(), NUM_PLANES);
    }
}
