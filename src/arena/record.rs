//! A match played in pieces: `gipf arena --record FILE` keeps each piece's
//! tally with what makes it the same match (the players, their weights, the
//! precision of their forward passes, the machine, the openings' length),
//! and sums every piece of that match, so that a measurement too long for
//! one quiet hour adds up over several. Each piece plays its own seed's
//! openings.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};
use tch::Device;

use super::ratings::{read_checked_lines, write_lines};
use super::Tally;
use crate::durable::sha256_of_file;
use crate::net::{kind_name, Inference};
use crate::players::{Budget, PlayerSpec};
use crate::rules::Variant;
use crate::search::SearchConfig;

/// A player as a record names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedPlayer {
    /// The spec's name, its budget included.
    pub name: String,
    /// A network's weights: the start of their sha256 (16 hex digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<String>,
    /// A network's forward passes: fp32, bf16 or fp16.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
    /// How a network's forward pass ran ([`crate::net::Backend::forward_name`]); none
    /// in pieces recorded before it was named (the folded layers, NCHW).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward: Option<String>,
    /// The config's search settings that a network plays with and its name
    /// does not say, where they differ from the defaults ("c_puct 2.5").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<String>,
}

impl RecordedPlayer {
    /// How `spec` plays on `device`, with the match's precision, backend and
    /// search settings where it names none.
    pub fn of(
        spec: &PlayerSpec,
        device: Device,
        inference: Inference,
        search: &SearchConfig,
    ) -> Result<RecordedPlayer> {
        let mut player =
            RecordedPlayer { name: spec.name(), weights: None, precision: None, forward: None, search: None };
        if let PlayerSpec::Network { weights, .. } = spec {
            let (kind, backend) = spec.inference(inference).resolve(device)?;
            player.weights = Some(sha256_of_file(weights)?[..16].to_string());
            player.precision = Some(kind_name(kind).to_string());
            player.forward = Some(backend.forward_name().to_string());
            player.search = unnamed_settings(spec, search);
        }
        Ok(player)
    }

    /// Whether the two play alike: a network by its weights, precision,
    /// forward pass and play settings (its name past the file's stem, so the
    /// same weights kept under two names are one player), any other player
    /// by its name.
    fn same_as(&self, other: &RecordedPlayer) -> bool {
        match (&self.weights, &other.weights) {
            (Some(mine), Some(theirs)) => {
                mine == theirs
                    && self.precision == other.precision
                    && self.forward == other.forward
                    && self.search == other.search
                    && settings(&self.name) == settings(&other.name)
            }
            (None, None) => self.name == other.name,
            _ => false,
        }
    }
}

/// A network player's settings in its name: "(250 ms)" of "reference (250 ms)".
fn settings(name: &str) -> &str {
    name.rfind(" (").map_or(name, |at| &name[at..])
}

/// The settings of `search` a network `spec` plays with that differ from
/// the defaults (cpu.toml's) and that the spec does not set itself, every
/// key of [`SearchConfig`] as it serializes.
fn unnamed_settings(spec: &PlayerSpec, search: &SearchConfig) -> Option<String> {
    let PlayerSpec::Network { budget, batch, policy_temperature, .. } = spec else { return None };
    let named = |key: &str| match key {
        "policy_temperature" => policy_temperature.is_some(),
        // At a time per action the batch changes how fast, which the time measures.
        "batch_size" => batch.is_some() || !matches!(budget, Budget::Simulations(_)),
        _ => false,
    };
    let as_map = |config: &SearchConfig| match serde_json::to_value(config) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => unreachable!("SearchConfig serializes as a map"),
    };
    let (mine, default) = (as_map(search), as_map(&SearchConfig::default()));
    let settings: Vec<String> = mine
        .iter()
        .filter(|(key, value)| !named(key) && default.get(*key) != Some(*value))
        .map(|(key, value)| match value.as_f64() {
            // The float settings are f32s, widened as they serialize.
            Some(x) if value.is_f64() => format!("{key} {}", x as f32),
            _ => format!("{key} {value}"),
        })
        .collect();
    (!settings.is_empty()).then(|| settings.join(", "))
}

/// One piece of a match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchPiece {
    /// The first player, from whose side the tally counts.
    pub a: RecordedPlayer,
    /// The second player.
    pub b: RecordedPlayer,
    /// The CPU it ran on, as `net::machine_name` says.
    pub machine: String,
    /// The random actions opening each pair of games.
    pub opening: u32,
    /// The game played, and its length cap; pieces recorded before they were
    /// named played the standard game with the shipped cap of 600 actions.
    #[serde(default = "standard")]
    pub variant: Variant,
    /// The length cap: a game reaching this many actions is a draw.
    #[serde(default = "shipped_max_actions")]
    pub max_actions: u32,
    /// The seed of this piece's openings (each piece plays its own).
    pub seed: u64,
    /// The piece's results, from `a`'s side.
    pub tally: Tally,
}

fn standard() -> Variant {
    Variant::Standard
}

fn shipped_max_actions() -> u32 {
    600
}

impl MatchPiece {
    fn same_match(&self, other: &MatchPiece) -> bool {
        self.a.same_as(&other.a)
            && self.b.same_as(&other.b)
            && self.machine == other.machine
            && self.opening == other.opening
            && self.variant == other.variant
            && self.max_actions == other.max_actions
    }
}

/// The pieces recorded in `path` (none when it does not exist yet).
pub fn read_pieces(path: &Path) -> Result<Vec<MatchPiece>> {
    read_checked_lines(path, "a match piece", |p: &MatchPiece| p.tally.check())
}

/// The seed for the next piece of the match `piece` (its tally aside): one
/// past the highest recorded, or 1.
pub fn next_seed(pieces: &[MatchPiece], piece: &MatchPiece) -> u64 {
    pieces.iter().filter(|p| p.same_match(piece)).map(|p| p.seed + 1).max().unwrap_or(1)
}

/// Whether `seed` is free for the match `piece`: a seed played again would
/// replay the same openings, and its games would not be new evidence.
pub fn check_seed_free(pieces: &[MatchPiece], piece: &MatchPiece, path: &Path) -> Result<()> {
    let used = pieces.iter().any(|p| p.same_match(piece) && p.seed == piece.seed);
    anyhow::ensure!(
        !used,
        "{}: seed {} of this match is recorded already (leave --seed out to take the next free one, {})",
        path.display(),
        piece.seed,
        next_seed(pieces, piece)
    );
    Ok(())
}

/// Adds `piece` to `path` (rewritten whole: temporary name, sync, rename)
/// and returns every piece of its match, `piece` last.
pub fn record(path: &Path, piece: MatchPiece) -> Result<Vec<MatchPiece>> {
    let mut pieces = read_pieces(path)?;
    check_seed_free(&pieces, &piece, path)?;
    pieces.push(piece.clone());
    write_lines(path, &pieces)?;
    Ok(pieces.into_iter().filter(|p| p.same_match(&piece)).collect())
}

/// The tally of all `pieces` together.
pub fn total(pieces: &[MatchPiece]) -> Tally {
    pieces.iter().fold(Tally::default(), |sum, p| sum.plus(&p.tally))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(name: &str, weights: Option<&str>) -> RecordedPlayer {
        RecordedPlayer {
            name: name.into(),
            weights: weights.map(Into::into),
            precision: weights.map(|_| "fp32".into()),
            forward: weights.map(|_| crate::net::FORWARD.into()),
            search: None,
        }
    }

    fn piece(weights: &str, seed: u64, wins: u32) -> MatchPiece {
        MatchPiece {
            a: player("reference (250 ms)", Some(weights)),
            b: player("classic:250ms", None),
            machine: "AMD EPYC (2 cores)".into(),
            opening: 4,
            variant: Variant::Standard,
            max_actions: 600,
            seed,
            tally: Tally { wins, losses: 20 - wins, draws: 0 },
        }
    }

    #[test]
    fn pieces_of_one_match_add_up_and_others_stay_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target.jsonl");
        record(&path, piece("aaaa", 1, 12)).unwrap();
        record(&path, piece("bbbb", 1, 3)).unwrap();
        let mine = record(&path, piece("aaaa", 2, 9)).unwrap();
        assert_eq!(mine.iter().map(|p| p.seed).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(total(&mine), Tally { wins: 21, losses: 19, draws: 0 });
        assert_eq!(read_pieces(&path).unwrap().len(), 3);
        let on_another_machine =
            MatchPiece { machine: "Intel Xeon (2 cores, bf16 units)".into(), ..piece("aaaa", 1, 1) };
        assert_eq!(record(&path, on_another_machine).unwrap().len(), 1);
        let basic = MatchPiece { variant: Variant::Basic, ..piece("aaaa", 1, 1) };
        assert_eq!(record(&path, basic).unwrap().len(), 1, "another game is another match");
        let capped = MatchPiece { max_actions: 300, ..piece("aaaa", 1, 1) };
        assert_eq!(record(&path, capped).unwrap().len(), 1, "another length cap is another match");
        // A piece recorded before the game was named played the standard game at the shipped cap.
        let mut old = serde_json::to_value(piece("aaaa", 3, 10)).unwrap();
        let fields = old.as_object_mut().unwrap();
        fields.remove("variant");
        fields.remove("max_actions");
        std::fs::write(&path, format!("{}{old}\n", std::fs::read_to_string(&path).unwrap())).unwrap();
        assert_eq!(record(&path, piece("aaaa", 4, 10)).unwrap().len(), 4);
    }

    #[test]
    fn the_same_weights_under_another_name_are_the_same_player() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target.jsonl");
        record(&path, piece("aaaa", 1, 12)).unwrap();
        let renamed = |name: &str, seed| {
            let mut p = piece("aaaa", seed, 9);
            p.a.name = name.into();
            p
        };
        assert_eq!(record(&path, renamed("step-44091-ed2071a5 (250 ms)", 2)).unwrap().len(), 2);
        let error = record(&path, renamed("tip (250 ms)", 1)).unwrap_err().to_string();
        assert!(error.contains("seed 1"), "{error}");
        assert_eq!(record(&path, renamed("reference (400 simulations)", 1)).unwrap().len(), 1, "another budget");
    }

    /// A faster forward pass is a stronger player at a time per action:
    /// pieces played before it (recorded without a forward) and after it
    /// are two matches.
    #[test]
    fn a_network_s_forward_pass_is_part_of_the_player() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target.jsonl");
        let mut before = piece("aaaa", 1, 12);
        before.a.forward = None;
        record(&path, before).unwrap();
        assert!(!std::fs::read_to_string(&path).unwrap().contains("forward"), "older lines read as they were");
        assert_eq!(record(&path, piece("aaaa", 1, 9)).unwrap().len(), 1, "a match of its own");
        assert_eq!(record(&path, piece("aaaa", 2, 9)).unwrap().len(), 2);
        assert_eq!(read_pieces(&path).unwrap()[1].a.forward.as_deref(), Some(crate::net::FORWARD));
    }

    /// A network's search settings from the config are part of the player
    /// where its name does not say them; the defaults are recorded as before.
    #[test]
    fn search_settings_from_the_config_are_part_of_the_player() {
        let weights = tempfile::NamedTempFile::new().unwrap();
        let timed =
            PlayerSpec::parse(&format!("{}@250ms", weights.path().display()), Budget::Simulations(400)).unwrap();
        let of = |spec: &PlayerSpec, search: &SearchConfig| {
            RecordedPlayer::of(spec, Device::Cpu, Inference::FP32_LIBTORCH, search).unwrap()
        };
        let default = SearchConfig::default();
        assert_eq!(of(&timed, &default).search, None);
        let wider = SearchConfig { c_puct: 2.5, policy_temperature: 1.4, batch_size: 8, ..default };
        assert_eq!(of(&timed, &wider).search.as_deref(), Some("c_puct 2.5, policy_temperature 1.4"));
        assert!(!of(&timed, &wider).same_as(&of(&timed, &default)));
        let named = PlayerSpec::parse(
            &format!("{}@400,policy_temperature=2", weights.path().display()),
            Budget::Simulations(400),
        )
        .unwrap();
        assert_eq!(of(&named, &wider).search.as_deref(), Some("batch_size 8, c_puct 2.5"), "the name says T");
        let classic = PlayerSpec::parse("classic:250ms", Budget::Simulations(400)).unwrap();
        assert_eq!(of(&classic, &wider).search, None);
    }

    /// A key added to `[search]` is part of the player without a list to
    /// remember: each setting changed alone shows up under its key.
    #[test]
    fn every_search_setting_is_part_of_the_player() {
        let weights = tempfile::NamedTempFile::new().unwrap();
        let spec = PlayerSpec::parse(&format!("{}@400", weights.path().display()), Budget::Simulations(400)).unwrap();
        let default = serde_json::to_value(SearchConfig::default()).unwrap();
        for (key, value) in default.as_object().unwrap() {
            let changed = match value {
                serde_json::Value::Bool(on) => serde_json::Value::Bool(!on),
                serde_json::Value::Number(n) if n.is_u64() => serde_json::json!(n.as_u64().unwrap() + 1),
                number => serde_json::json!(number.as_f64().unwrap() + 1.0),
            };
            let mut config = default.clone();
            config[key] = changed;
            let search: SearchConfig = serde_json::from_value(config).unwrap();
            let player = RecordedPlayer::of(&spec, Device::Cpu, Inference::FP32_LIBTORCH, &search).unwrap();
            assert!(player.search.as_deref().is_some_and(|s| s.starts_with(key.as_str())), "{key}: {player:?}");
        }
    }

    #[test]
    fn a_seed_is_played_once_and_the_next_free_one_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target.jsonl");
        assert_eq!(next_seed(&[], &piece("aaaa", 0, 0)), 1);
        record(&path, piece("aaaa", 4, 10)).unwrap();
        let error = record(&path, piece("aaaa", 4, 11)).unwrap_err().to_string();
        assert!(error.contains("seed 4") && error.contains(", 5)"), "{error}");
        assert_eq!(read_pieces(&path).unwrap().len(), 1, "the refused piece is not kept");
        assert_eq!(next_seed(&read_pieces(&path).unwrap(), &piece("aaaa", 0, 0)), 5);
    }

    #[test]
    fn a_line_that_is_not_a_piece_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target.jsonl");
        std::fs::write(&path, "{\"a\": 1}\n").unwrap();
        let error = format!("{:#}", read_pieces(&path).unwrap_err());
        assert!(error.contains("target.jsonl line 1: not a match piece"), "{error}");
    }
}
