//! Writing a checkpoint, every part under a temporary name before any is
//! published (the weights last: their appearance marks a complete
//! checkpoint), setting a damaged one aside, and reading its optimizer state.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tch::Tensor;

use super::files::{checkpoint_stem, PARTS};
use super::CheckpointMeta;
use crate::durable::{publish, temporary_path, write_file};
use crate::net::Network;

/// The prefix of the trained weights' names in the `.optim` file, where
/// the published weights are an average.
pub const TRAINED: &str = "trained/";

/// Momentum buffers, and the trained weights of a checkpoint that published
/// an average, by variable name.
pub type OptimizerState = (BTreeMap<String, Tensor>, Option<BTreeMap<String, Tensor>>);

/// The weights a checkpoint publishes: the network's own, or others by
/// variable name (a moving average of them).
pub enum WeightsToWrite<'a> {
    Network(&'a Network),
    Named(&'a BTreeMap<String, Tensor>),
}

/// Writes the checkpoint of `meta.step` into `models` (made if missing):
/// its description, the optimizer state `optimizer` and the weights; returns
/// the weights' path. A failure (a full disk, say) leaves the files that
/// were there, a checkpoint of the same step included, and no part of this
/// one.
pub fn write(
    models: &Path,
    meta: &CheckpointMeta,
    weights: WeightsToWrite,
    optimizer: &[(String, Tensor)],
) -> Result<PathBuf> {
    std::fs::create_dir_all(models).with_context(|| format!("cannot create {}", models.display()))?;
    let stem = checkpoint_stem(meta.step);
    let [description, optim, published] = PARTS.map(|ext| models.join(format!("{stem}.{ext}")));
    let temporaries = [temporary_path(&description)?, temporary_path(&optim)?, temporary_path(&published)?];
    let written = (|| -> Result<()> {
        write_file(&temporaries[0], serde_json::to_string_pretty(meta)?.as_bytes())?;
        Tensor::write_safetensors(optimizer, &temporaries[1])
            .with_context(|| format!("cannot write {}", temporaries[1].display()))?;
        match weights {
            WeightsToWrite::Named(named) => {
                let named: Vec<(&str, &Tensor)> = named.iter().map(|(n, t)| (n.as_str(), t)).collect();
                Tensor::write_safetensors(&named, &temporaries[2])
                    .with_context(|| format!("cannot write {}", temporaries[2].display()))?;
            }
            WeightsToWrite::Network(network) => network.save(&temporaries[2])?,
        }
        publish(&temporaries[0], &description)?;
        publish(&temporaries[1], &optim)?;
        Ok(publish(&temporaries[2], &published)?)
    })();
    if written.is_err() {
        for path in &temporaries {
            let _ = std::fs::remove_file(path);
        }
    }
    written.map(|()| published)
}

/// Renames the files of the checkpoint whose weights are `weights` to
/// `.damaged-NAME` beside them, where no reader looks; returns the new
/// name of the weights.
pub fn set_aside(weights: &Path) -> Result<PathBuf> {
    let aside = |path: &Path| {
        let name = path.file_name().expect("a checkpoint file has a name").to_string_lossy();
        path.with_file_name(format!(".damaged-{name}"))
    };
    for ext in PARTS {
        let file = weights.with_extension(ext);
        if file.exists() {
            std::fs::rename(&file, aside(&file)).with_context(|| format!("cannot set aside {}", file.display()))?;
        }
    }
    Ok(aside(weights))
}

/// Reads a checkpoint's optimizer state (`.optim`) for `network`, checked
/// as its weights are.
pub fn read_optimizer_state(network: &Network, path: &Path) -> Result<OptimizerState, crate::error::LoadError> {
    let shapes = network.shapes();
    let buffers: Vec<String> = network.trainable().into_iter().map(|(name, _)| name).collect();
    let mut expected: BTreeMap<String, Vec<usize>> = buffers.iter().map(|n| (n.clone(), shapes[n].clone())).collect();
    expected.extend(shapes.iter().map(|(name, shape)| (format!("{TRAINED}{name}"), shape.clone())));
    let saved = crate::weights::read(path, &expected)?;
    crate::weights::require(&saved, buffers.iter(), path)?;
    let device = network.device();
    let take = |name: &str| crate::weights::tensor(&saved[name]).to(device);
    let momentum = buffers.iter().map(|name| (name.clone(), take(name))).collect();
    if !saved.keys().any(|name| name.starts_with(TRAINED)) {
        return Ok((momentum, None));
    }
    let trained_names: Vec<String> = shapes.keys().map(|name| format!("{TRAINED}{name}")).collect();
    crate::weights::require(&saved, trained_names.iter(), path)?;
    let trained = shapes.keys().map(|name| (name.clone(), take(&format!("{TRAINED}{name}")))).collect();
    Ok((momentum, Some(trained)))
}
