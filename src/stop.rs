//! Stopping on a signal: SIGINT (Ctrl-C) and SIGTERM (how Slurm and
//! Kubernetes stop a job) ask the long-running commands to stop cleanly:
//! self-play writes its finished games, the trainer saves and publishes its
//! steps, then the process exits. Signals within [`ONE_STOP`] of the first
//! are the same stop (coreutils `timeout` signals the process and then its
//! process group; a scheduler may send SIGTERM and SIGINT together); a
//! signal after that ends the process at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// How long after the first signal others count as the same stop.
pub const ONE_STOP: Duration = Duration::from_secs(1);

static REQUESTED: AtomicBool = AtomicBool::new(false);
static INSTALLED: OnceLock<()> = OnceLock::new();

/// Installs the handlers, for a process whose work watches [`requested`]
/// (the loop, self-play, the trainer); others keep the default: a signal
/// ends them at once. The signals are taken on a thread of their own.
pub fn install() -> Result<()> {
    if INSTALLED.get().is_some() {
        return Ok(());
    }
    let mut signals = Signals::new([SIGINT, SIGTERM]).context("cannot install the signal handlers")?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut first: Option<Instant> = None;
            for _ in signals.forever() {
                match first {
                    None => {
                        first = Some(Instant::now());
                        REQUESTED.store(true, Ordering::Relaxed);
                    }
                    Some(at) if at.elapsed() >= ONE_STOP => std::process::exit(130),
                    Some(_) => {}
                }
            }
        })
        .context("cannot start the signal thread")?;
    let _ = INSTALLED.set(());
    Ok(())
}

/// Whether a stop was asked for (never, without [`install`]).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}
