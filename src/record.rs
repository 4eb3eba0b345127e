//! What a game leaves behind: the game record, and forfeits carried as data.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::game::{GameKind, Outcome, Seat};

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

/// A console program's output that differs from the assignment's transcript
/// without changing its moves (trailing spaces, a stray debug line, a
/// missing board): what grading reports as format, apart from the play.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormatFinding {
    /// The program's seat.
    pub seat: Seat,
    /// The move number (1-based ply) before which the difference appeared
    /// (the game's last move + 1 for the end screen).
    pub turn: usize,
    /// Whether the transcript matches once trailing whitespace is ignored
    /// (at the ends of lines and of the output).
    pub trailing_whitespace_only: bool,
    /// What was noticed while playing, one line each (a missing prompt, a
    /// board not drawn, text after the move).
    #[serde(default)]
    pub notes: Vec<String>,
    /// A unified diff from the expected transcript to the program's, cut
    /// to its first lines.
    pub diff: String,
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

/// Escapes a raw reply for records: control characters and non-ASCII as
/// escapes, cut at 200 characters.
pub(crate) fn escape_line(raw: &[u8]) -> String {
    let mut out = String::new();
    for &b in raw {
        if out.len() >= 200 {
            out.push('…');
            break;
        }
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Termination {
    /// Played to the end on the board.
    Normal,
    /// A forfeit for the given reason.
    #[serde(untagged)]
    Forfeit(ForfeitReason),
}

impl Termination {
    /// The name used in records: `normal` or the forfeit reason.
    pub fn name(self) -> &'static str {
        match self {
            Termination::Normal => "normal",
            Termination::Forfeit(r) => r.name(),
        }
    }
}

impl fmt::Display for Termination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One finished game: the unit every later stage (standings, reports) reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Game id within its run (tournament, match, grading).
    pub id: u64,
    /// The game (`tictactoe`, `notakto`, `uttt` in JSON).
    pub game: GameKind,
    /// Bot names by seat: `[player 1, player 2]`.
    pub players: [String; 2],
    /// The seed the game's bots and opening were drawn from.
    pub seed: u64,
    /// Moves of the opening that were forced on both bots (may be empty).
    pub opening: Vec<String>,
    /// The starting position text (before the opening).
    pub start: String,
    /// Every move played, opening included, as move texts.
    pub moves: Vec<String>,
    /// Each bot move's time in µs (one per move after the opening).
    pub times_us: Vec<u64>,
    /// The winner's seat (1 or 2 in JSON), `None` (`null`) for a draw.
    pub winner: Option<Seat>,
    /// How the game ended.
    pub termination: Termination,
    /// Details when a bot forfeited.
    pub forfeit: Option<Forfeit>,
    /// The final position text.
    pub final_position: String,
    /// The network client's address, for rounds played by `referee serve`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client: Option<String>,
    /// How a console program's printed transcript differed from the
    /// assignment's, for each seat whose did (output that did not change
    /// the moves: a format finding, not a forfeit). Absent in older records.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub format: Vec<FormatFinding>,
}

impl GameRecord {
    /// The outcome: a win for the recorded winner, else a draw.
    pub(crate) fn outcome(&self) -> Outcome {
        match self.winner {
            Some(s) => Outcome::Win(s),
            None => Outcome::Draw,
        }
    }

    /// Points scored by the named seat: win 1, draw 0.5, loss 0.
    pub(crate) fn points(&self, seat: Seat) -> f64 {
        self.outcome().points(seat)
    }
}

/// A finished game between `p1` and `p2` with these moves, for tests.
#[cfg(test)]
pub(crate) fn sample(
    game: GameKind,
    players: [&str; 2],
    winner: Option<Seat>,
    moves: &[&str],
) -> GameRecord {
    GameRecord {
        id: 0,
        game,
        players: players.map(str::to_string),
        seed: 0,
        opening: vec![],
        start: String::new(),
        moves: moves.iter().map(|m| m.to_string()).collect(),
        times_us: vec![5; moves.len()],
        winner,
        termination: Termination::Normal,
        forfeit: None,
        final_position: String::new(),
        client: None,
        format: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_cuts() {
        assert_eq!(escape_line(b"a\tb\x00\xff"), "a\\tb\\x00\\xff");
        let long = vec![b'a'; 1000];
        assert!(escape_line(&long).chars().count() <= 202);
    }

    #[test]
    fn termination_serialises_as_one_word() {
        let t = Termination::Forfeit(ForfeitReason::Timeout);
        assert_eq!(serde_json::to_string(&t).unwrap(), "\"timeout\"");
        assert_eq!(
            serde_json::to_string(&Termination::Normal).unwrap(),
            "\"normal\""
        );
        let back: Termination = serde_json::from_str("\"crash\"").unwrap();
        assert_eq!(back, Termination::Forfeit(ForfeitReason::Crash));
    }
}
