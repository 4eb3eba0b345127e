//! How often sampled grading catches a flawed Notakto AI: the measurement
//! behind [`super::DEFAULT_CONSOLE_GAMES`] and [`super::opponent::PRESSURE`]
//! (`cargo bench --bench catch_rate`, docs/grading.md).
//!
//! A *flawed AI* plays perfectly (the first winning move in the game's move
//! order, as a simple student solver does) except in a set of positions,
//! where it plays a losing move. The sets are drawn at random among the
//! positions the AI meets, position by position, until a uniformly random
//! human leads the AI into one of them in about 1 % of games: AIs that lose
//! about 1 % of random games, with their holes at every depth.
//! Each flawed AI is then graded with many seeds by the grading opponent
//! ([`super::opponent::Spreader`], plan k for the k-th game, as grading
//! plays it), and a seed *catches* the AI when one of its games is lost.

use std::collections::{HashMap, HashSet};

use rand::seq::SliceRandom;
use rand::Rng;

use super::opponent::Spreader;
use super::Solved;
use crate::bot::Bot;
use crate::game::{Game, GameOptions, Notakto, Outcome, Seat};
use crate::seed;

/// A flawed AI's holes: the positions where it plays a losing move.
pub type Flaw = HashSet<String>;

/// The flawed AI's move: perfect, but in the positions of `flaw` a losing
/// move.
fn flawed_move(pos: &Notakto, flaw: &Flaw) -> Option<<Notakto as Game>::Move> {
    let moves = pos.legal_moves();
    let loses = |m: &<Notakto as Game>::Move| {
        let mut n = *pos;
        n.play_unchecked(*m);
        match n.outcome() {
            Some(o) => super::outcome_value(o, pos.to_move()) < 0,
            None => n.solve() > 0,
        }
    };
    if !flaw.is_empty() && flaw.contains(&pos.to_string()) {
        if let Some(m) = moves.iter().find(|m| loses(m)) {
            return Some(*m);
        }
    }
    moves
        .iter()
        .find(|m| !loses(m))
        .or_else(|| moves.first())
        .copied()
}

/// The positions where the perfect AI (player 1) is to move in each of
/// `games` random games (a uniform human, seeded by `seed`).
pub fn random_games(boards: u8, games: u64, seed: u64) -> Vec<Vec<String>> {
    let opts = GameOptions {
        boards,
        ..Default::default()
    };
    let mut rng = seed::rng(seed);
    let none = Flaw::new();
    (0..games)
        .map(|_| {
            let mut pos = Notakto::start(&opts);
            let mut seen = Vec::new();
            while !pos.is_over() {
                let mv = if pos.to_move() == Seat::One {
                    seen.push(pos.to_string());
                    flawed_move(&pos, &none)
                } else {
                    let moves = pos.legal_moves();
                    Some(moves[rng.random_range(0..moves.len())])
                };
                let Some(mv) = mv else { break };
                pos.play_unchecked(mv);
            }
            seen
        })
        .collect()
}

/// Plays the AI flawed at `flaw` (player 1) against a uniformly random
/// human from `pos`; whether the human won.
fn random_finish(mut pos: Notakto, flaw: &Flaw, rng: &mut impl Rng) -> bool {
    while !pos.is_over() {
        let mv = if pos.to_move() == Seat::One {
            flawed_move(&pos, flaw)
        } else {
            let moves = pos.legal_moves();
            Some(moves[rng.random_range(0..moves.len())])
        };
        let Some(mv) = mv else { break };
        pos.play_unchecked(mv);
    }
    pos.outcome() == Some(Outcome::Win(Seat::Two))
}

/// The share of `games` random games (a uniform human) that the AI flawed
/// at `flaw` loses.
pub fn loss_rate(boards: u8, flaw: &Flaw, games: u64, seed: u64) -> f64 {
    let opts = GameOptions {
        boards,
        ..Default::default()
    };
    let mut rng = seed::rng(seed);
    let lost = (0..games)
        .filter(|_| random_finish(Notakto::start(&opts), flaw, &mut rng))
        .count();
    lost as f64 / games as f64
}

/// `n` flaws, each a set of positions (won, with a losing move to play)
/// that make the AI lose `lo..=hi` of random games, drawn with `seed`;
/// each with its loss rate measured on 20,000 fresh random games.
///
/// A random human converts a handed-over win only sometimes, so each
/// position counts with the share of random continuations after the
/// flawed move that the human wins; positions are added in a random order
/// while the estimated loss rate stays under `hi`, until it reaches `lo`.
pub fn flaws(boards: u8, n: usize, lo: f64, hi: f64, seed: u64) -> Vec<(Flaw, f64)> {
    // The estimate runs about twice the measured rate (positions met by
    // chance in the sample are overrated): aim at twice the target, keep
    // the sets whose measured rate is in it.
    let (est_lo, est_hi) = (2.0 * lo, 2.0 * hi);
    let games = random_games(boards, 20_000, seed);
    let total = games.len() as f64;
    let none = Flaw::new();
    // Positions met in few games would have their reach overestimated
    // (they are picked because the sample met them): at least 5 games.
    let mut met: HashMap<&str, u32> = HashMap::new();
    for seen in &games {
        for p in seen {
            *met.entry(p.as_str()).or_default() += 1;
        }
    }
    let mut conv: HashMap<&str, f64> = HashMap::new();
    let mut rng = seed::rng(seed ^ 2);
    for seen in &games {
        for p in seen {
            if conv.contains_key(p.as_str()) || met[p.as_str()] < 5 {
                continue;
            }
            let Ok(pos) = p.parse::<Notakto>() else {
                continue;
            };
            let one: Flaw = [p.clone()].into();
            if pos.solve() <= 0 || flawed_move(&pos, &one) == flawed_move(&pos, &none) {
                continue;
            }
            let wins = (0..64)
                .filter(|_| random_finish(pos, &one, &mut rng))
                .count();
            conv.insert(p.as_str(), wins as f64 / 64.0);
        }
    }
    let mut candidates: Vec<&str> = conv.keys().copied().collect();
    candidates.sort_unstable();
    let mut out = Vec::new();
    let mut attempts = 0;
    while out.len() < n && attempts < 8 * n {
        attempts += 1;
        candidates.shuffle(&mut rng);
        // Per game: the index of its first flawed position and its share.
        let mut first: Vec<Option<(usize, f64)>> = vec![None; games.len()];
        let mut rate = 0.0;
        let mut flaw = Flaw::new();
        for &p in &candidates {
            let mut next_rate = rate;
            let mut changes = Vec::new();
            for (g, seen) in games.iter().enumerate() {
                if let Some(i) = seen.iter().position(|s| s == p) {
                    let earlier = first[g].is_none_or(|(j, _)| i < j);
                    if earlier {
                        next_rate += (conv[p] - first[g].map_or(0.0, |(_, c)| c)) / total;
                        changes.push((g, (i, conv[p])));
                    }
                }
            }
            if next_rate > est_hi {
                continue;
            }
            for (g, f) in changes {
                first[g] = Some(f);
            }
            rate = next_rate;
            flaw.insert(p.to_string());
            if rate >= est_lo {
                break;
            }
        }
        if rate < est_lo {
            continue;
        }
        let measured = loss_rate(boards, &flaw, 20_000, seed ^ (attempts as u64 + 3));
        if (lo..=hi).contains(&measured) {
            out.push((flaw, measured));
        }
    }
    out
}

/// Grades the AI flawed at `flaw` with `games` games against the grading
/// opponent of seed `grading_seed` and `pressure`: the 1-based number of
/// the first lost game, or `None` when every game was won.
pub fn games_to_catch(
    boards: u8,
    flaw: &Flaw,
    games: u64,
    grading_seed: u64,
    pressure: f64,
) -> Option<u64> {
    let opts = GameOptions {
        boards,
        ..Default::default()
    };
    for k in 0..games {
        let game_seed = seed::derive(grading_seed, &[k]);
        let mut opp =
            Spreader::<Notakto>::new(k, games, grading_seed, game_seed).with_pressure(pressure);
        let mut pos = Notakto::start(&opts);
        while !pos.is_over() {
            let mv = if pos.to_move() == Seat::One {
                flawed_move(&pos, flaw)
            } else {
                opp.select_move(&pos).ok()
            };
            let Some(mv) = mv else { break };
            pos.play_unchecked(mv);
        }
        if pos.outcome() != Some(Outcome::Win(Seat::One)) {
            return Some(k + 1);
        }
    }
    None
}

/// One line of the measurement.
#[derive(Clone, Debug)]
pub struct CatchRate {
    /// Games per grading.
    pub games: u64,
    /// The opponent's share of fewest-winning-replies moves.
    pub pressure: f64,
    /// Gradings run (flaws x seeds) and how many caught the flaw.
    pub runs: u64,
    /// Of those, how many caught the flaw.
    pub caught: u64,
    /// The worst flaw's catch rate.
    pub worst: f64,
}

/// Catch rates of `games` games per grading (the largest of `games` is
/// played; smaller budgets are read from where the flaw was caught), for
/// each pressure, over `flaws` x `seeds` gradings.
pub fn measure(
    boards: u8,
    flaws: &[(Flaw, f64)],
    seeds: u64,
    games: &[u64],
    pressures: &[f64],
) -> Vec<CatchRate> {
    let mut out = Vec::new();
    for &pressure in pressures {
        for &n in games {
            let mut caught = 0;
            let mut worst = 1.0f64;
            for (flaw, _) in flaws {
                let mut c = 0;
                for s in 0..seeds {
                    if games_to_catch(boards, flaw, n, seed::derive(s, &[n]), pressure).is_some() {
                        c += 1;
                    }
                }
                caught += c;
                worst = worst.min(c as f64 / seeds as f64);
            }
            out.push(CatchRate {
                games: n,
                pressure,
                runs: flaws.len() as u64 * seeds,
                caught,
                worst,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flawed_ai_loses_where_it_is_flawed_and_wins_elsewhere() {
        // The first position of a random game where a losing move exists.
        let none = Flaw::new();
        let games = random_games(3, 20, 2);
        let start = Notakto::start(&GameOptions {
            boards: 3,
            ..Default::default()
        })
        .to_string();
        assert!(games.iter().all(|g| g.first() == Some(&start)));
        let p = games
            .iter()
            .flatten()
            .find(|p| {
                let pos: Notakto = p.parse().unwrap();
                let one: Flaw = [p.to_string()].into();
                flawed_move(&pos, &one) != flawed_move(&pos, &none)
            })
            .expect("a position with a losing move");
        let flaw: Flaw = [p.clone()].into();
        let pos: Notakto = p.parse().unwrap();
        let mut after = pos;
        after.play_unchecked(flawed_move(&pos, &flaw).unwrap());
        assert!(after.solve() > 0, "the flawed move hands the win over");
        // The grading opponent finds the hole; a random human converts only
        // some of the games it reaches.
        assert!(games_to_catch(3, &flaw, 200, 1, 0.25).is_some());
        let rate = loss_rate(3, &flaw, 2000, 1);
        assert!(rate < 1.0, "{rate}");
        // The perfect AI (no flaw) is never caught, nor loses.
        assert_eq!(games_to_catch(3, &none, 50, 1, 0.25), None);
        assert_eq!(loss_rate(3, &none, 200, 1), 0.0);
    }
}
