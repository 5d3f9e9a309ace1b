//! Game files: any text is a game or refused; a game's samples come out or
//! the game is refused (an illegal action, a policy over illegal actions),
//! and every target that comes out is finite, within range (never a value
//! that makes the loss non-finite).
#![no_main]

use gipf::games::GameFile;
use gipf::samples::{game_samples, Targets};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(game) = GameFile::parse(text) {
        let targets = Targets { every_position: true, root_value_share: 0.5, root_value_lambda: 0.8 };
        if let Ok(samples) = game_samples(&game, targets) {
            for sample in samples {
                assert!(sample.value.is_finite() && sample.value.abs() <= 1.0, "{}", sample.value);
                assert!(sample.policy.iter().all(|(_, p)| p.is_finite() && *p >= 0.0), "{:?}", sample.policy);
                assert!(sample.aux.iter().all(|a| a.is_finite()), "{:?}", sample.aux);
            }
        }
    }
});
