//! Notakto: X-only misère tic-tac-toe on 1 to 26 boards.
//!
//! Both players place X. A board with three X in a row, column or diagonal
//! is dead and takes no more moves; the player who kills the last live
//! board loses.
//!
//! Position text: the boards joined by `/`, each 9 characters of `X` or `.`
//! (row-major), board k having letter `'A' + k`; player 1 is to move when the
//! total number of X is even. Move text: board letter and cell digit (`A6`).

use std::fmt;
use std::str::FromStr;

use rand::Rng;

use super::grid::{has_line, map_bits, nth_set_bit, FULL, SYMMETRIES};
use super::{Game, GameKind, GameOptions, MoveList, Outcome, ParseError, Seat};

/// The most boards a game can have (letters A to Z).
pub(crate) const MAX_BOARDS: usize = 26;

/// A Notakto move: a board and a cell on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NotaktoMove {
    board: u8,
    cell: u8,
}

impl NotaktoMove {
    /// The move on `board` (0-based, at most 25) and `cell` (0..=8).
    pub(crate) fn new(board: u8, cell: u8) -> Option<NotaktoMove> {
        ((board as usize) < MAX_BOARDS && cell < 9).then_some(NotaktoMove { board, cell })
    }

    /// The board index, 0 for board A.
    pub(crate) fn board(self) -> u8 {
        self.board
    }

    /// The cell index 0..=8, row-major.
    pub(crate) fn cell(self) -> u8 {
        self.cell
    }
}

impl fmt::Display for NotaktoMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", (b'A' + self.board) as char, self.cell)
    }
}

impl FromStr for NotaktoMove {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        match t.as_bytes() {
            [l @ b'A'..=b'Z', d @ b'0'..=b'8'] => Ok(NotaktoMove {
                board: l - b'A',
                cell: d - b'0',
            }),
            _ => Err(ParseError::new(format!(
                "bad notakto move '{t}': expected a board letter A-Z and a cell digit 0-8, e.g. A6"
            ))),
        }
    }
}

/// A Notakto position: one 9-bit mask of X per board.
///
/// Boards are joined by `/`; a move is a board letter and a cell. A board
/// with three in a row is dead, and whoever kills the last board loses:
///
/// ```
/// use referee::game::{Game, GameOptions, Notakto, Outcome, Seat};
///
/// let mut pos = Notakto::start(&GameOptions { boards: 1, ..Default::default() });
/// for mv in ["A0", "A1"] {
///     pos.play(mv.parse()?)?;
/// }
/// assert_eq!(pos.to_string(), "XX.......");
/// pos.play("A2".parse()?)?; // player 1 completes the line on the last board
/// assert_eq!(pos.outcome(), Some(Outcome::Win(Seat::Two)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Moves on a dead board are not legal:
///
/// ```
/// use referee::game::{Game, Notakto};
///
/// let pos: Notakto = "XXX....../........./.........".parse()?;
/// assert!(pos.legal_moves().iter().all(|m| !m.to_string().starts_with('A')));
/// assert_eq!(pos.legal_moves().len(), 18);
/// # Ok::<(), referee::game::ParseError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Notakto {
    boards: [u16; MAX_BOARDS],
    /// Number of boards in play (1..=26).
    count: u8,
    /// Bit k set when board k is dead; kept in step with `boards`.
    dead: u32,
    /// X placed so far.
    ply: u16,
}

impl Notakto {
    /// The empty position with `count` boards (clamped to 1..=26).
    pub fn new(count: usize) -> Notakto {
        Notakto {
            boards: [0; MAX_BOARDS],
            count: count.clamp(1, MAX_BOARDS) as u8,
            dead: 0,
            ply: 0,
        }
    }

    /// The X mask of board `k` (bit i = cell i).
    pub(crate) fn board(&self, k: usize) -> u16 {
        self.boards.get(k).copied().unwrap_or(0)
    }

    /// All boards' masks, one per board.
    pub(crate) fn boards(&self) -> &[u16] {
        &self.boards[..self.count as usize]
    }

    /// Whether board `k` is dead (has three in a row).
    pub(crate) fn is_dead(&self, k: usize) -> bool {
        k < 32 && self.dead & (1 << k) != 0
    }

    /// Mask of live boards (bit k = board k).
    pub(crate) fn live_mask(&self) -> u32 {
        self.all_mask() & !self.dead
    }

    fn all_mask(&self) -> u32 {
        (1u32 << self.count) - 1
    }

    /// Builds a position from board masks, checking it as the parser does.
    pub(crate) fn from_boards(masks: &[u16]) -> Result<Notakto, ParseError> {
        if masks.is_empty() || masks.len() > MAX_BOARDS {
            return Err(ParseError::new(format!(
                "notakto has 1 to 26 boards, got {}",
                masks.len()
            )));
        }
        let mut pos = Notakto::new(masks.len());
        for (k, &m) in masks.iter().enumerate() {
            let letter = (b'A' + k as u8) as char;
            if m & !FULL != 0 {
                return Err(ParseError::new(format!(
                    "board {letter}: cells out of range"
                )));
            }
            if has_line(m) {
                // Play stops at the first line, so some single X must be the
                // one that made every line on this board.
                let reachable = (0..9).any(|c| m & (1 << c) != 0 && !has_line(m & !(1 << c)));
                if !reachable {
                    return Err(ParseError::new(format!(
                        "board {letter} cannot arise: no single X completes all of its lines, \
                         but a dead board takes no more moves"
                    )));
                }
                pos.dead |= 1 << k;
            }
            pos.boards[k] = m;
            pos.ply += m.count_ones() as u16;
        }
        Ok(pos)
    }
}

impl Default for Notakto {
    fn default() -> Self {
        Notakto::new(3)
    }
}

impl fmt::Display for Notakto {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; MAX_BOARDS * 10];
        let mut n = 0;
        for (k, &m) in self.boards().iter().enumerate() {
            if k > 0 {
                buf[n] = b'/';
                n += 1;
            }
            for c in 0..9 {
                buf[n] = if m & (1 << c) != 0 { b'X' } else { b'.' };
                n += 1;
            }
        }
        // The buffer holds only ASCII.
        f.write_str(std::str::from_utf8(&buf[..n]).map_err(|_| fmt::Error)?)
    }
}

impl FromStr for Notakto {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        let t = s.trim();
        let parts: Vec<&str> = t.split('/').collect();
        if parts.len() > MAX_BOARDS {
            return Err(ParseError::new(format!(
                "notakto has at most 26 boards, got {}",
                parts.len()
            )));
        }
        let mut masks = Vec::with_capacity(parts.len());
        for (k, part) in parts.iter().enumerate() {
            let letter = (b'A' + k as u8) as char;
            if part.len() != 9 {
                return Err(ParseError::new(format!(
                    "board {letter} must be 9 characters of X or '.', got {} characters",
                    part.chars().count()
                )));
            }
            let mut m = 0u16;
            for (i, c) in part.bytes().enumerate() {
                match c {
                    b'X' => m |= 1 << i,
                    b'.' => {}
                    _ => {
                        return Err(ParseError::new(format!(
                            "bad character '{}' at cell {i} of board {letter} \
                             (expected X or '.')",
                            c as char
                        )))
                    }
                }
            }
            masks.push(m);
        }
        Notakto::from_boards(&masks)
    }
}

/// How a Notakto position was reduced to its canonical form: each board
/// turned by its own symmetry of the square, then the boards reordered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoardsSymmetry {
    /// The symmetry (`grid::SYMMETRIES` index) of each original board.
    turns: Vec<u8>,
    /// Canonical board `j` is original board `order[j]`.
    order: Vec<u8>,
}

impl Game for Notakto {
    type Move = NotaktoMove;
    const KIND: GameKind = GameKind::Notakto;
    const RULES: &'static str = "Both players mark X on several 3x3 boards. A board with three X \
        in a line is dead and takes no more moves. Whoever kills the last live board loses.";
    const MOVE_HELP: &'static str =
        "type a board letter and a cell number 0-8, e.g. A6, and press Enter";
    const COMPLIANCE: &'static [(&'static str, &'static [&'static str])] = &[
        ("opening", &[]),
        ("opening, second player", &["B4"]),
        ("midgame", &["A4", "B0", "C8", "A0", "B8"]),
        ("a dead board", &["A0", "A1", "A2"]),
        ("a dead board", &["A0", "A1", "A2", "B4"]),
        (
            "two dead boards, one live",
            &["A0", "A1", "A2", "B0", "B4", "B8"],
        ),
    ];
    type Symmetry = BoardsSymmetry;

    fn start(opts: &GameOptions) -> Self {
        Notakto::new(opts.boards as usize)
    }

    fn options(&self) -> GameOptions {
        GameOptions {
            boards: self.count,
            ..Default::default()
        }
    }

    #[inline]
    fn to_move(&self) -> Seat {
        if self.ply.is_multiple_of(2) {
            Seat::One
        } else {
            Seat::Two
        }
    }

    fn legal_moves(&self) -> MoveList<NotaktoMove> {
        let mut list = MoveList::new();
        let mut live = self.live_mask();
        while live != 0 {
            let b = live.trailing_zeros() as u8;
            live &= live - 1;
            let mut empty = FULL & !self.boards[b as usize];
            while empty != 0 {
                list.push(NotaktoMove {
                    board: b,
                    cell: empty.trailing_zeros() as u8,
                });
                empty &= empty - 1;
            }
        }
        list
    }

    #[inline]
    fn play_unchecked(&mut self, mv: NotaktoMove) {
        let b = (mv.board as usize) % MAX_BOARDS;
        let m = self.boards[b] | 1 << (mv.cell % 9);
        self.boards[b] = m;
        if has_line(m) {
            self.dead |= 1 << b;
        }
        self.ply += 1;
    }

    #[inline]
    fn outcome(&self) -> Option<Outcome> {
        // The player who killed the last board has just moved and lost.
        (self.live_mask() == 0).then(|| Outcome::Win(self.to_move()))
    }

    fn ply(&self) -> usize {
        self.ply as usize
    }

    /// The Notakto course assignment's board drawing, byte for byte:
    /// the live boards' letters joined by 6 spaces, then 3 rows in which a
    /// board's cells are joined by 1 space and boards by 2. Dead boards are
    /// not drawn.
    fn render(&self) -> String {
        let live: Vec<usize> = (0..self.count as usize)
            .filter(|&k| !self.is_dead(k))
            .collect();
        if live.is_empty() {
            return String::new();
        }
        let letters: Vec<String> = live
            .iter()
            .map(|&k| ((b'A' + k as u8) as char).to_string())
            .collect();
        let mut out = letters.join("      ");
        out.push('\n');
        for row in 0..3 {
            let boards: Vec<String> = live
                .iter()
                .map(|&k| {
                    (row * 3..row * 3 + 3)
                        .map(|c| {
                            if self.boards[k] & (1 << c) != 0 {
                                "X".to_string()
                            } else {
                                c.to_string()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect();
            out.push_str(&boards.join("  "));
            out.push('\n');
        }
        out
    }

    fn illegality(&self, mv: NotaktoMove) -> Option<String> {
        let letter = (b'A' + mv.board) as char;
        if self.outcome().is_some() {
            Some("the game is over".into())
        } else if mv.board >= self.count || mv.cell > 8 {
            Some(format!(
                "{mv} is out of range: boards A-{} and cells 0-8",
                (b'A' + self.count - 1) as char
            ))
        } else if self.is_dead(mv.board as usize) {
            Some(format!("board {letter} is dead"))
        } else if self.boards[mv.board as usize] & (1 << mv.cell) != 0 {
            Some(format!("cell {} of board {letter} is taken", mv.cell))
        } else {
            None
        }
    }

    fn symmetry_count() -> usize {
        8
    }

    fn map_move(mv: NotaktoMove, k: usize) -> NotaktoMove {
        NotaktoMove {
            board: mv.board,
            cell: SYMMETRIES[k % 8][(mv.cell % 9) as usize],
        }
    }

    /// Boards are independent and interchangeable: each is turned to its
    /// smallest image (as text, `.` < `X`), every dead board becomes the
    /// same three in a row (only the parity of the number of X, whose turn
    /// it is, matters: one of them gets a fourth X when needed), and the
    /// boards are sorted.
    fn canonical(&self) -> (Self, BoardsSymmetry) {
        // Smaller key = smaller text: cell 0 is the most significant.
        let key = |m: u16| (0..9).fold(0u16, |acc, i| acc << 1 | (m >> i) & 1);
        let count = self.count as usize;
        let mut boards: Vec<(u16, usize, u8)> = (0..count)
            .map(|b| {
                let m = self.boards[b];
                let (k, img) = SYMMETRIES
                    .iter()
                    .enumerate()
                    .map(|(k, s)| (k as u8, map_bits(m, s)))
                    .min_by_key(|&(k, img)| (key(img), k))
                    .unwrap_or((0, m));
                (img, b, k)
            })
            .collect();
        let xs = |m: u16| m.count_ones();
        let before: u32 = boards.iter().map(|b| xs(b.0)).sum();
        const DEAD: u16 = 0b000_000_111;
        for b in boards.iter_mut() {
            if has_line(b.0) {
                b.0 = DEAD;
            }
        }
        let after: u32 = boards.iter().map(|b| xs(b.0)).sum();
        if (before + after) % 2 == 1 {
            if let Some(b) = boards.iter_mut().find(|b| b.0 == DEAD) {
                b.0 = DEAD | 1 << 3;
            }
        }
        boards.sort_by_key(|&(m, orig, k)| (key(m), orig, k));
        let mut turns = vec![0u8; count];
        for b in &boards {
            turns[b.1] = b.2;
        }
        let order = boards.iter().map(|b| b.1 as u8).collect();
        let masks: Vec<u16> = boards.iter().map(|b| b.0).collect();
        let canon = Notakto::from_boards(&masks).unwrap_or(*self);
        (canon, BoardsSymmetry { turns, order })
    }

    fn uncanonical_move(mv: NotaktoMove, sym: &BoardsSymmetry) -> NotaktoMove {
        let board = sym
            .order
            .get(mv.board as usize)
            .copied()
            .unwrap_or(mv.board);
        let k = sym.turns.get(board as usize).copied().unwrap_or(0);
        let s = &SYMMETRIES[(k % 8) as usize];
        let cell = s
            .iter()
            .position(|&c| c == mv.cell)
            .unwrap_or(mv.cell as usize) as u8;
        NotaktoMove { board, cell }
    }

    /// Every board is dead at the end: there is nothing left to draw.
    fn final_render(&self) -> Option<String> {
        None
    }

    /// The winning seat: player 1 with an odd number of boards, player 2
    /// with an even number.
    fn graded_seats(opts: &GameOptions) -> Vec<Seat> {
        if opts.boards % 2 == 1 {
            vec![Seat::One]
        } else {
            vec![Seat::Two]
        }
    }

    fn requirement_text(opts: &GameOptions, seats: &[Seat]) -> String {
        format!(
            "win every game as {} with {} boards",
            super::seats_text(seats),
            opts.boards
        )
    }

    fn describe_options(opts: &GameOptions) -> String {
        format!("{} boards", opts.boards)
    }

    fn random_move<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<NotaktoMove> {
        let mut total = 0;
        let mut live = self.live_mask();
        while live != 0 {
            let b = live.trailing_zeros() as usize;
            live &= live - 1;
            total += 9 - self.boards[b].count_ones();
        }
        if total == 0 {
            return None;
        }
        let mut n = rng.random_range(0..total);
        let mut live = self.live_mask();
        while live != 0 {
            let b = live.trailing_zeros() as usize;
            live &= live - 1;
            let empty = (FULL & !self.boards[b]) as u32;
            let k = empty.count_ones();
            if n < k {
                return Some(NotaktoMove {
                    board: b as u8,
                    cell: nth_set_bit(empty, n) as u8,
                });
            }
            n -= k;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms_ignore_board_order_and_each_boards_turn() {
        let a: Notakto = "X......../........./.........".parse().unwrap();
        let b: Notakto = "........./........X/.........".parse().unwrap();
        assert_eq!(a.canonical().0, b.canonical().0);
        // Dead boards are all alike; only the parity of X counts.
        let c: Notakto = "XXX....../X........".parse().unwrap();
        let d: Notakto = "..X.X.X../........X".parse().unwrap();
        assert_eq!(c.canonical().0, d.canonical().0);
        let (canon, sym) = d.canonical();
        for mv in canon.legal_moves() {
            assert!(d.is_legal(Notakto::uncanonical_move(mv, &sym)));
        }
    }
    use crate::game::{consistency, perft};

    #[test]
    fn perft_one_board() {
        let expected = [1u64, 9, 72, 504, 2736, 9360, 13440, 4320, 0];
        let start = Notakto::new(1);
        for (depth, &n) in expected.iter().enumerate() {
            assert_eq!(perft(&start, depth as u32), n, "depth {depth}");
        }
    }

    #[test]
    fn perft_three_boards() {
        let expected = [1u64, 27, 702, 17550, 420336, 9592560];
        let start = Notakto::new(3);
        for (depth, &n) in expected.iter().enumerate() {
            assert_eq!(perft(&start, depth as u32), n, "depth {depth}");
        }
    }

    #[test]
    fn consistency() {
        for boards in [1u8, 2, 3, 5, 26] {
            consistency::check::<Notakto>(
                &GameOptions {
                    boards,
                    ..Default::default()
                },
                100,
                boards as u64,
            );
        }
    }

    #[test]
    fn killing_the_last_board_loses() {
        let mut p: Notakto = "XX......./XXX......".parse().unwrap();
        assert_eq!(p.to_move(), Seat::Two);
        assert_eq!(p.outcome(), None);
        p.play("A2".parse().unwrap()).unwrap();
        // Player 2 killed the last board, so player 1 wins.
        assert_eq!(p.outcome(), Some(Outcome::Win(Seat::One)));
        assert!(p.legal_moves().is_empty());
    }

    #[test]
    fn rejects_bad_texts() {
        for (text, needle) in [
            ("XX.......", ""),
            ("XX......", "9 characters"),
            ("XX......./.........X", "board B"),
            ("XXO......", "bad character 'O'"),
            ("XXXXXX...", "cannot arise"),
            ("XXXX.X...", ""),
            (&vec!["........."; 27].join("/"), "at most 26"),
        ] {
            match text.parse::<Notakto>() {
                Ok(_) => assert!(needle.is_empty(), "{text} accepted"),
                Err(e) => assert!(e.to_string().contains(needle), "{text}: {e}"),
            }
        }
    }

    #[test]
    fn illegal_moves_are_named() {
        let p: Notakto = "XXX....../X........".parse().unwrap();
        let e = |m: &str| p.illegality(m.parse().unwrap()).unwrap_or_default();
        assert!(e("A5").contains("dead"));
        assert!(e("B0").contains("taken"));
        assert!(e("C0").contains("out of range"));
        assert!(p.illegality("B1".parse().unwrap()).is_none());
        for bad in ["a6", "A9", "fds", "", "A66", "AA"] {
            assert!(bad.parse::<NotaktoMove>().is_err(), "{bad}");
        }
    }

    #[test]
    fn renders_the_assignment_format() {
        let mut p = Notakto::new(3);
        assert_eq!(
            p.render(),
            "A      B      C\n0 1 2  0 1 2  0 1 2\n3 4 5  3 4 5  3 4 5\n6 7 8  6 7 8  6 7 8\n"
        );
        for m in ["A6", "A7", "A8"] {
            p.play(m.parse().unwrap()).unwrap();
        }
        assert_eq!(
            p.render(),
            "B      C\n0 1 2  0 1 2\n3 4 5  3 4 5\n6 7 8  6 7 8\n"
        );
    }
}
