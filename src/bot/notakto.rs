//! Notakto bots: `greedy` (a beginner's rules) and `optimal` (perfect play
//! for any number of boards, with no search).
//!
//! `optimal` uses the misère quotient of Notakto (Plambeck and Whitehead,
//! "The secrets of notakto: winning at X-only tic-tac-toe", 2013): every
//! single board has a value in an 18-element commutative monoid, the value of
//! a position is the product of its boards' values, and the player to move
//! loses exactly when that product is one of the 4 P-positions. The tables
//! below were computed by this crate's own brute-force solver (the closure of
//! the single-board classes under sums, with classes told apart by the
//! outcomes of sums with every position of up to two boards), and the tests
//! check them against brute force on every position of up to three boards.
//! The [`quotient`] module derives the values again from the monoid's
//! presentation and the brute-force [`solver`], and its tests check that
//! these constants are that derivation (up to renaming the elements) and
//! agree with brute force on every sum of up to four boards.

#[cfg(test)]
mod quotient;
#[cfg(test)]
mod solver;

use super::plain_builtin;
use std::sync::OnceLock;

use super::{Builtin, BuiltinBots, RandomBot, RuleBot};
use crate::game::grid::{has_line, FULL};
use crate::game::notakto::{Notakto, NotaktoMove};
use crate::game::{Game, MoveList};

/// Number of elements of the quotient monoid. Element 0 is the identity:
/// the value of a dead board and of the empty sum.
pub(crate) const ELEMENTS: usize = 18;

/// Multiplication table of the monoid.
pub(crate) const MUL: [[u8; ELEMENTS]; ELEMENTS] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17],
    [
        1, 6, 5, 8, 9, 2, 10, 11, 15, 10, 6, 17, 13, 12, 1, 17, 9, 15,
    ],
    [
        2, 5, 6, 12, 5, 10, 2, 13, 13, 2, 5, 12, 15, 17, 2, 12, 5, 13,
    ],
    [3, 8, 12, 14, 7, 13, 15, 16, 1, 11, 17, 9, 2, 5, 3, 6, 7, 10],
    [4, 9, 5, 7, 0, 2, 10, 3, 11, 1, 6, 8, 13, 12, 16, 17, 14, 15],
    [
        5, 2, 10, 13, 2, 6, 5, 12, 12, 5, 2, 13, 17, 15, 5, 13, 2, 12,
    ],
    [
        6, 10, 2, 15, 10, 5, 6, 17, 17, 6, 10, 15, 12, 13, 6, 15, 10, 17,
    ],
    [7, 11, 13, 16, 3, 12, 17, 14, 9, 8, 15, 1, 5, 2, 7, 10, 3, 6],
    [
        8, 15, 13, 1, 11, 12, 17, 9, 6, 17, 15, 10, 5, 2, 8, 10, 11, 6,
    ],
    [
        9, 10, 2, 11, 1, 5, 6, 8, 17, 6, 10, 15, 12, 13, 9, 15, 1, 17,
    ],
    [
        10, 6, 5, 17, 6, 2, 10, 15, 15, 10, 6, 17, 13, 12, 10, 17, 6, 15,
    ],
    [
        11, 17, 12, 9, 8, 13, 15, 1, 10, 15, 17, 6, 2, 5, 11, 6, 8, 10,
    ],
    [
        12, 13, 15, 2, 13, 17, 12, 5, 5, 12, 13, 2, 6, 10, 12, 2, 13, 5,
    ],
    [
        13, 12, 17, 5, 12, 15, 13, 2, 2, 13, 12, 5, 10, 6, 13, 5, 12, 2,
    ],
    [
        14, 1, 2, 3, 16, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
    ],
    [
        15, 17, 12, 6, 17, 13, 15, 10, 10, 15, 17, 6, 2, 5, 15, 6, 17, 10,
    ],
    [
        16, 9, 5, 7, 14, 2, 10, 3, 11, 1, 6, 8, 13, 12, 16, 17, 14, 15,
    ],
    [
        17, 15, 13, 10, 15, 12, 17, 6, 6, 17, 15, 10, 5, 2, 17, 10, 15, 6,
    ],
];

/// The P-positions (the player to move loses) as a bit set over elements.
pub(crate) const P_SET: u32 = 16720;

/// The value of every single-board mask (bit i = cell i holds an X).
#[rustfmt::skip]
pub(crate) const VALUE: [u8; 512] = [
    1, 0, 0, 2, 0, 3, 2, 0, 0, 2, 4, 3, 3, 4, 5, 0, 6, 3, 3, 7, 3, 4, 7, 0, 3, 7, 7, 4, 4, 3, 3, 0,
    0, 3, 4, 5, 2, 4, 3, 0, 4, 5, 3, 4, 5, 3, 4, 0, 3, 4, 7, 3, 7, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 3, 3, 4, 4, 7, 5, 0, 2, 0, 5, 0, 5, 0, 7, 0, 3, 4, 4, 3, 0, 0, 0, 0, 7, 0, 3, 0, 0, 0, 0, 0,
    3, 4, 0, 3, 5, 3, 4, 0, 5, 0, 7, 0, 4, 0, 3, 0, 4, 3, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 3, 4, 5, 3, 4, 5, 0, 4, 5, 3, 4, 0, 3, 7, 0, 3, 4, 0, 0, 4, 3, 0, 0, 7, 3, 0, 0, 3, 4, 0, 0,
    4, 0, 3, 7, 5, 3, 4, 0, 3, 7, 4, 3, 7, 4, 3, 0, 7, 3, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 4, 5, 3, 5, 3, 4, 0, 3, 0, 4, 0, 4, 0, 3, 0, 7, 3, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0,
    5, 3, 7, 4, 7, 4, 3, 0, 4, 0, 3, 0, 3, 0, 4, 0, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 4, 3, 5, 3, 7, 4, 0, 3, 5, 0, 4, 4, 3, 3, 0, 3, 0, 4, 0, 4, 0, 3, 0, 4, 0, 3, 0, 3, 0, 4, 0,
    2, 5, 5, 7, 0, 0, 0, 0, 5, 4, 7, 3, 0, 0, 0, 0, 7, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    3, 7, 4, 3, 7, 4, 3, 0, 4, 0, 3, 0, 3, 0, 4, 0, 4, 0, 3, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0,
    4, 3, 3, 4, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 5, 5, 4, 4, 3, 3, 0, 5, 7, 7, 3, 3, 4, 4, 0, 7, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0,
    3, 4, 4, 3, 0, 0, 0, 0, 4, 3, 3, 4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

/// Whether a position whose product is `q` is lost for the player to move.
#[inline]
pub(crate) fn is_p(q: u8) -> bool {
    P_SET & (1 << q) != 0
}

/// The product of the boards' values: the position's value.
#[inline]
pub(crate) fn position_value(pos: &Notakto) -> u8 {
    pos.boards()
        .iter()
        .fold(0u8, |acc, &m| MUL[acc as usize][VALUE[m as usize] as usize])
}

/// Whether the player to move in `pos` wins with perfect play.
pub(crate) fn mover_wins(pos: &Notakto) -> bool {
    !is_p(position_value(pos))
}

/// For each board mask and each value `x` of the other boards: the cells of
/// that board whose move leaves a P-position (a win for the mover), as a
/// 9-bit mask; 0 for a dead board.
fn winning_cells_table() -> &'static [[u16; ELEMENTS]; 512] {
    static TABLE: OnceLock<Box<[[u16; ELEMENTS]; 512]>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([[0u16; ELEMENTS]; 512]);
        for (m, row) in t.iter_mut().enumerate() {
            let m = m as u16;
            if has_line(m) {
                continue;
            }
            for (x, cells) in row.iter_mut().enumerate() {
                let mut empty = FULL & !m;
                while empty != 0 {
                    let c = empty.trailing_zeros();
                    empty &= empty - 1;
                    let v = VALUE[(m | 1 << c) as usize];
                    if is_p(MUL[x][v as usize]) {
                        *cells |= 1 << c;
                    }
                }
            }
        }
        t
    })
}

/// The product of every board but one, for each board (prefix and suffix
/// products, so the whole list costs one pass each way).
fn others_products(pos: &Notakto, out: &mut [u8]) {
    let boards = pos.boards();
    let mut acc = 0u8;
    for (k, &m) in boards.iter().enumerate() {
        out[k] = acc;
        acc = MUL[acc as usize][VALUE[m as usize] as usize];
    }
    let mut acc = 0u8;
    for k in (0..boards.len()).rev() {
        out[k] = MUL[out[k] as usize][acc as usize];
        acc = MUL[acc as usize][VALUE[boards[k] as usize] as usize];
    }
}

/// Moves that leave the opponent in a P-position (empty when the mover is lost).
pub(crate) fn winning_moves(pos: &Notakto) -> MoveList<NotaktoMove> {
    let mut others = [0u8; 26];
    others_products(pos, &mut others);
    let table = winning_cells_table();
    let mut list = MoveList::new();
    // Straight from the table's cell masks: no move generation, no filtering.
    for (b, (&m, &x)) in pos.boards().iter().zip(others.iter()).enumerate() {
        let mut cells = table[m as usize][x as usize];
        while cells != 0 {
            list.extend(NotaktoMove::new(b as u8, cells.trailing_zeros() as u8));
            cells &= cells - 1;
        }
    }
    list
}

/// Counts the opponent's winning replies to each move of one position
/// without playing the moves: a move changes one board, so each other
/// board's "product of the rest" is the product over the boards other than
/// both, times the changed board's new value.
struct ReplyCounter {
    /// Product of every board but `k`.
    others: [u8; 26],
    /// `excl2[b][k]`: product of every board but `b` and `k`.
    excl2: [[u8; 26]; 26],
}

impl ReplyCounter {
    fn new(pos: &Notakto) -> Self {
        let mut others = [0u8; 26];
        others_products(pos, &mut others);
        let boards = pos.boards();
        let mut excl2 = [[0u8; 26]; 26];
        for (b, row) in excl2.iter_mut().enumerate().take(boards.len()) {
            // The products of the rest with board b left out as well.
            let mut acc = 0u8;
            for (k, &m) in boards.iter().enumerate() {
                row[k] = acc;
                if k != b {
                    acc = MUL[acc as usize][VALUE[m as usize] as usize];
                }
            }
            let mut acc = 0u8;
            for k in (0..boards.len()).rev() {
                row[k] = MUL[row[k] as usize][acc as usize];
                if k != b {
                    acc = MUL[acc as usize][VALUE[boards[k] as usize] as usize];
                }
            }
        }
        ReplyCounter { others, excl2 }
    }

    fn count(&self, pos: &Notakto, mv: NotaktoMove) -> u32 {
        let table = winning_cells_table();
        let b = mv.board() as usize;
        let after = pos.board(b) | 1 << mv.cell();
        let v = VALUE[after as usize] as usize;
        // Replies on the changed board, then on every other board. Dead
        // boards have no cells to play, so their rows are all zero.
        let mut n = table[after as usize][self.others[b] as usize].count_ones();
        for (k, &m) in pos.boards().iter().enumerate() {
            if k != b {
                let x = MUL[self.excl2[b][k] as usize][v];
                n += table[m as usize][x as usize].count_ones();
            }
        }
        n
    }
}

/// Perfect play from the misère quotient. In a won position it picks at
/// random among the winning moves; in a lost one it leaves the opponent the
/// fewest winning replies, and kills the last board only when it must.
pub struct Optimal;

impl Optimal {
    /// An optimal bot; the seed only breaks ties.
    pub fn bot(seed: u64) -> RuleBot<Notakto> {
        RuleBot::new("optimal", Self::candidates, seed)
    }

    /// The moves this bot chooses among in `pos`.
    pub(crate) fn candidates(pos: &Notakto) -> MoveList<NotaktoMove> {
        let wins = winning_moves(pos);
        if !wins.is_empty() {
            return wins;
        }
        let moves = pos.legal_moves();
        let forced = moves.iter().all(|&mv| kills_last_board(pos, mv));
        // One counter for all the moves: its products depend on the position only.
        let counter = ReplyCounter::new(pos);
        let mut best = MoveList::new();
        let mut fewest = u32::MAX;
        for &mv in moves
            .iter()
            .filter(|&&mv| forced || !kills_last_board(pos, mv))
        {
            let n = counter.count(pos, mv);
            if n < fewest {
                fewest = n;
                best.clear();
            }
            if n == fewest {
                best.push(mv);
            }
        }
        best
    }
}

fn kills_board(pos: &Notakto, mv: NotaktoMove) -> bool {
    has_line(pos.board(mv.board() as usize) | 1 << mv.cell())
}

fn kills_last_board(pos: &Notakto, mv: NotaktoMove) -> bool {
    kills_board(pos, mv) && pos.live_mask().count_ones() == 1
}

/// A beginner's rules: never kill the last live board while another move
/// exists, and prefer moves that kill no board; random among equals.
pub(crate) struct Greedy;

impl Greedy {
    /// A greedy bot seeded by `seed`.
    pub(crate) fn bot(seed: u64) -> RuleBot<Notakto> {
        RuleBot::new("greedy", Self::candidates, seed)
    }

    /// The moves the rules allow in `pos`, all equally good to them.
    pub(crate) fn candidates(pos: &Notakto) -> MoveList<NotaktoMove> {
        let moves = pos.legal_moves();
        let quiet: MoveList<NotaktoMove> = moves
            .iter()
            .copied()
            .filter(|&m| !kills_board(pos, m))
            .collect();
        if !quiet.is_empty() {
            return quiet;
        }
        let not_last: MoveList<NotaktoMove> = moves
            .iter()
            .copied()
            .filter(|&m| !kills_last_board(pos, m))
            .collect();
        if !not_last.is_empty() {
            return not_last;
        }
        moves
    }
}

/// How `greedy` plays.
const GREEDY: &str = "kills no board if it can, never the last board unless forced";
/// How `optimal` plays.
const OPTIMAL: &str = "perfect play for any number of boards (misère quotient, no search)";

impl BuiltinBots for Notakto {
    const BUILTINS: &'static [Builtin<Self>] = &[
        plain_builtin!("random", super::RANDOM, RandomBot::<Notakto>::new),
        plain_builtin!("greedy", GREEDY, Greedy::bot),
        plain_builtin!("optimal", OPTIMAL, Optimal::bot),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::grid::map_bits;
    use crate::game::{Outcome, Seat};
    use std::collections::{HashMap, HashSet};

    fn canon_board(m: u16) -> u16 {
        crate::game::grid::SYMMETRIES
            .iter()
            .map(|s| map_bits(m, s))
            .min()
            .unwrap_or(m)
    }

    /// The live boards of a position, each reduced by symmetry, sorted: a
    /// key that identifies positions with the same outcome.
    fn key(boards: &[u16]) -> Vec<u16> {
        let mut k: Vec<u16> = boards
            .iter()
            .filter(|&&m| !has_line(m))
            .map(|&m| canon_board(m))
            .collect();
        k.sort_unstable();
        k
    }

    /// Plain game-tree search: does the player to move win?
    fn brute(boards: &[u16], memo: &mut HashMap<Vec<u16>, bool>) -> bool {
        let k = key(boards);
        if let Some(&w) = memo.get(&k) {
            return w;
        }
        // No live board: the previous player killed the last one and lost.
        let mut wins = k.is_empty();
        'outer: for i in 0..k.len() {
            for c in 0..9 {
                if k[i] & (1 << c) == 0 {
                    let mut next = k.clone();
                    next[i] |= 1 << c;
                    if !brute(&next, memo) {
                        wins = true;
                        break 'outer;
                    }
                }
            }
        }
        memo.insert(k, wins);
        wins
    }

    fn live_boards() -> Vec<u16> {
        let set: HashSet<u16> = (0..512u16)
            .filter(|&m| !has_line(m))
            .map(canon_board)
            .collect();
        let mut v: Vec<u16> = set.into_iter().collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn monoid_is_commutative_associative_with_identity() {
        for a in 0..ELEMENTS {
            assert_eq!(MUL[0][a] as usize, a);
            for b in 0..ELEMENTS {
                assert_eq!(MUL[a][b], MUL[b][a]);
                for c in 0..ELEMENTS {
                    let l = MUL[MUL[a][b] as usize][c];
                    let r = MUL[a][MUL[b][c] as usize];
                    assert_eq!(l, r, "({a}*{b})*{c}");
                }
            }
        }
        assert_eq!(P_SET.count_ones(), 4, "the quotient has 4 P-positions");
        for m in 0..512u16 {
            if has_line(m) {
                assert_eq!(VALUE[m as usize], 0, "a dead board is the identity");
            }
            for s in &crate::game::grid::SYMMETRIES {
                assert_eq!(VALUE[m as usize], VALUE[map_bits(m, s) as usize]);
            }
        }
    }

    #[test]
    fn quotient_matches_brute_force_on_every_position_of_up_to_three_boards() {
        let live = live_boards();
        assert_eq!(live.len(), 46);
        let mut memo = HashMap::new();
        let mut checked = 0;
        for i in 0..live.len() {
            for j in i..live.len() {
                for k in j..live.len() {
                    for boards in [
                        vec![live[i]],
                        vec![live[i], live[j]],
                        vec![live[i], live[j], live[k]],
                    ] {
                        let pos = Notakto::from_boards(&boards).unwrap();
                        assert_eq!(
                            mover_wins(&pos),
                            brute(&boards, &mut memo),
                            "position {pos}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 50_000, "{checked}");
        // Every element of the monoid shows up as some position's value.
        let mut seen = 0u32;
        for &a in &live {
            for &b in &live {
                let p = Notakto::from_boards(&[a, b]).unwrap();
                seen |= 1 << position_value(&p);
            }
        }
        assert_eq!(seen.count_ones() as usize, ELEMENTS);
    }

    /// Every line where `seat` is played by any of optimal's choices and the
    /// opponent by every legal move; returns the positions visited.
    fn always_wins(start: Notakto, seat: Seat) -> usize {
        let mut seen = HashSet::new();
        let mut stack = vec![start];
        while let Some(pos) = stack.pop() {
            if !seen.insert(key(pos.boards())) {
                continue;
            }
            if let Some(o) = pos.outcome() {
                assert_eq!(o, Outcome::Win(seat), "optimal lost: {pos}");
                continue;
            }
            let moves = if pos.to_move() == seat {
                assert!(mover_wins(&pos), "optimal reached a lost position {pos}");
                Optimal::candidates(&pos)
            } else {
                pos.legal_moves()
            };
            assert!(!moves.is_empty());
            for mv in moves {
                let mut n = pos;
                n.play_unchecked(mv);
                stack.push(n);
            }
        }
        seen.len()
    }

    #[test]
    fn optimal_wins_against_every_line() {
        assert!(always_wins(Notakto::new(1), Seat::One) > 10);
        assert!(always_wins(Notakto::new(2), Seat::Two) > 100);
        assert!(always_wins(Notakto::new(3), Seat::One) > 1000);
    }

    #[test]
    fn lost_positions_avoid_killing_the_last_board() {
        // One live board, mover lost (value in P), with quiet moves left.
        let pos: Notakto = "XXX....../....X....".parse().unwrap();
        assert!(!mover_wins(&pos));
        for mv in Optimal::candidates(&pos) {
            assert!(!kills_last_board(&pos, mv), "{mv}");
        }
    }

    #[test]
    fn greedy_follows_its_rules() {
        let pos: Notakto = "XX......./XX.......".parse().unwrap();
        for mv in Greedy::candidates(&pos) {
            assert!(!kills_board(&pos, mv), "{mv}");
        }
        // A single live board on which every move kills: it must kill.
        let last: Notakto = "XX.X.X.XX".parse().unwrap();
        let forced = Greedy::candidates(&last);
        assert_eq!(forced.len(), 3);
        assert!(forced.iter().all(|&mv| kills_last_board(&last, mv)));
        // Killing a board that is not the last beats killing the last one.
        let two: Notakto = "XX.X.X.XX/XX.X.X.XX".parse().unwrap();
        assert!(Greedy::candidates(&two)
            .iter()
            .all(|&mv| !kills_last_board(&two, mv)));
    }
}
