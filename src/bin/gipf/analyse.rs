//! `gipf analyse RECORD`: a finished game reviewed decision by decision.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gipf::config::Config;
use gipf::net::parse_device;
use gipf::players::{Budget, PlayerSpec};
use gipf::rules::{parse_actions, Action, Position, Variant};

#[derive(clap::Args)]
pub struct Args {
    /// The game: a text file of actions in the official notation (as `gipf
    /// rules --moves` reads them; lines starting with # are comments), or a
    /// self-play shard (.jsonl.zst, with --game).
    record: PathBuf,
    /// The variant of a text record.
    #[arg(long, default_value = "standard")]
    variant: Variant,
    /// Which game of a shard, from 0 (its line, damaged lines counted).
    #[arg(long, default_value_t = 0)]
    game: usize,
    /// A checkpoint's weights or a models folder [default: the reference model].
    #[arg(long)]
    model: Option<PathBuf>,
    /// Simulations per decision.
    #[arg(long, default_value_t = 400, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    sims: u32,
    /// Search settings from this config.
    #[arg(long, default_value = "configs/cpu.toml")]
    config: PathBuf,
    /// auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    /// Where the report (review.txt), its data (review.json) and the value
    /// plot (review.png) go [default: RECORD's name with .review].
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The game of a record: its variant and actions.
fn read_record(args: &Args) -> Result<(Variant, Vec<Action>)> {
    let path = &args.record;
    if path.to_string_lossy().ends_with(gipf::shards::SHARD_SUFFIX) {
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let games = gipf::shards::parse_lines(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let count = games.len();
        let (line, game) = games
            .into_iter()
            .nth(args.game)
            .with_context(|| format!("{}: no game {} (it holds {count})", path.display(), args.game))?;
        let game =
            game.map_err(|e| anyhow::anyhow!("{}: game {} (line {line}) is refused: {e}", path.display(), args.game))?;
        return Ok((game.variant, game.actions));
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let moves: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with('#')).collect();
    let actions = parse_actions(&moves.join(" ")).with_context(|| path.display().to_string())?;
    Ok((args.variant, actions))
}

pub fn run(args: Args) -> Result<()> {
    let (variant, actions) = read_record(&args)?;
    let model = args.model.as_ref().map_or(gipf::checkpoint::REFERENCE.to_string(), |m| m.display().to_string());
    let spec = PlayerSpec::parse(&model, Budget::Simulations(args.sims.max(2)))?;
    let config = Config::load(&args.config)?;
    tch::set_num_threads(config.play.torch_threads);
    let mut player = spec.build(parse_device(&args.device)?, config.play.inference(), &config.search, 1)?;
    let progress = gipf::report::Reporter::counting(Some(actions.len() as u64 + 1), "positions", Some(20));
    let review =
        gipf::review::review(player.as_mut(), Position::new(variant), &actions, args.sims, &mut || progress.inc())
            .with_context(|| args.record.display().to_string())?;
    progress.clear();
    let out = args.out.clone().unwrap_or_else(|| args.record.with_extension("review"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let write = |name: &str, bytes: &[u8]| gipf::durable::write_atomic(&out.join(name), bytes);
    write("review.txt", review.text().as_bytes())?;
    write("review.json", serde_json::to_string_pretty(&review)?.as_bytes())?;
    // Drawn under a new name, then renamed into place: never through a link planted there.
    gipf::durable::write_through(&out.join("review.png"), |tmp| review.plot(tmp))?;
    print!("{}", review.text());
    println!(
        "wrote {}",
        [Path::new("review.txt"), Path::new("review.json"), Path::new("review.png")]
            .map(|f| out.join(f).display().to_string())
            .join(", ")
    );
    Ok(())
}
