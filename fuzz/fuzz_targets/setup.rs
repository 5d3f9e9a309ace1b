//! Positions as JSON: any text is a position or refused; a position's state
//! and legal actions come out, and every legal action plays.
#![no_main]

use gipf::rules::{Setup, StateJson};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let Ok(setup) = Setup::from_json(text) else { return };
    let Ok(pos) = setup.to_position() else { return };
    let _ = serde_json::to_string(&StateJson::of(&pos)).unwrap();
    for action in pos.legal_actions() {
        let mut next = pos;
        next.play(action).unwrap();
        let _ = next.legal_actions();
    }
});
