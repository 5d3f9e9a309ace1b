//! `gipf rules` and `gipf-rules`: the state after a sequence of actions, as
//! JSON or a picture (the one part of the core that reads files).

use std::path::PathBuf;

use crate::rules::{parse_actions, picture, replay, Position, Setup, StateJson, Variant};
use anyhow::{Context, Result};

/// The options of `gipf rules` and `gipf-rules`.
#[derive(clap::Args)]
pub struct RulesArgs {
    /// The variant to start from (ignored with --position, which names its own).
    #[arg(long, default_value = "standard")]
    variant: Variant,
    /// Actions to play, separated by spaces, e.g. "b1-b2 b6-b5".
    #[arg(long, default_value = "")]
    moves: String,
    /// Start from this JSON position instead of the variant's start.
    #[arg(long, value_name = "FILE")]
    position: Option<PathBuf>,
    /// Print the state as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Plays `args`' actions from its start and prints the state reached: the
/// picture and the legal actions, or with `--json` one [`StateJson`] line.
pub fn rules(args: RulesArgs) -> Result<()> {
    let start = match &args.position {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            let setup = Setup::from_json(&text).with_context(|| format!("position {}", path.display()))?;
            setup.to_position().with_context(|| format!("position {}", path.display()))?
        }
        None => Position::new(args.variant),
    };
    let actions = parse_actions(&args.moves)?;
    let pos = replay(start, &actions)?;
    if args.json {
        println!("{}", serde_json::to_string(&StateJson::of(&pos))?);
    } else {
        print!("{}", picture(&pos));
        if !pos.is_over() {
            let mut legal: Vec<String> = pos.legal_actions().iter().map(|a| a.to_string()).collect();
            legal.sort();
            println!("legal: {}", legal.join(" "));
        }
    }
    Ok(())
}
