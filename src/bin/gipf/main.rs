//! The `gipf` command line.

mod bench;
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
    /// Measure throughput.
    #[command(subcommand)]
    Bench(bench::Bench),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Rules(args) => rules::run(args),
        Command::Bench(which) => bench::run(which),
    };
    if let Err(err) = result {
        eprintln!("gipf: {err:#}");
        std::process::exit(1);
    }
}
