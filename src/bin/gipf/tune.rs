//! `gipf tune`: fits the classic player's evaluation weights to game records.

use std::path::PathBuf;

use anyhow::Result;

use gipf::players::alphabeta::classic::{FEATURE_NAMES, WEIGHTS};
use gipf::tune::{as_hundredths, collect, fit, quality, weights_source};

#[derive(clap::Args)]
pub struct Args {
    /// Games folder (self-play shards or game files).
    #[arg(long)]
    games: PathBuf,
    /// Write the fitted weights as the Rust source of the classic player's
    /// weights (core/src/players/alphabeta/classic/weights.rs), to build in.
    #[arg(long)]
    write: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let data = collect(&args.games)?;
    println!(
        "{} games ({} skipped): {} positions to fit, {} held out",
        data.games,
        data.skipped,
        data.fit.len(),
        data.held_out.len()
    );
    let fitted = fit(&data.fit);
    let weights = as_hundredths(&fitted);
    let current = WEIGHTS.map(|w| w as f64 / 100.0);
    let rounded = weights.map(|w| w as f64 / 100.0);
    for (name, w) in
        [("no weights (50%)", [0.0; FEATURE_NAMES.len()]), ("built-in weights", current), ("fitted", rounded)]
    {
        let (fit_loss, _) = quality(&data.fit, &w);
        let (loss, right) = quality(&data.held_out, &w);
        println!(
            "{name:>17}: log loss {fit_loss:.4} fitted positions, {loss:.4} held out; held-out results on the right side {:.1}%",
            100.0 * right
        );
    }
    println!("{:>36} {:>8} {:>8}", "feature", "built-in", "fitted");
    for ((name, old), new) in FEATURE_NAMES.iter().zip(WEIGHTS).zip(weights) {
        println!("{name:>36} {old:>8} {new:>8}");
    }
    if let Some(path) = args.write {
        let provenance = format!("{} games, {} positions", data.games, data.fit.len() + data.held_out.len());
        gipf::durable::write_atomic(&path, weights_source(&weights, &provenance).as_bytes())?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
