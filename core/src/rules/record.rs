//! A game record: the variant and the list of actions, readable back.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::action::{parse_actions, Action, NotationError};
use super::position::Position;
use super::types::{IllegalAction, NameError, Variant};

/// A whole game as its actions from the variant's start.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct GameRecord {
    /// The variant, whose start the actions are played from.
    pub variant: Variant,
    /// Every action in order, removals included.
    #[serde(with = "action_strings")]
    pub actions: Vec<Action>,
}

/// Why a record could not be read or replayed.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RecordError {
    /// The text is empty.
    #[error("a game record starts with its variant (basic, standard or tournament), then the actions")]
    MissingVariant,
    /// The first word is no variant.
    #[error(transparent)]
    Variant(#[from] NameError),
    /// An action's notation could not be read.
    #[error(transparent)]
    Notation(#[from] NotationError),
    /// An action is not legal where it is played.
    #[error("action {number} '{action}' is illegal: {reason}")]
    Illegal {
        /// The action's place in the list, counting from 1.
        number: usize,
        /// The action's notation.
        action: String,
        /// Why the position refused it.
        reason: IllegalAction,
    },
}

impl GameRecord {
    /// Plays the record from the variant's start, naming the first illegal action.
    pub fn replay(&self) -> Result<Position, RecordError> {
        replay(Position::new(self.variant), &self.actions)
    }

    /// Reads the text form: the variant, then the actions, separated by white space.
    pub fn parse(text: &str) -> Result<GameRecord, RecordError> {
        let text = text.trim_start();
        let (variant, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        if variant.is_empty() {
            return Err(RecordError::MissingVariant);
        }
        let variant: Variant = variant.parse()?;
        Ok(GameRecord { variant, actions: parse_actions(rest)? })
    }
}

/// Plays `actions` from `start`, naming the first illegal one (counting from 1).
pub fn replay(start: Position, actions: &[Action]) -> Result<Position, RecordError> {
    replay_with(start, actions, |_| {})
}

/// [`replay`], showing `seen` each position after an action.
pub fn replay_with(
    mut pos: Position,
    actions: &[Action],
    mut seen: impl FnMut(&Position),
) -> Result<Position, RecordError> {
    for (i, &action) in actions.iter().enumerate() {
        pos.play(action).map_err(|reason| RecordError::Illegal {
            number: i + 1,
            action: action.to_string(),
            reason,
        })?;
        seen(&pos);
    }
    Ok(pos)
}

impl fmt::Display for GameRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.variant)?;
        for action in &self.actions {
            write!(f, " {action}")?;
        }
        Ok(())
    }
}

/// Actions stored as their notation in serialized formats.
pub(crate) mod action_strings {
    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    use crate::rules::Action;

    pub fn serialize<S: Serializer>(actions: &[Action], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(actions.iter().map(|a| a.to_string()))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Action>, D::Error> {
        let strings = Vec::<String>::deserialize(d)?;
        strings.iter().map(|s| s.parse().map_err(D::Error::custom)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trip() {
        let record = GameRecord::parse("standard b1-b2 b6-b5").unwrap();
        assert_eq!(record.actions.len(), 2);
        assert_eq!(record.to_string(), "standard b1-b2 b6-b5");
        assert_eq!(GameRecord::parse(&record.to_string()).unwrap(), record);
    }

    #[test]
    fn json_round_trip() {
        let record = GameRecord::parse("tournament Ga1-b2 Gi5-h5").unwrap();
        let json = serde_json::to_string(&record).unwrap();
        assert_eq!(json, r#"{"variant":"tournament","actions":["Ga1-b2","Gi5-h5"]}"#);
        assert_eq!(serde_json::from_str::<GameRecord>(&json).unwrap(), record);
    }

    #[test]
    fn illegal_action_is_named() {
        let record = GameRecord::parse("basic b1-b2 b6-b5 b1-b2").unwrap();
        let err = record.replay().unwrap_err().to_string();
        assert!(err.starts_with("action 3 'b1-b2' is illegal"), "{err}");
        assert!(GameRecord::parse("").is_err());
        assert!(GameRecord::parse("chess e2-e4").unwrap_err().to_string().contains("unknown variant"));
        assert!(serde_json::from_str::<GameRecord>(r#"{"variant":"basic","actions":["zz"]}"#).is_err());
    }

    /// A caller tells a wrong name from other errors by matching, not by
    /// reading a message.
    #[test]
    fn names_that_are_no_colour_or_variant_are_typed_errors() {
        use crate::rules::Color;
        assert_eq!("green".parse::<Color>(), Err(NameError::Color("green".into())));
        assert_eq!("chess".parse::<Variant>(), Err(NameError::Variant("chess".into())));
        assert_eq!("black".parse::<Color>(), Ok(Color::Black));
        let err = GameRecord::parse("chess e2-e4").unwrap_err();
        assert!(matches!(&err, RecordError::Variant(NameError::Variant(name)) if name == "chess"), "{err:?}");
    }
}
