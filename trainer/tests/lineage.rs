//! Runs continued from a model (`--from`): the parent's weights and
//! optimizer state, the lineage in the descriptions, and the refusals.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gipf::checkpoint::{read_meta, Compute};
use gipf::train::{ParentModel, Trainer};
use tch::{Device, Tensor};

use crate::train::{games, tiny, window};

/// The tensors of a safetensors file, by name.
fn tensors(path: &Path) -> BTreeMap<String, Tensor> {
    Tensor::read_safetensors(path).unwrap().into_iter().collect()
}

fn assert_same_tensors(a: &Path, b: &Path) {
    let (a_tensors, b_tensors) = (tensors(a), tensors(b));
    assert_eq!(a_tensors.keys().collect::<Vec<_>>(), b_tensors.keys().collect::<Vec<_>>());
    for (name, tensor) in &a_tensors {
        assert!(tensor.equal(&b_tensors[name]), "{name} differs between {} and {}", a.display(), b.display());
    }
}

/// A parent checkpoint trained for `steps` steps on real games, so that its
/// momentum is not zero; its weights file.
fn trained_parent(models: &Path, steps: u64) -> PathBuf {
    let games = games(4);
    let window = window(games.path());
    let mut trainer = Trainer::new(&tiny(), Device::Cpu, 3);
    let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(1);
    for _ in 0..steps {
        trainer.train_step(&window.batch(32, &mut rng)).unwrap();
    }
    trainer.samples_read = 500;
    trainer.save(models).unwrap()
}

fn parent(weights: &Path) -> ParentModel {
    ParentModel { name: weights.display().to_string(), weights: weights.to_path_buf() }
}

/// A new run starts from the parent's weights and momentum, its own counters
/// at zero, and its descriptions name the parent and carry its compute
/// forward, generation after generation.
#[test]
fn a_run_from_a_checkpoint_starts_with_its_weights_and_optimizer_state() {
    let dir = tempfile::tempdir().unwrap();
    let weights = trained_parent(&dir.path().join("parent"), 3);
    let child = Trainer::from_parent(&tiny(), &parent(&weights), Device::Cpu).unwrap();
    assert_eq!((child.step, child.samples_drawn, child.samples_read), (0, 0, 0));
    let saved = child.save(&dir.path().join("child")).unwrap();
    assert_same_tensors(&saved, &weights);
    assert_same_tensors(&saved.with_extension("optim"), &weights.with_extension("optim"));
    let momentum = tensors(&weights.with_extension("optim"));
    assert!(momentum.values().any(|m| m.abs().sum(tch::Kind::Float).double_value(&[]) > 0.0), "trained momentum");

    let lineage = read_meta(&saved).unwrap().lineage.unwrap();
    let from = lineage.parent.as_ref().unwrap();
    assert_eq!((from.file.as_str(), from.step), (weights.to_str().unwrap(), 3));
    assert_eq!(from.sha256, gipf::durable::sha256_hex(&std::fs::read(&weights).unwrap()));
    let parent_total = read_meta(&weights).unwrap().lineage.unwrap().total();
    assert_eq!((parent_total.steps, parent_total.samples_drawn, parent_total.samples_read), (3, 96, 500));
    assert_eq!(lineage.inherited, parent_total);
    assert_eq!((lineage.run.steps, lineage.run.samples_drawn), (0, 0));
    assert!(!lineage.machine.is_empty());

    // The grandchild inherits both runs' compute.
    let mut child = child;
    child.step = 7;
    child.samples_drawn = 224;
    let child_weights = child.save(&dir.path().join("child")).unwrap();
    let grandchild = Trainer::from_parent(&tiny(), &parent(&child_weights), Device::Cpu).unwrap();
    let inherited = grandchild.lineage_now().inherited;
    assert_eq!((inherited.steps, inherited.samples_drawn, inherited.samples_read), (10, 320, 500));
    assert!(inherited.hours >= parent_total.hours);
}

/// A model without optimizer state (the reference, an exported checkpoint)
/// starts the run with its weights and no momentum.
#[test]
fn a_run_from_weights_alone_starts_with_no_momentum() {
    let dir = tempfile::tempdir().unwrap();
    let weights = trained_parent(&dir.path().join("parent"), 2);
    std::fs::remove_file(weights.with_extension("optim")).unwrap();
    let child = Trainer::from_parent(&tiny(), &parent(&weights), Device::Cpu).unwrap();
    let saved = child.save(&dir.path().join("child")).unwrap();
    assert_same_tensors(&saved, &weights);
    for (name, momentum) in tensors(&saved.with_extension("optim")) {
        assert_eq!(momentum.abs().sum(tch::Kind::Float).double_value(&[]), 0.0, "{name}");
    }
}

/// A parent of another network shape or variant than the config's is a
/// clear error.
#[test]
fn a_parent_of_another_shape_or_variant_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let weights = Trainer::new(&tiny(), Device::Cpu, 1).save(dir.path()).unwrap();
    let mut wider = tiny();
    wider.network.channels = 16;
    let Err(err) = Trainer::from_parent(&wider, &parent(&weights), Device::Cpu) else { panic!("started") };
    let err = format!("{err:#}");
    assert!(err.contains("give the config its network shape") && err.contains("differs from the config's"), "{err}");
    assert!(err.contains("train.grow_network"), "{err}");
    let mut basic = tiny();
    basic.game.variant = gipf::rules::Variant::Basic;
    let Err(err) = Trainer::from_parent(&basic, &parent(&weights), Device::Cpu) else { panic!("started") };
    assert!(format!("{err:#}").contains("it plays the standard variant and the config the basic"), "{err:#}");
}

/// A run resumed with a config of another variant is refused, as `--from`
/// refuses it: its checkpoints would say the new variant with no parent,
/// and self-play of one variant would start from a network of the other.
#[test]
fn a_run_resumed_with_another_variant_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    Trainer::new(&tiny(), Device::Cpu, 1).save(dir.path()).unwrap();
    let mut basic = tiny();
    basic.game.variant = gipf::rules::Variant::Basic;
    let Err(err) = Trainer::resume_or_new(&basic, dir.path(), Device::Cpu, 1) else { panic!("resumed as basic") };
    let found = gipf::error::LoadError::find(&err);
    assert!(found.is_some_and(|e| e.is_incompatible()), "an incompatible checkpoint, not a damaged one: {err:#}");
    let err = format!("{err:#}");
    assert!(err.contains("it plays the standard variant and the config the basic"), "{err}");
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(!names.iter().any(|n| n.starts_with(".damaged")), "nothing set aside: the checkpoint is whole: {names:?}");
    assert!(Trainer::resume_or_new(&tiny(), dir.path(), Device::Cpu, 1).is_ok());
}

/// A parent whose lineage counts are each in range but would not add up
/// (a count near 2^64, hours whose sum passes the bound) is refused at
/// `--from`, the field named, instead of a child that wraps its counts or
/// writes a checkpoint it then refuses on every start.
#[test]
fn a_parent_whose_lineage_does_not_add_up_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let weights = Trainer::new(&tiny(), Device::Cpu, 1).save(dir.path()).unwrap();
    let description = weights.with_extension("json");
    let whole: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&description).unwrap()).unwrap();
    let cases = [
        (vec![("/lineage/inherited/steps", serde_json::json!(u64::MAX))], "steps"),
        (vec![("/lineage/inherited/samples_read", serde_json::json!(u64::MAX - 1))], "samples_read"),
        (
            vec![("/lineage/inherited/hours", serde_json::json!(6e6)), ("/lineage/run/hours", serde_json::json!(6e6))],
            "hours",
        ),
    ];
    for (changes, field) in cases {
        let mut damaged = whole.clone();
        for (pointer, value) in changes {
            *damaged.pointer_mut(pointer).unwrap() = value;
        }
        std::fs::write(&description, damaged.to_string()).unwrap();
        let Err(err) = Trainer::from_parent(&tiny(), &parent(&weights), Device::Cpu) else {
            panic!("a parent with {field} past the bound started a run")
        };
        let err = format!("{err:#}");
        assert!(err.contains("lineage") && err.contains(field), "{field}: {err}");
    }
}

/// `configs/lineage.toml` continues the shipped model: its network is the
/// reference's shape, so that `gipf loop --from reference --config
/// configs/lineage.toml` starts (a promotion to another shape must update it).
#[test]
fn the_lineage_config_continues_the_shipped_model() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let config = gipf::config::Config::load(&root.join("configs/lineage.toml")).unwrap();
    let reference = root.join("models/reference.safetensors");
    assert_eq!(config.network, read_meta(&reference).unwrap().network);
    let child = Trainer::from_parent(&config, &parent(&reference), Device::Cpu).unwrap();
    assert!(child.lineage.parent.is_some());
}

/// With `train.grow_network`, a smaller parent grows into the config's
/// network: it plays as the parent did, its lineage names the parent, and it
/// trains; a smaller config than the parent is still refused.
#[test]
fn a_smaller_parent_grows_into_the_configs_network() {
    let dir = tempfile::tempdir().unwrap();
    let weights = trained_parent(&dir.path().join("parent"), 3);
    let mut larger = tiny();
    larger.train.grow_network = true;
    (larger.network.blocks, larger.network.channels) = (tiny().network.blocks + 1, tiny().network.channels * 2);
    let mut child = Trainer::from_parent(&larger, &parent(&weights), Device::Cpu).unwrap();
    assert_eq!(*child.network.config(), larger.network);
    assert_eq!(child.lineage.parent.as_ref().unwrap().step, 3);
    let parent_network = gipf::net::Network::load(&weights, &tiny().network, Device::Cpu).unwrap();
    let input = vec![0.5f32; gipf::encoding::INPUT_SIZE * 3];
    let ((a_logits, a_values), (b_logits, b_values)) =
        (parent_network.infer(&input, 3), child.network.infer(&input, 3));
    let gap = a_logits.iter().chain(&a_values).zip(b_logits.iter().chain(&b_values)).map(|(a, b)| (a - b).abs());
    assert!(gap.fold(0.0f32, f32::max) < 1e-4, "the grown network plays as its parent");
    let games = games(2);
    let window = window(games.path());
    let mut rng = <rand::rngs::SmallRng as rand::SeedableRng>::seed_from_u64(1);
    child.train_step(&window.batch(16, &mut rng)).unwrap();
    let saved = child.save(&dir.path().join("child")).unwrap();
    assert_eq!(read_meta(&saved).unwrap().network, larger.network);

    let mut smaller = tiny();
    (smaller.train.grow_network, smaller.network.value_hidden) = (true, tiny().network.value_hidden / 2);
    let Err(err) = Trainer::from_parent(&smaller, &parent(&weights), Device::Cpu) else { panic!("shrunk") };
    assert!(format!("{err:#}").contains("a network grows only"), "{err:#}");
}

/// Started again with the same `--from`, a run resumes where it stopped;
/// with another model, or on a run from zero, `--from` is refused.
#[test]
fn a_continued_run_resumes_and_refuses_another_parent() {
    let dir = tempfile::tempdir().unwrap();
    let first = Trainer::new(&tiny(), Device::Cpu, 1).save(&dir.path().join("a")).unwrap();
    let second = Trainer::new(&tiny(), Device::Cpu, 2).save(&dir.path().join("b")).unwrap();
    let models = dir.path().join("run/models");
    let mut trainer = Trainer::resume_or_from(&tiny(), &models, Some(&parent(&first)), Device::Cpu, 1).unwrap();
    trainer.step = 4;
    trainer.save(&models).unwrap();
    let resumed = Trainer::resume_or_from(&tiny(), &models, Some(&parent(&first)), Device::Cpu, 1).unwrap();
    assert_eq!(resumed.step, 4);
    assert_eq!(resumed.lineage.parent.as_ref().unwrap().step, 0);
    let Err(err) = Trainer::resume_or_from(&tiny(), &models, Some(&parent(&second)), Device::Cpu, 1) else {
        panic!("resumed with another parent")
    };
    let err = format!("{err:#}");
    assert!(err.contains("holds a run continued from") && err.contains("--from starts a new run"), "{err}");
    let from_zero = dir.path().join("a");
    let Err(err) = Trainer::resume_or_from(&tiny(), &from_zero, Some(&parent(&second)), Device::Cpu, 1) else {
        panic!("resumed a run from zero")
    };
    assert!(format!("{err:#}").contains("holds a run from zero"), "{err:#}");
}

/// A resumed run's hours go on from its checkpoint's.
#[test]
fn a_resumed_run_counts_its_hours_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut trainer = Trainer::new(&tiny(), Device::Cpu, 1);
    trainer.lineage.run = Compute { hours: 1.5, ..Compute::default() };
    let weights = trainer.save(dir.path()).unwrap();
    let hours = read_meta(&weights).unwrap().lineage.unwrap().run.hours;
    assert!((1.5..1.6).contains(&hours), "{hours}");
    let resumed = Trainer::resume_or_new(&tiny(), dir.path(), Device::Cpu, 1).unwrap();
    assert!(resumed.lineage_now().run.hours >= hours);
}

/// `train.lr_drop_after_hours`: the rate drops once the run (its hours
/// counted across restarts) has trained that long.
#[test]
fn the_rate_drops_late_in_a_timed_run() {
    let mut config = tiny();
    config.train.lr_drop_after_hours = 1.0;
    let mut trainer = Trainer::new(&config, Device::Cpu, 1);
    assert_eq!(trainer.learning_rate(), config.train.learning_rate);
    trainer.lineage.run.hours = 1.0;
    assert!((trainer.learning_rate() - config.train.learning_rate * config.train.lr_drop_factor).abs() < 1e-12);
    config.train.lr_drop_after_hours = 0.0;
    assert_eq!(Trainer::new(&config, Device::Cpu, 1).learning_rate(), config.train.learning_rate);
}
