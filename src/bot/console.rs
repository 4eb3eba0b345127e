//! A student's console program as a [`Bot`] (the Notakto course assignment, part 2): the program
//! plays the assignment's console format, unchanged.
//!
//! referee runs the program, reads the boards it prints and its
//! `Player N: ` prompts, takes what it prints after its own prompt as its
//! move, and types the opponent's moves (one line each) after the other
//! player's prompt. Every board it prints is checked against the true
//! position (referee's own `play` drawing) and its end line
//! (`Player N wins game`) against the true result; a mismatch is a
//! `malformed` forfeit with a short diff. The move time runs from the
//! opponent's line (or, for the first move, the program's start, with the
//! start-up allowance) to the program's move line.
//!
//! A console program keeps its own state, so it plays one game per process,
//! from the start position.

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use super::external::{process_forfeit, END_GRACE};
use super::manifest::ExternalSpec;
use super::process::{BotProcess, Reply};
use super::{Bot, TimeControl};
use crate::game::{Game, Outcome, Seat};
use crate::protocol::Breach;
use crate::record::{Forfeit, ForfeitReason};

/// Finds the end of the first `Player N: ` prompt in `buf`.
fn find_prompt(buf: &[u8]) -> Option<usize> {
    buf.windows(10)
        .position(|w| w.starts_with(b"Player ") && w[7].is_ascii_digit() && &w[8..] == b": ")
        .map(|i| i + 10)
}

/// A short diff of what a program printed against what it should have.
pub(crate) fn short_diff(expected: &str, got: &str) -> String {
    let diff = similar::TextDiff::from_lines(expected, got);
    let text = diff
        .unified_diff()
        .context_radius(1)
        .header("expected", "printed")
        .to_string();
    let lines: Vec<&str> = text.lines().take(16).collect();
    lines.join("\n")
}

/// A bot that plays a console program.
pub(crate) struct ConsoleBot<G: Game> {
    spec: ExternalSpec,
    time: TimeControl,
    seed: u64,
    seat: Seat,
    process: Option<BotProcess>,
    /// The position the program's own game is at.
    shown: Option<G>,
    moved: bool,
    last_time_us: Option<u64>,
    _game: PhantomData<fn() -> G>,
}

impl<G: Game> ConsoleBot<G> {
    /// A console bot for `spec`; nothing starts until `begin`.
    pub(crate) fn new(spec: ExternalSpec, time: TimeControl, seed: u64) -> Self {
        ConsoleBot {
            spec,
            time,
            seed,
            seat: Seat::One,
            process: None,
            shown: None,
            moved: false,
            last_time_us: None,
            _game: PhantomData,
        }
    }

    fn forfeit(
        &mut self,
        reason: ForfeitReason,
        detail: String,
        line: Option<&[u8]>,
        pos: &G,
    ) -> Forfeit {
        let b = Breach::new(reason, detail).with_line(line.map(<[u8]>::to_vec).unwrap_or_default());
        process_forfeit(self.process.take(), b, pos)
    }

    /// Reads up to the next prompt, checks the board drawn before it against
    /// `expected` and the prompt's player, and returns nothing on success.
    fn expect_screen(
        &mut self,
        expected: &G,
        prompt_seat: Seat,
        deadline: Instant,
        limit_ms: u64,
    ) -> Result<(), Forfeit> {
        let died = if self.moved {
            ForfeitReason::Crash
        } else {
            ForfeitReason::Startup
        };
        let Some(p) = self.process.as_mut() else {
            return Err(Forfeit::new(died, "the program is not running"));
        };
        let reply = p.read_until(find_prompt, deadline);
        let screen = match reply {
            Ok(Reply::Line(bytes, _)) => bytes,
            Ok(Reply::Timeout(part)) => {
                let reason = if self.moved {
                    ForfeitReason::Timeout
                } else {
                    ForfeitReason::Startup
                };
                let detail = format!("no `Player N: ` prompt within {limit_ms} ms");
                return Err(self.forfeit(reason, detail, Some(&part), expected));
            }
            Ok(Reply::Closed(part)) => {
                let detail = "the program ended before its game did".to_string();
                return Err(self.forfeit(died, detail, Some(&part), expected));
            }
            Ok(Reply::TooLong(part)) => {
                let detail = "more than 64 KiB of output without a prompt".to_string();
                return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&part), expected));
            }
            Err(e) => {
                let detail = format!("reading its output failed: {e}");
                return Err(self.forfeit(died, detail, None, expected));
            }
        };
        let text = String::from_utf8_lossy(&screen).into_owned();
        let prompt = format!("Player {}: ", prompt_seat.number());
        let (board, got_prompt) = text.split_at(text.len().saturating_sub(10));
        let want = expected.render();
        if board != want {
            let detail = format!(
                "the board it printed differs from the position:\n{}",
                short_diff(&want, board)
            );
            return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&screen), expected));
        }
        if got_prompt != prompt {
            let detail = format!("expected the prompt `{prompt}`, got `{got_prompt}`");
            return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&screen), expected));
        }
        Ok(())
    }

    /// Types the opponent's move that leads from the program's position to
    /// `pos`, after checking the program's screen.
    fn type_opponent_move(&mut self, pos: &G) -> Result<(), Forfeit> {
        let Some(shown) = self.shown.clone() else {
            return Ok(());
        };
        if shown == *pos {
            return Ok(());
        }
        let opp = shown.legal_moves().into_iter().find(|&m| {
            let mut n = shown.clone();
            n.play_unchecked(m);
            n == *pos
        });
        let Some(mv) = opp else {
            // Not the bot's fault: the harness asked for a position the
            // program's own game cannot reach in one move.
            let detail = format!(
                "console programs play whole games from the start; cannot reach {pos} from {shown} \
                 in one move (openings and grading from arbitrary positions need a protocol bot)"
            );
            return Err(self.forfeit(ForfeitReason::Malformed, detail, None, pos));
        };
        let deadline = Instant::now() + Duration::from_millis(self.time.move_ms);
        self.expect_screen(&shown, shown.to_move(), deadline, self.time.move_ms)?;
        let line = format!("{mv}\n");
        if let Some(p) = self.process.as_mut() {
            if let Err(e) = p.send(line.as_bytes(), deadline) {
                let detail = format!("could not type the opponent's move: {e}");
                return Err(self.forfeit(ForfeitReason::Crash, detail, None, pos));
            }
        }
        self.shown = Some(pos.clone());
        Ok(())
    }
}

impl<G: Game> Bot<G> for ConsoleBot<G> {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn begin(&mut self, seat: Seat, time: &TimeControl) -> Result<(), Forfeit> {
        self.time = *time;
        self.seat = seat;
        self.moved = false;
        self.shown = None;
        let p = BotProcess::spawn(&self.spec, self.seed).map_err(|e| {
            let program = self.spec.command.first().cloned().unwrap_or_default();
            Forfeit::new(
                ForfeitReason::Startup,
                format!("could not start '{program}': {e}"),
            )
        })?;
        self.process = Some(p);
        Ok(())
    }

    fn select_move(&mut self, pos: &G) -> Result<G::Move, Forfeit> {
        self.last_time_us = None;
        if self.shown.is_none() {
            // The program's game starts from the start position.
            let start = G::start(&pos.options());
            if pos.ply() > 1 || (pos.ply() == 1 && self.seat == Seat::One) {
                let detail = "console programs play whole games from the start position \
                              (no openings)"
                    .to_string();
                return Err(self.forfeit(ForfeitReason::Malformed, detail, None, pos));
            }
            self.shown = Some(start);
        }
        let first = !self.moved;
        let t0 = if first {
            self.process
                .as_ref()
                .map(BotProcess::started)
                .unwrap_or_else(Instant::now)
        } else {
            Instant::now()
        };
        self.type_opponent_move(pos)?;
        // The clock runs from the opponent's line (or the start).
        let t0 = if first && pos.ply() == 0 {
            t0
        } else {
            Instant::now()
        };
        let limit_ms = self.time.move_ms + if first { self.time.startup_ms } else { 0 };
        let deadline = t0 + Duration::from_millis(limit_ms);
        self.expect_screen(pos, self.seat, deadline, limit_ms)?;
        let Some(p) = self.process.as_mut() else {
            return Err(Forfeit::new(
                ForfeitReason::Crash,
                "the program is not running",
            ));
        };
        let reply = p.read_line(deadline);
        let elapsed = t0.elapsed();
        let time_us = elapsed.as_micros() as u64;
        let died = if self.moved {
            ForfeitReason::Crash
        } else {
            ForfeitReason::Startup
        };
        let line = match reply {
            Ok(Reply::Line(line, _)) => line,
            Ok(Reply::Timeout(part)) => {
                let reason = if first {
                    ForfeitReason::Startup
                } else {
                    ForfeitReason::Timeout
                };
                let mut f = self.forfeit(
                    reason,
                    format!("no move line within {limit_ms} ms"),
                    Some(&part),
                    pos,
                );
                f.time_us = time_us;
                f.overrun_us = time_us.saturating_sub(limit_ms * 1000);
                return Err(f);
            }
            Ok(Reply::Closed(part)) => {
                let detail = "the program ended instead of moving".to_string();
                return Err(self.forfeit(died, detail, Some(&part), pos));
            }
            Ok(Reply::TooLong(part)) => {
                let detail = "a move line longer than 64 KiB".to_string();
                return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&part), pos));
            }
            Err(e) => {
                let detail = format!("reading its move failed: {e}");
                return Err(self.forfeit(died, detail, None, pos));
            }
        };
        self.moved = true;
        self.last_time_us = Some(time_us);
        let text = match std::str::from_utf8(&line) {
            Ok(t) => t.trim_end_matches('\r').trim().to_string(),
            Err(_) => {
                let detail = "its move is not valid UTF-8".to_string();
                return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&line), pos));
            }
        };
        let mv = match G::parse_move(&text) {
            Ok(mv) => mv,
            Err(e) => {
                let detail = format!("not a move: {e}");
                return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&line), pos));
            }
        };
        if let Some(reason) = pos.illegality(mv) {
            return Err(self.forfeit(ForfeitReason::Illegal, reason, Some(&line), pos));
        }
        let mut next = pos.clone();
        next.play_unchecked(mv);
        self.shown = Some(next);
        Ok(mv)
    }

    fn last_move_time_us(&self) -> Option<u64> {
        self.last_time_us
    }

    /// The program must finish the game as the true game finished: when the
    /// opponent made the last move it is typed in, and then the program's
    /// end line must name the true winner.
    fn confirm_end(&mut self, final_pos: &G, outcome: Outcome) -> Result<(), Forfeit> {
        if self.process.is_none() {
            return Ok(());
        }
        if self.shown.is_some() {
            self.type_opponent_move(final_pos)?;
        }
        let want = match outcome {
            Outcome::Win(s) => format!("Player {} wins game\n", s.number()),
            Outcome::Draw => "Draw game\n".to_string(),
        };
        // What `referee play` prints after the last move.
        let expected = final_pos.final_render().unwrap_or_default() + &want;
        let deadline = Instant::now() + Duration::from_millis(self.time.move_ms);
        let Some(p) = self.process.as_mut() else {
            return Ok(());
        };
        // Everything up to its exit (or the deadline, for a program that
        // waits for more input after the game).
        let got = match p.read_until(|_| None, deadline) {
            Ok(Reply::Line(b, _) | Reply::Timeout(b) | Reply::Closed(b) | Reply::TooLong(b)) => b,
            Err(_) => Vec::new(),
        };
        let text = String::from_utf8_lossy(&got).replace("\r\n", "\n");
        if text != expected {
            let detail = format!(
                "what it printed after the last move differs from the result:\n{}",
                short_diff(&expected, &text)
            );
            return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&got), final_pos));
        }
        if let Some(mut p) = self.process.take() {
            p.finish(b"", END_GRACE);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_prompts_but_not_end_lines() {
        assert_eq!(find_prompt(b"A\n0 1 2\nPlayer 1: "), Some(18));
        assert_eq!(find_prompt(b"Player 2 wins game\n"), None);
        assert_eq!(find_prompt(b"Player 2: A6\n"), Some(10));
    }

    #[test]
    fn diffs_are_short() {
        let d = short_diff("A      B\n0 1 2\n", "A      B \n0 1 2\n");
        assert!(d.contains("-A      B\n+A      B "), "{d}");
        assert!(d.lines().count() <= 16);
    }
}
