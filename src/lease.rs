//! One trainer per run in an object store: the trainer holds a lease, the
//! object [`LEASE_FILE`] at the run's root naming it and the time of its
//! last heartbeat. A second trainer on the same run refuses to start while
//! the lease is fresh and takes it over once it is [`STALE`] (a trainer
//! that was killed). A background thread renews it every [`RENEW`]; the
//! trainer checks [`Lease::check`] before it publishes, so that a trainer
//! whose lease was taken over stops instead of moving `latest.json` back.
//!
//! Staleness is judged by the heartbeat's time against this machine's
//! clock: machines whose clocks differ by more than [`STALE`] would take
//! each other's leases.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::store::Store;

/// The lease's object, at the run's root in the store.
pub const LEASE_FILE: &str = "trainer-lease.json";
/// How often the holder renews its lease.
pub const RENEW: Duration = Duration::from_secs(30);
/// How old a heartbeat must be before another trainer may take the lease.
pub const STALE: Duration = Duration::from_secs(300);
/// How far ahead of this machine's clock a heartbeat may lie: a lease whose
/// heartbeat is further in the future would never go stale, so it is taken
/// over as unreadable.
pub const MAX_CLOCK_SKEW: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LeaseRecord {
    owner: String,
    /// Milliseconds since the Unix epoch, by the holder's clock.
    heartbeat_ms: u64,
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// A run's lease, held by this process until dropped (then given back).
pub struct Lease {
    store: Arc<Store>,
    owner: String,
    /// Why the lease was lost, once it was.
    lost: Arc<Mutex<Option<String>>>,
    stop: Arc<AtomicBool>,
    renewer: Option<std::thread::JoinHandle<()>>,
}

impl Lease {
    /// Takes the lease of the run at `store`'s root for `owner`: creates it,
    /// or takes over a stale (or unreadable) one; a fresh lease of another
    /// owner is a clear error naming it.
    pub fn take(store: Arc<Store>, owner: &str) -> Result<Lease> {
        Lease::take_renewing(store, owner, RENEW)
    }

    /// [`Lease::take`], renewing every `renew` (tests shorten it).
    pub fn take_renewing(store: Arc<Store>, owner: &str, renew: Duration) -> Result<Lease> {
        let record = LeaseRecord { owner: owner.to_string(), heartbeat_ms: now_ms() };
        if !store.create(LEASE_FILE, serde_json::to_vec(&record)?)? {
            take_over(&store, &record)?;
        }
        let lost = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let renewer = {
            let (store, owner, lost, stop) = (store.clone(), owner.to_string(), lost.clone(), stop.clone());
            std::thread::Builder::new()
                .name("lease".into())
                .spawn(move || renew_until_stopped(&store, &owner, renew, &lost, &stop))
                .context("cannot start the lease's thread")?
        };
        Ok(Lease { store, owner: owner.to_string(), lost, stop, renewer: Some(renewer) })
    }

    /// An error once another trainer has taken the lease over.
    pub fn check(&self) -> Result<()> {
        match self.lost.lock().expect("no panic holding the lease").as_ref() {
            Some(why) => bail!("{why}; this trainer stops so that only one writes the run"),
            None => Ok(()),
        }
    }
}

/// Replaces the lease in the store with `record` if it is stale or
/// unreadable (a heartbeat far in the future among the unreadable).
fn take_over(store: &Store, record: &LeaseRecord) -> Result<()> {
    let url = store.url(LEASE_FILE);
    let held = store.get(LEASE_FILE)?.map(|bytes| serde_json::from_slice::<LeaseRecord>(&bytes));
    match held {
        Some(Ok(held)) if held.owner != record.owner => {
            let ahead = Duration::from_millis(held.heartbeat_ms.saturating_sub(record.heartbeat_ms));
            if ahead > MAX_CLOCK_SKEW {
                tracing::warn!(
                    "{url}: the lease of {} has its heartbeat {} s in the future, more than clocks may differ ({} s); \
                     taking it over as unreadable",
                    held.owner,
                    ahead.as_secs(),
                    MAX_CLOCK_SKEW.as_secs()
                );
                return put_and_check(store, record);
            }
            let age = Duration::from_millis(record.heartbeat_ms.saturating_sub(held.heartbeat_ms));
            if age < STALE {
                bail!(
                    "{url}: another trainer ({}) holds this run, its last heartbeat {} s ago; stop it, or wait until \
                     its lease is {} s old (a killed trainer's lease goes stale)",
                    held.owner,
                    age.as_secs(),
                    STALE.as_secs()
                );
            }
            tracing::warn!(
                "{url}: taking over the lease of {} (its last heartbeat {} s ago)",
                held.owner,
                age.as_secs()
            );
        }
        Some(Err(e)) => tracing::warn!("{url}: not a lease ({e}); taking it over"),
        _ => {}
    }
    put_and_check(store, record)
}

/// Writes `record` as the lease, then reads it back to find out whether
/// another trainer took it over at the same moment.
fn put_and_check(store: &Store, record: &LeaseRecord) -> Result<()> {
    let url = store.url(LEASE_FILE);
    store.put(LEASE_FILE, serde_json::to_vec(record)?)?;
    std::thread::sleep(Duration::from_secs(1));
    let now: Option<LeaseRecord> = store.get(LEASE_FILE)?.and_then(|bytes| serde_json::from_slice(&bytes).ok());
    match now {
        Some(now) if now.owner == record.owner => Ok(()),
        other => bail!("{url}: another trainer took the lease at the same moment ({other:?})"),
    }
}

/// Renews the lease every `every` until `stop`, or until the store shows
/// another owner (then `lost` says so). A store that does not answer is
/// tried again at the next renewal.
fn renew_until_stopped(store: &Store, owner: &str, every: Duration, lost: &Mutex<Option<String>>, stop: &AtomicBool) {
    let tick = Duration::from_millis(100);
    let mut waited = Duration::ZERO;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(tick);
        waited += tick;
        if waited < every {
            continue;
        }
        waited = Duration::ZERO;
        match renew(store, owner) {
            Ok(None) => {}
            Ok(Some(why)) => {
                tracing::error!("{why}");
                *lost.lock().expect("no panic holding the lease") = Some(why);
                return;
            }
            Err(e) => tracing::warn!("renewing the lease: {e:#} (trying again in {} s)", every.as_secs()),
        }
    }
}

/// Writes a new heartbeat unless the lease has another owner now, in which
/// case it says so.
fn renew(store: &Store, owner: &str) -> Result<Option<String>> {
    let held: Option<LeaseRecord> = store.get(LEASE_FILE)?.and_then(|bytes| serde_json::from_slice(&bytes).ok());
    if let Some(held) = held.filter(|held| held.owner != owner) {
        return Ok(Some(format!("{}: the lease was taken over by {}", store.url(LEASE_FILE), held.owner)));
    }
    let record = LeaseRecord { owner: owner.to_string(), heartbeat_ms: now_ms() };
    store.put(LEASE_FILE, serde_json::to_vec(&record)?)?;
    Ok(None)
}

impl Drop for Lease {
    /// Gives the lease back (when still held), so that the next trainer
    /// starts at once.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(renewer) = self.renewer.take() {
            let _ = renewer.join();
        }
        if self.check().is_ok() {
            let held: Option<LeaseRecord> =
                self.store.get(LEASE_FILE).ok().flatten().and_then(|bytes| serde_json::from_slice(&bytes).ok());
            if held.is_some_and(|held| held.owner == self.owner) {
                if let Err(e) = self.store.delete(LEASE_FILE) {
                    tracing::warn!("giving the lease back: {e:#} (the next trainer waits until it is stale)");
                }
            }
        }
    }
}
