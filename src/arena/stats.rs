//! Statistics of match results: score with its interval, Elo difference,
//! the sequential probability ratio test, and ratings fitted to many matches.

/// Results of games between A and B, from A's side; a game cut by the length
/// cap is a draw (half a point each).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    /// Games A won.
    pub wins: u32,
    /// Games A lost.
    pub losses: u32,
    /// Games drawn, those cut by the length cap included.
    pub draws: u32,
}

/// 1.96: the normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959964;

/// The most games of one match (`gipf arena --games`), and of one recorded
/// tally: a record that counts more is damaged.
pub const MAX_MATCH_GAMES: u32 = 1_000_000;

impl Tally {
    /// Counts a game: A won (`Some(true)`), lost, or drew (`None`).
    pub fn add(&mut self, a_won: Option<bool>) {
        match a_won {
            Some(true) => self.wins += 1,
            Some(false) => self.losses += 1,
            None => self.draws += 1,
        }
    }

    /// The games of both tallies together (saturating: recorded tallies are
    /// bounded where they are read, see [`Tally::check`]).
    pub fn plus(&self, other: &Tally) -> Tally {
        Tally {
            wins: self.wins.saturating_add(other.wins),
            losses: self.losses.saturating_add(other.losses),
            draws: self.draws.saturating_add(other.draws),
        }
    }

    /// The games counted (saturating at `u32::MAX`).
    pub fn games(&self) -> u32 {
        self.wins.saturating_add(self.losses).saturating_add(self.draws)
    }

    /// A recorded tally's games within [`MAX_MATCH_GAMES`].
    pub fn check(&self) -> Result<(), String> {
        let games = self.wins as u64 + self.losses as u64 + self.draws as u64;
        match games <= MAX_MATCH_GAMES as u64 {
            true => Ok(()),
            false => Err(format!("a tally of {games} games (a match has at most {MAX_MATCH_GAMES})")),
        }
    }

    /// A's share of the points.
    pub fn score(&self) -> f64 {
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games().max(1) as f64
    }

    /// The 95% interval of the score: Wilson's, which stays informative
    /// after a clean sweep (conservative when there are draws).
    pub fn score_interval(&self) -> (f64, f64) {
        let n = self.games().max(1) as f64;
        let (p, z2) = (self.score(), Z95 * Z95);
        let center = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / (1.0 + z2 / n);
        ((center - half).max(0.0), (center + half).min(1.0))
    }

    /// A's Elo advantage and its 95% interval (infinite at a score of 0 or 1).
    pub fn elo(&self) -> (f64, f64, f64) {
        let (lo, hi) = self.score_interval();
        (elo_of_score(self.score()), elo_of_score(lo), elo_of_score(hi))
    }

    /// The log-likelihood ratio of "A is `elo1` stronger" against "`elo0`
    /// stronger": Wald's SPRT on each game's score, a win scoring A's
    /// expected score under each hypothesis, a loss its complement, a draw
    /// half of each. Exact for any number of games, where the normal
    /// approximation Fishtest uses for thousands of games took five straight
    /// wins (no variance) for proof.
    pub fn llr(&self, elo0: f64, elo1: f64) -> f64 {
        let (s0, s1) = (score_of_elo(elo0), score_of_elo(elo1));
        let (won, lost) = (self.wins as f64 + self.draws as f64 / 2.0, self.losses as f64 + self.draws as f64 / 2.0);
        won * (s1 / s0).ln() + lost * ((1.0 - s1) / (1.0 - s0)).ln()
    }
}

/// The expected score of a player `elo` points stronger.
pub fn score_of_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The Elo difference that gives `score` (infinite at 0 and 1).
pub fn elo_of_score(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// A sequential probability ratio test between two Elo hypotheses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    /// H0: A is at most this many Elo stronger than B.
    pub elo0: f64,
    /// H1: A is at least this many Elo stronger (above `elo0`).
    pub elo1: f64,
    /// False positive rate (accepting H1 when H0 holds).
    pub alpha: f64,
    /// False negative rate.
    pub beta: f64,
}

/// What the test says so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtDecision {
    /// A is at least `elo1` stronger.
    H1,
    /// A is at most `elo0` stronger.
    H0,
    /// Neither yet: play on.
    Continue,
}

impl Sprt {
    /// The bounds on the log-likelihood ratio: (accept H0 below, accept H1 above).
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }

    /// The verdict on `tally`: H1 once the log-likelihood ratio reaches the upper
    /// bound, H0 once it reaches the lower one.
    pub fn decide(&self, tally: &Tally) -> SprtDecision {
        let llr = tally.llr(self.elo0, self.elo1);
        let (lower, upper) = self.bounds();
        if llr >= upper {
            SprtDecision::H1
        } else if llr <= lower {
            SprtDecision::H0
        } else {
            SprtDecision::Continue
        }
    }
}

/// One match between players `a` and `b` (indices into the rated players).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pairing {
    /// The first player's index; the tally is from its side.
    pub a: usize,
    /// The second player's index.
    pub b: usize,
    /// The games between them, from `a`'s side.
    pub tally: Tally,
}

/// Bradley-Terry ratings (Elo scale) of `n` players from their matches,
/// player 0 fixed at 0, with each one's 95% margin. Every pairing gets one
/// virtual draw, which keeps ratings finite after a clean sweep. Players
/// not connected to player 0 by matches stay at 0 with an infinite margin.
pub fn fit_ratings(n: usize, pairings: &[Pairing]) -> Vec<(f64, f64)> {
    // Minorization-maximization on strengths gamma = 10^(elo / 400).
    let mut points = vec![0.0f64; n];
    let mut games = vec![vec![0.0f64; n]; n];
    for p in pairings {
        let t = p.tally;
        points[p.a] += t.wins as f64 + 0.5 * t.draws as f64 + 0.5;
        points[p.b] += t.losses as f64 + 0.5 * t.draws as f64 + 0.5;
        let g = t.games() as f64 + 1.0;
        games[p.a][p.b] += g;
        games[p.b][p.a] += g;
    }
    let connected = connected_to_first(&games);
    let mut gamma = vec![1.0f64; n];
    for _ in 0..10_000 {
        let mut change = 0.0f64;
        for i in 1..n {
            if !connected[i] {
                continue;
            }
            let denom: f64 = (0..n).filter(|&j| games[i][j] > 0.0).map(|j| games[i][j] / (gamma[i] + gamma[j])).sum();
            let next = points[i] / denom;
            change = change.max((next / gamma[i]).ln().abs());
            gamma[i] = next;
        }
        if change < 1e-10 {
            break;
        }
    }
    (0..n)
        .map(|i| {
            let elo = 400.0 * gamma[i].log10();
            if i > 0 && !connected[i] {
                return (0.0, f64::INFINITY);
            }
            // Fisher information of player i's rating, others held fixed.
            let k = std::f64::consts::LN_10 / 400.0;
            let info: f64 = (0..n)
                .filter(|&j| games[i][j] > 0.0)
                .map(|j| {
                    let p = gamma[i] / (gamma[i] + gamma[j]);
                    games[i][j] * p * (1.0 - p) * k * k
                })
                .sum();
            let margin = if i == 0 { 0.0 } else { Z95 / info.sqrt() };
            (elo, margin)
        })
        .collect()
}

fn connected_to_first(games: &[Vec<f64>]) -> Vec<bool> {
    let n = games.len();
    let mut seen = vec![false; n];
    let mut stack = vec![0usize];
    while let Some(i) = stack.pop() {
        if n == 0 || seen[i] {
            continue;
        }
        seen[i] = true;
        stack.extend((0..n).filter(|&j| games[i][j] > 0.0 && !seen[j]));
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_interval_and_elo() {
        let even = Tally { wins: 50, losses: 50, draws: 0 };
        assert_eq!(even.score(), 0.5);
        let (lo, hi) = even.score_interval();
        assert!((hi - 0.5 - 0.0962).abs() < 0.0005 && (0.5 - lo - 0.0962).abs() < 0.0005, "{lo} {hi}");
        assert!(even.elo().0.abs() < 1e-9);
        let t = Tally { wins: 75, losses: 25, draws: 0 };
        assert!((t.elo().0 - 190.8).abs() < 0.1);
        assert!((score_of_elo(elo_of_score(0.3)) - 0.3).abs() < 1e-12);
        let sweep = Tally { wins: 20, losses: 0, draws: 0 };
        let (elo, lo, hi) = sweep.elo();
        assert_eq!((elo, hi), (f64::INFINITY, f64::INFINITY));
        assert!((sweep.score_interval().0 - 0.839).abs() < 0.001 && lo > 280.0 && lo < 290.0, "{lo}");
    }

    #[test]
    fn sprt_decides_clear_results_and_waits_on_unclear_ones() {
        let sprt = Sprt { elo0: 0.0, elo1: 50.0, alpha: 0.05, beta: 0.05 };
        assert_eq!(sprt.decide(&Tally { wins: 90, losses: 10, draws: 0 }), SprtDecision::H1);
        assert_eq!(sprt.decide(&Tally { wins: 30, losses: 70, draws: 0 }), SprtDecision::H0);
        assert_eq!(sprt.decide(&Tally { wins: 6, losses: 4, draws: 0 }), SprtDecision::Continue);
        assert_eq!(sprt.decide(&Tally { wins: 40, losses: 0, draws: 0 }), SprtDecision::H1, "a sweep decides");
        assert_eq!(sprt.decide(&Tally { wins: 0, losses: 40, draws: 0 }), SprtDecision::H0);
        assert_eq!(sprt.decide(&Tally { wins: 2, losses: 0, draws: 0 }), SprtDecision::Continue);
        // Five straight wins are not 50 Elo proven (a gate once promoted on them).
        assert_eq!(sprt.decide(&Tally { wins: 5, losses: 0, draws: 0 }), SprtDecision::Continue);
        assert_eq!(sprt.decide(&Tally { wins: 10, losses: 0, draws: 1 }), SprtDecision::Continue);
        assert_eq!(sprt.decide(&Tally { wins: 0, losses: 8, draws: 0 }), SprtDecision::Continue);
        let (lower, upper) = sprt.bounds();
        assert!((upper - 2.944).abs() < 0.001 && (lower + 2.944).abs() < 0.001);
    }

    /// Ratings fitted to results drawn from known strengths come back close.
    #[test]
    fn fitted_ratings_recover_known_strengths() {
        let truth = [0.0, 100.0, 250.0, 200.0];
        let mut pairings = Vec::new();
        for (a, b) in [(1, 0), (2, 1), (3, 2), (3, 0), (2, 0)] {
            let s = score_of_elo(truth[a] - truth[b]);
            let wins = (10_000.0 * s).round() as u32;
            pairings.push(Pairing { a, b, tally: Tally { wins, losses: 10_000 - wins, draws: 0 } });
        }
        let fit = fit_ratings(4, &pairings);
        for (i, &(elo, margin)) in fit.iter().enumerate() {
            assert!((elo - truth[i]).abs() < 5.0, "player {i}: {elo} vs {}", truth[i]);
            assert!(i == 0 || (margin > 0.0 && margin < 20.0), "player {i}: margin {margin}");
        }
        let unlinked = fit_ratings(3, &[Pairing { a: 1, b: 0, tally: Tally { wins: 5, losses: 0, draws: 0 } }]);
        assert!(unlinked[1].0 > 0.0 && unlinked[1].0.is_finite(), "a sweep stays finite");
        assert_eq!(unlinked[2].1, f64::INFINITY);
    }
}
