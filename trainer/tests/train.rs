//! Training on real self-play games from a tiny network on the CPU.

use std::path::{Path, PathBuf};
use std::process::Command;

use gipf::config::Config;
use gipf::encoding::INPUT_SIZE;
use gipf::model_source::ModelSource;
use gipf::samples::{game_samples, Targets};
use gipf::selfplay::{self, PlayOptions};
use gipf::shards;
use gipf::train::{train_steps, DeviceBatch, GamesSource, Logs, StepSums, Trainer, Window};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use tch::Device;

pub fn tiny() -> Config {
    Config::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tiny.toml")).unwrap()
}

/// Plays `n` tiny self-play games into `out`, as worker `worker`.
fn play(out: &Path, n: u64, seed: u64, worker: &str) {
    let options =
        PlayOptions { games: Some(n), seed, ..PlayOptions::new(tiny(), out.to_path_buf(), ModelSource::Fresh, worker) };
    selfplay::play(options).unwrap();
}

/// Plays `n` tiny self-play games into a new folder.
pub fn games(n: u64) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    play(dir.path(), n, 9, "test");
    dir
}

pub fn window(dir: &Path) -> Window {
    let mut window = Window::default();
    window.load_new(dir, |_| 100_000).unwrap();
    window
}

#[test]
fn the_loss_falls_on_a_fixed_set_of_games() {
    let (first, last) = loss_falls(tiny(), 1);
    assert!(last < 0.8 * first, "loss {first} -> {last}");
}

/// Steps in bf16 (`train.precision`) with fp32 weights: the loss falls as
/// in fp32 (over three seeds: one seed's loss after 120 steps varies by 15%
/// from another's, in either precision), and the checkpoint is fp32. fp16
/// trains in fp32.
#[test]
fn the_loss_falls_in_bf16_as_in_fp32() {
    let mut bf16 = tiny();
    bf16.train.precision = gipf::net::Precision::Bf16;
    let (mut first, mut last, mut last_bf16) = (0.0, 0.0, 0.0);
    for seed in 1..=3 {
        let (first_fp32, last_fp32) = loss_falls(tiny(), seed);
        let (first_bf16, seed_bf16) = loss_falls(bf16.clone(), seed);
        assert!(seed_bf16 < 0.8 * first_bf16, "bf16, seed {seed}: loss {first_bf16} -> {seed_bf16}");
        (first, last, last_bf16) = (first + first_fp32 / 3.0, last + last_fp32 / 3.0, last_bf16 + seed_bf16 / 3.0);
    }
    assert!((last_bf16 - last).abs() < 0.1 * last, "after 120 steps: bf16 {last_bf16}, fp32 {last} (from {first})");

    let trainer = Trainer::new(&bf16, Device::Cpu, 1);
    assert_eq!(trainer.kind(), tch::Kind::BFloat16);
    let mut fp16 = tiny();
    fp16.train.precision = gipf::net::Precision::Fp16;
    assert_eq!(Trainer::new(&fp16, Device::Cpu, 1).kind(), tch::Kind::Float, "fp16 trains in fp32");
    let models = tempfile::tempdir().unwrap();
    let weights = trainer.save(models.path()).unwrap();
    for (name, tensor) in tch::Tensor::read_safetensors(&weights).unwrap() {
        assert_eq!(tensor.kind(), tch::Kind::Float, "{name}");
    }
}

/// The mean loss (the policy's excess over its targets' entropy, and the
/// value's) over the first and the last 10 of 120 steps on a fixed set of
/// games, with the network's initial weights and the batches drawn from `seed`,
/// at the config's learning rate (0.05 in place of tiny.toml's 0.02 left one
/// seed in three on a plateau, in either precision).
fn loss_falls(config: Config, seed: u64) -> (f32, f32) {
    tch::set_num_threads(1);
    let dir = games(3);
    let window = window(dir.path());
    assert!(window.len() > 20, "{} samples", window.len());
    let mut trainer = Trainer::new(&config, Device::Cpu, seed as i64);
    let mut rng = SmallRng::seed_from_u64(seed);
    // The policy's cross-entropy cannot fall below the targets' own entropy:
    // what must fall is the excess over it (the KL divergence), and the value loss.
    let losses: Vec<f32> = (0..120)
        .map(|_| {
            let batch = window.batch(32, &mut rng);
            let entropy: f32 = batch.policy.iter().filter(|&&p| p > 0.0).map(|&p| -p * p.ln()).sum::<f32>()
                / batch.policy_mask.iter().sum::<f32>();
            let stats = trainer.train_step(&batch).unwrap();
            stats.policy_loss - entropy + stats.value_loss
        })
        .collect();
    assert_eq!(trainer.step, 120);
    (losses[..10].iter().sum::<f32>() / 10.0, losses[110..].iter().sum::<f32>() / 10.0)
}

#[test]
fn a_checkpoint_resumes_exactly() {
    resumes_exactly(tiny());
}

#[test]
fn a_checkpoint_that_publishes_an_average_resumes_exactly() {
    let mut config = tiny();
    config.train.average_half_life = 2;
    resumes_exactly(config);
}

fn resumes_exactly(config: Config) {
    tch::set_num_threads(1);
    let dir = games(2);
    let window = window(dir.path());
    let models = tempfile::tempdir().unwrap();
    let mut rng = SmallRng::seed_from_u64(2);
    let batches: Vec<_> = (0..4).map(|_| window.batch(16, &mut rng)).collect();

    let mut trainer = Trainer::new(&config, Device::Cpu, 3);
    for b in &batches[..3] {
        trainer.train_step(b).unwrap();
    }
    let weights = trainer.save(models.path()).unwrap();
    assert!(weights.ends_with("step-00000003.safetensors"));
    let mut resumed = Trainer::resume_or_new(&config, models.path(), Device::Cpu, 99).unwrap();
    assert_eq!((resumed.step, resumed.samples_drawn), (3, 48));

    let mut input = vec![0.0; INPUT_SIZE];
    gipf::encoding::encode(&gipf::rules::Position::new(config.game.variant), &mut input);
    assert_eq!(trainer.network.infer(&input, 1), resumed.network.infer(&input, 1), "bit-identical outputs");

    // The next step from the checkpoint equals the next step without a stop.
    trainer.train_step(&batches[3]).unwrap();
    resumed.train_step(&batches[3]).unwrap();
    assert_eq!(trainer.network.infer(&input, 1), resumed.network.infer(&input, 1), "momentum was restored");
    assert_eq!(resumed.step, 4);
    let published = |trainer: &Trainer, dir: &Path| {
        let weights = trainer.save(dir).unwrap();
        gipf::net::Network::load(&weights, &config.network, Device::Cpu).unwrap().infer(&input, 1)
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    assert_eq!(published(&trainer, a.path()), published(&resumed, b.path()), "the same weights published");
}

/// With `train.average_half_life`, a checkpoint publishes the moving
/// average of the trained weights (the half-life at most a quarter of the
/// steps so far), not the trained weights.
#[test]
fn a_checkpoint_publishes_the_moving_average_of_the_weights() {
    tch::set_num_threads(1);
    let dir = games(2);
    let window = window(dir.path());
    let mut config = tiny();
    config.train.average_half_life = 3;
    let mut trainer = Trainer::new(&config, Device::Cpu, 4);
    let mut rng = SmallRng::seed_from_u64(5);
    let mut names: Vec<String> = trainer.network.variables().into_keys().collect();
    names.sort();
    let name = names.into_iter().find(|name| name.ends_with("weight")).unwrap();
    let weight =
        |trainer: &Trainer| -> Vec<f32> { Vec::try_from(&trainer.network.variables()[&name].flatten(0, -1)).unwrap() };
    let mut expected = weight(&trainer);
    for step in 1..=20u64 {
        trainer.train_step(&window.batch(16, &mut rng)).unwrap();
        let half_life = (step as f64 / 4.0).min(3.0);
        let decay = 0.5f64.powf(1.0 / half_life) as f32;
        for (mean, w) in expected.iter_mut().zip(weight(&trainer)) {
            *mean = decay * *mean + (1.0 - decay) * w;
        }
    }
    let models = tempfile::tempdir().unwrap();
    let saved = tch::Tensor::read_safetensors(trainer.save(models.path()).unwrap()).unwrap();
    let published: Vec<f32> =
        Vec::try_from(&saved.into_iter().find(|(n, _)| *n == name).unwrap().1.flatten(0, -1)).unwrap();
    let trained = weight(&trainer);
    let distance = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    assert!(distance(&published, &expected) < 1e-5, "{}", distance(&published, &expected));
    assert!(distance(&published, &trained) > 1e-3, "the average differs from the trained weights");
}

/// With `value_every_position`, every decision of a game is a value sample
/// (the result for the player to act), and only the fully searched ones
/// carry a policy target; the policy loss ignores the others.
#[test]
fn every_position_is_a_value_sample_and_only_searched_ones_policy_samples() {
    tch::set_num_threads(1);
    let dir = games(1);
    let game = shards::read_all(dir.path()).unwrap().remove(0);
    let all = game_samples(&game, Targets { every_position: true, ..Targets::default() }).unwrap();
    let searched = game_samples(&game, Targets::default()).unwrap();
    assert_eq!(all.len(), game.actions.len());
    assert_eq!(searched.len(), game.samples.len());
    assert!(searched.len() < all.len(), "some decisions were not fully searched");
    let with_policy: Vec<_> = all.iter().filter(|s| !s.policy.is_empty()).map(|s| s.pos).collect();
    assert_eq!(with_policy, searched.iter().map(|s| s.pos).collect::<Vec<_>>());
    for sample in &all {
        assert_eq!(sample.value, game.result.value_for(sample.pos.to_act().unwrap()));
    }
    let plies: Vec<u16> = all.iter().map(|s| s.plies_to_end).collect();
    let expected: Vec<u16> = (1..=game.actions.len() as u16).rev().collect();
    assert_eq!(plies, expected, "actions to the end, down to the last decision's one");

    let mut window = Window::default();
    window.targets.every_position = true;
    window.load_new(dir.path(), |_| 100_000).unwrap();
    assert_eq!(window.len(), all.len());
    let mut rng = SmallRng::seed_from_u64(5);
    let mut batch = window.batch(64, &mut rng);
    let masked = batch.policy_mask.iter().filter(|&&m| m == 0.0).count();
    let empty_rows = batch.policy.chunks(gipf::encoding::NUM_ACTIONS).filter(|row| row.iter().all(|&p| p == 0.0));
    assert_eq!(masked, empty_rows.count(), "the mask marks the samples without a policy target");
    batch.policy_mask.iter_mut().for_each(|m| *m = 0.0);
    // The value loss is the mean squared error of the network's values
    // (training mode, before the step) against the batch's targets.
    let values = {
        let network = Trainer::new(&tiny(), Device::Cpu, 5).network;
        let xs = tch::Tensor::from_slice(&batch.input).view([64, gipf::encoding::NUM_PLANES as i64, 7, 7]);
        Vec::<f32>::try_from(network.forward_t(&xs, true).1).unwrap()
    };
    let expected = values.iter().zip(&batch.value).map(|(v, t)| (v - t) * (v - t)).sum::<f32>() / 64.0;
    let stats = Trainer::new(&tiny(), Device::Cpu, 5).train_step(&batch).unwrap();
    assert_eq!(stats.policy_loss, 0.0);
    assert!((stats.value_loss - expected).abs() < 1e-5, "value loss {} where {expected}", stats.value_loss);
    assert!(expected > 0.01, "the targets are not the outputs already");
    // The phases' errors average back to the whole batch's.
    let phases: Vec<(usize, f32)> = gipf::train::PHASES
        .iter()
        .enumerate()
        .filter_map(|(i, (bound, _))| {
            let lower = i.checked_sub(1).map_or(0, |i| gipf::train::PHASES[i].0 + 1);
            let n = batch.plies_to_end.iter().filter(|&&p| (lower..=*bound).contains(&p)).count();
            Some((n, stats.value_error_by_phase[i]?))
        })
        .collect();
    assert!(phases.iter().all(|&(n, _)| n > 0), "a phase with samples has an error: {phases:?}");
    let mean = phases.iter().map(|&(n, e)| n as f32 * e).sum::<f32>() / 64.0;
    assert!((mean - stats.value_error).abs() < 1e-4, "{mean} {}", stats.value_error);
}

/// The auxiliary targets belong to the player to act (who may act twice
/// in a row, deciding a removal): the material won by the end and over the
/// next few actions, and the reserve lead at the end. Searched positions
/// can mix the search's root value into their value target.
#[test]
fn auxiliary_targets_are_for_the_player_to_act() {
    use gipf::games::{EndReason, GameFile, GameResult};
    use gipf::rules::{Color, Position, Variant};
    use gipf::samples::{AUX_HORIZON, AUX_TARGETS};
    use rand::seq::IndexedRandom;
    // A random game of the standard variant, to its end, with captures and
    // a player acting twice in a row (the first seed that has them).
    let random_game = |seed: u64| {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut positions = vec![Position::new(Variant::Standard)];
        let mut actions = Vec::new();
        while let Some(pos) = positions.last().filter(|p| !p.is_over()) {
            let mut next = *pos;
            let action = *pos.legal_actions().choose(&mut rng).unwrap();
            next.play(action).unwrap();
            actions.push(action);
            positions.push(next);
        }
        (positions, actions)
    };
    let (positions, actions) = (0..)
        .map(random_game)
        .find(|(positions, _)| {
            let end = positions.last().unwrap();
            let twice = positions.windows(2).any(|w| w[1].to_act().is_some() && w[0].to_act() == w[1].to_act());
            end.captured(Color::White) + end.captured(Color::Black) > 0 && twice
        })
        .unwrap();
    let pos = *positions.last().unwrap();
    let game = GameFile {
        format: gipf::games::GAME_FORMAT,
        encoding_version: gipf::encoding::ENCODING_VERSION,
        variant: Variant::Standard,
        actions,
        samples: Vec::new(),
        result: GameResult { winner: pos.outcome().map(|o| o.winner), reason: EndReason::NoReserve },
        model: "random".into(),
        seed: None,
        worker: None,
        config: serde_json::Value::Null,
    };
    let samples = game_samples(&game, Targets { every_position: true, ..Targets::default() }).unwrap();
    assert_eq!(samples.len(), game.actions.len());
    let won = |p: &Position, c: Color| p.captured(c.opponent()) as f32 - p.captured(c) as f32;
    for (ply, sample) in samples.iter().enumerate() {
        let me = sample.pos.to_act().unwrap();
        let ahead = positions[(ply + AUX_HORIZON).min(positions.len() - 1)];
        let expected: [f32; AUX_TARGETS] = [
            won(&pos, me) / 18.0,
            (pos.reserve(me) as f32 - pos.reserve(me.opponent()) as f32) / 18.0,
            ((won(&ahead, me) - won(&sample.pos, me)) / 4.0).clamp(-1.0, 1.0),
        ];
        assert_eq!(sample.aux, expected, "ply {ply}, {me:?} to act");
    }
    assert!(samples.iter().any(|s| s.aux[2] != 0.0), "some captures within the horizon");

    // Half the root value, half the result, on a searched position.
    let dir = games(1);
    let game = shards::read_all(dir.path()).unwrap().remove(0);
    let mixed =
        game_samples(&game, Targets { every_position: false, root_value_share: 0.5, ..Targets::default() }).unwrap();
    for (sample, searched) in mixed.iter().zip(&game.samples) {
        let result = game.result.value_for(sample.pos.to_act().unwrap());
        assert!((sample.value - (0.5 * result + 0.5 * searched.root_value)).abs() < 1e-6);
    }
}

/// With auxiliary targets, global pooling and their loss weighted in, the
/// auxiliary loss falls with the others.
#[test]
fn the_auxiliary_loss_falls() {
    tch::set_num_threads(1);
    let dir = games(3);
    let window = window(dir.path());
    let mut config = tiny();
    config.network.aux_targets = true;
    config.network.value_pooling = true;
    config.train.aux_loss_weight = 1.0;
    config.train.learning_rate = 0.05;
    config.validate().unwrap();
    let mut trainer = Trainer::new(&config, Device::Cpu, 1);
    let mut rng = SmallRng::seed_from_u64(1);
    let losses: Vec<f32> =
        (0..80).map(|_| trainer.train_step(&window.batch(32, &mut rng)).unwrap().aux_loss.unwrap()).collect();
    let first: f32 = losses[..10].iter().sum::<f32>() / 10.0;
    let last: f32 = losses[70..].iter().sum::<f32>() / 10.0;
    assert!(last < 0.7 * first, "auxiliary loss {first} -> {last}");
    config.network.aux_targets = false;
    let err = format!("{:#}", config.validate().unwrap_err());
    assert!(err.contains("train.aux_loss_weight = 1 needs network.aux_targets = true"), "{err}");
}

/// The project's Python environment (the one scripts/setup-torch.sh made).
fn python() -> PathBuf {
    let torch = std::fs::canonicalize(concat!(env!("CARGO_MANIFEST_DIR"), "/../.torch")).unwrap();
    torch.ancestors().nth(4).unwrap().join("bin/python")
}

#[test]
fn tensorboard_reads_the_training_logs() {
    let dir = games(2);
    let logs_dir = tempfile::tempdir().unwrap();
    let mut config = tiny();
    config.train.min_samples = 1;
    config.train.max_reuse = 1000.0;
    let mut trainer = Trainer::new(&config, Device::Cpu, 4);
    let mut logs = Logs::new(logs_dir.path()).unwrap();
    let mut window = Window::default();
    let mut rng = SmallRng::seed_from_u64(4);
    let bar = gipf::report::Reporter::hidden();
    let trained =
        train_steps(&mut trainer, &mut window, &mut logs, GamesSource::folder(dir.path()), 25, &mut rng, &bar).unwrap();
    assert_eq!(trained.steps, 25);
    drop(logs);
    let script = "import sys\n\
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator\n\
        ea = EventAccumulator(sys.argv[1]); ea.Reload()\n\
        for tag in sorted(ea.Tags()['scalars']):\n    print(tag, len(ea.Scalars(tag)), ea.Scalars(tag)[-1].step)\n";
    let out = Command::new(python()).args(["-c", script, logs_dir.path().to_str().unwrap()]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The losses are read back and logged every READ_EVERY (10) steps and at the end.
    assert_eq!(gipf::train::READ_EVERY, 10);
    assert!(text.contains("loss/policy 3 25"), "{text}");
    assert!(text.contains("loss/value 3 25"), "{text}");
    assert!(text.contains("games/mean_length 1 0"), "{text}");
}

fn checkpoint_steps(models: &Path) -> Vec<u64> {
    let mut steps: Vec<u64> = std::fs::read_dir(models)
        .map(|entries| entries.filter_map(|e| gipf::checkpoint::files::step_of(&e.ok()?.path())).collect())
        .unwrap_or_default();
    steps.sort();
    steps
}

/// A trainer resumes from the newest checkpoint it can load: a newest one
/// cut short is set aside under a hidden name, with a warning. One of
/// another network shape is an error, and nothing is set aside.
#[test]
fn a_damaged_newest_checkpoint_is_set_aside_and_the_one_before_resumed() {
    let models = tempfile::tempdir().unwrap();
    let config = tiny();
    for step in [5, 10] {
        let mut trainer = Trainer::new(&config, Device::Cpu, step as i64);
        trainer.step = step;
        trainer.save(models.path()).unwrap();
    }
    let newest = models.path().join("step-00000010.optim");
    let bytes = std::fs::read(&newest).unwrap();
    std::fs::write(&newest, &bytes[..bytes.len() / 3]).unwrap();
    let mut other = config.clone();
    other.network.channels = 16;
    let Err(err) = Trainer::resume_or_new(&other, models.path(), Device::Cpu, 1) else { panic!("resumed") };
    let err = format!("{err:#}");
    assert!(err.contains("differs from the config's"), "{err}");
    assert_eq!(checkpoint_steps(models.path()), [5, 10], "nothing set aside for a config error");

    let trainer = Trainer::resume_or_new(&config, models.path(), Device::Cpu, 1).unwrap();
    assert_eq!(trainer.step, 5);
    assert_eq!(checkpoint_steps(models.path()), [5]);
    assert!(models.path().join(".damaged-step-00000010.safetensors").is_file(), "kept for a look");
}

/// Steps read back once per interval train exactly as steps read back one
/// by one; a batch whose loss is not finite within an interval changes no
/// weight and is not counted, and the interval's means are the other
/// steps'. Non-finite steps in a row are counted across reads.
#[test]
fn steps_read_back_per_interval_train_as_steps_read_one_by_one() {
    tch::set_num_threads(1);
    let games = games(2);
    let window = window(games.path());
    let mut rng = SmallRng::seed_from_u64(8);
    let batches: Vec<_> = (0..6).map(|_| window.batch(16, &mut rng)).collect();
    let mut bad = batches[2].clone();
    bad.value[0] = f32::NAN;
    let on_device = |batch| DeviceBatch::new(batch, Device::Cpu);
    let mut one_by_one = Trainer::new(&tiny(), Device::Cpu, 8);
    let losses: Vec<f32> = batches.iter().map(|b| one_by_one.train_step(b).unwrap().policy_loss).collect();

    let mut deferred = Trainer::new(&tiny(), Device::Cpu, 8);
    let mut sums = StepSums::new(Device::Cpu);
    for (i, batch) in batches.iter().enumerate() {
        if i == 3 {
            deferred.step_on_device(&on_device(&bad), &mut sums);
        }
        deferred.step_on_device(&on_device(batch), &mut sums);
    }
    let interval = deferred.read(&mut sums);
    let counts = (interval.finite_steps, interval.skipped_steps, interval.skipped_samples, interval.in_a_row);
    assert_eq!(counts, (6, 1, 16, 0));
    assert_eq!((deferred.step, deferred.samples_drawn), (6, 96));
    let weights = |trainer: &Trainer| -> Vec<Vec<f32>> {
        let vars = trainer.network.trainable();
        vars.iter().map(|(_, t)| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap()).collect()
    };
    assert!(weights(&deferred) == weights(&one_by_one), "the same weights, bit for bit");
    let mean = losses.iter().sum::<f32>() / 6.0;
    let stats = interval.stats.unwrap();
    assert!((stats.policy_loss - mean).abs() < 1e-5, "{} against {mean}", stats.policy_loss);
    assert!(stats.value_loss.is_finite() && stats.value_error.is_finite());

    for _ in 0..2 {
        deferred.step_on_device(&on_device(&bad), &mut sums);
    }
    let interval = deferred.read(&mut sums);
    assert!(interval.stats.is_none());
    assert_eq!((interval.skipped_steps, interval.in_a_row), (2, 2));
    deferred.step_on_device(&on_device(&bad), &mut sums);
    assert_eq!(deferred.read(&mut sums).in_a_row, 3, "counted across reads");
    deferred.step_on_device(&on_device(&batches[0]), &mut sums);
    assert_eq!(deferred.read(&mut sums).in_a_row, 0);
    assert_eq!(deferred.step, 7);
}

/// A batch whose loss is not finite is skipped and the weights stay as
/// they were; only many such batches in a row (bad weights, not a bad
/// batch) stop training, with a clear error, and no checkpoint is written.
#[test]
fn non_finite_losses_skip_their_batches_and_stop_training_only_many_in_a_row() {
    tch::set_num_threads(1);
    let run = tempfile::tempdir().unwrap();
    let games = games(2);
    let models = run.path().join("models");
    let mut config = tiny();
    config.train.min_samples = 1;
    config.train.max_reuse = 1000.0;
    let mut trainer = Trainer::new(&config, Device::Cpu, 6);
    trainer.save(&models).unwrap();
    let window = window(games.path());
    let mut batch = window.batch(8, &mut SmallRng::seed_from_u64(1));
    let good = batch.clone();
    batch.value[0] = f32::INFINITY;
    let weights = |trainer: &Trainer| -> Vec<Vec<f32>> {
        let vars = trainer.network.trainable();
        vars.iter().map(|(_, t)| Vec::<f32>::try_from(t.flatten(0, -1)).unwrap()).collect()
    };
    let before = weights(&trainer);
    let err = format!("{:#}", trainer.train_step(&batch).unwrap_err());
    assert!(err.contains("training step 1: the loss is not finite"), "{err}");
    assert!(weights(&trainer) == before, "the weights are as they were");
    trainer.train_step(&good).unwrap();
    assert_eq!(trainer.step, 1, "the next good batch trains");

    // A weight poisoned with NaN makes every loss NaN.
    tch::no_grad(|| {
        let (_, mut var) = trainer.network.variables().into_iter().find(|(n, _)| n.contains("weight")).unwrap();
        let _ = var.fill_(f64::NAN);
    });
    let mut logs = Logs::new(&run.path().join("logs")).unwrap();
    let mut window = Window::default();
    let mut rng = SmallRng::seed_from_u64(6);
    let bar = gipf::report::Reporter::hidden();
    let source = GamesSource::folder(games.path());
    let err = train_steps(&mut trainer, &mut window, &mut logs, source, 50, &mut rng, &bar).unwrap_err();
    let err = format!("{:#}", err);
    let limit = gipf::train::MAX_NON_FINITE_IN_A_ROW;
    assert!(err.contains(&format!("{limit} batches in a row")) && err.contains("the loss is not finite"), "{err}");
    assert_eq!(trainer.step, 1, "the failed steps are not counted");
    let err = format!("{:#}", trainer.save(&models).unwrap_err());
    assert!(err.contains("not finite; no checkpoint written"), "{err}");
    assert_eq!(checkpoint_steps(&models), [0]);
}

/// A game with a poisoned sample (an infinite policy share, a root value
/// out of range) among good games is skipped with a warning naming its
/// shard; the trainer trains on and its checkpoints advance.
#[test]
fn a_poisoned_game_among_good_ones_is_skipped_and_training_goes_on() {
    tch::set_num_threads(1);
    let run = tempfile::tempdir().unwrap();
    let games = games(2);
    let good = shards::read_all(games.path()).unwrap();
    // Non-finite numbers have no JSON form (serde writes null): a hostile
    // writer sends one out of range instead.
    let mut lines = Vec::new();
    for (i, poison) in [(0, -0.5), (1, 1e30), (0, 0.123456)] {
        let mut game = good[i].clone();
        *game.samples[0].policy.values_mut().next().unwrap() = poison;
        lines.push(serde_json::to_string(&game).unwrap().replace("0.123456", "1e999"));
    }
    let mut game = good[1].clone();
    game.samples[0].root_value = 3.0;
    lines.push(serde_json::to_string(&game).unwrap());
    let name = "shard-9999999999999-poison-000000.jsonl.zst";
    let shard = zstd::encode_all(lines.join("\n").as_bytes(), 3).unwrap();
    std::fs::write(games.path().join(name), shard).unwrap();

    let mut config = tiny();
    config.train.min_samples = 1;
    config.train.max_reuse = 1000.0;
    let models = run.path().join("models");
    let mut trainer = Trainer::new(&config, Device::Cpu, 7);
    let mut logs = Logs::new(&run.path().join("logs")).unwrap();
    let mut window = Window::default();
    let mut rng = SmallRng::seed_from_u64(7);
    let bar = gipf::report::Reporter::hidden();
    for _ in 0..2 {
        let source = GamesSource::folder(games.path());
        let trained = train_steps(&mut trainer, &mut window, &mut logs, source, 3, &mut rng, &bar).unwrap();
        assert_eq!(trained.steps, 3);
        trainer.save(&models).unwrap();
    }
    assert_eq!(checkpoint_steps(&models), [3, 6]);
    assert_eq!(window.total_games, 2, "only the good games");
    let report = Window::default().load_new(games.path(), |_| 100_000).unwrap();
    assert_eq!(report.skipped.len(), 4, "{:?}", report.skipped);
    for ((path, why), expected) in report.skipped.iter().zip(["not a share", "sums to", "line 3", "outside [-1, 1]"]) {
        assert!(path.ends_with(name) && why.contains(expected), "{why}");
    }
}

/// The trainer beside self-play waits when it has drawn `max_reuse` samples
/// per sample read, saying so, and trains again when new games arrive.
#[test]
fn the_trainer_waits_at_max_reuse_and_resumes_with_new_games() {
    let run_dir = tempfile::tempdir().unwrap();
    let games_dir = run_dir.path().join("games");
    let play = |seed: u64| play(&games_dir, 2, seed, &format!("w{seed}"));
    play(1);
    let log = run_dir.path().join("trainer.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_trainer"))
        .args(["--config", "configs/tiny.toml", "--run", run_dir.path().to_str().unwrap(), "--device", "cpu"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let wait_for = |text: &str, times: usize| {
        let start = std::time::Instant::now();
        while std::fs::read_to_string(&log).unwrap_or_default().matches(text).count() < times {
            assert!(start.elapsed().as_secs() < 60, "no {text:?} in {}", std::fs::read_to_string(&log).unwrap());
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    let models = run_dir.path().join("models");
    let reuse = |step: u64| {
        let meta = gipf::checkpoint::read_meta(&models.join(format!("step-{step:08}.safetensors"))).unwrap();
        meta.samples_drawn as f64 / meta.samples_read.unwrap() as f64
    };
    wait_for("waiting for new games: max_reuse reached", 1);
    let before = *checkpoint_steps(&models).last().unwrap();
    assert!(before > 0 && reuse(before) <= 8.0 && reuse(before) > 7.0, "step {before}: reuse {}", reuse(before));
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(*checkpoint_steps(&models).last().unwrap(), before, "no training while waiting");

    play(2);
    wait_for("new games: training again", 1);
    wait_for("waiting for new games: max_reuse reached", 2);
    child.kill().unwrap();
    child.wait().unwrap();
    let after = *checkpoint_steps(&models).last().unwrap();
    assert!(after > before && reuse(after) <= 8.0, "step {after}: reuse {}", reuse(after));
}

/// Every variable of a network, batch-norm running statistics included, by name.
fn all_variables(network: &gipf::net::Network) -> Vec<(String, Vec<f32>)> {
    let mut vars: Vec<(String, Vec<f32>)> = network
        .variables()
        .into_iter()
        .map(|(name, t)| (name, Vec::<f32>::try_from(t.to_kind(tch::Kind::Float).flatten(0, -1)).unwrap()))
        .collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    vars
}

/// A batch whose activations overflow (one input plane scaled by 1e30) is
/// skipped, and its forward pass leaves no trace: every variable, the
/// batch-norm statistics among them, is as it was, in fp32 and in bf16
/// steps, and the next checkpoint holds those values.
#[test]
fn an_overflowing_batch_leaves_every_variable_and_the_next_checkpoint_as_they_were() {
    tch::set_num_threads(1);
    let games = games(2);
    let window = window(games.path());
    let mut batch = window.batch(8, &mut SmallRng::seed_from_u64(3));
    for value in &mut batch.input[..INPUT_SIZE / gipf::encoding::NUM_PLANES] {
        *value = 1e30;
    }
    for precision in [gipf::net::Precision::Fp32, gipf::net::Precision::Bf16] {
        let mut config = tiny();
        config.train.precision = precision;
        let mut trainer = Trainer::new(&config, Device::Cpu, 4);
        let good = window.batch(8, &mut SmallRng::seed_from_u64(4));
        trainer.train_step(&good).unwrap();
        let before = all_variables(&trainer.network);
        let err = format!("{:#}", trainer.train_step(&batch).unwrap_err());
        assert!(err.contains("the loss is not finite"), "{precision:?}: {err}");
        assert!(all_variables(&trainer.network) == before, "{precision:?}: every variable as it was");
        let models = tempfile::tempdir().unwrap();
        let weights = trainer.save(models.path()).unwrap();
        let (saved, _) = gipf::checkpoint::load_checkpoint(&weights, Device::Cpu).unwrap();
        assert!(all_variables(&saved) == before, "{precision:?}: the checkpoint holds them");
    }
}

/// A checkpoint is refused when any variable is not finite, batch-norm
/// statistics included.
#[test]
fn a_checkpoint_with_a_non_finite_statistic_is_refused() {
    let trainer = Trainer::new(&tiny(), Device::Cpu, 2);
    tch::no_grad(|| {
        let (_, mut var) = trainer.network.variables().into_iter().find(|(n, _)| n.contains("running_var")).unwrap();
        let _ = var.fill_(f64::NAN);
    });
    let models = tempfile::tempdir().unwrap();
    let err = format!("{:#}", trainer.save(models.path()).unwrap_err());
    assert!(err.contains("running_var holds a value that is not finite"), "{err}");
    assert_eq!(checkpoint_steps(models.path()), Vec::<u64>::new());
}

/// Steps in bf16 keep the batch-norm statistics in fp32: over 200 steps
/// on the same batches (and weights that do not move) they follow fp32
/// steps' statistics closely, where statistics rounded to bf16 each step
/// stop moving once a step's change is below bf16's resolution.
#[test]
fn bf16_steps_keep_the_batch_norm_statistics_as_fp32_steps_do() {
    tch::set_num_threads(1);
    let games = games(3);
    let window = window(games.path());
    // No weight moves: only the statistics do.
    let mut fp32 = tiny();
    fp32.train.learning_rate = 0.0;
    let mut bf16 = fp32.clone();
    bf16.train.precision = gipf::net::Precision::Bf16;
    let (mut fp32_trainer, mut bf16_trainer) =
        (Trainer::new(&fp32, Device::Cpu, 5), Trainer::new(&bf16, Device::Cpu, 5));
    let mut rng = SmallRng::seed_from_u64(5);
    for _ in 0..200 {
        let batch = window.batch(32, &mut rng);
        fp32_trainer.train_step(&batch).unwrap();
        bf16_trainer.train_step(&batch).unwrap();
    }
    let statistics = |trainer: &Trainer| -> Vec<f32> {
        let vars = all_variables(&trainer.network).into_iter().filter(|(name, _)| name.contains("running_var"));
        vars.flat_map(|(_, values)| values).collect()
    };
    let (a, b) = (statistics(&fp32_trainer), statistics(&bf16_trainer));
    let gaps: Vec<f32> = a.iter().zip(&b).map(|(x, y)| (x - y).abs() / x.abs().max(1e-3)).collect();
    let mean = gaps.iter().sum::<f32>() / gaps.len() as f32;
    // Measured: 0.0008 with the statistics in fp32, 0.013 with them in bf16.
    assert!(mean < 0.004, "running variances differ by {mean:.4} on average (relative)");
}

/// Saves tiny checkpoints at steps 5 and 10 into `models`.
fn two_checkpoints(models: &Path) {
    for step in [5, 10] {
        let mut trainer = Trainer::new(&tiny(), Device::Cpu, step as i64);
        trainer.step = step;
        trainer.save(models).unwrap();
    }
}

/// Weights of the wrong shape or number format (another tool's file) are
/// refused before anything runs, with an error naming the tensor: readers
/// fall back to the checkpoint before, and the trainer sets the file aside
/// and resumes that one.
#[test]
fn weights_of_the_wrong_shape_or_kind_are_refused_and_the_one_before_used() {
    use gipf::checkpoint::{load_checkpoint, load_checkpoint_or_older};
    use gipf::error::LoadError;
    let models = tempfile::tempdir().unwrap();
    two_checkpoints(models.path());
    let newest = models.path().join("step-00000010.safetensors");
    let good = tch::Tensor::read_safetensors(&newest).unwrap();
    let shape_one: Vec<(String, tch::Tensor)> =
        good.iter().map(|(n, _)| (n.clone(), tch::Tensor::ones([1], (tch::Kind::Float, Device::Cpu)))).collect();
    let double: Vec<(String, tch::Tensor)> =
        good.iter().map(|(n, t)| (n.clone(), t.to_kind(tch::Kind::Double))).collect();
    let mut nan = good.iter().map(|(n, t)| (n.clone(), t.copy())).collect::<Vec<_>>();
    let _ = nan[0].1.fill_(f64::NAN);
    for (tensors, why) in [(shape_one, "has shape [1], not"), (double, "is F64, not F32"), (nan, "not finite")] {
        tch::Tensor::write_safetensors(&tensors, &newest).unwrap();
        let err = load_checkpoint(&newest, Device::Cpu).err().unwrap();
        assert!(matches!(&err, LoadError::Damaged { why: text, .. } if text.contains(why)), "{why}: {err:?}");
        let (_, meta, used) = load_checkpoint_or_older(&newest, Device::Cpu).unwrap();
        assert_eq!((meta.step, used), (5, models.path().join("step-00000005.safetensors")));
    }
    let trainer = Trainer::resume_or_new(&tiny(), models.path(), Device::Cpu, 1).unwrap();
    assert_eq!(trainer.step, 5);
    assert!(models.path().join(".damaged-step-00000010.safetensors").is_file());
}

/// Only damage sets a checkpoint aside. A description of a newer format, or
/// of fields this program does not know, or one that cannot be read (a
/// folder in its place: as root, permissions stop no read) stops the
/// trainer with an error that says so, and every file stays. A weights
/// file not named as a checkpoint is none.
#[test]
fn only_damage_sets_a_checkpoint_aside() {
    let models = tempfile::tempdir().unwrap();
    two_checkpoints(models.path());
    let description = models.path().join("step-00000010.json");
    let text = std::fs::read_to_string(&description).unwrap();
    let format = format!("\"format\": {}", gipf::checkpoint::CHECKPOINT_FORMAT);
    assert!(text.contains(&format), "{text}");
    let newer = text.replace(&format, "\"format\": 99");
    let unknown = text.replace("\"blocks\"", "\"value_heads\": 2, \"blocks\"");
    for (written, why) in [(newer, "checkpoint format 99"), (unknown, "unknown field `value_heads`")] {
        std::fs::write(&description, written).unwrap();
        let Err(err) = Trainer::resume_or_new(&tiny(), models.path(), Device::Cpu, 1) else { panic!("resumed") };
        assert!(format!("{err:#}").contains(why), "{why}: {err:#}");
        assert_eq!(checkpoint_steps(models.path()), [5, 10]);
    }
    std::fs::remove_file(&description).unwrap();
    std::fs::create_dir(&description).unwrap();
    let Err(err) = Trainer::resume_or_new(&tiny(), models.path(), Device::Cpu, 1) else { panic!("resumed") };
    assert!(format!("{err:#}").contains("cannot read"), "{err:#}");
    assert_eq!(checkpoint_steps(models.path()), [5, 10]);
    assert!(!std::fs::read_dir(models.path()).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains("damaged")));

    std::fs::remove_dir(&description).unwrap();
    std::fs::write(&description, &text).unwrap();
    for ext in ["json", "safetensors"] {
        std::fs::copy(models.path().join(format!("step-00000005.{ext}")), models.path().join(format!("zz.{ext}")))
            .unwrap();
    }
    assert_eq!(Trainer::resume_or_new(&tiny(), models.path(), Device::Cpu, 1).unwrap().step, 10);
    let newest = gipf::checkpoint::newest_checkpoint(models.path()).unwrap();
    assert_eq!(newest, Some(models.path().join("step-00000010.safetensors")));
}
