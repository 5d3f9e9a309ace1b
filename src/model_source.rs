//! Where the network's weights come from: a fresh network, one file, the
//! newest checkpoint in a folder (checked again as training writes more),
//! or the checkpoint a store's `latest.json` names.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::checkpoint::{best_checkpoint, newest_checkpoint, prune};
use crate::checkpoint::{fetch_checkpoint, Latest};
use crate::store::{is_url, local_cache, Store};

/// The weights file a model's name stands for: `reference` (the model
/// built into the program), a checkpoint's weights file, a models folder
/// (its best checkpoint, else its newest), or a checkpoint in an object
/// store (downloaded).
pub fn weights_named(name: &str) -> Result<PathBuf> {
    let weights = match is_url(name) {
        true => fetch_checkpoint(name)?,
        false if name == crate::checkpoint::REFERENCE => crate::checkpoint::reference_checkpoint()?,
        false if Path::new(name).is_dir() => {
            let chosen =
                ModelSource::Folder(name.into()).current()?.with_context(|| format!("no checkpoint in {name} yet"))?;
            if let Some(newest) = newest_checkpoint(Path::new(name))?.filter(|newest| *newest != chosen) {
                tracing::warn!(
                    "{name}: playing {}, which its best.json names (the run gates), not the newest {}; remove \
                     best.json if the run no longer gates",
                    chosen.display(),
                    newest.display()
                );
            }
            chosen
        }
        false => PathBuf::from(name),
    };
    if !weights.is_file() {
        bail!("no such weights file {}", weights.display());
    }
    Ok(weights)
}

/// A `--model` argument: a weights file, a folder of checkpoints, or the
/// models of a run in an object store (`s3://bucket/prefix/models`).
#[derive(Clone, Debug)]
pub enum ModelSource {
    /// No model given: a freshly initialised network.
    Fresh,
    /// One weights file.
    File(PathBuf),
    /// A models folder: the checkpoint its `best.json` names, else the newest,
    /// looked for again as training writes more.
    Folder(PathBuf),
    /// The checkpoint named in the store's `latest.json`, downloaded into
    /// a local folder; the store is asked again at most every [`POLL`].
    Store(Arc<RemoteModels>),
}

/// How often self-play asks an object store for a newer checkpoint.
pub const POLL: std::time::Duration = std::time::Duration::from_secs(5);

/// How many checkpoints self-play keeps in its local copy of a store's
/// models folder (it plays with the newest).
pub const CACHED_CHECKPOINTS: usize = 3;

/// The models of a run in an object store, and their local copies.
#[derive(Debug)]
pub struct RemoteModels {
    store: Store,
    /// The local folder its checkpoints are downloaded into.
    cache: PathBuf,
    /// When the store last answered or failed, and the weights it named
    /// last; `None` before its first answer.
    last: Mutex<Option<(Instant, Option<PathBuf>)>>,
    /// Whether a poll is running on its own thread.
    polling: AtomicBool,
    /// The `latest.json` last downloaded, and its local weights.
    downloaded: Mutex<Option<(Latest, PathBuf)>>,
}

impl RemoteModels {
    /// The local weights of `latest`, downloaded unless they were for the
    /// same `latest.json` last time.
    fn download(&self, latest: Latest) -> Result<PathBuf> {
        let mut downloaded = self.downloaded.lock().expect("no panic while downloading");
        if let Some((_, weights)) = downloaded.as_ref().filter(|(seen, _)| *seen == latest) {
            return Ok(weights.clone());
        }
        let weights = self.store.download_checkpoint("", &latest, &self.cache, false)?;
        *downloaded = Some((latest, weights.clone()));
        if let Err(e) = prune(&self.cache, CACHED_CHECKPOINTS, 0) {
            tracing::warn!("pruning {}: {e:#}", self.cache.display());
        }
        Ok(weights)
    }

    /// Asks the store for its newest checkpoint and downloads it.
    fn ask(&self) -> Result<Option<PathBuf>> {
        match self.store.latest("")? {
            Some(latest) => Ok(Some(self.download(latest)?)),
            None => Ok(None),
        }
    }

    /// The weights to play with. The first time the store is asked at once
    /// (its error is the caller's); after that the last answer is given at
    /// once, and every [`POLL`] the store is asked again on a thread of its
    /// own, so that a store that stops answering (each request may wait out
    /// its timeout) never holds up the caller.
    fn current(self: &Arc<Self>) -> Result<Option<PathBuf>> {
        let last = self.last.lock().expect("no panic while polling").clone();
        let Some((at, weights)) = last else {
            let weights = self.ask()?;
            *self.last.lock().expect("no panic while polling") = Some((Instant::now(), weights.clone()));
            return Ok(weights);
        };
        if at.elapsed() >= POLL && !self.polling.swap(true, Ordering::AcqRel) {
            let models = self.clone();
            let poll = std::thread::Builder::new().name("checkpoint-poll".into()).spawn(move || models.poll());
            if let Err(e) = poll {
                tracing::warn!("cannot start a checkpoint poll: {e} (trying again later)");
                self.polling.store(false, Ordering::Release);
            }
        }
        Ok(weights)
    }

    /// One poll of [`RemoteModels::current`]'s thread: until the store
    /// answers again, the checkpoint in use stays.
    fn poll(&self) {
        let newest = self.ask();
        let mut last = self.last.lock().expect("no panic while polling");
        let kept = last.take().and_then(|(_, weights)| weights);
        let weights = newest.unwrap_or_else(|e| {
            tracing::warn!("looking for a newer checkpoint: {e:#} (keeping the current one)");
            kept
        });
        *last = Some((Instant::now(), weights));
        self.polling.store(false, Ordering::Release);
    }
}

impl ModelSource {
    /// The source a `--model` argument names: none for a fresh network, an
    /// `s3://` URL for a store's models folder, a folder, or a weights file (a
    /// path that does not exist is an error).
    pub fn from_arg(arg: Option<&Path>) -> Result<ModelSource> {
        Ok(match arg {
            None => ModelSource::Fresh,
            Some(p) if is_url(&p.to_string_lossy()) => {
                let url = p.to_string_lossy();
                let cache = local_cache(&url, "models");
                ModelSource::remote(Store::open(&url)?, cache)
            }
            Some(p) if p.is_dir() => ModelSource::Folder(p.to_path_buf()),
            Some(p) if p.is_file() => ModelSource::File(p.to_path_buf()),
            Some(p) => bail!("model {} does not exist", p.display()),
        })
    }

    /// The checkpoints that `store`'s `latest.json` names, downloaded into `cache`.
    pub fn remote(store: Store, cache: PathBuf) -> ModelSource {
        let models = RemoteModels {
            store,
            cache,
            last: Default::default(),
            polling: AtomicBool::new(false),
            downloaded: Default::default(),
        };
        ModelSource::Store(Arc::new(models))
    }

    /// Whether newer checkpoints may appear (a folder, or a store).
    pub fn follows_training(&self) -> bool {
        matches!(self, ModelSource::Folder(_) | ModelSource::Store(_))
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
            ModelSource::Store(remote) => remote.current(),
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
    use crate::checkpoint::{set_best_checkpoint, BEST_FILE};

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
}
