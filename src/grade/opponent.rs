//! The grading opponent of solved games: perfect play that spreads the games
//! over the student's reachable positions.
//!
//! Where the opponent can still reach its best result it keeps it: in a won
//! position it plays a winning move (so a student's blunder is always
//! converted), in a drawn one a drawing move. Where every move loses (the
//! usual case: the student plays the winning seat), any move is as good as
//! another against perfect play, and the choice decides which of the
//! student's positions get tested. Always leaving the fewest winning
//! replies (what the built-in `optimal` does) makes narrow lines: the same
//! few openings game after game, while the student's holes are after other
//! replies. So the grading opponent chooses among all moves that keep its
//! value (moves that end the game at once in its loss only when nothing
//! else is left), this way:
//!
//! 1. **Systematic coverage** at the first plies: the games of a grading run
//!    are numbered 0..N (its *plans*), and at each of the opponent's turns
//!    a plan's next digit in a mixed radix (the number of candidate moves
//!    there) picks the move, offset by a rotation drawn from the seed and
//!    the position. Against a deterministic program the first N games thus
//!    try every reply at the first ply before any twice, every pair of
//!    replies at the first two plies as far as N allows, and so on: the
//!    least-tried reply first, wherever the games can still differ.
//! 2. Past the plies that N can cover, each move is **uniformly random**
//!    among the candidates, or, with probability [`PRESSURE`], one of the
//!    moves that leave the student the **fewest winning replies** (the
//!    positions where a half-right strategy is most likely to slip).
//!
//! Everything is seeded: the rotations by the grading seed and the
//! position's text, the random moves by the game's own seed, so the same
//! grading plays the same games whatever `--jobs` is.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::Solved;
use crate::bot::{Bot, BotSpec, BuiltinSpec};
use crate::game::Outcome;
use crate::protocol::Forfeit;
use crate::seed;

/// The share of moves, past the covered plies, chosen among those that
/// leave the student the fewest winning replies (the rest are uniform).
/// Chosen by measurement (`referee bench catch-rate`, docs/grading.md).
pub const PRESSURE: f64 = 0.25;

/// The grading opponent of one game.
pub(crate) struct Spreader<G: Solved> {
    /// What is left of the game's plan number, digit by digit.
    rest: u64,
    /// How many plans share the line so far: coverage is systematic while
    /// the plans (`span`) outnumber it.
    stride: u64,
    span: u64,
    /// The grading's seed, for the rotations (shared by every game).
    base_seed: u64,
    rng: ChaCha8Rng,
    pressure: f64,
    _game: std::marker::PhantomData<fn() -> G>,
}

impl<G: Solved> Spreader<G> {
    /// The opponent of plan `plan` of `span` games, for a grading seeded by
    /// `base_seed`; `game_seed` seeds its random moves.
    pub(crate) fn new(plan: u64, span: u64, base_seed: u64, game_seed: u64) -> Self {
        Spreader {
            rest: plan,
            stride: 1,
            span: span.max(1),
            base_seed,
            rng: seed::rng(game_seed),
            pressure: PRESSURE,
            _game: std::marker::PhantomData,
        }
    }

    /// The same with another share of fewest-winning-replies moves (for the
    /// measurement of catch rates).
    pub(crate) fn with_pressure(mut self, pressure: f64) -> Self {
        self.pressure = pressure;
        self
    }
}

/// The opponent's value after `mv`: from its own point of view.
fn value_after<G: Solved>(pos: &G, mv: G::Move) -> i8 {
    let mover = pos.to_move();
    let mut next = pos.clone();
    next.play_unchecked(mv);
    match next.outcome() {
        Some(o) => super::outcome_value(o, mover),
        None => -next.solve(),
    }
}

/// The moves the grading opponent chooses among in `pos`, in the game's
/// move order: those that keep its perfect-play value, without the moves
/// that lose on the spot while others remain.
pub(crate) fn candidates<G: Solved>(pos: &G) -> Vec<G::Move> {
    let moves = pos.legal_moves();
    let scored: Vec<(G::Move, i8)> = moves.iter().map(|&m| (m, value_after(pos, m))).collect();
    let Some(best) = scored.iter().map(|s| s.1).max() else {
        return Vec::new();
    };
    let keep: Vec<G::Move> = scored.iter().filter(|s| s.1 == best).map(|s| s.0).collect();
    if best > 0 {
        return keep;
    }
    not_losing_at_once(pos, keep)
}

/// The moves of `moves` that do not lose on the spot (in Notakto, killing
/// the last board), or all of them when every one does.
pub(crate) fn not_losing_at_once<G: crate::game::Game>(
    pos: &G,
    moves: Vec<G::Move>,
) -> Vec<G::Move> {
    let mover = pos.to_move();
    let lasting: Vec<G::Move> = moves
        .iter()
        .copied()
        .filter(|&m| {
            let mut next = pos.clone();
            next.play_unchecked(m);
            !matches!(next.outcome(), Some(Outcome::Win(w)) if w != mover)
        })
        .collect();
    if lasting.is_empty() {
        moves
    } else {
        lasting
    }
}

impl<G: Solved> Bot<G> for Spreader<G> {
    fn name(&self) -> &str {
        "optimal"
    }

    fn select_move(&mut self, pos: &G) -> Result<G::Move, Forfeit> {
        let cands = candidates(pos);
        if cands.is_empty() {
            return Err(crate::bot::no_move_forfeit(pos));
        }
        let n = cands.len() as u64;
        if n == 1 {
            return Ok(cands[0]);
        }
        if pos.solve() > 0 {
            // Won: convert, any winning move.
            return Ok(cands[self.rng.random_range(0..cands.len())]);
        }
        if self.stride < self.span {
            // Systematic: the plan's next digit, rotated per position.
            let rot = seed::derive_text(self.base_seed, &pos.to_string()) % n;
            let digit = (self.rest % n + rot) % n;
            self.rest /= n;
            self.stride = self.stride.saturating_mul(n);
            return Ok(cands[digit as usize]);
        }
        if self.rng.random_bool(self.pressure) {
            let hardest: Vec<G::Move> = pos
                .resisting_moves()
                .into_iter()
                .filter(|m| cands.contains(m))
                .collect();
            if !hardest.is_empty() {
                return Ok(hardest[self.rng.random_range(0..hardest.len())]);
            }
        }
        Ok(cands[self.rng.random_range(0..cands.len())])
    }
}

/// The grading opponent as a bot of its own for a list of games: the game
/// whose opponent gets seed `s` plays plan `plans[s]` of `span`.
pub(crate) fn spreading_opponent<G: Solved>(
    plans: std::collections::HashMap<u64, u64>,
    span: u64,
    base_seed: u64,
    pressure: f64,
) -> BotSpec {
    let plans = std::sync::Arc::new(plans);
    BotSpec::Builtin(BuiltinSpec::custom::<G, _>("optimal", move |s| {
        let plan = plans.get(&s).copied().unwrap_or(s % span.max(1));
        Spreader::<G>::new(plan, span, base_seed, s).with_pressure(pressure)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, GameOptions, Notakto, Seat, TicTacToe};
    use std::collections::HashSet;

    /// The first reply of the opponent (player 2) to a fixed first move.
    fn first_reply(plan: u64, span: u64) -> String {
        let mut pos = Notakto::start(&GameOptions {
            boards: 3,
            ..Default::default()
        });
        pos.play_unchecked(Notakto::parse_move("A4").unwrap());
        let mut b = Spreader::<Notakto>::new(plan, span, 7, plan);
        b.select_move(&pos).unwrap().to_string()
    }

    #[test]
    fn the_first_plans_try_every_reply_once() {
        let mut pos = Notakto::start(&GameOptions {
            boards: 3,
            ..Default::default()
        });
        pos.play_unchecked(Notakto::parse_move("A4").unwrap());
        let n = candidates(&pos).len() as u64;
        assert_eq!(n, 26);
        let seen: HashSet<String> = (0..n).map(|p| first_reply(p, 100)).collect();
        assert_eq!(
            seen.len() as u64,
            n,
            "every reply once in the first {n} plans"
        );
        // The same plan, the same reply.
        assert_eq!(first_reply(5, 100), first_reply(5, 100));
    }

    #[test]
    fn pairs_of_replies_are_covered_as_far_as_the_plans_go() {
        // Against a fixed perfect answer, 26 * 25 plans reach every pair of
        // the opponent's first two replies.
        let answer = |p: &Notakto| crate::bot::notakto::Optimal::candidates(p)[0];
        let span = 26 * 25;
        let mut lines = HashSet::new();
        let mut expected = HashSet::new();
        for plan in 0..span {
            let mut pos = Notakto::start(&GameOptions {
                boards: 3,
                ..Default::default()
            });
            pos.play_unchecked(answer(&pos));
            let mut b = Spreader::<Notakto>::new(plan, span, 1, plan);
            let r1 = b.select_move(&pos).unwrap();
            pos.play_unchecked(r1);
            pos.play_unchecked(answer(&pos));
            let r2 = b.select_move(&pos).unwrap();
            lines.insert((r1.to_string(), r2.to_string()));
            for m in candidates(&pos) {
                expected.insert((r1.to_string(), m.to_string()));
            }
        }
        assert_eq!(lines, expected);
    }

    #[test]
    fn a_won_position_is_converted_and_a_drawn_one_kept() {
        // Tic-tac-toe: after X plays 0 and O (student) blunders with 1, X
        // (the opponent) must keep its win.
        let mut pos = TicTacToe::new();
        pos.play_unchecked(TicTacToe::parse_move("0").unwrap());
        pos.play_unchecked(TicTacToe::parse_move("1").unwrap());
        assert!(pos.solve() > 0);
        for plan in 0..20 {
            let mut b = Spreader::<TicTacToe>::new(plan, 20, 3, plan);
            let mv = b.select_move(&pos).unwrap();
            let mut next = pos;
            next.play_unchecked(mv);
            assert!(next.solve() < 0, "plan {plan}: {mv} gives up the win");
        }
        // From the start (a draw) every choice keeps the draw.
        for plan in 0..20 {
            let mut b = Spreader::<TicTacToe>::new(plan, 20, 3, plan);
            let start = TicTacToe::new();
            let mv = b.select_move(&start).unwrap();
            let mut next = start;
            next.play_unchecked(mv);
            assert_eq!(next.solve(), 0);
        }
    }

    #[test]
    fn it_does_not_kill_the_last_board_while_it_can_avoid_it() {
        // One live board with a single safe cell left for the opponent.
        let mut pos = Notakto::start(&GameOptions {
            boards: 1,
            ..Default::default()
        });
        for m in ["A0", "A2", "A4"] {
            // Player 1 (student) and player 2 alternate; stop before a line.
            let mv = Notakto::parse_move(m).unwrap();
            if pos.is_legal(mv) {
                pos.play_unchecked(mv);
            }
        }
        let cands = candidates(&pos);
        let mover = pos.to_move();
        for &m in &cands {
            let mut n = pos;
            n.play_unchecked(m);
            assert!(
                !matches!(n.outcome(), Some(Outcome::Win(w)) if w != mover),
                "{m} loses on the spot"
            );
        }
        assert!(!cands.is_empty());
        let _ = Seat::One;
    }
}
