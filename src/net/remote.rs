//! The client on the other end of a connection, seen by the match loop as a
//! [`Bot`]: `v1` speaks the stdio protocol's lines, `text` talks to a person.
//!
//! Whatever the client sends or does, a round ends as data (a [`Forfeit`]
//! at worst) and the server goes on.

use std::io::{self, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::line::{LineError, LineReader};
use crate::bot::{Bot, TimeControl};
use crate::game::{Game, GameKind, GameOptions, Seat};
use crate::play::record::GameRecord;
use crate::play::standings::Wdl;
use crate::play::text::format_points;
use crate::protocol::BotResult;
use crate::protocol::{self, Allowance, Begin, Command, Heard};
use crate::protocol::{Forfeit, ForfeitReason};

/// How long one message to a client may take to go out: a client that
/// does not read what the server writes for this long is gone (its round
/// forfeited, its connection closed and its slot free), whether it reads
/// nothing or a byte now and then (docs/network.md).
pub(crate) const WRITE_STALL: Duration = Duration::from_secs(10);

/// One client connection: a bounded line reader and a writer whose every
/// message goes out within [`WRITE_STALL`] or not at all.
pub(crate) struct Conn {
    reader: LineReader<TcpStream>,
    writer: TcpStream,
    max_line: usize,
    /// False once the client is gone or must be dropped (after what is
    /// still to be said to it).
    open: bool,
    /// Set once a write failed: nothing more is written.
    broken: bool,
}

impl Conn {
    /// Wraps a connected stream.
    pub(crate) fn new(stream: TcpStream, max_line: usize) -> io::Result<Conn> {
        let read_half = stream.try_clone()?;
        Ok(Conn {
            reader: LineReader::new(read_half, max_line),
            writer: stream,
            max_line,
            open: true,
            broken: false,
        })
    }

    /// Writes `text` whole within [`WRITE_STALL`]; a failure marks the
    /// connection closed, and nothing more is written after one (each
    /// later message would wait its own [`WRITE_STALL`] otherwise: a client
    /// that stopped reading held its slot for several of them).
    pub(crate) fn send(&mut self, text: &str) -> io::Result<()> {
        if self.broken {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "the connection is closed",
            ));
        }
        let r = write_by(
            &mut self.writer,
            text.as_bytes(),
            Instant::now() + WRITE_STALL,
        );
        if r.is_err() {
            self.open = false;
            self.broken = true;
        }
        r
    }
}

/// Writes all of `bytes` to `stream` by `deadline`: each write waits only
/// what is left, so a client that reads a byte now and then cannot stretch
/// one message past the deadline (a socket's own write timeout restarts
/// with every byte that goes out).
fn write_by(stream: &mut TcpStream, mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the client read nothing for {} s", WRITE_STALL.as_secs()),
            ));
        }
        stream.set_write_timeout(Some(left))?;
        match stream.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            // The deadline check above decides.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// What the match loop needs from a remote player beyond [`Bot`].
pub(crate) trait Remote<G: Game>: Bot<G> {
    /// Called once before the first round.
    fn greet(&mut self, _rounds: u32) {}
    /// Called before each round (1-based) with the client's seat.
    fn start_round(&mut self, _round: u32, _seat: Seat, _start: &G) {}
    /// Called after each round with its record and the running score.
    fn after_round(&mut self, _round: u32, _rec: &GameRecord, _seat: Seat, _score: &Wdl) {}
    /// Called once at the end of the match.
    fn finish(&mut self, _score: &Wdl) {}
    /// Whether more rounds can be played on this connection.
    fn is_open(&self) -> bool;
    /// Whether the client has sent anything at all on this connection.
    fn has_spoken(&self) -> bool;
    /// The name the client declared (`name NAME`), once it has.
    fn declared_name(&self) -> Option<&str>;
}

/// The name in a `name NAME` line, checked; `None` for any other line.
fn name_line(raw: &[u8]) -> Option<Result<String, String>> {
    let line = crate::protocol::NameLine::parse(std::str::from_utf8(raw).ok()?)?;
    Some(super::check_client_name(&line.0))
}

/// A forfeit for a client that went away (or must be dropped).
fn gone(detail: &str) -> Forfeit {
    Forfeit::new(ForfeitReason::Crash, detail)
}

/// A client speaking protocol v1: exactly the lines a stdio bot gets.
pub(crate) struct V1Remote {
    conn: Conn,
    kind: GameKind,
    time: TimeControl,
    first_turn: bool,
    last_us: Option<u64>,
    /// Whether a line was read on this connection: only the first may be
    /// `name NAME`.
    heard: bool,
    name: Option<String>,
}

impl V1Remote {
    /// A v1 client of game `kind` with this time control.
    pub(crate) fn new(conn: Conn, kind: GameKind, time: TimeControl) -> Self {
        V1Remote {
            conn,
            kind,
            time,
            first_turn: true,
            last_us: None,
            heard: false,
            name: None,
        }
    }
}

impl<G: Game> Bot<G> for V1Remote {
    fn name(&self) -> &str {
        "client"
    }

    fn begin(&mut self, seat: Seat, time: &TimeControl) -> Result<(), Forfeit> {
        self.time = *time;
        self.first_turn = true;
        let line = format!(
            "{}\n",
            Command::<G>::Begin(Begin::new(self.kind, seat, time.move_ms))
        );
        self.conn
            .send(&line)
            .map_err(|e| gone(&format!("the client went away: {e}")))
    }

    fn select_move(&mut self, pos: &G) -> Result<G::Move, Forfeit> {
        self.last_us = None;
        self.conn
            .send(&format!("{}\n", Command::Turn(pos)))
            .map_err(|e| gone(&format!("the client went away: {e}")))?;
        let clock = Instant::now();
        // A client may start a fresh bot process for every round, as
        // `referee connect` does with external bots: each round's first
        // turn has the start-up allowance. A client that goes away is a
        // crash whenever it happens: it is connected, so it did start.
        let allow = Allowance {
            move_ms: self.time.move_ms,
            startup_ms: if std::mem::replace(&mut self.first_turn, false) {
                self.time.startup_ms
            } else {
                0
            },
            replied_before: true,
            slack_ms: self.time.slack_ms,
        };
        let mut got = self.conn.reader.read_line(Some(clock + allow.limit()));
        // The connection's first line may declare the client's name (sent
        // on connecting, so before any turn): taken, and the reply read on.
        if !std::mem::replace(&mut self.heard, true) {
            if let Some(named) = got.as_deref().ok().and_then(name_line) {
                // A name that does not check is ignored: the client keeps
                // its address, as one that declares nothing.
                self.name = named.ok();
                got = self.conn.reader.read_line(Some(clock + allow.limit()));
            }
        }
        let elapsed = clock.elapsed();
        self.last_us = Some(elapsed.as_micros() as u64);
        let heard = match got {
            Ok(raw) => Heard::Line(raw, elapsed),
            // After any of these the connection cannot be trusted any more
            // (a late reply would be read as the answer to a later turn).
            Err(LineError::Timeout) => {
                self.conn.open = false;
                Heard::Deadline(Vec::new())
            }
            Err(LineError::TooLong) => {
                self.conn.open = false;
                Heard::TooLong(Vec::new())
            }
            Err(LineError::Closed) | Err(LineError::Io(_)) => {
                self.conn.open = false;
                Heard::Closed(Vec::new())
            }
        };
        protocol::judge_reply(heard, pos, &allow).map_err(|mut b| {
            if b.reason == ForfeitReason::Crash {
                "the client disconnected during the game".clone_into(&mut b.detail);
            }
            b.into_forfeit(pos)
        })
    }

    fn last_move_time_us(&self) -> Option<u64> {
        self.last_us
    }

    fn end(&mut self, result: BotResult) {
        // The client may already be gone; the round is recorded either way.
        let _ = self.conn.send(&format!("{}\n", Command::<G>::End(result)));
    }
}

impl<G: Game> Remote<G> for V1Remote {
    fn is_open(&self) -> bool {
        self.conn.open
    }

    fn has_spoken(&self) -> bool {
        self.conn.reader.received() > 0
    }

    fn declared_name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// A person with `nc`: boards, prompts, error lines and the running score.
pub(crate) struct TextRemote<G: Game> {
    conn: Conn,
    idle: Duration,
    bot: String,
    rounds: u32,
    seat: Seat,
    /// The last position the client was shown.
    shown: G,
    /// The name the person gave (`name NAME`).
    name: Option<String>,
}

impl<G: Game> TextRemote<G> {
    /// A text client playing against `bot`, dropped after `idle` without input.
    pub(crate) fn new(conn: Conn, idle: Duration, bot: &str, opts: &GameOptions) -> Self {
        TextRemote {
            conn,
            idle,
            bot: bot.to_string(),
            rounds: 0,
            seat: Seat::One,
            shown: G::start(opts),
            name: None,
        }
    }

    fn say(&mut self, text: &str) -> Result<(), Forfeit> {
        self.conn
            .send(text)
            .map_err(|e| gone(&format!("the client went away: {e}")))
    }

    /// Shows the server's move that led from the last shown position to
    /// `pos` (found among the legal moves, so it works for every game).
    fn show_server_move(&mut self, pos: &G) -> Result<(), Forfeit> {
        if *pos == self.shown {
            return Ok(());
        }
        let mv = self.shown.legal_moves().into_iter().find(|&m| {
            let mut p = self.shown.clone();
            p.play_unchecked(m);
            p == *pos
        });
        let head = match mv {
            Some(m) => format!("The server plays {m}:\n"),
            None => "The board is now:\n".to_string(),
        };
        self.shown = pos.clone();
        self.say(&format!("{head}{}", pos.render()))
    }

    fn help(&self) -> String {
        format!(
            "{}\nTo move, {}. Type 'help' to see this again, 'name YOUR NAME' to be \
             recorded under your name, 'quit' to leave.\n",
            G::RULES,
            G::MOVE_HELP
        )
    }
}

impl<G: Game> Bot<G> for TextRemote<G> {
    fn name(&self) -> &str {
        "client"
    }

    fn select_move(&mut self, pos: &G) -> Result<G::Move, Forfeit> {
        self.show_server_move(pos)?;
        let prompt = format!("Your move (player {}): ", self.seat.number());
        loop {
            self.say(&prompt)?;
            let got = self.conn.reader.read_line(Some(Instant::now() + self.idle));
            let raw = match got {
                Ok(raw) => raw,
                Err(LineError::TooLong) => {
                    let msg = format!(
                        "Error: line too long (at most {} bytes)\n",
                        self.conn.max_line
                    );
                    self.say(&msg)?;
                    continue;
                }
                Err(LineError::Timeout) => {
                    let _ = self.say(&format!(
                        "\nNo input for {} s: you forfeit this round and the connection closes.\n",
                        self.idle.as_secs()
                    ));
                    self.conn.open = false;
                    let mut f = Forfeit::new(ForfeitReason::Timeout, "idle timeout");
                    f.time_us = self.idle.as_micros() as u64;
                    return Err(f);
                }
                Err(LineError::Closed) => {
                    self.conn.open = false;
                    return Err(gone("the client disconnected"));
                }
                Err(LineError::Io(e)) => {
                    self.conn.open = false;
                    return Err(gone(&format!("connection error: {e}")));
                }
            };
            let text = String::from_utf8_lossy(&raw);
            match text.trim() {
                "" => self.say("Error: empty line; enter a move ('help' explains how)\n")?,
                "help" => {
                    let h = self.help();
                    self.say(&h)?;
                }
                t if t.starts_with("name ") => match super::check_client_name(&t[5..]) {
                    Ok(n) => {
                        self.say(&format!("Your rounds are recorded as '{n}'.\n"))?;
                        self.name = Some(n);
                    }
                    Err(e) => self.say(&format!("Error: {e}\n"))?,
                },
                "quit" => {
                    let _ = self.say("Goodbye: you forfeit this round.\n");
                    self.conn.open = false;
                    let mut f = gone("the client quit");
                    f.line = Some("quit".into());
                    return Err(f);
                }
                t => match G::parse_move(t) {
                    Err(e) => self.say(&format!("Error: {e}\n"))?,
                    Ok(mv) => match pos.illegality(mv) {
                        Some(reason) => {
                            self.say(&format!("Error: illegal move {mv}: {reason}\n"))?
                        }
                        None => {
                            let mut next = pos.clone();
                            next.play_unchecked(mv);
                            let board = format!("You play {mv}:\n{}", next.render());
                            self.shown = next;
                            self.say(&board)?;
                            return Ok(mv);
                        }
                    },
                },
            }
        }
    }
}

impl<G: Game> Remote<G> for TextRemote<G> {
    fn greet(&mut self, rounds: u32) {
        self.rounds = rounds;
        let text = format!(
            "Welcome to referee: {} against the bot '{}', {rounds} rounds.\n\
             Scoring: win 1, draw 0.5, loss 0. You move first in odd rounds.\n{}",
            G::KIND,
            self.bot,
            self.help()
        );
        let _ = self.say(&text);
    }

    fn start_round(&mut self, round: u32, seat: Seat, start: &G) {
        self.seat = seat;
        self.shown = start.clone();
        let who = match seat {
            Seat::One => "you are player 1 and move first",
            Seat::Two => "you are player 2; the server moves first",
        };
        let _ = self.say(&format!(
            "\nRound {round} of {}: {who}.\n{}",
            self.rounds,
            start.render()
        ));
    }

    fn after_round(&mut self, round: u32, rec: &GameRecord, seat: Seat, score: &Wdl) {
        if let Ok(last) = rec.final_position.parse::<G>() {
            let _ = self.show_server_move(&last);
        }
        let result = match BotResult::for_seat(rec.outcome(), seat) {
            BotResult::Win => "you win",
            BotResult::Loss => "you lose",
            BotResult::Draw => "draw",
        };
        let how = match &rec.forfeit {
            Some(f) if f.seat == seat => format!(" (you forfeit: {})", f.reason),
            Some(f) => format!(" (the server's bot forfeits: {})", f.reason),
            None => String::new(),
        };
        let _ = self.say(&format!(
            "Round {round} of {}: {result}{how}. Score: you {} : server {}\n",
            self.rounds,
            format_points(score.points()),
            format_points(score.opponent_points())
        ));
    }

    fn finish(&mut self, score: &Wdl) {
        let _ = self.say(&format!(
            "\nFinal score after {} rounds: you {} : server {} ({} won, {} drawn, {} lost). Thanks for playing!\n",
            score.games(),
            format_points(score.points()),
            format_points(score.opponent_points()),
            score.wins,
            score.draws,
            score.losses
        ));
    }

    fn is_open(&self) -> bool {
        self.conn.open
    }

    fn has_spoken(&self) -> bool {
        self.conn.reader.received() > 0
    }

    fn declared_name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}
