//! Where the network's weights come from: a fresh network, one file, or the
//! newest checkpoint in a folder (checked again as training writes more).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

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

    /// The weights to use now, if any.
    pub fn current(&self) -> Result<Option<PathBuf>> {
        match self {
            ModelSource::Fresh => Ok(None),
            ModelSource::File(p) => Ok(Some(p.clone())),
            ModelSource::Folder(dir) => newest_checkpoint(dir),
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
