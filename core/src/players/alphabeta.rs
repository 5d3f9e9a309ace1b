//! A classical yardstick: negamax alpha-beta search with iterative deepening,
//! a transposition table on Zobrist keys, move ordering (table move, killers,
//! history) and a hand-written evaluation.
//!
//! Depth counts pushes: removal decisions are searched at no cost in depth,
//! so that `alphabeta:1` sees its push with every row it makes resolved, and
//! the opponent's removals that follow. Players do not simply alternate
//! (after a push the other player may decide a removal, and one player may
//! act several times running), so each node's value is for the player to act
//! there, and an edge negates it (and swaps the window) only when the player
//! changes.

use std::sync::LazyLock;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::Player;
use crate::rules::{line_layout, Action, Bitboard, Color, GipfRight, Phase, Position, NUM_LINES, NUM_POINTS};

/// The score of a win found `ply` decisions from the root is `WIN - ply`.
const WIN: i32 = 1_000_000;
/// Scores above this are wins or losses found by the search.
const WIN_BOUND: i32 = WIN - 10_000;
/// The deepest iteration of a timed search.
const MAX_DEPTH: u32 = 64;
/// Transposition table entries (a power of two).
const TABLE_SIZE: usize = 1 << 20;

/// How far the search looks: a fixed depth in pushes, or iterative deepening
/// until the time is spent (read from the search's [`Clock`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Depth(u32),
    Time(Duration),
}

/// A monotonic clock: the time since any fixed moment. The core reads no
/// clock of its own; the program or the web page passes one in.
pub type Clock = fn() -> Duration;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Bound {
    Exact,
    /// The value is at least the stored one (a beta cut-off).
    Lower,
    /// The value is at most the stored one (no action raised alpha).
    Upper,
}

#[derive(Clone, Copy)]
struct Entry {
    key: u64,
    depth: u32,
    value: i32,
    bound: Bound,
    best: Option<Action>,
}

/// Random keys for every part of a position.
struct Zobrist {
    /// Per point: white single, black single, white GIPF, black GIPF.
    pieces: [[u64; 4]; NUM_POINTS],
    reserve: [[u64; 40]; 2],
    captured: [[u64; 40]; 2],
    black_to_move: u64,
    rights: [[u64; 3]; 2],
    /// Removal pending, by the deciding player.
    removing: [u64; 2],
    done_lines: [u64; NUM_LINES],
}

static ZOBRIST: LazyLock<Zobrist> = LazyLock::new(|| {
    let mut rng = SmallRng::seed_from_u64(0x6a09_e667_f3bc_c908);
    let mut key = || rng.random::<u64>();
    Zobrist {
        pieces: std::array::from_fn(|_| std::array::from_fn(|_| key())),
        reserve: std::array::from_fn(|_| std::array::from_fn(|_| key())),
        captured: std::array::from_fn(|_| std::array::from_fn(|_| key())),
        black_to_move: key(),
        rights: std::array::from_fn(|_| std::array::from_fn(|_| key())),
        removing: std::array::from_fn(|_| key()),
        done_lines: std::array::from_fn(|_| key()),
    }
});

/// The Zobrist key of a position (the variant is left out: one search never mixes them).
pub fn zobrist(pos: &Position) -> u64 {
    let z = &*ZOBRIST;
    let mut key = 0;
    for color in Color::BOTH {
        let c = color.index();
        for p in pos.pieces(color).iter() {
            let kind = c + 2 * pos.gipf_pieces().contains(p) as usize;
            key ^= z.pieces[p.index()][kind];
        }
        key ^= z.reserve[c][pos.reserve(color).min(39) as usize];
        key ^= z.captured[c][pos.captured(color).min(39) as usize];
        key ^= z.rights[c][match pos.gipf_right(color) {
            GipfRight::FirstMustBeGipf => 0,
            GipfRight::GipfOrSingle => 1,
            GipfRight::SinglesOnly => 2,
        }];
    }
    if pos.to_move() == Color::Black {
        key ^= z.black_to_move;
    }
    if let Phase::Remove { player, done_lines } = pos.phase() {
        key ^= z.removing[player.index()];
        for (line, k) in z.done_lines.iter().enumerate() {
            if done_lines & (1 << line) != 0 {
                key ^= k;
            }
        }
    }
    key
}

/// Evaluation weights, in hundredths of a piece (tuned against `uct:10000`
/// at depth 2).
const PIECE: i32 = 100;
const RESERVE: i32 = 25;
const GIPF_PIECE: i32 = 60;
const LAST_GIPF_PIECE: i32 = 300;
const THREE_IN_A_LINE: i32 = 40;
/// A run of three of the player to push is worth more: one push may make it a row.
const THREE_TO_PUSH: i32 = 150;
/// Penalties for a reserve of 0, 1, 2 and 3 pieces.
const LOW_RESERVE: [i32; 4] = [400, 200, 100, 40];

/// Runs of three of `own` pieces along a line: next to a fourth push, a row.
fn threes(own: Bitboard) -> i32 {
    (0..3)
        .map(|d| {
            let m = line_layout(d, own);
            (m & (m >> 1) & (m >> 2)).count_ones() as i32
        })
        .sum()
}

/// `color`'s share of the static score: material (reserve plus board; what
/// is captured is gone), the reserve again (a player with none loses), GIPF
/// pieces (losing the last one loses), and runs of three, worth more to the
/// player about to push.
fn side_score(pos: &Position, color: Color) -> i32 {
    let reserve = pos.reserve(color) as i32;
    let mut score = PIECE * (reserve + pos.on_board(color) as i32) + RESERVE * reserve;
    if let Some(&danger) = LOW_RESERVE.get(reserve as usize) {
        score -= danger;
    }
    if pos.variant().has_gipf_pieces() && pos.gipf_right(color) != GipfRight::FirstMustBeGipf {
        let gipfs = (pos.pieces(color) & pos.gipf_pieces()).len() as i32;
        score += GIPF_PIECE * gipfs;
        if gipfs == 1 {
            score -= LAST_GIPF_PIECE;
        }
    }
    let threes = threes(pos.pieces(color));
    let per_three = if pos.to_move() == color { THREE_IN_A_LINE + THREE_TO_PUSH } else { THREE_IN_A_LINE };
    score + per_three * threes
}

/// The static score of a position not over, for `me`.
pub fn evaluate(pos: &Position, me: Color) -> i32 {
    side_score(pos, me) - side_score(pos, me.opponent())
}

/// The alpha-beta player.
pub struct AlphaBeta {
    limit: Limit,
    table: Vec<Option<Entry>>,
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
}

/// The value of `child` (reached from a node where `me` acts) for `me`.
enum Child {
    Over(i32),
    Same,
    Other,
}

impl AlphaBeta {
    /// A search to `limit`, reading `clock` for a time limit.
    pub fn new(limit: Limit, clock: Clock) -> AlphaBeta {
        AlphaBeta {
            limit,
            clock,
            table: vec![None; TABLE_SIZE],
            killers: Vec::new(),
            history: [[0; 2]; crate::rules::NUM_PUSHES],
            deadline: None,
            stopped: false,
            use_table: true,
            nodes: 0,
        }
    }

    /// The same search without its transposition table (for tests).
    pub fn without_table(limit: Limit, clock: Clock) -> AlphaBeta {
        AlphaBeta { use_table: false, ..AlphaBeta::new(limit, clock) }
    }

    /// Searches `pos` (not over) and returns the best action with its value
    /// for the player to act (from the deepest iteration completed).
    pub fn search(&mut self, pos: &Position) -> (Action, i32) {
        let (max_depth, deadline) = match self.limit {
            Limit::Depth(d) => (d, None),
            Limit::Time(t) => (MAX_DEPTH, Some((self.clock)() + t)),
        };
        self.deadline = deadline;
        self.stopped = false;
        self.nodes = 0;
        self.history = [[0; 2]; crate::rules::NUM_PUSHES];
        let mut best = None;
        for depth in 1..=max_depth {
            let result = self.root(pos, depth);
            if self.stopped {
                break;
            }
            best = Some(result);
            if result.1.abs() > WIN_BOUND {
                break;
            }
        }
        // A timed search that could not finish even one iteration plays the
        // first legal action; depth 1 takes a few milliseconds at most.
        best.unwrap_or_else(|| (pos.legal_actions()[0], 0))
    }

    fn root(&mut self, pos: &Position, depth: u32) -> (Action, i32) {
        let me = pos.to_act().expect("the root is not over");
        let key = zobrist(pos);
        let table_move = self.probe(key).and_then(|e| e.best);
        let actions = self.ordered_actions(pos, 0, table_move);
        let (mut alpha, beta) = (-WIN - 1, WIN + 1);
        let mut best = actions[0];
        for action in actions {
            let value = self.edge_value(pos, me, action, depth, alpha, beta, 0);
            if self.stopped {
                break;
            }
            if value > alpha {
                alpha = value;
                best = action;
            }
        }
        self.store(key, depth, alpha, Bound::Exact, Some(best), 0);
        (best, alpha)
    }

    /// The value for `me` of playing `action` in `pos`, searched with the window (alpha, beta).
    #[allow(clippy::too_many_arguments)]
    fn edge_value(
        &mut self,
        pos: &Position,
        me: Color,
        action: Action,
        depth: u32,
        alpha: i32,
        beta: i32,
        ply: u32,
    ) -> i32 {
        let mut child = *pos;
        child.play_unchecked(action);
        let depth = if matches!(action, Action::Push(_)) { depth - 1 } else { depth };
        let kind = match child.outcome() {
            Some(o) if o.winner == me => Child::Over(WIN - ply as i32 - 1),
            Some(_) => Child::Over(-(WIN - ply as i32 - 1)),
            None if child.to_act() == Some(me) => Child::Same,
            None => Child::Other,
        };
        match kind {
            Child::Over(value) => value,
            Child::Same => self.node(&child, depth, alpha, beta, ply + 1),
            Child::Other => -self.node(&child, depth, -beta, -alpha, ply + 1),
        }
    }

    /// Negamax: the value of `pos` (not over) for its player to act.
    fn node(&mut self, pos: &Position, depth: u32, mut alpha: i32, beta: i32, ply: u32) -> i32 {
        self.nodes += 1;
        if self.nodes.is_multiple_of(1024) && self.deadline.is_some_and(|d| (self.clock)() >= d) {
            self.stopped = true;
        }
        if self.stopped {
            return 0;
        }
        let me = pos.to_act().expect("searched nodes are not over");
        if depth == 0 && pos.phase() == Phase::Push {
            return evaluate(pos, me);
        }
        let key = zobrist(pos);
        let entry = self.probe(key);
        if let Some(entry) = entry {
            // Only the same depth, so that a fixed-depth value does not depend on the table.
            if entry.depth == depth {
                let value = from_table(entry.value, ply);
                let cut = match entry.bound {
                    Bound::Exact => true,
                    Bound::Lower => value >= beta,
                    Bound::Upper => value <= alpha,
                };
                if cut {
                    return value;
                }
            }
        }
        let original_alpha = alpha;
        let mut best_value = -WIN - 1;
        let mut best_action = None;
        for action in self.ordered_actions(pos, ply, entry.and_then(|e| e.best)) {
            let value = self.edge_value(pos, me, action, depth, alpha, beta, ply);
            if self.stopped {
                return 0;
            }
            if value > best_value {
                best_value = value;
                best_action = Some(action);
            }
            if value > alpha {
                alpha = value;
            }
            if alpha >= beta {
                self.reward(action, depth, ply);
                break;
            }
        }
        let bound = match best_value {
            v if v >= beta => Bound::Lower,
            v if v <= original_alpha => Bound::Upper,
            _ => Bound::Exact,
        };
        self.store(key, depth, best_value, bound, best_action, ply);
        best_value
    }

    /// A cut-off by `action`: it becomes a killer at `ply` and gains history.
    fn reward(&mut self, action: Action, depth: u32, ply: u32) {
        if let Action::Push(push) = action {
            self.history[push.index()][push.is_gipf() as usize] += depth * depth;
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

    /// The table's entry for the position with this key.
    fn probe(&self, key: u64) -> Option<Entry> {
        if !self.use_table {
            return None;
        }
        self.table[key as usize & (TABLE_SIZE - 1)].filter(|e| e.key == key)
    }

    fn store(&mut self, key: u64, depth: u32, value: i32, bound: Bound, best: Option<Action>, ply: u32) {
        if !self.use_table || self.stopped {
            return;
        }
        let slot = &mut self.table[key as usize & (TABLE_SIZE - 1)];
        // Keep the deeper entry of another position; always replace the same one.
        if slot.is_some_and(|e| e.key != key && e.depth > depth) {
            return;
        }
        *slot = Some(Entry { key, depth, value: to_table(value, ply), bound, best });
    }
}

/// Win scores are stored relative to the node, so that they hold wherever it is reached.
fn to_table(value: i32, ply: u32) -> i32 {
    match value {
        v if v > WIN_BOUND => v + ply as i32,
        v if v < -WIN_BOUND => v - ply as i32,
        v => v,
    }
}

fn from_table(value: i32, ply: u32) -> i32 {
    match value {
        v if v > WIN_BOUND => v - ply as i32,
        v if v < -WIN_BOUND => v + ply as i32,
        v => v,
    }
}

impl Player for AlphaBeta {
    fn choose(&mut self, pos: &Position) -> Action {
        let legal = pos.legal_actions();
        if legal.len() == 1 {
            return legal[0];
        }
        self.search(pos).0
    }

    /// Forgets what earlier games taught the move ordering, so that a game
    /// plays the same whichever games its thread played before.
    fn new_game(&mut self, _seed: u64) {
        self.table.iter_mut().for_each(|e| *e = None);
        self.killers.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// The tests' clock.
    fn clock() -> Duration {
        static START: LazyLock<Instant> = LazyLock::new(Instant::now);
        START.elapsed()
    }
    use crate::rules::fixtures::{removal_by_the_player_who_did_not_push, setup, win_in_one};
    use crate::rules::Variant;

    #[test]
    fn finds_the_win_in_one() {
        let pos = win_in_one();
        let mut search = AlphaBeta::new(Limit::Depth(1), clock);
        let (action, value) = search.search(&pos);
        assert_eq!(action.to_string(), "xb5,c5,d5,e5,f4,g3,h2");
        assert_eq!(value, WIN - 1);
    }

    /// Black has one piece left in reserve and three in column b: unless
    /// white blocks the column now, black's last push makes a row and takes
    /// four pieces back. After a block, black pushes its last piece, white
    /// pushes, and black cannot push: a win in two of white's pushes, found
    /// at depth 3 (white, black, white) and not before.
    #[test]
    fn finds_a_forced_win_in_two() {
        let pos = setup(
            r#"{"variant": "basic", "board": {"b3": "b", "b4": "b", "b5": "b", "e2": "w", "h5": "w", "e8": "w"},
                "reserve": {"white": 9, "black": 1}, "to_move": "white"}"#,
        );
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

    #[test]
    fn the_table_does_not_change_a_fixed_depth_value() {
        let mut rng = SmallRng::seed_from_u64(7);
        for variant in [Variant::Standard, Variant::Basic, Variant::Tournament] {
            let mut pos = Position::new(variant);
            for _ in 0..30 {
                if pos.is_over() {
                    break;
                }
                let legal = pos.legal_actions();
                pos.play_unchecked(legal[rng.random_range(0..legal.len())]);
            }
            if pos.is_over() {
                continue;
            }
            for depth in [1, 2, 3] {
                let with = AlphaBeta::new(Limit::Depth(depth), clock).search(&pos).1;
                let mut plain = AlphaBeta::without_table(Limit::Depth(depth), clock);
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
        let action = search.choose(&pos);
        assert!(pos.is_legal(action));
        // Unbounded, iterative deepening to depth 64 would not end.
        assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
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
                    let v = self.node(pos, d, -WIN - 1, WIN + 1, 1);
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
