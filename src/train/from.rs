//! Continuing from a model (`gipf loop --from`): a new run starts from a
//! checkpoint's weights, and its optimizer state where its files hold one;
//! its checkpoints name that model as their parent and carry its compute
//! forward ([`Lineage`]). The run's own counters (steps, samples, games
//! read) start at zero, as its games folder does. With `train.grow_network`
//! a smaller parent grows into the config's network (no momentum then).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use tch::Device;

use super::{check_shape, check_variant, Trainer};
use crate::checkpoint::{checkpoints_newest_first, read_meta, CheckpointMeta, Compute, Lineage, Parent};
use crate::config::Config;
use crate::durable::sha256_of_file;
use crate::net::{machine_name, Network};
use crate::train::GamesRead;

/// The model a new run continues from: as the user named it, and its
/// weights file.
#[derive(Clone, Debug)]
pub struct ParentModel {
    /// The model as the user named it (`reference`, a path or a URL).
    pub name: String,
    /// Its weights file.
    pub weights: PathBuf,
}

impl ParentModel {
    /// The model named `name`: `reference`, a checkpoint's weights file, or
    /// a models folder (its best checkpoint, else its newest).
    pub fn named(name: &str) -> Result<ParentModel> {
        Ok(ParentModel { name: name.to_string(), weights: crate::model_source::weights_named(name)? })
    }
}

impl Trainer {
    /// A trainer for a new run that continues from `parent`.
    pub fn from_parent(config: &Config, parent: &ParentModel, device: Device) -> Result<Trainer> {
        let weights = &parent.weights;
        let meta = read_meta(weights)?;
        check_variant(&meta, config, weights)?;
        let mut trainer = match check_shape(&meta, &config.network, weights) {
            Ok(()) if weights.with_extension("optim").is_file() => Trainer::load(config, weights, device)?,
            Ok(()) => Trainer::with_network(config, Network::load(weights, &config.network, device)?),
            Err(_) if config.train.grow_network => {
                let parent = Network::load(weights, &meta.network, device)?;
                let grown = Network::grown(&parent, &config.network, device, 1)
                    .with_context(|| format!("{}: cannot grow it into the config's network", weights.display()))?;
                tracing::info!(from = ?meta.network, to = ?config.network, "the parent's network grown, its function kept");
                Trainer::with_network(config, grown)
            }
            Err(e) => return Err(e).context(
                "to continue from it, give the config its network shape (or, for a larger one, set train.grow_network)",
            ),
        };
        let sha256 = sha256_of_file(weights)?;
        trainer.step = 0;
        trainer.samples_drawn = 0;
        trainer.samples_read = 0;
        trainer.games_read = GamesRead::default();
        trainer.resumed_at = Instant::now();
        trainer.lineage = Lineage {
            parent: Some(Parent { file: parent.name.clone(), step: meta.step, sha256 }),
            inherited: compute_behind(&meta),
            run: Compute::default(),
            machine: machine_name(),
        };
        Ok(trainer)
    }

    /// Resumes the run in `models`; a run with no checkpoint yet starts from
    /// `from`, or from zero without it. A run that holds checkpoints of
    /// another lineage than `from` is refused: `--from` starts a new run.
    pub fn resume_or_from(
        config: &Config,
        models: &Path,
        from: Option<&ParentModel>,
        device: Device,
        seed: i64,
    ) -> Result<Trainer> {
        let Some(from) = from else { return Trainer::resume_or_new(config, models, device, seed) };
        if !models.is_dir() || checkpoints_newest_first(models)?.is_empty() {
            let trainer = Trainer::from_parent(config, from, device)?;
            let parent = trainer.lineage.parent.as_ref().expect("a parent");
            tracing::info!(parent = %from.name, step = parent.step, "a new run continuing from a model");
            return Ok(trainer);
        }
        let trainer = Trainer::resume_or_new(config, models, device, seed)?;
        let sha256 = sha256_of_file(&from.weights)?;
        match &trainer.lineage.parent {
            Some(parent) if parent.sha256 == sha256 => Ok(trainer),
            other => {
                let holds = other.as_ref().map_or("a run from zero".to_string(), |p| {
                    format!("a run continued from {} (step {})", p.file, p.step)
                });
                bail!(
                    "{} holds {holds}, not one from {}: --from starts a new run (name a new --run folder, or leave \
                     --from out to resume this one)",
                    models.display(),
                    from.name
                )
            }
        }
    }
}

/// All the compute behind a checkpoint; for one written before lineages,
/// its own run's counters, its hours unknown (0).
fn compute_behind(meta: &CheckpointMeta) -> Compute {
    match &meta.lineage {
        Some(lineage) => lineage.total(),
        None => Compute {
            hours: 0.0,
            steps: meta.step,
            samples_drawn: meta.samples_drawn,
            samples_read: meta.samples_read.unwrap_or(0),
        },
    }
}
