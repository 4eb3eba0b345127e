//! Classic 3x3 tic-tac-toe on two 9-bit bitboards.
//!
//! Position text: 9 characters, row-major, each `X`, `O` or `.`; X is to move
//! when the counts are equal. Move text: one digit `0`-`8`.

use std::fmt;
use std::str::FromStr;

use rand::Rng;

use super::grid::{count9, has_line, map_bits, nth_bit_mask, nth_set_bit, FULL, SYMMETRIES};
use super::{Game, GameKind, GameOptions, MoveList, Outcome, ParseError, Seat};

/// A tic-tac-toe cell, 0..=8 row-major. Its text is the digit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cell(u8);

impl Cell {
    /// The cell with this index, if it is 0..=8.
    pub(crate) fn new(index: u8) -> Option<Cell> {
        (index < 9).then_some(Cell(index))
    }

    /// The cell at (row, column), both 0..=2.
    pub(crate) fn from_row_col(row: u8, col: u8) -> Option<Cell> {
        (row < 3 && col < 3).then_some(Cell(row * 3 + col))
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
///
/// Its text is 9 cells row by row, `X`, `O` or `.`; a move is a cell 0-8:
///
/// ```
/// use referee::game::{Game, Outcome, Seat, TicTacToe};
///
/// let mut pos: TicTacToe = "XX.OO....".parse()?;
/// assert_eq!(pos.to_move(), Seat::One);
/// pos.play("2".parse()?)?;
/// assert_eq!(pos.outcome(), Some(Outcome::Win(Seat::One)));
/// assert_eq!(pos.to_string(), "XXXOO....");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A move on a taken cell is refused, with the reason:
///
/// ```
/// use referee::game::{Game, TicTacToe};
///
/// let mut pos: TicTacToe = "X........".parse()?;
/// let err = pos.play("0".parse()?).unwrap_err();
/// assert!(err.to_string().contains("occupied"));
/// # Ok::<(), referee::game::ParseError>(())
/// ```
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
    pub(crate) fn x_bits(&self) -> u16 {
        self.x
    }

    /// Player 2's (O) cells as a bit mask.
    pub(crate) fn o_bits(&self) -> u16 {
        self.o
    }

    /// Empty cells as a bit mask.
    pub(crate) fn empty_bits(&self) -> u16 {
        FULL & !(self.x | self.o)
    }

    /// The bits of `seat`'s stones.
    pub(crate) fn bits(&self, seat: Seat) -> u16 {
        match seat {
            Seat::One => self.x,
            Seat::Two => self.o,
        }
    }

    /// Builds a position from two masks, checking it as the text parser does.
    #[cfg(test)]
    pub(crate) fn from_bits(x: u16, o: u16) -> Result<Self, ParseError> {
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
    const RULES: &'static str = "Players take turns marking a cell of a 3x3 board (player 1 is X, \
        player 2 is O). Three of your marks in a row, column or diagonal win; a full board \
        without a line is a draw.";
    const MOVE_HELP: &'static str =
        "type a cell number 0-8 (row by row: 0 is top left, 8 bottom right) and press Enter";
    const COMPLIANCE: &'static [(&'static str, &'static [&'static str])] = &[
        ("opening", &[]),
        ("opening, second player", &["4"]),
        ("midgame", &["0", "4", "8"]),
        ("midgame", &["0", "4", "8", "2"]),
        ("one legal move", &["0", "1", "2", "4", "3", "5", "7", "6"]),
    ];
    /// The index of a symmetry of the square (`grid::SYMMETRIES`).
    type Symmetry = u8;

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

    fn grid_cell(mv: Cell) -> Option<(u8, u8)> {
        Some((mv.0 / 3, mv.0 % 3))
    }

    fn from_grid_cell(row: u8, col: u8) -> Option<Cell> {
        Cell::from_row_col(row, col)
    }

    fn ply(&self) -> usize {
        count9(self.x | self.o) as usize
    }

    fn winning_line(&self) -> Vec<u8> {
        match crate::game::grid::line_cells(self.x) {
            v if v.is_empty() => crate::game::grid::line_cells(self.o),
            v => v,
        }
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
        Cell(SYMMETRIES[k % 8][(mv.0 % 9) as usize])
    }

    /// The image under the 8 symmetries of the square whose text is the
    /// smallest (`.` < `O` < `X`, cell 0 first).
    fn canonical(&self) -> (Self, u8) {
        let key = |x: u16, o: u16| {
            (0..9).fold(0u32, |acc, i| {
                acc * 3
                    + if x & (1 << i) != 0 {
                        2
                    } else {
                        u32::from(o & (1 << i) != 0)
                    }
            })
        };
        let mut best = (u32::MAX, *self, 0u8);
        for (k, sym) in SYMMETRIES.iter().enumerate() {
            let (x, o) = (map_bits(self.x, sym), map_bits(self.o, sym));
            let kk = key(x, o);
            if kk < best.0 {
                best = (kk, TicTacToe { x, o }, k as u8);
            }
        }
        (best.1, best.2)
    }

    fn uncanonical_move(mv: Cell, sym: &u8) -> Cell {
        let s = &SYMMETRIES[(*sym % 8) as usize];
        let original = s.iter().position(|&c| c == mv.0).unwrap_or(mv.0 as usize);
        Cell(original as u8)
    }

    /// Also the "find the winner" exercise's JSON list of `[row, col]`
    /// pairs: `[[0,0],[1,1]]`.
    fn split_moves(text: &str) -> Result<Vec<String>, ParseError> {
        if !text.trim_start().starts_with('[') {
            return Ok(text
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|m| !m.is_empty())
                .map(str::to_string)
                .collect());
        }
        let pairs: Vec<Vec<i64>> = serde_json::from_str(text).map_err(|e| {
            ParseError::new(format!(
                "moves are not a JSON list of [row, col] pairs: {e}"
            ))
        })?;
        pairs
            .iter()
            .enumerate()
            .map(|(i, p)| match p.as_slice() {
                [r, c] => u8::try_from(*r)
                    .ok()
                    .zip(u8::try_from(*c).ok())
                    .and_then(|(r, c)| Cell::from_row_col(r, c))
                    .map(|c| c.to_string())
                    .ok_or_else(|| {
                        ParseError::new(format!(
                            "move {} (index {i}) [{r}, {c}]: row and column must be 0-2",
                            i + 1
                        ))
                    }),
                _ => Err(ParseError::new(format!(
                    "move {} (index {i}): expected a [row, col] pair, got {p:?}",
                    i + 1
                ))),
            })
            .collect()
    }

    fn requirement_text(_opts: &GameOptions, seats: &[Seat]) -> String {
        format!("never lose, as {}", super::seats_text(seats))
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
    fn codingame_grid_cells_are_rows_and_columns() {
        for i in 0..9u8 {
            let cell = Cell::new(i).unwrap();
            assert_eq!(TicTacToe::grid_cell(cell), Some((i / 3, i % 3)));
            assert_eq!(TicTacToe::from_grid_cell(i / 3, i % 3), Some(cell));
        }
        assert_eq!(TicTacToe::from_grid_cell(3, 0), None);
        assert_eq!(crate::game::Notakto::grid_cell("A0".parse().unwrap()), None);
    }

    #[test]
    fn mirror_images_share_a_canonical_form() {
        let c: TicTacToe = "X...O....".parse().unwrap();
        let d: TicTacToe = "....O...X".parse().unwrap();
        assert_eq!(c.canonical().0, d.canonical().0);
        assert_eq!(c.canonical().0.to_string(), "....O...X");
    }

    #[test]
    fn the_winning_line_is_the_winner_s() {
        let won: TicTacToe = "XXOOXO..X".parse().unwrap();
        assert_eq!(won.winning_line(), [0, 4, 8]);
        let o_won: TicTacToe = "XXOXO.O..".parse().unwrap();
        assert_eq!(o_won.winning_line(), [2, 4, 6]);
        let drawn: TicTacToe = "XOXXOOOXX".parse().unwrap();
        assert!(drawn.winning_line().is_empty());
        assert!(TicTacToe::new().winning_line().is_empty());
    }

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
}
