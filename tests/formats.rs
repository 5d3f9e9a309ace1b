//! The stored formats of earlier versions stay readable: fixture files of
//! each game and checkpoint-description format, as those versions wrote them.

use std::path::{Path, PathBuf};

use gipf::checkpoint::read_meta;
use gipf::games::GameFile;
use gipf::rules::Variant;
use gipf::samples::{game_samples, Targets};
use gipf::shards;
use gipf::train::Window;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

#[test]
fn a_format_1_game_file_reads_and_trains() {
    let game = GameFile::parse(&std::fs::read_to_string(fixture("game-format-1.json")).unwrap()).unwrap();
    assert_eq!(game.format, 1);
    assert_eq!((game.seed, game.worker.as_deref()), (None, None));
    assert!(!game_samples(&game, Targets { every_position: true, ..Targets::default() }).unwrap().is_empty());

    // In a games folder beside a shard: read, and older than the shard.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("game-format-1.json"), dir.path().join("game-1-1-1-000000.json")).unwrap();
    std::fs::copy(fixture("shard-format-2.jsonl.zst"), dir.path().join("shard-0000000000001-w-000000.jsonl.zst"))
        .unwrap();
    let names: Vec<String> = shards::list(dir.path()).unwrap().into_iter().map(|f| f.name).collect();
    assert_eq!(names, ["game-1-1-1-000000.json", "shard-0000000000001-w-000000.jsonl.zst"]);
    let mut window = Window::default();
    let report = window.load_new(dir.path(), |_| 100_000).unwrap();
    assert_eq!((report.files, report.games, report.skipped.len()), (2, 3, 0));
}

#[test]
fn a_format_2_shard_reads_with_seeds_and_worker() {
    let name = "shard-format-2.jsonl.zst".to_string();
    let file = shards::GamesFile { legacy: false, path: fixture(&name), name };
    let read = shards::read(&file).unwrap();
    assert_eq!((read.games.len(), read.bad.len()), (2, 0));
    for game in &read.games {
        assert_eq!(game.format, 2);
        assert!(game.seed.is_some() && game.worker.is_some());
        assert_eq!(game.config["selfplay"]["variant"], "standard");
    }
}

/// A game's configuration is provenance: keys this program does not know
/// (a later version's) or has since dropped do not make it unreadable.
#[test]
fn a_game_with_unknown_config_keys_still_reads() {
    let text = std::fs::read_to_string(fixture("game-format-1.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["config"]["selfplay"]["a_key_from_the_future"] = 3.into();
    value["config"]["train"].as_object_mut().unwrap().remove("batch_size");
    assert!(GameFile::parse(&value.to_string()).is_ok());
}

#[test]
fn checkpoint_descriptions_of_each_format_read() {
    let dir = tempfile::tempdir().unwrap();
    for (name, format, samples_read) in [
        ("checkpoint-format-1.json", 1, None),
        ("checkpoint-format-2.json", 2, Some(64)),
        ("checkpoint-format-3.json", 3, Some(64)),
        ("checkpoint-format-4.json", 4, Some(64)),
    ] {
        std::fs::copy(fixture(name), dir.path().join("step-00000005.json")).unwrap();
        let meta = read_meta(&dir.path().join("step-00000005.safetensors")).unwrap();
        assert_eq!((meta.format, meta.step, meta.samples_read), (format, 5, samples_read), "{name}");
        assert_eq!(meta.variant().unwrap(), Variant::Standard, "{name}");
        assert_eq!(meta.network.channels, 8, "{name}");
    }
    let lineage = read_meta(&dir.path().join("step-00000005.safetensors")).unwrap().lineage.unwrap();
    assert_eq!((lineage.total().steps, lineage.parent.unwrap().file.as_str()), (141_606, "reference"));
    // Hours that are negative (or absurd) are damage.
    let text = std::fs::read_to_string(fixture("checkpoint-format-4.json")).unwrap();
    std::fs::write(dir.path().join("step-00000005.json"), text.replace("\"hours\": 0.5", "\"hours\": -1.0")).unwrap();
    let err = format!("{:#}", read_meta(&dir.path().join("step-00000005.safetensors")).unwrap_err());
    assert!(err.contains("the description's lineage.run.hours = -1"), "{err}");
    std::fs::write(dir.path().join("step-00000005.json"), r#"{"format": 9, "step": 5}"#).unwrap();
    let err = format!("{:#}", read_meta(&dir.path().join("step-00000005.safetensors")).unwrap_err());
    assert!(err.contains("checkpoint format 9 (this program reads formats 1 to 4)"), "{err}");
}

/// A game's samples are bounded by what a real game holds: more samples
/// than actions, a ply twice, or a line longer than any real game's is
/// refused with the line's number, so that a small shard cannot parse into
/// gigabytes (one action, a million samples at ply 0, took 4 to 10 GB).
#[test]
fn games_with_more_samples_than_a_game_holds_are_refused() {
    let text =
        String::from_utf8(zstd::decode_all(&std::fs::read(fixture("shard-format-2.jsonl.zst")).unwrap()[..]).unwrap())
            .unwrap();
    let good = text.lines().next().unwrap();
    let mut game: serde_json::Value = serde_json::from_str(good).unwrap();
    let actions = game["actions"].as_array().unwrap().len();
    let first = game["samples"][0].clone();
    let first_ply = first["ply"].as_u64().unwrap();
    let mut twice = game.clone();
    twice["samples"].as_array_mut().unwrap().insert(1, first.clone());
    let mut many = game.clone();
    many["samples"] = serde_json::Value::Array(vec![first; actions + 1]);
    game["padding"] = serde_json::Value::String(" ".repeat(gipf::games::MAX_GAME_LINE_BYTES));
    let lines = [good.to_string(), twice.to_string(), many.to_string(), game.to_string()].join("\n");
    let read = shards::parse(&zstd::encode_all(lines.as_bytes(), 1).unwrap()).unwrap();
    assert_eq!(read.games.len(), 1, "{:?}", read.bad);
    let twice = format!("ply {} twice", first_ply);
    assert!(read.bad[0].starts_with("line 2:") && read.bad[0].contains(&twice), "{}", read.bad[0]);
    assert!(read.bad[1].starts_with("line 3:") && read.bad[1].contains("samples for"), "{}", read.bad[1]);
    assert!(read.bad[2].starts_with("line 4:") && read.bad[2].contains("longer than"), "{}", read.bad[2]);
}

mod bad_input {
    use super::*;
    use proptest::prelude::*;

    fn game_text() -> String {
        std::fs::read_to_string(fixture("game-format-1.json")).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// A game's JSON cut short or with a byte changed is refused or
        /// read, never a panic.
        #[test]
        fn a_damaged_game_never_panics(cut in 0usize..16_000, at in 0usize..16_000, byte in any::<u8>()) {
            let mut bytes = game_text().into_bytes();
            let len = bytes.len();
            bytes[at % len] = byte;
            bytes.truncate(cut % (len + 1));
            let _ = GameFile::parse(&String::from_utf8_lossy(&bytes));
        }

        /// Shard bytes, damaged or random, are refused with an error naming
        /// the file, or read with their bad lines listed; never a panic.
        #[test]
        fn a_damaged_shard_never_panics(at in 0usize..8_000, byte in any::<u8>(), cut in 0usize..8_000) {
            let dir = tempfile::tempdir().unwrap();
            let mut bytes = std::fs::read(fixture("shard-format-2.jsonl.zst")).unwrap();
            let len = bytes.len();
            bytes[at % len] = byte;
            bytes.truncate(cut % (len + 1));
            let name = "shard-0000000000001-w-000000.jsonl.zst".to_string();
            std::fs::write(dir.path().join(&name), &bytes).unwrap();
            let file = shards::GamesFile { legacy: false, path: dir.path().join(&name), name };
            if let Err(e) = shards::read(&file) {
                let message = format!("{e:#}");
                prop_assert!(message.contains("shard-0000000000001"), "{}", message);
            }
        }

        /// A checkpoint description with a byte changed is refused with an
        /// error naming the file, or, where the change still reads (a digit
        /// for another), read within the bounds every description is held
        /// to; never a panic.
        #[test]
        fn a_damaged_description_never_panics(at in 0usize..1_500, byte in any::<u8>()) {
            let dir = tempfile::tempdir().unwrap();
            let mut bytes = std::fs::read(fixture("checkpoint-format-4.json")).unwrap();
            let len = bytes.len();
            bytes[at % len] = byte;
            std::fs::write(dir.path().join("step-00000005.json"), &bytes).unwrap();
            match read_meta(&dir.path().join("step-00000005.safetensors")) {
                Ok(meta) => {
                    prop_assert!(meta.network.validate().is_ok(), "{:?}", meta.network);
                    if let Some(lineage) = &meta.lineage {
                        for compute in [lineage.inherited, lineage.run, lineage.total()] {
                            prop_assert!(compute.check("lineage").is_ok(), "{:?}", compute);
                        }
                    }
                    let _ = meta.variant();
                }
                Err(e) => prop_assert!(format!("{e:#}").contains("step-00000005"), "{:#}", e),
            }
        }
    }
}
