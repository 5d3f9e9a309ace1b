//! Stopping on a signal: SIGINT (Ctrl-C) and SIGTERM (how Slurm and
//! Kubernetes stop a job) ask the long-running commands to stop cleanly:
//! self-play writes its finished games, the trainer saves and publishes its
//! steps, then the process exits. A second signal ends it at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use signal_hook::consts::{SIGINT, SIGTERM};

static REQUESTED: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Installs the handlers, for a process whose work watches [`requested`]
/// (the loop, self-play, the trainer); others keep the default: a signal
/// ends them at once.
pub fn install() -> Result<()> {
    let flag = REQUESTED.get_or_init(|| Arc::new(AtomicBool::new(false)));
    for signal in [SIGINT, SIGTERM] {
        // Registered first, so that it acts only once the flag is set.
        signal_hook::flag::register_conditional_shutdown(signal, 130, flag.clone())
            .context("cannot install the signal handlers")?;
        signal_hook::flag::register(signal, flag.clone()).context("cannot install the signal handlers")?;
    }
    Ok(())
}

/// Whether a stop was asked for (never, without [`install`]).
pub fn requested() -> bool {
    REQUESTED.get().is_some_and(|flag| flag.load(Ordering::Relaxed))
}
