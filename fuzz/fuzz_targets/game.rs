//! Game files: any text is a game or refused; a game's samples come out or
//! the game is refused (an illegal action, a policy over illegal actions).
#![no_main]

use gipf::games::GameFile;
use gipf::train::data::{game_samples, Targets};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(game) = GameFile::parse(text) {
        let _ = game_samples(&game, Targets { every_position: true, root_value_share: 0.5 });
    }
});
