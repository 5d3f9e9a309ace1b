//! Shards: any bytes are a shard's games (bad lines reported) or refused.
#![no_main]

use gipf::train::data::{game_samples, Targets};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(read) = gipf::shards::parse(bytes) {
        for game in &read.games {
            let _ = game_samples(game, Targets::default());
        }
    }
});
