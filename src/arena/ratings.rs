//! Ratings of a run's checkpoints: each rated checkpoint plays the few rated
//! before it, and each fixed anchor (a baseline such as `alphabeta:2`) when
//! anchors are given; every match is kept in `arena/matches.jsonl`, the ratings
//! fitted to all of them (Bradley-Terry; the first anchor, or else step 0, at
//! 0 Elo) go to `arena/ratings.jsonl`, and a plot of rating against training
//! step to `arena/ratings.png`, the anchors drawn as horizontal lines. Matches already played are not played again, so an
//! interrupted rating resumes, and a longer run adds only its new checkpoints.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::stats::{fit_ratings, Pairing, Tally};
use super::{play_match, MatchOptions};
use crate::durable::write_atomic;
use crate::players::{Budget, PlayerSpec};

/// One match between two checkpoints of the run (names are file stems).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchRecord {
    pub a: String,
    pub b: String,
    /// The search budget both played with, e.g. "64 sims".
    pub budget: String,
    pub tally: Tally,
}

/// A checkpoint's rating, or an anchor's (without a step).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    pub checkpoint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
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
    pub selection: Selection,
    /// Each rated checkpoint plays this many of the rated ones before it.
    pub opponents: usize,
    /// Fixed players every rated checkpoint plays; the first is the 0 of the scale.
    pub anchors: Vec<PlayerSpec>,
    pub budget: Budget,
    pub matches: MatchOptions,
}

/// The run's checkpoints in step order: (stem, step, weights path).
fn checkpoints(models: &Path) -> Result<Vec<(String, u64, PathBuf)>> {
    let mut found = Vec::new();
    let entries = std::fs::read_dir(models).with_context(|| format!("cannot list {}", models.display()))?;
    for entry in entries {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        let Some(stem) = name.strip_suffix(".safetensors") else { continue };
        if let Some(step) = stem.strip_prefix("step-").and_then(|s| s.parse::<u64>().ok()) {
            found.push((stem.to_string(), step, path));
        }
    }
    found.sort_by_key(|c| c.1);
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
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).with_context(|| format!("{} line {}: not a match record", path.display(), i + 1))
        })
        .collect()
}

pub(crate) fn write_lines<T: Serialize>(path: &Path, items: &[T]) -> Result<()> {
    let mut text = String::new();
    for item in items {
        text.push_str(&serde_json::to_string(item)?);
        text.push('\n');
    }
    write_atomic(path, text.as_bytes())
}

/// Plays the missing matches among the run's checkpoints, then fits, writes
/// and plots the ratings. `progress` hears of each match as it starts.
pub fn rate_run(run: &Path, options: &RatingOptions, progress: &mut dyn FnMut(&str)) -> Result<Vec<Rating>> {
    let all = checkpoints(&run.join("models"))?;
    anyhow::ensure!(!all.is_empty(), "no checkpoints in {}", run.join("models").display());
    let chosen: Vec<_> = match options.selection {
        Selection::Points(points) => {
            let steps: Vec<u64> = all.iter().map(|c| c.1).collect();
            spread_by_step(&steps, points).into_iter().map(|i| &all[i]).collect()
        }
        Selection::Every(every) => {
            let every = every.max(1);
            all.iter().enumerate().filter(|(i, _)| i % every == 0 || *i == all.len() - 1).map(|(_, c)| c).collect()
        }
    };
    let folder = run.join("arena");
    std::fs::create_dir_all(&folder).with_context(|| format!("cannot create {}", folder.display()))?;
    let matches_path = folder.join("matches.jsonl");
    let mut matches = read_matches(&matches_path)?;
    let budget = options.budget.to_string();

    // Players of the fit: the anchors first (the first one is the 0), then the checkpoints.
    let names: Vec<String> =
        options.anchors.iter().map(PlayerSpec::name).chain(chosen.iter().map(|c| c.0.clone())).collect();
    for (i, (a_name, _, a_path)) in chosen.iter().enumerate() {
        let a = PlayerSpec::network(a_path.clone(), options.budget, None);
        let earlier = chosen[i.saturating_sub(options.opponents)..i].iter().rev();
        let opponents = earlier
            .map(|(name, _, path)| (name.clone(), PlayerSpec::network(path.clone(), options.budget, None)))
            .chain(options.anchors.iter().map(|spec| (spec.name(), spec.clone())));
        for (b_name, b) in opponents {
            if matches.iter().any(|m| &m.a == a_name && m.b == b_name && m.budget == budget) {
                continue;
            }
            progress(&format!("{a_name} vs {b_name}"));
            let report = play_match(&a, &b, &options.matches, &mut |_| {})?;
            matches.push(MatchRecord { a: a_name.clone(), b: b_name, budget: budget.clone(), tally: report.tally });
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
    let steps = options.anchors.iter().map(|_| None).chain(chosen.iter().map(|c| Some(c.1)));
    let ratings: Vec<Rating> = names
        .into_iter()
        .zip(steps)
        .zip(fitted)
        .map(|((checkpoint, step), (elo, margin))| Rating { checkpoint, step, elo, margin })
        .collect();
    write_lines(&folder.join("ratings.jsonl"), &ratings)?;
    plot_ratings(&folder.join("ratings.png"), &ratings, &budget)?;
    Ok(ratings)
}

/// Draws the checkpoints' rating against training step, with 95% error
/// bars, and the anchors as labelled horizontal lines, as a PNG.
pub fn plot_ratings(path: &Path, ratings: &[Rating], budget: &str) -> Result<()> {
    use plotters::prelude::*;
    use plotters::style::{register_font, FontStyle};
    // A font compiled in, so that drawing needs nothing from the system.
    let _ = register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());

    let finite: Vec<(f64, &Rating)> =
        ratings.iter().filter(|r| r.margin.is_finite()).filter_map(|r| Some((r.step? as f64, r))).collect();
    let anchors: Vec<&Rating> = ratings.iter().filter(|r| r.step.is_none() && r.margin.is_finite()).collect();
    let y_desc = match anchors.first() {
        Some(a) => format!("Elo ({} = 0)", a.checkpoint),
        None => "Elo (first checkpoint = 0)".to_string(),
    };
    let max_step = finite.iter().map(|r| r.0).fold(1.0, f64::max);
    let all = || finite.iter().map(|r| r.1).chain(anchors.iter().copied());
    let lo = all().map(|r| r.elo - r.margin).fold(0.0f64, f64::min) - 20.0;
    let hi = all().map(|r| r.elo + r.margin).fold(0.0f64, f64::max) + 20.0;
    let tmp = crate::durable::temporary_path(path)?;
    {
        let root = BitMapBackend::new(&tmp, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("Rating by training step ({budget} per action)"), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(0.0..max_step * 1.02, lo..hi)
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        chart
            .configure_mesh()
            .x_desc("training step")
            .y_desc(y_desc)
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .light_line_style(WHITE)
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
        let grey = RGBColor(120, 120, 120);
        for anchor in &anchors {
            chart
                .draw_series(LineSeries::new([(0.0, anchor.elo), (max_step * 1.02, anchor.elo)], grey.stroke_width(1)))
                .map_err(|e| anyhow::anyhow!("plot: {e}"))?;
            chart
                .draw_series(std::iter::once(Text::new(
                    anchor.checkpoint.clone(),
                    (max_step * 0.01, anchor.elo),
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
    use super::spread_by_step;

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
