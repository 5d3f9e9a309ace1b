//! A run's folder: games, models and logs, local or a store's local copy.

use std::path::PathBuf;

use anyhow::Result;

/// Where a run keeps its files: a local folder, which for a run in an
/// object store is this machine's copy of it (shards downloaded into
/// `games/`, checkpoints saved in `models/` and published to the store).
#[derive(Clone, Debug)]
pub struct RunDir {
    /// The local folder.
    pub root: PathBuf,
    /// The object store that holds the run, if any (`root` is then its local
    /// copy).
    pub store: Option<std::sync::Arc<crate::store::Store>>,
}

impl RunDir {
    /// A run given as a folder, or as an object store URL (`s3://bucket/prefix`).
    pub fn open(arg: &str) -> Result<RunDir> {
        if crate::store::is_url(arg) {
            let store = crate::store::Store::open(arg)?;
            Ok(RunDir { root: crate::store::local_cache(arg, "run"), store: Some(std::sync::Arc::new(store)) })
        } else {
            Ok(RunDir { root: PathBuf::from(arg), store: None })
        }
    }

    /// `games/`: the self-play shards.
    pub fn games(&self) -> PathBuf {
        self.root.join("games")
    }
    /// `models/`: the checkpoints.
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }
    /// `logs/`: the TensorBoard event files.
    pub fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }

    /// With a run in a store, the feed of its games folder there.
    pub fn feed(&self) -> Option<crate::store::ShardFeed> {
        self.store.clone().map(|store| crate::store::ShardFeed::new(store, "games"))
    }
}
