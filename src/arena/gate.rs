//! Gating: a new checkpoint plays the best one so far and replaces it (as
//! the checkpoint self-play uses, named in `models/best.json`) only when it
//! scores well enough. Each gating match is kept in `arena/gating.jsonl`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use tch::Device;

use super::batched::network_match;
use super::ratings::{read_matches, write_lines, MatchRecord};
use super::{MatchOptions, Tally};
use crate::checkpoint::{best_checkpoint, load_for_play, newest_checkpoint, set_best_checkpoint};
use crate::config::{Config, GateConfig};
use crate::players::Budget;

/// Gating games played at once (all of them, up to this).
const MAX_GAMES_AT_ONCE: usize = 1024;

/// What a gating match decided.
#[derive(Clone, Debug)]
pub struct GateOutcome {
    /// The checkpoint that played for the place.
    pub candidate: PathBuf,
    /// The best checkpoint before the match, its opponent.
    pub previous_best: PathBuf,
    /// The candidate's results.
    pub tally: Tally,
    /// Whether the candidate scored `gate.threshold` or more and is now the best.
    pub accepted: bool,
}

/// Makes sure `models/best.json` exists, naming the newest checkpoint when
/// it does not (the one self-play has been using).
pub fn ensure_best(models: &Path) -> Result<PathBuf> {
    if let Some(best) = best_checkpoint(models)? {
        return Ok(best);
    }
    let newest = newest_checkpoint(models)?.with_context(|| format!("no checkpoint in {}", models.display()))?;
    set_best_checkpoint(models, &newest)?;
    Ok(newest)
}

/// Plays `candidate` against the best checkpoint in `models` and makes it
/// the best when it scores `gate.threshold` or more. The games are played
/// all at once, batched as self-play batches them (see `arena/batched.rs`).
pub fn gate(
    run: &Path,
    candidate: &Path,
    gate: &GateConfig,
    config: &Config,
    device: Device,
    seed: u64,
) -> Result<GateOutcome> {
    let models = run.join("models");
    // The records first: a damaged one stops the gate before it plays and
    // moves the best, not after.
    let folder = run.join("arena");
    let path = folder.join("gating.jsonl");
    let mut records = read_matches(&path)?;
    let best = ensure_best(&models)?;
    let budget = Budget::Simulations(gate.simulations);
    let options = MatchOptions {
        variant: config.game.variant,
        games: gate.games.div_ceil(2) * 2,
        opening_actions: gate.opening_actions,
        max_actions: config.game.max_actions,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        seed,
        sprt: None,
        device,
        inference: config.play.inference(),
        search: config.search,
    };
    let (mut a, _) = load_for_play(candidate, device, options.inference)?;
    let (mut b, _) = load_for_play(&best, device, options.inference)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
        .context("cannot start the gate's search threads")?;
    // Every game at once, each network's leaves in one batch per step.
    let parallel = (options.games as usize).min(MAX_GAMES_AT_ONCE);
    let report = pool.install(|| network_match(&mut a, &mut b, gate.simulations, &options, parallel))?;
    let accepted = report.tally.score() >= gate.threshold;
    if accepted {
        set_best_checkpoint(&models, candidate)?;
    }
    std::fs::create_dir_all(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let stem = |p: &Path| p.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    records.push(MatchRecord { a: stem(candidate), b: stem(&best), budget: budget.to_string(), tally: report.tally });
    write_lines(&path, &records)?;
    Ok(GateOutcome { candidate: candidate.to_path_buf(), previous_best: best, tally: report.tally, accepted })
}
