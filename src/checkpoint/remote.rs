//! The checkpoint format in an object store: a run's `models/` there holds
//! the same files as a local models folder, and `latest.json` ([`Latest`])
//! names the newest with the sha256 of each of its files. A trainer
//! publishes (the files first, then `latest.json`, replaced only over the
//! version it last saw) and prunes; readers download a checkpoint checked
//! against `latest.json`, or mirror a models folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::files::{check_file_name, step_of, Retention, PARTS};
use crate::durable::{sha256_hex, write_atomic};
use crate::store::{join, local_cache, Store, StoreError};

/// The file naming a run's newest checkpoint in the store.
pub const LATEST_FILE: &str = "latest.json";

/// `models/latest.json`: the newest checkpoint and the sha256 of its files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Latest {
    /// The newest checkpoint's training step.
    pub step: u64,
    /// The weights file's name.
    pub weights: String,
    /// File name to sha256 (hexadecimal) of every file of the checkpoint.
    pub sha256: BTreeMap<String, String>,
}

impl Store {
    /// Publishes a checkpoint saved locally (its weights file, and the
    /// description and optimizer state beside it) under `folder`: the files
    /// first, then `latest.json`, so that a reader never sees a checkpoint
    /// whose files are not all there. `latest.json` is replaced only while
    /// it is at `version` ([`Store::put_if`]), so that a trainer that lost
    /// its lease cannot overwrite a newer one; returns its new version.
    pub fn publish_checkpoint(
        &self,
        folder: &str,
        weights: &Path,
        step: u64,
        version: Option<&str>,
    ) -> Result<Option<String>> {
        let mut sha256 = BTreeMap::new();
        // The weights last among the files, as in a local models folder.
        for ext in PARTS {
            let path = weights.with_extension(ext);
            let name = path.file_name().context("a checkpoint file has a name")?.to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            sha256.insert(name.clone(), sha256_hex(&bytes));
            self.put(&join(folder, &name), bytes)?;
        }
        let weights = weights.file_name().context("a weights file has a name")?.to_string_lossy().into_owned();
        let latest = Latest { step, weights, sha256 };
        let name = join(folder, LATEST_FILE);
        match self.put_if(&name, serde_json::to_vec_pretty(&latest)?, version) {
            // A write of ours that landed, its reply lost and the request
            // tried again, meets itself: what is there now tells.
            Err(e @ StoreError::Superseded { .. }) => match self.get_versioned(&name)? {
                Some((bytes, now)) if serde_json::from_slice::<Latest>(&bytes).is_ok_and(|there| there == latest) => {
                    Ok(now)
                }
                _ => Err(e.into()),
            },
            other => Ok(other?),
        }
    }

    /// Applies the retention policy ([`Retention`]) to
    /// the checkpoints in `folder`, never removing the one `latest.json`
    /// names, in the order of [`Retention::files`].
    /// Returns the steps removed.
    pub fn prune_checkpoints(&self, folder: &str, keep_last: usize, keep_every_steps: u64) -> Result<Vec<u64>> {
        let names = self.list(folder)?;
        let steps: Vec<u64> = names.iter().filter_map(|n| step_of(Path::new(n))).collect();
        let latest = self.latest(folder)?.map(|latest| latest.step);
        let plan = Retention::plan(&steps, keep_last, keep_every_steps, latest);
        for name in plan.files() {
            if names.contains(&name) {
                self.delete(&join(folder, &name))?;
            }
        }
        Ok(plan.remove)
    }

    /// The newest published checkpoint, if any.
    pub fn latest(&self, folder: &str) -> Result<Option<Latest>> {
        let name = join(folder, LATEST_FILE);
        match self.get(&name)? {
            None => Ok(None),
            Some(bytes) => Ok(Some(
                serde_json::from_slice(&bytes).with_context(|| format!("{}: not a latest.json", self.url(&name)))?,
            )),
        }
    }

    /// Downloads the checkpoint `stem` of `folder` (its description, then
    /// its weights: present weights mean a whole checkpoint) into `into`,
    /// each file unless it is there already. Returns the local weights path.
    pub fn download_whole(&self, folder: &str, stem: &str, into: &Path) -> Result<PathBuf> {
        self.download(&join(folder, &format!("{stem}.json")), into)?;
        self.download(&join(folder, &format!("{stem}.safetensors")), into)
    }

    /// Downloads the checkpoints in `folder` that `into` lacks (description
    /// and weights, not the optimizer state); returns how many.
    pub fn mirror_checkpoints(&self, folder: &str, into: &Path) -> Result<usize> {
        let mut done = 0;
        for name in self.list(folder)? {
            let Some(stem) = name.strip_suffix(".safetensors").filter(|s| s.starts_with("step-")) else { continue };
            if !into.join(&name).is_file() {
                self.download_whole(folder, stem, into)?;
                done += 1;
            }
        }
        Ok(done)
    }

    /// Makes the checkpoint `latest` present in the local folder `cache`:
    /// each file downloaded, checked against its sha256 and written
    /// atomically, the weights last; without `optimizer`, the optimizer
    /// state stays in the store (self-play never reads it). Weights already
    /// cached are kept only while their sha256 is `latest.json`'s (a trainer
    /// rolled back to an earlier checkpoint reuses step names). Returns the
    /// local weights path.
    pub fn download_checkpoint(&self, folder: &str, latest: &Latest, cache: &Path, optimizer: bool) -> Result<PathBuf> {
        latest.check().with_context(|| self.url(&join(folder, LATEST_FILE)))?;
        std::fs::create_dir_all(cache).with_context(|| format!("cannot create {}", cache.display()))?;
        let weights = cache.join(&latest.weights);
        match std::fs::read(&weights) {
            Ok(bytes) if sha256_hex(&bytes) == latest.sha256[&latest.weights] => return Ok(weights),
            Ok(_) => tracing::info!("{}: differs from {}; downloading it again", weights.display(), LATEST_FILE),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", weights.display())),
        }
        let mut names: Vec<&String> =
            latest.sha256.keys().filter(|name| optimizer || !name.ends_with(".optim")).collect();
        names.sort_by_key(|n| (**n == latest.weights, n.to_string()));
        for name in names {
            let key = join(folder, name);
            let bytes =
                self.get(&key)?.with_context(|| format!("{} is named in latest.json but absent", self.url(&key)))?;
            let digest = sha256_hex(&bytes);
            if digest != latest.sha256[name] {
                bail!("{}: sha256 {digest} differs from latest.json's {}", self.url(&key), latest.sha256[name]);
            }
            write_atomic(&cache.join(name), &bytes)?;
        }
        Ok(weights)
    }
}

impl Latest {
    /// Checks what a store's `latest.json` says before any of it becomes a
    /// local path: only the trainer's checkpoint file names, the weights
    /// among them.
    pub fn check(&self) -> Result<()> {
        for name in self.sha256.keys() {
            check_file_name(name)?;
        }
        anyhow::ensure!(
            self.weights.ends_with(".safetensors") && self.sha256.contains_key(&self.weights),
            "the weights {:?} are not among its files with a sha256",
            self.weights
        );
        Ok(())
    }
}

/// A checkpoint in a store, downloaded into the local cache (once) for
/// reading: `s3://…/models/step-NNNNNNNN.safetensors` (with its description
/// beside it), or the newest of a models folder (`s3://…/models`, as its
/// `latest.json` names it). Returns the local weights path.
pub fn fetch_checkpoint(url: &str) -> Result<PathBuf> {
    let url = url.trim_end_matches('/');
    match url.rsplit_once('/').filter(|(_, file)| file.ends_with(".safetensors")) {
        Some((folder, file)) => {
            let stem = file.strip_suffix(".safetensors").expect("the file name ends so");
            Store::open(folder)?.download_whole("", stem, &local_cache(folder, "models"))
        }
        None => {
            let store = Store::open(url)?;
            let latest = store
                .latest("")?
                .with_context(|| format!("{url}: no {LATEST_FILE}, so no checkpoint published there yet"))?;
            store.download_checkpoint("", &latest, &local_cache(url, "models"), false)
        }
    }
}
