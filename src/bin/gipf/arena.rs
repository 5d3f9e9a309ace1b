//! `gipf arena`: a match between two players; `gipf ratings`: the ratings of
//! a run's checkpoints.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};
use gipf::arena::ratings::{elo_per_doubling, rate_lineage, rate_run, RatingOptions, Selection};
use gipf::arena::record::{self, MatchPiece, RecordedPlayer};
use gipf::arena::{play_match, MatchOptions, Sprt, SprtDecision, Tally, MAX_MATCH_GAMES};
use gipf::config::Config;
use gipf::net::{machine_name, parse_device};
use gipf::players::{budget_from_options, Budget, PlayerSpec};
use gipf::rules::Variant;
use gipf::train::RunDir;

use gipf::report::Reporter;

/// Settings shared by matches and ratings.
#[derive(clap::Args)]
pub struct Common {
    /// Games (at most, with --sprt); an odd number is rounded up, as games come in pairs.
    #[arg(long, default_value_t = 40)]
    games: u32,
    /// Simulations per action of checkpoint players without their own budget.
    #[arg(long, default_value_t = 64)]
    sims: u32,
    /// Time per action instead of simulations, in milliseconds.
    #[arg(long, value_name = "MS")]
    movetime: Option<u64>,
    /// Random actions opening each pair of games.
    #[arg(long, default_value_t = 4)]
    opening: u32,
    /// Games played at once.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Search settings, variant and length cap from this config.
    #[arg(long, default_value = "configs/cpu.toml")]
    config: PathBuf,
    /// The variant [default: the config's].
    #[arg(long)]
    variant: Option<Variant>,
    /// auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    /// The openings' seed [default: 1; with --record, the match's next free one].
    #[arg(long)]
    seed: Option<u64>,
}

impl Common {
    fn budget(&self) -> Result<Budget> {
        budget_from_options(self.sims, self.movetime)
    }

    fn options(&self, sprt: Option<Sprt>) -> Result<MatchOptions> {
        let config = Config::load(&self.config)?;
        anyhow::ensure!((1..=MAX_MATCH_GAMES).contains(&self.games), "--games must be from 1 to {MAX_MATCH_GAMES}");
        anyhow::ensure!(self.threads > 0, "--threads must be positive");
        tch::set_num_threads(config.play.torch_threads);
        Ok(MatchOptions {
            variant: self.variant.unwrap_or(config.game.variant),
            games: self.games.div_ceil(2) * 2,
            opening_actions: self.opening,
            max_actions: config.game.max_actions,
            threads: self.threads,
            seed: self.seed.unwrap_or(1),
            sprt,
            device: parse_device(&self.device)?,
            inference: config.play.inference(),
            search: config.search,
        })
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// Player A: random, greedy, uct:N, alphabeta:D, alphabeta:MSms, or a checkpoint's weights (with @SIMS or @MSms for its own budget).
    a: String,
    /// Player B, likewise.
    b: String,
    /// Stop when the result is clear: the Elo bounds of a sequential test, e.g. 0,50 (5% error rates).
    #[arg(long, value_name = "ELO0,ELO1")]
    sprt: Option<String>,
    /// Add this match's result to FILE (JSON lines) and sum it with the ones recorded before of the same
    /// match (players, weights, precision, machine): a measurement played in pieces, each with its own seed.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    #[command(flatten)]
    common: Common,
}

fn parse_sprt(text: &str) -> Result<Sprt> {
    let bounds: Option<(f64, f64)> =
        text.split_once(',').and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)));
    match bounds {
        Some((elo0, elo1)) if elo0 < elo1 => Ok(Sprt { elo0, elo1, alpha: 0.05, beta: 0.05 }),
        _ => bail!("--sprt '{text}': expected ELO0,ELO1 with ELO0 < ELO1, e.g. 0,50"),
    }
}

fn format_elo(elo: f64) -> String {
    if elo.is_finite() {
        // Adding 0 turns -0 into 0.
        format!("{:+.0}", elo.round() + 0.0)
    } else if elo > 0.0 {
        "+inf".into()
    } else {
        "-inf".into()
    }
}

fn summary(t: &Tally) -> String {
    let (lo, hi) = t.score_interval();
    let (elo, elo_lo, elo_hi) = t.elo();
    format!(
        "A {} wins, {} losses, {} draws (length cap); score {:.1}% [{:.1}%, {:.1}%]; Elo {} [{}, {}] (95%)",
        t.wins,
        t.losses,
        t.draws,
        100.0 * t.score(),
        100.0 * lo,
        100.0 * hi,
        format_elo(elo),
        format_elo(elo_lo),
        format_elo(elo_hi)
    )
}

pub fn run(args: Args) -> Result<()> {
    let budget = args.common.budget()?;
    let sprt = args.sprt.as_deref().map(parse_sprt).transpose()?;
    let a = PlayerSpec::parse(&args.a, budget)?;
    let b = PlayerSpec::parse(&args.b, budget)?;
    let mut options = args.common.options(sprt)?;
    let piece = match &args.record {
        Some(path) => Some(piece_to_play(path, &a, &b, &mut options, args.common.seed.is_some())?),
        None => None,
    };
    println!("A = {}, B = {}", a.name(), b.name());
    // Off a terminal (a gate's log): a line every 10 games.
    let progress = Reporter::counting(Some(options.games as u64), "games", Some(10));
    let report = play_match(&a, &b, &options, &mut |t| {
        progress.set(t.games() as u64, format!("A {}-{}-{} ({:.0}%)", t.wins, t.losses, t.draws, 100.0 * t.score()));
    })?;
    progress.clear();
    println!("{}", summary(&report.tally));
    println!("mean game length {:.1} actions", report.mean_length);
    for (side, think) in ["A", "B"].iter().zip(report.think) {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!("{side} per action: mean {:.1} ms, max {:.1} ms", ms(think.mean()), ms(think.max));
    }
    if let (Some(sprt), Some(decision)) = (sprt, report.decision) {
        let llr = report.tally.llr(sprt.elo0, sprt.elo1);
        let (lower, upper) = sprt.bounds();
        let verdict = match decision {
            SprtDecision::H1 => format!("A is stronger by at least {} Elo", sprt.elo1),
            SprtDecision::H0 => format!("A is not stronger by more than {} Elo", sprt.elo0),
            SprtDecision::Continue => "no decision yet".into(),
        };
        println!("SPRT [{}, {}]: LLR {llr:.2} (bounds {lower:.2}, {upper:.2}): {verdict}", sprt.elo0, sprt.elo1);
    }
    if let (Some(path), Some(piece)) = (&args.record, piece) {
        let pieces = record::record(path, MatchPiece { tally: report.tally, ..piece })?;
        let seeds: Vec<String> = pieces.iter().map(|p| p.seed.to_string()).collect();
        println!("recorded in {}; the match in all, seeds {}:", path.display(), seeds.join(", "));
        println!("{}", summary(&record::total(&pieces)));
    }
    Ok(())
}

/// The piece of a recorded match about to be played (its tally still
/// empty), with its seed: the one given, if the match has not played it, or
/// the next free one.
fn piece_to_play(
    path: &Path,
    a: &PlayerSpec,
    b: &PlayerSpec,
    options: &mut MatchOptions,
    seed_given: bool,
) -> Result<MatchPiece> {
    let (device, inference) = (options.device, options.inference);
    let mut piece = MatchPiece {
        a: RecordedPlayer::of(a, device, inference, &options.search)?,
        b: RecordedPlayer::of(b, device, inference, &options.search)?,
        machine: machine_name(),
        opening: options.opening_actions,
        variant: options.variant,
        max_actions: options.max_actions,
        seed: options.seed,
        tally: Tally::default(),
    };
    let pieces = record::read_pieces(path)?;
    match seed_given {
        true => record::check_seed_free(&pieces, &piece, path)?,
        false => piece.seed = record::next_seed(&pieces, &piece),
    }
    options.seed = piece.seed;
    Ok(piece)
}

#[derive(clap::Args)]
pub struct RatingsArgs {
    /// The run folder (its models/ are rated; results go to arena/), or a run in an object store
    /// (s3://bucket/prefix: its checkpoints are downloaded, its arena/ files read and written there).
    #[arg(long, default_value = "runs/main")]
    run: String,
    /// Rate a lineage's generations instead: a models folder as scripts/leg.sh keeps it (reference, tip,
    /// history/), each generation against the one before and the anchors, by the samples its training
    /// read; results go to its arena/.
    #[arg(long, value_name = "MODELS", conflicts_with_all = ["run", "every", "points"])]
    lineage: Option<PathBuf>,
    /// Rate every n-th checkpoint (the first and the newest always).
    #[arg(long, default_value_t = 1)]
    every: usize,
    /// Instead of --every: rate this many checkpoints, spread evenly by step (the first and the newest always).
    #[arg(long, conflicts_with = "every")]
    points: Option<usize>,
    /// Each rated checkpoint plays this many rated ones before it.
    #[arg(long, default_value_t = 2)]
    opponents: usize,
    /// A fixed player every rated checkpoint plays (repeatable), e.g. alphabeta:2; the first is 0 Elo.
    #[arg(long, value_name = "PLAYER")]
    anchor: Vec<String>,
    #[command(flatten)]
    common: Common,
}

pub fn ratings(args: RatingsArgs) -> Result<()> {
    anyhow::ensure!(args.every > 0, "--every must be positive");
    anyhow::ensure!(args.points != Some(0), "--points must be positive");
    anyhow::ensure!(args.opponents > 0 || !args.anchor.is_empty(), "--opponents must be positive without --anchor");
    let budget = args.common.budget()?;
    let anchors = args.anchor.iter().map(|a| PlayerSpec::parse(a, budget)).collect::<Result<Vec<_>>>()?;
    let options = RatingOptions {
        selection: args.points.map_or(Selection::Every(args.every), Selection::Points),
        opponents: args.opponents,
        anchors,
        budget,
        matches: args.common.options(None)?,
    };
    let progress = Reporter::stages();
    if let Some(models) = &args.lineage {
        let ratings = rate_lineage(models, &options, &mut |what| progress.stage(what))?;
        progress.clear();
        return print_ratings(&ratings, &models.join("arena"));
    }
    let run = RunDir::open(&args.run)?;
    const ARENA_FILES: [&str; 3] = ["matches.jsonl", "ratings.jsonl", "ratings.png"];
    if let Some(store) = &run.store {
        progress.stage("downloading checkpoints");
        store.mirror_checkpoints("models", &run.models())?;
        // Matches played elsewhere are not played again.
        if store.get("arena/matches.jsonl")?.is_some() {
            std::fs::remove_file(run.root.join("arena/matches.jsonl")).ok();
            store.download("arena/matches.jsonl", &run.root.join("arena"))?;
        }
    }
    let ratings = rate_run(&run.root, &options, &mut |what| progress.stage(what))?;
    if let Some(store) = &run.store {
        for name in ARENA_FILES {
            let bytes = std::fs::read(run.root.join("arena").join(name))?;
            store.put(&format!("arena/{name}"), bytes)?;
        }
    }
    progress.clear();
    print_ratings(&ratings, &run.root.join("arena"))?;
    if let Some(store) = &run.store {
        println!("and {}", ARENA_FILES.map(|name| store.url(&format!("arena/{name}"))).join(", "));
    }
    Ok(())
}

/// The ratings as a table (a lineage's with the samples read and the Elo
/// per doubling of them), and where they were written.
fn print_ratings(ratings: &[gipf::arena::ratings::Rating], folder: &std::path::Path) -> Result<()> {
    println!("{:<24} {:>8} {:>12} {:>8} {:>7}", "player", "step", "samples read", "Elo", "± 95%");
    for r in ratings {
        let step = r.step.map_or_else(|| "anchor".to_string(), |s| s.to_string());
        let read = r.samples_read.map_or_else(String::new, |n| format!("{:.2} M", n as f64 / 1e6));
        println!("{:<24} {:>8} {:>12} {:>8.0} {:>7.0}", r.checkpoint, step, read, r.elo, r.margin);
    }
    if let Some((elo, margin)) = elo_per_doubling(ratings) {
        println!("Elo per doubling of the samples read: {elo:+.0} ± {margin:.0} (95%)");
    }
    println!("wrote {} and {}", folder.join("ratings.jsonl").display(), folder.join("ratings.png").display());
    Ok(())
}
