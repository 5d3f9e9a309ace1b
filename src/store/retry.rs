//! Trying work against the store again, with waits that grow.

use std::time::Duration;

use anyhow::Result;

/// Runs `attempt` until it succeeds, waiting 1, 2, 4 ... up to 60 seconds
/// between tries and warning each time: for work that must not be lost
/// while the process lives (a shard's upload).
pub fn retry_forever<T>(what: &str, mut attempt: impl FnMut() -> Result<T>) -> T {
    let mut backoff = Backoff::default();
    loop {
        match attempt() {
            Ok(value) => return value,
            Err(e) => {
                tracing::warn!("{what} failed, trying again in {} s: {e:#}", backoff.next.as_secs());
                backoff.sleep();
            }
        }
    }
}

/// The waits between tries of work against the store: 1, 2, 4 ... up to
/// 60 seconds.
pub struct Backoff {
    /// The next wait.
    pub next: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff { next: Duration::from_secs(1) }
    }
}

impl Backoff {
    /// Sleeps the next wait, and doubles it.
    pub fn sleep(&mut self) {
        std::thread::sleep(self.next);
        self.next = (self.next * 2).min(Duration::from_secs(60));
    }
}
