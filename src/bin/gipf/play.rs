//! `gipf play`: a person against a checkpoint or a baseline, in the terminal.

use std::io::{BufRead, Write};

use anyhow::Result;
use gipf::rules::{picture, Color, Position, Variant};

use crate::engine::PlayerArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    player: PlayerArgs,
    /// The colour you play.
    #[arg(long, default_value = "white")]
    color: Color,
    #[arg(long, default_value = "standard")]
    variant: Variant,
}

const HELP: &str = "type an action (a push like b1-b2 or Gb1-b2, a removal like xc3,d4,e5,f5 or x-), \
                    'legal' for the legal actions, 'undo' to take back your last action, 'quit' to stop";

pub fn run(args: Args) -> Result<()> {
    let (mut player, name) = args.player.build()?;
    let _guard = tch::no_grad_guard();
    let mut pos = Position::new(args.variant);
    // Positions before each of your decisions, for undo.
    let mut history: Vec<Position> = Vec::new();
    let mut shown: Option<Position> = None;
    let mut input = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    writeln!(out, "You play {} against {name}; {HELP}.", args.color)?;
    while let Some(to_act) = pos.to_act() {
        if to_act != args.color {
            let action = player.choose(&pos)?;
            writeln!(out, "{name} plays {action}")?;
            pos.play(action).expect("players choose legal actions");
            continue;
        }
        if shown != Some(pos) {
            write!(out, "\n{}", picture(&pos))?;
            shown = Some(pos);
        }
        write!(out, "your action ({to_act}): ")?;
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            writeln!(out)?;
            return Ok(());
        }
        match line.trim() {
            "" => {}
            "quit" => return Ok(()),
            "help" => writeln!(out, "{HELP}")?,
            "legal" => {
                let mut legal: Vec<String> = pos.legal_actions().iter().map(|a| a.to_string()).collect();
                legal.sort();
                writeln!(out, "legal: {}", legal.join(" "))?;
            }
            "undo" => match history.pop() {
                Some(previous) => pos = previous,
                None => writeln!(out, "nothing to take back")?,
            },
            text => match text.parse().map_err(anyhow::Error::from).and_then(|a| {
                let mut next = pos;
                next.play(a)?;
                Ok(next)
            }) {
                Ok(next) => {
                    history.push(pos);
                    pos = next;
                }
                Err(e) => writeln!(out, "'{text}' cannot be played: {e}")?,
            },
        }
    }
    write!(out, "\n{}", picture(&pos))?;
    let winner = pos.outcome().expect("the game is over").winner;
    writeln!(out, "{}", if winner == args.color { "You win." } else { "You lose." })?;
    Ok(())
}
