//! Tic-tac-toe bots: `greedy` (the classic win/block/corner/centre/side rules)
//! and `optimal` (perfect play from a solved table).

use super::plain_builtin;
use std::collections::HashMap;
use std::sync::OnceLock;

use super::{Builtin, BuiltinBots, RandomBot, RuleBot};
use crate::game::grid::winning_cells;
use crate::game::tictactoe::{Cell, TicTacToe};
use crate::game::{Game, MoveList, Outcome};

const CORNERS: u16 = 1 << 0 | 1 << 2 | 1 << 6 | 1 << 8;
const CENTRE: u16 = 1 << 4;

fn cells_of(mask: u16) -> MoveList<Cell> {
    (0..9u8)
        .filter(|i| mask & (1 << i) != 0)
        .filter_map(Cell::new)
        .collect()
}

/// The classic heuristic from the seeds: win if possible, else block, else a
/// corner, else the centre, else a side; random among equals.
pub(crate) struct Greedy;

impl Greedy {
    /// A greedy bot seeded by `seed`.
    pub(crate) fn bot(seed: u64) -> RuleBot<TicTacToe> {
        RuleBot::new("greedy", |p| cells_of(Self::candidates(p)), seed)
    }

    /// The set of moves the rules allow in `pos` (all equally good to them).
    pub(crate) fn candidates(pos: &TicTacToe) -> u16 {
        let empty = pos.empty_bits();
        let me = pos.to_move();
        let win = winning_cells(pos.bits(me), empty);
        if win != 0 {
            return win;
        }
        let block = winning_cells(pos.bits(me.other()), empty);
        if block != 0 {
            return block;
        }
        for tier in [CORNERS, CENTRE] {
            if empty & tier != 0 {
                return empty & tier;
            }
        }
        empty
    }
}

/// Perfect-play values of every reachable position, from the mover's point of
/// view: `10 - plies at the end` for a win, its negation for a loss, 0 for a draw.
fn table() -> &'static HashMap<(u16, u16), i8> {
    static TABLE: OnceLock<HashMap<(u16, u16), i8>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = HashMap::with_capacity(6000);
        solve(&TicTacToe::new(), &mut t);
        t
    })
}

fn solve(pos: &TicTacToe, t: &mut HashMap<(u16, u16), i8>) -> i8 {
    let key = (pos.x_bits(), pos.o_bits());
    if let Some(&v) = t.get(&key) {
        return v;
    }
    let v = match pos.outcome() {
        // The player who just moved won, so the mover has lost.
        Some(Outcome::Win(_)) => -(10 - pos.ply() as i8),
        Some(Outcome::Draw) => 0,
        None => pos
            .legal_moves()
            .iter()
            .map(|&mv| {
                let mut next = *pos;
                next.play_unchecked(mv);
                -solve(&next, t)
            })
            .max()
            .unwrap_or(0),
    };
    t.insert(key, v);
    v
}

/// The perfect-play value of `pos` for the player to move: > 0 won, 0 drawn,
/// < 0 lost (magnitude `10 - plies at the end`).
pub(crate) fn value(pos: &TicTacToe) -> i8 {
    let t = table();
    match t.get(&(pos.x_bits(), pos.o_bits())) {
        Some(&v) => v,
        None => {
            // Only reachable (validated) positions are in the table, and the
            // parser accepts only those; solve on the side for safety.
            let mut extra = HashMap::new();
            solve(pos, &mut extra)
        }
    }
}

/// Every move that keeps the best value, i.e. the optimal choices.
pub(crate) fn best_moves(pos: &TicTacToe) -> Vec<Cell> {
    let scored: Vec<(Cell, i8)> = pos
        .legal_moves()
        .iter()
        .map(|&mv| {
            let mut next = *pos;
            next.play_unchecked(mv);
            (mv, -value(&next))
        })
        .collect();
    let best = scored.iter().map(|s| s.1).max();
    scored
        .into_iter()
        .filter(|s| Some(s.1) == best)
        .map(|s| s.0)
        .collect()
}

/// Perfect play: never loses, wins every won position as fast as possible,
/// loses as slowly as possible, random among equally good moves.
pub(crate) struct Optimal;

impl Optimal {
    /// An optimal bot seeded by `seed` (the seed only breaks ties).
    pub(crate) fn bot(seed: u64) -> RuleBot<TicTacToe> {
        RuleBot::new("optimal", |p| best_moves(p).into_iter().collect(), seed)
    }
}

/// How `greedy` plays.
const GREEDY: &str = "win, else block, else a corner, else the centre, else a side";
/// How `optimal` plays.
const OPTIMAL: &str = "perfect play: fastest win, slowest loss, random among equals";

impl BuiltinBots for TicTacToe {
    const BUILTINS: &'static [Builtin<Self>] = &[
        plain_builtin!("random", super::RANDOM, RandomBot::<TicTacToe>::new),
        plain_builtin!("greedy", GREEDY, Greedy::bot),
        plain_builtin!("optimal", OPTIMAL, Optimal::bot),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Seat;

    #[test]
    fn start_is_a_draw_and_known_values() {
        assert_eq!(value(&TicTacToe::new()), 0);
        // X to move with two in a row wins at once (ply 5 at the end).
        let p: TicTacToe = "XX.OO....".parse().unwrap();
        assert_eq!(value(&p), 5);
        assert_eq!(best_moves(&p), vec![Cell::new(2).unwrap()]);
    }

    /// Walks every line of play where `seat` is played by `Optimal`'s choice
    /// set (every optimal move) and the opponent by every legal move.
    fn never_loses(pos: TicTacToe, seat: Seat, lines: &mut u64) {
        if let Some(o) = pos.outcome() {
            assert_ne!(o, Outcome::Win(seat.other()), "optimal lost: {pos}");
            *lines += 1;
            return;
        }
        let v = value(&pos);
        let moves: Vec<Cell> = if pos.to_move() == seat {
            let best = best_moves(&pos);
            // A won position must stay won after each chosen move.
            for &mv in &best {
                let mut n = pos;
                n.play_unchecked(mv);
                if v > 0 {
                    assert!(-value(&n) > 0, "won position {pos} thrown away by {mv}");
                }
            }
            best
        } else {
            pos.legal_moves().to_vec()
        };
        for mv in moves {
            let mut n = pos;
            n.play_unchecked(mv);
            never_loses(n, seat, lines);
        }
    }

    #[test]
    fn optimal_never_loses_against_any_line() {
        for seat in Seat::BOTH {
            let mut lines = 0;
            never_loses(TicTacToe::new(), seat, &mut lines);
            assert!(lines > 100, "{lines}");
        }
    }

    #[test]
    fn optimal_wins_every_won_position() {
        // From every reachable position that the solver calls won, optimal
        // play by the mover wins against every reply.
        fn wins(pos: TicTacToe, seat: Seat) {
            match pos.outcome() {
                Some(o) => assert_eq!(o, Outcome::Win(seat), "won position not converted"),
                None if pos.to_move() == seat => {
                    for mv in best_moves(&pos) {
                        let mut n = pos;
                        n.play_unchecked(mv);
                        wins(n, seat);
                    }
                }
                None => {
                    for mv in pos.legal_moves() {
                        let mut n = pos;
                        n.play_unchecked(mv);
                        wins(n, seat);
                    }
                }
            }
        }
        let mut won = 0;
        for (&(x, o), &v) in table() {
            let p = TicTacToe::from_bits(x, o).unwrap();
            if v > 0 && !p.is_over() {
                won += 1;
                wins(p, p.to_move());
            }
        }
        assert!(won > 1000, "{won}");
    }

    #[test]
    fn greedy_follows_the_rules() {
        // Win beats block.
        let p: TicTacToe = "XX.OO....".parse().unwrap();
        assert_eq!(Greedy::candidates(&p), 1 << 2);
        // Block when there is no win.
        let p: TicTacToe = "OO.X....X".parse().unwrap();
        assert_eq!(Greedy::candidates(&p), 1 << 2);
        // Corners first on an empty board.
        assert_eq!(Greedy::candidates(&TicTacToe::new()), CORNERS);
    }
}
