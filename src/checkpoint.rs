//! Where the network's weights come from: a fresh network, one file, or the
//! newest checkpoint in a folder (checked again as training writes more).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use tch::Device;

use crate::config::Config;
use crate::encoding::ENCODING_VERSION;
use crate::net::{NetConfig, Network};

/// The JSON beside a checkpoint's weights (`step-NNNNNNNN.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointMeta {
    pub step: u64,
    pub samples_seen: u64,
    pub encoding_version: u32,
    pub network: NetConfig,
    pub config: Config,
}

/// Reads the description beside a weights file, checking its encoding version.
pub fn read_meta(weights: &Path) -> Result<CheckpointMeta> {
    let meta_path = weights.with_extension("json");
    let text = std::fs::read_to_string(&meta_path)
        .with_context(|| format!("cannot read {} (the description beside the weights)", meta_path.display()))?;
    let meta: CheckpointMeta = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a checkpoint description", meta_path.display()))?;
    anyhow::ensure!(
        meta.encoding_version == ENCODING_VERSION,
        "{}: encoding version {} (this program uses {ENCODING_VERSION})",
        meta_path.display(),
        meta.encoding_version
    );
    Ok(meta)
}

/// Loads a checkpoint's network, its shape taken from the description beside it.
pub fn load_checkpoint(weights: &Path, device: Device) -> Result<(Network, CheckpointMeta)> {
    if !weights.is_file() {
        bail!("checkpoint {} does not exist", weights.display());
    }
    let meta = read_meta(weights)?;
    let network = Network::load(weights, &meta.network, device)?;
    Ok((network, meta))
}

/// The newest `*.safetensors` file in `dir` by name (checkpoint names carry
/// a zero-padded step), or `None` when there is none yet.
pub fn newest_checkpoint(dir: &Path) -> Result<Option<PathBuf>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list model folder {}", dir.display()))?;
    let mut newest: Option<PathBuf> = None;
    for entry in entries {
        let path = entry?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.ends_with(".safetensors") && !name.starts_with('.') && newest.as_ref().is_none_or(|n| path > *n) {
            newest = Some(path);
        }
    }
    Ok(newest)
}

/// The file in a models folder naming the checkpoint that passed the gate
/// (when the loop gates new checkpoints on the arena).
pub const BEST_FILE: &str = "best.json";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Best {
    checkpoint: String,
}

/// The checkpoint named in `dir/best.json`, if that file exists.
pub fn best_checkpoint(dir: &Path) -> Result<Option<PathBuf>> {
    let path = dir.join(BEST_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let best: Best =
        serde_json::from_str(&text).with_context(|| format!("{}: not a best-checkpoint file", path.display()))?;
    let weights = dir.join(&best.checkpoint);
    anyhow::ensure!(weights.is_file(), "{} names {}, which does not exist", path.display(), weights.display());
    Ok(Some(weights))
}

/// Records `weights` (a file in `dir`) as the best checkpoint.
pub fn set_best_checkpoint(dir: &Path, weights: &Path) -> Result<()> {
    let checkpoint = weights.file_name().context("a checkpoint has a file name")?.to_string_lossy().into_owned();
    crate::games::write_atomic(&dir.join(BEST_FILE), serde_json::to_string(&Best { checkpoint })?.as_bytes())
}

/// A `--model` argument: a weights file, or a folder of checkpoints.
#[derive(Clone, Debug)]
pub enum ModelSource {
    /// No model given: a freshly initialised network.
    Fresh,
    File(PathBuf),
    Folder(PathBuf),
}

impl ModelSource {
    pub fn from_arg(arg: Option<&Path>) -> Result<ModelSource> {
        Ok(match arg {
            None => ModelSource::Fresh,
            Some(p) if p.is_dir() => ModelSource::Folder(p.to_path_buf()),
            Some(p) if p.is_file() => ModelSource::File(p.to_path_buf()),
            Some(p) => bail!("model {} does not exist", p.display()),
        })
    }

    /// The weights to use now, if any: for a folder, the checkpoint named in
    /// its `best.json` when the loop gates checkpoints, else the newest.
    pub fn current(&self) -> Result<Option<PathBuf>> {
        match self {
            ModelSource::Fresh => Ok(None),
            ModelSource::File(p) => Ok(Some(p.clone())),
            ModelSource::Folder(dir) => match best_checkpoint(dir)? {
                Some(best) => Ok(Some(best)),
                None => newest_checkpoint(dir),
            },
        }
    }
}

/// How a model is named in game files: its file name, or "fresh" for an
/// untrained network.
pub fn model_name(path: Option<&Path>) -> String {
    match path {
        Some(p) => p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned()),
        None => "fresh".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_gives_its_best_checkpoint_else_its_newest() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path();
        for name in ["step-00000000.safetensors", "step-00000010.safetensors"] {
            std::fs::write(models.join(name), b"w").unwrap();
        }
        let source = ModelSource::Folder(models.to_path_buf());
        assert_eq!(source.current().unwrap(), Some(models.join("step-00000010.safetensors")));
        set_best_checkpoint(models, &models.join("step-00000000.safetensors")).unwrap();
        assert_eq!(source.current().unwrap(), Some(models.join("step-00000000.safetensors")));

        std::fs::write(models.join(BEST_FILE), r#"{"checkpoint": "step-00000099.safetensors"}"#).unwrap();
        let err = format!("{:#}", source.current().unwrap_err());
        assert!(err.contains("step-00000099.safetensors, which does not exist"), "{err}");
        std::fs::write(models.join(BEST_FILE), "{").unwrap();
        let err = format!("{:#}", source.current().unwrap_err());
        assert!(err.contains("not a best-checkpoint file"), "{err}");
    }

    #[test]
    fn a_missing_or_foreign_description_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let weights = dir.path().join("w.safetensors");
        let err = format!("{:#}", load_checkpoint(&weights, Device::Cpu).err().unwrap());
        assert!(err.contains("does not exist"), "{err}");
        std::fs::write(&weights, b"w").unwrap();
        let err = format!("{:#}", load_checkpoint(&weights, Device::Cpu).err().unwrap());
        assert!(err.contains("w.json (the description beside the weights)"), "{err}");
        std::fs::write(dir.path().join("w.json"), r#"{"step": 1}"#).unwrap();
        let err = format!("{:#}", load_checkpoint(&weights, Device::Cpu).err().unwrap());
        assert!(err.contains("not a checkpoint description"), "{err}");
    }
}
