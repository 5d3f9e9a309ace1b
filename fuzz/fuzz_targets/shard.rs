//! Shards: any bytes are a shard's games (bad lines reported) or refused;
//! a game read holds at most one sample a ply (so that a small shard cannot
//! parse into gigabytes).
#![no_main]

use gipf::samples::{game_samples, Targets};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(read) = gipf::shards::parse(bytes) {
        for game in &read.games {
            assert!(game.samples.len() <= game.actions.len(), "{} samples", game.samples.len());
            assert!(game.samples.windows(2).all(|pair| pair[0].ply < pair[1].ply));
            let _ = game_samples(game, Targets::default());
        }
    }
});
