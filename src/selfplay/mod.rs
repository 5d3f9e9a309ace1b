//! The self-play generator: many games searched at once by the core's
//! batched driver ([`crate::search::Batched`]), their leaves evaluated in
//! network batches.
//!
//! Each game ([`SelfplayGame`], in the core) searches, plays and records
//! its decisions as `[selfplay]` says. The games are split into two groups
//! whose work interleaves: while the network runs one group's batch (on the
//! calling thread), the search threads do the other group's CPU work: back
//! up its last batch's values, play where a search is complete, start the
//! next searches, gather up to `search.batch_size` leaves a game and encode
//! them. On a GPU the forward pass is short and this CPU side decides the
//! rate; overlapping the two keeps both busy.

use std::time::Instant;

use crate::config::Config;
use crate::games::GameFile;
use crate::rules::Position;
use crate::search::{BatchError, Batched};
pub use crate::search::{ConstantForward, Forward};
pub use gipf_core::selfplay::SelfplayGame;
use gipf_core::selfplay::{play_round, GameSource};

mod outboxes;
pub mod overlap;
mod play;
pub use outboxes::{gather_outboxes, stray_outboxes};
pub use play::{play, play_workers, PlayOptions, PlayReport};

/// Counts since the generator started.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Games finished.
    pub games: u64,
    /// Actions played in all games, finished or not.
    pub actions: u64,
    /// Actions of the finished games.
    pub finished_actions: u64,
    /// Positions the network evaluated.
    pub evaluations: u64,
    /// Forward passes run.
    pub batches: u64,
    /// Seconds the generator waited for the network's forward passes.
    pub forward_seconds: f64,
}

/// Games whose CPU work and network batches alternate with the other group's.
#[derive(Default)]
struct Group {
    games: Batched<SelfplayGame>,
    /// The network's outputs for the gathered batch, waiting to be applied.
    output: Option<(Vec<f32>, Vec<f32>)>,
}

impl Group {
    /// Applies the last batch, plays where searches are complete (finished
    /// games are returned, their slots removed), gathers and encodes the
    /// next batch. Runs on the search threads.
    fn cpu_work(
        &mut self,
        config: &Config,
        model: &str,
        worker: &str,
        config_json: &serde_json::Value,
    ) -> Result<Work, BatchError> {
        if let Some((logits, values)) = self.output.take() {
            self.games.apply(&logits, &values, &config.search)?;
        }
        let round = play_round(&mut self.games, &config.selfplay, &config.search)?;
        let work = Work {
            actions: round.actions,
            finished_actions: round.finished.iter().map(|game| game.actions().len() as u64).sum(),
            finished: round.finished.into_iter().map(|game| game.into_game(model, worker, config_json)).collect(),
        };
        self.games.gather(&config.search, |_| true)?;
        Ok(work)
    }
}

/// What one group's CPU work did.
#[derive(Default)]
struct Work {
    finished: Vec<GameFile>,
    actions: u64,
    finished_actions: u64,
}

/// Plays self-play games, many at once.
pub struct Generator {
    config: Config,
    /// The configuration as recorded in games.
    config_json: serde_json::Value,
    worker: String,
    groups: [Group; 2],
    /// The group whose batch the network runs next.
    current: usize,
    source: GameSource,
    stats: Stats,
}

impl Generator {
    /// Plays `games` games (`None`: until stopped), at most `parallel_games`
    /// at once; `worker` names this process in the games.
    pub fn new(config: Config, seed: u64, games: Option<u64>, worker: &str) -> Generator {
        let config_json = serde_json::to_value(&config).expect("a configuration is plain data");
        let source = GameSource::new(Position::new(config.game.variant), config.game.max_actions, seed, games);
        let mut generator = Generator {
            config,
            config_json,
            worker: worker.to_string(),
            groups: Default::default(),
            current: 0,
            source,
            stats: Stats::default(),
        };
        for i in 0..generator.config.selfplay.parallel_games {
            generator.start_game(i % 2);
        }
        generator
    }

    /// Starts a game in group `g` if more are wanted.
    fn start_game(&mut self, g: usize) {
        if let Some(game) = self.source.next_game(&self.config.selfplay, &self.config.search) {
            self.groups[g].games.push(game);
        }
    }

    /// Runs one step: the network evaluates one group's batch on this thread
    /// while `pool` does the other group's CPU work. Returns the games that
    /// finished (played by `model`); their places go to new games while
    /// more are wanted. A network output that is not finite is an error.
    pub fn step(
        &mut self,
        forward: &mut dyn Forward,
        pool: &rayon::ThreadPool,
        model: &str,
    ) -> Result<Vec<GameFile>, BatchError> {
        let [first, second] = &mut self.groups;
        let (evaluated, worked) = if self.current == 0 { (first, second) } else { (second, first) };
        let (config, worker, config_json) = (&self.config, self.worker.as_str(), &self.config_json);
        let (output, work, seconds) = std::thread::scope(|scope| {
            let job = scope.spawn(|| pool.install(|| worked.cpu_work(config, model, worker, config_json)));
            let start = Instant::now();
            let count = evaluated.games.count();
            let output = (count > 0).then(|| forward.forward(evaluated.games.input(), count));
            let seconds = start.elapsed().as_secs_f64();
            (output, job.join().expect("self-play's CPU work does not panic"), seconds)
        });
        let work = work?;
        if output.is_some() {
            self.stats.evaluations += evaluated.games.count() as u64;
            self.stats.batches += 1;
            self.stats.forward_seconds += seconds;
        }
        evaluated.output = output;
        let worked_index = 1 - self.current;
        self.current = worked_index;
        self.stats.actions += work.actions;
        self.stats.games += work.finished.len() as u64;
        self.stats.finished_actions += work.finished_actions;
        for _ in 0..work.finished.len() {
            self.start_game(worked_index);
        }
        Ok(work.finished)
    }

    /// Counts since the generator started.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Games in progress.
    pub fn active(&self) -> usize {
        self.groups.iter().map(|g| g.games.len()).sum()
    }

    /// Mean length of finished games so far.
    pub fn mean_game_length(&self) -> f64 {
        self.stats.finished_actions as f64 / self.stats.games.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two groups' interleaved work plays exactly the games asked, each
    /// complete and consistent (read back through the checked parser).
    #[test]
    fn the_interleaved_groups_play_exactly_the_games_asked() {
        let config = Config::parse(include_str!("../../configs/tiny.toml")).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let mut generator = Generator::new(config, 3, Some(5), "unit");
        let mut games = Vec::new();
        while generator.active() > 0 {
            games.extend(generator.step(&mut ConstantForward, &pool, "constant").unwrap());
        }
        assert_eq!(games.len(), 5);
        assert_eq!(generator.stats.games, 5);
        for game in games {
            let read = GameFile::parse(&serde_json::to_string(&game).unwrap()).unwrap();
            assert!(!read.samples.is_empty() && read.model == "constant");
        }
    }
}
