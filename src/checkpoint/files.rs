//! The names of a checkpoint's files (`step-NNNNNNNN.json`, `.optim`,
//! `.safetensors`) and the retention rule that decides which checkpoints a
//! models folder keeps, locally or in a store: plain rules, with no I/O.

use std::path::Path;

use anyhow::Result;

/// A checkpoint's files, by extension: its description, its optimizer
/// state, its weights.
pub const PARTS: [&str; 3] = ["json", "optim", "safetensors"];

/// The name of the trainer's checkpoint files at `step`, without extension.
pub fn checkpoint_stem(step: u64) -> String {
    format!("step-{step:08}")
}

/// Accepts only the names the trainer gives a checkpoint's files,
/// `step-NNNNNNNN.json`, `.optim` or `.safetensors` (eight digits or more):
/// a name read from a store or a file becomes a local path only if it
/// passes, so that it cannot reach outside its folder.
pub fn check_file_name(name: &str) -> Result<()> {
    let stem_ext = name.strip_prefix("step-").and_then(|rest| rest.split_once('.'));
    let fits = stem_ext.is_some_and(|(digits, ext)| {
        digits.len() >= 8 && digits.bytes().all(|b| b.is_ascii_digit()) && PARTS.contains(&ext)
    });
    anyhow::ensure!(fits, "{name:?} is not the name of a checkpoint file (step-NNNNNNNN.json, .optim or .safetensors)");
    Ok(())
}

/// The step of a checkpoint weights file named `step-NNNNNNNN.safetensors`.
pub fn step_of(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    let digits = name.strip_prefix("step-")?.strip_suffix(".safetensors")?;
    let fits = digits.len() >= 8 && digits.bytes().all(|b| b.is_ascii_digit());
    fits.then(|| digits.parse().ok()).flatten()
}

/// The order in which a removed checkpoint's files go: the weights first,
/// so that no reader finds weights without the rest of their checkpoint.
const REMOVAL_ORDER: [&str; 3] = ["safetensors", "json", "optim"];

/// What the retention policy does to a models folder holding the
/// checkpoints `steps`: keeps the newest `keep_last`, of the older ones the
/// first of every `keep_every_steps` steps, and `protected` (the best one,
/// or the one `latest.json` names); removes the others, and the optimizer
/// state of every kept one but the newest `keep_last`, which alone can be
/// resumed from. `keep_last = 0` keeps everything.
#[derive(Debug, Default, PartialEq)]
pub struct Retention {
    /// Checkpoints to remove.
    pub remove: Vec<u64>,
    /// Checkpoints kept without their optimizer state.
    pub drop_optimizer: Vec<u64>,
}

impl Retention {
    /// The plan for a folder holding the checkpoints `steps` (in any order).
    pub fn plan(steps: &[u64], keep_last: usize, keep_every_steps: u64, protected: Option<u64>) -> Retention {
        let mut plan = Retention::default();
        if keep_last == 0 {
            return plan;
        }
        let mut steps = steps.to_vec();
        steps.sort();
        let newest_from = steps.len().saturating_sub(keep_last);
        let mut last_bucket = None;
        for &step in &steps[..newest_from] {
            let bucket = (keep_every_steps > 0).then(|| step / keep_every_steps);
            let first_of_bucket = bucket.is_some() && bucket != last_bucket;
            last_bucket = bucket.or(last_bucket);
            match first_of_bucket || protected == Some(step) {
                true => plan.drop_optimizer.push(step),
                false => plan.remove.push(step),
            }
        }
        plan
    }

    /// The names of the files to remove, in order, locally and in a store:
    /// each removed checkpoint's (weights first), then the optimizer state of
    /// those kept without it.
    pub fn files(&self) -> impl Iterator<Item = String> + '_ {
        let removals = self.remove.iter().flat_map(|&step| REMOVAL_ORDER.map(|ext| (step, ext)));
        let optimizers = self.drop_optimizer.iter().map(|&step| (step, "optim"));
        removals.chain(optimizers).map(|(step, ext)| format!("{}.{ext}", checkpoint_stem(step)))
    }
}
