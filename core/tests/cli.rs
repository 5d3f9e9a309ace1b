//! `gipf-rules`: the rules command of the core, without LibTorch (`gipf
//! rules` runs the same code): the JSON contract of `docs/rules.md`, the
//! picture, and clear errors with a non-zero exit on bad input.

use std::process::{Command, Output};

use gipf_core::rules::{Color, StateJson, Variant};

fn rules(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gipf-rules")).args(args).output().expect("gipf-rules runs")
}

fn state(args: &[&str]) -> StateJson {
    let out = rules(args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

/// Runs a command that must fail: non-zero exit, a message containing
/// `expected`, and no panic.
fn refused(args: &[&str], expected: &str) {
    let out = rules(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!stderr.contains("panicked"), "{args:?} panicked: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: expected {expected:?} in {stderr:?}");
}

fn position_file(json: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), json).unwrap();
    file
}

#[test]
fn json_contract_after_moves() {
    let text = String::from_utf8(rules(&["--variant", "standard", "--moves", "b1-b2 b6-b5", "--json"]).stdout).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut keys: Vec<&str> = value.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    keys.sort();
    assert_eq!(keys, ["board", "captured", "legal", "phase", "reserve", "to_act", "variant", "winner"]);
    let s: StateJson = serde_json::from_str(&text).unwrap();
    assert_eq!(s.variant, Variant::Standard);
    assert_eq!((s.board["b2"].as_str(), s.board["b3"].as_str(), s.board["b4"].as_str()), ("w", "B", "W"));
    assert_eq!((s.reserve.white, s.reserve.black, s.captured.white, s.captured.black), (11, 11, 0, 0));
    assert_eq!((s.to_act, s.phase.as_str(), s.winner), (Some(Color::White), "push", None));
    assert!(s.legal.windows(2).all(|w| w[0] < w[1]), "legal actions are sorted");
}

#[test]
fn gipf_rules_answers_without_libtorch() {
    let out = Command::new(env!("CARGO_BIN_EXE_gipf-rules"))
        .args(["--variant", "standard", "--moves", "b1-b2 b6-b5", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let state: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(state["board"]["b2"], "w");
    assert_eq!(state["legal"].as_array().unwrap().len(), 40);

    let out = Command::new(env!("CARGO_BIN_EXE_gipf-rules")).args(["--moves", "b1-b9"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.starts_with("gipf-rules: ") && !stderr.contains("panicked"), "{stderr}");

    // The binary's shared libraries, as the dynamic loader resolves them.
    let ldd = Command::new("ldd").arg(env!("CARGO_BIN_EXE_gipf-rules")).output().expect("ldd runs");
    let libraries = String::from_utf8_lossy(&ldd.stdout);
    assert!(ldd.status.success() && libraries.contains("libc.so"), "{libraries}");
    assert!(!libraries.contains("torch") && !libraries.contains("c10"), "{libraries}");
}

#[test]
fn json_from_a_position_file_through_a_removal() {
    let file = position_file(
        r#"{"variant": "basic", "board": {"c2": "w", "d3": "b", "e4": "b", "f4": "b", "h4": "b",
            "b4": "w", "c4": "w", "d4": "b", "f3": "b", "g2": "b"}, "reserve": {"white": 12, "black": 7},
            "to_move": "black"}"#,
    );
    let path = file.path().to_str().unwrap();
    let s = state(&["--position", path, "--moves", "b1-c2", "--json"]);
    assert_eq!((s.phase.as_str(), s.to_act), ("remove", Some(Color::Black)));
    assert_eq!(s.legal, ["xb4,c4,d4,e4,f3,g2", "xc2,d3,e4,f4,g4,h4"]);
    assert_eq!(s.captured.white, 0, "captured was left out: what makes the totals add up");
    let s = state(&["--position", path, "--moves", "b1-c2 xc2,d3,e4,f4,g4,h4", "--json"]);
    assert_eq!((s.phase.as_str(), s.to_act, s.captured.white), ("push", Some(Color::White), 1));
}

#[test]
fn a_finished_game_has_a_winner_and_no_legal_actions() {
    let file = position_file(
        r#"{"variant": "standard", "board": {"b2": "B", "e2": "W"}, "reserve": {"white": 10, "black": 1},
            "to_move": "black"}"#,
    );
    let s = state(&["--position", file.path().to_str().unwrap(), "--moves", "i5-h5 a1-b2", "--json"]);
    assert_eq!((s.phase.as_str(), s.to_act, s.winner), ("over", None, Some(Color::White)));
    assert!(s.legal.is_empty());
}

#[test]
fn picture_shows_board_reserves_and_captures() {
    let out = rules(&["--variant", "basic", "--moves", "b1-b2"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(text.contains("white: reserve 11, captured  0"), "{text}");
    assert!(text.contains("black: reserve 12, captured  0"), "{text}");
    assert!(text.contains("black to push"), "{text}");
    assert_eq!(text.matches('w').count() - text.matches("white").count(), 4, "{text}");
}

#[test]
fn bad_actions_are_refused_by_name() {
    refused(&["--moves", "b1-b2 zz"], "'zz' is not an action");
    refused(&["--moves", "b1-b2 a1-c3"], "not next to the dot a1");
    refused(&["--variant", "basic", "--moves", "b1-b2 b6-b5 b1-b2"], "action 3 'b1-b2' is illegal");
    refused(&["--moves", "xb2"], "must push");
    refused(&["--variant", "tournament", "--moves", "a1-b2"], "must bring in a GIPF piece");
    refused(&["--variant", "chess"], "unknown variant");
}

#[test]
fn bad_positions_are_refused_with_the_reason() {
    let cases = [
        ("{", "malformed position JSON"),
        ("[]", "malformed position JSON"),
        (
            r#"{"variant": "basic", "board": {}, "reserve": {"white": 15, "black": 15}, "to_move": "white", "extra": 1}"#,
            "unknown field `extra`",
        ),
        (
            r#"{"variant": "basic", "board": {"a1": "w"}, "reserve": {"white": 14, "black": 15}, "to_move": "white"}"#,
            "a1 is a dot",
        ),
        (
            r#"{"variant": "basic", "board": {"z9": "w"}, "reserve": {"white": 14, "black": 15}, "to_move": "white"}"#,
            "'z9' is not a cell",
        ),
        (
            r#"{"variant": "basic", "board": {"b2": "x"}, "reserve": {"white": 14, "black": 15}, "to_move": "white"}"#,
            "'x' at b2 is not a piece",
        ),
        (
            r#"{"variant": "basic", "board": {"b2": "w", "b2": "b"}, "reserve": {"white": 14, "black": 14}, "to_move": "white"}"#,
            "b2 is given twice",
        ),
        (
            r#"{"variant": "basic", "board": {"b2": "W"}, "reserve": {"white": 13, "black": 15}, "to_move": "white"}"#,
            "the basic variant has none",
        ),
        (
            r#"{"variant": "basic", "board": {"b2": "w"}, "reserve": {"white": 14, "black": 15}, "captured": {"white": 1, "black": 0}, "to_move": "white"}"#,
            "white: 1 on the board + 14 in reserve + 1 captured = 16",
        ),
        (
            r#"{"variant": "basic", "board": {"b2": "w"}, "reserve": {"white": 15, "black": 15}, "to_move": "white"}"#,
            "more than the basic variant's 15",
        ),
        (
            r#"{"variant": "basic", "board": {}, "reserve": {"white": 300, "black": 15}, "to_move": "white"}"#,
            "malformed position JSON",
        ),
        (
            r#"{"variant": "basic", "board": {}, "reserve": {"white": -1, "black": 15}, "to_move": "white"}"#,
            "malformed position JSON",
        ),
        (
            r#"{"variant": "tournament", "board": {}, "reserve": {"white": 18, "black": 18}, "to_move": "white"}"#,
            "must say gipf_allowed",
        ),
        (
            r#"{"variant": "standard", "board": {}, "reserve": {"white": 18, "black": 18}, "to_move": "white", "gipf_allowed": {"white": true, "black": false}}"#,
            "only the tournament variant",
        ),
        (
            r#"{"variant": "standard", "board": {"b2": "w"}, "reserve": {"white": 17, "black": 18}, "to_move": "white"}"#,
            "neither player has a GIPF piece",
        ),
        (
            r#"{"variant": "standard", "board": {}, "reserve": {"white": 18, "black": 18}, "to_move": "grey"}"#,
            "unknown variant `grey`",
        ),
    ];
    for (json, expected) in cases {
        let file = position_file(json);
        refused(&["--position", file.path().to_str().unwrap(), "--json"], expected);
    }
    refused(&["--position", "/no/such/file.json"], "cannot read /no/such/file.json");
}

#[path = "../../tests/common/help_page.rs"]
mod help_page;

/// `gipf-rules`'s section of the reference page (`docs/reference.md`) is
/// what its help says.
#[test]
fn reference_page_is_current() {
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_gipf-rules"));
    let page = help_page::page(env!("CARGO_MANIFEST_DIR"));
    help_page::check_section(&page, "gipf-rules", &help_page::command_section(binary, "gipf-rules"));
}
