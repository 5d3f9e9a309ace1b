//! Action notation: any text parses or is refused, and what parses prints
//! back to the same action.
#![no_main]

use gipf::rules::{parse_actions, Action};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(actions) = parse_actions(text) {
        for action in actions {
            let printed = action.to_string();
            assert_eq!(printed.parse::<Action>().ok(), Some(action), "{printed}");
        }
    }
});
