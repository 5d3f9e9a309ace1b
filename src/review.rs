//! Game review: a finished game analysed decision by decision with a
//! player's search (`gipf analyse`): the value before each decision and
//! after it, the search's own choice, how much the played action lost
//! against that choice, and the largest losses marked as mistakes.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::players::Player;
use crate::rules::{replay_with, Action, Color, Position, RecordError, Variant};

/// The reviews' layout version (their `version` field).
pub const REVIEW_VERSION: u32 = 1;

/// How many of the largest losses are marked, and the least loss marked.
const MISTAKES: usize = 3;
const MISTAKE_LOSS: f32 = 0.2;

/// One decision of the game, as the search saw it. Values are for the
/// player who decided, in [-1, 1].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// 1 for the game's first decision.
    pub number: usize,
    /// The colour that decided.
    pub player: Color,
    /// The action played, in the move notation.
    pub played: String,
    /// The search's most visited action.
    pub choice: String,
    /// The position's value before the decision.
    pub before: f32,
    /// The value after the played action (the game's result once it is over).
    pub after: f32,
    /// The choice's value less `after`, at least 0.
    pub loss: f32,
    /// Whether the loss is one of the game's three largest and at least 0.2.
    pub mistake: bool,
}

/// A reviewed game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Review {
    /// The layout version, [`REVIEW_VERSION`].
    pub version: u32,
    /// The variant played.
    pub variant: Variant,
    /// The search's simulations for each decision.
    pub simulations: u32,
    /// Every decision of the game, in order.
    pub decisions: Vec<Decision>,
    /// The winner, when the game is over.
    pub winner: Option<Color>,
}

/// The positions of a record: `start`, then after each action. An illegal
/// action is an error naming its decision's number.
fn positions(start: Position, actions: &[Action]) -> Result<Vec<Position>> {
    let mut positions = vec![start];
    match replay_with(start, actions, |pos| positions.push(*pos)) {
        Err(RecordError::Illegal { number, action, reason }) => anyhow::bail!("decision {number} ({action}): {reason}"),
        other => other?,
    };
    Ok(positions)
}

/// Reviews the game of `actions` from `start` with `simulations` per
/// decision; `progress` is told of each position analysed.
pub fn review(
    player: &mut dyn Player,
    start: Position,
    actions: &[Action],
    simulations: u32,
    progress: &mut dyn FnMut(),
) -> Result<Review> {
    // Before any search: an illegal action is refused at once.
    let positions = positions(start, actions)?;
    // Each position's value for its player to act, and the search's choice with its value.
    let mut views = Vec::with_capacity(positions.len());
    for pos in &positions {
        views.push(match pos.to_act() {
            Some(_) => {
                let analysis = player.analyse(pos, simulations, 1)?.context("this player searches no tree")?;
                let best = analysis.candidates.first().context("a position not over has an action")?;
                Some((analysis.value, best.action.clone(), best.value.unwrap_or(analysis.value)))
            }
            None => None,
        });
        progress();
    }
    let mut decisions = Vec::with_capacity(actions.len());
    for (i, action) in actions.iter().enumerate() {
        let player = positions[i].to_act().expect("an action was played");
        let (before, choice, choice_value) = views[i].clone().expect("a position to act in");
        let after = value_for(player, &positions[i + 1], views[i + 1].as_ref().map(|v| v.0));
        let loss = (choice_value - after).max(0.0);
        let (number, played) = (i + 1, action.to_string());
        decisions.push(Decision { number, player, played, choice, before, after, loss, mistake: false });
    }
    let mut by_loss: Vec<usize> = (0..decisions.len()).filter(|&i| decisions[i].loss >= MISTAKE_LOSS).collect();
    by_loss.sort_by(|&a, &b| decisions[b].loss.total_cmp(&decisions[a].loss));
    for &i in by_loss.iter().take(MISTAKES) {
        decisions[i].mistake = true;
    }
    let winner = positions.last().and_then(|p| p.outcome()).map(|o| o.winner);
    Ok(Review { version: REVIEW_VERSION, variant: start.variant(), simulations, decisions, winner })
}

/// The value of `pos` for `player`: the result once it is over, else the
/// value of its player to act (`value`), turned to `player`'s view.
fn value_for(player: Color, pos: &Position, value: Option<f32>) -> f32 {
    match (pos.outcome(), pos.to_act(), value) {
        (Some(outcome), _, _) => {
            if outcome.winner == player {
                1.0
            } else {
                -1.0
            }
        }
        (None, Some(to_act), Some(value)) if to_act == player => value,
        (None, _, Some(value)) => -value,
        (None, _, None) => 0.0,
    }
}

impl Review {
    /// The report: a line per decision, the mistakes marked.
    pub fn text(&self) -> String {
        let mut out = format!("{} decisions, {} simulations each\n", self.decisions.len(), self.simulations);
        out.push_str("   #  player  played            choice            before   after    loss\n");
        for d in &self.decisions {
            let mark = if d.mistake { "  <- mistake" } else { "" };
            out.push_str(&format!(
                "{:>4}  {:<6}  {:<16}  {:<16}  {:+.3}  {:+.3}  {:.3}{mark}\n",
                d.number,
                format!("{:?}", d.player).to_lowercase(),
                d.played,
                d.choice,
                d.before,
                d.after,
                d.loss
            ));
        }
        match self.winner {
            Some(winner) => out.push_str(&format!("{winner:?} won\n").to_lowercase()),
            None => out.push_str("the game is not over\n"),
        }
        out
    }

    /// White's value before each decision, and the game's result at the end.
    pub fn white_values(&self) -> Vec<f32> {
        let white = |player: Color, value: f32| if player == Color::White { value } else { -value };
        let mut values: Vec<f32> = self.decisions.iter().map(|d| white(d.player, d.before)).collect();
        if let Some(last) = self.decisions.last() {
            values.push(white(last.player, last.after));
        }
        values
    }

    /// The value over the game for White, as a PNG, mistakes marked.
    pub fn plot(&self, path: &Path) -> Result<()> {
        use plotters::prelude::*;
        use plotters::style::{register_font, FontStyle};
        let _ = register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular());
        let plot_error = |e: &dyn std::fmt::Display| anyhow::anyhow!("plot {}: {e}", path.display());
        let values = self.white_values();
        let root = BitMapBackend::new(path, (900, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot_error(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption("White's value by decision", ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..(values.len().max(2) - 1) as f64, -1.05..1.05)
            .map_err(|e| plot_error(&e))?;
        chart
            .configure_mesh()
            .x_desc("decision")
            .y_desc("value for White")
            .x_label_formatter(&|x| format!("{x:.0}"))
            // Rounded before printing, so that a value just below 0 reads 0.0.
            .y_label_formatter(&|y: &f64| format!("{:.1}", (y * 10.0).round() / 10.0 + 0.0))
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(|e| plot_error(&e))?;
        let line = values.iter().enumerate().map(|(i, &v)| (i as f64, v as f64));
        chart.draw_series(LineSeries::new(line, RGBColor(31, 119, 180).stroke_width(2))).map_err(|e| plot_error(&e))?;
        let mistakes = self.decisions.iter().filter(|d| d.mistake).map(|d| (d.number as f64, values[d.number] as f64));
        chart
            .draw_series(mistakes.map(|point| Circle::new(point, 5, RGBColor(214, 39, 40).filled())))
            .map_err(|e| plot_error(&e))?;
        root.present().map_err(|e| plot_error(&e))
    }
}
