//! Checkpoints, the one home of their format. A checkpoint `step-NNNNNNNN`
//! in a models folder is three files: the weights (`.safetensors`), the
//! optimizer's state (`.optim`) and a description (`.json`,
//! [`CheckpointMeta`]). Here: the description and its format, loading a
//! checkpoint (or the newest one that loads), the best one, retention in a
//! folder, and the reference model built into the program; `files`, the
//! names of the files and the retention rule (no I/O); `write`, writing a
//! checkpoint (every part under a temporary name before any is published)
//! and reading its optimizer state; `remote`, the same files in an object
//! store with `latest.json` naming the newest (publishing, pruning,
//! downloading). `model_source` picks which checkpoint a player plays;
//! `weights` checks any weights file read.

pub mod files;
mod remote;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use tch::Device;

use crate::encoding::ENCODING_VERSION;
use crate::error::LoadError;
use crate::net::{NetConfig, Network};
use crate::rules::Variant;
use files::{check_file_name, step_of, Retention};

pub use remote::{fetch_checkpoint, Latest, LATEST_FILE};
pub(crate) use write::{read_optimizer_state, set_aside, write, WeightsToWrite, TRAINED};

/// Changes whenever the checkpoint description's fields change (the test
/// `the_format_number_pins_the_descriptions_fields` lists them), so that an
/// older program refuses a newer description as incompatible instead of
/// taking it for damage; this program writes it and reads every format
/// from 1. Format 3 added `network.value_pooling` and `network.aux_targets`;
/// format 4, `lineage`.
pub const CHECKPOINT_FORMAT: u32 = 4;

/// The JSON beside a checkpoint's weights (`step-NNNNNNNN.json`). `config`
/// is provenance (the configuration that trained it, never checked again);
/// what a reader needs is in the other fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// Absent in format 1.
    #[serde(default = "first_format")]
    pub format: u32,
    /// The training step it was written at.
    pub step: u64,
    /// Samples drawn by training so far.
    #[serde(rename = "samples_seen")]
    pub samples_drawn: u64,
    /// The version of the input encoding it was trained on
    /// ([`crate::encoding::ENCODING_VERSION`]).
    pub encoding_version: u32,
    /// The network's shape.
    pub network: NetConfig,
    /// The variant it plays (format 2; format 1 has it in `config` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
    /// Samples read from self-play so far (format 2), for pacing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_read: Option<u64>,
    /// The newest games file read (format 2): a restarted trainer reads
    /// only the files after it and those its window needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub games_cursor: Option<String>,
    /// The newest shard read of each worker: a worker's older shards were
    /// all read, however late they came (see [`crate::train::GamesRead`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub games_newest_by_worker: BTreeMap<String, String>,
    /// The games files read within [`crate::shards::LATE`] before their
    /// worker's newest (format 2): a file named in that span but not here
    /// arrived late and is new to a restarted trainer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub games_recent: Vec<String>,
    /// Where the weights came from and the compute behind them (format 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<Lineage>,
    /// The configuration that trained it (provenance only).
    pub config: serde_json::Value,
}

/// Where a checkpoint's weights came from and the compute behind them: a
/// run continued from a model (`gipf loop --from`) names it as its parent
/// and carries the parent's compute forward, so that every checkpoint of a
/// lineage knows the whole training behind it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lineage {
    /// The model the run started from; none for a run from zero.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<Parent>,
    /// The compute behind the parent, its whole ancestry included.
    pub inherited: Compute,
    /// This run's own compute, up to this checkpoint.
    pub run: Compute,
    /// The machines this run trained on (CPU model, cores, bf16 units).
    pub machine: String,
}

/// The model a run started from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parent {
    /// As it was named (`reference`, or the weights file's path).
    pub file: String,
    /// Its training step.
    pub step: u64,
    /// Of its weights file, which tells two parents of the same name apart.
    pub sha256: String,
}

/// Training compute: wall-clock hours of the trainer and what it did in them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compute {
    /// Wall-clock hours of the trainer.
    pub hours: f64,
    /// Training steps taken.
    pub steps: u64,
    /// Samples those steps drew.
    pub samples_drawn: u64,
    /// Samples read from self-play.
    pub samples_read: u64,
}

/// The most hours a lineage's compute may count.
pub const MAX_HOURS: f64 = 1e7;
/// The largest count a lineage's compute may hold: 2^53, exact in the f64
/// of JSON readers, and two of them add up without wrapping.
pub const MAX_COUNT: u64 = 1 << 53;

impl Compute {
    /// Both together (saturating: a description's counts are bounded where it
    /// is read, see [`Compute::check`], so that their sums are exact).
    pub fn plus(&self, other: &Compute) -> Compute {
        Compute {
            hours: self.hours + other.hours,
            steps: self.steps.saturating_add(other.steps),
            samples_drawn: self.samples_drawn.saturating_add(other.samples_drawn),
            samples_read: self.samples_read.saturating_add(other.samples_read),
        }
    }

    /// Each count within its bound ([`MAX_HOURS`], [`MAX_COUNT`]); the first
    /// that is not, named after `what`.
    pub fn check(&self, what: &str) -> Result<(), String> {
        if !(0.0..MAX_HOURS).contains(&self.hours) {
            return Err(format!("{what}.hours = {} (at most {MAX_HOURS})", self.hours));
        }
        let counts =
            [("steps", self.steps), ("samples_drawn", self.samples_drawn), ("samples_read", self.samples_read)];
        match counts.into_iter().find(|(_, n)| *n > MAX_COUNT) {
            Some((name, n)) => Err(format!("{what}.{name} = {n} (at most 2^53)")),
            None => Ok(()),
        }
    }
}

impl Lineage {
    /// All the compute behind the checkpoint: its ancestry's and its run's.
    pub fn total(&self) -> Compute {
        self.inherited.plus(&self.run)
    }
}

fn first_format() -> u32 {
    1
}

impl CheckpointMeta {
    /// The variant the checkpoint plays (`None`: the description names none).
    pub fn variant(&self) -> Option<Variant> {
        if let Some(variant) = self.variant {
            return Some(variant);
        }
        let old = self.config.pointer("/selfplay/variant").cloned().unwrap_or_default();
        serde_json::from_value(old).ok()
    }
}

#[derive(Deserialize)]
struct FormatOnly {
    #[serde(default = "first_format")]
    format: u32,
}

/// Reads the description beside a weights file, checking its format and
/// encoding version. A missing description or one that is not JSON is
/// damage; JSON of fields this program does not know is incompatible
/// ([`LoadError::Fields`]).
pub fn read_meta(weights: &Path) -> Result<CheckpointMeta, LoadError> {
    let path = weights.with_extension("json");
    match std::fs::read_to_string(&path) {
        Ok(text) => CheckpointMeta::parse(&text, &path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(LoadError::Missing { path }),
        Err(e) => Err(LoadError::Unreadable { path, source: e }),
    }
}

impl CheckpointMeta {
    /// Reads a description's text (from the file `path`, for the errors),
    /// checking its format and encoding version.
    pub fn parse(text: &str, path: &Path) -> Result<CheckpointMeta, LoadError> {
        let damaged = |why: String| LoadError::Damaged { path: path.into(), why };
        // What serde refuses is damage, unless it is JSON of other fields.
        let refused = |e: serde_json::Error| match e.classify() {
            serde_json::error::Category::Data => LoadError::Fields { path: path.into(), why: e.to_string() },
            _ => damaged(format!("not a checkpoint description ({e})")),
        };
        let found = serde_json::from_str::<FormatOnly>(text).map_err(refused)?.format;
        if !(1..=CHECKPOINT_FORMAT).contains(&found) {
            return Err(LoadError::Format { path: path.into(), found, newest: CHECKPOINT_FORMAT });
        }
        let meta: CheckpointMeta = serde_json::from_str(text).map_err(refused)?;
        // A shape out of bounds would make LibTorch allocate without limit.
        if let Err(e) = meta.network.validate() {
            return Err(damaged(format!("the description's network shape: {e}")));
        }
        if let Some(lineage) = &meta.lineage {
            let counts = [
                ("lineage.inherited", lineage.inherited),
                ("lineage.run", lineage.run),
                ("lineage (inherited + run)", lineage.total()),
            ];
            if let Some(why) = counts.iter().find_map(|(what, compute)| compute.check(what).err()) {
                return Err(damaged(format!("the description's {why}")));
            }
        }
        if meta.encoding_version != ENCODING_VERSION {
            let found = meta.encoding_version;
            return Err(LoadError::Encoding { path: path.into(), found, expected: ENCODING_VERSION });
        }
        Ok(meta)
    }
}

/// Loads a checkpoint's network, its shape taken from the description beside it.
pub fn load_checkpoint(weights: &Path, device: Device) -> Result<(Network, CheckpointMeta), LoadError> {
    if !weights.exists() {
        return Err(LoadError::Missing { path: weights.into() });
    }
    let meta = read_meta(weights)?;
    let network = Network::load(weights, &meta.network, device)?;
    Ok((network, meta))
}

/// Loads a checkpoint's network ready for play: its batch norms folded,
/// its forward passes as `inference` says (see [`Network::prepare_for_play`]).
pub fn load_for_play(
    weights: &Path,
    device: Device,
    inference: crate::net::Inference,
) -> Result<(Network, CheckpointMeta)> {
    let (mut network, meta) = load_checkpoint(weights, device)?;
    network.prepare_for_play(inference)?;
    Ok((network, meta))
}

/// The newest checkpoint in `dir` by step, or `None` when there is none yet.
pub fn newest_checkpoint(dir: &Path) -> Result<Option<PathBuf>> {
    Ok(checkpoints_newest_first(dir)?.into_iter().next())
}

/// The checkpoints' weights files of a models folder
/// (`step-NNNNNNNN.safetensors`), newest first by step: other names, such as
/// temporaries, damaged checkpoints set aside or a file another tool left
/// there, are not checkpoints.
pub fn checkpoints_newest_first(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list model folder {}", dir.display()))?;
    let mut found = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if let Some(step) = step_of(&path) {
            found.push((step, path));
        }
    }
    found.sort_by(|a, b| b.cmp(a));
    Ok(found.into_iter().map(|(_, path)| path).collect())
}

/// Loads the checkpoint `weights`, or when it cannot be loaded (cut short,
/// empty, damaged) the newest older one of its folder that can, with a
/// warning naming each one passed over.
pub fn load_checkpoint_or_older(weights: &Path, device: Device) -> Result<(Network, CheckpointMeta, PathBuf)> {
    let first = match load_checkpoint(weights, device) {
        Ok((network, meta)) => return Ok((network, meta, weights.to_path_buf())),
        Err(e) if e.is_incompatible() => return Err(e.into()),
        Err(e) => anyhow::Error::new(e),
    };
    tracing::warn!("{}: cannot be loaded ({first:#}); trying the checkpoint before it", weights.display());
    let folder = weights.parent().unwrap_or(Path::new("."));
    let step = step_of(weights);
    let older = checkpoints_newest_first(folder)?.into_iter().filter(|p| step.is_some() && step_of(p) < step);
    for older in older {
        match load_checkpoint(&older, device) {
            Ok((network, meta)) => {
                tracing::warn!("using {} instead", older.display());
                return Ok((network, meta, older));
            }
            Err(e) => tracing::warn!("{}: cannot be loaded either ({:#})", older.display(), anyhow::Error::new(e)),
        }
    }
    Err(first).with_context(|| format!("no checkpoint of {} up to this one can be loaded", folder.display()))
}

/// The reference model's name as a player (`reference`, `reference@250ms`).
pub const REFERENCE: &str = "reference";

/// The reference model (`models/reference.*`: a checkpoint of a default
/// run; its card with its strength is `models/README.md`), built into the
/// program: what play, the engine and the arena use when no checkpoint is
/// named. Written once into the per-user cache (under the sha256 of its
/// files, so that a new reference never meets an old copy), so that a
/// binary run from any folder has it.
pub fn reference_checkpoint() -> Result<PathBuf> {
    const WEIGHTS: &[u8] = include_bytes!("../../models/reference.safetensors");
    const DESCRIPTION: &[u8] = include_bytes!("../../models/reference.json");
    let key = crate::durable::sha256_hex(&[WEIGHTS, DESCRIPTION].concat());
    let dir = crate::cache_dir().join(REFERENCE).join(&key[..16]);
    let weights = dir.join("reference.safetensors");
    if !weights.is_file() {
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        // The weights last: present weights mean a whole checkpoint.
        crate::durable::write_atomic(&weights.with_extension("json"), DESCRIPTION)?;
        crate::durable::write_atomic(&weights, WEIGHTS)?;
    }
    Ok(weights)
}

/// The file in a models folder naming the checkpoint that passed the gate
/// (when the loop gates new checkpoints on the arena).
pub const BEST_FILE: &str = "best.json";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Best {
    checkpoint: String,
}

/// The checkpoint named in `dir/best.json`, if that file exists.
pub fn best_checkpoint(dir: &Path) -> Result<Option<PathBuf>> {
    let path = dir.join(BEST_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let best: Best =
        serde_json::from_str(&text).with_context(|| format!("{}: not a best-checkpoint file", path.display()))?;
    check_file_name(&best.checkpoint).with_context(|| path.display().to_string())?;
    anyhow::ensure!(best.checkpoint.ends_with(".safetensors"), "{} names no weights file", path.display());
    let weights = dir.join(&best.checkpoint);
    anyhow::ensure!(weights.is_file(), "{} names {}, which does not exist", path.display(), weights.display());
    Ok(Some(weights))
}

/// Records `weights` (a file in `dir`) as the best checkpoint.
pub fn set_best_checkpoint(dir: &Path, weights: &Path) -> Result<()> {
    let checkpoint = weights.file_name().context("a checkpoint has a file name")?.to_string_lossy().into_owned();
    Ok(crate::durable::write_atomic(&dir.join(BEST_FILE), serde_json::to_string(&Best { checkpoint })?.as_bytes())?)
}

/// Applies the retention policy ([`Retention`]) to a models folder, the
/// best checkpoint (`best.json`) protected, in the order of
/// [`Retention::files`]. Returns the steps removed.
pub fn prune(dir: &Path, keep_last: usize, keep_every_steps: u64) -> Result<Vec<u64>> {
    if keep_last == 0 {
        return Ok(Vec::new());
    }
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot list model folder {}", dir.display()))?;
    let steps: Vec<u64> = entries.filter_map(|e| e.ok()).filter_map(|e| step_of(&e.path())).collect();
    let best = best_checkpoint(dir)?.as_deref().and_then(step_of);
    let plan = Retention::plan(&steps, keep_last, keep_every_steps, best);
    let remove_file = |path: PathBuf| match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    };
    for name in plan.files() {
        remove_file(dir.join(name))?;
    }
    crate::durable::sync_folder(dir)?;
    Ok(plan.remove)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_keeps_the_newest_every_nth_and_the_best() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path();
        let stem = |step: u64| models.join(format!("step-{step:08}"));
        for step in (0..=100).step_by(10) {
            for ext in files::PARTS {
                std::fs::write(stem(step).with_extension(ext), b"x").unwrap();
            }
        }
        set_best_checkpoint(models, &stem(30).with_extension("safetensors")).unwrap();
        let removed = prune(models, 3, 40).unwrap();
        assert_eq!(removed, vec![10, 20, 50, 60, 70]);
        for step in (0..=100).step_by(10) {
            let kept = [0, 30, 40, 80, 90, 100].contains(&step);
            assert_eq!(stem(step).with_extension("safetensors").exists(), kept, "step {step}");
            assert_eq!(stem(step).with_extension("json").exists(), kept, "step {step}");
            assert_eq!(stem(step).with_extension("optim").exists(), step >= 80, "step {step}");
        }
        assert_eq!(prune(models, 3, 40).unwrap(), Vec::<u64>::new(), "pruning again removes nothing");
        assert_eq!(prune(models, 0, 0).unwrap(), Vec::<u64>::new(), "keep_last = 0 keeps everything");
    }

    #[test]
    fn a_missing_or_foreign_description_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let weights = dir.path().join("w.safetensors");
        let err = load_checkpoint(&weights, Device::Cpu).err().unwrap();
        assert!(matches!(&err, LoadError::Missing { path } if *path == weights), "{err:?}");
        std::fs::write(&weights, b"w").unwrap();
        let err = load_checkpoint(&weights, Device::Cpu).err().unwrap();
        assert!(matches!(&err, LoadError::Missing { path } if path.ends_with("w.json")), "{err:?}");
        assert!(err.is_damaged() && err.to_string().ends_with("w.json: does not exist"), "{err}");
        std::fs::write(dir.path().join("w.json"), r#"{"step": 1}"#).unwrap();
        let err = load_checkpoint(&weights, Device::Cpu).err().unwrap();
        assert!(matches!(err, LoadError::Fields { .. }) && err.is_incompatible(), "{err:?}");
        assert!(err.to_string().contains("not a checkpoint description"), "{err}");
        std::fs::write(dir.path().join("w.json"), r#"{"step": 1"#).unwrap();
        let err = load_checkpoint(&weights, Device::Cpu).err().unwrap();
        assert!(matches!(err, LoadError::Damaged { .. }), "JSON cut short is damage: {err:?}");
    }

    #[test]
    fn only_the_trainers_checkpoint_names_become_paths() {
        for good in ["step-00000010.safetensors", "step-00000010.json", "step-123456789.optim"] {
            check_file_name(good).unwrap();
        }
        for bad in [
            "/home/u/.bashrc",
            "a/../../x",
            "../step-00000010.json",
            "step-00000010.safetensors/../../x",
            "step-0001.json",
            "step-00000010.sh",
            "step-0000001x.json",
            "",
        ] {
            let err = format!("{:#}", check_file_name(bad).unwrap_err());
            assert!(err.contains("is not the name of a checkpoint file"), "{bad}: {err}");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(BEST_FILE), r#"{"checkpoint": "../../etc/passwd"}"#).unwrap();
        let err = format!("{:#}", best_checkpoint(dir.path()).unwrap_err());
        assert!(err.contains("best.json: \"../../etc/passwd\" is not the name of a checkpoint file"), "{err}");
    }

    /// A description asking for a huge (or empty) network is refused before
    /// LibTorch allocates anything.
    #[test]
    fn a_description_with_a_network_shape_out_of_bounds_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let weights = dir.path().join("step-00000001.safetensors");
        std::fs::write(&weights, b"w").unwrap();
        let shapes = [
            (1_000_000, 64, "network.blocks = 1000000"),
            (0, 64, "network.blocks = 0"),
            (4, 1 << 40, "network.channels"),
        ];
        for (blocks, channels, named) in shapes {
            let meta = CheckpointMeta {
                format: CHECKPOINT_FORMAT,
                step: 1,
                samples_drawn: 0,
                encoding_version: ENCODING_VERSION,
                network: NetConfig { blocks, channels, value_hidden: 32, ..crate::net::TINY },
                variant: Some(Variant::Standard),
                samples_read: None,
                games_cursor: None,
                games_newest_by_worker: BTreeMap::new(),
                games_recent: Vec::new(),
                lineage: None,
                config: serde_json::Value::Null,
            };
            std::fs::write(weights.with_extension("json"), serde_json::to_string(&meta).unwrap()).unwrap();
            let err = load_checkpoint(&weights, Device::Cpu).err().unwrap();
            assert!(matches!(&err, LoadError::Damaged { why, .. } if why.contains(named)), "{err:?}");
            assert!(err.to_string().contains("the description's network shape"), "{err}");
        }
    }
    /// The description's fields as this program writes them: a change to
    /// this list is a new format, so bump [`CHECKPOINT_FORMAT`] with it
    /// (an older program then refuses the new descriptions as incompatible
    /// instead of taking them for damage).
    #[test]
    fn the_format_number_pins_the_descriptions_fields() {
        let meta = CheckpointMeta {
            format: CHECKPOINT_FORMAT,
            step: 1,
            samples_drawn: 1,
            encoding_version: ENCODING_VERSION,
            network: NetConfig { value_pooling: true, aux_targets: true, ..crate::net::TINY },
            variant: Some(Variant::Standard),
            samples_read: Some(1),
            games_cursor: Some("a".into()),
            games_newest_by_worker: BTreeMap::from([("w".into(), "a".into())]),
            games_recent: vec!["a".into()],
            lineage: Some(Lineage::default()),
            config: serde_json::Value::Null,
        };
        let value = serde_json::to_value(&meta).unwrap();
        let mut fields = Vec::new();
        for (key, value) in value.as_object().unwrap() {
            match value.as_object().filter(|_| key == "network") {
                Some(network) => fields.extend(network.keys().map(|k| format!("network.{k}"))),
                None => fields.push(key.clone()),
            }
        }
        fields.sort();
        let format_4 = [
            "config",
            "encoding_version",
            "format",
            "games_cursor",
            "games_newest_by_worker",
            "games_recent",
            "lineage",
            "network.aux_targets",
            "network.blocks",
            "network.channels",
            "network.value_hidden",
            "network.value_pooling",
            "samples_read",
            "samples_seen",
            "step",
            "variant",
        ];
        assert_eq!((CHECKPOINT_FORMAT, fields), (4, format_4.map(String::from).to_vec()));
    }
}
