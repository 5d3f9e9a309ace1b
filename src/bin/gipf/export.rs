//! `gipf export`: a checkpoint as TorchScript, ONNX, safetensors and a model card.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use gipf::export::{export, ONNX_FILE, TORCHSCRIPT_FILE};

#[derive(clap::Args)]
pub struct Args {
    /// The checkpoint's weights (models/step-NNNNNNNN.safetensors; its .json must be beside it), or
    /// its URL in an object store (s3://…/models/step-NNNNNNNN.safetensors, or s3://…/models for the newest).
    checkpoint: String,
    /// Output folder.
    #[arg(long)]
    out: PathBuf,
    /// Python with torch and onnx for the ONNX conversion [default: $GIPF_PYTHON, else
    /// the environment of scripts/setup-torch.sh in the cache].
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the ONNX file.
    #[arg(long)]
    no_onnx: bool,
}

/// The Python to convert with: `--python`, `$GIPF_PYTHON`, or the
/// environment `scripts/setup-torch.sh` made in the per-user cache; never a
/// file that the current folder supplies.
fn python(explicit: Option<PathBuf>) -> Result<PathBuf> {
    let in_cache = || {
        let mut found: Vec<PathBuf> = std::fs::read_dir(gipf::cache_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("torch-"))
            .map(|e| e.path().join("bin/python"))
            .filter(|p| p.exists())
            .collect();
        found.sort();
        found.pop()
    };
    explicit.or_else(|| std::env::var_os("GIPF_PYTHON").map(PathBuf::from)).or_else(in_cache).context(
        "no Python with torch and onnx for the ONNX conversion: run scripts/setup-torch.sh, or set GIPF_PYTHON \
             or --python (--no-onnx skips the conversion)",
    )
}

/// The converter, built into the program so that it runs from any folder.
const EXPORT_ONNX: &str = include_str!("../../../scripts/export_onnx.py");

pub fn run(args: Args) -> Result<()> {
    let checkpoint = match gipf::store::is_url(&args.checkpoint) {
        true => gipf::checkpoint::fetch_checkpoint(&args.checkpoint)?,
        false => PathBuf::from(&args.checkpoint),
    };
    for path in export(&checkpoint, &args.out)? {
        println!("wrote {}", path.display());
    }
    if args.no_onnx {
        return Ok(());
    }
    to_onnx(&args.out, args.python)
}

/// Converts the TorchScript module in `out` to ONNX beside it, with Python.
pub fn to_onnx(out: &Path, python: Option<PathBuf>) -> Result<()> {
    let python = self::python(python)?;
    // The converter and its output in a private folder of their own, never
    // in `out`, where another user could swap the script or plant a link.
    let private = tempfile::tempdir().context("cannot create a temporary folder for the ONNX conversion")?;
    let (script, onnx) = (private.path().join("export_onnx.py"), private.path().join(ONNX_FILE));
    std::fs::write(&script, EXPORT_ONNX).with_context(|| format!("cannot write {}", script.display()))?;
    let status = Command::new(&python)
        .arg(&script)
        .arg(out.join(TORCHSCRIPT_FILE))
        .arg(&onnx)
        .arg(out.join(ONNX_FILE))
        .status()
        .with_context(|| format!("cannot run {} for the ONNX conversion (--no-onnx skips it)", python.display()))?;
    if !status.success() {
        bail!("the ONNX conversion failed ({status}); the other files are written (--no-onnx skips it)");
    }
    let bytes = std::fs::read(&onnx).with_context(|| format!("cannot read {}", onnx.display()))?;
    gipf::durable::write_atomic(&out.join(ONNX_FILE), &bytes)
}
