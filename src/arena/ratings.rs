//! Ratings of a run's checkpoints, or of a lineage's generations: each rated
//! model plays the few rated before it, and each fixed anchor (a baseline
//! such as `alphabeta:2`) when anchors are given; every match is kept in
//! `arena/matches.jsonl`, the ratings fitted to all of them (Bradley-Terry;
//! the first anchor, or else the first model, at 0 Elo) go to
//! `arena/ratings.jsonl`, and a plot to `arena/ratings.png`: rating against
//! training step for a run, against the samples the whole lineage read (log
//! scale, with the Elo gained per doubling) for a lineage, the anchors drawn
//! as horizontal lines. Matches already played are not played again, so an
//! interrupted rating resumes, and a longer run or lineage adds only its new
//! models.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::stats::{fit_ratings, Pairing, Tally};
use super::{play_match, MatchOptions};
use crate::checkpoint::read_meta;
use crate::durable::{sha256_of_file, write_atomic};
use crate::players::{Budget, PlayerSpec};

/// One match between two checkpoints of the run (names are file stems).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchRecord {
    /// The first player, from whose side the tally counts.
    pub a: String,
    /// The second player (another checkpoint, or an anchor by its spec's name).
    pub b: String,
    /// The search budget both played with, e.g. "64 sims".
    pub budget: String,
    /// The results, from `a`'s side.
    pub tally: Tally,
}

/// A checkpoint's rating, or an anchor's (without a step).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The rated model's name in the matches, or the anchor's spec.
    pub checkpoint: String,
    /// The checkpoint's training step; none for an anchor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// A lineage's generation: the samples its whole training read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_read: Option<u64>,
    /// Elo relative to the first anchor, or without anchors to the first rated checkpoint.
    pub elo: f64,
    /// Half the width of the 95% interval.
    pub margin: f64,
}

/// Which of the run's checkpoints are rated (the first and the newest always).
#[derive(Clone, Copy, Debug)]
pub enum Selection {
    /// Every n-th checkpoint.
    Every(usize),
    /// This many checkpoints, spread evenly by step from the first to the
    /// newest (retention keeps checkpoints unevenly).
    Points(usize),
}

/// Which checkpoints are rated and against how many predecessors.
#[derive(Clone, Debug)]
pub struct RatingOptions {
    /// Which of the run's checkpoints are rated.
    pub selection: Selection,
    /// Each rated checkpoint plays this many of the rated ones before it.
    pub opponents: usize,
    /// Fixed players every rated checkpoint plays; the first is the 0 of the scale.
    pub anchors: Vec<PlayerSpec>,
    /// The rated models' search budget (an anchor plays as its spec says).
    pub budget: Budget,
    /// How each match is played.
    pub matches: MatchOptions,
}

/// A model rated: its name in the matches, its step, for a lineage's
/// generation the samples its whole training read, and its weights.
#[derive(Clone, Debug)]
pub struct Rated {
    /// Its name in the matches and the ratings: a checkpoint's file stem, or for
    /// a lineage's generation `step-N-` and the start of its weights' sha256.
    pub name: String,
    /// The training step of its checkpoint.
    pub step: u64,
    /// A lineage's generation: the samples its whole training read; none for a
    /// run's checkpoint.
    pub samples_read: Option<u64>,
    /// Its weights file.
    pub path: PathBuf,
}

/// The `.safetensors` files of a folder, by name.
fn weights_files(folder: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(folder).with_context(|| format!("cannot list {}", folder.display()))?;
    let mut found = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "safetensors") {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}

/// The run's checkpoints in step order.
fn checkpoints(models: &Path) -> Result<Vec<Rated>> {
    let mut found = Vec::new();
    for path in weights_files(models)? {
        let stem = path.file_stem().and_then(|n| n.to_str()).unwrap_or_default();
        if let Some(step) = stem.strip_prefix("step-").and_then(|s| s.parse::<u64>().ok()) {
            found.push(Rated { name: stem.to_string(), step, samples_read: None, path });
        }
    }
    found.sort_by_key(|c| c.step);
    Ok(found)
}

/// A lineage's generations in a models folder as `scripts/leg.sh` keeps it
/// (`reference`, `tip`, older generations in `history/`), in the order of
/// the samples their whole training read; the same weights under two names
/// are one. Each is named by its step and the start of its weights' sha256,
/// which stay its own when `reference` or `tip` moves on. A description
/// without a lineage (written before lineages were recorded, by a run from
/// zero) counts its own samples read; one without either is an error
/// naming it. A generation that read no samples is left out, with a
/// warning: the curve's axis is their logarithm.
pub fn generations(models: &Path) -> Result<Vec<Rated>> {
    let named = ["reference", "tip"].map(|name| models.join(format!("{name}.safetensors")));
    let history = models.join("history");
    let older = if history.is_dir() { weights_files(&history)? } else { Vec::new() };
    let files = named.into_iter().filter(|p| p.is_file()).chain(older);
    let mut found: Vec<Rated> = Vec::new();
    for path in files {
        let meta = read_meta(&path)?;
        let samples_read = match meta.lineage {
            Some(lineage) => lineage.total().samples_read,
            None => meta.samples_read.with_context(|| format!("{}: no samples read recorded", path.display()))?,
        };
        let name = format!("step-{}-{}", meta.step, &sha256_of_file(&path)?[..8]);
        if samples_read == 0 {
            tracing::warn!(
                "{}: its training read no samples; not rated (no place on the curve's log axis)",
                path.display()
            );
            continue;
        }
        if found.iter().all(|g| g.name != name) {
            found.push(Rated { name, step: meta.step, samples_read: Some(samples_read), path });
        }
    }
    anyhow::ensure!(!found.is_empty(), "no generations in {} (reference, tip, history/)", models.display());
    found.sort_by_key(|g| g.samples_read);
    Ok(found)
}

/// The indices of at most `points` of `steps` (ascending) nearest to evenly
/// spaced steps from the first to the last, both always included.
fn spread_by_step(steps: &[u64], points: usize) -> Vec<usize> {
    let (Some(&first), Some(&last)) = (steps.first(), steps.last()) else { return Vec::new() };
    if points <= 1 {
        return vec![steps.len() - 1];
    }
    let mut chosen: Vec<usize> = (0..points)
        .map(|k| {
            let target = first as f64 + (last - first) as f64 * k as f64 / (points - 1) as f64;
            (0..steps.len())
                .min_by(|&a, &b| (steps[a] as f64 - target).abs().total_cmp(&(steps[b] as f64 - target).abs()))
                .expect("steps is not empty")
        })
        .collect();
    chosen.dedup();
    chosen
}

/// Reads the recorded matches (none when the file does not exist yet).
pub fn read_matches(path: &Path) -> Result<Vec<MatchRecord>> {
    read_checked_lines(path, "a match record", |m: &MatchRecord| m.tally.check())
}

/// Reads a JSON-lines file of `what` (none when it does not exist yet); a
/// line that is not one, or whose item `check` refuses, is an error naming
/// the file and line.
pub(crate) fn read_checked_lines<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
    check: impl Fn(&T) -> Result<(), String>,
) -> Result<Vec<T>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            let item: T =
                serde_json::from_str(line).with_context(|| format!("{} line {}: not {what}", path.display(), i + 1))?;
            check(&item).map_err(|why| anyhow::anyhow!("{} line {}: {why}", path.display(), i + 1))?;
            Ok(item)
        })
        .collect()
}

pub(crate) fn write_lines<T: Serialize>(path: &Path, items: &[T]) -> Result<()> {
    let mut text = String::new();
    for item in items {
        text.push_str(&serde_json::to_string(item)?);
        text.push('\n');
    }
    Ok(write_atomic(path, text.as_bytes())?)
}

/// Plays the missing matches among the run's checkpoints, then fits, writes
/// and plots the ratings. `progress` hears of each match as it starts.
pub fn rate_run(run: &Path, options: &RatingOptions, progress: &mut dyn FnMut(&str)) -> Result<Vec<Rating>> {
    let all = checkpoints(&run.join("models"))?;
    anyhow::ensure!(!all.is_empty(), "no checkpoints in {}", run.join("models").display());
    let chosen: Vec<Rated> = match options.selection {
        Selection::Points(points) => {
            let steps: Vec<u64> = all.iter().map(|c| c.step).collect();
            spread_by_step(&steps, points).into_iter().map(|i| all[i].clone()).collect()
        }
        Selection::Every(every) => {
            let every = every.max(1);
            let newest = all.len() - 1;
            all.into_iter().enumerate().filter(|(i, _)| i % every == 0 || *i == newest).map(|(_, c)| c).collect()
        }
    };
    rate(&chosen, &run.join("arena"), options, progress)
}

/// [`rate_run`] for a lineage's generations ([`generations`]), every one,
/// the results in the models folder's `arena/`.
pub fn rate_lineage(models: &Path, options: &RatingOptions, progress: &mut dyn FnMut(&str)) -> Result<Vec<Rating>> {
    rate(&generations(models)?, &models.join("arena"), options, progress)
}

/// Plays the missing matches among `chosen`, then fits the ratings and
/// writes them, and their plot, into `folder`.
fn rate(
    chosen: &[Rated],
    folder: &Path,
    options: &RatingOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Rating>> {
    std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let matches_path = folder.join("matches.jsonl");
    let mut matches = read_matches(&matches_path)?;
    let budget = options.budget.to_string();

    // Players of the fit: the anchors first (the first one is the 0), then the models.
    let names: Vec<String> =
        options.anchors.iter().map(PlayerSpec::name).chain(chosen.iter().map(|c| c.name.clone())).collect();
    for (i, rated) in chosen.iter().enumerate() {
        let a = PlayerSpec::network(rated.path.clone(), options.budget, None);
        let earlier = chosen[i.saturating_sub(options.opponents)..i].iter().rev();
        let opponents = earlier
            .map(|c| (c.name.clone(), PlayerSpec::network(c.path.clone(), options.budget, None)))
            .chain(options.anchors.iter().map(|spec| (spec.name(), spec.clone())));
        for (b_name, b) in opponents {
            if matches.iter().any(|m| m.a == rated.name && m.b == b_name && m.budget == budget) {
                continue;
            }
            progress(&format!("{} vs {b_name}", rated.name));
            let report = play_match(&a, &b, &options.matches, &mut |_| {})?;
            matches.push(MatchRecord { a: rated.name.clone(), b: b_name, budget: budget.clone(), tally: report.tally });
            write_lines(&matches_path, &matches)?;
        }
    }

    let index = |name: &str| names.iter().position(|n| n == name);
    let pairings: Vec<Pairing> = matches
        .iter()
        .filter(|m| m.budget == budget)
        .filter_map(|m| Some(Pairing { a: index(&m.a)?, b: index(&m.b)?, tally: m.tally }))
        .collect();
    let fitted = fit_ratings(names.len(), &pairings);
    let models = options.anchors.iter().map(|_| None).chain(chosen.iter().map(Some));
    let ratings: Vec<Rating> = names
        .into_iter()
        .zip(models)
        .zip(fitted)
        .map(|((checkpoint, model), (elo, margin))| Rating {
            checkpoint,
            step: model.map(|m| m.step),
            samples_read: model.and_then(|m| m.samples_read),
            elo,
            margin,
        })
        .collect();
    write_lines(&folder.join("ratings.jsonl"), &ratings)?;
    plot_ratings(&folder.join("ratings.png"), &ratings, &budget)?;
    Ok(ratings)
}

/// The Elo a lineage gains per doubling of the samples its training read:
/// the slope of its generations' ratings against log2(samples read),
/// fitted by weighted least squares (weights 1/σ², σ = margin / 1.96), with
/// half its 95% interval. None with fewer than two generations of finite
/// rating at different compute. (The ratings come from one fit and are not
/// independent; the interval treats them as if they were.)
pub fn elo_per_doubling(ratings: &[Rating]) -> Option<(f64, f64)> {
    let points: Vec<(f64, f64, f64)> = ratings
        .iter()
        .filter(|r| r.margin.is_finite() && r.margin > 0.0)
        .filter_map(|r| Some((log_samples(r)?, r.elo, (1.96 / r.margin).powi(2))))
        .collect();
    let total: f64 = points.iter().map(|p| p.2).sum();
    let mean = |f: fn(&(f64, f64, f64)) -> f64| points.iter().map(|p| p.2 * f(p)).sum::<f64>() / total;
    let (x, y) = (mean(|p| p.0), mean(|p| p.1));
    let spread: f64 = points.iter().map(|p| p.2 * (p.0 - x).powi(2)).sum();
    if points.len() < 2 || spread <= 0.0 {
        return None;
    }
    let slope = points.iter().map(|p| p.2 * (p.0 - x) * (p.1 - y)).sum::<f64>() / spread;
    Some((slope, 1.96 / spread.sqrt()))
}

/// log2 of the samples a generation's training read; none for a run's
/// checkpoint, or a generation that read none (no place on a log axis).
fn log_samples(rating: &Rating) -> Option<f64> {
    rating.samples_read.filter(|&n| n > 0).map(|n| (n as f64).log2())
}

/// Draws the models' rating with 95% error bars, and the anchors as
/// labelled horizontal lines, as a PNG: against training step for a run's
/// checkpoints, against the samples read (log scale) for a lineage's
/// generations, with the Elo gained per doubling in the caption.
pub fn plot_ratings(path: &Path, ratings: &[Rating], budget: &str) -> Result<()> {
    use plotters::prelude::*;
    use plotters::style::{register_font, FontStyle};
    // A font compiled in, so that drawing needs nothing from the system.
    let _ = register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());

    let lineage = ratings.iter().any(|r| r.samples_read.is_some());
    let x_of = |r: &Rating| match lineage {
        true => log_samples(r).map(|x| x - 1e6f64.log2()),
        false => r.step.map(|s| s as f64),
    };
    let finite: Vec<(f64, &Rating)> =
        ratings.iter().filter(|r| r.margin.is_finite()).filter_map(|r| Some((x_of(r)?, r))).collect();
    let anchors: Vec<&Rating> = ratings.iter().filter(|r| r.step.is_none() && r.margin.is_finite()).collect();
    let y_desc = match anchors.first() {
        Some(a) => format!("Elo ({} = 0)", a.checkpoint),
        None => "Elo (first model = 0)".to_string(),
    };
    let (x_desc, caption) = match (lineage, elo_per_doubling(ratings)) {
        (false, _) => ("training step", format!("Rating by training step ({budget} per action)")),
        (true, slope) => (
            "samples read by the lineage's training (millions, log scale)",
            match slope {
                Some((elo, margin)) => format!(
                    "Rating by training compute ({budget} per action): {elo:+.0} ± {margin:.0} Elo per doubling"
                ),
                None => format!("Rating by training compute ({budget} per action)"),
            },
        ),
    };
    let (x_min, x_max) =
        finite.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| (lo.min(r.0), hi.max(r.0)));
    let (x_lo, x_hi) = match lineage {
        true if x_min.is_finite() => (x_min - 0.2, x_max + 0.2),
        _ => (0.0, x_max.max(1.0) * 1.02),
    };
    let all = || finite.iter().map(|r| r.1).chain(anchors.iter().copied());
    let lo = all().map(|r| r.elo - r.margin).fold(0.0f64, f64::min) - 20.0;
    let hi = all().map(|r| r.elo + r.margin).fold(0.0f64, f64::max) + 20.0;
    let tmp = crate::durable::temporary_path(path)?;
    {
        let root = BitMapBackend::new(&tmp, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(x_lo..x_hi, lo..hi)
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|x| match lineage {
                true => format!("{:.2}", 2f64.powf(*x)),
                false => format!("{x:.0}"),
            })
            .y_label_formatter(&|y| format!("{y:.0}"))
            .light_line_style(WHITE)
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        let grey = RGBColor(120, 120, 120);
        for anchor in &anchors {
            chart
                .draw_series(LineSeries::new([(x_lo, anchor.elo), (x_hi, anchor.elo)], grey.stroke_width(1)))
                .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    anchor.checkpoint.clone(),
                    (x_lo + (x_hi - x_lo) * 0.01, anchor.elo),
                    ("sans-serif", 13).into_font().color(&grey),
                )))
                .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        }
        let color = RGBColor(31, 119, 180);
        chart
            .draw_series(finite.iter().map(|&(step, r)| {
                ErrorBar::new_vertical(
                    step,
                    r.elo - r.margin,
                    r.elo,
                    r.elo + r.margin,
                    color.mix(0.5).stroke_width(1),
                    6,
                )
            }))
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        chart
            .draw_series(LineSeries::new(finite.iter().map(|&(step, r)| (step, r.elo)), color.stroke_width(2)))
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        chart
            .draw_series(finite.iter().map(|&(step, r)| Circle::new((step, r.elo), 3, color.filled())))
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        root.present().map_err(|e| anyhow::anyhow!("cannot write {}: {e}", tmp.display()))?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::{elo_per_doubling, spread_by_step, Rating};

    #[test]
    fn the_elo_per_doubling_is_the_weighted_slope_over_log_compute() {
        let rating = |samples_read: Option<u64>, elo: f64, margin: f64| Rating {
            checkpoint: String::new(),
            step: Some(0),
            samples_read,
            elo,
            margin,
        };
        let line = [
            rating(Some(1_000_000), 0.0, 40.0),
            rating(Some(2_000_000), 50.0, 40.0),
            rating(Some(4_000_000), 100.0, 40.0),
        ];
        let (slope, margin) = elo_per_doubling(&line).unwrap();
        assert!((slope - 50.0).abs() < 1e-9, "{slope}");
        // Var = 1 / sum w (x - mean)^2 with w = (1.96 / 40)^2 and x = 0, 1, 2.
        assert!((margin - 1.96 * (1.0 / (2.0 * (1.96f64 / 40.0).powi(2))).sqrt()).abs() < 1e-9, "{margin}");
        // A wide point pulls less: the slope stays near the narrow ones'.
        let mut bent = line.to_vec();
        bent.push(rating(Some(8_000_000), 0.0, 400.0));
        assert!(elo_per_doubling(&bent).unwrap().0 > 40.0);
        let anchor = Rating { step: None, samples_read: None, ..line[0].clone() };
        assert_eq!(elo_per_doubling(&[line[0].clone(), anchor]), None, "one generation: no slope");
        assert_eq!(elo_per_doubling(&[rating(None, 0.0, 40.0), rating(None, 9.0, 40.0)]), None, "a run: no compute");
        // A generation that read no samples has no place on a log axis: left out, never a NaN.
        let mut with_zero = line.to_vec();
        with_zero.push(rating(Some(0), 500.0, 40.0));
        let (slope, margin) = elo_per_doubling(&with_zero).unwrap();
        assert!((slope - 50.0).abs() < 1e-9 && margin.is_finite(), "{slope} ± {margin}");
    }

    #[test]
    fn checkpoints_are_spread_by_step_not_by_index() {
        // Retention: sparse early checkpoints, then the newest ones close together.
        let steps = [0, 2400, 4800, 7200, 9600, 16000, 16100, 16200, 16300, 16400, 16500, 16600, 16700];
        let chosen = |points| spread_by_step(&steps, points).into_iter().map(|i| steps[i]).collect::<Vec<_>>();
        // Targets 0, 4175, 8350, 12525, 16700.
        assert_eq!(chosen(5), [0, 4800, 7200, 9600, 16700]);
        assert_eq!(chosen(1), [16700]);
        // More points than checkpoints: each at most once.
        let many = chosen(40);
        assert!(many.windows(2).all(|w| w[0] < w[1]) && many.len() <= steps.len(), "{many:?}");
        assert!(spread_by_step(&[], 3).is_empty());
    }
}
