//! The trainer's view of a store's games folder: the shards listed so far,
//! refreshed cheaply, each downloaded when the window reads it.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use super::{join, Store};
use crate::durable::write_atomic;

/// The trainer's view of a store's shards: the names listed so far, each
/// downloaded into a local folder only when the trainer's window reads it
/// ([`crate::train::Window::load`]), so that a trainer on a new
/// machine fetches only what its window holds. Shard names start with the
/// time they were finished, so a listing starts [`LOOKBACK`] before the
/// newest shard seen (a worker may upload a shard a little after a newer
/// one of another worker), and every [`FULL_LISTING`] the whole folder is
/// listed again (a shard uploaded much later, after an outage).
pub struct ShardFeed {
    store: Arc<Store>,
    folder: String,
    listed: BTreeSet<String>,
    /// Names refused (each warned about once).
    refused: BTreeSet<String>,
    last_full: Option<std::time::Instant>,
}

/// How far before the newest shard seen a listing starts.
pub const LOOKBACK: Duration = crate::shards::LATE;
/// How often the whole folder is listed.
pub const FULL_LISTING: Duration = Duration::from_secs(600);

impl ShardFeed {
    /// The shards of `folder` in `store`, none listed yet.
    pub fn new(store: Arc<Store>, folder: &str) -> ShardFeed {
        ShardFeed {
            store,
            folder: folder.to_string(),
            listed: BTreeSet::new(),
            refused: BTreeSet::new(),
            last_full: None,
        }
    }

    /// Lists the store's shards; returns how many were not listed before.
    pub fn refresh(&mut self) -> Result<usize> {
        use crate::shards::{SHARD_PREFIX, SHARD_SUFFIX};
        let full = self.last_full.is_none_or(|t| t.elapsed() >= FULL_LISTING);
        let offset = match (self.listed.last(), full) {
            (Some(newest), false) => crate::shards::late_horizon(newest),
            _ => None,
        };
        let names = self.store.list_after(&self.folder, offset.as_deref())?;
        if full {
            self.last_full = Some(std::time::Instant::now());
        }
        let before = self.listed.len();
        let now_ms = crate::shards::now_ms();
        for name in names.into_iter().filter(|n| n.starts_with(SHARD_PREFIX) && n.ends_with(SHARD_SUFFIX)) {
            match crate::shards::check_name(&name, now_ms) {
                Ok(()) => _ = self.listed.insert(name),
                Err(why) if self.refused.insert(name.clone()) => {
                    tracing::warn!("{}: skipped: {why}", self.store.url(&join(&self.folder, &name)))
                }
                Err(_) => {}
            }
        }
        Ok(self.listed.len() - before)
    }

    /// The shards listed so far, oldest first.
    pub fn listed(&self) -> impl Iterator<Item = &String> {
        self.listed.iter()
    }

    /// Downloads the listed shard `name` into the folder `into` (written
    /// atomically).
    pub fn fetch(&self, name: &str, into: &Path) -> Result<()> {
        std::fs::create_dir_all(into).with_context(|| format!("cannot create {}", into.display()))?;
        let key = join(&self.folder, name);
        let bytes =
            self.store.get(&key)?.with_context(|| format!("{} was listed but is gone", self.store.url(&key)))?;
        Ok(write_atomic(&into.join(name), &bytes)?)
    }
}
