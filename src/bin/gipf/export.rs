//! `gipf export`: a checkpoint as TorchScript, ONNX, safetensors and a model card.

use std::path::PathBuf;
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
    /// the project environment's .python, else python3].
    #[arg(long)]
    python: Option<PathBuf>,
    /// Skip the ONNX file.
    #[arg(long)]
    no_onnx: bool,
}

/// The Python to convert with.
pub fn python(explicit: Option<PathBuf>) -> PathBuf {
    explicit
        .or_else(|| std::env::var_os("GIPF_PYTHON").map(PathBuf::from))
        .or_else(|| Some(PathBuf::from("./.python")).filter(|p| p.exists()))
        .unwrap_or_else(|| PathBuf::from("python3"))
}

pub fn run(args: Args) -> Result<()> {
    let checkpoint = match gipf::store::is_url(&args.checkpoint) {
        true => gipf::store::fetch_checkpoint(&args.checkpoint)?,
        false => PathBuf::from(&args.checkpoint),
    };
    for path in export(&checkpoint, &args.out)? {
        println!("wrote {}", path.display());
    }
    if args.no_onnx {
        return Ok(());
    }
    let python = python(args.python);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/export_onnx.py");
    let status = Command::new(&python)
        .arg(&script)
        .arg(args.out.join(TORCHSCRIPT_FILE))
        .arg(args.out.join(ONNX_FILE))
        .status()
        .with_context(|| format!("cannot run {} for the ONNX conversion (--no-onnx skips it)", python.display()))?;
    if !status.success() {
        bail!("the ONNX conversion failed ({status}); the other files are written (--no-onnx skips it)");
    }
    Ok(())
}
