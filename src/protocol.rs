//! The bot protocol (docs/protocol.md): every line referee and a bot (or a
//! network client) exchange, and the one rule that turns what a bot sent
//! into a move or a breach of the protocol.
//!
//! This module is the only place that writes or reads protocol text. The
//! external bot, exhaustive grading's pipelined bot, the network server and
//! `referee connect`/`referee engine` all go through [`Command`] and
//! [`judge_reply`], so a bot is judged the same way wherever it plays.
//!
//! ```
//! use referee::protocol::{Begin, Command};
//! use referee::game::{GameKind, Seat, TicTacToe};
//!
//! let begin = Begin::new(GameKind::TicTacToe, Seat::Two, 1000);
//! assert_eq!(Command::<TicTacToe>::Begin(begin).to_string(), "begin tictactoe 2 1000");
//! let turn: Command<TicTacToe> = "turn X........".parse().unwrap();
//! assert!(matches!(turn, Command::Turn(_)));
//! ```

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::game::{Game, GameKind, Outcome, ParseError, Seat};

/// A game's result from one bot's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BotResult {
    /// This bot won.
    Win,
    /// This bot lost.
    Loss,
    /// Nobody won.
    Draw,
}

impl BotResult {
    /// The result for `seat` of a game that ended with `outcome`.
    pub(crate) fn for_seat(outcome: Outcome, seat: Seat) -> BotResult {
        match outcome {
            Outcome::Draw => BotResult::Draw,
            Outcome::Win(s) if s == seat => BotResult::Win,
            Outcome::Win(_) => BotResult::Loss,
        }
    }

    /// `win`, `loss` or `draw`, as the protocol's end line says it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            BotResult::Win => "win",
            BotResult::Loss => "loss",
            BotResult::Draw => "draw",
        }
    }
}

/// Why a bot lost by forfeit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForfeitReason {
    /// No complete reply line within the time limit.
    Timeout,
    /// A well-formed move that is not legal in the position.
    Illegal,
    /// A reply that is not a move at all (garbage, too long, not UTF-8).
    Malformed,
    /// The bot exited or closed its output during the game.
    Crash,
    /// The bot could not be started, or died before its first reply.
    Startup,
}

impl ForfeitReason {
    /// Every reason, in a fixed order for tables.
    pub const ALL: [ForfeitReason; 5] = [
        ForfeitReason::Timeout,
        ForfeitReason::Illegal,
        ForfeitReason::Malformed,
        ForfeitReason::Crash,
        ForfeitReason::Startup,
    ];

    /// The lowercase name used in records and tables.
    pub fn name(self) -> &'static str {
        match self {
            ForfeitReason::Timeout => "timeout",
            ForfeitReason::Illegal => "illegal",
            ForfeitReason::Malformed => "malformed",
            ForfeitReason::Crash => "crash",
            ForfeitReason::Startup => "startup",
        }
    }
}

impl fmt::Display for ForfeitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The details of a forfeit: enough to see what the bot did wrong.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forfeit {
    /// Why.
    pub reason: ForfeitReason,
    /// The seat that forfeited (set by [`Forfeit::located`]).
    pub seat: Seat,
    /// The move number (1-based ply) the bot was asked for.
    pub move_number: usize,
    /// Time measured from the turn line to the reply (or to the deadline), in µs.
    pub time_us: u64,
    /// How far past the limit the bot went, in µs (0 when not a timeout).
    pub overrun_us: u64,
    /// The raw line received, escaped and cut at 200 characters.
    pub line: Option<String>,
    /// The position text the bot was asked to move in.
    pub position: String,
    /// The bot's exit status or signal, when it exited.
    pub exit_status: Option<String>,
    /// The last lines the bot wrote to stderr.
    pub stderr_tail: String,
    /// A human explanation, e.g. why the move is illegal.
    pub detail: String,
}

impl Forfeit {
    /// A forfeit with only the reason and a detail, as a bot reports it;
    /// the referee places it with [`Forfeit::located`].
    pub fn new(reason: ForfeitReason, detail: impl Into<String>) -> Self {
        Forfeit {
            reason,
            seat: Seat::One,
            move_number: 0,
            time_us: 0,
            overrun_us: 0,
            line: None,
            position: String::new(),
            exit_status: None,
            stderr_tail: String::new(),
            detail: detail.into(),
        }
    }
}

impl Forfeit {
    /// The forfeit placed in its game: the seat that forfeited, the move
    /// number (1-based ply) it was asked for, and the position (kept when
    /// the bot already said it).
    pub(crate) fn located(mut self, seat: Seat, move_number: usize, position: &str) -> Forfeit {
        self.seat = seat;
        self.move_number = move_number;
        if self.position.is_empty() {
            position.clone_into(&mut self.position);
        }
        self
    }
}

impl fmt::Display for Forfeit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "player {} forfeits by {} at move {}",
            self.seat, self.reason, self.move_number
        )?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        if self.reason == ForfeitReason::Timeout {
            write!(
                f,
                " ({} ms, {} ms over)",
                self.time_us / 1000,
                self.overrun_us / 1000
            )?;
        }
        if let Some(line) = &self.line {
            write!(f, "; received \"{line}\"")?;
        }
        if let Some(st) = &self.exit_status {
            write!(f, "; {st}")?;
        }
        Ok(())
    }
}

/// What a network client answers to a turn its own bot could not answer:
/// not a move, so the server records a forfeit of that round and goes on.
pub(crate) const FORFEIT_REPLY: &str = "forfeit";

/// The longest reply line accepted from a bot process, in bytes (without
/// its newline).
pub(crate) const MAX_REPLY: usize = 64 * 1024;

/// The `begin` line: the game, the bot's seat and the per-move limit, and
/// for bots that keep their process across games, the game's seed.
///
/// ```
/// use referee::game::{GameKind, Seat, TicTacToe};
/// use referee::protocol::{Begin, Command};
///
/// let b = Begin::new(GameKind::Notakto, Seat::Two, 1000);
/// assert_eq!(b.to_string(), "begin notakto 2 1000");
/// // Readers skip key=value fields they do not know.
/// let read: Begin = "begin notakto 2 1000 colour=blue".parse()?;
/// assert_eq!(read, b);
/// let turn: Command<TicTacToe> = "turn X...O....".parse()?;
/// assert_eq!(turn.to_string(), "turn X...O....");
/// # Ok::<(), referee::game::ParseError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Begin {
    /// The game being played.
    pub game: GameKind,
    /// The seat of the bot's first turn.
    pub seat: Seat,
    /// The per-move limit in milliseconds (without the start-up allowance).
    pub time_ms: u64,
    /// The bot's seed for this game, sent as `seed=N` only to bots that
    /// declared `reuse` (others get it in `REFEREE_SEED`; a plain v1 bot
    /// never sees the field).
    pub seed: Option<u64>,
}

impl Begin {
    /// A begin line without a seed field: the form every v1 bot reads.
    pub fn new(game: GameKind, seat: Seat, time_ms: u64) -> Self {
        Begin {
            game,
            seat,
            time_ms,
            seed: None,
        }
    }
}

impl fmt::Display for Begin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "begin {} {} {}",
            self.game,
            self.seat.number(),
            self.time_ms
        )?;
        if let Some(seed) = self.seed {
            write!(f, " seed={seed}")?;
        }
        Ok(())
    }
}

impl FromStr for Begin {
    type Err = ParseError;

    /// Reads `begin <game> <seat> <time_ms> [key=value ...]`. Unknown
    /// `key=value` fields are skipped, so that readers keep working when a
    /// later version adds one.
    fn from_str(line: &str) -> Result<Self, ParseError> {
        let mut words = line.split_whitespace();
        if words.next() != Some("begin") {
            return Err(ParseError::new(format!("not a begin line: '{line}'")));
        }
        let usage = || ParseError::new("expected 'begin <game> <seat> <time_ms>'");
        let game: GameKind = words.next().ok_or_else(usage)?.parse()?;
        let seat_text = words.next().ok_or_else(usage)?;
        let seat = seat_text
            .parse::<u8>()
            .ok()
            .and_then(Seat::from_number)
            .ok_or_else(|| ParseError::new(format!("bad seat '{seat_text}' (expected 1 or 2)")))?;
        let ms_text = words.next().ok_or_else(usage)?;
        let time_ms = ms_text
            .parse::<u64>()
            .map_err(|_| ParseError::new(format!("bad time '{ms_text}' (milliseconds)")))?;
        let mut begin = Begin::new(game, seat, time_ms);
        for field in words {
            let Some((key, value)) = field.split_once('=') else {
                return Err(ParseError::new(format!(
                    "unexpected word '{field}' in a begin line (extra fields are key=value)"
                )));
            };
            if key == "seed" {
                begin.seed = Some(
                    value
                        .parse()
                        .map_err(|_| ParseError::new(format!("bad seed '{value}'")))?,
                );
            }
        }
        Ok(begin)
    }
}

/// A line from referee (or a server) to a bot (or a client), for positions
/// of game `G`. `Display` writes it without its newline; `FromStr` reads one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command<G> {
    /// `begin <game> <seat> <time_ms> [seed=N]`: a game starts.
    Begin(Begin),
    /// `turn <position>`: the bot is to move in this position.
    Turn(G),
    /// `end <win|loss|draw>`: the game is over, from the bot's side.
    End(BotResult),
    /// `error <message>`: a server refuses or drops a client (network only).
    Error(String),
}

/// `name NAME`: the line a network client may send first, to play under a
/// name of its choice (client to server; docs/network.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NameLine(pub String);

impl fmt::Display for NameLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "name {}", self.0)
    }
}

impl NameLine {
    /// The name a `name NAME` line declares (unchecked), or `None` for any
    /// other line.
    pub(crate) fn parse(line: &str) -> Option<NameLine> {
        line.trim()
            .strip_prefix("name ")
            .map(|n| NameLine(n.trim().to_string()))
    }
}

impl<G: fmt::Display> fmt::Display for Command<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Begin(b) => b.fmt(f),
            Command::Turn(pos) => write!(f, "turn {pos}"),
            Command::End(result) => write!(f, "end {}", result.word()),
            Command::Error(msg) => write!(f, "error {msg}"),
        }
    }
}

impl<G: FromStr<Err = ParseError>> FromStr for Command<G> {
    type Err = ParseError;

    fn from_str(line: &str) -> Result<Self, ParseError> {
        let line = line.trim();
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        match word {
            "begin" => Ok(Command::Begin(line.parse()?)),
            "turn" => Ok(Command::Turn(rest.parse().map_err(|e: ParseError| {
                ParseError::new(format!("bad position '{rest}': {e}"))
            })?)),
            "end" => Ok(Command::End(match rest {
                "win" => BotResult::Win,
                "loss" => BotResult::Loss,
                "draw" => BotResult::Draw,
                other => {
                    return Err(ParseError::new(format!(
                        "bad end line 'end {other}' (expected win, loss or draw)"
                    )))
                }
            })),
            "error" => Ok(Command::Error(rest.to_string())),
            other => Err(ParseError::new(format!(
                "unknown line '{other}' (expected begin, turn, end or error)"
            ))),
        }
    }
}

/// A position's text not yet read as a position: for the first line of a
/// session, before its `begin` line says which game it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PositionText(pub String);

impl fmt::Display for PositionText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for PositionText {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        Ok(PositionText(s.to_string()))
    }
}

/// The text of a reply line as the protocol reads it: a trailing `\r` and
/// spaces around the move are ignored.
pub(crate) fn reply_text(raw: &[u8]) -> Result<&str, std::str::Utf8Error> {
    Ok(std::str::from_utf8(raw)?.trim_end_matches('\r').trim())
}

/// What came from a bot while a reply was due, whatever carries it (a
/// pipe or a socket).
#[derive(Debug)]
pub(crate) enum Heard {
    /// A complete line (without its newline), received `elapsed` after the
    /// turn line went out.
    Line(Vec<u8>, Duration),
    /// More than the longest accepted line without a newline; its start.
    TooLong(Vec<u8>),
    /// End of file: the bot exited or closed its output; what it wrote of a
    /// line.
    Closed(Vec<u8>),
    /// The deadline passed; what the bot wrote of a line so far.
    Deadline(Vec<u8>),
    /// Output found when no reply was due: before the turn line was sent
    /// (written before the first turn, or a second line after a reply), or
    /// at the end of the game.
    Stray(Vec<u8>),
    /// The turn line could not be sent.
    Unsent(std::io::Error),
}

/// The time a bot had for one reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Allowance {
    /// The per-move limit.
    pub move_ms: u64,
    /// The start-up allowance included in this turn's limit (0 except on
    /// the first turn of a freshly started process).
    pub startup_ms: u64,
    /// Whether the bot has replied to anything yet (in this process, or on
    /// this connection): a bot that dies before any reply failed to start.
    pub replied_before: bool,
    /// The tolerance added to the limit (`TimeControl::slack_ms`).
    pub slack_ms: u64,
}

impl Allowance {
    /// The whole limit for this reply, tolerance included.
    pub(crate) fn limit(&self) -> Duration {
        Duration::from_millis(self.move_ms + self.startup_ms + self.slack_ms)
    }

    fn limit_text(&self) -> String {
        let mut text = if self.startup_ms > 0 {
            format!(
                "{} ms ({} ms per move + {} ms start-up allowance on its first turn)",
                self.move_ms + self.startup_ms,
                self.move_ms,
                self.startup_ms
            )
        } else {
            format!("{} ms", self.move_ms)
        };
        if self.slack_ms > 0 {
            text += &format!(" and {} ms of tolerance", self.slack_ms);
        }
        text
    }
}

/// A bot's breach of the protocol: the reason a user reads, what happened,
/// and the evidence. The owner of the bot adds the position, the exit
/// status and the stderr tail when it makes the [`Forfeit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Breach {
    /// The forfeit reason.
    pub reason: ForfeitReason,
    /// What happened, in words.
    pub detail: String,
    /// The raw bytes received, if any.
    pub line: Option<Vec<u8>>,
    /// Time from the turn line to the reply (or to the deadline), in µs.
    pub time_us: u64,
    /// How far past the limit the bot went, in µs.
    pub overrun_us: u64,
}

impl Breach {
    /// A breach with its reason and what happened; no evidence yet.
    pub(crate) fn new(reason: ForfeitReason, detail: impl Into<String>) -> Self {
        Breach {
            reason,
            detail: detail.into(),
            line: None,
            time_us: 0,
            overrun_us: 0,
        }
    }

    /// The program could not be started at all.
    pub(crate) fn not_started(program: &str, err: &std::io::Error) -> Self {
        Breach::new(
            ForfeitReason::Startup,
            format!("could not start '{program}': {err}"),
        )
    }

    /// Adds the bytes received (nothing when empty).
    pub(crate) fn with_line(mut self, bytes: Vec<u8>) -> Self {
        if !bytes.is_empty() {
            self.line = Some(bytes);
        }
        self
    }

    /// The forfeit it makes, in position `pos` (seat and move number are
    /// filled in by the referee).
    pub(crate) fn into_forfeit<G: Game>(self, pos: &G) -> Forfeit {
        let mut f = Forfeit::new(self.reason, self.detail);
        f.line = self.line.as_deref().map(crate::escape::terminal::reply);
        f.time_us = self.time_us;
        f.overrun_us = self.overrun_us;
        f.position = pos.to_string();
        f
    }
}

/// A hint for output that looks like the course assignment's console game
/// (a board header of board letters, a row of cells, a `Player N: `
/// prompt) from a bot run as a protocol bot: it is a console program.
pub(crate) fn console_hint(text: &str) -> &'static str {
    let looks = text.lines().any(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        let header = !words.is_empty()
            && words
                .iter()
                .all(|w| w.len() == 1 && w.as_bytes()[0].is_ascii_uppercase());
        let cells = words.len() >= 3
            && words
                .iter()
                .all(|w| w.len() == 1 && (w.as_bytes()[0].is_ascii_digit() || *w == "X"));
        header && words.len() >= 2 || cells || l.contains("Player 1:") || l.contains("Player 2:")
    });
    if looks {
        " (this looks like the assignment's console program, which prints boards and `Player N: ` \
         prompts: grade it with --form console or a rubric with form = \"console\", or give its \
         bot.toml kind = \"console\")"
    } else {
        ""
    }
}

/// The language an external bot speaks on stdin/stdout: protocol v1
/// (docs/protocol.md), or CodinGame's turn input for its Tic-Tac-Toe and
/// Ultimate tic-tac-toe games ("CodinGame bots" in docs/protocol.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BotProtocol {
    /// Protocol v1: `begin`, `turn <position>`, a move, `end`.
    #[default]
    V1,
    /// CodinGame's: the opponent's last move, the valid actions, a reply
    /// `row col`; one process per game and no `end` line.
    CodinGame,
}

impl BotProtocol {
    /// `v1` or `codingame`, as manifests and `--protocol` say it.
    pub fn name(self) -> &'static str {
        match self {
            BotProtocol::V1 => "v1",
            BotProtocol::CodinGame => "codingame",
        }
    }
}

impl fmt::Display for BotProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BotProtocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "v1" => Ok(BotProtocol::V1),
            "codingame" => Ok(BotProtocol::CodinGame),
            other => Err(format!(
                "unknown protocol '{other}' (expected v1 or codingame)"
            )),
        }
    }
}

/// One turn's input for a CodinGame bot: a line `opponentRow opponentCol`
/// (`-1 -1` when no move was played before the bot's first turn), a line
/// with the number of valid actions, then each valid action as `row col`,
/// in CodinGame's order (row-major over the game's grid). Every line ends
/// with a newline. `None` when the game has no CodinGame grid.
///
/// ```
/// use referee::game::{Game, TicTacToe};
/// use referee::protocol::codingame_turn;
///
/// let mut pos = TicTacToe::new();
/// let first = codingame_turn(None, &pos).unwrap();
/// assert!(first.starts_with("-1 -1\n9\n0 0\n0 1\n"));
/// let mv = "4".parse().unwrap();
/// pos.play(mv).unwrap();
/// assert!(codingame_turn(Some(mv), &pos).unwrap().starts_with("1 1\n8\n0 0\n"));
/// ```
pub fn codingame_turn<G: Game>(last: Option<G::Move>, pos: &G) -> Option<String> {
    use fmt::Write as _;
    let mut cells = Vec::new();
    for mv in pos.legal_moves() {
        cells.push(G::grid_cell(mv)?);
    }
    cells.sort_unstable();
    let mut out = String::with_capacity(16 + 4 * cells.len());
    match last {
        Some(mv) => {
            let (r, c) = G::grid_cell(mv)?;
            let _ = writeln!(out, "{r} {c}");
        }
        None => out.push_str("-1 -1\n"),
    }
    let _ = writeln!(out, "{}", cells.len());
    for (r, c) in cells {
        let _ = writeln!(out, "{r} {c}");
    }
    Some(out)
}

/// What a CodinGame bot's reply names: `Ok(Some(move))` for a cell of the
/// grid, `Ok(None)` for two integers off the grid (not a valid action), or
/// why the line is not a reply. The reply is two integers `row col`
/// separated by spaces; anything after them (CodinGame shows it as the
/// bot's message) is ignored, as CodinGame ignores it.
pub(crate) fn read_codingame_reply<G: Game>(text: &str) -> Result<Option<G::Move>, String> {
    let mut words = text.split_whitespace();
    let mut int = |what: &str| -> Result<i64, String> {
        let w = words
            .next()
            .ok_or_else(|| format!("expected two integers `row col`, the {what} is missing"))?;
        w.parse::<i64>()
            .map_err(|_| format!("expected two integers `row col`, got '{w}' for the {what}"))
    };
    let row = int("row")?;
    let col = int("column")?;
    Ok(match (u8::try_from(row), u8::try_from(col)) {
        (Ok(r), Ok(c)) => G::from_grid_cell(r, c),
        _ => None,
    })
}

/// The one rule: what a bot sent while its reply to `pos` was due becomes
/// its move, or the breach that forfeits the game.
///
/// - a line in time that reads as a legal move is the move; a line that is
///   not a move (or not UTF-8, or too long) is `malformed`, a move that is
///   not legal `illegal`;
/// - no complete line in time (or a line that arrived late) is `timeout`,
///   on the first turn too (the record says the limit included the
///   start-up allowance);
/// - end of file (or a turn line that cannot be sent to a dead process) is
///   `startup` before the bot's first reply and `crash` after it;
/// - output when no reply was due is `malformed`.
pub(crate) fn judge_reply<G: Game>(
    heard: Heard,
    pos: &G,
    allow: &Allowance,
) -> Result<G::Move, Breach> {
    judge_reply_in(BotProtocol::V1, heard, pos, allow)
}

/// [`judge_reply`] for a bot speaking `protocol`: the same rule, with the
/// reply line read as that protocol writes a move (a CodinGame reply that
/// is not two integers is `malformed`, a cell that is not among the valid
/// actions `illegal`).
pub(crate) fn judge_reply_in<G: Game>(
    protocol: BotProtocol,
    heard: Heard,
    pos: &G,
    allow: &Allowance,
) -> Result<G::Move, Breach> {
    let limit = allow.limit();
    let died = |what: &str| {
        if allow.replied_before {
            Breach::new(ForfeitReason::Crash, format!("{what} during the game"))
        } else {
            Breach::new(
                ForfeitReason::Startup,
                format!("{what} before its first reply"),
            )
        }
    };
    match heard {
        Heard::Line(raw, elapsed) => {
            let us = elapsed.as_micros() as u64;
            if elapsed > limit {
                let mut b = Breach::new(
                    ForfeitReason::Timeout,
                    format!("replied after the limit of {}", allow.limit_text()),
                )
                .with_line(raw);
                b.time_us = us;
                b.overrun_us = us.saturating_sub(limit.as_micros() as u64);
                return Err(b);
            }
            let judged = match reply_text(&raw) {
                Err(_) => Err(Breach::new(
                    ForfeitReason::Malformed,
                    "the reply is not valid UTF-8",
                )),
                Ok(text) => match read_reply::<G>(protocol, text) {
                    Err(e) => Err(Breach::new(ForfeitReason::Malformed, e)),
                    Ok(None) => Err(Breach::new(
                        ForfeitReason::Illegal,
                        format!("'{text}' is not among the valid actions (not a cell of the grid)"),
                    )),
                    Ok(Some(mv)) => match pos.illegality(mv) {
                        Some(why) if protocol == BotProtocol::CodinGame => Err(Breach::new(
                            ForfeitReason::Illegal,
                            format!("'{text}' is not among the valid actions: move {mv}: {why}"),
                        )),
                        Some(why) => Err(Breach::new(ForfeitReason::Illegal, why)),
                        None => Ok(mv),
                    },
                },
            };
            judged.map_err(|b| {
                let mut b = b.with_line(raw);
                b.time_us = us;
                b
            })
        }
        Heard::TooLong(start) => Err(Breach::new(
            ForfeitReason::Malformed,
            format!("a reply longer than {MAX_REPLY} bytes without a newline"),
        )
        .with_line(start)),
        Heard::Closed(partial) => Err(died("exited or closed its output").with_line(partial)),
        Heard::Deadline(partial) => {
            let detail = if partial.is_empty() {
                // Most often the reply sits in the bot's own output buffer
                // (Python, C stdio to a pipe): name the likely cause.
                format!(
                    "nothing was received within {}; did the bot flush its output?",
                    allow.limit_text()
                )
            } else {
                format!(
                    "no complete line (newline missing) within {}",
                    allow.limit_text()
                )
            };
            let mut b = Breach::new(ForfeitReason::Timeout, detail).with_line(partial);
            b.time_us = limit.as_micros() as u64;
            Err(b)
        }
        Heard::Stray(bytes) => {
            let shown = String::from_utf8_lossy(&bytes);
            let first = shown.lines().next().unwrap_or("").trim();
            Err(Breach::new(
                ForfeitReason::Malformed,
                format!(
                    "wrote output when no reply was due (a line before its first turn, \
                     a second line after a reply, or output at the end of the game): \"{}\"{}",
                    crate::escape::terminal::reply(first.as_bytes()),
                    console_hint(&shown)
                ),
            )
            .with_line(bytes))
        }
        Heard::Unsent(e) if e.kind() == std::io::ErrorKind::TimedOut => Err(Breach::new(
            ForfeitReason::Timeout,
            format!(
                "it does not read its input: the turn line could not be sent within {}",
                allow.limit_text()
            ),
        )),
        Heard::Unsent(e) => Err(died(&format!(
            "could not be sent its turn ({e}): it exited"
        ))),
    }
}

/// A reply line's move in `protocol`: `Ok(None)` for a CodinGame cell off
/// the grid; the error says why the line is not a move.
fn read_reply<G: Game>(protocol: BotProtocol, text: &str) -> Result<Option<G::Move>, String> {
    match protocol {
        BotProtocol::V1 => G::parse_move(text)
            .map(Some)
            .map_err(|e| format!("not a move: {e}{}", console_hint(text))),
        BotProtocol::CodinGame => read_codingame_reply::<G>(text)
            .map_err(|e| format!("not a move: {e} (a CodinGame bot answers `row col`)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Notakto, TicTacToe, Uttt};

    fn allow(first: bool) -> Allowance {
        Allowance {
            move_ms: 1000,
            startup_ms: if first { 2000 } else { 0 },
            replied_before: !first,
            slack_ms: 0,
        }
    }

    /// Every line form of protocol v1, exactly as it goes on the wire. These
    /// strings are a public contract: bots in the wild parse them.
    #[test]
    fn golden_lines() {
        let b = Begin::new(GameKind::TicTacToe, Seat::One, 1000);
        assert_eq!(
            Command::<TicTacToe>::Begin(b).to_string(),
            "begin tictactoe 1 1000"
        );
        let b = Begin {
            seed: Some(42),
            ..Begin::new(GameKind::Uttt, Seat::Two, 250)
        };
        assert_eq!(
            Command::<Uttt>::Begin(b).to_string(),
            "begin uttt 2 250 seed=42"
        );
        let b = Begin::new(GameKind::Notakto, Seat::Two, 5);
        assert_eq!(
            Command::<Notakto>::Begin(b).to_string(),
            "begin notakto 2 5"
        );
        let pos: TicTacToe = "X...O....".parse().unwrap();
        assert_eq!(Command::Turn(pos).to_string(), "turn X...O....");
        let pos: Notakto = "X......../.........".parse().unwrap();
        assert_eq!(Command::Turn(pos).to_string(), "turn X......../.........");
        let pos = Uttt::start(&Default::default());
        assert_eq!(
            Command::Turn(pos).to_string(),
            format!("turn {}/9/.........", ".".repeat(81))
        );
        for (r, w) in [
            (BotResult::Win, "end win"),
            (BotResult::Loss, "end loss"),
            (BotResult::Draw, "end draw"),
        ] {
            assert_eq!(Command::<TicTacToe>::End(r).to_string(), w);
        }
        assert_eq!(
            Command::<TicTacToe>::Error("server full".into()).to_string(),
            "error server full"
        );
        assert_eq!(FORFEIT_REPLY, "forfeit");
        assert_eq!(NameLine("alice".into()).to_string(), "name alice");
        assert_eq!(
            NameLine::parse("name  alice \n"),
            Some(NameLine("alice".into()))
        );
        assert_eq!(NameLine::parse("turn X........"), None);
    }

    #[test]
    fn lines_read_back_including_the_old_forms() {
        for text in [
            "begin tictactoe 1 1000",
            "begin uttt 2 250 seed=42",
            "turn X...O....",
            "end win",
            "end loss",
            "end draw",
            "error server full",
        ] {
            let c: Command<TicTacToe> = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(c.to_string(), text);
        }
        // Unknown key=value fields of later versions are skipped.
        let b: Begin = "begin notakto 1 10 seed=3 colour=blue".parse().unwrap();
        assert_eq!(b.seed, Some(3));
        for bad in [
            "begin chess 1 10",
            "begin tictactoe 3 10",
            "begin tictactoe 1",
            "begin tictactoe 1 ten",
            "begin tictactoe 1 10 extra",
            "end maybe",
            "move 4",
            "turn XXXXXXXXXX",
        ] {
            assert!(bad.parse::<Command<TicTacToe>>().is_err(), "{bad}");
        }
    }

    #[test]
    fn replies_are_trimmed_and_judged() {
        let pos = TicTacToe::new();
        let t = Duration::from_micros(40);
        let mv = judge_reply(Heard::Line(b" 4 \r".to_vec(), t), &pos, &allow(false)).unwrap();
        assert_eq!(mv.to_string(), "4");
        let b = judge_reply(Heard::Line(b"4 5".to_vec(), t), &pos, &allow(false)).unwrap_err();
        assert_eq!(b.reason, ForfeitReason::Malformed);
        assert_eq!(b.line.as_deref(), Some(&b"4 5"[..]));
        assert_eq!(b.time_us, 40);
        let b = judge_reply(Heard::Line(vec![0xff], t), &pos, &allow(false)).unwrap_err();
        assert_eq!(b.reason, ForfeitReason::Malformed);
        let busy: TicTacToe = "X........".parse().unwrap();
        let b = judge_reply(Heard::Line(b"0".to_vec(), t), &busy, &allow(false)).unwrap_err();
        assert_eq!(b.reason, ForfeitReason::Illegal);
    }

    /// CodinGame's turn input, exactly as it goes on the wire (a public
    /// contract too: CodinGame bots parse it).
    #[test]
    fn codingame_turn_text() {
        let mut pos = TicTacToe::new();
        let all: String = (0..9).map(|i| format!("{} {}\n", i / 3, i % 3)).collect();
        assert_eq!(
            codingame_turn(None, &pos).unwrap(),
            format!("-1 -1\n9\n{all}")
        );
        let mv = "4".parse().unwrap();
        pos.play(mv).unwrap();
        assert_eq!(
            codingame_turn(Some(mv), &pos).unwrap(),
            "1 1\n8\n0 0\n0 1\n0 2\n1 0\n1 2\n2 0\n2 1\n2 2\n"
        );
        // UTTT: sent to board 3 (rows 3-5, columns 0-2), row by row.
        let mut u = Uttt::start(&Default::default());
        let mv = "4 3".parse().unwrap();
        u.play(mv).unwrap();
        assert_eq!(
            codingame_turn(Some(mv), &u).unwrap(),
            "4 3\n9\n3 0\n3 1\n3 2\n4 0\n4 1\n4 2\n5 0\n5 1\n5 2\n"
        );
        let n = Notakto::start(&Default::default());
        assert_eq!(codingame_turn(None, &n), None);
    }

    #[test]
    fn codingame_replies_are_judged_by_the_one_rule() {
        let pos = TicTacToe::new();
        let t = Duration::from_micros(40);
        let cg = |line: &[u8], pos: &TicTacToe| {
            judge_reply_in(
                BotProtocol::CodinGame,
                Heard::Line(line.to_vec(), t),
                pos,
                &allow(false),
            )
        };
        assert_eq!(cg(b"1 1", &pos).unwrap().to_string(), "4");
        assert_eq!(cg(b" 2 0 message shown \r", &pos).unwrap().to_string(), "6");
        for bad in [&b"4"[..], b"one two", b"", b"1.5 2"] {
            assert_eq!(cg(bad, &pos).unwrap_err().reason, ForfeitReason::Malformed);
        }
        assert_eq!(cg(b"3 0", &pos).unwrap_err().reason, ForfeitReason::Illegal);
        assert_eq!(
            cg(b"-1 -1", &pos).unwrap_err().reason,
            ForfeitReason::Illegal
        );
        let busy: TicTacToe = "X........".parse().unwrap();
        let b = cg(b"0 0", &busy).unwrap_err();
        assert_eq!(b.reason, ForfeitReason::Illegal);
        assert!(
            b.detail.contains("not among the valid actions"),
            "{}",
            b.detail
        );
        // A v1 reply is not a CodinGame one, and the other way round.
        assert!(judge_reply(Heard::Line(b"1 1".to_vec(), t), &pos, &allow(false)).is_err());
        let u = Uttt::start(&Default::default());
        let mv = judge_reply_in(
            BotProtocol::CodinGame,
            Heard::Line(b"1 3".to_vec(), t),
            &u,
            &allow(false),
        );
        assert_eq!(mv.unwrap().to_string(), "1 3");
        let mv = judge_reply_in(
            BotProtocol::CodinGame,
            Heard::Line(b"3 1".to_vec(), t),
            &u,
            &allow(false),
        );
        assert_eq!(mv.unwrap().to_string(), "3 1");
        let mv = judge_reply_in(
            BotProtocol::CodinGame,
            Heard::Line(b"5 7".to_vec(), t),
            &u,
            &allow(false),
        );
        // Row 5, column 7: board 5, cell 7.
        assert_eq!(mv.unwrap().to_string(), "5 7");
    }

    #[test]
    fn each_way_of_failing_has_its_reason() {
        let pos = TicTacToe::new();
        let reason =
            |h: Heard, first: bool| judge_reply(h, &pos, &allow(first)).unwrap_err().reason;
        use ForfeitReason::*;
        // Silence on the first turn is a timeout, not a start-up failure,
        // and the detail says the allowance was included.
        let b = judge_reply(Heard::Deadline(vec![]), &pos, &allow(true)).unwrap_err();
        assert_eq!(b.reason, Timeout);
        assert!(b.detail.contains("start-up allowance"), "{}", b.detail);
        assert_eq!(b.time_us, 3_000_000);
        assert_eq!(reason(Heard::Deadline(b"4".to_vec()), false), Timeout);
        let late = Heard::Line(b"4".to_vec(), Duration::from_millis(1500));
        let b = judge_reply(late, &pos, &allow(false)).unwrap_err();
        assert_eq!((b.reason, b.overrun_us), (Timeout, 500_000));
        assert_eq!(reason(Heard::Closed(vec![]), true), Startup);
        assert_eq!(reason(Heard::Closed(vec![]), false), Crash);
        assert_eq!(reason(Heard::Stray(b"hello\n".to_vec()), true), Malformed);
        assert!(console_hint("A      B      C").contains("--form console"));
        assert!(console_hint("0 1 2  0 1 2  0 1 2").contains("--form console"));
        assert!(console_hint("Player 1: A4").contains("--form console"));
        assert_eq!(console_hint("A"), "");
        assert_eq!(console_hint("hello"), "");
        assert_eq!(reason(Heard::TooLong(vec![b'x'; 10]), false), Malformed);
        let pipe = || std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        assert_eq!(reason(Heard::Unsent(pipe()), true), Startup);
        assert_eq!(reason(Heard::Unsent(pipe()), false), Crash);
        let full = std::io::Error::from(std::io::ErrorKind::TimedOut);
        assert_eq!(reason(Heard::Unsent(full), false), Timeout);
    }

    #[test]
    fn breach_becomes_a_forfeit_with_escaped_evidence() {
        let pos = TicTacToe::new();
        let b = judge_reply(
            Heard::Line(b"a\tb".to_vec(), Duration::ZERO),
            &pos,
            &allow(false),
        )
        .unwrap_err();
        let f = b.into_forfeit(&pos);
        assert_eq!(f.line.as_deref(), Some("a\\tb"));
        assert_eq!(f.position, ".........");
    }
}

#[cfg(test)]
mod props {
    //! Property tests of what bots and clients send: no line makes the
    //! readers or the reply classifier panic, and every line referee writes
    //! reads back as itself.
    use super::*;
    use crate::game::{Notakto, TicTacToe, Uttt};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn heard() -> impl Strategy<Value = Heard> {
        let bytes = prop::collection::vec(any::<u8>(), 0..64);
        prop_oneof![
            (bytes.clone(), 0u64..5_000_000)
                .prop_map(|(b, us)| Heard::Line(b, Duration::from_micros(us))),
            ("[ 0-9A-Za-z\r\t]{0,12}", 0u64..2_000_000)
                .prop_map(|(s, us)| Heard::Line(s.into_bytes(), Duration::from_micros(us))),
            bytes.clone().prop_map(Heard::TooLong),
            bytes.clone().prop_map(Heard::Closed),
            bytes.clone().prop_map(Heard::Deadline),
            bytes.prop_map(Heard::Stray),
        ]
    }

    /// A position of `G` after `plies` random moves.
    fn position<G: Game>(seed: u64, plies: usize) -> G {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut pos = G::start(&Default::default());
        for _ in 0..plies {
            match pos.random_move(&mut rng) {
                Some(mv) => pos.play_unchecked(mv),
                None => break,
            }
        }
        pos
    }

    /// Every reply is judged: a move that is legal, or a breach with a
    /// reason; a line judged a move is one of the position's legal moves.
    fn judged<G: Game>(h: Heard, pos: &G, first: bool) {
        let allow = Allowance {
            move_ms: 1000,
            startup_ms: if first { 2000 } else { 0 },
            replied_before: !first,
            slack_ms: 0,
        };
        if let Ok(mv) = judge_reply(h, pos, &allow) {
            assert!(pos.legal_moves().contains(&mv));
        }
    }

    proptest! {
        #[test]
        fn every_reply_is_judged_without_panic(
            h in heard(), seed in any::<u64>(), plies in 0usize..40, first in any::<bool>()
        ) {
            judged(h.clone_for_test(), &position::<TicTacToe>(seed, plies), first);
            judged(h.clone_for_test(), &position::<Notakto>(seed, plies), first);
            judged(h, &position::<Uttt>(seed, plies), first);
        }

        #[test]
        fn no_line_makes_the_readers_panic(line in any::<String>()) {
            let _ = line.parse::<Command<TicTacToe>>();
            let _ = line.parse::<Command<Notakto>>();
            let _ = line.parse::<Command<Uttt>>();
            let _ = line.parse::<Begin>();
            let _ = NameLine::parse(&line);
            let _ = console_hint(&line);
        }

        #[test]
        fn written_lines_read_back(
            game in 0usize..3, seat in 1u8..=2, time_ms in any::<u64>(),
            seed in proptest::option::of(any::<u64>()), pseed in any::<u64>(), plies in 0usize..60
        ) {
            let begin = Begin {
                seed,
                ..Begin::new(GameKind::ALL[game], Seat::from_number(seat).unwrap(), time_ms)
            };
            let line = Command::<Uttt>::Begin(begin).to_string();
            prop_assert_eq!(line.parse::<Command<Uttt>>().unwrap(), Command::Begin(begin));
            let pos = position::<Uttt>(pseed, plies);
            let turn = Command::Turn(pos).to_string();
            prop_assert_eq!(turn.parse::<Command<Uttt>>().unwrap(), Command::Turn(pos));
            for r in [BotResult::Win, BotResult::Loss, BotResult::Draw] {
                let end = Command::<Notakto>::End(r).to_string();
                prop_assert_eq!(end.parse::<Command<Notakto>>().unwrap(), Command::End(r));
            }
        }
    }

    impl Heard {
        /// A copy (the `Unsent` error, never generated here, is not Clone).
        fn clone_for_test(&self) -> Heard {
            match self {
                Heard::Line(b, t) => Heard::Line(b.clone(), *t),
                Heard::TooLong(b) => Heard::TooLong(b.clone()),
                Heard::Closed(b) => Heard::Closed(b.clone()),
                Heard::Deadline(b) => Heard::Deadline(b.clone()),
                Heard::Stray(b) => Heard::Stray(b.clone()),
                Heard::Unsent(e) => Heard::Unsent(std::io::Error::new(e.kind(), e.to_string())),
            }
        }
    }
}
