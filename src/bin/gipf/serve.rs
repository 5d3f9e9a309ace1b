//! `gipf serve`: the web board playing a model, in one command.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use gipf::checkpoint::reference_checkpoint;
use gipf::export::{export, ONNX_FILE};
use gipf::model_source::ModelSource;

#[derive(clap::Args)]
pub struct Args {
    /// The checkpoint the board plays: a weights file, a models folder (its
    /// best, else its newest) or an s3:// URL [default: the run's, else the
    /// reference model].
    #[arg(long)]
    model: Option<String>,
    /// A run folder: its progress on the page run.html (newest checkpoint,
    /// training and self-play rates, the Elo plot of `gipf ratings`), and
    /// its checkpoint on the board.
    #[arg(long)]
    run: Option<PathBuf>,
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// The address to listen on; anything but 127.0.0.1 opens the board to the network.
    #[arg(long, default_value = "127.0.0.1")]
    host: std::net::IpAddr,
    /// A host name that requests may name besides localhost and IP
    /// addresses, for a board served under a name (repeatable). Requests
    /// for other names are refused, so that a page that rebinds its own
    /// name to this machine cannot read the board.
    #[arg(long = "allow-host")]
    allowed_hosts: Vec<String>,
    /// The built page (scripts/web-build.sh writes web/dist).
    #[arg(long, default_value = "web/dist")]
    page: PathBuf,
    /// Open the board in the system's browser once it is served.
    #[arg(long)]
    open: bool,
}

/// The weights the board plays.
fn checkpoint(model: Option<&str>) -> Result<PathBuf> {
    Ok(match model {
        None => reference_checkpoint()?,
        Some(url) if gipf::store::is_url(url) => gipf::checkpoint::fetch_checkpoint(url)?,
        Some(dir) if Path::new(dir).is_dir() => {
            ModelSource::Folder(dir.into()).current()?.with_context(|| format!("no checkpoint in {dir} yet"))?
        }
        Some(file) => PathBuf::from(file),
    })
}

/// The checkpoint exported for the page (ONNX, card), once, into the cache
/// under the weights' sha256.
fn exported(weights: &Path) -> Result<PathBuf> {
    let bytes = std::fs::read(weights).with_context(|| format!("cannot read checkpoint {}", weights.display()))?;
    let dir = gipf::cache_dir().join("serve").join(&gipf::durable::sha256_hex(&bytes)[..16]);
    if !dir.join(ONNX_FILE).is_file() {
        let temporary = dir.with_extension("partial");
        let _ = std::fs::remove_dir_all(&temporary);
        export(weights, &temporary)?;
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::rename(&temporary, &dir).with_context(|| format!("cannot write {}", dir.display()))?;
    }
    Ok(dir)
}

pub fn run(args: Args) -> Result<()> {
    anyhow::ensure!(
        args.page.join("index.html").is_file(),
        "{}: no built page; build it with scripts/web-build.sh (or name it with --page)",
        args.page.display()
    );
    let run_models = args.run.as_ref().map(|run| run.join("models").display().to_string());
    let weights = checkpoint(args.model.as_deref().or(run_models.as_deref()))?;
    let model = exported(&weights)?;
    let addr = SocketAddr::new(args.host, args.port);
    let listener = std::net::TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
    let url = format!("http://{addr}/");
    if !args.host.is_loopback() {
        eprintln!(
            "gipf serve: listening on {addr}, beyond this machine: anyone who can reach it can play the model, \
             download it and read the run's progress"
        );
    }
    println!("serving the board with {} on {url} (Ctrl-C stops)", weights.display());
    if let Some(run) = &args.run {
        println!("the progress of {} on {url}run.html", run.display());
    }
    if args.open {
        if let Err(e) = open::that_detached(&url) {
            eprintln!("gipf serve: cannot open a browser ({e}): open {url} in one");
        }
    }
    let options = gipf::serve::Options { allowed_hosts: args.allowed_hosts, ..Default::default() };
    gipf::serve::serve_on(listener, &args.page, &model, args.run.as_deref(), &options)
}
