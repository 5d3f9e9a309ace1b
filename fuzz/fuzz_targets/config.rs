//! Configuration files: any text is a valid configuration or refused.
#![no_main]

use gipf::config::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = Config::parse(text);
});
