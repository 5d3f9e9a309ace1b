//! `gipf export`: a checkpoint as TorchScript, ONNX, safetensors and a model card.

use std::path::PathBuf;

use anyhow::Result;
use gipf::export::{export, ONNX_FILE};

#[derive(clap::Args)]
pub struct Args {
    /// The checkpoint's weights (models/step-NNNNNNNN.safetensors; its .json must be beside it), or
    /// its URL in an object store (s3://…/models/step-NNNNNNNN.safetensors, or s3://…/models for the newest).
    checkpoint: String,
    /// Output folder.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let checkpoint = match gipf::store::is_url(&args.checkpoint) {
        true => gipf::checkpoint::fetch_checkpoint(&args.checkpoint)?,
        false => PathBuf::from(&args.checkpoint),
    };
    let exported = export(&checkpoint, &args.out)?;
    for path in &exported.files {
        let check = match exported.onnx_error {
            _ if !path.ends_with(ONNX_FILE) => String::new(),
            Some(error) => format!(" (ONNX Runtime matches LibTorch within {error:.1e})"),
            None => " (ONNX Runtime not loaded: not checked)".into(),
        };
        println!("wrote {}{check}", path.display());
    }
    Ok(())
}
