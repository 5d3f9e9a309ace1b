//! Classical players: negamax alpha-beta search with iterative deepening, a
//! transposition table on Zobrist keys, move ordering (table move, killers,
//! history) and a hand-written evaluation. Two styles share the search:
//! `alphabeta` (a plain one, the first yardstick) and `classic` (a tuned
//! evaluation, principal-variation search, aspiration windows and a
//! quiescence search over captures).
//!
//! Depth counts pushes: removal decisions are searched at no cost in depth,
//! so that `alphabeta:1` sees its push with every row it makes resolved, and
//! the opponent's removals that follow. Players do not simply alternate
//! (after a push the other player may decide a removal, and one player may
//! act several times running), so each node's value is for the player to act
//! there, and an edge negates it (and swaps the window) only when the player
//! changes.

pub mod classic;
mod plain;
mod quiescence;
mod table;
mod zobrist;

use std::time::Duration;

use super::{Player, PlayerError};
use crate::rules::{Action, Color, Phase, Position};
pub use plain::evaluate;
use table::{bound, from_table, to_table, Bound, Entry, Table};
pub use zobrist::zobrist;

/// The score of a win found `ply` decisions from the root is `WIN - ply`.
const WIN: i32 = 1_000_000;
/// Scores above this are wins or losses found by the search.
const WIN_BOUND: i32 = WIN - 10_000;
/// The deepest iteration of a timed search.
const MAX_DEPTH: i32 = 64;
/// The classic root's first window: the previous iteration's value plus or
/// minus this (a third of a logit in the classic evaluation's units).
const ASPIRATION: i32 = 35;

/// How far the search looks: a fixed depth in pushes, or iterative deepening
/// until the time is spent (read from the search's [`Clock`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Search this many pushes deep.
    Depth(u32),
    /// Deepen until this much time has passed.
    Time(Duration),
}

/// A monotonic clock: the time since any fixed moment. The core reads no
/// clock of its own; the program or the web page passes one in.
pub type Clock = fn() -> Duration;

/// Which classical player: the evaluation and the refinements of the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `alphabeta`: the plain evaluation, full windows, the table's values
    /// used only at their own depth (a fixed-depth value does not depend on it).
    AlphaBeta,
    /// `classic`: the tuned evaluation, principal-variation search with
    /// aspiration windows at the root, the table's values used from any
    /// depth at least the one asked, and a quiescence search over captures.
    Classic,
}

/// A classical player: the search and its tables.
pub struct AlphaBeta {
    style: Style,
    limit: Limit,
    table: Table,
    /// Two killer actions per ply from the root.
    killers: Vec<[Option<Action>; 2]>,
    /// Cut-offs caused by each push (by index and kind), weighted by depth.
    history: [[u32; 2]; crate::rules::NUM_PUSHES],
    clock: Clock,
    deadline: Option<Duration>,
    stopped: bool,
    use_table: bool,
    /// Nodes visited by the current search (the clock is read every 1024).
    nodes: u64,
    /// The depth of the current search's deepest finished iteration.
    depth_reached: u32,
}

/// How deep a search goes from a node: the pushes left, and the node's ply
/// from the root.
#[derive(Clone, Copy)]
struct Depth {
    left: i32,
    ply: u32,
}

/// A search window: values at or below `alpha` or at or above `beta` are
/// bounds, not exact.
#[derive(Clone, Copy)]
struct Window {
    alpha: i32,
    beta: i32,
}

impl AlphaBeta {
    /// The `alphabeta` player: a search to `limit`, reading `clock` for a time limit.
    pub fn new(limit: Limit, clock: Clock) -> AlphaBeta {
        AlphaBeta::with_style(Style::AlphaBeta, limit, clock)
    }

    /// The `classic` player.
    pub fn classic(limit: Limit, clock: Clock) -> AlphaBeta {
        AlphaBeta::with_style(Style::Classic, limit, clock)
    }

    /// The classical player of `style`.
    pub fn with_style(style: Style, limit: Limit, clock: Clock) -> AlphaBeta {
        AlphaBeta {
            style,
            limit,
            clock,
            table: Table::new(),
            killers: Vec::new(),
            history: [[0; 2]; crate::rules::NUM_PUSHES],
            deadline: None,
            stopped: false,
            use_table: true,
            nodes: 0,
            depth_reached: 0,
        }
    }

    /// The same search without its transposition table (for tests).
    pub fn without_table(self) -> AlphaBeta {
        AlphaBeta { use_table: false, ..self }
    }

    /// Nodes visited by the last search (quiescence nodes included).
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The depth of the last search's deepest finished iteration.
    pub fn depth_reached(&self) -> u32 {
        self.depth_reached
    }

    /// Searches `pos` (not over) and returns the best action with its value
    /// for the player to act (from the deepest iteration completed).
    pub fn search(&mut self, pos: &Position) -> (Action, i32) {
        let (max_depth, deadline) = match self.limit {
            Limit::Depth(d) => (d as i32, None),
            Limit::Time(t) => (MAX_DEPTH, Some((self.clock)() + t)),
        };
        self.deadline = deadline;
        self.stopped = false;
        self.nodes = 0;
        self.depth_reached = 0;
        self.history = [[0; 2]; crate::rules::NUM_PUSHES];
        let mut best: Option<(Action, i32)> = None;
        for depth in 1..=max_depth {
            let result = match best {
                Some((_, value)) if self.style == Style::Classic => self.aspirated_root(pos, depth, value),
                _ => self.root(pos, depth, -WIN - 1, WIN + 1),
            };
            if self.stopped {
                break;
            }
            best = Some(result);
            self.depth_reached = depth as u32;
            if result.1.abs() > WIN_BOUND {
                break;
            }
        }
        // A timed search that could not finish even one iteration plays the
        // first legal action; depth 1 takes a few milliseconds at most.
        best.unwrap_or_else(|| (pos.legal_actions()[0], 0))
    }

    /// The root searched first in a narrow window around `guess`, again in
    /// the full window when the value falls outside it.
    fn aspirated_root(&mut self, pos: &Position, depth: i32, guess: i32) -> (Action, i32) {
        if guess.abs() < WIN_BOUND {
            let (alpha, beta) = (guess - ASPIRATION, guess + ASPIRATION);
            let result = self.root(pos, depth, alpha, beta);
            if self.stopped || (alpha < result.1 && result.1 < beta) {
                return result;
            }
        }
        self.root(pos, depth, -WIN - 1, WIN + 1)
    }

    fn root(&mut self, pos: &Position, depth: i32, mut alpha: i32, beta: i32) -> (Action, i32) {
        let me = pos.to_act().expect("the root is not over");
        let key = zobrist(pos);
        let table_move = self.probe(key).and_then(|e| e.best);
        let actions = self.ordered_actions(pos, 0, table_move);
        let original_alpha = alpha;
        let (mut best, mut best_value) = (actions[0], -WIN - 1);
        for (i, action) in actions.into_iter().enumerate() {
            let value =
                self.action_value(pos, me, action, Depth { left: depth, ply: 0 }, Window { alpha, beta }, i == 0);
            if self.stopped {
                break;
            }
            if value > best_value {
                (best, best_value) = (action, value);
            }
            alpha = alpha.max(value);
            if alpha >= beta {
                break;
            }
        }
        self.store(key, depth, best_value, bound(best_value, original_alpha, beta), Some(best), 0);
        (best, best_value)
    }

    /// The value for `me` of `action` in `pos` in the window: in a classic
    /// search every action after the first is tried with a null window
    /// first, and searched again only if it may be better.
    fn action_value(
        &mut self,
        pos: &Position,
        me: Color,
        action: Action,
        at: Depth,
        window: Window,
        first: bool,
    ) -> i32 {
        let Window { alpha, beta } = window;
        if self.style == Style::AlphaBeta || first || beta - alpha <= 1 {
            return self.edge_value(pos, me, action, at, window);
        }
        let value = self.edge_value(pos, me, action, at, Window { alpha, beta: alpha + 1 });
        if value > alpha && value < beta && !self.stopped {
            return self.edge_value(pos, me, action, at, window);
        }
        value
    }

    /// The value for `me` of playing `action` in `pos`, searched in `window`.
    fn edge_value(&mut self, pos: &Position, me: Color, action: Action, at: Depth, window: Window) -> i32 {
        let mut child = *pos;
        child.play_unchecked(action);
        let depth = if matches!(action, Action::Push(_)) { at.left - 1 } else { at.left };
        self.child_value(&child, me, depth, window.alpha, window.beta, at.ply)
    }

    /// The value for `me` (who acted at `ply`) of `child`, searched to `depth`.
    fn child_value(&mut self, child: &Position, me: Color, depth: i32, alpha: i32, beta: i32, ply: u32) -> i32 {
        match child.outcome() {
            Some(o) if o.winner == me => WIN - ply as i32 - 1,
            Some(_) => -(WIN - ply as i32 - 1),
            None if child.to_act() == Some(me) => self.node(child, depth, alpha, beta, ply + 1),
            None => -self.node(child, depth, -beta, -alpha, ply + 1),
        }
    }

    /// Counts a node; reads the clock every 1024. False once the time is spent.
    fn visit(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes.is_multiple_of(1024) && self.deadline.is_some_and(|d| (self.clock)() >= d) {
            self.stopped = true;
        }
        !self.stopped
    }

    /// Negamax: the value of `pos` (not over) for its player to act.
    fn node(&mut self, pos: &Position, depth: i32, mut alpha: i32, beta: i32, ply: u32) -> i32 {
        if !self.visit() {
            return 0;
        }
        let me = pos.to_act().expect("searched nodes are not over");
        if depth <= 0 && pos.phase() == Phase::Push {
            return match self.style {
                Style::AlphaBeta => evaluate(pos, me),
                Style::Classic => self.quiesce(pos, alpha, beta, ply, depth),
            };
        }
        let key = zobrist(pos);
        let entry = self.probe(key);
        if let Some(value) = entry.and_then(|e| self.table_cut(e, depth, alpha, beta, ply)) {
            return value;
        }
        let original_alpha = alpha;
        let mut best_value = -WIN - 1;
        let mut best_action = None;
        for (i, action) in self.ordered_actions(pos, ply, entry.and_then(|e| e.best)).into_iter().enumerate() {
            let value = self.action_value(pos, me, action, Depth { left: depth, ply }, Window { alpha, beta }, i == 0);
            if self.stopped {
                return 0;
            }
            if value > best_value {
                best_value = value;
                best_action = Some(action);
            }
            alpha = alpha.max(value);
            if alpha >= beta {
                self.reward(action, depth, ply);
                break;
            }
        }
        self.store(key, depth, best_value, bound(best_value, original_alpha, beta), best_action, ply);
        best_value
    }

    /// The table's value where it settles the node: an exact value, or a
    /// bound outside the window, from the same depth (plain) or one at least
    /// as deep (classic).
    fn table_cut(&self, entry: Entry, depth: i32, alpha: i32, beta: i32, ply: u32) -> Option<i32> {
        let deep_enough = match self.style {
            Style::AlphaBeta => entry.depth == depth,
            Style::Classic => entry.depth >= depth,
        };
        let value = from_table(entry.value, ply);
        let cut = match entry.bound {
            Bound::Exact => true,
            Bound::Lower => value >= beta,
            Bound::Upper => value <= alpha,
        };
        (deep_enough && cut).then_some(value)
    }

    /// The table's entry for the position with this key.
    fn probe(&self, key: u64) -> Option<Entry> {
        self.use_table.then(|| self.table.probe(key)).flatten()
    }

    fn store(&mut self, key: u64, depth: i32, value: i32, bound: Bound, best: Option<Action>, ply: u32) {
        if self.use_table && !self.stopped {
            self.table.store(Entry { key, depth, value: to_table(value, ply), bound, best });
        }
    }

    /// A cut-off by `action`: it becomes a killer at `ply` and gains history.
    fn reward(&mut self, action: Action, depth: i32, ply: u32) {
        if let Action::Push(push) = action {
            self.history[push.index()][push.is_gipf() as usize] += (depth * depth) as u32;
            let killers = &mut self.killers[ply as usize];
            if killers[0] != Some(action) {
                killers[1] = killers[0];
                killers[0] = Some(action);
            }
        }
    }

    /// Legal actions, the table's best first, then killers, then by history.
    fn ordered_actions(&mut self, pos: &Position, ply: u32, table_move: Option<Action>) -> Vec<Action> {
        let mut actions = pos.legal_actions();
        if self.killers.len() <= ply as usize {
            self.killers.resize(ply as usize + 1, [None; 2]);
        }
        let killers = self.killers[ply as usize];
        let rank = |a: &Action| -> u64 {
            if Some(*a) == table_move {
                return u64::MAX;
            }
            if killers.contains(&Some(*a)) {
                return u64::MAX - 2 + (killers[0] == Some(*a)) as u64;
            }
            match a {
                Action::Push(p) => self.history[p.index()][p.is_gipf() as usize] as u64,
                // Larger removals first: they take more pieces.
                Action::Remove(points) => points.len() as u64,
                Action::Leave => 0,
            }
        };
        actions.sort_by_cached_key(|a| std::cmp::Reverse(rank(a)));
        actions
    }
}

impl Player for AlphaBeta {
    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        if pos.is_over() {
            return Err(PlayerError::GameOver);
        }
        Ok(match pos.only_action() {
            Some(only) => only,
            None => self.search(pos).0,
        })
    }

    /// Forgets what earlier games taught the move ordering, so that a game
    /// plays the same whichever games its thread played before.
    fn new_game(&mut self, _seed: u64) {
        self.table.clear();
        self.killers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::quiescence::{capture_candidates, captures};
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    use std::sync::LazyLock;
    use std::time::Instant;

    /// The tests' clock.
    fn clock() -> Duration {
        static START: LazyLock<Instant> = LazyLock::new(Instant::now);
        START.elapsed()
    }
    use crate::rules::fixtures::{forced_win_in_two, removal_by_the_player_who_did_not_push, setup, win_in_one};
    use crate::rules::{Variant, WinReason};

    #[test]
    fn finds_the_win_in_one() {
        let pos = win_in_one();
        let mut search = AlphaBeta::new(Limit::Depth(1), clock);
        let (action, value) = search.search(&pos);
        assert_eq!(action.to_string(), "xb5,c5,d5,e5,f4,g3,h2");
        assert_eq!(value, WIN - 1);
    }

    /// White's win in two pushes is found at depth 3 (white, black, white)
    /// and not before.
    #[test]
    fn finds_a_forced_win_in_two() {
        let pos = forced_win_in_two();
        let (action, value) = AlphaBeta::new(Limit::Depth(3), clock).search(&pos);
        assert_eq!(value, WIN - 3, "{action}: white wins at its second push");
        let (_, shallow) = AlphaBeta::new(Limit::Depth(2), clock).search(&pos);
        assert!(shallow < WIN_BOUND, "depth 2 sees no win: {shallow}");
        // The win is forced only by a block: some pushes let black escape.
        let escapes = pos.legal_actions().into_iter().filter(|&a| {
            let mut next = pos;
            next.play_unchecked(a);
            AlphaBeta::new(Limit::Depth(2), clock).search(&next).1 > -WIN_BOUND
        });
        assert!(escapes.count() > 0, "some first pushes do not win");
        let mut after = pos;
        after.play(action).unwrap();
        assert!(AlphaBeta::new(Limit::Depth(2), clock).search(&after).1 < -WIN_BOUND, "{action} leaves black lost");
    }

    /// White's push completes a black row: black, not the pusher, decides how
    /// to remove it, and the search must score it from black's side.
    #[test]
    fn removal_decided_by_the_player_who_did_not_push() {
        let pos = removal_by_the_player_who_did_not_push();
        let legal = pos.legal_actions();
        assert!(legal.len() > 1, "black has a choice: {legal:?}");
        let (action, value) = AlphaBeta::new(Limit::Depth(1), clock).search(&pos);
        let best = legal
            .iter()
            .map(|&a| {
                let mut next = pos;
                next.play_unchecked(a);
                let v = AlphaBeta::new(Limit::Depth(1), clock).search_value_after(&next, Color::Black);
                (a, v)
            })
            .max_by_key(|&(_, v)| v)
            .unwrap();
        assert_eq!(value, best.1, "black's value is the best of black's removals");
        assert_eq!(action, best.0);
    }

    /// The position after `actions` uniformly random actions from the start
    /// of `variant`, or the end of the game if it comes first.
    fn after_random_actions(variant: Variant, actions: usize, rng: &mut SmallRng) -> Position {
        let mut pos = Position::new(variant);
        for _ in 0..actions {
            if pos.is_over() {
                break;
            }
            let legal = pos.legal_actions();
            pos.play_unchecked(legal[rng.random_range(0..legal.len())]);
        }
        pos
    }

    #[test]
    fn the_table_does_not_change_a_fixed_depth_value() {
        let mut rng = SmallRng::seed_from_u64(7);
        for variant in [Variant::Standard, Variant::Basic, Variant::Tournament] {
            let pos = after_random_actions(variant, 30, &mut rng);
            if pos.is_over() {
                continue;
            }
            for depth in [1, 2, 3] {
                let with = AlphaBeta::new(Limit::Depth(depth), clock).search(&pos).1;
                let mut plain = AlphaBeta::new(Limit::Depth(depth), clock).without_table();
                let without = plain.search(&pos).1;
                assert_eq!(with, without, "{variant} depth {depth}");
            }
        }
    }

    #[test]
    fn a_time_budget_is_kept() {
        let pos = Position::new(Variant::Standard);
        let mut search = AlphaBeta::new(Limit::Time(Duration::from_millis(100)), clock);
        let start = Instant::now();
        let action = search.choose(&pos).unwrap();
        assert!(pos.is_legal(action));
        // Unbounded, iterative deepening to depth 64 would not end.
        assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
    }

    /// Black's last GIPF piece (c5) lies in the run of the row white's push
    /// g1-g2 makes: the push, then the removal that takes it, wins.
    #[test]
    fn classic_finds_the_win_of_the_last_gipf_piece() {
        let pos = setup(
            r#"{"variant": "standard", "board": {"b5": "b", "c5": "B", "d5": "w", "e5": "w", "f4": "w",
                "h2": "w", "g2": "w", "e2": "W"}, "reserve": {"white": 7, "black": 14}, "to_move": "white"}"#,
        );
        let (action, value) = AlphaBeta::classic(Limit::Depth(1), clock).search(&pos);
        assert_eq!(value, WIN - 2, "{action}: a win at the removal after the push");
        let mut after = pos;
        after.play(action).unwrap();
        let (removal, _) = AlphaBeta::classic(Limit::Depth(1), clock).search(&after);
        after.play(removal).unwrap();
        assert_eq!(after.outcome().map(|o| (o.winner, o.reason)), Some((Color::White, WinReason::NoGipfPiece)));
    }

    #[test]
    fn classic_finds_the_forced_win_in_two() {
        let pos = forced_win_in_two();
        let (action, value) = AlphaBeta::classic(Limit::Depth(3), clock).search(&pos);
        assert_eq!(value, WIN - 3, "{action}: white wins at its second push");
    }

    /// One game between `a` (white when `a_white`) and `b` after `opening`
    /// random actions; whether `a` won.
    fn a_wins(a: &mut AlphaBeta, b: &mut AlphaBeta, a_white: bool, opening: u64) -> bool {
        let mut pos = after_random_actions(Variant::Standard, 4, &mut SmallRng::seed_from_u64(opening));
        a.new_game(0);
        b.new_game(0);
        for _ in 0..600 {
            let Some(player) = pos.to_act() else { break };
            let action = if (player == Color::White) == a_white { a.choose(&pos) } else { b.choose(&pos) }.unwrap();
            pos.play(action).unwrap();
        }
        pos.outcome().is_some_and(|o| (o.winner == Color::White) == a_white)
    }

    /// Each depth of `classic` beats the one below (a short match of
    /// colour-swapped pairs; the ladder in docs/results.md has the long ones).
    #[test]
    fn a_deeper_classic_wins() {
        for depth in [2, 3] {
            let mut deeper = AlphaBeta::classic(Limit::Depth(depth), clock);
            let mut shallower = AlphaBeta::classic(Limit::Depth(depth - 1), clock);
            let wins: usize = (0..4)
                .map(|opening| {
                    [true, false]
                        .into_iter()
                        .filter(|&white| a_wins(&mut deeper, &mut shallower, white, opening))
                        .count()
                })
                .sum();
            assert!(wins >= 6, "classic:{depth} won {wins} of 8 against classic:{}", depth - 1);
        }
    }

    /// With its table or without, a classic search to depth 1 finds the same
    /// value: the bounds it stores under null windows are used rightly (at
    /// depth 1 no entry is deeper than asked, so none may differ).
    #[test]
    fn classic_values_do_not_depend_on_the_table_at_depth_one() {
        let mut rng = SmallRng::seed_from_u64(9);
        for _ in 0..20 {
            let actions = rng.random_range(5..60);
            let pos = after_random_actions(Variant::Standard, actions, &mut rng);
            if pos.is_over() {
                continue;
            }
            let with = AlphaBeta::classic(Limit::Depth(1), clock).search(&pos).1;
            let without = AlphaBeta::classic(Limit::Depth(1), clock).without_table().search(&pos).1;
            assert_eq!(with, without);
        }
    }

    /// The quiescence search tries only pushes that change a point of a
    /// near row: no push that captures is left out (over the positions of
    /// random games, every capturing push passes the filter).
    #[test]
    fn no_capture_escapes_the_quiescence_filter() {
        let mut rng = SmallRng::seed_from_u64(4);
        let (mut captures_seen, mut skipped) = (0, 0);
        for variant in [Variant::Standard, Variant::Tournament] {
            for _ in 0..200 {
                let mut pos = Position::new(variant);
                while !pos.is_over() {
                    let legal = pos.legal_actions();
                    if pos.phase() == Phase::Push {
                        let me = pos.to_move();
                        let candidates = capture_candidates(&pos, me);
                        for &action in &legal {
                            let mut child = pos;
                            child.play_unchecked(action);
                            let passes = candidates.contains(&action);
                            if captures(&child, me) {
                                captures_seen += 1;
                                assert!(passes, "{action} captures in {pos:?}");
                            } else if !passes {
                                skipped += 1;
                            }
                        }
                    }
                    pos.play_unchecked(legal[rng.random_range(0..legal.len())]);
                }
            }
        }
        assert!(captures_seen > 100 && skipped > 10 * captures_seen, "{captures_seen} captures, {skipped} skipped");
    }

    impl AlphaBeta {
        /// The value for `me` of `pos` searched to this player's depth.
        fn search_value_after(&mut self, pos: &Position, me: Color) -> i32 {
            match (pos.outcome(), pos.to_act()) {
                (Some(o), _) => {
                    if o.winner == me {
                        WIN - 1
                    } else {
                        -(WIN - 1)
                    }
                }
                (None, Some(p)) => {
                    let Limit::Depth(d) = self.limit else { unreachable!() };
                    let v = self.node(pos, d as i32, -WIN - 1, WIN + 1, 1);
                    if p == me {
                        v
                    } else {
                        -v
                    }
                }
                _ => unreachable!(),
            }
        }
    }
}
