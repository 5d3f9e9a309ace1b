//! Checkpoint descriptions: any text is a description or refused.
#![no_main]

use gipf::checkpoint::CheckpointMeta;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(meta) = CheckpointMeta::parse(text) {
        let _ = meta.variant();
        let _ = meta.network.validate();
    }
});
