//! Classic 3x3 tic-tac-toe on two 9-bit bitboards.
//!
//! Position text: 9 characters, row-major, each `X`, `O` or `.`; X is to move
//! when the counts are equal. Move text: one digit `0`-`8`.

use std::fmt;
use std::str::FromStr;

use rand::Rng;

use super::{Game, GameKind, GameOptions, MoveList, Outcome, ParseError, Seat};

/// The eight lines of a 3x3 board as bit masks (bit i = cell i, row-major).
pub const LINES: [u16; 8] = [
    0b000_000_111,
    0b000_111_000,
    0b111_000_000,
    0b001_001_001,
    0b010_010_010,
    0b100_100_100,
    0b100_010_001,
    0b001_010_100,
];

/// All nine cells.
pub const FULL: u16 = 0x1ff;

/// `LINE_TABLE[m]`: whether the 9-bit mask `m` holds a line. A table lookup
/// is the fastest test on the playout hot paths of all three games.
static LINE_TABLE: [bool; 512] = line_table();

const fn line_table() -> [bool; 512] {
    let mut t = [false; 512];
    let mut m = 0;
    while m < 512 {
        let mut k = 0;
        while k < 8 {
            if m as u16 & LINES[k] == LINES[k] {
                t[m] = true;
            }
            k += 1;
        }
        m += 1;
    }
    t
}

/// Whether the cells in `bits` contain a complete line.
#[inline(always)]
pub fn has_line(bits: u16) -> bool {
    LINE_TABLE[(bits & FULL) as usize]
}

/// Cells that would complete a line for `own` if taken, among `empty` cells.
#[inline]
pub fn winning_cells(own: u16, empty: u16) -> u16 {
    let mut out = 0;
    for line in LINES {
        let missing = line & !own;
        if missing.count_ones() == 1 && missing & empty != 0 {
            out |= missing;
        }
    }
    out
}

/// `NTH_BIT[m][n]`: the index of the `n`-th set bit of the 9-bit mask `m`,
/// so that picking a random empty cell is one lookup on the playout paths.
static NTH_BIT: [[u8; 9]; 512] = nth_bit_table();

const fn nth_bit_table() -> [[u8; 9]; 512] {
    let mut t = [[0u8; 9]; 512];
    let mut m = 0;
    while m < 512 {
        let mut n = 0;
        let mut i = 0;
        while i < 9 {
            if m & (1 << i) != 0 {
                t[m][n] = i as u8;
                n += 1;
            }
            i += 1;
        }
        m += 1;
    }
    t
}

/// Index of the `n`-th set bit of `bits` (n counted from 0).
#[inline]
pub(crate) fn nth_set_bit(mut bits: u32, n: u32) -> u32 {
    if bits < 512 && n < 9 {
        return NTH_BIT[bits as usize][n as usize] as u32;
    }
    for _ in 0..n {
        bits &= bits - 1;
    }
    bits.trailing_zeros()
}

/// `NTH_MASK[m][n]`: the `n`-th set bit of the 9-bit mask `m` as a mask,
/// so that a playout step is one load and no shift on its critical path.
/// Rows are 16 wide so that indexing needs neither a bounds check nor a
/// division; entries past the mask's count are 0.
static NTH_MASK: [[u16; 16]; 512] = nth_mask_table();

const fn nth_mask_table() -> [[u16; 16]; 512] {
    let mut t = [[0u16; 16]; 512];
    let mut m = 0;
    while m < 512 {
        let mut n = 0;
        while n < (m as u32).count_ones() as usize {
            t[m][n] = 1 << NTH_BIT[m][n];
            n += 1;
        }
        m += 1;
    }
    t
}

/// `COUNT9[m]`: the number of set bits of the 9-bit mask `m` (a lookup is
/// faster than `count_ones` on CPUs where the build cannot assume `popcnt`).
static COUNT9: [u8; 512] = count9_table();

const fn count9_table() -> [u8; 512] {
    let mut t = [0u8; 512];
    let mut m = 0;
    while m < 512 {
        t[m] = (m as u32).count_ones() as u8;
        m += 1;
    }
    t
}

/// `CELL_LIST[m]`: the number of set bits of the 9-bit mask `m` in bits
/// 0..4, then the index of each set bit, lowest first, 4 bits each, and `m`
/// itself in bits 48..57. One load gives the count, the n-th cell and the
/// mask, which keeps a playout step short.
static CELL_LIST: [u64; 512] = cell_list_table();

const fn cell_list_table() -> [u64; 512] {
    let mut t = [0u64; 512];
    let mut m = 0;
    while m < 512 {
        let mut packed = 0u64;
        let mut n = 0;
        let mut i = 0;
        while i < 9 {
            if m & (1 << i) != 0 {
                packed |= (i as u64) << (4 + 4 * n);
                n += 1;
            }
            i += 1;
        }
        t[m] = packed | n as u64 | (m as u64) << 48;
        m += 1;
    }
    t
}

/// The packed count and cell list of a 9-bit mask (see `CELL_LIST`):
/// `list & 15` is the count, `(list >> (4 + 4 * n)) & 15` the n-th cell,
/// `list >> 48` the mask.
#[inline(always)]
pub(crate) fn cell_list(bits: u16) -> u64 {
    CELL_LIST[(bits & FULL) as usize]
}

/// The number of set bits of a 9-bit mask.
#[inline(always)]
pub(crate) fn count9(bits: u16) -> u32 {
    COUNT9[(bits & FULL) as usize] as u32
}

/// The `n`-th set bit (from 0) of a 9-bit mask, as a mask; 0 when `n` is
/// not below the number of set bits.
#[inline(always)]
pub(crate) fn nth_bit_mask(bits: u16, n: u32) -> u16 {
    if n > 15 {
        return 0;
    }
    NTH_MASK[(bits & FULL) as usize][(n & 15) as usize]
}

/// A tic-tac-toe cell, 0..=8 row-major. Its text is the digit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell(u8);

impl Cell {
    /// The cell with this index, if it is 0..=8.
    pub fn new(index: u8) -> Option<Cell> {
        (index < 9).then_some(Cell(index))
    }

    /// The cell at (row, column), both 0..=2.
    pub fn from_row_col(row: u8, col: u8) -> Option<Cell> {
        (row < 3 && col < 3).then_some(Cell(row * 3 + col))
    }

    /// The index 0..=8.
    pub fn index(self) -> u8 {
        self.0
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl FromStr for Cell {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        match t.as_bytes() {
            [d @ b'0'..=b'8'] => Ok(Cell(d - b'0')),
            _ => Err(ParseError::new(format!(
                "bad tictactoe move '{t}': expected one digit 0-8"
            ))),
        }
    }
}

/// A tic-tac-toe position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TicTacToe {
    x: u16,
    o: u16,
}

impl TicTacToe {
    /// The empty board.
    pub fn new() -> Self {
        Self::default()
    }

    /// Player 1's (X) cells as a bit mask.
    pub fn x_bits(&self) -> u16 {
        self.x
    }

    /// Player 2's (O) cells as a bit mask.
    pub fn o_bits(&self) -> u16 {
        self.o
    }

    /// Empty cells as a bit mask.
    pub fn empty_bits(&self) -> u16 {
        FULL & !(self.x | self.o)
    }

    /// The bits of `seat`'s stones.
    pub fn bits(&self, seat: Seat) -> u16 {
        match seat {
            Seat::One => self.x,
            Seat::Two => self.o,
        }
    }

    /// Builds a position from two masks, checking it as the text parser does.
    pub fn from_bits(x: u16, o: u16) -> Result<Self, ParseError> {
        let pos = TicTacToe { x, o };
        pos.validate()?;
        Ok(pos)
    }

    fn validate(&self) -> Result<(), ParseError> {
        if self.x & self.o != 0 || (self.x | self.o) & !FULL != 0 {
            return Err(ParseError::new("overlapping or out-of-range cells"));
        }
        let (nx, no) = (self.x.count_ones(), self.o.count_ones());
        if nx != no && nx != no + 1 {
            return Err(ParseError::new(format!(
                "impossible counts: {nx} X and {no} O (X moves first, so X = O or X = O + 1)"
            )));
        }
        let (xw, ow) = (has_line(self.x), has_line(self.o));
        if xw && ow {
            return Err(ParseError::new("both X and O have three in a row"));
        }
        if xw && nx != no + 1 {
            return Err(ParseError::new(
                "X has three in a row but O has moved since",
            ));
        }
        if ow && nx != no {
            return Err(ParseError::new(
                "O has three in a row but X has moved since",
            ));
        }
        Ok(())
    }

    /// The symmetry images of a cell under the 8 symmetries of the square.
    pub const SYMMETRIES: [[u8; 9]; 8] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8],
        [2, 5, 8, 1, 4, 7, 0, 3, 6],
        [8, 7, 6, 5, 4, 3, 2, 1, 0],
        [6, 3, 0, 7, 4, 1, 8, 5, 2],
        [2, 1, 0, 5, 4, 3, 8, 7, 6],
        [6, 7, 8, 3, 4, 5, 0, 1, 2],
        [0, 3, 6, 1, 4, 7, 2, 5, 8],
        [8, 5, 2, 7, 4, 1, 6, 3, 0],
    ];
}

/// Maps a 9-bit cell mask through a symmetry table.
pub fn map_bits(bits: u16, sym: &[u8; 9]) -> u16 {
    let mut out = 0;
    for (i, &t) in sym.iter().enumerate() {
        if bits & (1 << i) != 0 {
            out |= 1 << t;
        }
    }
    out
}

impl fmt::Display for TicTacToe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = [b'.'; 9];
        for (i, c) in s.iter_mut().enumerate() {
            if self.x & (1 << i) != 0 {
                *c = b'X';
            } else if self.o & (1 << i) != 0 {
                *c = b'O';
            }
        }
        // The buffer holds only ASCII.
        f.write_str(std::str::from_utf8(&s).map_err(|_| fmt::Error)?)
    }
}

impl FromStr for TicTacToe {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        if t.len() != 9 {
            return Err(ParseError::new(format!(
                "tictactoe position must be 9 characters of X, O or '.', got {} characters",
                t.chars().count()
            )));
        }
        let mut pos = TicTacToe::default();
        for (i, c) in t.bytes().enumerate() {
            match c {
                b'X' => pos.x |= 1 << i,
                b'O' => pos.o |= 1 << i,
                b'.' => {}
                _ => {
                    return Err(ParseError::new(format!(
                        "bad character '{}' at position {i} of tictactoe position (expected X, O or '.')",
                        c as char
                    )))
                }
            }
        }
        pos.validate()?;
        Ok(pos)
    }
}

impl Game for TicTacToe {
    type Move = Cell;
    const KIND: GameKind = GameKind::TicTacToe;

    fn start(_opts: &GameOptions) -> Self {
        Self::default()
    }

    fn options(&self) -> GameOptions {
        GameOptions::default()
    }

    #[inline]
    fn to_move(&self) -> Seat {
        if count9(self.x) == count9(self.o) {
            Seat::One
        } else {
            Seat::Two
        }
    }

    fn legal_moves(&self) -> MoveList<Cell> {
        let mut list = MoveList::new();
        if self.outcome().is_some() {
            return list;
        }
        let mut empty = self.empty_bits();
        while empty != 0 {
            list.push(Cell(empty.trailing_zeros() as u8));
            empty &= empty - 1;
        }
        list
    }

    #[inline]
    fn play_unchecked(&mut self, mv: Cell) {
        let bit = 1u16 << (mv.0 & 15);
        if count9(self.x) == count9(self.o) {
            self.x |= bit;
        } else {
            self.o |= bit;
        }
    }

    #[inline]
    fn outcome(&self) -> Option<Outcome> {
        if has_line(self.x) {
            Some(Outcome::Win(Seat::One))
        } else if has_line(self.o) {
            Some(Outcome::Win(Seat::Two))
        } else if self.x | self.o == FULL {
            Some(Outcome::Draw)
        } else {
            None
        }
    }

    fn ply(&self) -> usize {
        count9(self.x | self.o) as usize
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for row in 0..3 {
            let cells: Vec<String> = (0..3)
                .map(|col| {
                    let i = row * 3 + col;
                    if self.x & (1 << i) != 0 {
                        "X".to_string()
                    } else if self.o & (1 << i) != 0 {
                        "O".to_string()
                    } else {
                        i.to_string()
                    }
                })
                .collect();
            out.push_str(&format!(" {} | {} | {}\n", cells[0], cells[1], cells[2]));
            if row < 2 {
                out.push_str("---+---+---\n");
            }
        }
        out
    }

    fn illegality(&self, mv: Cell) -> Option<String> {
        if self.outcome().is_some() {
            Some("the game is over".into())
        } else if mv.0 > 8 {
            Some(format!("cell {} is out of range 0-8", mv.0))
        } else if (self.x | self.o) & (1 << mv.0) != 0 {
            Some(format!("cell {} is occupied", mv.0))
        } else {
            None
        }
    }

    fn symmetry_count() -> usize {
        8
    }

    fn map_move(mv: Cell, k: usize) -> Cell {
        Cell(Self::SYMMETRIES[k % 8][(mv.0 % 9) as usize])
    }

    #[inline]
    fn random_move<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Cell> {
        if self.outcome().is_some() {
            return None;
        }
        let empty = self.empty_bits() as u32;
        let n = rng.random_range(0..empty.count_ones());
        Some(Cell(nth_set_bit(empty, n) as u8))
    }

    fn random_playout<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Outcome {
        // Only the mover's last stone can have made a line, so check just that.
        if let Some(o) = self.outcome() {
            return o;
        }
        let first = self.to_move();
        // The stones of the player to move first and of the other one, so
        // that no branch on the seat sits in the loop.
        let (mut own, mut other) = match first {
            Seat::One => (self.x, self.o),
            Seat::Two => (self.o, self.x),
        };
        let mut empty = FULL & !(own | other);
        // The number of empty cells is known without counting: it drops by
        // one a move, which keeps the count off the loop's critical path.
        let mut left = count9(empty) as u64;
        // One 64-bit draw serves the whole playout: each choice among n
        // cells takes the high part of r * n and keeps the low part as the
        // next draw (9! < 2^19, so the bits never run out; the bias is below
        // 2^-40 per choice).
        let mut r = rng.next_u64();
        // One move by the holder of `$own`; `$who` says whether that is the
        // player who moved first in the playout. Two copies per round of
        // the loop, so the stones never change places.
        macro_rules! step {
            ($done:lifetime, $own:ident, $who:literal) => {{
                let m = r as u128 * left as u128;
                r = m as u64;
                let bit = nth_bit_mask(empty, (m >> 64) as u32);
                empty ^= bit;
                $own |= bit;
                if has_line($own) {
                    break $done($who, true);
                }
                if empty == 0 {
                    break $done($who, false);
                }
                left -= 1;
            }};
        }
        let (last_is_first, won) = 'done: loop {
            step!('done, own, true);
            step!('done, other, false);
        };
        let last = if last_is_first { first } else { first.other() };
        let outcome = if won {
            Outcome::Win(last)
        } else {
            Outcome::Draw
        };
        // Written back without a branch on the seat (a coin flip to the
        // predictor).
        let (x, o) = if first == Seat::One {
            (own, other)
        } else {
            (other, own)
        };
        self.x = x;
        self.o = o;
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{consistency, perft};

    #[test]
    fn perft_table() {
        let expected = [1u64, 9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872];
        let start = TicTacToe::new();
        for (depth, &n) in expected.iter().enumerate() {
            assert_eq!(perft(&start, depth as u32), n, "depth {depth}");
        }
    }

    /// Exact outcome probabilities of uniformly random play from `p`.
    fn exact(p: &TicTacToe) -> [f64; 3] {
        match p.outcome() {
            Some(Outcome::Win(Seat::One)) => [1.0, 0.0, 0.0],
            Some(Outcome::Win(Seat::Two)) => [0.0, 1.0, 0.0],
            Some(Outcome::Draw) => [0.0, 0.0, 1.0],
            None => {
                let moves = p.legal_moves();
                let mut sum = [0.0; 3];
                for &mv in &moves {
                    let mut q = *p;
                    q.play_unchecked(mv);
                    let e = exact(&q);
                    for k in 0..3 {
                        sum[k] += e[k] / moves.len() as f64;
                    }
                }
                sum
            }
        }
    }

    #[test]
    fn playouts_follow_uniform_random_play_and_leave_the_final_position() {
        let mut rng = crate::seed::rng(3);
        // From the start and from a few positions with either player to move.
        for text in [".........", "X...O....", "XO..X....", "X.O.O.X.."] {
            let start: TicTacToe = text.parse().expect("valid");
            let want = exact(&start);
            let n = 400_000;
            let mut got = [0u32; 3];
            for _ in 0..n {
                let mut p = start;
                let o = p.random_playout(&mut rng);
                // The position is left at the end of the playout, one move
                // at a time from the start: the same stones stay put.
                assert_eq!(p.outcome(), Some(o), "{text} -> {p}");
                assert_eq!(p.x_bits() & start.x_bits(), start.x_bits());
                assert_eq!(p.o_bits() & start.o_bits(), start.o_bits());
                let k = match o {
                    Outcome::Win(Seat::One) => 0,
                    Outcome::Win(Seat::Two) => 1,
                    Outcome::Draw => 2,
                };
                got[k] += 1;
            }
            for k in 0..3 {
                let f = got[k] as f64 / n as f64;
                // 400k samples: the standard error is below 0.0008.
                assert!((f - want[k]).abs() < 0.005, "{text}: {got:?} vs {want:?}");
            }
        }
    }

    #[test]
    fn consistency() {
        consistency::check::<TicTacToe>(&GameOptions::default(), 300, 1);
    }

    #[test]
    fn rejects_bad_positions() {
        for (text, needle) in [
            ("XX.......", "impossible counts"),
            ("XXXOO....", ""),
            ("XXXOOO...", "both"),
            ("XXX.OO.O.", "O has moved"),
            ("X........X", "9 characters"),
            ("X.......x", "bad character"),
        ] {
            match text.parse::<TicTacToe>() {
                Ok(_) => assert!(needle.is_empty(), "{text} accepted"),
                Err(e) => assert!(e.to_string().contains(needle), "{text}: {e}"),
            }
        }
    }

    #[test]
    fn illegal_moves_are_named() {
        let mut p: TicTacToe = "X........".parse().unwrap();
        let e = p.play(Cell(0)).unwrap_err();
        assert!(e.reason.contains("occupied"));
        assert!("9".parse::<Cell>().is_err());
    }

    #[test]
    fn symmetric_games_share_a_canonical_form() {
        let g = |t: &[u8]| -> Vec<Cell> { t.iter().map(|&c| Cell(c)).collect() };
        // 0 4 8 and 2 4 6 are mirror images; 0 4 1 is not one of them.
        let a = crate::game::canonical_game::<TicTacToe>(&g(&[0, 4, 8]));
        let b = crate::game::canonical_game::<TicTacToe>(&g(&[2, 4, 6]));
        let c = crate::game::canonical_game::<TicTacToe>(&g(&[0, 4, 1]));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn symmetries_are_permutations() {
        for s in TicTacToe::SYMMETRIES {
            let mut seen = [false; 9];
            for c in s {
                seen[c as usize] = true;
            }
            assert!(seen.iter().all(|&b| b));
            for line in LINES {
                assert!(LINES.contains(&map_bits(line, &s)));
            }
        }
    }
}
