//! Checkpoint descriptions: any text is a description or refused; one that
//! is read asks for a network within the config's bounds, and its lineage's
//! counts (inherited, the run's, their sum) are within theirs.
#![no_main]

use gipf::checkpoint::CheckpointMeta;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(meta) = CheckpointMeta::parse(text, std::path::Path::new("step.json")) {
        let _ = meta.variant();
        meta.network.validate().expect("a description read has a shape within bounds");
        if let Some(lineage) = &meta.lineage {
            for compute in [lineage.inherited, lineage.run, lineage.total()] {
                compute.check("lineage").expect("a description read has its lineage within bounds");
            }
        }
    }
});
