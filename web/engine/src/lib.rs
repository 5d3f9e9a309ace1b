//! The web board's engine: a game (with undo), the baseline players and the
//! network's tree search of the core, behind one JSON request at a time, so
//! that a Web Worker drives it through a few WebAssembly exports.
//!
//! The network runs in the page (onnxruntime-web on the exported
//! `model.onnx`), so a search goes in batches: `think` starts it and asks
//! for a first batch, the page runs the model on the batch's input planes
//! (read from [`Session::input`]) and writes the outputs (logits over the
//! action indices, then the value, per position) into
//! [`Session::output_mut`], then `feed` applies them and asks for the next,
//! until the answer is `done`. The batches are those of the native
//! [`gipf_core::search::Tree::run`], so with the same model, settings and
//! simulations the choice is the same as `gipf engine`'s.
//!
//! Requests, and what they answer (besides `{"error": "..."}`):
//! - `{"cmd": "layout"}`: the cells, with their notation and whether each
//!   is a dot: `{"cells": [{"cell": "a1", "column": 0, "number": 1, "dot": true}, ...]}`;
//! - `{"cmd": "encoding"}`: the encoding version and the action at each
//!   policy index, to check a model card against:
//!   `{"encoding_version": 1, "actions": ["a1-b2", ...]}`;
//! - `{"cmd": "new", "variant": "standard"}`, `{"cmd": "setup", "position":
//!   {...}}` (a position as `docs/rules.md` gives it), `{"cmd": "play", "action": "b1-b2"}`,
//!   `{"cmd": "undo"}`, `{"cmd": "state"}`: the state (the `gipf rules
//!   --json` object, with `moves`, the actions so far);
//! - `{"cmd": "baseline", "player": "alphabeta:2", "seed": 1}`: `{"action": ...}`
//!   from `random`, `greedy`, `uct:N`, `alphabeta:D` or `classic:D`;
//! - `{"cmd": "think", "simulations": 64, "search": {...}}` (search settings
//!   as in a config's `[search]`, optional), then `{"cmd": "feed"}`:
//!   `{"batch": N}` (N positions to evaluate), or `{"done": true, "action":
//!   ..., "value": ..., "visits": [[action, visits], ...], "simulations": ...}`
//!   with the root's value for the player to act and the most visited first.

use gipf_core::encoding::{action_at, ENCODING_VERSION, NUM_ACTIONS};
use gipf_core::players::{Baseline, Limit};
use gipf_core::rules::{Action, Cell, Position, Setup, StateJson, Variant};
use gipf_core::search::{Batched, Root, Search, SearchConfig, MAX_SIMULATIONS};
use serde::Deserialize;
use serde_json::{json, Value};

/// Floats per position in the output buffer: the logits, then the value.
pub const OUTPUT_SIZE: usize = NUM_ACTIONS + 1;

/// The deepest the page lets `alphabeta:D` and `classic:D` search (depth 5
/// already takes seconds in a browser); the other bounds of a request are
/// the core's: [`MAX_SIMULATIONS`] for `think` (its search settings checked
/// as a config's) and the baselines' ([`Baseline::parse`]).
pub const MAX_PAGE_DEPTH: u32 = 5;

#[derive(Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case", deny_unknown_fields)]
enum Request {
    Layout,
    Encoding,
    New { variant: Variant },
    Setup { position: Value },
    Play { action: String },
    Undo,
    State,
    Baseline { player: String, seed: u64 },
    Think { simulations: u32, search: Option<SearchConfig> },
    Feed,
}

/// A search waiting for the page's network.
struct Thinking {
    search: Batched<Search>,
    config: SearchConfig,
    simulations: u32,
}

/// One game in the page, and the search in progress.
pub struct Session {
    start: Position,
    actions: Vec<Action>,
    pos: Position,
    thinking: Option<Thinking>,
    output: Vec<f32>,
}

impl Default for Session {
    fn default() -> Session {
        Session::new(Variant::Standard)
    }
}

fn error(message: impl std::fmt::Display) -> Value {
    json!({ "error": message.to_string() })
}

impl Session {
    pub fn new(variant: Variant) -> Session {
        let start = Position::new(variant);
        Session { start, actions: Vec::new(), pos: start, thinking: None, output: Vec::new() }
    }

    /// The input planes of the batch asked for (`batch * INPUT_SIZE` floats).
    pub fn input(&self) -> &[f32] {
        self.thinking.as_ref().map_or(&[], |t| t.search.input())
    }

    /// Where the page writes the batch's outputs (`batch * OUTPUT_SIZE` floats).
    pub fn output_mut(&mut self) -> &mut [f32] {
        &mut self.output
    }

    /// Answers one JSON request with one JSON answer.
    pub fn handle(&mut self, request: &str) -> String {
        let answer = match serde_json::from_str::<Request>(request) {
            Ok(request) => self.answer(request),
            Err(e) => error(format!("bad request: {e}")),
        };
        answer.to_string()
    }

    fn answer(&mut self, request: Request) -> Value {
        match request {
            Request::Layout => json!({ "cells": Cell::all().map(|c| json!({
                "cell": c.to_string(), "column": c.column(), "number": c.number(), "dot": c.is_dot()
            })).collect::<Vec<_>>() }),
            Request::Encoding => json!({
                "encoding_version": ENCODING_VERSION,
                "actions": (0..NUM_ACTIONS).map(|i| action_at(i).to_string()).collect::<Vec<_>>(),
            }),
            Request::New { variant } => {
                *self = Session::new(variant);
                self.state()
            }
            Request::Setup { position } => {
                let setup = Setup::deserialize(&position).map_err(|e| e.to_string());
                match setup.and_then(|s| s.to_position().map_err(|e| e.to_string())) {
                    Ok(pos) => {
                        *self = Session { start: pos, pos, ..Session::default() };
                        self.state()
                    }
                    Err(e) => error(format!("position: {e}")),
                }
            }
            Request::Play { action } => {
                self.thinking = None;
                let parsed: Action = match action.parse() {
                    Ok(a) => a,
                    Err(e) => return error(format!("{action}: {e}")),
                };
                match self.pos.play(parsed) {
                    Ok(()) => {
                        self.actions.push(parsed);
                        self.state()
                    }
                    Err(e) => error(format!("{action} is not legal here: {e}")),
                }
            }
            Request::Undo => {
                self.thinking = None;
                if self.actions.pop().is_none() {
                    return error("nothing to undo");
                }
                self.pos = self.start;
                for &a in &self.actions {
                    self.pos.play_unchecked(a);
                }
                self.state()
            }
            Request::State => self.state(),
            Request::Baseline { player, seed } => match self.baseline(&player, seed) {
                Ok(action) => json!({ "action": action.to_string() }),
                Err(e) => error(e),
            },
            Request::Think { simulations, search } => self.think(simulations, search.unwrap_or_default()),
            Request::Feed => self.feed(),
        }
    }

    fn state(&self) -> Value {
        let mut state = serde_json::to_value(StateJson::of(&self.pos)).expect("a state is JSON");
        state["moves"] = json!(self.actions.iter().map(|a| a.to_string()).collect::<Vec<_>>());
        state
    }

    fn baseline(&self, spec: &str, seed: u64) -> Result<Action, String> {
        if self.pos.is_over() {
            return Err("the game is over".into());
        }
        let baseline = match Baseline::parse(spec) {
            Some(parsed) => parsed.map_err(|e| e.to_string())?,
            None => return Err(format!("{spec}: players are random, greedy, uct:N, alphabeta:D and classic:D")),
        };
        match baseline {
            Baseline::AlphaBeta { limit: Limit::Time(_), .. } => {
                return Err(format!("{spec}: the page searches to a depth (alphabeta:D, classic:D), not for a time"))
            }
            Baseline::AlphaBeta { limit: Limit::Depth(d), .. } if d > MAX_PAGE_DEPTH => {
                return Err(format!("{spec}: the page searches to a depth of at most {MAX_PAGE_DEPTH}"))
            }
            _ => {}
        }
        // A depth limit reads no clock.
        let mut player = baseline.build(seed, || std::time::Duration::ZERO);
        player.new_game(seed);
        player.choose(&self.pos).map_err(|e| e.to_string())
    }

    fn think(&mut self, simulations: u32, config: SearchConfig) -> Value {
        if self.pos.is_over() {
            return error("the game is over");
        }
        if !(1..=MAX_SIMULATIONS).contains(&simulations) {
            return error(format!("simulations must be from 1 to {MAX_SIMULATIONS}"));
        }
        if let Err(e) = config.validate() {
            return error(e);
        }
        let mut search = Search::new(self.pos, 0);
        search.start(simulations, Root::Plain, &config).expect("a plain root has no settings to refuse");
        let mut batched = Batched::default();
        batched.push(search);
        self.thinking = Some(Thinking { search: batched, config, simulations });
        // One legal action is played without a search, as the native player does.
        if self.pos.only_action().is_some() {
            return self.done();
        }
        self.next_batch()
    }

    /// Asks for the next batch, or answers the search's result.
    fn next_batch(&mut self) -> Value {
        let thinking = self.thinking.as_mut().expect("thinking");
        match thinking.search.gather(&thinking.config, |_| true) {
            Ok(0) => self.done(),
            Ok(batch) => {
                self.output = vec![0.0; batch * OUTPUT_SIZE];
                json!({ "batch": batch })
            }
            Err(e) => error(e),
        }
    }

    fn feed(&mut self) -> Value {
        let Some(thinking) = self.thinking.as_mut().filter(|t| t.search.is_waiting()) else {
            return error("no batch is waiting for the network");
        };
        let logits: Vec<f32> = self.output.chunks(OUTPUT_SIZE).flat_map(|out| &out[..NUM_ACTIONS]).copied().collect();
        let values: Vec<f32> = self.output.chunks(OUTPUT_SIZE).map(|out| out[NUM_ACTIONS]).collect();
        if let Err(e) = thinking.search.apply(&logits, &values, &thinking.config) {
            self.thinking = None;
            return error(e);
        }
        self.next_batch()
    }

    fn done(&mut self) -> Value {
        let thinking = self.thinking.take().expect("thinking");
        let tree = thinking.search.games()[0].tree();
        let action = match self.pos.only_action() {
            Some(only) => only,
            None => tree.best_action().expect("a searched root has actions"),
        };
        let mut visits = tree.root_visit_counts();
        visits.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        json!({
            "done": true,
            "action": action.to_string(),
            "value": if tree.root_visits() > 0 { Some(tree.root_value()) } else { None },
            "visits": visits.iter().map(|(a, n)| json!([a.to_string(), n])).collect::<Vec<_>>(),
            "simulations": thinking.simulations,
        })
    }
}

/// The WebAssembly exports: the page writes a request's UTF-8 into memory
/// from [`gipf_alloc`], calls [`gipf_handle`], and reads the answer at
/// [`gipf_answer_ptr`] ([`gipf_answer_len`] bytes).
#[cfg(target_arch = "wasm32")]
mod exports {
    use std::cell::RefCell;

    use super::Session;

    thread_local! {
        static SESSION: RefCell<Session> = RefCell::new(Session::default());
        static ANSWER: RefCell<String> = const { RefCell::new(String::new()) };
    }

    /// Room for `len` bytes, for the page to write a request into.
    #[no_mangle]
    pub extern "C" fn gipf_alloc(len: usize) -> *mut u8 {
        let mut buffer = Vec::<u8>::with_capacity(len.max(1));
        let ptr = buffer.as_mut_ptr();
        std::mem::forget(buffer);
        ptr
    }

    /// Frees what [`gipf_alloc`] gave.
    ///
    /// # Safety
    /// `ptr` and `len` are those of one earlier `gipf_alloc`.
    #[no_mangle]
    pub unsafe extern "C" fn gipf_free(ptr: *mut u8, len: usize) {
        drop(Vec::from_raw_parts(ptr, 0, len.max(1)));
    }

    /// Answers the request of `len` bytes at `ptr`; returns the answer's length.
    ///
    /// # Safety
    /// `ptr` holds `len` bytes written by the page.
    #[no_mangle]
    pub unsafe extern "C" fn gipf_handle(ptr: *const u8, len: usize) -> usize {
        let request = String::from_utf8_lossy(std::slice::from_raw_parts(ptr, len)).into_owned();
        let answer = SESSION.with_borrow_mut(|s| s.handle(&request));
        ANSWER.with_borrow_mut(|a| {
            *a = answer;
            a.len()
        })
    }

    #[no_mangle]
    pub extern "C" fn gipf_answer_ptr() -> *const u8 {
        ANSWER.with_borrow(|a| a.as_ptr())
    }

    #[no_mangle]
    pub extern "C" fn gipf_answer_len() -> usize {
        ANSWER.with_borrow(|a| a.len())
    }

    /// The batch's input planes (valid until the next request).
    #[no_mangle]
    pub extern "C" fn gipf_input_ptr() -> *const f32 {
        SESSION.with_borrow(|s| s.input().as_ptr())
    }

    /// Where the batch's outputs go (valid until the next request).
    #[no_mangle]
    pub extern "C" fn gipf_output_ptr() -> *mut f32 {
        SESSION.with_borrow_mut(|s| s.output_mut().as_mut_ptr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gipf_core::encoding::{encode, INPUT_SIZE};
    use gipf_core::search::{Evaluation, Evaluator, Tree, MAX_BATCH};

    fn ask(session: &mut Session, request: Value) -> Value {
        serde_json::from_str(&session.handle(&request.to_string())).unwrap()
    }

    /// A stand-in network: outputs that depend on the input planes only, as
    /// a real network's do.
    fn outputs(input: &[f32]) -> Vec<f32> {
        let weight = |i: usize| ((i * 7919) % 97) as f32 / 97.0 - 0.5;
        let mut out = vec![0.0; OUTPUT_SIZE];
        for (i, &x) in input.iter().enumerate().filter(|(_, &x)| x != 0.0) {
            out[(i * 31) % NUM_ACTIONS] += x * weight(i);
            out[NUM_ACTIONS] += x * weight(i + 1) / 40.0;
        }
        out[NUM_ACTIONS] = out[NUM_ACTIONS].tanh();
        out
    }

    struct StandIn;

    impl Evaluator for StandIn {
        fn evaluate(&mut self, positions: &[Position]) -> Vec<Evaluation> {
            positions
                .iter()
                .map(|pos| {
                    let mut input = vec![0.0; INPUT_SIZE];
                    encode(pos, &mut input);
                    let out = outputs(&input);
                    Evaluation::from_logits(pos, &out[..NUM_ACTIONS], out[NUM_ACTIONS])
                })
                .collect()
        }
    }

    #[test]
    fn a_game_with_undo_and_refusals() {
        let mut s = Session::default();
        let layout = ask(&mut s, json!({"cmd": "layout"}));
        let cells = layout["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 61);
        assert_eq!(cells.iter().filter(|c| c["dot"] == true).count(), 24);
        let encoding = ask(&mut s, json!({"cmd": "encoding"}));
        assert_eq!(encoding["actions"].as_array().unwrap().len(), NUM_ACTIONS);
        let start = ask(&mut s, json!({"cmd": "new", "variant": "basic"}));
        let state = start.clone();
        assert_eq!((state["variant"].as_str(), state["moves"].as_array().unwrap().len()), (Some("basic"), 0));
        let state = ask(&mut s, json!({"cmd": "play", "action": "b1-b2"}));
        assert_eq!(state["board"]["b2"], "w");
        assert_eq!(state["moves"], json!(["b1-b2"]));
        let refused = ask(&mut s, json!({"cmd": "play", "action": "Gb1-b2"}));
        assert!(refused["error"].as_str().unwrap().starts_with("Gb1-b2 is not legal here"), "{refused}");
        let refused = ask(&mut s, json!({"cmd": "play", "action": "z9"}));
        assert!(refused["error"].as_str().unwrap().starts_with("z9: "), "{refused}");
        assert_eq!(ask(&mut s, json!({"cmd": "undo"})), start);
        assert!(ask(&mut s, json!({"cmd": "undo"}))["error"].is_string());
        assert!(s.handle("not json").contains("bad request"));
        let position = json!({"variant": "standard", "board": {"c3": "W", "c4": "w", "c5": "w", "f5": "B"},
            "reserve": {"white": 12, "black": 16}, "to_move": "white"});
        let state = ask(&mut s, json!({"cmd": "setup", "position": position}));
        assert_eq!((state["board"]["c3"].as_str(), state["to_act"].as_str()), (Some("W"), Some("white")));
        let state = ask(&mut s, json!({"cmd": "play", "action": "c1-c2"}));
        assert_eq!(state["legal"], json!(["xc2,c3,c4,c5", "xc2,c4,c5"]));
        let bad = ask(&mut s, json!({"cmd": "setup", "position": {"variant": "standard"}}));
        assert!(bad["error"].as_str().unwrap().starts_with("position: "), "{bad}");
        ask(&mut s, json!({"cmd": "new", "variant": "basic"}));
        assert!(ask(&mut s, json!({"cmd": "feed"}))["error"].is_string());
        for player in ["random", "greedy", "uct:20", "alphabeta:2", "classic:2"] {
            let answer = ask(&mut s, json!({"cmd": "baseline", "player": player, "seed": 1}));
            let action = answer["action"].as_str().unwrap_or_else(|| panic!("{player}: {answer}"));
            assert!(ask(&mut s, json!({"cmd": "state"}))["legal"].as_array().unwrap().contains(&json!(action)));
        }
        for bad in [
            "alphabeta:0",
            "alphabeta:6",
            "alphabeta:32",
            "classic:0",
            "classic:6",
            "classic:250ms",
            "uct:x",
            "uct:100001",
            "minimax",
        ] {
            assert!(ask(&mut s, json!({"cmd": "baseline", "player": bad, "seed": 1}))["error"].is_string(), "{bad}");
        }
    }

    /// A `think` past the bounds (its search settings checked as a
    /// config's) is refused before anything is allocated.
    #[test]
    fn think_requests_past_the_bounds_are_refused() {
        let mut s = Session::default();
        let bad_batch = [0, MAX_BATCH + 1, usize::MAX].map(|b| (64, b, "search.batch_size"));
        let bad_simulations =
            [0, MAX_SIMULATIONS + 1, u32::MAX].map(|n| (n, 4, "simulations must be from 1 to 100000"));
        for (simulations, batch, named) in bad_simulations.into_iter().chain(bad_batch) {
            let search = json!({"c_puct": 1.5, "fpu_reduction": 0.2, "batch_size": batch, "virtual_loss": 1.0});
            let request = json!({"cmd": "think", "simulations": simulations, "search": search});
            let answer = ask(&mut s, request);
            let error = answer["error"].as_str().unwrap_or_else(|| panic!("{simulations} {batch}: {answer}"));
            assert!(error.contains(named), "{error}");
        }
        let search = json!({"c_puct": -1.0, "fpu_reduction": 0.2, "batch_size": 4, "virtual_loss": 1.0});
        let answer = ask(&mut s, json!({"cmd": "think", "simulations": 8, "search": search}));
        assert!(answer["error"].as_str().is_some_and(|e| e.contains("search.c_puct")), "{answer}");
        let search = json!({"c_puct": 1.5, "fpu_reduction": 0.2, "batch_size": MAX_BATCH, "virtual_loss": 1.0});
        let answer = ask(&mut s, json!({"cmd": "think", "simulations": 8, "search": search}));
        assert!(answer["batch"].as_u64().is_some(), "{answer}");
    }

    /// Fed batch by batch, the search chooses as the native one does with
    /// the same network, settings and simulations.
    #[test]
    fn the_stepped_search_matches_the_native_one() {
        let config = SearchConfig { batch_size: 4, ..SearchConfig::default() };
        let mut s = Session::new(Variant::Standard);
        let mut pos = Position::new(Variant::Standard);
        for ply in 0..12 {
            let mut answer = ask(&mut s, json!({"cmd": "think", "simulations": 48, "search": config}));
            while let Some(batch) = answer["batch"].as_u64() {
                let input = s.input().to_vec();
                for (i, chunk) in input.chunks(INPUT_SIZE).enumerate() {
                    s.output_mut()[i * OUTPUT_SIZE..(i + 1) * OUTPUT_SIZE].copy_from_slice(&outputs(chunk));
                }
                assert_eq!(input.len(), batch as usize * INPUT_SIZE);
                answer = ask(&mut s, json!({"cmd": "feed"}));
            }
            assert_eq!(answer["done"], true, "{answer}");
            let mut tree = Tree::new(pos);
            tree.run(&mut StandIn, 48, &config).unwrap();
            let native = tree.best_action().unwrap();
            assert_eq!(answer["action"], native.to_string(), "ply {ply}");
            let visits: u64 = answer["visits"].as_array().unwrap().iter().map(|v| v[1].as_u64().unwrap()).sum();
            assert_eq!(visits, tree.root_visit_counts().iter().map(|v| v.1 as u64).sum::<u64>());
            ask(&mut s, json!({"cmd": "play", "action": native.to_string()}));
            pos.play(native).unwrap();
        }
    }
}
