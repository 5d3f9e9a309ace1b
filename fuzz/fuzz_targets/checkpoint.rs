//! Checkpoint descriptions: any text is a description or refused; one that
//! is read asks for a network within the config's bounds.
#![no_main]

use gipf::checkpoint::CheckpointMeta;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(meta) = CheckpointMeta::parse(text) {
        let _ = meta.variant();
        meta.network.validate().expect("a description read has a shape within bounds");
    }
});
