//! A run's progress at a glance, read from its folder: the newest
//! checkpoint, the training and self-play rates of the last minutes, and
//! whether `gipf ratings` has drawn its Elo plot. `gipf serve --run` answers
//! it as JSON for the run's page; TensorBoard stays the place for every
//! scalar.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Result;
use serde::Serialize;

use crate::checkpoint::{checkpoints_newest_first, read_meta};
use crate::shards;

/// The span the rates are measured over, back from the newest checkpoint
/// (training) and the newest shard (self-play).
pub const RATE_SPAN: Duration = Duration::from_secs(15 * 60);

#[derive(Debug, Serialize)]
pub struct Progress {
    pub newest: Option<Newest>,
    pub training: Option<Rate>,
    pub selfplay: Option<Rate>,
    /// Whether `RUN/arena/ratings.png` exists.
    pub elo_plot: bool,
}

#[derive(Debug, Serialize)]
pub struct Newest {
    pub file: String,
    pub step: u64,
    pub samples_read: Option<u64>,
    /// Seconds since it was written.
    pub age_seconds: f64,
}

/// Per hour over the last `minutes`: training steps and samples read by the
/// trainer; for self-play, games and positions played.
#[derive(Debug, Serialize, PartialEq)]
pub struct Rate {
    pub per_hour: f64,
    pub samples_per_hour: f64,
    pub minutes: f64,
}

/// The progress of the run in `run` (its `models`, `games` and `arena`
/// folders; a missing one gives no figure, not an error).
pub fn of(run: &Path) -> Result<Progress> {
    let checkpoints = written_checkpoints(&run.join("models"))?;
    let newest = checkpoints.first().map(|c| Newest {
        file: c.weights.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        step: c.step,
        samples_read: c.samples_read,
        age_seconds: SystemTime::now().duration_since(c.at).unwrap_or_default().as_secs_f64(),
    });
    Ok(Progress {
        newest,
        training: training_rate(&checkpoints),
        selfplay: selfplay_rate(&run.join("games"))?,
        elo_plot: run.join("arena/ratings.png").is_file(),
    })
}

/// A checkpoint as written: its weights, step, samples read, and when its
/// description was written.
struct Written {
    weights: PathBuf,
    step: u64,
    samples_read: Option<u64>,
    at: SystemTime,
}

/// The checkpoints of `dir` that can be read, newest first.
fn written_checkpoints(dir: &Path) -> Result<Vec<Written>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    for weights in checkpoints_newest_first(dir)? {
        let (Ok(meta), Ok(file)) = (read_meta(&weights), std::fs::metadata(weights.with_extension("json"))) else {
            continue;
        };
        found.push(Written { step: meta.step, samples_read: meta.samples_read, at: file.modified()?, weights });
    }
    Ok(found)
}

/// Steps and samples read per hour between the newest checkpoint and the
/// oldest one written within [`RATE_SPAN`] before it (else the one before).
fn training_rate(checkpoints: &[Written]) -> Option<Rate> {
    let newest = checkpoints.first()?;
    let within = |c: &&Written| newest.at.duration_since(c.at).is_ok_and(|age| age <= RATE_SPAN);
    let earlier = checkpoints[1..].iter().rev().find(within).or(checkpoints.get(1))?;
    let hours = newest.at.duration_since(earlier.at).ok()?.as_secs_f64() / 3600.0;
    let samples = |c: &Written| c.samples_read.unwrap_or(0) as f64;
    (hours > 0.0).then(|| Rate {
        per_hour: newest.step.saturating_sub(earlier.step) as f64 / hours,
        samples_per_hour: (samples(newest) - samples(earlier)).max(0.0) / hours,
        minutes: hours * 60.0,
    })
}

/// Games and positions per hour in the shards finished within
/// [`RATE_SPAN`] before the newest one (by the time in their names), over
/// that span.
fn selfplay_rate(dir: &Path) -> Result<Option<Rate>> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let files: Vec<(shards::GamesFile, u64)> =
        shards::list(dir)?.into_iter().filter_map(|f| shards::finished_ms(&f.name).map(|ms| (f, ms))).collect();
    let Some(&(_, newest)) = files.iter().max_by_key(|(_, ms)| *ms) else { return Ok(None) };
    let since = newest.saturating_sub(RATE_SPAN.as_millis() as u64);
    let recent: Vec<&(shards::GamesFile, u64)> = files.iter().filter(|(_, ms)| *ms > since).collect();
    let oldest = recent.iter().map(|(_, ms)| *ms).min().unwrap_or(newest);
    // The span runs from the shard finished before the recent ones, when there is one.
    let start = files.iter().map(|(_, ms)| *ms).filter(|ms| *ms <= since).max().unwrap_or(oldest);
    let hours = (newest - start) as f64 / 3_600_000.0;
    let (mut games, mut positions) = (0usize, 0usize);
    for (file, ms) in &recent {
        if *ms == start {
            continue;
        }
        if let Ok(read) = shards::read(file) {
            games += read.games.len();
            positions += read.games.iter().map(|g| g.actions.len()).sum::<usize>();
        }
    }
    Ok((hours > 0.0).then(|| Rate {
        per_hour: games as f64 / hours,
        samples_per_hour: positions as f64 / hours,
        minutes: hours * 60.0,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    const SHARD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/shard-format-2.jsonl.zst");

    fn written(path: &Path, ago: Duration) {
        File::options().write(true).open(path).unwrap().set_modified(SystemTime::now() - ago).unwrap();
    }

    #[test]
    fn rates_over_the_last_minutes_from_the_run_folder() {
        let run = tempfile::tempdir().unwrap();
        let empty = of(run.path()).unwrap();
        assert!(empty.newest.is_none() && empty.training.is_none() && empty.selfplay.is_none() && !empty.elo_plot);

        // Checkpoints at steps 0, 300, 600, 900, written 40, 20, 10 and 0 minutes ago.
        let config = crate::config::Config::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/configs/tiny.toml")));
        let mut trainer = crate::train::Trainer::new(&config.unwrap(), tch::Device::Cpu, 1);
        for (step, minutes) in [(0, 40), (300, 20), (600, 10), (900, 0)] {
            trainer.step = step;
            let weights = trainer.save(&run.path().join("models")).unwrap();
            written(&weights.with_extension("json"), Duration::from_secs(minutes * 60));
        }
        // Shards finished at 0, 20 and 30 minutes: the last two in the 15 minutes before the newest.
        let games = run.path().join("games");
        std::fs::create_dir(&games).unwrap();
        let t0 = 1_800_000_000_000u64;
        for (i, minutes) in [0u64, 20, 30].into_iter().enumerate() {
            let name = format!("shard-{:013}-w-{i:06}.jsonl.zst", t0 + minutes * 60_000);
            std::fs::copy(SHARD, games.join(name)).unwrap();
        }
        std::fs::create_dir(run.path().join("arena")).unwrap();
        std::fs::write(run.path().join("arena/ratings.png"), b"png").unwrap();

        let progress = of(run.path()).unwrap();
        let newest = progress.newest.unwrap();
        assert_eq!((newest.file.as_str(), newest.step), ("step-00000900.safetensors", 900));
        let training = progress.training.unwrap();
        assert!((training.minutes - 10.0).abs() < 0.1, "{training:?}");
        assert!((training.per_hour - 1800.0).abs() < 20.0, "300 steps in 10 minutes: {training:?}");
        let in_shard = shards::read(&shards::list(&games).unwrap()[0]).unwrap().games.len() as f64;
        let selfplay = progress.selfplay.unwrap();
        assert_eq!(selfplay.minutes, 30.0, "from the shard before the span: {selfplay:?}");
        assert_eq!(selfplay.per_hour, 2.0 * in_shard / 0.5, "two shards in half an hour: {selfplay:?}");
        assert!(progress.elo_plot);
    }
}
