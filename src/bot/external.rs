//! An external program as a [`Bot`]: protocol v1 (docs/protocol.md) over a
//! supervised [`BotProcess`], a fresh process per game.
//!
//! Every failure of the bot becomes a [`Forfeit`] with the evidence attached
//! (raw line, time, exit status, stderr tail), and the process group is
//! killed at once.

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use super::process::{BotProcess, Reply};
use super::spec::ExternalSpec;
use super::{Bot, BotResult, TimeControl};
use crate::game::{Game, Seat};
use crate::record::{escape_line, Forfeit, ForfeitReason};

/// How long a bot has to exit after `end` before it is killed.
pub const END_GRACE: Duration = Duration::from_secs(1);

/// How many bytes of stderr a forfeit record keeps.
pub const FORFEIT_STDERR_TAIL: usize = 2048;

/// Builds a forfeit with everything known about a bot process: the raw
/// line (escaped), the position, and, after killing the process group at
/// once, its exit status and stderr tail.
pub fn process_forfeit<G: Game>(
    process: Option<BotProcess>,
    reason: ForfeitReason,
    detail: String,
    line: Option<&[u8]>,
    pos: &G,
) -> Forfeit {
    let mut f = Forfeit::new(reason, detail);
    f.line = line.map(escape_line);
    f.position = pos.to_string();
    if let Some(mut p) = process {
        p.kill();
        f.exit_status = p.exit_status();
        f.stderr_tail = p.stderr_tail(FORFEIT_STDERR_TAIL);
    }
    f
}

/// A bot that runs an external program speaking protocol v1.
///
/// `begin` starts the process; `end` sends the end line and closes its
/// stdin; dropping the bot waits for the exit (at most [`END_GRACE`] after
/// `end`) and kills whatever is left of its process group.
#[derive(Debug)]
pub struct ExternalBot<G: Game> {
    spec: ExternalSpec,
    time: TimeControl,
    process: Option<BotProcess>,
    ending: Option<BotProcess>,
    replies: usize,
    last_time_us: Option<u64>,
    first_reply_us: Option<u64>,
    exited_cleanly: Option<bool>,
    exit_status: Option<String>,
    line: Vec<u8>,
    _game: PhantomData<fn() -> G>,
}

impl<G: Game> ExternalBot<G> {
    /// A bot for `spec`; nothing is started until `begin`.
    pub fn new(spec: ExternalSpec, time: TimeControl) -> Self {
        ExternalBot {
            spec,
            time,
            process: None,
            ending: None,
            replies: 0,
            last_time_us: None,
            first_reply_us: None,
            exited_cleanly: None,
            exit_status: None,
            line: Vec::with_capacity(512),
            _game: PhantomData,
        }
    }

    /// Time from starting the process to its first reply's newline, in µs.
    pub fn startup_us(&self) -> Option<u64> {
        self.first_reply_us
    }

    /// After `end`: whether the bot exited by itself within the grace
    /// period (waits for that, at most [`END_GRACE`]).
    pub fn exited_cleanly(&mut self) -> Option<bool> {
        self.settle();
        self.exited_cleanly
    }

    /// After the process is gone: its exit status in words (after `end`,
    /// waits for the exit, at most [`END_GRACE`]).
    pub fn exit_status(&mut self) -> Option<&str> {
        self.settle();
        self.exit_status.as_deref()
    }

    /// Waits for a bot that was sent `end` to exit (or kills it at its
    /// deadline) and records how it went.
    fn settle(&mut self) {
        if let Some(mut p) = self.ending.take() {
            self.exited_cleanly = Some(p.wait_exit());
            self.exit_status = p.exit_status();
        }
    }

    /// The process id of the running bot, if any (its process group id too).
    pub fn pid(&self) -> Option<i32> {
        self.process.as_ref().map(BotProcess::pid)
    }

    /// The bot's kept stderr (first and last 64 KiB), while its process exists.
    pub fn stderr_log(&self) -> String {
        self.process
            .as_ref()
            .map(BotProcess::stderr_log)
            .unwrap_or_default()
    }

    /// Kills the process and builds the forfeit with everything known.
    fn forfeit(
        &mut self,
        reason: ForfeitReason,
        detail: String,
        line: Option<&[u8]>,
        pos: &G,
    ) -> Forfeit {
        let f = process_forfeit(self.process.take(), reason, detail, line, pos);
        if f.exit_status.is_some() {
            self.exit_status = f.exit_status.clone();
        }
        f
    }

    /// Start-up when no reply came yet, else a crash: a bot that dies before
    /// answering anything most likely failed to start.
    fn died_reason(&self) -> ForfeitReason {
        if self.replies == 0 {
            ForfeitReason::Startup
        } else {
            ForfeitReason::Crash
        }
    }
}

impl<G: Game> Bot<G> for ExternalBot<G> {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn begin(&mut self, seat: Seat, time: &TimeControl) -> Result<(), Forfeit> {
        self.settle();
        self.time = *time;
        self.replies = 0;
        self.process = None;
        let mut p = BotProcess::spawn(&self.spec).map_err(|e| {
            let program = self.spec.command.first().cloned().unwrap_or_default();
            Forfeit::new(
                ForfeitReason::Startup,
                format!("could not start '{program}': {e}"),
            )
        })?;
        let line = format!(
            "begin {} {} {}\n",
            G::KIND.name(),
            seat.number(),
            time.move_ms
        );
        let deadline = Instant::now() + Duration::from_millis(time.startup_ms + time.move_ms);
        // A bot that is already gone shows up as a start-up forfeit when its
        // first reply is awaited; a write error here changes nothing.
        let _ = p.send(line.as_bytes(), deadline);
        self.process = Some(p);
        Ok(())
    }

    fn select_move(&mut self, pos: &G) -> Result<G::Move, Forfeit> {
        self.last_time_us = None;
        let first = self.replies == 0;
        let limit_ms = self.time.move_ms + if first { self.time.startup_ms } else { 0 };
        let limit = Duration::from_millis(limit_ms);
        let limit_us = limit_ms * 1000;
        let Some(p) = self.process.as_mut() else {
            let mut f = Forfeit::new(self.died_reason(), "the bot is not running");
            f.position = pos.to_string();
            f.exit_status = self.exit_status.clone();
            return Err(f);
        };
        let started = p.started();
        if p.has_pending_output() {
            let detail = "wrote more than one line for its previous turn".to_string();
            return Err(self.forfeit(ForfeitReason::Malformed, detail, None, pos));
        }
        self.line.clear();
        self.line.extend_from_slice(b"turn ");
        self.line.extend_from_slice(pos.to_string().as_bytes());
        self.line.push(b'\n');
        let sent_deadline = Instant::now() + limit;
        if let Err(e) = p.send(&self.line, sent_deadline) {
            let reason = if e.kind() == std::io::ErrorKind::TimedOut {
                ForfeitReason::Timeout
            } else {
                self.died_reason()
            };
            let detail = format!("could not send the turn line: {e}");
            return Err(self.forfeit(reason, detail, None, pos));
        }
        // The clock starts once the whole turn line is in the pipe.
        let t0 = Instant::now();
        let deadline = t0 + limit;
        let reply = match p.read_line(deadline) {
            Ok(r) => r,
            Err(e) => {
                let detail = format!("reading the reply failed: {e}");
                return Err(self.forfeit(self.died_reason(), detail, None, pos));
            }
        };
        match reply {
            Reply::Line(raw, at) => {
                let us = at.duration_since(t0).as_micros() as u64;
                self.last_time_us = Some(us);
                if us > limit_us {
                    let reason = if first {
                        ForfeitReason::Startup
                    } else {
                        ForfeitReason::Timeout
                    };
                    let mut f = self.forfeit(
                        reason,
                        format!("replied after the {limit_ms} ms limit"),
                        Some(&raw),
                        pos,
                    );
                    f.time_us = us;
                    f.overrun_us = us - limit_us;
                    return Err(f);
                }
                if first {
                    self.first_reply_us = Some(at.duration_since(started).as_micros() as u64);
                }
                let parsed = std::str::from_utf8(&raw)
                    .map_err(|_| "the reply is not valid UTF-8".to_string())
                    .and_then(|text| {
                        let text = text.trim_end_matches('\r').trim();
                        G::parse_move(text).map_err(|e| format!("not a move: {e}"))
                    });
                let with_time = |mut f: Forfeit| {
                    f.time_us = us;
                    f
                };
                match parsed {
                    Err(detail) => Err(with_time(self.forfeit(
                        ForfeitReason::Malformed,
                        detail,
                        Some(&raw),
                        pos,
                    ))),
                    Ok(mv) => match pos.illegality(mv) {
                        // Checked here, not only by the referee, so the record
                        // keeps the raw line and the process dies at once.
                        Some(why) => Err(with_time(self.forfeit(
                            ForfeitReason::Illegal,
                            why,
                            Some(&raw),
                            pos,
                        ))),
                        None => {
                            self.replies += 1;
                            Ok(mv)
                        }
                    },
                }
            }
            Reply::TooLong(prefix) => {
                let detail = format!(
                    "a reply longer than {} bytes without a newline",
                    super::process::MAX_LINE
                );
                let us = t0.elapsed().as_micros() as u64;
                let mut f = self.forfeit(ForfeitReason::Malformed, detail, Some(&prefix), pos);
                f.time_us = us;
                Err(f)
            }
            Reply::Closed(partial) => {
                let us = t0.elapsed().as_micros() as u64;
                let reason = self.died_reason();
                let detail = if reason == ForfeitReason::Startup {
                    "exited before its first reply".to_string()
                } else {
                    "exited or closed its stdout during the game".to_string()
                };
                let line = (!partial.is_empty()).then_some(&partial[..]);
                let mut f = self.forfeit(reason, detail, line, pos);
                f.time_us = us;
                Err(f)
            }
            Reply::Timeout(partial) => {
                let us = t0.elapsed().as_micros() as u64;
                let mut detail = if partial.is_empty() {
                    format!("no reply within {limit_ms} ms")
                } else {
                    format!("no complete line (newline missing) within {limit_ms} ms")
                };
                // The first turn includes the start-up allowance: a bot that
                // has not answered by then did not start in time.
                let reason = if first {
                    detail.push_str(&format!(
                        " ({} ms per move + {} ms start-up allowance)",
                        self.time.move_ms, self.time.startup_ms
                    ));
                    ForfeitReason::Startup
                } else {
                    ForfeitReason::Timeout
                };
                let line = (!partial.is_empty()).then_some(&partial[..]);
                let mut f = self.forfeit(reason, detail, line, pos);
                f.time_us = us;
                f.overrun_us = us.saturating_sub(limit_us);
                Err(f)
            }
        }
    }

    fn last_move_time_us(&self) -> Option<u64> {
        self.last_time_us
    }

    fn end(&mut self, result: BotResult) {
        if let Some(mut p) = self.process.take() {
            let line = format!("end {}\n", result.word());
            // Waiting for the exit is deferred (see `settle`), so that the
            // other bot of the game gets its `end` without waiting for this one.
            p.send_end(line.as_bytes(), END_GRACE);
            self.ending = Some(p);
        }
    }
}

impl<G: Game> Drop for ExternalBot<G> {
    fn drop(&mut self) {
        self.settle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;

    /// A bot written in `sh`: `script` runs once per turn line it reads.
    fn sh_bot(script: &str) -> ExternalBot<TicTacToe> {
        let body = format!(
            "while read cmd pos; do case $cmd in turn) {script};; end) exit 0;; esac; done"
        );
        let mut spec = ExternalSpec::from_command_line("sh").unwrap();
        spec.command = vec!["sh".into(), "-c".into(), body];
        let time = TimeControl {
            move_ms: 2000,
            startup_ms: 2000,
        };
        let mut bot = ExternalBot::new(spec, time);
        bot.begin(Seat::One, &time).unwrap();
        bot
    }

    #[test]
    fn carriage_return_and_spaces_around_a_reply_are_ignored() {
        let mut bot = sh_bot("printf ' 4 \\r\\n'");
        let mv = bot.select_move(&TicTacToe::new()).unwrap();
        assert_eq!(mv.to_string(), "4");
        assert!(bot.startup_us().is_some());
        assert!(bot.last_move_time_us().is_some());
        bot.end(BotResult::Draw);
        assert_eq!(bot.exited_cleanly(), Some(true));
        assert_eq!(bot.exit_status(), Some("exited with code 0"));
    }

    #[test]
    fn a_second_line_for_one_turn_is_malformed_at_the_next_turn() {
        // One printf is one write: both lines arrive in the same read.
        let mut bot = sh_bot("printf '4\\n5\\n'");
        bot.select_move(&TicTacToe::new()).unwrap();
        let pos: TicTacToe = "....X....".parse().unwrap();
        let f = bot.select_move(&pos).unwrap_err();
        assert_eq!(f.reason, ForfeitReason::Malformed, "{f:?}");
        assert!(f.detail.contains("more than one line"), "{f:?}");
    }

    #[test]
    fn an_occupied_cell_is_illegal_and_kills_the_bot() {
        let mut bot = sh_bot("echo 4");
        bot.select_move(&TicTacToe::new()).unwrap();
        let pos: TicTacToe = "X...O....".parse().unwrap();
        let f = bot.select_move(&pos).unwrap_err();
        assert_eq!(f.reason, ForfeitReason::Illegal);
        assert_eq!(f.line.as_deref(), Some("4"));
        assert_eq!(f.position, "X...O....");
        assert_eq!(
            f.exit_status.as_deref(),
            Some("killed by the referee (SIGKILL)")
        );
        // The process is gone: asking again is a crash, not a hang.
        let again = bot.select_move(&pos).unwrap_err();
        assert_eq!(again.reason, ForfeitReason::Crash);
    }
}
