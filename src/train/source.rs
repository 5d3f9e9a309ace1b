//! Where a window reads games: a local folder, and with a run in a store
//! the shards a feed lists there, downloaded into the folder only when the
//! window reads them; their local copies are removed once none of their
//! games is in the window (the store keeps the originals).

use std::collections::HashSet;
use std::path::Path;

use anyhow::Result;

use crate::shards::{self, GamesFile};
use crate::store::ShardFeed;

/// Where a window reads games: a local folder, and a store's feed.
#[derive(Clone, Copy)]
pub struct GamesSource<'a> {
    /// The local folder (a feed's shards are downloaded into it).
    pub dir: &'a Path,
    /// The feed of the run's games folder in a store, if any.
    pub feed: Option<&'a ShardFeed>,
}

impl<'a> GamesSource<'a> {
    /// The games in a local folder only.
    pub fn folder(dir: &'a Path) -> GamesSource<'a> {
        GamesSource { dir, feed: None }
    }

    /// The games files in the folder and those the feed lists, oldest first.
    pub fn list(&self) -> Result<Vec<GamesFile>> {
        let mut files = shards::list(self.dir)?;
        if let Some(feed) = self.feed {
            let local: HashSet<String> = files.iter().map(|f| f.name.clone()).collect();
            let remote = feed.listed().filter(|name| !local.contains(*name));
            files.extend(remote.map(|name| GamesFile { legacy: false, name: name.clone(), path: self.dir.join(name) }));
            shards::sort(&mut files);
        }
        Ok(files)
    }

    /// Makes `file` local (a listed shard not in the folder is downloaded)
    /// and says whether it is. A download that fails is a warning: the
    /// caller tries again later.
    pub fn fetch(&self, file: &GamesFile) -> bool {
        match self.feed {
            Some(feed) if !file.path.exists() => match feed.fetch(&file.name, self.dir) {
                Ok(()) => true,
                Err(e) => {
                    tracing::warn!("fetching {}: {e:#} (trying again later)", file.name);
                    false
                }
            },
            _ => true,
        }
    }

    /// Removes the local copies of files the window let go, where the store
    /// keeps them (a warning for each that cannot be removed).
    pub fn let_go(&self, names: &[String]) {
        if self.feed.is_none() {
            return;
        }
        for name in names {
            match std::fs::remove_file(self.dir.join(name)) {
                Ok(()) => tracing::debug!("{name} left the window; its local copy removed"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => tracing::warn!("removing the local copy of {name}: {e}"),
            }
        }
    }
}
