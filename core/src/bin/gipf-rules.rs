//! `gipf-rules`: `gipf rules` without LibTorch, so it starts at once: the
//! state after a sequence of actions, as JSON or a picture.

use clap::Parser;

#[derive(Parser)]
#[command(name = "gipf-rules", version, about = "Play actions from a start or a position and show the state")]
struct Cli {
    #[command(flatten)]
    args: gipf_core::cli::RulesArgs,
}

fn main() {
    if let Err(err) = gipf_core::cli::rules(Cli::parse().args) {
        eprintln!("gipf-rules: {err:#}");
        std::process::exit(1);
    }
}
