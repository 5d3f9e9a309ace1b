//! The engine protocol: a line protocol on standard input and output, in the
//! manner of GTP and UCI, so that a front-end or another program can play
//! against a model or a baseline. One command per line, exactly one reply
//! line per command; a reply starting with `error` names what was wrong and
//! changes nothing. Blank lines and lines starting with `#` are ignored.
//!
//! | command | reply |
//! |---|---|
//! | `new [basic\|standard\|tournament]` | `ok` (a new game; the current variant when none is given) |
//! | `position JSON` | `ok` (the position JSON of `docs/rules.md`, on one line) |
//! | `play ACTION...` | `ok` (all actions played, or none if one is illegal) |
//! | `go` | `action ACTION` (the engine's action for the player to act, also played) |
//! | `analyse JSON` | the search's view of a position, as one JSON line (see `engine/analysis.rs`) |
//! | `undo` | `ok` (takes back the last action played) |
//! | `legal` | `legal ACTION...` (sorted) |
//! | `state` | the `gipf rules --json` state object, on one line |
//! | `show` | the board picture, its lines joined by ` \| ` |
//! | `name` | `name gipf PLAYER` |
//! | `help` | `commands ...` |
//! | `quit` | `bye` (the engine exits) |

mod analysis;

use std::io::{BufRead, Write};

use crate::players::Player;
use crate::rules::{parse_actions, picture, Position, Setup, StateJson, Variant};

/// A game and the player that answers `go`.
///
/// ```rust
/// use gipf::engine::Engine;
/// use gipf::players::RandomPlayer;
/// use gipf::rules::Variant;
///
/// let mut engine = Engine::new(Box::new(RandomPlayer::new(1)), "random".into(), Variant::Standard);
/// assert_eq!(engine.handle("new basic").unwrap().text, "ok");
/// assert_eq!(engine.handle("play b1-b2").unwrap().text, "ok");
/// assert!(engine.handle("go").unwrap().text.starts_with("action "));
/// // The same protocol as lines in and out.
/// let mut out = Vec::new();
/// engine.serve("undo\nname\nquit\n".as_bytes(), &mut out)?;
/// assert_eq!(String::from_utf8(out)?, "ok\nname gipf random\nbye\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Engine {
    pos: Position,
    /// Positions before each action played, for `undo`.
    history: Vec<Position>,
    player: Box<dyn Player>,
    player_name: String,
}

/// A command's reply line, and whether the engine stops after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The reply line, without its line break.
    pub text: String,
    /// Whether the engine stops reading commands after it (`quit`).
    pub quit: bool,
}

/// One reply line: a line break inside (a parser's message quoting its
/// input) is written as `\n`, so that every command gets exactly one line.
fn reply(text: impl Into<String>) -> Option<Reply> {
    let text: String = text.into();
    Some(Reply { text: text.replace('\r', "\\r").replace('\n', "\\n"), quit: false })
}

fn error(text: impl std::fmt::Display) -> Option<Reply> {
    reply(format!("error: {text}"))
}

const COMMANDS: &str = "new position play go analyse undo legal state show name help quit";

impl Engine {
    /// An engine at the start of `variant`, answering `go` with `player`;
    /// `name` replies with `player_name`.
    pub fn new(player: Box<dyn Player>, player_name: String, variant: Variant) -> Engine {
        Engine { pos: Position::new(variant), history: Vec::new(), player, player_name }
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// Answers one line; `None` for a blank line or a comment.
    pub fn handle(&mut self, line: &str) -> Option<Reply> {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        let (command, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        match command {
            "new" => {
                let variant = match rest {
                    "" => self.pos.variant(),
                    name => match name.parse::<Variant>() {
                        Ok(v) => v,
                        Err(e) => return error(e),
                    },
                };
                self.pos = Position::new(variant);
                self.history.clear();
                reply("ok")
            }
            "position" => match Setup::from_json(rest).and_then(|s| s.to_position()) {
                Ok(pos) => {
                    self.pos = pos;
                    self.history.clear();
                    reply("ok")
                }
                Err(e) => error(format!("position: {e}")),
            },
            "play" => {
                let actions = match parse_actions(rest) {
                    Ok(a) if a.is_empty() => return error("play: no action given"),
                    Ok(a) => a,
                    Err(e) => return error(e),
                };
                let mut before = Vec::with_capacity(actions.len());
                let mut pos = self.pos;
                for action in &actions {
                    before.push(pos);
                    if let Err(e) = pos.play(*action) {
                        return error(format!("{action}: {e}"));
                    }
                }
                self.history.extend(before);
                self.pos = pos;
                reply("ok")
            }
            "go" => {
                if let Some(outcome) = self.pos.outcome() {
                    return error(format!("the game is over: {} won", outcome.winner));
                }
                let action = match self.player.choose(&self.pos) {
                    Ok(action) => action,
                    Err(e) => return error(format!("go: {e}")),
                };
                self.history.push(self.pos);
                self.pos.play(action).expect("players choose legal actions");
                reply(format!("action {action}"))
            }
            "analyse" => match analysis::answer(self.player.as_mut(), &self.pos, rest) {
                Ok(json) => reply(json),
                Err(e) => error(format!("analyse: {e}")),
            },
            "undo" => match self.history.pop() {
                Some(pos) => {
                    self.pos = pos;
                    reply("ok")
                }
                None => error("undo: no action to take back"),
            },
            "legal" => {
                let mut legal: Vec<String> = self.pos.legal_actions().iter().map(|a| a.to_string()).collect();
                legal.sort();
                reply(format!("legal {}", legal.join(" ")).trim_end().to_string())
            }
            "state" => reply(serde_json::to_string(&StateJson::of(&self.pos)).expect("the state serializes")),
            "show" => reply(picture(&self.pos).lines().collect::<Vec<_>>().join(" | ")),
            "name" => reply(format!("name gipf {}", self.player_name)),
            "help" => reply(format!("commands {COMMANDS}")),
            "quit" => Some(Reply { text: "bye".into(), quit: true }),
            other => error(format!("unknown command '{other}' (commands: {COMMANDS})")),
        }
    }

    /// Answers commands from `input` until `quit` or the end of the input.
    /// A line longer than [`MAX_LINE`] bytes, or not UTF-8, gets an error
    /// reply and the engine goes on.
    pub fn serve(&mut self, mut input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
        let mut bytes = Vec::new();
        while let Some(fits) = read_line_within(&mut input, &mut bytes, MAX_LINE)? {
            let answer = match (fits, std::str::from_utf8(&bytes)) {
                (false, _) => error(format!("the line is longer than {MAX_LINE} bytes")),
                (true, Err(_)) => error("the line is not UTF-8"),
                (true, Ok(line)) => self.handle(line),
            };
            if let Some(r) = answer {
                writeln!(output, "{}", r.text)?;
                output.flush()?;
                if r.quit {
                    break;
                }
            }
        }
        Ok(())
    }
}

/// The longest command line the engine reads: far above any real one (a
/// `position` or `play` line of a long game is a few kB).
pub const MAX_LINE: usize = 1 << 20;

/// Reads the next line of `input` into `line` (without its line break),
/// keeping at most `max` bytes: `None` at the end of the input, else
/// whether the whole line fitted (the rest of a longer one is read past).
fn read_line_within(input: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> std::io::Result<Option<bool>> {
    line.clear();
    let (mut fits, mut read_any) = (true, false);
    loop {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            return Ok(read_any.then_some(fits));
        }
        read_any = true;
        let end = buffer.iter().position(|&b| b == b'\n');
        let part = &buffer[..end.unwrap_or(buffer.len())];
        fits &= line.len() + part.len() <= max;
        if fits {
            line.extend_from_slice(part);
        }
        let used = end.map_or(buffer.len(), |end| end + 1);
        input.consume(used);
        if end.is_some() {
            return Ok(Some(fits));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::players::PlayerSpec;
    use crate::rules::replay;
    use crate::search::SearchConfig;
    use serde_json::json;

    fn position_after(variant: Variant, actions: &str) -> anyhow::Result<Position> {
        Ok(replay(Position::new(variant), &parse_actions(actions)?)?)
    }

    fn engine() -> Engine {
        let player = PlayerSpec::Baseline(crate::players::Baseline::Greedy)
            .build(tch::Device::Cpu, Default::default(), &SearchConfig::default(), 1)
            .unwrap();
        Engine::new(player, "greedy".into(), Variant::Standard)
    }

    fn text(e: &mut Engine, line: &str) -> String {
        e.handle(line).expect("a reply").text
    }

    #[test]
    fn a_session_plays_and_answers_each_command_once() {
        let mut e = engine();
        assert_eq!(text(&mut e, "new basic"), "ok");
        assert_eq!(e.position().variant(), Variant::Basic);
        assert_eq!(text(&mut e, "play b1-b2 b6-b5"), "ok");
        assert_eq!(*e.position(), position_after(Variant::Basic, "b1-b2 b6-b5").unwrap());
        let go = text(&mut e, "go");
        let action = go.strip_prefix("action ").expect(&go);
        assert_eq!(*e.position(), position_after(Variant::Basic, &format!("b1-b2 b6-b5 {action}")).unwrap());
        assert_eq!(text(&mut e, "undo"), "ok");
        assert_eq!(*e.position(), position_after(Variant::Basic, "b1-b2 b6-b5").unwrap());
        let state: StateJson = serde_json::from_str(&text(&mut e, "state")).unwrap();
        assert_eq!(state.board.len(), 3 + 3 + 2, "basic starts with three pieces each");
        assert!(text(&mut e, "legal").starts_with("legal a1-b2 "));
        assert!(e.handle("").is_none() && e.handle("# comment").is_none());
        assert_eq!(e.handle("quit"), Some(Reply { text: "bye".into(), quit: true }));
    }

    #[test]
    fn bad_input_is_an_error_reply_that_changes_nothing() {
        let mut e = engine();
        e.handle("play b1-b2");
        let before = *e.position();
        for (line, expected) in [
            ("play a1-b2 zz", "'zz' is not an action"),
            ("play b1-b2 xa1", "is a dot"),
            ("play b6-b5 xb2", "error: xb2"),
            ("play", "no action"),
            ("new chess", "chess"),
            ("position {\"variant\": \"basic\"", "position"),
            ("position {\"variant\": \"basic\", \"board\": {}, \"extra\": 1}", "extra"),
            ("frobnicate", "unknown command 'frobnicate'"),
            // Found by fuzzing: a JSON key with an escaped line break was
            // quoted in the message, splitting the reply in two lines.
            ("position {\"vari\\nt\": \"basic\", \"board\"", "unknown field `vari\\nt`"),
        ] {
            let r = text(&mut e, line);
            assert!(r.starts_with("error: ") && r.contains(expected), "{line}: {r}");
            assert!(!r.contains('\n'), "{line}: one line");
            assert_eq!(*e.position(), before, "{line} changed the position");
        }
        e.handle("new");
        assert!(text(&mut e, "undo").starts_with("error: "));
    }

    #[test]
    fn serve_answers_line_by_line_and_survives_bad_bytes() {
        let mut e = engine();
        let input: &[u8] = b"new standard\n\xff\xfe\nplay b1-b2\nbogus\nquit\nnew\n";
        let mut out = Vec::new();
        e.serve(input, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5, "{out}");
        assert_eq!(lines[0], "ok");
        assert!(lines[1].starts_with("error: "));
        assert_eq!(lines[2], "ok");
        assert!(lines[3].starts_with("error: unknown command"));
        assert_eq!(lines[4], "bye");
    }

    /// A line past the bound is refused with an error reply, without being
    /// kept in memory, and the next command is answered.
    #[test]
    fn a_line_past_the_bound_is_an_error_and_the_engine_goes_on() {
        let mut e = engine();
        let mut input = b"play b1-b2\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 1));
        input.extend_from_slice(b"\nplay ");
        input.extend(std::iter::repeat_n(b'y', MAX_LINE - 5));
        input.extend_from_slice(b"\nlegal\nquit");
        let mut out = Vec::new();
        e.serve(std::io::BufReader::with_capacity(4096, &input[..]), &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 5, "{}", &out[..out.len().min(2000)]);
        assert_eq!(lines[0], "ok");
        assert_eq!(lines[1], format!("error: the line is longer than {MAX_LINE} bytes"));
        assert!(lines[2].starts_with("error: ") && !lines[2].contains("longer"), "a line of exactly the bound is read");
        assert!(lines[3].starts_with("legal "));
        assert_eq!(lines[4], "bye");
    }
    /// An engine playing a fresh tiny network saved in `dir`.
    fn network_engine(dir: &std::path::Path) -> Engine {
        let tiny = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml");
        let weights = crate::train::Trainer::new(&crate::config::Config::load(&tiny).unwrap(), tch::Device::Cpu, 3)
            .save(dir)
            .unwrap();
        let spec = PlayerSpec::parse(&format!("{}@8", weights.display()), crate::players::Budget::Simulations(8));
        let search = SearchConfig { batch_size: 4, ..SearchConfig::default() };
        let player = spec.unwrap().build(tch::Device::Cpu, Default::default(), &search, 1).unwrap();
        Engine::new(player, "tiny".into(), Variant::Standard)
    }

    /// `analyse` answers one JSON line: the visits add up to the budget,
    /// the candidates come most visited first with lines that start with
    /// them, the reply reads back as an [`crate::search::Analysis`], and the
    /// game is left as it was.
    #[test]
    fn analyse_replies_one_json_line_whose_visits_add_up_to_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = network_engine(dir.path());
        e.handle("play b1-b2");
        let before = *e.position();
        let query =
            r#"analyse {"id": "q7", "variant": "standard", "actions": ["b1-b2"], "simulations": 50, "candidates": 50}"#;
        let reply = text(&mut e, query);
        let reply: serde_json::Value = serde_json::from_str(&reply).expect(&reply);
        assert_eq!((&reply["version"], &reply["id"], &reply["to_act"]), (&json!(1), &json!("q7"), &json!("black")));
        let analysis: crate::search::Analysis = serde_json::from_value(reply.clone()).unwrap();
        assert_eq!(analysis.visits, 50);
        assert_eq!(analysis.candidates.len(), before.legal_actions().len());
        assert_eq!(
            analysis.candidates.iter().map(|c| c.visits).sum::<u32>() + 1,
            50,
            "the root's first visit expands it"
        );
        assert!(analysis.candidates.windows(2).all(|w| w[0].visits >= w[1].visits));
        assert!(analysis.candidates.iter().all(|c| c.pv[0] == c.action && c.prior > 0.0));
        assert!((-1.0..=1.0).contains(&analysis.value));
        let again: serde_json::Value = serde_json::from_str(&serde_json::to_string(&analysis).unwrap()).unwrap();
        assert_eq!(again["candidates"], reply["candidates"], "the JSON round-trips");
        assert_eq!(*e.position(), before);
        let three: serde_json::Value =
            serde_json::from_str(&text(&mut e, r#"analyse {"simulations": 8, "candidates": 3}"#)).unwrap();
        assert_eq!((three["to_act"].as_str(), three["candidates"].as_array().unwrap().len()), (Some("black"), 3));
    }

    #[test]
    fn a_bad_analysis_query_is_an_error_naming_its_field() {
        let dir = tempfile::tempdir().unwrap();
        let mut e = network_engine(dir.path());
        for (query, expected) in [
            (r#"{"simulations": 0}"#, "analyse: field `simulations`: 0 is not a whole number in 1..=100000"),
            (r#"{"candidates": "x"}"#, "field `candidates`"),
            (r#"{"actions": ["b1-b2", "zz"]}"#, "field `actions`: action 2 (zz)"),
            (r#"{"actions": "b1-b2"}"#, "field `actions`: not a list"),
            (r#"{"variant": "chess"}"#, "field `variant`"),
            (r#"{"position": {"board": 3}}"#, "field `position`"),
            (r#"{"sims": 5}"#, "unknown field `sims`"),
            ("[1]", "not a JSON object"),
            ("{", "not JSON"),
        ] {
            let reply = text(&mut e, &format!("analyse {query}"));
            assert!(reply.starts_with("error: analyse: ") && reply.contains(expected), "{query}: {reply}");
        }
        let reply = text(&mut engine(), "analyse {}");
        assert!(reply.contains("searches no tree"), "{reply}");
    }
    /// White to act can push a fourth piece into a row whose extension holds
    /// Black's last GIPF piece: the reference model's analysis puts a
    /// winning push first, its line captures the piece and wins, and its
    /// value is near 1.
    #[test]
    fn an_analysed_mate_in_one_shows_the_winning_action_first() {
        let spec = PlayerSpec::parse(crate::checkpoint::REFERENCE, crate::players::Budget::Simulations(8)).unwrap();
        let player = spec.build(tch::Device::Cpu, Default::default(), &SearchConfig::default(), 1).unwrap();
        let mut e = Engine::new(player, "reference".into(), Variant::Standard);
        let setup = r#"{"variant": "standard", "board": {"e3": "w", "e4": "w", "e5": "w", "e6": "B", "b5": "b", "c6": "b", "g2": "W"},
                        "reserve": {"white": 10, "black": 10}, "to_move": "white"}"#;
        let reply =
            text(&mut e, &format!(r#"analyse {{"position": {}, "simulations": 400}}"#, setup.replace('\n', " ")));
        let analysis: crate::search::Analysis = serde_json::from_str(&reply).expect(&reply);
        let best = &analysis.candidates[0];
        let mut pos = Setup::from_json(setup).unwrap().to_position().unwrap();
        for action in &best.pv {
            pos.play(action.parse().unwrap()).unwrap();
        }
        assert_eq!(pos.outcome().map(|o| o.winner), Some(crate::rules::Color::White), "{reply}");
        assert!(best.value.unwrap() > 0.9 && analysis.value > 0.9, "{reply}");
        assert!(!reply.contains("warning"), "{reply}");
        // A position of another variant than the model's is answered with a warning.
        let reply = text(&mut e, r#"analyse {"variant": "tournament", "simulations": 8}"#);
        let warning = serde_json::from_str::<serde_json::Value>(&reply).unwrap()["warning"].clone();
        assert!(warning.as_str().unwrap().contains("trained on the standard variant, not tournament"), "{reply}");
    }
}
