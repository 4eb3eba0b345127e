//! A brute-force Notakto solver over sums of boards, independent of the
//! misère quotient: the quotient's values are fitted to it and checked
//! against it.
//!
//! Boards are independent, so a position is a multiset of live boards, each
//! up to the 8 symmetries of the square; dead boards take no part in play
//! and are dropped. That makes the memo small enough for every 3-board
//! position.

use std::collections::HashMap;

use crate::game::grid::{has_line, map_bits, FULL};

/// Whether a board holds a line, i.e. is dead.
pub(crate) fn is_dead_board(bits: u16) -> bool {
    has_line(bits & FULL)
}

/// The smallest image of a board under the 8 symmetries of the square: two
/// boards play the same iff their canonical forms are equal.
pub(crate) fn canonical_board(bits: u16) -> u16 {
    crate::game::grid::SYMMETRIES
        .iter()
        .map(|sym| map_bits(bits & FULL, sym))
        .min()
        .unwrap_or(bits)
}

/// The most live boards a [`Solver`] key can hold (10 bits each in a `u64`).
pub(crate) const MAX_SOLVER_BOARDS: usize = 6;

/// A memoised solver: whether the player to move wins a sum of boards.
pub(crate) struct Solver {
    canon: Vec<u16>,
    memo: HashMap<u64, bool>,
}

impl Default for Solver {
    fn default() -> Self {
        Self::new()
    }
}

impl Solver {
    /// An empty memo.
    pub(crate) fn new() -> Solver {
        Solver {
            canon: (0..512u16).map(canonical_board).collect(),
            memo: HashMap::new(),
        }
    }

    /// Whether the player to move wins with these boards (9-bit masks, dead
    /// ones allowed). Panics if more than [`MAX_SOLVER_BOARDS`] are live: the
    /// solver is for tests and for deriving the quotient, never for play.
    pub(crate) fn mover_wins(&mut self, boards: &[u16]) -> bool {
        let mut live: Vec<u16> = boards
            .iter()
            .filter(|&&b| !is_dead_board(b))
            .map(|&b| self.canon[(b & 0x1ff) as usize])
            .collect();
        assert!(
            live.len() <= MAX_SOLVER_BOARDS,
            "the solver takes at most {MAX_SOLVER_BOARDS} live boards"
        );
        live.sort_unstable();
        self.solve(&live)
    }

    fn key(sorted: &[u16]) -> u64 {
        // Bit 9 marks a present board, so an empty board differs from none.
        sorted
            .iter()
            .fold(0u64, |k, &b| (k << 10) | 0x200 | b as u64)
    }

    /// `sorted` holds canonical live boards in ascending order.
    fn solve(&mut self, sorted: &[u16]) -> bool {
        if sorted.is_empty() {
            // The opponent killed the last board and lost.
            return true;
        }
        let key = Self::key(sorted);
        if let Some(&w) = self.memo.get(&key) {
            return w;
        }
        let mut wins = false;
        let mut child: Vec<u16> = Vec::with_capacity(sorted.len());
        'search: for i in 0..sorted.len() {
            // Equal boards have the same moves: try only the first of a run.
            if i > 0 && sorted[i] == sorted[i - 1] {
                continue;
            }
            let b = sorted[i];
            let mut empty = 0x1ff & !b;
            while empty != 0 {
                let nb = b | (empty & empty.wrapping_neg());
                empty &= empty - 1;
                child.clear();
                child.extend(
                    sorted
                        .iter()
                        .enumerate()
                        .filter(|&(j, _)| j != i)
                        .map(|(_, &x)| x),
                );
                if !is_dead_board(nb) {
                    child.push(self.canon[nb as usize]);
                    child.sort_unstable();
                }
                if !self.solve(&child) {
                    wins = true;
                    break 'search;
                }
            }
        }
        self.memo.insert(key, wins);
        wins
    }
}

/// Every live board up to symmetry, ascending: the states a single board
/// can be in while it still takes moves.
pub(crate) fn live_classes() -> Vec<u16> {
    (0..512u16)
        .filter(|&b| !is_dead_board(b) && canonical_board(b) == b)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, GameOptions, Notakto};

    /// A plain minimax over exact positions (no symmetry, no multisets),
    /// to check the solver's shortcuts.
    fn naive(pos: &Notakto, memo: &mut HashMap<Notakto, bool>) -> bool {
        if let Some(o) = pos.outcome() {
            return o.winner() == Some(pos.to_move());
        }
        if let Some(&w) = memo.get(pos) {
            return w;
        }
        let w = pos.legal_moves().iter().any(|&m| {
            let mut n = *pos;
            n.play_unchecked(m);
            !naive(&n, memo)
        });
        memo.insert(*pos, w);
        w
    }

    #[test]
    fn solver_agrees_with_plain_minimax_on_every_two_board_position() {
        let mut memo = HashMap::new();
        let start = Notakto::start(&GameOptions {
            boards: 2,
            ..Default::default()
        });
        naive(&start, &mut memo);
        // Every position reachable from two empty boards was visited.
        assert!(memo.len() > 10_000, "{}", memo.len());
        let mut solver = Solver::new();
        for (pos, &w) in &memo {
            assert_eq!(solver.mover_wins(pos.boards()), w, "{pos}");
        }
        // One board: the first player wins (centre), as is well known.
        assert!(solver.mover_wins(&[0]));
        assert!(!solver.mover_wins(&[0b000_010_000]));
        assert!(solver.mover_wins(&[]));
    }

    #[test]
    fn classes_cover_every_live_board() {
        let classes = live_classes();
        assert!(classes.contains(&0));
        for b in 0..512u16 {
            assert_eq!(
                classes.contains(&canonical_board(b)),
                !is_dead_board(b),
                "{b:09b}"
            );
        }
    }
}
