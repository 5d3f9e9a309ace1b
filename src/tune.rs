//! Texel-style tuning of the `classic` player's evaluation: the features of
//! every position waiting for a push in a folder of game records, and a
//! logistic fit of the pusher's result to them (Newton's method with a
//! little ridge), so that a weight is in hundredths of a logit.

use std::path::Path;

use anyhow::{ensure, Result};

use crate::games::GameFile;
use crate::players::alphabeta::classic::{features, FEATURES, FEATURE_NAMES};
use crate::rules::{replay_with, Phase, Position};

/// One game in this many is held out of the fit, to check it.
const HELD_OUT_EVERY: usize = 10;
/// The ridge: how strongly weights are pulled toward 0 (per position).
const RIDGE: f64 = 1e-4;
const NEWTON_STEPS: usize = 25;

/// Positions' features and the pusher's result (1 won, 0 lost, 0.5 drawn).
#[derive(Default)]
pub struct Dataset {
    /// Each position's features, in [`FEATURE_NAMES`]' order.
    pub features: Vec<[f64; FEATURES]>,
    /// The pusher's result in each position: 1 won, 0 lost, 0.5 drawn.
    pub results: Vec<f64>,
}

impl Dataset {
    /// The positions held.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    /// Whether it holds no position.
    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    /// Adds every position of `game` that waits for a push.
    fn add_game(&mut self, game: &GameFile) -> Result<()> {
        replay_with(Position::new(game.variant), &game.actions, |pos| {
            if pos.phase() == Phase::Push {
                self.features.push(features(pos).map(f64::from));
                self.results.push((game.result.value_for(pos.to_move()) as f64 + 1.0) / 2.0);
            }
        })?;
        Ok(())
    }
}

/// What a folder of game records gives: the fit's positions, the held-out
/// ones, the games read and the unreadable ones skipped (with a warning).
pub struct Collected {
    /// The positions the weights are fitted to.
    pub fit: Dataset,
    /// The positions of one game in ten, held out to check the fit.
    pub held_out: Dataset,
    /// Games read.
    pub games: usize,
    /// Files and games that could not be read, skipped.
    pub skipped: usize,
}

/// Reads every game in `dir` (shards or game files).
pub fn collect(dir: &Path) -> Result<Collected> {
    let mut out = Collected { fit: Dataset::default(), held_out: Dataset::default(), games: 0, skipped: 0 };
    for file in crate::shards::list(dir)? {
        let read = match crate::shards::read(&file) {
            Ok(read) => read,
            Err(e) => {
                tracing::warn!("skipped {}: {:#}", file.path.display(), anyhow::Error::new(e));
                out.skipped += 1;
                continue;
            }
        };
        for bad in &read.bad {
            tracing::warn!("skipped a game: {bad}");
        }
        out.skipped += read.bad.len();
        for game in &read.games {
            let set = if out.games.is_multiple_of(HELD_OUT_EVERY) { &mut out.held_out } else { &mut out.fit };
            set.add_game(game)?;
            out.games += 1;
        }
    }
    ensure!(!out.fit.is_empty() && !out.held_out.is_empty(), "too few games in {} to fit and check", dir.display());
    Ok(out)
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn dot(a: &[f64; FEATURES], b: &[f64; FEATURES]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The weights (in logits) that maximise the likelihood of the results,
/// less the ridge.
pub fn fit(data: &Dataset) -> [f64; FEATURES] {
    let ridge = RIDGE * data.len() as f64;
    let mut w = [0.0; FEATURES];
    for _ in 0..NEWTON_STEPS {
        let mut gradient = w.map(|x| ridge * x);
        let mut hessian = [[0.0; FEATURES]; FEATURES];
        for (i, row) in hessian.iter_mut().enumerate() {
            row[i] = ridge;
        }
        for (x, &y) in data.features.iter().zip(&data.results) {
            let p = sigmoid(dot(x, &w));
            for i in 0..FEATURES {
                gradient[i] += (p - y) * x[i];
                for j in 0..FEATURES {
                    hessian[i][j] += p * (1.0 - p) * x[i] * x[j];
                }
            }
        }
        let step = solve(hessian, gradient);
        w.iter_mut().zip(step).for_each(|(w, s)| *w -= s);
    }
    w
}

/// Solves `a x = b` by Gaussian elimination with partial pivoting (`a` is
/// positive definite here: the ridge sees to it).
fn solve(mut a: [[f64; FEATURES]; FEATURES], mut b: [f64; FEATURES]) -> [f64; FEATURES] {
    for col in 0..FEATURES {
        let pivot = (col..FEATURES).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).unwrap_or(col);
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col];
        for row in col + 1..FEATURES {
            let factor = a[row][col] / pivot_row[col];
            a[row][col..].iter_mut().zip(&pivot_row[col..]).for_each(|(x, p)| *x -= factor * p);
            b[row] -= factor * b[col];
        }
    }
    let mut x = [0.0; FEATURES];
    for row in (0..FEATURES).rev() {
        let rest: f64 = (row + 1..FEATURES).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    x
}

/// Mean log loss and the share of decided results predicted on the right side of 50%.
pub fn quality(data: &Dataset, w: &[f64; FEATURES]) -> (f64, f64) {
    let (mut loss, mut right, mut decided) = (0.0, 0, 0);
    for (x, &y) in data.features.iter().zip(&data.results) {
        let p = sigmoid(dot(x, w)).clamp(1e-12, 1.0 - 1e-12);
        loss -= y * p.ln() + (1.0 - y) * (1.0 - p).ln();
        if y != 0.5 {
            decided += 1;
            right += ((p > 0.5) == (y > 0.5)) as usize;
        }
    }
    (loss / data.len() as f64, right as f64 / decided.max(1) as f64)
}

/// Logit weights as the evaluation's integers (hundredths of a logit).
pub fn as_hundredths(w: &[f64; FEATURES]) -> [i32; FEATURES] {
    w.map(|x| (100.0 * x).round() as i32)
}

/// The Rust source of `core/src/players/alphabeta/classic/weights.rs` for `weights`.
pub fn weights_source(weights: &[i32; FEATURES], provenance: &str) -> String {
    let width = weights.iter().map(|w| format!("{w},").len()).max().unwrap_or(0);
    let lines: String = weights
        .iter()
        .zip(FEATURE_NAMES)
        .map(|(w, name)| format!("    {:<width$} // {name}\n", format!("{w},")))
        .collect();
    format!(
        "//! The classic evaluation's weights, one per feature, in hundredths of a\n\
         //! logit. Written by `scripts/tune-classic.sh` ({provenance}).\n\n\
         use super::FEATURES;\n\n\
         pub const WEIGHTS: [i32; FEATURES] = [\n{lines}];\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder of random games: read (every position waiting for a push,
    /// a tenth of the games held out), fitted, and written as the weights'
    /// source, whose numbers are the fitted ones in order.
    #[test]
    fn a_games_folder_is_read_fitted_and_written() {
        let dir = tempfile::tempdir().unwrap();
        let (games, _) =
            crate::bench::synthetic_games(dir.path(), crate::rules::Variant::Standard, 4000, 8, 1).unwrap();
        let data = collect(dir.path()).unwrap();
        assert_eq!((data.games as u64, data.skipped), (games, 0));
        assert!(
            data.held_out.len() * 4 < data.fit.len(),
            "{} held out, {} fitted",
            data.held_out.len(),
            data.fit.len()
        );
        let weights = as_hundredths(&fit(&data.fit));
        let source = weights_source(&weights, "a test");
        let numbers: Vec<i32> = source.lines().filter_map(|line| line.trim().split(',').next()?.parse().ok()).collect();
        assert_eq!(numbers, weights);
        assert!(source.contains("(a test)"));
    }

    /// Results drawn from known weights are fitted back to them.
    #[test]
    fn the_fit_recovers_known_weights() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(5);
        let truth: [f64; FEATURES] = std::array::from_fn(|i| (i as f64 - 7.0) / 10.0);
        let mut data = Dataset::default();
        for _ in 0..20_000 {
            let mut x: [f64; FEATURES] = std::array::from_fn(|_| rng.random_range(-2..=2) as f64);
            x[0] = 1.0;
            let y = (rng.random::<f64>() < sigmoid(dot(&x, &truth))) as u8 as f64;
            data.features.push(x);
            data.results.push(y);
        }
        let w = fit(&data);
        for (i, (w, t)) in w.iter().zip(truth).enumerate() {
            assert!((w - t).abs() < 0.08, "feature {i}: fitted {w:.3}, true {t:.3}");
        }
        let (loss, _) = quality(&data, &w);
        let (zero_loss, _) = quality(&data, &[0.0; FEATURES]);
        assert!(loss < zero_loss, "{loss} < {zero_loss}");
    }
}
