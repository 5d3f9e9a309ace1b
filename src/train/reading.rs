//! The games file being read, marked on disk (`.reading` in its folder)
//! until it is read, so that a file that kills its reader (memory, a bug)
//! is passed over instead of killing every restart: the first restart
//! tries it again (a kill at that moment may have been anything), the
//! second sets it aside under a hidden name (`.stopped-reader-NAME`, which
//! no listing shows) with a warning.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

const MARKER: &str = ".reading";

/// Starts after which a file that was being read each time is passed over.
const TRIES: u32 = 2;

#[derive(Serialize, Deserialize, PartialEq, Debug)]
#[serde(deny_unknown_fields)]
struct Reading {
    file: String,
    /// Readers that started on it and did not finish.
    tries: u32,
}

/// The mark of one file being read; removed when dropped (the file read,
/// or refused with an error).
pub struct ReadingMark {
    path: PathBuf,
}

/// Marks the file `name` of `dir` as being read, unless readers stopped on
/// it [`TRIES`] times already: then `None`, the file set aside and the mark
/// removed. A mark that cannot be written is a warning: the file is read.
pub fn start(dir: &Path, name: &str) -> Option<ReadingMark> {
    let path = dir.join(MARKER);
    let before = std::fs::read(&path).ok().and_then(|bytes| serde_json::from_slice::<Reading>(&bytes).ok());
    let tries = before.filter(|r| r.file == name).map_or(0, |r| r.tries);
    if tries >= TRIES {
        let aside = dir.join(format!(".stopped-reader-{name}"));
        tracing::warn!(
            "{}: its reader stopped while reading it {tries} times (out of memory?): set aside as {}",
            dir.join(name).display(),
            aside.display()
        );
        if let Err(e) = std::fs::rename(dir.join(name), &aside) {
            tracing::warn!("setting {name} aside: {e}");
        }
        let _ = std::fs::remove_file(&path);
        return None;
    }
    let mark = serde_json::to_vec(&Reading { file: name.to_string(), tries: tries + 1 }).expect("a mark is JSON");
    if let Err(e) = crate::durable::write_atomic(&path, &mark) {
        tracing::warn!("marking {name} as being read: {e:#}");
    }
    Some(ReadingMark { path })
}

impl Drop for ReadingMark {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file whose reader stopped once is read again; twice, set aside; a
    /// file read to the end leaves no mark.
    #[test]
    fn a_file_that_stopped_its_reader_twice_is_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        drop(start(dir.path(), "a").unwrap());
        assert!(!dir.path().join(MARKER).exists(), "a finished read leaves no mark");
        std::fs::write(dir.path().join("b"), "a shard").unwrap();
        std::mem::forget(start(dir.path(), "b").unwrap());
        std::mem::forget(start(dir.path(), "b").expect("tried again after one stop"));
        assert!(start(dir.path(), "b").is_none(), "passed over after two");
        assert!(!dir.path().join("b").exists() && dir.path().join(".stopped-reader-b").exists(), "set aside");
        assert!(!dir.path().join(MARKER).exists());
        std::fs::write(dir.path().join(MARKER), "not json").unwrap();
        assert!(start(dir.path(), "c").is_some());
    }
}
