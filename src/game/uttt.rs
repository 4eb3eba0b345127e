//! Ultimate tic-tac-toe on bitboards, as in the UTTT bot competition.
//!
//! Nine local boards; the first move is free; a move in cell c sends the
//! opponent to local board c; a local board that is won or full is closed,
//! and a player sent to a closed board may play in any open board; three won
//! local boards in a line win the game; no legal move left is a draw.
//!
//! Position text: `<cells>/<forced>/<won>`. `cells` is 81 characters in
//! board-major order (index = board * 9 + cell, the competition's
//! `board[i][j]`), `X` for player 1, `O` for player 2, `.` empty; `forced` is
//! the board the mover must play in, `0`-`8`, or `9` for any open board;
//! `won` is 9 characters, `.` open, `X` or `O` won, `=` full without a winner.
//! Move text: `<board> <cell>`, e.g. `4 4`.

use std::fmt;
use std::str::FromStr;

use rand::Rng;

use super::grid::{cell_list, count9, has_line, FULL};
use super::{Game, GameKind, GameOptions, MoveList, Outcome, ParseError, Rules, Seat};

/// Whether the mask holds a line (three in a row, column or diagonal).
#[inline(always)]
pub fn line(mask: u16) -> bool {
    has_line(mask)
}

/// `THREATS[m]`: the cells that would complete a line for a player holding
/// the 9-bit mask `m` (empty or not; the caller masks with the empty cells).
/// A table, because informed playouts ask this on every move.
static THREATS: [u16; 512] = threat_table();

const fn threat_table() -> [u16; 512] {
    let lines: [u16; 8] = [0o007, 0o070, 0o700, 0o111, 0o222, 0o444, 0o421, 0o124];
    let mut t = [0u16; 512];
    let mut m = 0;
    while m < 512 {
        let mut k = 0;
        while k < 8 {
            let missing = lines[k] & !(m as u16);
            if missing.count_ones() == 1 {
                t[m] |= missing;
            }
            k += 1;
        }
        m += 1;
    }
    t
}

/// Cells that would complete a line for a player holding `mask`; mask the
/// result with the board's empty cells to get the playable winning cells.
#[inline(always)]
pub fn threats(mask: u16) -> u16 {
    THREATS[(mask & FULL) as usize]
}

/// A random set bit of the nonzero 9-bit mask `cells`: one
/// `random_range(0..n)` draw for its `n` set bits, the draw's value
/// indexing them lowest first. A table lookup gives the count and the cell
/// (the build cannot assume `popcnt`, so `count_ones` is a dozen
/// instructions).
#[inline(always)]
pub(crate) fn random_cell<R: Rng + ?Sized>(cells: u16, rng: &mut R) -> u8 {
    let list = cell_list(cells);
    let k = rng.random_range(0..(list & 15) as u32);
    (list >> (4 + 4 * k.min(8)) & 15) as u8
}

/// "Any open board": the `forced` value of a free move.
pub(crate) const ANY: u8 = 9;

/// A UTTT move: a local board and a cell in it, both 0..=8 row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UtttMove {
    board: u8,
    cell: u8,
}

impl UtttMove {
    /// The move in `board` at `cell`, if both are 0..=8.
    pub fn new(board: u8, cell: u8) -> Option<UtttMove> {
        (board < 9 && cell < 9).then_some(UtttMove { board, cell })
    }

    /// The local board, 0..=8.
    pub fn board(self) -> u8 {
        self.board
    }

    /// The cell in the local board, 0..=8 (also the board the opponent is sent to).
    pub fn cell(self) -> u8 {
        self.cell
    }
}

impl fmt::Display for UtttMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.board, self.cell)
    }
}

impl FromStr for UtttMove {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let mut it = s.split_whitespace();
        let digit = |w: Option<&str>| match w.map(str::as_bytes) {
            Some([d @ b'0'..=b'8']) => Some(d - b'0'),
            _ => None,
        };
        match (digit(it.next()), digit(it.next()), it.next()) {
            (Some(board), Some(cell), None) => Ok(UtttMove { board, cell }),
            _ => Err(ParseError::new(format!(
                "bad uttt move '{}': expected '<board> <cell>', two digits 0-8, e.g. '4 4'",
                s.trim()
            ))),
        }
    }
}

/// A UTTT position.
///
/// Its text is the 81 cells board by board, the board the player to move is
/// sent to (9: any) and the nine boards' states. A move is `board cell`; it
/// sends the opponent to the board of that cell:
///
/// ```
/// use referee::game::{Game, Uttt};
///
/// let mut pos = Uttt::new();
/// assert_eq!(pos.legal_moves().len(), 81);
/// pos.play("4 2".parse()?)?;
/// assert_eq!(pos.legal_moves().len(), 9); // all in board 2
/// assert!(pos.to_string().contains("/2/"));
/// let back: Uttt = pos.to_string().parse()?;
/// assert_eq!(back, pos);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// CodinGame's bots name cells by row and column of the 9x9 grid:
///
/// ```
/// use referee::game::{Game, Uttt, UtttMove};
///
/// let mv = UtttMove::new(1, 3).unwrap(); // board 1 (top middle), cell 3
/// assert_eq!(Uttt::grid_cell(mv), Some((1, 3)));
/// assert_eq!(Uttt::from_grid_cell(1, 3), Some(mv));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Uttt {
    /// Each player's cells, one 9-bit mask per local board.
    cells: [[u16; 9]; 2],
    /// Local boards won by each player.
    won: [u16; 2],
    /// Local boards that take no more moves (won or full).
    closed: u16,
    /// The board the mover must play in, or [`ANY`].
    forced: u8,
    /// Moves played.
    ply: u8,
    /// How a game that fills every board without a line ends.
    rules: Rules,
}

impl Default for Uttt {
    fn default() -> Self {
        Uttt {
            cells: [[0; 9]; 2],
            won: [0; 2],
            closed: 0,
            forced: ANY,
            ply: 0,
            rules: Rules::Standard,
        }
    }
}

impl Uttt {
    /// The empty position.
    pub fn new() -> Uttt {
        Uttt::default()
    }

    /// `seat`'s cells on local board `b` as a 9-bit mask.
    pub fn cells(&self, seat: Seat, b: usize) -> u16 {
        self.cells[seat.index()][b % 9]
    }

    /// Local boards won by `seat`, as a 9-bit mask.
    pub fn won(&self, seat: Seat) -> u16 {
        self.won[seat.index()]
    }

    /// Local boards that are closed (won or full), as a 9-bit mask.
    pub fn closed(&self) -> u16 {
        self.closed
    }

    /// The board the mover must play in, or `None` for any open board.
    pub(crate) fn forced(&self) -> Option<u8> {
        (self.forced < 9).then_some(self.forced)
    }

    /// The position with the players' stones, boards and turn swapped
    /// (not a position of a real game: the stone counts do not fit the
    /// mover); for tests of evaluations that must treat X and O alike.
    #[cfg(test)]
    pub(crate) fn swapped(&self) -> Uttt {
        Uttt {
            cells: [self.cells[1], self.cells[0]],
            won: [self.won[1], self.won[0]],
            ply: self.ply ^ 1,
            ..*self
        }
    }

    /// Boards the mover may play in, as a 9-bit mask (0 when the game is over).
    #[inline]
    pub fn playable_boards(&self) -> u16 {
        if self.is_decided() {
            0
        } else if self.forced < 9 {
            1 << self.forced
        } else {
            FULL & !self.closed
        }
    }

    /// Empty cells of local board `b`.
    #[inline]
    pub fn empty(&self, b: usize) -> u16 {
        FULL & !(self.cells[0][b] | self.cells[1][b])
    }

    /// The result of a game that filled every board without three won
    /// boards in a row: a draw under the standard rules; under CodinGame's,
    /// a win for the player with more boards won (equal counts draw).
    #[inline]
    fn full_board_outcome(&self) -> Outcome {
        match self.rules {
            Rules::Standard => Outcome::Draw,
            Rules::CodinGame => {
                let (x, o) = (self.won[0].count_ones(), self.won[1].count_ones());
                match x.cmp(&o) {
                    std::cmp::Ordering::Greater => Outcome::Win(Seat::One),
                    std::cmp::Ordering::Less => Outcome::Win(Seat::Two),
                    std::cmp::Ordering::Equal => Outcome::Draw,
                }
            }
        }
    }

    #[inline]
    fn is_decided(&self) -> bool {
        line(self.won[0]) || line(self.won[1]) || self.closed == FULL
    }

    /// The status character of local board `b` in the position text.
    fn status_char(&self, b: usize) -> u8 {
        if self.won[0] & (1 << b) != 0 {
            b'X'
        } else if self.won[1] & (1 << b) != 0 {
            b'O'
        } else if self.closed & (1 << b) != 0 {
            b'='
        } else {
            b'.'
        }
    }

    fn validate(&self, won_text: &[u8]) -> Result<(), ParseError> {
        let count = |s: usize| -> u32 { self.cells[s].iter().map(|m| m.count_ones()).sum() };
        let (nx, no) = (count(0), count(1));
        if nx != no && nx != no + 1 {
            return Err(ParseError::new(format!(
                "impossible counts: {nx} X and {no} O (X moves first, so X = O or X = O + 1)"
            )));
        }
        for (b, &given) in won_text.iter().enumerate().take(9) {
            let (x, o) = (self.cells[0][b], self.cells[1][b]);
            if line(x) && line(o) {
                return Err(ParseError::new(format!(
                    "local board {b} has three in a row for both X and O"
                )));
            }
            for (seat, mask) in [(0usize, x), (1, o)] {
                // A won board takes no more moves, so one stone made every line.
                if line(mask) && !(0..9).any(|c| mask & (1 << c) != 0 && !line(mask & !(1 << c))) {
                    return Err(ParseError::new(format!(
                        "local board {b} cannot arise: no single {} completes all its lines",
                        if seat == 0 { 'X' } else { 'O' }
                    )));
                }
            }
            let want = self.status_char(b);
            if given != want {
                return Err(ParseError::new(format!(
                    "won field says '{}' for local board {b} but its cells make it '{}'",
                    given as char, want as char
                )));
            }
        }
        if line(self.won[0]) && line(self.won[1]) {
            return Err(ParseError::new(
                "both X and O have three local boards in a line",
            ));
        }
        if self.forced < 9 {
            if self.closed & (1 << self.forced) != 0 {
                return Err(ParseError::new(format!(
                    "forced board {} is closed (won or full); a player sent there may play \
                     anywhere, which the text writes as 9",
                    self.forced
                )));
            }
            if self.ply == 0 {
                return Err(ParseError::new("the first move is free: forced must be 9"));
            }
        }
        if self.ply > 0 {
            // The last move was made by the other player in the cell that
            // names the forced board (or a closed one when forced is 9).
            let last = self.to_move().other().index();
            let fits = |c: usize| (0..9).any(|b| self.cells[last][b] & (1 << c) != 0);
            let ok = match self.forced {
                f if f < 9 => fits(f as usize),
                _ => (0..9).any(|c| self.closed & (1 << c) != 0 && fits(c)),
            };
            if !ok {
                return Err(ParseError::new(format!(
                    "forced field {} disagrees with the cells: no {} stone could have sent the \
                     mover there",
                    self.forced,
                    if last == 0 { 'X' } else { 'O' }
                )));
            }
        }
        Ok(())
    }

    fn random_free_move<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<UtttMove> {
        let boards = self.playable_boards();
        let mut total = 0;
        let mut bs = boards;
        while bs != 0 {
            let b = bs.trailing_zeros() as usize;
            bs &= bs - 1;
            total += count9(self.empty(b));
        }
        if total == 0 {
            return None;
        }
        let mut n = rng.random_range(0..total);
        let mut bs = boards;
        while bs != 0 {
            let b = bs.trailing_zeros() as usize;
            bs &= bs - 1;
            let list = cell_list(self.empty(b));
            let k = (list & 15) as u32;
            if n < k {
                return Some(UtttMove {
                    board: b as u8,
                    cell: (list >> (4 + 4 * n.min(8)) & 15) as u8,
                });
            }
            n -= k;
        }
        None
    }
}

impl fmt::Display for Uttt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 81 + 1 + 1 + 1 + 9];
        for b in 0..9 {
            for c in 0..9 {
                buf[b * 9 + c] = if self.cells[0][b] & (1 << c) != 0 {
                    b'X'
                } else if self.cells[1][b] & (1 << c) != 0 {
                    b'O'
                } else {
                    b'.'
                };
            }
        }
        buf[81] = b'/';
        buf[82] = b'0' + self.forced;
        buf[83] = b'/';
        for b in 0..9 {
            buf[84 + b] = self.status_char(b);
        }
        // The buffer holds only ASCII.
        f.write_str(std::str::from_utf8(&buf).map_err(|_| fmt::Error)?)
    }
}

impl FromStr for Uttt {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        let parts: Vec<&str> = t.split('/').collect();
        let [cells, forced, won] = parts.as_slice() else {
            return Err(ParseError::new(format!(
                "uttt position must be '<81 cells>/<forced>/<9 won>', got {} part(s) separated by '/'",
                parts.len()
            )));
        };
        if cells.len() != 81 {
            return Err(ParseError::new(format!(
                "uttt cells must be 81 characters of X, O or '.', got {}",
                cells.chars().count()
            )));
        }
        let mut pos = Uttt::default();
        for (i, ch) in cells.bytes().enumerate() {
            let (b, c) = (i / 9, i % 9);
            match ch {
                b'X' => pos.cells[0][b] |= 1 << c,
                b'O' => pos.cells[1][b] |= 1 << c,
                b'.' => {}
                _ => {
                    return Err(ParseError::new(format!(
                        "bad character '{}' at cell index {i} (board {b}, cell {c}); \
                         expected X, O or '.'",
                        ch as char
                    )))
                }
            }
        }
        pos.forced = match forced.as_bytes() {
            [d @ b'0'..=b'9'] => d - b'0',
            _ => {
                return Err(ParseError::new(format!(
                    "forced board must be one digit 0-8, or 9 for any open board, got '{forced}'"
                )))
            }
        };
        let won = won.as_bytes();
        if won.len() != 9 {
            return Err(ParseError::new(format!(
                "won field must be 9 characters of '.', X, O or '=', got {}",
                won.len()
            )));
        }
        if let Some(bad) = won.iter().find(|c| !b".XO=".contains(c)) {
            return Err(ParseError::new(format!(
                "bad character '{}' in won field (expected '.', X, O or '=')",
                *bad as char
            )));
        }
        for b in 0..9 {
            let (x, o) = (pos.cells[0][b], pos.cells[1][b]);
            if line(x) {
                pos.won[0] |= 1 << b;
            } else if line(o) {
                pos.won[1] |= 1 << b;
            }
            if line(x) || line(o) || x | o == FULL {
                pos.closed |= 1 << b;
            }
        }
        let stones: u32 = pos.cells.iter().flatten().map(|m| m.count_ones()).sum();
        pos.ply = stones as u8;
        pos.validate(won)?;
        Ok(pos)
    }
}

/// The position text of the image of `text` under symmetry `k`.
pub(crate) fn map_position_text(text: &str, k: u8) -> String {
    let s = &crate::game::grid::SYMMETRIES[(k % 8) as usize];
    let mut parts = text.split('/');
    let (Some(cells), Some(forced), Some(won)) = (parts.next(), parts.next(), parts.next()) else {
        return text.to_string();
    };
    let (cells, won) = (cells.as_bytes(), won.as_bytes());
    if cells.len() != 81 || won.len() != 9 {
        return text.to_string();
    }
    let mut new_cells = [b'.'; 81];
    let mut new_won = [b'.'; 9];
    for b in 0..9 {
        new_won[s[b] as usize] = won[b];
        for c in 0..9 {
            new_cells[s[b] as usize * 9 + s[c] as usize] = cells[b * 9 + c];
        }
    }
    let forced = match forced.parse::<usize>() {
        Ok(f) if f < 9 => s[f].to_string(),
        _ => forced.to_string(),
    };
    format!(
        "{}/{forced}/{}",
        String::from_utf8_lossy(&new_cells),
        String::from_utf8_lossy(&new_won)
    )
}

impl Game for Uttt {
    type Move = UtttMove;
    const KIND: GameKind = GameKind::Uttt;
    const RULES: &'static str = "Nine tic-tac-toe boards in a 3x3 grid (player 1 is X, player 2 \
        is O). The cell you play sends your opponent to the board with that number; if that \
        board is finished, they may play in any open board. Win three boards in a line to win.";
    const MOVE_HELP: &'static str = "type a board number and a cell number, both 0-8 row by row, \
        separated by a space, e.g. 4 4, and press Enter";
    const COMPLIANCE: &'static [(&'static str, &'static [&'static str])] = &[
        ("opening (free board)", &[]),
        ("forced board", &["4 0"]),
        ("forced board", &["4 0", "0 4"]),
        (
            "free choice: sent to a won board",
            &["4 0", "0 4", "4 1", "1 4", "4 2", "2 4"],
        ),
        (
            "free choice: sent to a won board",
            &["4 0", "0 4", "4 1", "1 4", "4 2", "2 4", "3 4"],
        ),
        (
            "one legal move",
            &[
                "8 3", "3 8", "8 7", "7 8", "8 5", "5 6", "6 6", "6 8", "8 1", "1 3", "3 1", "1 1",
                "1 4", "4 1", "1 8", "8 6", "6 5", "5 8", "8 0", "0 4", "4 7", "7 4", "4 5", "5 4",
                "4 2", "2 8", "8 8", "8 4", "4 8",
            ],
        ),
    ];
    /// The index of a symmetry of the square (`grid::SYMMETRIES`), applied
    /// to the grid of boards and to every board at once.
    type Symmetry = u8;

    fn start(opts: &GameOptions) -> Self {
        Uttt {
            rules: opts.rules,
            ..Uttt::default()
        }
    }

    fn options(&self) -> GameOptions {
        GameOptions {
            rules: self.rules,
            ..GameOptions::default()
        }
    }

    fn under_rules(self, rules: Rules) -> Self {
        Uttt { rules, ..self }
    }

    fn decided_by_rule(&self) -> Option<String> {
        let no_line = !line(self.won[0]) && !line(self.won[1]);
        (self.rules == Rules::CodinGame && no_line && self.closed == FULL).then(|| {
            format!(
                "on boards won, {} to {} (CodinGame's rule)",
                self.won[0].count_ones(),
                self.won[1].count_ones()
            )
        })
    }

    #[inline]
    fn to_move(&self) -> Seat {
        if self.ply & 1 == 0 {
            Seat::One
        } else {
            Seat::Two
        }
    }

    fn legal_moves(&self) -> MoveList<UtttMove> {
        let mut list = MoveList::new();
        let mut bs = self.playable_boards();
        while bs != 0 {
            let b = bs.trailing_zeros() as u8;
            bs &= bs - 1;
            let mut e = self.empty(b as usize);
            while e != 0 {
                list.push(UtttMove {
                    board: b,
                    cell: e.trailing_zeros() as u8,
                });
                e &= e - 1;
            }
        }
        list
    }

    #[inline]
    fn play_unchecked(&mut self, mv: UtttMove) {
        let me = (self.ply & 1) as usize;
        // Both are below 9 in every move (`UtttMove::new` and parsing
        // check); `min` keeps the indexing free of bounds checks more
        // cheaply than `% 9`.
        let b = mv.board.min(8) as usize;
        let c = mv.cell.min(8);
        let m = self.cells[me][b] | 1 << c;
        self.cells[me][b] = m;
        if line(m) {
            self.won[me] |= 1 << b;
            self.closed |= 1 << b;
        } else if m | self.cells[1 - me][b] == FULL {
            self.closed |= 1 << b;
        }
        self.forced = if self.closed & (1 << c) != 0 { ANY } else { c };
        self.ply += 1;
    }

    #[inline]
    fn outcome(&self) -> Option<Outcome> {
        if line(self.won[0]) {
            Some(Outcome::Win(Seat::One))
        } else if line(self.won[1]) {
            Some(Outcome::Win(Seat::Two))
        } else if self.closed == FULL {
            Some(self.full_board_outcome())
        } else {
            None
        }
    }

    /// Row `3 (board / 3) + cell / 3`, column `3 (board % 3) + cell % 3`.
    fn grid_cell(mv: UtttMove) -> Option<(u8, u8)> {
        let (b, c) = (mv.board, mv.cell);
        Some((3 * (b / 3) + c / 3, 3 * (b % 3) + c % 3))
    }

    fn from_grid_cell(row: u8, col: u8) -> Option<UtttMove> {
        (row < 9 && col < 9).then(|| UtttMove {
            board: 3 * (row / 3) + col / 3,
            cell: 3 * (row % 3) + col % 3,
        })
    }

    fn ply(&self) -> usize {
        self.ply as usize
    }

    fn winning_line(&self) -> Vec<u8> {
        match crate::game::grid::line_cells(self.won[0]) {
            v if v.is_empty() => crate::game::grid::line_cells(self.won[1]),
            v => v,
        }
    }

    /// The 9x9 grid, local boards separated by lines. Empty cells the mover
    /// may play show their cell digit, so the move to type is `<board>
    /// <digit>`; other empty cells show `.`.
    fn render(&self) -> String {
        let playable = self.playable_boards();
        let mut out = String::new();
        for band in 0..3 {
            if band > 0 {
                out.push_str("-------+-------+-------\n");
            }
            for row in 0..3 {
                let mut line_text = String::new();
                for col_band in 0..3 {
                    if col_band > 0 {
                        line_text.push_str(" |");
                    }
                    let b = band * 3 + col_band;
                    for col in 0..3 {
                        let c = row * 3 + col;
                        let ch = if self.cells[0][b] & (1 << c) != 0 {
                            'X'
                        } else if self.cells[1][b] & (1 << c) != 0 {
                            'O'
                        } else if playable & (1 << b) != 0 {
                            (b'0' + c as u8) as char
                        } else {
                            '.'
                        };
                        line_text.push(' ');
                        line_text.push(ch);
                    }
                }
                out.push_str(&line_text);
                out.push('\n');
            }
        }
        let list = |m: u16| -> String {
            (0..9)
                .filter(|b| m & (1 << b) != 0)
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let drawn = self.closed & !(self.won[0] | self.won[1]);
        let mut status = Vec::new();
        for (name, m) in [
            ("X won", self.won[0]),
            ("O won", self.won[1]),
            ("full", drawn),
        ] {
            if m != 0 {
                status.push(format!("{name}: {}", list(m)));
            }
        }
        if !status.is_empty() {
            out.push_str(&format!("Local boards {}\n", status.join("; ")));
        }
        if self.outcome().is_none() {
            let who = if self.to_move() == Seat::One {
                'X'
            } else {
                'O'
            };
            match self.forced() {
                Some(b) => out.push_str(&format!(
                    "{who} to move in board {b} (type '{b} <cell>')\n"
                )),
                None => out.push_str(&format!(
                    "{who} to move in any open board (type '<board> <cell>', boards 0-8 row-major)\n"
                )),
            }
        }
        out
    }

    fn illegality(&self, mv: UtttMove) -> Option<String> {
        if self.outcome().is_some() {
            Some("the game is over".into())
        } else if mv.board > 8 || mv.cell > 8 {
            Some(format!("{mv} is out of range: boards and cells are 0-8"))
        } else if self.forced < 9 && mv.board != self.forced {
            Some(format!(
                "must play in local board {}, not {}",
                self.forced, mv.board
            ))
        } else if self.closed & (1 << mv.board) != 0 {
            Some(format!("local board {} is closed (won or full)", mv.board))
        } else if self.empty(mv.board as usize) & (1 << mv.cell) == 0 {
            Some(format!(
                "cell {} of local board {} is taken",
                mv.cell, mv.board
            ))
        } else {
            None
        }
    }

    fn symmetry_count() -> usize {
        8
    }

    fn map_move(mv: UtttMove, k: usize) -> UtttMove {
        let s = &crate::game::grid::SYMMETRIES[k % 8];
        UtttMove {
            board: s[(mv.board % 9) as usize],
            cell: s[(mv.cell % 9) as usize],
        }
    }

    /// The image under the 8 symmetries of the square (of the grid and of
    /// every board at once) whose position text is the smallest.
    fn canonical(&self) -> (Self, u8) {
        let text = self.to_string();
        let mut best: Option<(String, u8)> = None;
        for k in 0..8u8 {
            let image = map_position_text(&text, k);
            if best.as_ref().is_none_or(|(t, _)| image < *t) {
                best = Some((image, k));
            }
        }
        match best.and_then(|(t, k)| t.parse().ok().map(|p| (p, k))) {
            Some(found) => found,
            None => (*self, 0),
        }
    }

    fn uncanonical_move(mv: UtttMove, sym: &u8) -> UtttMove {
        let s = &crate::game::grid::SYMMETRIES[(*sym % 8) as usize];
        let back = |c: u8| s.iter().position(|&x| x == c).unwrap_or(c as usize) as u8;
        UtttMove {
            board: back(mv.board),
            cell: back(mv.cell),
        }
    }

    /// A move is two numbers, so moves are separated by commas.
    fn join_moves(moves: &[String]) -> String {
        moves.join(", ")
    }

    /// Split by commas when there are any, else by pairing the numbers up
    /// (a move is two numbers: `4 4 4 0` is two moves).
    fn split_moves(text: &str) -> Result<Vec<String>, ParseError> {
        let t = text.trim();
        if t.starts_with('[') {
            return Err(ParseError::new(
                "the JSON [row, col] form is for tictactoe; use move texts for uttt",
            ));
        }
        if t.contains(',') {
            return Ok(t
                .split(',')
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty())
                .collect());
        }
        let nums: Vec<&str> = t.split_whitespace().collect();
        Ok(nums.chunks(2).map(|c| c.join(" ")).collect())
    }

    fn requirement_text(_opts: &GameOptions, _seats: &[Seat]) -> String {
        "score thresholds against random, greedy and optimal".into()
    }

    #[inline]
    fn random_move<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<UtttMove> {
        if self.forced < 9 && !self.is_decided() {
            // A forced board is open, so it has an empty cell.
            return Some(UtttMove {
                board: self.forced,
                cell: random_cell(self.empty(self.forced as usize), rng),
            });
        }
        self.random_free_move(rng)
    }

    fn random_playout<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Outcome {
        if let Some(o) = self.outcome() {
            return o;
        }
        // The hot loop of every playout. Randomness: the caller's generator
        // seeds a wyrand stream (one 64-bit state, kept in a register) for
        // this playout, so the same generator state gives the same playout.
        // One 64-bit draw serves four choices (each among n <= 81 takes the
        // high part of r * n and keeps the low part; 81^4 < 2^26, so the
        // bias stays below 2^-38).
        let mut state = rng.next_u64();
        let mut r = 0u64;
        let mut draws_left = 0u32;
        let mut pick = |n: u32| -> u32 {
            if draws_left == 0 {
                state = state.wrapping_add(0xa076_1d64_78bd_642f);
                let t = state as u128 * (state ^ 0xe703_7ed1_a0b4_28db) as u128;
                r = (t >> 64) as u64 ^ t as u64;
                draws_left = 4;
            }
            draws_left -= 1;
            let m = r as u128 * n as u128;
            r = m as u64;
            (m >> 64) as u32
        };
        // The position is copied into locals (written back at the end) so
        // that the loop keeps its scalars in registers. The number of empty
        // cells of the open boards is kept up to date, so that a free move
        // needs one pass over the boards.
        let mut cells = [[0u16; 16]; 2];
        for (wide, narrow) in cells.iter_mut().zip(&self.cells) {
            wide[..9].copy_from_slice(narrow);
        }
        let mut won = self.won;
        let mut closed = self.closed;
        let mut forced = self.forced;
        let mut ply = self.ply;
        // `cell_list` of each board's empty cells (count, cells and mask;
        // 0 for a closed board), so that a move needs one load before its
        // random choice. 16 entries, so that an index masked with 15 needs
        // no bounds check.
        let mut lists = [0u64; 16];
        // The open boards' empty-cell counts, 8 bits a board (board k in
        // bits 8k..8k+8; 0 for a closed board), so that a free move finds its
        // board with a few multiplies and no branch (where that board lies
        // is hard to predict).
        let mut counts: u128 = 0;
        for (b, list) in lists.iter_mut().enumerate().take(9) {
            if closed & (1 << b) == 0 {
                *list = cell_list(self.empty(b));
                counts |= ((*list & 15) as u128) << (8 * b);
            }
        }
        const LANES: u128 = 0x01_0101_0101_0101_0101;
        const HIGH: u128 = LANES << 7;
        // One move of player `$me` (0 or 1, a constant in each copy, so the
        // loop below runs the two players' moves unrolled).
        macro_rules! step {
            ($game:lifetime, $me:literal) => {{
                let (b, c, list) = if forced < 9 {
                    let b = forced as usize & 15;
                    let list = lists[b];
                    let i = pick((list & 15) as u32);
                    (b, (list >> (4 + 4 * (i & 15))) as u32 & 15, list)
                } else {
                    // A free move: the n-th empty cell of the open boards.
                    // Lane k of `prefix` is the number of empty cells of
                    // boards 0..=k (at most 81, so no lane overflows); the
                    // board is the first lane above n.
                    let prefix = counts.wrapping_mul(LANES);
                    let n = pick((prefix >> 64) as u32 & 0xff);
                    let above = ((prefix | HIGH).wrapping_sub(LANES * (n as u128 + 1))) & HIGH;
                    let b = (above.trailing_zeros() / 8) as usize & 15;
                    let before = ((prefix << 8) >> (8 * b)) as u32 & 0xff;
                    let i = n.wrapping_sub(before);
                    let list = lists[b];
                    (b, (list >> (4 + 4 * (i & 15))) as u32 & 15, list)
                };
                let bit = 1u16 << c;
                let empty = (list >> 48) as u16;
                if empty & bit == 0 {
                    // Only a broken invariant (no empty cell where one must be)
                    // gets here; end the playout rather than loop.
                    break $game Outcome::Draw;
                }
                let m = cells[$me][b] | bit;
                cells[$me][b] = m;
                let rest = empty & !bit;
                lists[b] = cell_list(rest);
                ply += 1;
                counts -= 1 << (8 * b);
                // The end can come only when a board closes.
                if line(m) {
                    won[$me] |= 1 << b;
                    closed |= 1 << b;
                    counts &= !(0xff << (8 * b));
                    lists[b] = 0;
                    if line(won[$me]) {
                        forced = ANY;
                        break $game Outcome::Win(if $me == 0 { Seat::One } else { Seat::Two });
                    }
                    if closed == FULL {
                        forced = ANY;
                        break $game Outcome::Draw;
                    }
                } else if rest == 0 {
                    closed |= 1 << b;
                    if closed == FULL {
                        forced = ANY;
                        break $game Outcome::Draw;
                    }
                }
                forced = if closed & bit != 0 { ANY } else { c as u8 };
            }};
        }
        let outcome = 'game: {
            if ply & 1 == 1 {
                step!('game, 1);
            }
            loop {
                step!('game, 0);
                step!('game, 1);
            }
        };
        for (narrow, wide) in self.cells.iter_mut().zip(&cells) {
            narrow.copy_from_slice(&wide[..9]);
        }
        self.won = won;
        self.closed = closed;
        self.forced = forced;
        self.ply = ply;
        if outcome == Outcome::Draw && closed == FULL {
            return self.full_board_outcome();
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{consistency, perft};

    fn mv(b: u8, c: u8) -> UtttMove {
        UtttMove::new(b, c).unwrap()
    }

    #[test]
    fn the_two_rules_end_a_full_board_differently() {
        // X to move, boards won X 4, O 3, board 5 with cells 0 and 3 open:
        // `5 0` wins it (5 to 3) and closes the last board, no line of boards.
        let near_end: Uttt = "O.XXX.XX.X.OOX.O.XOXOOOXXOXXXXO...O.OO.OOOX...OO.XOOOXOOO..X..O..XXX.XO.OXXXOXXXO/9/XX=XO.OXO"
            .parse()
            .unwrap();
        let mut standard = near_end;
        standard.play(mv(5, 0)).unwrap();
        assert_eq!(standard.outcome(), Some(Outcome::Draw));
        assert!(standard.legal_moves().is_empty());
        let codingame = standard.under_rules(Rules::CodinGame);
        assert_eq!(codingame.outcome(), Some(Outcome::Win(Seat::One)));
        assert_eq!(
            codingame.to_string(),
            standard.to_string(),
            "the rule is not in the text"
        );
        // A playout from before the end ends as the rules say.
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut g = near_end.under_rules(Rules::CodinGame);
        g.play(mv(5, 0)).unwrap();
        assert_eq!(g.random_playout(&mut rng), Outcome::Win(Seat::One));
        // Equal counts draw under both rules; a line wins under both.
        let start = Uttt::start(&GameOptions {
            rules: Rules::CodinGame,
            ..GameOptions::default()
        });
        assert_eq!(start.options().rules, Rules::CodinGame);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let (mut wins_on_boards, mut games) = (0, 0);
        while games < 300 {
            let mut g = start;
            let o = g.random_playout(&mut rng);
            assert_eq!(o, g.outcome().unwrap(), "the playout and the rules agree");
            let std_o = g.under_rules(Rules::Standard).outcome().unwrap();
            if !g.winning_line().is_empty() {
                assert_eq!(o, std_o);
            } else {
                assert_eq!(std_o, Outcome::Draw);
                let (x, o_) = (g.won(Seat::One).count_ones(), g.won(Seat::Two).count_ones());
                let want = match x.cmp(&o_) {
                    std::cmp::Ordering::Greater => Outcome::Win(Seat::One),
                    std::cmp::Ordering::Less => Outcome::Win(Seat::Two),
                    std::cmp::Ordering::Equal => Outcome::Draw,
                };
                assert_eq!(o, want);
                wins_on_boards += usize::from(want != Outcome::Draw);
            }
            games += 1;
        }
        assert!(wins_on_boards > 0, "some games were decided on boards won");
    }

    #[test]
    fn codingame_grid_cells_map_both_ways_on_every_cell() {
        let mut seen = std::collections::HashSet::new();
        for b in 0..9u8 {
            for c in 0..9u8 {
                let (row, col) = Uttt::grid_cell(mv(b, c)).unwrap();
                // The grid's rows run across the boards: row 0 is the top
                // rows of boards 0, 1 and 2.
                assert_eq!(row, 3 * (b / 3) + c / 3);
                assert_eq!(col, 3 * (b % 3) + c % 3);
                assert_eq!(Uttt::from_grid_cell(row, col), Some(mv(b, c)));
                assert!(seen.insert((row, col)));
            }
        }
        assert_eq!(Uttt::grid_cell(mv(0, 0)), Some((0, 0)));
        assert_eq!(Uttt::grid_cell(mv(0, 2)), Some((0, 2)));
        assert_eq!(Uttt::grid_cell(mv(1, 0)), Some((0, 3)));
        assert_eq!(Uttt::grid_cell(mv(4, 4)), Some((4, 4)));
        assert_eq!(Uttt::grid_cell(mv(2, 6)), Some((2, 6)));
        assert_eq!(Uttt::grid_cell(mv(8, 8)), Some((8, 8)));
        assert_eq!(Uttt::grid_cell(mv(6, 2)), Some((6, 2)));
        assert_eq!(Uttt::from_grid_cell(9, 0), None);
        assert_eq!(Uttt::from_grid_cell(0, 9), None);
    }

    #[test]
    fn perft_table() {
        let expected = [1u64, 81, 720, 6336, 55080, 473256, 4020960];
        let start = Uttt::new();
        for (depth, &n) in expected.iter().enumerate() {
            assert_eq!(perft(&start, depth as u32), n, "depth {depth}");
        }
    }

    #[test]
    fn the_winning_line_runs_through_the_winner_s_boards() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let (mut wins, mut draws) = (0, 0);
        for _ in 0..60 {
            let mut p = Uttt::new();
            while p.outcome().is_none() {
                let moves = p.legal_moves();
                p.play_unchecked(moves[rng.random_range(0..moves.len())]);
            }
            let line = p.winning_line();
            match p.outcome() {
                Some(Outcome::Win(s)) => {
                    wins += 1;
                    let mask = line.iter().fold(0u16, |m, &b| m | 1 << b);
                    assert!(crate::game::grid::LINES.contains(&mask), "{line:?}");
                    assert_eq!(p.won[s.index()] & mask, mask);
                }
                _ => {
                    draws += 1;
                    assert!(line.is_empty());
                }
            }
        }
        assert!(wins > 0 && draws > 0, "{wins} wins, {draws} draws");
    }

    #[test]
    fn consistency() {
        consistency::check::<Uttt>(&GameOptions::default(), 300, 3);
    }

    #[test]
    fn a_move_sends_the_opponent_and_closed_boards_free_them() {
        let mut p = Uttt::new();
        p.play(mv(4, 0)).unwrap();
        assert_eq!(p.forced(), Some(0));
        assert!(p.play(mv(1, 0)).unwrap_err().reason.contains("board 0"));
        // X wins board 0 along its top row while O keeps being sent back.
        for m in [mv(0, 4), mv(4, 1), mv(1, 4), mv(4, 2)] {
            p.play(m).unwrap();
        }
        // X has 4-0, 4-1, 4-2: local board 4 won by X.
        assert_eq!(p.won(Seat::One), 1 << 4);
        assert_eq!(p.to_string().split('/').nth(2), Some("....X...."));
        // O is sent to board 2; a move in cell 4 then sends X to the closed
        // board 4, which means a free choice.
        p.play(mv(2, 4)).unwrap();
        assert_eq!(p.forced(), None);
        assert!(p.to_string().contains("/9/"));
        let boards: std::collections::HashSet<u8> =
            p.legal_moves().iter().map(|m| m.board()).collect();
        assert_eq!(boards.len(), 8, "every open board");
    }

    #[test]
    fn three_local_boards_in_a_line_win() {
        // X owns boards 0, 1 and 2 by their top rows.
        let mut cells = ['.'; 81];
        for b in 0..3 {
            for c in 0..3 {
                cells[b * 9 + c] = 'X';
            }
        }
        // O stones elsewhere (9 - 1 = 8 of them, X made the last move).
        for (i, k) in [36, 37, 45, 46, 54, 55, 63, 72].iter().enumerate() {
            cells[*k + (i % 2) * 3] = 'O';
        }
        let text: String = cells.iter().collect::<String>() + "/9/XXX......";
        let p: Uttt = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(p.outcome(), Some(Outcome::Win(Seat::One)));
        assert!(p.legal_moves().is_empty());
    }

    /// The fast playout against the plain one (`random_move` then
    /// `play_unchecked`, move by move): from the same positions, the same
    /// outcome frequencies, and a valid final position.
    #[test]
    fn fast_playouts_match_move_by_move_random_play() {
        let mut rng = crate::seed::rng(21);
        let mut starts = vec![Uttt::new()];
        // Positions with closed boards, free moves and either player to move.
        while starts.len() < 5 {
            let mut p = Uttt::new();
            let plies = 15 + 6 * starts.len();
            for _ in 0..plies {
                if let Some(mv) = p.random_move(&mut rng) {
                    p.play_unchecked(mv);
                }
            }
            if p.outcome().is_none() {
                starts.push(p);
            }
        }
        let n = 100_000;
        for start in starts {
            let (mut fast, mut slow) = ([0u32; 3], [0u32; 3]);
            let slot = |o: Outcome| match o {
                Outcome::Win(Seat::One) => 0,
                Outcome::Win(Seat::Two) => 1,
                Outcome::Draw => 2,
            };
            for _ in 0..n {
                let mut p = start;
                let o = p.random_playout(&mut rng);
                assert_eq!(p.outcome(), Some(o), "{start}");
                let text = p.to_string();
                assert_eq!(text.parse::<Uttt>().ok(), Some(p), "{text}");
                fast[slot(o)] += 1;
                let mut q = start;
                while q.outcome().is_none() {
                    let mv = q.random_move(&mut rng).expect("a move");
                    q.play_unchecked(mv);
                }
                slow[slot(q.outcome().expect("ended"))] += 1;
            }
            for k in 0..3 {
                let (a, b) = (fast[k] as f64 / n as f64, slow[k] as f64 / n as f64);
                // Two samples of 100k: the standard error of the difference
                // is below 0.0023.
                assert!((a - b).abs() < 0.012, "{start}: {fast:?} vs {slow:?}");
            }
        }
    }

    #[test]
    fn random_games_end_with_a_winner_line_or_every_board_closed() {
        let mut rng = crate::seed::rng(9);
        let mut draws = 0;
        for _ in 0..2000 {
            let mut p = Uttt::new();
            match p.random_playout(&mut rng) {
                Outcome::Draw => {
                    draws += 1;
                    assert_eq!(p.closed(), FULL);
                }
                Outcome::Win(s) => assert!(line(p.won(s))),
            }
        }
        assert!(draws > 0 && draws < 2000);
    }

    #[test]
    fn rejects_bad_texts() {
        let empty = ".".repeat(81);
        let one_x = format!("X{}", ".".repeat(80));
        for (text, needle) in [
            (format!("{empty}/9/........."), ""),
            (format!("{empty}/4/........."), "first move is free"),
            (format!("{one_x}/0/........."), ""),
            (format!("{one_x}/1/........."), "disagrees"),
            (format!("{}/9/.........", ".".repeat(80)), "81 characters"),
            (format!("{empty}/9/........"), "9 characters"),
            (format!("{empty}/x/........."), "one digit"),
            (format!("{empty}/9/....X...."), "won field"),
            (format!("{empty}/9/....#...."), "bad character"),
            (
                format!("XX{}/9/.........", ".".repeat(79)),
                "impossible counts",
            ),
            (
                format!("Z{}/9/.........", ".".repeat(80)),
                "bad character 'Z'",
            ),
            (empty.clone(), "part"),
        ] {
            match text.parse::<Uttt>() {
                Ok(_) => assert!(needle.is_empty(), "{text} accepted"),
                Err(e) => assert!(e.to_string().contains(needle), "{text}: {e}"),
            }
        }
        // Forced pointing at a closed board.
        let mut p = Uttt::new();
        for m in [mv(0, 4), mv(4, 0), mv(0, 3), mv(3, 0), mv(0, 5), mv(5, 0)] {
            p.play(m).unwrap();
        }
        let text = p.to_string();
        assert!(text.ends_with("/9/X........"), "{text}");
        let bad = text.replace("/9/", "/0/");
        let e = bad.parse::<Uttt>().unwrap_err().to_string();
        assert!(e.contains("closed"), "{e}");
    }

    #[test]
    fn threat_table_matches_the_line_scan() {
        for own in 0..512u16 {
            assert_eq!(
                threats(own) & !own,
                crate::game::grid::winning_cells(own, FULL & !own),
                "{own:09b}"
            );
        }
    }

    #[test]
    fn move_text() {
        assert_eq!(mv(4, 4).to_string(), "4 4");
        assert_eq!(" 3  7 ".parse::<UtttMove>().unwrap(), mv(3, 7));
        for bad in ["44", "4", "4 9", "a b", "4 4 4", ""] {
            assert!(bad.parse::<UtttMove>().is_err(), "{bad}");
        }
    }

    /// Move generation, random moves, moves and outcomes are those of the
    /// code they were recorded from (the engine's play at fixed iterations
    /// depends on their order and on the random numbers they draw): a hash
    /// of the legal moves, in order, and of the outcome along random games.
    #[test]
    fn move_generation_is_unchanged() {
        use rand::{Rng, RngCore, SeedableRng};
        let mix = |h: u64, x: u64| (h ^ x).wrapping_mul(0x100_0000_01b3);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for game in 0..400 {
            let mut p = Uttt::new();
            loop {
                let moves = p.legal_moves();
                for m in &moves {
                    h = mix(h, (m.board * 9 + m.cell) as u64);
                }
                h = mix(h, p.playable_boards() as u64);
                h = mix(
                    h,
                    p.outcome()
                        .map_or(3, |o| (o.points(Seat::One) * 2.0) as u64),
                );
                if moves.is_empty() {
                    break;
                }
                let mv = if game % 2 == 0 {
                    moves[rng.random_range(0..moves.len())]
                } else {
                    p.random_move(&mut rng).expect("a move")
                };
                p.play_unchecked(mv);
            }
            h = mix(h, rng.next_u64());
        }
        assert_eq!(h, 0x9e02_9494_a697_7e04);
    }
}
