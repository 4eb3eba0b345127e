//! Games: one [`Game`] trait and the three games of the tic-tac-toe family.
//!
//! A position's `Display`/`FromStr` text is the public wire format of the bot
//! protocol (docs/protocol.md), so the text form and the wire form are one thing.

use std::fmt::{self, Debug, Display};
use std::hash::Hash;
use std::str::FromStr;

use arrayvec::ArrayVec;
use rand::Rng;

pub mod grid;
pub mod judge;
pub(crate) mod notakto;
pub mod tictactoe;
pub mod uttt;

pub use notakto::{Notakto, NotaktoMove};
pub use tictactoe::TicTacToe;
pub use uttt::{Uttt, UtttMove};

/// The most legal moves any position of any game can have (Notakto with 26
/// empty boards has 234).
pub(crate) const MAX_MOVES: usize = 256;

/// A list of moves kept on the stack: generating moves never allocates.
pub(crate) type MoveList<M> = ArrayVec<M, MAX_MOVES>;

/// One of the two players. Player 1 moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seat {
    /// Player 1, who moves first (X in tic-tac-toe and UTTT).
    One,
    /// Player 2 (O in tic-tac-toe and UTTT).
    Two,
}

impl Seat {
    /// Both seats, player 1 first.
    pub const BOTH: [Seat; 2] = [Seat::One, Seat::Two];

    /// The other player.
    pub fn other(self) -> Seat {
        match self {
            Seat::One => Seat::Two,
            Seat::Two => Seat::One,
        }
    }

    /// 0 for player 1, 1 for player 2: an index into per-seat arrays.
    pub(crate) fn index(self) -> usize {
        match self {
            Seat::One => 0,
            Seat::Two => 1,
        }
    }

    /// 1 or 2, the player number people and the protocol use.
    pub fn number(self) -> u8 {
        self.index() as u8 + 1
    }

    /// The seat with the given player number (1 or 2).
    pub(crate) fn from_number(n: u8) -> Option<Seat> {
        match n {
            1 => Some(Seat::One),
            2 => Some(Seat::Two),
            _ => None,
        }
    }
}

/// A seat is written as its player number (`1` or `2`) in records.
impl serde::Serialize for Seat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.number())
    }
}

impl<'de> serde::Deserialize<'de> for Seat {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Seat, D::Error> {
        let n = u8::deserialize(d)?;
        Seat::from_number(n)
            .ok_or_else(|| serde::de::Error::custom(format!("seat {n} is not 1 or 2")))
    }
}

impl Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// How a finished game ended on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// This seat won.
    Win(Seat),
    /// Nobody won.
    Draw,
}

impl Outcome {
    /// The winner, if any.
    pub fn winner(self) -> Option<Seat> {
        match self {
            Outcome::Win(s) => Some(s),
            Outcome::Draw => None,
        }
    }

    /// Points for `seat`: win 1, draw 0.5, loss 0.
    pub fn points(self, seat: Seat) -> f64 {
        match self {
            Outcome::Win(s) if s == seat => 1.0,
            Outcome::Win(_) => 0.0,
            Outcome::Draw => 0.5,
        }
    }
}

/// The games referee knows, for choosing one at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GameKind {
    /// Classic 3x3 tic-tac-toe.
    #[serde(rename = "tictactoe")]
    TicTacToe,
    /// X-only misère tic-tac-toe on several boards.
    Notakto,
    /// Ultimate tic-tac-toe.
    Uttt,
}

impl GameKind {
    /// Every game, in a fixed order.
    pub const ALL: [GameKind; 3] = [GameKind::TicTacToe, GameKind::Notakto, GameKind::Uttt];

    /// The name used on the command line and in the protocol.
    pub fn name(self) -> &'static str {
        match self {
            GameKind::TicTacToe => "tictactoe",
            GameKind::Notakto => "notakto",
            GameKind::Uttt => "uttt",
        }
    }

    /// Whether CodinGame has the game (tic-tac-toe and UTTT, on its grid
    /// of rows and columns; not Notakto).
    pub fn has_codingame_grid(self) -> bool {
        self != GameKind::Notakto
    }

    /// Whether the game can be played under CodinGame's rule
    /// ([`Rules::CodinGame`]): UTTT only.
    pub fn has_rules(self) -> bool {
        self == GameKind::Uttt
    }

    /// Whether the game is played on a chosen number of boards (Notakto's
    /// `--boards`); the others ignore [`GameOptions::boards`].
    pub(crate) fn has_boards(self) -> bool {
        self == GameKind::Notakto
    }

    /// The board count of `opts` when the game has one.
    pub(crate) fn boards(self, opts: &GameOptions) -> Option<u8> {
        self.has_boards().then_some(opts.boards)
    }
}

impl Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GameKind {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "tictactoe" | "tic-tac-toe" | "ttt" => Ok(GameKind::TicTacToe),
            "notakto" => Ok(GameKind::Notakto),
            "uttt" | "ultimate" => Ok(GameKind::Uttt),
            other => Err(ParseError::new(format!(
                "unknown game '{other}' (expected tictactoe, notakto or uttt)"
            ))),
        }
    }
}

/// How a UTTT game that fills every local board without three won boards
/// in a row ends.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Rules {
    /// A draw.
    #[default]
    Standard,
    /// CodinGame's rule: the player with more local boards won wins; equal
    /// counts draw.
    CodinGame,
}

impl Rules {
    /// Whether these are the standard rules (left out of files).
    pub fn is_standard(&self) -> bool {
        *self == Rules::Standard
    }

    /// `standard` or `codingame`.
    pub fn name(self) -> &'static str {
        match self {
            Rules::Standard => "standard",
            Rules::CodinGame => "codingame",
        }
    }
}

impl Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rules {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        match s.trim() {
            "standard" => Ok(Rules::Standard),
            "codingame" => Ok(Rules::CodinGame),
            other => Err(ParseError::new(format!(
                "unknown rules '{other}' (expected standard or codingame)"
            ))),
        }
    }
}

/// Options that choose a game's starting position and its rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct GameOptions {
    /// Number of Notakto boards (1..=26); ignored by the other games.
    pub boards: u8,
    /// How a UTTT game without three boards in a row ends; ignored by the
    /// other games. Absent in files written before it existed (standard).
    #[serde(default, skip_serializing_if = "Rules::is_standard")]
    pub rules: Rules,
}

impl Default for GameOptions {
    fn default() -> Self {
        GameOptions {
            boards: 3,
            rules: Rules::Standard,
        }
    }
}

impl GameOptions {
    /// Checks the options, with a message naming the bad value.
    pub(crate) fn validate(&self) -> Result<(), ParseError> {
        if !(1..=26).contains(&self.boards) {
            return Err(ParseError::new(format!(
                "boards must be between 1 and 26, got {}",
                self.boards
            )));
        }
        Ok(())
    }
}

/// A position or move text that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(String);

impl ParseError {
    /// A parse error with this message.
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        ParseError(msg.into())
    }
}

impl Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

/// A move that is not legal in the position it was played in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IllegalMove {
    /// The move's text.
    pub mv: String,
    /// Why it is not legal.
    pub reason: String,
}

impl Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "illegal move {}: {}", self.mv, self.reason)
    }
}

impl std::error::Error for IllegalMove {}

/// A game position: rules, move generation and the text forms.
///
/// Required methods are the rules; provided methods (`is_legal`, `play`, ...)
/// are built on them and are not meant to be overridden except for speed.
pub trait Game:
    Clone + Eq + Hash + Debug + Display + FromStr<Err = ParseError> + Send + Sync + 'static
{
    /// A move: a small `Copy` value whose text is the protocol's move text.
    type Move: Copy
        + Eq
        + Hash
        + Debug
        + Display
        + FromStr<Err = ParseError>
        + Send
        + Sync
        + 'static;

    /// Which game this is.
    const KIND: GameKind;

    /// The rules in one paragraph, for people (the text greeting of
    /// `referee serve`).
    const RULES: &'static str;

    /// How to type a move, for people.
    const MOVE_HELP: &'static str;

    /// The positions every bot must answer in `referee check`: what each
    /// tests, and the moves from the start (default options) that lead to
    /// it. Both seats are covered, and a label "one legal move" means that.
    const COMPLIANCE: &'static [(&'static str, &'static [&'static str])];

    /// A symmetry of a position, as [`Game::canonical`] found it.
    type Symmetry: Clone + Debug + PartialEq + Send + Sync;

    /// The starting position for these options.
    fn start(opts: &GameOptions) -> Self;

    /// The options this position was started with (e.g. its number of boards).
    fn options(&self) -> GameOptions;

    /// The player to move.
    fn to_move(&self) -> Seat;

    /// Every legal move; empty when the game is over.
    fn legal_moves(&self) -> MoveList<Self::Move>;

    /// Plays a move known to be legal. Behaviour for an illegal move is unspecified
    /// (but memory safe).
    fn play_unchecked(&mut self, mv: Self::Move);

    /// The result, once the game is over.
    fn outcome(&self) -> Option<Outcome>;

    /// Number of moves played since the empty position.
    fn ply(&self) -> usize;

    /// The position played under `rules` (only UTTT has another rule; the
    /// other games keep theirs). A position read from text has the standard
    /// rules.
    fn under_rules(self, _rules: Rules) -> Self {
        self
    }

    /// How a finished game's result was decided when its rules, not a line
    /// on the board, decided it (UTTT under CodinGame's rule: the boards
    /// won), in words for replays; `None` otherwise.
    fn decided_by_rule(&self) -> Option<String> {
        None
    }

    /// The move as a `(row, col)` of CodinGame's grid for this game (3x3
    /// for tic-tac-toe, 9x9 for UTTT), or `None` for a game CodinGame does
    /// not have.
    fn grid_cell(_mv: Self::Move) -> Option<(u8, u8)> {
        None
    }

    /// The move at `(row, col)` of CodinGame's grid, or `None` off the grid
    /// or for a game CodinGame does not have.
    fn from_grid_cell(_row: u8, _col: u8) -> Option<Self::Move> {
        None
    }

    /// A human-readable multi-line drawing of the position.
    fn render(&self) -> String;

    /// The line that won a finished game, for the report's replays: the
    /// cells (tictactoe) or local boards (uttt) it runs through, numbered
    /// 0-8 row by row. Empty when no line won (a draw, a game going on, or
    /// a game like Notakto where a line loses).
    fn winning_line(&self) -> Vec<u8> {
        Vec::new()
    }

    /// Why `mv` is illegal here, or `None` when it is legal.
    fn illegality(&self, mv: Self::Move) -> Option<String> {
        if self.outcome().is_some() {
            return Some("the game is over".to_string());
        }
        if self.legal_moves().contains(&mv) {
            None
        } else {
            Some("not a legal move in this position".to_string())
        }
    }

    /// Whether `mv` is legal here.
    fn is_legal(&self, mv: Self::Move) -> bool {
        self.illegality(mv).is_none()
    }

    /// Plays `mv` after checking it.
    fn play(&mut self, mv: Self::Move) -> Result<(), IllegalMove> {
        match self.illegality(mv) {
            None => {
                self.play_unchecked(mv);
                Ok(())
            }
            Some(reason) => Err(IllegalMove {
                mv: mv.to_string(),
                reason,
            }),
        }
    }

    /// Whether the game is over.
    fn is_over(&self) -> bool {
        self.outcome().is_some()
    }

    /// A uniformly random legal move, or `None` when the game is over.
    fn random_move<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<Self::Move> {
        let moves = self.legal_moves();
        if moves.is_empty() {
            None
        } else {
            Some(moves[rng.random_range(0..moves.len())])
        }
    }

    /// Plays uniformly random moves to the end and returns the result.
    fn random_playout<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Outcome {
        loop {
            if let Some(o) = self.outcome() {
                return o;
            }
            match self.random_move(rng) {
                Some(mv) => self.play_unchecked(mv),
                // A position with no moves must report an outcome; treat a
                // broken invariant as a draw rather than loop forever.
                None => return Outcome::Draw,
            }
        }
    }

    /// Parses a move in this game's notation.
    fn parse_move(text: &str) -> Result<Self::Move, ParseError> {
        text.trim().parse()
    }

    /// Joins move texts into one list that [`Game::split_moves`] (and so
    /// `referee judge`) reads back: separated by spaces.
    fn join_moves(moves: &[String]) -> String {
        moves.join(" ")
    }

    /// Splits a list of moves in this game's notation into move texts:
    /// moves separated by spaces or commas.
    fn split_moves(text: &str) -> Result<Vec<String>, ParseError> {
        if text.trim_start().starts_with('[') {
            return Err(ParseError::new(format!(
                "the JSON [row, col] form is for tictactoe; use move texts for {}",
                Self::KIND
            )));
        }
        Ok(text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// The position reduced by the game's symmetries, and the symmetry that
    /// reduces it: equivalent positions have the same canonical position,
    /// and a move there maps back with [`Game::uncanonical_move`]. A game
    /// without a reduction returns the position itself.
    fn canonical(&self) -> (Self, Self::Symmetry);

    /// The move in the original position of a move `mv` of its canonical
    /// position (reduced by `sym`).
    fn uncanonical_move(mv: Self::Move, sym: &Self::Symmetry) -> Self::Move;

    /// What a console game shows after its last move, before the result
    /// line: the final board (Notakto: nothing, every board is dead).
    fn final_render(&self) -> Option<String> {
        Some(self.render())
    }

    /// The seats a student's AI is graded in by default.
    fn graded_seats(_opts: &GameOptions) -> Vec<Seat> {
        vec![Seat::One, Seat::Two]
    }

    /// What grading requires of the AI in `seats`, in words.
    fn requirement_text(opts: &GameOptions, seats: &[Seat]) -> String;

    /// The options that matter for this game, in words (`3 boards`).
    fn describe_options(_opts: &GameOptions) -> String {
        "standard board".to_string()
    }

    /// How many board symmetries the game has: 8 (those of the square) for
    /// all three games, applied to every board at once. Symmetry 0 is the
    /// identity.
    fn symmetry_count() -> usize {
        1
    }

    /// The image of `mv` under symmetry `k` (0 <= k < `symmetry_count()`).
    /// Playing a game's moves mapped by one `k` gives a game that is the same
    /// up to that symmetry.
    fn map_move(mv: Self::Move, _k: usize) -> Self::Move {
        mv
    }
}

/// Seats in words: `player 1`, `player 1 and player 2`.
pub(crate) fn seats_text(seats: &[Seat]) -> String {
    seats
        .iter()
        .map(|s| format!("player {}", s.number()))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Counts leaf positions `depth` plies ahead (positions where the game ended
/// earlier are not counted), the standard move-generator check.
pub fn perft<G: Game>(pos: &G, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = pos.legal_moves();
    if depth == 1 {
        return moves.len() as u64;
    }
    let mut total = 0;
    for mv in moves {
        let mut next = pos.clone();
        next.play_unchecked(mv);
        total += perft(&next, depth - 1);
    }
    total
}

/// Moves already played on the position `start` of game `kind` (its ply):
/// 0 for the usual start, more for an opening suite's position; 0 for a
/// text that is not a position of the game.
pub(crate) fn start_ply(kind: GameKind, start: &str) -> usize {
    crate::with_game!(kind, G => start.parse::<G>().map_or(0, |p| p.ply()))
}

/// Runs `f` with the concrete game type for `kind`: the one place where the
/// game is chosen at run time; everything behind it is generic.
#[macro_export]
macro_rules! with_game {
    ($kind:expr, $g:ident => $body:expr) => {
        match $kind {
            $crate::game::GameKind::TicTacToe => {
                type $g = $crate::game::TicTacToe;
                $body
            }
            $crate::game::GameKind::Notakto => {
                type $g = $crate::game::Notakto;
                $body
            }
            $crate::game::GameKind::Uttt => {
                type $g = $crate::game::Uttt;
                $body
            }
        }
    };
}

#[cfg(test)]
pub(crate) mod consistency {
    //! One generic consistency checker that every game's tests call.
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::collections::HashSet;

    /// The canonical form of `pos`: its symmetric `images` (one per
    /// symmetry) have the same one, it has as many moves as `pos`, and its
    /// moves (a few of them, for speed) map back to legal moves of `pos`
    /// that lead to equivalent positions.
    fn check_canonical<G: Game, R: Rng>(pos: &G, images: &[G], rng: &mut R) {
        let (canon, sym) = pos.canonical();
        let text = pos.to_string();
        for (k, image) in images.iter().enumerate() {
            assert_eq!(image.canonical().0, canon, "symmetry {k} of {text}");
        }
        let moves = canon.legal_moves();
        assert_eq!(moves.len(), pos.legal_moves().len(), "{text}");
        for _ in 0..moves.len().min(3) {
            let mv = moves[rng.random_range(0..moves.len())];
            let back = G::uncanonical_move(mv, &sym);
            assert!(
                pos.is_legal(back),
                "{mv} of {canon} maps to {back}, not legal in {text}"
            );
            let (mut a, mut b) = (canon.clone(), pos.clone());
            a.play_unchecked(mv);
            b.play_unchecked(back);
            assert_eq!(a.canonical().0, b.canonical().0, "{mv} / {back} in {text}");
        }
    }

    /// Plays `games` random games and checks, at every position: legal moves
    /// agree with `is_legal`, have no duplicates, a finished game has none,
    /// position and move texts round-trip, and canonical forms are right.
    pub(crate) fn check<G: Game>(opts: &GameOptions, games: usize, seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..games {
            let mut pos = G::start(opts);
            let mut images = vec![pos.clone(); G::symmetry_count()];
            let mut played: Vec<String> = Vec::new();
            loop {
                // A move list's text (as `judge` takes it and feedback
                // prints it) splits back into the same moves.
                let joined = G::join_moves(&played);
                assert_eq!(
                    G::split_moves(&joined).unwrap_or_else(|e| panic!("{joined}: {e}")),
                    played,
                    "move list text does not round-trip: {joined}"
                );
                let text = pos.to_string();
                let back: G = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
                assert_eq!(back, pos, "position text does not round-trip: {text}");
                assert_eq!(back.to_string(), text);
                let moves = pos.legal_moves();
                let set: HashSet<_> = moves.iter().copied().collect();
                assert_eq!(set.len(), moves.len(), "duplicate moves in {text}");
                for &mv in &moves {
                    assert!(pos.is_legal(mv), "{mv} listed but not legal in {text}");
                    let mt = mv.to_string();
                    assert_eq!(G::parse_move(&mt).unwrap(), mv, "move text {mt}");
                }
                if pos.outcome().is_some() {
                    assert!(moves.is_empty(), "finished game has moves: {text}");
                    break;
                }
                assert!(!moves.is_empty(), "unfinished game without moves: {text}");
                check_canonical(&pos, &images, &mut rng);
                let mv = pos.random_move(&mut rng).unwrap();
                for (k, image) in images.iter_mut().enumerate() {
                    image
                        .play(G::map_move(mv, k))
                        .unwrap_or_else(|e| panic!("{text}: {e}"));
                }
                let ply = pos.ply();
                let mover = pos.to_move();
                played.push(mv.to_string());
                pos.play(mv).unwrap();
                assert_eq!(pos.ply(), ply + 1);
                if pos.outcome().is_none() {
                    assert_eq!(pos.to_move(), mover.other(), "turn did not pass in {pos}");
                }
            }
        }
    }
}

#[cfg(test)]
mod props {
    //! Property tests of the position and move texts, which come from
    //! untrusted bots, clients and files: no text makes a parser panic, and
    //! every reachable position and legal move reads back as itself.
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The position after `plies` random moves from the start of `opts`.
    fn reached<G: Game>(opts: &GameOptions, seed: u64, plies: usize) -> G {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut pos = G::start(opts);
        for _ in 0..plies {
            match pos.random_move(&mut rng) {
                Some(mv) => pos.play_unchecked(mv),
                None => break,
            }
        }
        pos
    }

    fn round_trips<G: Game>(pos: &G) {
        let text = pos.to_string();
        let back: G = text.parse().expect("a position's own text reads back");
        assert_eq!(back.to_string(), text);
        assert_eq!(back.legal_moves().len(), pos.legal_moves().len(), "{text}");
        for mv in pos.legal_moves() {
            let mtext = mv.to_string();
            assert_eq!(
                G::parse_move(&mtext).ok(),
                Some(mv),
                "move '{mtext}' in {text}"
            );
        }
    }

    /// Text near the games' alphabets, so that parsers get past their first
    /// checks, and any text at all.
    fn texts() -> impl Strategy<Value = String> {
        prop_oneof![
            "[XO.=/0-9A-Z ]{0,100}",
            "[X.]{9}(/[X.]{0,10}){0,4}",
            "[XO.]{81}/[0-9]{1,2}/[.XO=]{0,10}",
            any::<String>(),
        ]
    }

    proptest! {
        #[test]
        fn reachable_positions_and_moves_read_back(
            seed in any::<u64>(), plies in 0usize..90, boards in 1u8..=26
        ) {
            let opts = GameOptions { boards, ..Default::default() };
            round_trips(&reached::<TicTacToe>(&opts, seed, plies));
            round_trips(&reached::<Notakto>(&opts, seed, plies));
            round_trips(&reached::<Uttt>(&opts, seed, plies));
        }

        #[test]
        fn no_text_makes_a_parser_panic(text in texts()) {
            let _ = text.parse::<TicTacToe>();
            let _ = text.parse::<Notakto>();
            let _ = text.parse::<Uttt>();
            let _ = TicTacToe::parse_move(&text);
            let _ = Notakto::parse_move(&text);
            let _ = Uttt::parse_move(&text);
            let _ = TicTacToe::split_moves(&text);
            let _ = Notakto::split_moves(&text);
            let _ = Uttt::split_moves(&text);
        }
    }
}
