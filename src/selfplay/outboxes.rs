//! The outboxes of self-play workers whose run keeps its games in an object
//! store: a folder a worker, whose shards wait there until uploaded.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::shards;

/// The outboxes in `dir` named `{prefix}N` with N not in `kept` (those of
/// workers a run no longer has).
pub fn stray_outboxes(dir: &Path, prefix: &str, kept: std::ops::Range<usize>) -> Result<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut strays = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let number = name.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok());
        if number.is_some_and(|n| !kept.contains(&n)) && entry.path().is_dir() {
            strays.push(entry.path());
        }
    }
    Ok(strays)
}

/// Moves the shards of `strays` (outboxes of workers a run no longer has)
/// into `outbox`, whose uploader sends them: a shard left there by an
/// earlier run with more workers is not stranded.
pub fn gather_outboxes(outbox: &Path, strays: &[PathBuf]) -> Result<usize> {
    let mut moved = 0;
    for stray in strays {
        for file in shards::list(stray)? {
            std::fs::create_dir_all(outbox).with_context(|| format!("cannot create {}", outbox.display()))?;
            let to = outbox.join(&file.name);
            std::fs::rename(&file.path, &to)
                .with_context(|| format!("cannot move {} to {}", file.path.display(), to.display()))?;
            moved += 1;
        }
    }
    if moved > 0 {
        tracing::info!(shards = moved, outbox = %outbox.display(), "shards of earlier workers' outboxes moved here");
    }
    Ok(moved)
}
