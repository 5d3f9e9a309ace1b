//! Where the processes of a training run go: the trainer on one device,
//! self-play workers on every device, and the machine's cores divided among
//! them so that their threads add up to the cores ([`plan`]).

use std::fmt;

use anyhow::{ensure, Result};
use tch::Device;

use crate::net::parse_device_among;

/// The devices a run uses (`loop.devices`, `gipf loop --devices`): `auto`
/// (every GPU LibTorch sees, else the CPU), `all` (every GPU), or a list such
/// as `cuda:0,cuda:2` or `cpu,cpu`. `cuda_count` is how many GPUs LibTorch
/// sees; a device past them is an error.
pub fn parse_devices(text: &str, cuda_count: usize) -> Result<Vec<Device>> {
    let every_gpu = || (0..cuda_count).map(Device::Cuda).collect::<Vec<_>>();
    let devices = match text.trim() {
        "auto" if cuda_count > 0 => every_gpu(),
        "auto" => vec![Device::Cpu],
        "all" => {
            ensure!(cuda_count > 0, "devices = all: LibTorch sees no CUDA device (no driver, no GPU, or a CPU build)");
            every_gpu()
        }
        list => list.split(',').map(|one| parse_device_among(one.trim(), cuda_count)).collect::<Result<_>>()?,
    };
    ensure!(devices.len() <= MAX_DEVICES, "devices: {} entries, at most {MAX_DEVICES}", devices.len());
    Ok(devices)
}

/// Checks a device list's form only (the GPUs it names are checked where
/// a run starts, against those LibTorch sees).
pub fn check_devices_form(text: &str) -> Result<()> {
    match text.trim() {
        "auto" | "all" => Ok(()),
        _ => parse_devices(text, usize::MAX).map(|_| ()),
    }
}

/// The most devices a run's list may name.
pub const MAX_DEVICES: usize = 64;

/// What [`plan`] divides: the machine's cores and what each process asks.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// The cores the run may use.
    pub cores: usize,
    /// The trainer's LibTorch threads (`train.torch_threads`); 0: no trainer.
    pub trainer_threads: usize,
    /// Each worker's LibTorch threads (`play.torch_threads`), which run its
    /// forward passes.
    pub play_threads: usize,
    /// Self-play workers wanted on each device (`loop.workers`): two keep a
    /// GPU busy, one running a batch while the other gathers the next.
    pub workers_per_device: usize,
    /// Each worker's search threads, where the config fixes them
    /// (`selfplay.search_threads`); 0: the cores left, divided.
    pub search_threads: usize,
}

/// One self-play worker's place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Worker {
    /// The device its forward passes run on.
    pub device: Device,
    /// Its search threads.
    pub search_threads: usize,
    /// Its LibTorch threads, which run its forward passes.
    pub torch_threads: usize,
}

impl Worker {
    /// Its threads in all.
    pub fn threads(&self) -> usize {
        self.search_threads + self.torch_threads
    }
}

/// A run's processes: the trainer and its threads, and the workers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The trainer's device: the first one listed.
    pub trainer: Device,
    /// The trainer's LibTorch threads (0: no trainer).
    pub trainer_threads: usize,
    /// The self-play workers, each device's first worker first.
    pub workers: Vec<Worker>,
    /// The cores the run may use.
    pub cores: usize,
}

impl Layout {
    /// Every thread of the run.
    pub fn threads(&self) -> usize {
        self.trainer_threads + self.workers.iter().map(Worker::threads).sum::<usize>()
    }

    /// The workers on `device`.
    pub fn workers_on(&self, device: Device) -> usize {
        self.workers.iter().filter(|w| w.device == device).count()
    }
}

/// The layout of a run on `devices`: the trainer on the first; on every
/// device (the trainer's too: paced by `train.max_reuse`, it uses a small
/// share of its GPU) `workers_per_device` workers, on GPUs fewer where the
/// cores cannot give each its LibTorch threads and a search thread, never
/// fewer than one a device; the cores the trainer and the workers' LibTorch
/// threads leave divided evenly among the workers' searches. The threads add
/// up to the cores, unless even one worker a device needs more (then each
/// gets one search thread, and [`Layout::threads`] says how many).
pub fn plan(devices: &[Device], budget: Budget) -> Result<Layout> {
    ensure!(!devices.is_empty(), "a layout needs a device");
    let Budget { cores, trainer_threads, play_threads, search_threads, .. } = budget;
    let play_threads = play_threads.max(1);
    let left = cores.saturating_sub(trainer_threads);
    // On the CPU the config's workers run as asked: their forward passes
    // share the cores with the search (cpu.toml's two workers on 2 cores
    // were measured best), so no count of cores "fits" them.
    let fitting = match devices.iter().all(|d| d.is_cuda()) {
        true => left / (devices.len() * (play_threads + search_threads.max(1))),
        false => usize::MAX,
    };
    let per_device = budget.workers_per_device.min(fitting).max(1);
    let count = devices.len() * per_device;
    let searching = left.saturating_sub(count * play_threads);
    let workers = (0..count)
        .map(|i| {
            // Worker i is on device i % len: each device's first worker comes first.
            let device = devices[i % devices.len()];
            let fair = searching / count + usize::from(i < searching % count);
            let search = if search_threads > 0 { search_threads } else { fair.max(1) };
            Worker { device, search_threads: search, torch_threads: play_threads }
        })
        .collect();
    Ok(Layout { trainer: devices[0], trainer_threads, workers, cores })
}

/// `cuda:N` or `cpu`, as `--devices` reads them.
pub fn device_name(device: Device) -> String {
    match device {
        Device::Cuda(n) => format!("cuda:{n}"),
        Device::Cpu => "cpu".into(),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// The layout in a few lines, for the log at start and `gipf info`.
impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        writeln!(f, "trainer: {} ({} LibTorch threads)", device_name(self.trainer), self.trainer_threads)?;
        let mut devices: Vec<Device> = Vec::new();
        for worker in &self.workers {
            if !devices.contains(&worker.device) {
                devices.push(worker.device);
            }
        }
        for device in devices {
            let on: Vec<&Worker> = self.workers.iter().filter(|w| w.device == device).collect();
            let search: Vec<String> = on.iter().map(|w| w.search_threads.to_string()).collect();
            writeln!(
                f,
                "self-play on {}: {} workers, each {} LibTorch threads and {} search threads",
                device_name(device),
                on.len(),
                on[0].torch_threads,
                search.join("/")
            )?;
        }
        let over = if self.threads() > self.cores { " (more threads than cores: they take turns)" } else { "" };
        write!(f, "threads: {} on {} cores{over}", self.threads(), self.cores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpus(n: usize) -> Vec<Device> {
        (0..n).map(Device::Cuda).collect()
    }

    /// The GPU config's asks: one trainer thread, one LibTorch thread a
    /// worker, two workers a GPU, search threads from the cores.
    fn gpu_budget(cores: usize) -> Budget {
        Budget { cores, trainer_threads: 1, play_threads: 1, workers_per_device: 2, search_threads: 0 }
    }

    #[test]
    fn every_gpu_plays_and_the_threads_add_up_to_the_cores() {
        for n in [1, 2, 4, 8] {
            for cores in [8, 16, 64, 128] {
                let layout = plan(&gpus(n), gpu_budget(cores)).unwrap();
                let case = format!("{n} GPUs, {cores} cores:\n{layout}");
                assert_eq!(layout.trainer, Device::Cuda(0), "{case}");
                let per_device: Vec<usize> = gpus(n).into_iter().map(|d| layout.workers_on(d)).collect();
                // Two a GPU wherever the cores give each a LibTorch and a search thread.
                let expected = if cores > n * 2 * 2 { 2 } else { 1 };
                assert!(per_device.iter().all(|&w| w == expected), "{case}");
                assert_eq!(layout.workers.len(), n * per_device[0], "{case}");
                let minimum = 1 + n * 2;
                if cores >= minimum {
                    assert_eq!(layout.threads(), cores, "{case}");
                } else {
                    assert_eq!(layout.threads(), minimum, "{case}");
                }
                let search: Vec<usize> = layout.workers.iter().map(|w| w.search_threads).collect();
                let (least, most) = (search.iter().min().unwrap(), search.iter().max().unwrap());
                assert!(*least >= 1 && most - least <= 1, "{case}");
            }
        }
    }

    #[test]
    fn two_workers_a_gpu_where_the_cores_allow_one_where_they_do_not() {
        // 8 GPUs on 64 cores: 16 workers of 1 + 3 or 4 threads, and the trainer's.
        let roomy = plan(&gpus(8), gpu_budget(64)).unwrap();
        assert_eq!(roomy.workers.len(), 16);
        assert_eq!(roomy.workers.iter().map(|w| w.search_threads).sum::<usize>(), 64 - 1 - 16);
        // 8 GPUs on 16 cores: two workers a GPU would need 33 threads.
        let tight = plan(&gpus(8), gpu_budget(16)).unwrap();
        assert_eq!(tight.workers.len(), 8);
        assert!(tight.workers.iter().all(|w| w.search_threads == 1));
        assert_eq!(tight.threads(), 17, "the fewest: the trainer's thread and two a worker");
        // 2 GPUs on 8 cores: 9 threads for two workers a GPU; one a GPU fits.
        let two = plan(&gpus(2), gpu_budget(8)).unwrap();
        assert_eq!((two.workers.len(), two.threads()), (2, 8));
    }

    /// On a 2-core CPU, cpu.toml's two workers stay two (each with a
    /// search thread: the fewest), as they were measured best.
    #[test]
    fn the_cpu_keeps_the_configs_workers() {
        let budget = crate::config::Config::parse(crate::config::DEFAULTS).unwrap().budget(2);
        assert_eq!(budget.workers_per_device, 2, "cpu.toml's two workers");
        let layout = plan(&[Device::Cpu], budget).unwrap();
        assert_eq!(layout.workers.len(), 2);
        assert!(layout.workers.iter().all(|w| w.search_threads == 1));
        assert!(layout.to_string().ends_with("threads: 5 on 2 cores (more threads than cores: they take turns)"));
        let sixteen = plan(&[Device::Cpu], Budget { cores: 16, ..budget }).unwrap();
        assert_eq!((sixteen.workers.len(), sixteen.threads()), (2, 16));
    }

    #[test]
    fn fixed_search_threads_are_kept() {
        let budget = Budget { search_threads: 3, ..gpu_budget(64) };
        let layout = plan(&gpus(2), budget).unwrap();
        assert!(layout.workers.iter().all(|w| w.search_threads == 3));
        assert_eq!(layout.workers.len(), 4);
    }

    #[test]
    fn a_list_of_cpus_gives_each_entry_its_workers() {
        let budget = Budget { cores: 8, trainer_threads: 1, play_threads: 1, workers_per_device: 1, search_threads: 0 };
        let layout = plan(&[Device::Cpu, Device::Cpu], budget).unwrap();
        assert_eq!(layout.workers.len(), 2);
        assert_eq!(layout.threads(), 8);
        assert_eq!(
            layout.to_string().lines().nth(1).unwrap(),
            "self-play on cpu: 2 workers, each 1 LibTorch threads and 3/2 search threads"
        );
    }

    #[test]
    fn device_lists_are_read_and_checked() {
        assert_eq!(parse_devices("auto", 0).unwrap(), vec![Device::Cpu]);
        assert_eq!(parse_devices("auto", 2).unwrap(), gpus(2));
        assert_eq!(parse_devices("all", 3).unwrap(), gpus(3));
        assert_eq!(parse_devices("cuda:0, cuda:2", 3).unwrap(), vec![Device::Cuda(0), Device::Cuda(2)]);
        assert_eq!(parse_devices("cpu,cpu", 0).unwrap(), vec![Device::Cpu, Device::Cpu]);
        for (bad, words) in [
            ("all", "no CUDA device"),
            ("cuda:2", "sees 2 CUDA"),
            ("gpu", "unknown device"),
            ("cpu,", "unknown device"),
        ] {
            let error = parse_devices(bad, if bad == "cuda:2" { 2 } else { 0 }).unwrap_err().to_string();
            assert!(error.contains(words), "{bad}: {error}");
        }
        assert!(parse_devices(&vec!["cpu"; MAX_DEVICES + 1].join(","), 0).is_err());
        assert!(plan(&[], gpu_budget(8)).is_err(), "no device: an error, not a panic");
    }
}
