//! The `gipf` command line.

mod bench;
mod looping;
mod matches;
mod rules;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "gipf", version, about = "GIPF: rules engine and self-play training tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play actions from a start or a position and show the state (board, legal actions).
    Rules(rules::Args),
    /// The training loop: self-play with the newest checkpoint, training, a new checkpoint, again.
    Loop(looping::Args),
    /// Two checkpoints head to head, each searching its moves.
    Match(matches::Args),
    /// Measure throughput.
    #[command(subcommand)]
    Bench(bench::Bench),
}

fn main() {
    gipf::init_logging();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Rules(args) => rules::run(args),
        Command::Bench(which) => bench::run(which),
        Command::Loop(args) => looping::run(args),
        Command::Match(args) => matches::run(args),
    };
    if let Err(err) = result {
        eprintln!("gipf: {err:#}");
        std::process::exit(1);
    }
}
