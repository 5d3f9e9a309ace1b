//! The `gipf` command line.

mod analyse;
mod arena;
mod bench;
mod engine;
mod export;
mod info;
mod looping;
mod play;
mod serve;
mod tune;

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
    Rules(gipf_core::cli::RulesArgs),
    /// The training loop: self-play workers on every device play the newest checkpoint while the trainer trains
    /// on their games and writes new checkpoints (with loop.workers = 0: self-play, then training, in turn).
    Loop(looping::Args),
    /// What this machine offers (CPU, GPUs, precision) and the layout `gipf loop` would run with.
    Info(info::Args),
    /// A match between two players (checkpoints or baselines): score, Elo, optional SPRT.
    Arena(arena::Args),
    /// Rate a run's checkpoints against each other; writes arena/ratings.jsonl and a plot.
    Ratings(arena::RatingsArgs),
    /// Play against a checkpoint or a baseline in the terminal.
    Play(play::Args),
    /// Answer a line protocol on stdin/stdout (new, position, play, go, state, ...), for front-ends.
    Engine(engine::Args),
    /// Review a finished game decision by decision with a model: values, its choices, mistakes, a plot.
    Analyse(analyse::Args),
    /// Write a checkpoint as TorchScript, ONNX, safetensors and a model card for other front-ends.
    Export(export::Args),
    /// Serve the web board playing a checkpoint (the reference model by default) on 127.0.0.1.
    Serve(serve::Args),
    /// Fit the classic player's evaluation to game records (Texel tuning); with --write, its weights file.
    Tune(tune::Args),
    /// Measure throughput.
    #[command(subcommand)]
    Bench(bench::Bench),
}

fn main() {
    gipf::init_logging();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Rules(args) => gipf_core::cli::rules(args),
        Command::Bench(which) => bench::run(which),
        Command::Loop(args) => looping::run(args),
        Command::Info(args) => info::run(args),
        Command::Arena(args) => arena::run(args),
        Command::Ratings(args) => arena::ratings(args),
        Command::Export(args) => export::run(args),
        Command::Play(args) => play::run(args),
        Command::Engine(args) => engine::run(args),
        Command::Analyse(args) => analyse::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Tune(args) => tune::run(args),
    };
    if let Err(err) = result {
        eprintln!("gipf: {err:#}");
        std::process::exit(1);
    }
}
