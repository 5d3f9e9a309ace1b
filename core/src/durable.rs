//! Files that survive a crash or a power loss: written under a temporary
//! name, synced, renamed into place, and the folder synced, so that a path
//! holds either the whole new content or what it held before. Errors keep
//! their kind ([`std::io::ErrorKind`]) and name the path.

use std::io::{Error, Result, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

const TEMPORARY_PREFIX: &str = ".tmp-";

/// `error`, its message naming what was done to `path`.
fn naming<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(Error) -> Error + 'a {
    move |error| Error::new(error.kind(), format!("cannot {what} {}: {error}", path.display()))
}

/// A temporary name beside `path`, which [`write_atomic`] writes first:
/// hidden (readers skip names starting with a dot), random (nobody can plant
/// a link under it beforehand), and ending like `path` (some writers choose
/// the format by the extension).
pub fn temporary_path(path: &Path) -> Result<PathBuf> {
    let Some(name) = path.file_name() else {
        return Err(Error::new(std::io::ErrorKind::InvalidInput, format!("{}: not a file path", path.display())));
    };
    let unique = rand::random::<u64>();
    let name = format!("{TEMPORARY_PREFIX}{}-{unique:016x}-{}", std::process::id(), name.to_string_lossy());
    Ok(folder_of(path).join(name))
}

fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Writes `bytes` to `path` atomically and durably.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temporary_path(path)?;
    write_file(&tmp, bytes)?;
    publish(&tmp, path)
}

/// Writes `bytes` to the new file `tmp` (a [`temporary_path`]) and syncs
/// it; a file or link already there is an error, and on failure nothing is
/// left at `tmp`.
pub fn write_file(tmp: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(tmp).map_err(naming("write", tmp))?;
    let written = file.write_all(bytes).and_then(|_| file.sync_all()).map_err(naming("write", tmp));
    if written.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    written
}

/// Writes `path` by `write`, which writes the new file it is given (a
/// [`temporary_path`] beside `path`), then publishes it; on failure nothing
/// is left, and `path` holds what it held.
pub fn write_through<E: From<Error>>(
    path: &Path,
    write: impl FnOnce(&Path) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let tmp = temporary_path(path)?;
    let done = write(&tmp).and_then(|()| Ok(publish(&tmp, path)?));
    if done.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    done
}

/// An error naming `dir` unless a file can be created in it (a read-only
/// or full folder is reported before any work).
pub fn check_writable(dir: &Path) -> Result<()> {
    let probe = temporary_path(&dir.join("probe"))?;
    std::fs::File::create(&probe).map_err(naming("write in", dir))?;
    std::fs::remove_file(&probe).map_err(naming("write in", dir))
}

/// Syncs the finished file `tmp`, renames it to `path` and syncs the folder.
/// On failure `tmp` is removed and `path` is left as it was.
pub fn publish(tmp: &Path, path: &Path) -> Result<()> {
    let done = std::fs::File::open(tmp).and_then(|f| f.sync_all()).map_err(naming("sync", tmp)).and_then(|_| {
        std::fs::rename(tmp, path)
            .map_err(|e| Error::new(e.kind(), format!("cannot rename {} to {}: {e}", tmp.display(), path.display())))
    });
    if let Err(e) = done {
        let _ = std::fs::remove_file(tmp);
        return Err(e);
    }
    sync_folder(folder_of(path))
}

/// Makes the folder's entries (new names, removals) durable.
pub fn sync_folder(dir: &Path) -> Result<()> {
    std::fs::File::open(dir).and_then(|f| f.sync_all()).map_err(naming("sync folder", dir))
}

/// Removes temporary files (see [`temporary_path`]) older than `age` left in
/// `dir` by killed processes; returns how many.
pub fn remove_stale_temporaries(dir: &Path, age: std::time::Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let old = entry.metadata().and_then(|m| m.modified()).is_ok_and(|t| t.elapsed().is_ok_and(|e| e >= age));
        if name.starts_with(TEMPORARY_PREFIX) && old && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The sha256 of `bytes`, in hexadecimal.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The sha256 of the file at `path`, in hexadecimal.
pub fn sha256_of_file(path: &Path) -> Result<String> {
    Ok(sha256_hex(&std::fs::read(path).map_err(naming("read", path))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_replaces_whole_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let err = write_atomic(&dir.path().join("no/such/b.json"), b"x").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
        assert!(err.to_string().starts_with("cannot write") && err.to_string().contains("no/such"), "{err}");
        // A link (or any file) already at a temporary name is never written through.
        let (victim, planted) = (dir.path().join("victim"), dir.path().join(".tmp-planted"));
        std::fs::write(&victim, b"precious").unwrap();
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(write_file(&planted, b"x").is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    }

    #[test]
    fn stale_temporaries_are_removed_and_fresh_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = temporary_path(&dir.path().join("shard-1.jsonl.zst")).unwrap();
        assert!(tmp.file_name().unwrap().to_string_lossy().ends_with("-shard-1.jsonl.zst"), "{}", tmp.display());
        std::fs::write(tmp, b"half").unwrap();
        std::fs::write(dir.path().join("shard-1.jsonl.zst"), b"whole").unwrap();
        assert_eq!(remove_stale_temporaries(dir.path(), std::time::Duration::from_secs(3600)), 0);
        assert_eq!(remove_stale_temporaries(dir.path(), std::time::Duration::ZERO), 1);
        assert!(dir.path().join("shard-1.jsonl.zst").exists());
    }
}
