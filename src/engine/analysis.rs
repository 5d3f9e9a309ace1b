//! The engine protocol's `analyse` command: a query (one JSON object) asks
//! for the search's view of a position, and the reply (one JSON line) gives
//! the root's value and visits and each candidate's visits, value, prior
//! and principal variation, for notebooks, GUIs and game review.
//!
//! Query fields, all optional: `id` (any JSON, echoed), `position` (the
//! `position` command's JSON) or `variant` (its start; without either, the
//! engine's current position), `actions` (played from there first),
//! `simulations` (1 to 100,000; 400), `candidates` (1 to 50; 5).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::players::Player;
use crate::rules::{replay, Color, Position, RecordError, Setup, Variant};
use crate::search::Analysis;

/// The reply's layout version (its `version` field).
pub const ANALYSIS_VERSION: u32 = 1;

const FIELDS: [&str; 6] = ["id", "position", "variant", "actions", "simulations", "candidates"];

/// The reply to `analyse QUERY` in `current` (the engine's position), or
/// an error naming the field at fault.
pub fn answer(player: &mut dyn Player, current: &Position, query: &str) -> Result<String, String> {
    let query: Value = serde_json::from_str(query).map_err(|e| format!("the query is not JSON ({e})"))?;
    let query = query.as_object().ok_or("the query is not a JSON object")?;
    if let Some(unknown) = query.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!("unknown field `{unknown}` (fields: {})", FIELDS.join(", ")));
    }
    let pos = position(query, current)?;
    if pos.is_over() {
        return Err("the position is over: nothing to analyse".into());
    }
    let simulations = number(query, "simulations", 400, 1, crate::search::MAX_SIMULATIONS as u64)? as u32;
    let candidates = number(query, "candidates", 5, 1, 50)? as usize;
    let analysis = player.analyse(&pos, simulations, candidates).map_err(|e| e.to_string())?.ok_or(
        "this engine's player searches no tree: start it with a model (gipf engine --model CHECKPOINT, or no --player)",
    )?;
    let id = query.get("id").cloned().unwrap_or(Value::Null);
    let warning = player.trained_on().filter(|&v| v != pos.variant()).map(|trained| {
        format!(
            "the model was trained on the {trained} variant, not {}: its view of this position is a guess",
            pos.variant()
        )
    });
    let reply = Reply { version: ANALYSIS_VERSION, id, to_act: pos.to_act(), warning, analysis };
    Ok(serde_json::to_string(&reply).expect("an analysis serializes"))
}

/// The reply line: the analysis, with the query's id and the player to act.
#[derive(Serialize)]
struct Reply {
    version: u32,
    id: Value,
    to_act: Option<Color>,
    /// Present when the position is of another variant than the model's.
    #[serde(skip_serializing_if = "Option::is_none")]
    warning: Option<String>,
    #[serde(flatten)]
    analysis: Analysis,
}

/// The position the query names, its `actions` played.
fn position(query: &Map<String, Value>, current: &Position) -> Result<Position, String> {
    let start = match (query.get("position"), query.get("variant")) {
        (Some(_), Some(_)) => return Err("give `position` or `variant`, not both".into()),
        (Some(setup), None) => Setup::from_json(&setup.to_string())
            .and_then(|s| s.to_position())
            .map_err(|e| format!("field `position`: {e}"))?,
        (None, Some(variant)) => {
            let name = variant.as_str().ok_or("field `variant`: not a string")?;
            Position::new(name.parse::<Variant>().map_err(|e| format!("field `variant`: {e}"))?)
        }
        (None, None) => *current,
    };
    let actions = match query.get("actions") {
        None => return Ok(start),
        Some(Value::Array(actions)) => actions,
        Some(_) => return Err("field `actions`: not a list of actions".into()),
    };
    let mut parsed = Vec::with_capacity(actions.len());
    for (i, action) in actions.iter().enumerate() {
        let text = action.as_str().ok_or(format!("field `actions`: entry {} is not a string", i + 1))?;
        parsed.push(text.parse().map_err(|e| format!("field `actions`: action {} ({text}): {e}", i + 1))?);
    }
    replay(start, &parsed).map_err(|e| match e {
        RecordError::Illegal { number, action, reason } => {
            format!("field `actions`: action {number} ({action}): {reason}")
        }
        other => format!("field `actions`: {other}"),
    })
}

/// The whole number in field `name`, within `min..=max`, or `default`.
fn number(query: &Map<String, Value>, name: &str, default: u64, min: u64, max: u64) -> Result<u64, String> {
    match query.get(name) {
        None => Ok(default),
        Some(value) => value
            .as_u64()
            .filter(|n| (min..=max).contains(n))
            .ok_or(format!("field `{name}`: {value} is not a whole number in {min}..={max}")),
    }
}
