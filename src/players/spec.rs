//! Players as the command line names them ([`PlayerSpec`]): a core
//! baseline, or a checkpoint with its budget and search options
//! (`reference@250ms,fresh,batch=16,bf16`).

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use tch::Device;

use super::{monotonic, Baseline, NetworkPlayer, Player};
use crate::net::{Backend, Inference, Precision};
use crate::search::SearchConfig;

/// How long a searching player thinks about each action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// This many simulations a decision.
    Simulations(u32),
    /// This long a decision, on the wall clock.
    Time(Duration),
}

impl fmt::Display for Budget {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Budget::Simulations(n) => write!(f, "{n} sims"),
            Budget::Time(d) => write!(f, "{} ms", d.as_millis()),
        }
    }
}

/// A player described on the command line: a [`Baseline`] (`random`,
/// `greedy`, `uct:N`, `alphabeta:D` or `alphabeta:MSms`, `classic:D` or
/// `classic:MSms`), or `reference` (the reference model shipped with the program), or
/// a checkpoint's weights file (or a models folder, for its best checkpoint
/// or else its newest; or its URL in an object store, or a store's models
/// folder for its newest: see [`crate::checkpoint::fetch_checkpoint`]),
/// optionally with its own budget after `@`:
/// `models/step-00001000.safetensors@200` (simulations) or `...@500ms`
/// (time per action), then after commas whether it keeps its tree between
/// decisions (`...@500ms,fresh`, `...@200,keep`; by default it keeps it
/// under a time budget only) and how many leaves it evaluates at once
/// (`...@250ms,batch=8`; by default [`TIMED_BATCH`] under a time budget
/// and the config's `search.batch_size` under a simulation budget), and
/// the precision of its forward passes (`...@250ms,bf16`; by default the
/// config's `play.precision`) and their library (`...@250ms,onnxruntime` or
/// `libtorch`; by default the config's `play.backend`) and the temperature of its policy's softmax
/// (`...@250ms,policy_temperature=1.4`; by default the config's
/// `search.policy_temperature`), so that one match can pit the two.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    /// One of the core's baselines.
    Baseline(Baseline),
    /// A checkpoint searching with its network.
    Network {
        /// Its weights file (`reference` and a models folder resolved to theirs).
        weights: PathBuf,
        /// Its search budget for each decision.
        budget: Budget,
        /// Whether it keeps its tree between decisions.
        keep_tree: bool,
        /// Leaves evaluated at once; `None`: [`TIMED_BATCH`] under a time budget,
        /// the config's `search.batch_size` under a simulation budget.
        batch: Option<usize>,
        /// The number format of its forward passes; `None`: the match's.
        precision: Option<Precision>,
        /// The library that runs its forward passes; `None`: the match's.
        backend: Option<Backend>,
        /// The temperature of its policy's softmax; `None`: the config's
        /// `search.policy_temperature`.
        policy_temperature: Option<f32>,
    },
}

impl PlayerSpec {
    /// Reads a spec; checkpoints without their own budget get `default_budget`.
    pub fn parse(text: &str, default_budget: Budget) -> Result<PlayerSpec> {
        if let Some(baseline) = Baseline::parse(text) {
            return Ok(PlayerSpec::Baseline(baseline?));
        }
        Ok(match text {
            "" => bail!(
                "empty player: expected random, greedy, uct:N, alphabeta:D, classic:D, reference or a checkpoint's weights file"
            ),
            _ => {
                let (path, options) = match text.rsplit_once('@') {
                    Some((path, options)) => {
                        (path, parse_search_options(options).with_context(|| format!("player '{text}'"))?)
                    }
                    None => {
                        (text, SearchOptions::new(default_budget))
                    }
                };
                let weights = crate::model_source::weights_named(path).with_context(|| {
                    format!(
                        "player '{text}' (players are random, greedy, uct:N, alphabeta:D, classic:D, reference or a \
                         checkpoint)"
                    )
                })?;
                let mut spec = PlayerSpec::network(weights, options.budget, options.keep_tree);
                if let PlayerSpec::Network { batch, precision, backend, policy_temperature, .. } = &mut spec {
                    *batch = options.batch;
                    *precision = options.precision;
                    *backend = options.backend;
                    *policy_temperature = options.policy_temperature;
                }
                spec
            }
        })
    }

    /// A checkpoint's player with the config's batch; `keep_tree` unset keeps
    /// the tree under a time budget only.
    pub fn network(weights: PathBuf, budget: Budget, keep_tree: Option<bool>) -> PlayerSpec {
        let keep_tree = keep_tree.unwrap_or(matches!(budget, Budget::Time(_)));
        PlayerSpec::Network {
            weights,
            budget,
            keep_tree,
            batch: None,
            precision: None,
            backend: None,
            policy_temperature: None,
        }
    }

    /// How a network plays: its own precision and backend where it names
    /// them, else `inference`'s.
    pub fn inference(&self, inference: Inference) -> Inference {
        match self {
            PlayerSpec::Network { precision, backend, .. } => Inference {
                precision: precision.unwrap_or(inference.precision),
                backend: backend.unwrap_or(inference.backend),
            },
            _ => inference,
        }
    }

    /// A short name for tables and rating files.
    pub fn name(&self) -> String {
        match self {
            PlayerSpec::Baseline(baseline) => baseline.name(),
            PlayerSpec::Network { weights, budget, keep_tree, batch, precision, backend, policy_temperature } => {
                let stem =
                    weights.file_stem().map_or_else(|| weights.display().to_string(), |s| s.to_string_lossy().into());
                let tree = match (budget, keep_tree) {
                    (Budget::Time(_), false) => ", fresh",
                    (Budget::Simulations(_), true) => ", keep",
                    _ => "",
                };
                let batch = batch.map(|n| format!(", batch {n}")).unwrap_or_default();
                let precision = precision.map(|p| format!(", {}", p.name())).unwrap_or_default();
                let backend = backend.map(|b| format!(", {}", b.name())).unwrap_or_default();
                let temperature = policy_temperature.map(|t| format!(", policy temperature {t}")).unwrap_or_default();
                format!("{stem} ({budget}{tree}{batch}{precision}{backend}{temperature})")
            }
        }
    }

    /// Makes the player; a network is loaded onto `device`, to run in its
    /// own precision and backend where it names them, else as `inference`.
    pub fn build(
        &self,
        device: Device,
        inference: Inference,
        search: &SearchConfig,
        seed: u64,
    ) -> Result<Box<dyn Player>> {
        Ok(match self {
            PlayerSpec::Baseline(baseline) => baseline.build(seed, monotonic),
            PlayerSpec::Network { weights, budget, keep_tree, batch, policy_temperature, .. } => {
                let search = SearchConfig {
                    batch_size: batch_size(*batch, *budget, search),
                    policy_temperature: policy_temperature.unwrap_or(search.policy_temperature),
                    ..*search
                };
                let inference = self.inference(inference);
                Box::new(NetworkPlayer::load(weights, device, inference, *budget, *keep_tree, &search)?)
            }
        })
    }
}

/// Leaves a timed checkpoint player evaluates at once unless told: the
/// simulations gained in the same time outweigh the leaves chosen under
/// virtual loss (+191 and +176 Elo over 4 at 250 ms per action, on two
/// checkpoints; `docs/experiments.md`). A simulation budget keeps the
/// config's batch, so that fixed-simulation matches stay a fixed measure.
pub const TIMED_BATCH: usize = 16;

/// The leaves per forward pass of a checkpoint player.
fn batch_size(batch: Option<usize>, budget: Budget, search: &SearchConfig) -> usize {
    batch.unwrap_or(match budget {
        Budget::Time(_) => TIMED_BATCH,
        Budget::Simulations(_) => search.batch_size,
    })
}

/// The budget of command-line options: `movetime` milliseconds when given, else `sims` simulations.
pub fn budget_from_options(sims: u32, movetime: Option<u64>) -> Result<Budget> {
    Ok(match movetime {
        Some(0) => bail!("--movetime must be positive"),
        Some(ms) => Budget::Time(Duration::from_millis(ms)),
        None if sims < 2 => bail!("--sims must be at least 2"),
        None => Budget::Simulations(sims),
    })
}

/// A checkpoint's options after `@`.
struct SearchOptions {
    budget: Budget,
    keep_tree: Option<bool>,
    batch: Option<usize>,
    precision: Option<Precision>,
    backend: Option<Backend>,
    policy_temperature: Option<f32>,
}

impl SearchOptions {
    /// `budget` and nothing else set.
    fn new(budget: Budget) -> SearchOptions {
        SearchOptions { budget, keep_tree: None, batch: None, precision: None, backend: None, policy_temperature: None }
    }
}

/// Its budget, then any of `keep` or `fresh`, `batch=N`, a precision, a
/// backend and `policy_temperature=T`, comma-separated.
fn parse_search_options(text: &str) -> Result<SearchOptions> {
    let mut parts = text.split(',');
    let budget = parse_budget(parts.next().unwrap_or_default())?;
    let mut options = SearchOptions::new(budget);
    for part in parts {
        if let Some(precision) = Precision::parse(part) {
            options.precision = Some(precision);
            continue;
        }
        if let Some(backend) = Backend::parse(part).filter(|b| *b != Backend::Auto) {
            options.backend = Some(backend);
            continue;
        }
        if let Some(t) = part.strip_prefix("policy_temperature=") {
            match t.parse::<f32>() {
                Ok(t) if t > 0.0 && t <= 10.0 => options.policy_temperature = Some(t),
                _ => bail!("'{part}': expected policy_temperature=T with T in (0, 10]"),
            }
            continue;
        }
        match part {
            "keep" => options.keep_tree = Some(true),
            "fresh" => options.keep_tree = Some(false),
            _ => match part.strip_prefix("batch=").map(str::parse::<usize>) {
                Some(Ok(n)) if (1..=1024).contains(&n) => options.batch = Some(n),
                Some(_) => bail!("'{part}': expected batch=N with N from 1 to 1024 (leaves evaluated at once)"),
                None => bail!(
                    "'{part}': expected keep or fresh (whether the tree is kept between decisions), batch=N, \
                     a precision (fp32, bf16, fp16, auto), a backend (libtorch, onnxruntime) or \
                     policy_temperature=T"
                ),
            },
        }
    }
    Ok(options)
}

/// `N` simulations or `Nms` milliseconds.
pub fn parse_budget(text: &str) -> Result<Budget> {
    let (number, millis) = match text.strip_suffix("ms") {
        Some(n) => (n, true),
        None => (text, false),
    };
    match number.parse::<u32>() {
        Ok(n) if millis && n > 0 => Ok(Budget::Time(Duration::from_millis(n as u64))),
        Ok(n) if !millis && n >= 2 => Ok(Budget::Simulations(n)),
        _ => bail!("budget '{text}': expected simulations (N >= 2) or milliseconds (Nms, N > 0)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::players::{Limit, Style};

    #[test]
    fn specs_parse_and_bad_ones_are_named() {
        let sims = Budget::Simulations(64);
        assert_eq!(PlayerSpec::parse("random", sims).unwrap(), PlayerSpec::Baseline(Baseline::Random));
        assert_eq!(
            PlayerSpec::parse("uct:1000", sims).unwrap(),
            PlayerSpec::Baseline(Baseline::Uct { playouts: 1000 })
        );
        assert_eq!(
            PlayerSpec::parse("alphabeta:3", sims).unwrap(),
            PlayerSpec::Baseline(Baseline::AlphaBeta { style: Style::AlphaBeta, limit: Limit::Depth(3) })
        );
        let timed = PlayerSpec::parse("alphabeta:250ms", sims).unwrap();
        assert_eq!(
            timed,
            PlayerSpec::Baseline(Baseline::AlphaBeta {
                style: Style::AlphaBeta,
                limit: Limit::Time(Duration::from_millis(250))
            })
        );
        assert_eq!(timed.name(), "alphabeta:250ms");
        let classic = PlayerSpec::parse("classic:2500ms", sims).unwrap();
        assert_eq!(
            classic,
            PlayerSpec::Baseline(Baseline::AlphaBeta {
                style: Style::Classic,
                limit: Limit::Time(Duration::from_millis(2500))
            })
        );
        assert_eq!(classic.name(), "classic:2500ms");
        assert_eq!(PlayerSpec::parse("classic:4", sims).unwrap().name(), "classic:4");
        for name in ["alphabeta", "classic"] {
            for bad in ["0", "x", "", "0ms", "33", "-1"] {
                let err = PlayerSpec::parse(&format!("{name}:{bad}"), sims).unwrap_err();
                assert!(format!("{err:#}").contains(&format!("expected {name}:D")), "{name}:{bad}: {err:#}");
            }
        }
        for bad in ["uct:", "uct:0", "uct:x", "", "no/such/file.safetensors", "no/such@12"] {
            assert!(PlayerSpec::parse(bad, sims).is_err(), "{bad}");
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.safetensors");
        std::fs::write(&file, b"x").unwrap();
        let spec = PlayerSpec::parse(&format!("{}@250ms", file.display()), sims).unwrap();
        let quarter = Budget::Time(Duration::from_millis(250));
        assert_eq!(spec, PlayerSpec::network(file.clone(), quarter, Some(true)));
        let spec = PlayerSpec::parse(&format!("{}@250ms,fresh", file.display()), sims).unwrap();
        assert_eq!(spec, PlayerSpec::network(file.clone(), quarter, Some(false)));
        assert_eq!(spec.name(), "w (250 ms, fresh)");
        let spec = PlayerSpec::parse(&file.display().to_string(), sims).unwrap();
        assert_eq!(spec, PlayerSpec::network(file.clone(), sims, Some(false)));
        let models = dir.path().join("models");
        std::fs::create_dir(&models).unwrap();
        let err = format!("{:#}", PlayerSpec::parse(&format!("{}@250ms", models.display()), sims).unwrap_err());
        assert!(err.contains("no checkpoint in") && err.contains("yet"), "{err}");
        for step in ["step-00000001", "step-00000002"] {
            std::fs::write(models.join(step).with_extension("safetensors"), b"x").unwrap();
        }
        let spec = PlayerSpec::parse(&format!("{}@250ms", models.display()), sims).unwrap();
        let newest = models.join("step-00000002.safetensors");
        assert_eq!(spec, PlayerSpec::network(newest, quarter, Some(true)));
        let spec = PlayerSpec::parse(&format!("{}@64,keep", file.display()), sims).unwrap();
        assert_eq!(spec, PlayerSpec::network(file.clone(), sims, Some(true)));
        assert_eq!(spec.name(), "w (64 sims, keep)");
        let err = PlayerSpec::parse(&format!("{}@1", file.display()), sims).unwrap_err();
        assert!(format!("{err:#}").contains("budget '1'"), "{err:#}");
        let err = PlayerSpec::parse(&format!("{}@64,again", file.display()), sims).unwrap_err();
        assert!(format!("{err:#}").contains("'again': expected keep or fresh"), "{err:#}");
        let spec = PlayerSpec::parse(&format!("{}@250ms,batch=16,fresh", file.display()), sims).unwrap();
        assert_eq!(
            spec,
            PlayerSpec::Network {
                weights: file.clone(),
                budget: quarter,
                keep_tree: false,
                batch: Some(16),
                precision: None,
                backend: None,
                policy_temperature: None
            }
        );
        assert_eq!(spec.name(), "w (250 ms, fresh, batch 16)");
        let spec = PlayerSpec::parse(&format!("{}@250ms,bf16", file.display()), sims).unwrap();
        let bf16 = Some(Precision::Bf16);
        assert_eq!(
            spec,
            PlayerSpec::Network {
                weights: file.clone(),
                budget: quarter,
                keep_tree: true,
                batch: None,
                precision: bf16,
                backend: None,
                policy_temperature: None
            }
        );
        assert_eq!(spec.name(), "w (250 ms, bf16)");
        let spec = PlayerSpec::parse(&format!("{}@250ms,fp32,onnxruntime", file.display()), sims).unwrap();
        assert_eq!(spec.name(), "w (250 ms, fp32, onnxruntime)");
        let libtorch = Inference { precision: Precision::Auto, backend: Backend::Libtorch };
        let own = Inference { precision: Precision::Fp32, backend: Backend::Onnxruntime };
        assert_eq!(spec.inference(libtorch), own);
        let err = PlayerSpec::parse(&format!("{}@64,auto,tensorflow", file.display()), sims).unwrap_err();
        assert!(format!("{err:#}").contains("a backend (libtorch, onnxruntime)"), "{err:#}");
        for bad in ["batch=0", "batch=x", "batch="] {
            let err = PlayerSpec::parse(&format!("{}@64,{bad}", file.display()), sims).unwrap_err();
            assert!(format!("{err:#}").contains(&format!("'{bad}': expected batch=N")), "{err:#}");
        }
        let spec = PlayerSpec::parse(&format!("{}@400,policy_temperature=1.4", file.display()), sims).unwrap();
        assert!(matches!(spec, PlayerSpec::Network { policy_temperature: Some(t), .. } if t == 1.4));
        assert_eq!(spec.name(), "w (400 sims, policy temperature 1.4)");
        for bad in ["policy_temperature=0", "policy_temperature=11", "policy_temperature=x"] {
            let err = PlayerSpec::parse(&format!("{}@64,{bad}", file.display()), sims).unwrap_err();
            assert!(format!("{err:#}").contains(&format!("'{bad}': expected policy_temperature=T")), "{err:#}");
        }
    }

    #[test]
    fn a_timed_player_evaluates_sixteen_leaves_at_once_unless_told() {
        let search = SearchConfig { batch_size: 4, ..SearchConfig::default() };
        let (timed, sims) = (Budget::Time(Duration::from_millis(250)), Budget::Simulations(64));
        assert_eq!(batch_size(None, timed, &search), TIMED_BATCH);
        assert_eq!(batch_size(None, sims, &search), 4, "a fixed measure stays fixed");
        assert_eq!(batch_size(Some(8), timed, &search), 8);
    }
}
