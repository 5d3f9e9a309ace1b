//! What a trainer has read of the games folder, as its checkpoints record
//! it, so that a resumed trainer reads each file's samples as new exactly
//! once: the newest file read, the newest of each worker (a worker writes
//! and uploads its shards in order, so its older ones were there to be
//! read, however late they all came), and the files read just before those
//! (a file named in that span but not listed arrived out of order).

use std::collections::{BTreeMap, HashSet};

use crate::shards;

/// What a checkpoint records of the games files its trainer read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GamesRead {
    /// The newest games file read.
    pub cursor: Option<String>,
    /// The newest shard read of each worker: one entry per self-play
    /// process that wrote to the run.
    pub newest_by_worker: BTreeMap<String, String>,
    /// The files read within [`shards::LATE`] before their worker's newest
    /// (before the cursor, for files without a worker and checkpoints
    /// without `newest_by_worker`): a file named in that span but not here
    /// arrived out of order and is new.
    pub recent: Vec<String>,
}

impl GamesRead {
    /// The newest file read that `name` is judged against: its worker's, or
    /// the cursor for a file without a worker and for a record without
    /// `newest_by_worker` (None: nothing of it was read).
    fn newest_for(&self, name: &str) -> Option<&String> {
        match shards::worker_of(name).filter(|_| !self.newest_by_worker.is_empty()) {
            Some(worker) => self.newest_by_worker.get(worker),
            None => self.cursor.as_ref(),
        }
    }

    /// The first name of the span in which `name`'s arrival out of order is
    /// looked for: [`shards::LATE`] before [`GamesRead::newest_for`] it.
    fn horizon(&self, name: &str) -> Option<String> {
        shards::late_horizon(self.newest_for(name)?)
    }

    /// Whether the file `name` was read (or passed over) by this record's
    /// trainer; `recent` holds [`GamesRead::recent`].
    pub fn counted(&self, name: &str, recent: &HashSet<String>) -> bool {
        self.newest_for(name).is_some_and(|newest| {
            name <= newest.as_str() && (self.horizon(name).is_none_or(|h| name < h.as_str()) || recent.contains(name))
        })
    }

    /// Notes the file `name` as read: the cursor moves past it.
    pub fn note_read(&mut self, name: &str) {
        if self.cursor.as_ref().is_none_or(|c| name > c.as_str()) {
            self.cursor = Some(name.to_string());
        }
        self.note_passed_over(name);
    }

    /// Notes the file `name` as passed over (older files the window did not
    /// need): its worker's newest moves past it, the cursor does not.
    pub fn note_passed_over(&mut self, name: &str) {
        if let Some(worker) = shards::worker_of(name) {
            let newest = self.newest_by_worker.entry(worker.to_string()).or_default();
            if name > newest.as_str() {
                *newest = name.to_string();
            }
        }
    }

    /// This record with `recent` set from the names of the files seen: those
    /// within [`shards::LATE`] before their worker's newest.
    pub fn with_recent<'a>(&self, seen: impl Iterator<Item = &'a String>) -> GamesRead {
        let mut recent: Vec<String> =
            seen.filter(|name| self.horizon(name).is_some_and(|h| **name >= h)).cloned().collect();
        recent.sort();
        recent.dedup();
        GamesRead { recent, ..self.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shard's name from its finish time in seconds and its worker.
    fn shard(seconds: u64, worker: &str) -> String {
        crate::games::shard_name(seconds * 1000, worker, 0)
    }

    #[test]
    fn files_up_to_each_workers_newest_are_counted_and_late_ones_are_new() {
        let mut read = GamesRead::default();
        for name in [shard(1_000, "a"), shard(5_000, "a"), shard(4_000, "b")] {
            read.note_read(&name);
        }
        assert_eq!(read.cursor, Some(shard(5_000, "a")));
        let read = read.with_recent([shard(1_000, "a"), shard(5_000, "a"), shard(4_000, "b")].iter());
        assert_eq!(read.recent, [shard(4_000, "b"), shard(5_000, "a")], "within LATE of their worker's newest");
        let recent: HashSet<String> = read.recent.iter().cloned().collect();
        assert!(read.counted(&shard(1_000, "a"), &recent), "long before a's newest");
        assert!(read.counted(&shard(4_000, "b"), &recent));
        assert!(!read.counted(&shard(4_900, "a"), &recent), "within LATE of a's newest, not read: it came late");
        assert!(!read.counted(&shard(4_200, "b"), &recent), "after b's newest");
        assert!(!read.counted(&shard(100, "c"), &recent), "a worker never read");
        let cursor_only = GamesRead { newest_by_worker: BTreeMap::new(), ..read.clone() };
        assert!(cursor_only.counted(&shard(4_200, "b"), &recent), "a cursor alone takes it as read");
    }

    #[test]
    fn passing_over_a_file_moves_its_workers_newest_not_the_cursor() {
        let mut read = GamesRead::default();
        read.note_read(&shard(2_000, "a"));
        read.note_passed_over(&shard(3_000, "b"));
        read.note_passed_over(&shard(1_000, "b"));
        assert_eq!(read.cursor, Some(shard(2_000, "a")));
        assert_eq!(read.newest_by_worker.get("b"), Some(&shard(3_000, "b")));
    }
}
