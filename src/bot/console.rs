//! A student's console program as a [`Bot`] (the Notakto course assignment, part 2): the program
//! plays the assignment's console format, unchanged.
//!
//! referee runs the program and plays it the way a careful TA would at a
//! terminal, only faster: it reads the program's moves from its own
//! `Player N: ` lines, types the opponent's moves (one line each) when the
//! program asks for them, and judges the play against the true position.
//!
//! What is play and what is format:
//! - **Play** (a forfeit when wrong): a move that can be read after the
//!   program's own prompt, legal, in turn and in time; a board that does not
//!   contradict the true position (the cells it shows are the real ones);
//!   an end line that names the true winner; no crash.
//! - **Format** (a [`FormatFinding`] in the game record, never a forfeit):
//!   everything that does not change the moves: trailing whitespace, blank
//!   lines, other spacing, a stray debug line, a board not drawn, a prompt
//!   for the opponent's move of the program's own wording, text after its
//!   move. At the end of the game the whole transcript is compared with the
//!   assignment's byte for byte ([`expected_transcript`]) and the first
//!   difference is kept with a diff.
//!
//! The opponent's move is typed once the program prints the opponent's
//! `Player N: ` prompt, or, for a program with a prompt of its own wording,
//! once it has been silent for [`QUIET`] waiting for input (that prompt is
//! then recognised at once for the rest of the game). The move time runs
//! from the typed line (or, for the first move, the program's start, with
//! the start-up allowance) to the program's move line.
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
use crate::protocol::{Breach, Forfeit, ForfeitReason};

/// Silence after which a program that has not printed the opponent's
/// `Player N: ` prompt is taken to be waiting for the opponent's move.
pub(crate) const QUIET: Duration = Duration::from_millis(150);

/// The most a program may print in one game (a transcript is a few KiB).
const MAX_OUTPUT: usize = 1 << 20;

/// Where `Player {n}:` (and the spaces after it) is in `buf`: its start and
/// end.
fn find_player_prompt(buf: &[u8], n: u8) -> Option<(usize, usize)> {
    let tag = format!("Player {n}:");
    let tag = tag.as_bytes();
    let start = buf.windows(tag.len()).position(|w| w == tag)?;
    let mut end = start + tag.len();
    while end < buf.len() && buf[end] == b' ' {
        end += 1;
    }
    Some((start, end))
}

/// Where `needle` is in `buf`: its start and end.
fn find_bytes(buf: &[u8], needle: &[u8]) -> Option<(usize, usize)> {
    if needle.is_empty() {
        return None;
    }
    buf.windows(needle.len())
        .position(|w| w == needle)
        .map(|s| (s, s + needle.len()))
}

/// A line with its whitespace runs made single spaces, trimmed.
fn squeeze(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a board the program drew is, against the one it should have drawn.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Screen {
    /// Byte for byte the same.
    Same,
    /// The same once whitespace is ignored (trailing spaces, blank lines,
    /// other spacing).
    Whitespace,
    /// The board is there, with these extra lines (a debug print).
    Extra(Vec<String>),
    /// Nothing drawn at all.
    Missing,
    /// A board that is not the position.
    Contradicts,
}

/// Compares the text a program printed before a prompt with the board it
/// should have drawn.
pub(crate) fn compare_screen(expected: &str, got: &str) -> Screen {
    if expected == got {
        return Screen::Same;
    }
    let want: Vec<String> = expected
        .lines()
        .map(squeeze)
        .filter(|l| !l.is_empty())
        .collect();
    let have: Vec<String> = got.lines().map(squeeze).filter(|l| !l.is_empty()).collect();
    if want == have {
        return Screen::Whitespace;
    }
    if have.is_empty() {
        return Screen::Missing;
    }
    // The board's lines in order, with other lines among them.
    let mut extra = Vec::new();
    let mut w = want.iter().peekable();
    for line in &have {
        if w.peek() == Some(&line) {
            w.next();
        } else {
            extra.push(line.clone());
        }
    }
    if w.peek().is_none() {
        Screen::Extra(extra)
    } else {
        Screen::Contradicts
    }
}

/// A short diff of what a program printed against what it should have.
pub(crate) fn short_diff(expected: &str, got: &str) -> String {
    visible_diff(expected, got, 16)
}

/// A unified diff (expected `-`, printed `+`) with whitespace made visible
/// ([`crate::escape::terminal::marked`]), at most `max_lines` lines.
pub fn visible_diff(expected: &str, got: &str, max_lines: usize) -> String {
    let diff = similar::TextDiff::from_lines(expected, got);
    let mut out = vec!["--- expected".to_string(), "+++ printed".to_string()];
    for group in diff.grouped_ops(1) {
        for op in group {
            for change in diff.iter_changes(&op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                out.push(format!(
                    "{sign}{}",
                    crate::escape::terminal::marked(change.value())
                ));
            }
        }
    }
    if out.len() > max_lines {
        let more = out.len() - max_lines;
        out.truncate(max_lines);
        out.push(format!("... ({more} more lines)"));
    }
    out.join("\n")
}

/// Where two transcripts first differ: the byte offset.
fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Whether two transcripts are the same once trailing whitespace (at the
/// ends of lines and of the whole) is ignored.
pub fn same_but_trailing_whitespace(a: &str, b: &str) -> bool {
    let lines = |t: &str| -> Vec<String> {
        t.trim_end()
            .lines()
            .map(|l| l.trim_end().to_string())
            .collect()
    };
    lines(a) == lines(b)
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
    /// The game's start and the moves played in it so far.
    start: Option<G>,
    moves: Vec<G::Move>,
    moved: bool,
    last_time_us: Option<u64>,
    /// Everything the program printed in this game, and how much of it has
    /// been read as screens, prompts and moves.
    out: Vec<u8>,
    cursor: usize,
    /// The program's own prompt for the opponent's move, once seen.
    own_prompt: Option<Vec<u8>>,
    /// Format notes, with the move number of the first.
    notes: Vec<String>,
    first_note_turn: Option<usize>,
    /// Whether the game ended on the board with the program still playing
    /// (only then is the whole transcript compared).
    finished: bool,
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
            start: None,
            moves: Vec::new(),
            moved: false,
            last_time_us: None,
            out: Vec::new(),
            cursor: 0,
            own_prompt: None,
            notes: Vec::new(),
            first_note_turn: None,
            finished: false,
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

    /// The reason for a program that died or stopped answering: start-up
    /// before its first move, else `later`.
    fn died(&self, later: ForfeitReason) -> ForfeitReason {
        if self.moved {
            later
        } else {
            ForfeitReason::Startup
        }
    }

    fn note(&mut self, turn: usize, text: String) {
        if self.notes.len() < 8 && !self.notes.contains(&text) {
            self.notes.push(text);
        }
        self.first_note_turn.get_or_insert(turn);
    }

    /// What the program printed and has not been read yet.
    fn unread(&self) -> &[u8] {
        &self.out[self.cursor..]
    }

    /// Reads what the program prints next, waiting no later than `deadline`.
    fn read_some(&mut self, deadline: Instant) -> std::io::Result<Reply> {
        let Some(p) = self.process.as_mut() else {
            return Ok(Reply::Closed(Vec::new()));
        };
        let reply = p.read_until(|b| (!b.is_empty()).then_some(b.len()), deadline)?;
        match &reply {
            Reply::Line(b, _) | Reply::Closed(b) | Reply::Timeout(b) | Reply::TooLong(b) => {
                self.out.extend_from_slice(b);
            }
        }
        Ok(reply)
    }

    /// Checks a board the program drew against `expected`: a contradiction
    /// forfeits, anything else is at most a format note.
    fn check_screen(&mut self, expected: &G, screen: &[u8], turn: usize) -> Result<(), Forfeit> {
        let got = String::from_utf8_lossy(screen).replace("\r\n", "\n");
        let want = expected.render();
        match compare_screen(&want, &got) {
            Screen::Same => {}
            Screen::Whitespace => self.note(
                turn,
                "the board's whitespace differs from the assignment's".into(),
            ),
            Screen::Extra(lines) => {
                let shown: Vec<String> = lines.iter().take(2).map(|l| format!("`{l}`")).collect();
                self.note(
                    turn,
                    format!("extra output beside the board: {}", shown.join(", ")),
                );
            }
            Screen::Missing => self.note(turn, format!("no board drawn before move {turn}")),
            Screen::Contradicts => {
                let detail = format!(
                    "the board it printed before move {turn} is not the position:\n{}",
                    short_diff(&want, &got)
                );
                return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(screen), expected));
            }
        }
        Ok(())
    }

    /// Waits for the program to ask for the opponent's move (in `shown`,
    /// where the opponent is to move) and returns what it drew before.
    fn await_opponent_prompt(&mut self, shown: &G) -> Result<Vec<u8>, Forfeit> {
        let other = self.seat.other().number();
        let own = self.seat.number();
        let turn = shown.ply() + 1;
        let deadline = Instant::now() + Duration::from_millis(self.time.move_ms);
        loop {
            let rest = self.unread();
            let asked = find_player_prompt(rest, other)
                .or_else(|| self.own_prompt.as_ref().and_then(|p| find_bytes(rest, p)));
            let moved_again = find_player_prompt(rest, own);
            match (asked, moved_again) {
                (Some((s, e)), m) if m.is_none_or(|(ms, _)| ms > s) => {
                    let screen = rest[..s].to_vec();
                    self.cursor += e;
                    return Ok(screen);
                }
                (_, Some(_)) => {
                    let line = rest.to_vec();
                    let detail = format!(
                        "it printed another move of its own (`Player {own}: `) where player \
                         {other} was to move: a move out of turn"
                    );
                    return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&line), shown));
                }
                _ => {}
            }
            let before = self.out.len();
            let now = Instant::now();
            let wait = (now + QUIET).min(deadline.max(now));
            match self.read_some(wait) {
                Ok(Reply::Timeout(_)) if self.out.len() == before => {
                    // Silent: waiting for input after a prompt of its own.
                    let rest = self.unread().to_vec();
                    let cut = rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                    let prompt = rest[cut..].to_vec();
                    let text = String::from_utf8_lossy(&prompt).trim().to_string();
                    let said = if text.is_empty() {
                        "no prompt".to_string()
                    } else {
                        format!("`{text}`")
                    };
                    self.note(
                        turn,
                        format!(
                            "asked for player {other}'s move with {said}, not `Player {other}: `"
                        ),
                    );
                    if !prompt.trim_ascii().is_empty() {
                        self.own_prompt = Some(prompt);
                    }
                    self.cursor = self.out.len();
                    return Ok(rest[..cut].to_vec());
                }
                Ok(Reply::Closed(_)) => {
                    let line = self.unread().to_vec();
                    let reason = self.died(ForfeitReason::Crash);
                    let detail = "the program ended before its game did".to_string();
                    return Err(self.forfeit(reason, detail, Some(&line), shown));
                }
                Ok(_) => {
                    if self.out.len() > MAX_OUTPUT {
                        let detail = "more than 1 MiB of output in one game".to_string();
                        return Err(self.forfeit(ForfeitReason::Malformed, detail, None, shown));
                    }
                }
                Err(e) => {
                    let detail = format!("reading its output failed: {e}");
                    return Err(self.forfeit(ForfeitReason::Crash, detail, None, shown));
                }
            }
        }
    }

    /// Types the opponent's move that leads from the program's position to
    /// `pos`, once the program asks for it.
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
        let screen = self.await_opponent_prompt(&shown)?;
        self.check_screen(&shown, &screen, shown.ply() + 1)?;
        let deadline = Instant::now() + Duration::from_millis(self.time.move_ms);
        let line = format!("{mv}\n");
        if let Some(p) = self.process.as_mut() {
            if let Err(e) = p.send(line.as_bytes(), deadline) {
                let detail = format!("could not type the opponent's move: {e}");
                return Err(self.forfeit(ForfeitReason::Crash, detail, None, pos));
            }
        }
        self.moves.push(mv);
        self.shown = Some(pos.clone());
        Ok(())
    }

    /// Waits for the program's move line (`Player N: <move>`) until
    /// `deadline`, and returns what it drew before it and the line's text
    /// after the prompt.
    fn await_move(
        &mut self,
        pos: &G,
        deadline: Instant,
        limit_ms: u64,
        t0: Instant,
    ) -> Result<(Vec<u8>, Vec<u8>), Forfeit> {
        let own = self.seat.number();
        let other = self.seat.other().number();
        loop {
            let rest = self.unread();
            if let Some((s, e)) = find_player_prompt(rest, own) {
                if let Some(nl) = rest[e..].iter().position(|&b| b == b'\n') {
                    let asked_other = find_player_prompt(&rest[..s], other);
                    if asked_other.is_some() {
                        let line = rest.to_vec();
                        let detail = format!(
                            "it asked for player {other}'s move (`Player {other}: `) where it \
                             was to move itself: out of turn"
                        );
                        return Err(self.forfeit(
                            ForfeitReason::Malformed,
                            detail,
                            Some(&line),
                            pos,
                        ));
                    }
                    let screen = rest[..s].to_vec();
                    let text = rest[e..e + nl].to_vec();
                    self.cursor += e + nl + 1;
                    return Ok((screen, text));
                }
            }
            match self.read_some(deadline) {
                Ok(Reply::Timeout(_)) => {
                    let first = !self.moved;
                    let reason = if first {
                        ForfeitReason::Startup
                    } else {
                        ForfeitReason::Timeout
                    };
                    let part = self.unread().to_vec();
                    let said = if find_player_prompt(&part, own).is_some() {
                        "no move line".to_string()
                    } else if self.out.is_empty() {
                        // Silent from the start: often a protocol bot,
                        // waiting for its `begin` line.
                        format!(
                            "nothing printed (no board, no `Player {own}: ` move line); a bot \
                             that waits for referee's `begin` line is a protocol bot: grade it \
                             with --form protocol"
                        )
                    } else {
                        format!("no `Player {own}: ` move line")
                    };
                    let time_us = t0.elapsed().as_micros() as u64;
                    let mut f = self.forfeit(
                        reason,
                        format!("{said} within {limit_ms} ms"),
                        Some(&part),
                        pos,
                    );
                    f.time_us = time_us;
                    f.overrun_us = time_us.saturating_sub(limit_ms * 1000);
                    return Err(f);
                }
                Ok(Reply::Closed(_)) => {
                    let part = self.unread().to_vec();
                    let reason = self.died(ForfeitReason::Crash);
                    let detail = "the program ended instead of moving".to_string();
                    return Err(self.forfeit(reason, detail, Some(&part), pos));
                }
                Ok(_) => {
                    if self.out.len() > MAX_OUTPUT {
                        let detail = "more than 1 MiB of output in one game".to_string();
                        return Err(self.forfeit(ForfeitReason::Malformed, detail, None, pos));
                    }
                }
                Err(e) => {
                    let reason = self.died(ForfeitReason::Crash);
                    let detail = format!("reading its output failed: {e}");
                    return Err(self.forfeit(reason, detail, None, pos));
                }
            }
        }
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
        self.start = None;
        self.moves.clear();
        self.out.clear();
        self.cursor = 0;
        self.own_prompt = None;
        self.notes.clear();
        self.first_note_turn = None;
        self.finished = false;
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
            self.start = Some(start.clone());
            self.shown = Some(start);
        }
        let first = !self.moved;
        let started = self
            .process
            .as_ref()
            .map(BotProcess::started)
            .unwrap_or_else(Instant::now);
        self.type_opponent_move(pos)?;
        // The clock runs from the opponent's line (or the start).
        let t0 = if first && pos.ply() == 0 {
            started
        } else {
            Instant::now()
        };
        let limit_ms =
            self.time.move_ms + self.time.slack_ms + if first { self.time.startup_ms } else { 0 };
        let deadline = t0 + Duration::from_millis(limit_ms);
        let (screen, line) = self.await_move(pos, deadline, limit_ms, t0)?;
        let time_us = t0.elapsed().as_micros() as u64;
        // Off move: a sandboxed program is frozen until the opponent's move
        // is typed in (what it prints meanwhile waits in its pipe).
        if let Some(p) = self.process.as_mut() {
            p.pause();
        }
        self.moved = true;
        self.last_time_us = Some(time_us);
        let turn = pos.ply() + 1;
        self.check_screen(pos, &screen, turn)?;
        let Ok(text) = std::str::from_utf8(&line) else {
            let detail = "its move is not valid UTF-8".to_string();
            return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&line), pos));
        };
        let text = text.trim_end_matches('\r');
        let word = text.split_whitespace().next().unwrap_or("");
        let mv = match G::parse_move(word) {
            Ok(mv) => mv,
            Err(e) => {
                let detail = format!(
                    "cannot read a move after `Player {}: `: {e}",
                    self.seat.number()
                );
                return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&line), pos));
            }
        };
        if text.trim() != word {
            self.note(turn, format!("text after its move: `{}`", text.trim()));
        }
        if let Some(reason) = pos.illegality(mv) {
            return Err(self.forfeit(ForfeitReason::Illegal, reason, Some(&line), pos));
        }
        let mut next = pos.clone();
        next.play_unchecked(mv);
        self.moves.push(mv);
        self.shown = Some(next);
        Ok(mv)
    }

    fn last_move_time_us(&self) -> Option<u64> {
        self.last_time_us
    }

    /// The program must finish the game as the true game finished: when the
    /// opponent made the last move it is typed in; then its end line must
    /// name the true winner, and it must not crash.
    fn confirm_end(&mut self, final_pos: &G, outcome: Outcome) -> Result<(), Forfeit> {
        if self.process.is_none() {
            return Ok(());
        }
        if self.shown.is_some() {
            self.type_opponent_move(final_pos)?;
        }
        let turn = final_pos.ply() + 1;
        // Nothing more will be typed: a program that reads on sees the end
        // of its input.
        if let Some(p) = self.process.as_mut() {
            p.close_stdin();
        }
        let deadline = Instant::now() + Duration::from_millis(self.time.move_ms);
        let exited = loop {
            match self.read_some(deadline) {
                Ok(Reply::Closed(_)) => break true,
                Ok(Reply::Timeout(_)) | Err(_) => break false,
                Ok(_) if self.out.len() > MAX_OUTPUT => break false,
                Ok(_) => {}
            }
        };
        let status = match self.process.as_mut() {
            Some(p) if exited => {
                p.finish(b"", END_GRACE);
                p.exit_status()
            }
            _ => None,
        };
        let tail = String::from_utf8_lossy(self.unread()).replace("\r\n", "\n");
        let (want_number, want_line) = match outcome {
            Outcome::Win(s) => (Some(s.number()), format!("Player {} wins game", s.number())),
            Outcome::Draw => (None, "Draw game".to_string()),
        };
        // The end line as the program wrote it: `Player N wins` or a draw.
        let said = tail.lines().find_map(|l| {
            let l = l.trim();
            if let Some(rest) = l.strip_prefix("Player ") {
                let n = rest.chars().next()?.to_digit(10)?;
                rest[1..]
                    .trim_start()
                    .starts_with("wins")
                    .then_some(Some(n as u8))
            } else if l.starts_with("Draw") {
                Some(None)
            } else {
                None
            }
        });
        let crashed = status.as_deref().is_some_and(|s| s != "exited with code 0");
        match said {
            Some(n) if n == want_number => {}
            Some(n) => {
                let named = match n {
                    Some(n) => format!("player {n} as the winner"),
                    None => "a draw".to_string(),
                };
                let detail = format!(
                    "it announced {named}, but the game ended `{want_line}`:\n{}",
                    short_diff(
                        &(final_pos.final_render().unwrap_or_default() + &want_line + "\n"),
                        &tail
                    )
                );
                let line = tail.into_bytes();
                return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&line), final_pos));
            }
            None if crashed => {
                let detail = format!(
                    "it {} at the end of the game instead of printing `{want_line}`",
                    status.unwrap_or_default()
                );
                let line = tail.into_bytes();
                return Err(self.forfeit(ForfeitReason::Crash, detail, Some(&line), final_pos));
            }
            None => self.note(turn, format!("no end line `{want_line}`")),
        }
        if let Some(board) = final_pos.final_render() {
            let screen: String = tail
                .lines()
                .filter(|l| !l.trim().starts_with("Player ") && !l.trim().starts_with("Draw"))
                .map(|l| format!("{l}\n"))
                .collect();
            if let Screen::Contradicts = compare_screen(&board, &screen) {
                let detail = format!(
                    "the last board it printed is not the final position:\n{}",
                    short_diff(&board, &screen)
                );
                let line = tail.into_bytes();
                return Err(self.forfeit(ForfeitReason::Malformed, detail, Some(&line), final_pos));
            }
        }
        if !exited {
            self.note(turn, "it did not exit after the game ended".into());
        } else if crashed {
            self.note(
                turn,
                format!("it {} after the game", status.unwrap_or_default()),
            );
        }
        if let Some(mut p) = self.process.take() {
            p.kill();
        }
        self.finished = true;
        Ok(())
    }

    fn end(&mut self, _result: crate::protocol::BotResult) {
        if let Some(mut p) = self.process.take() {
            p.kill();
        }
    }

    fn format_finding(&mut self) -> Option<FormatFinding> {
        if !self.finished {
            return None;
        }
        let start = self.start.as_ref()?;
        let expected = expected_transcript(start, &self.moves, self.seat);
        let got = String::from_utf8_lossy(&self.out).into_owned();
        if expected == got && self.notes.is_empty() {
            return None;
        }
        // The move before which the transcripts part: the prompts before
        // the first differing byte.
        let at = first_difference(expected.as_bytes(), got.as_bytes());
        let prompts = (1..=2u8)
            .map(|n| {
                let tag = format!("Player {n}: ");
                expected[..at].matches(&tag).count()
            })
            .sum::<usize>();
        let by_bytes = (prompts + 1).min(self.moves.len() + 1);
        let turn = if expected == got {
            self.first_note_turn.unwrap_or(by_bytes)
        } else {
            by_bytes
        };
        Some(FormatFinding {
            seat: self.seat,
            turn,
            trailing_whitespace_only: same_but_trailing_whitespace(&expected, &got),
            notes: self.notes.clone(),
            diff: if expected == got {
                String::new()
            } else {
                visible_diff(&expected, &got, 24)
            },
        })
    }
}

/// A console program's output that differs from the assignment's transcript
/// without changing its moves (trailing spaces, a stray debug line, a
/// missing board): what grading reports as format, apart from the play.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

/// What an assignment program that plays `program_seat` prints, stdin
/// piped, for a game from `start` through `moves` (ended or not): the
/// board, then each move's prompt, the program's own moves after its prompt
/// and nothing after the other player's (typed input is not echoed), and
/// for a finished game the last board and the end line.
pub fn expected_transcript<G: Game>(start: &G, moves: &[G::Move], program_seat: Seat) -> String {
    let mut pos = start.clone();
    let mut out = pos.render();
    for &mv in moves {
        let seat = pos.to_move();
        out.push_str(&format!("Player {}: ", seat.number()));
        if seat == program_seat {
            out.push_str(&format!("{mv}\n"));
        }
        pos.play_unchecked(mv);
        if !pos.is_over() {
            out.push_str(&pos.render());
        }
    }
    if let Some(o) = pos.outcome() {
        if let Some(board) = pos.final_render() {
            out.push_str(&board);
        }
        match o {
            Outcome::Win(s) => out.push_str(&format!("Player {} wins game\n", s.number())),
            Outcome::Draw => out.push_str("Draw game\n"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_prompts_but_not_end_lines() {
        assert_eq!(
            find_player_prompt(b"A\n0 1 2\nPlayer 1: ", 1),
            Some((8, 18))
        );
        assert_eq!(find_player_prompt(b"Player 2 wins game\n", 2), None);
        assert_eq!(find_player_prompt(b"Player 2:A6\n", 2), Some((0, 9)));
        assert_eq!(find_player_prompt(b"Player 1: A6\n", 2), None);
    }

    #[test]
    fn screens_tell_format_from_play() {
        let want = "A      B\n0 1 2  0 1 2\n";
        assert_eq!(compare_screen(want, want), Screen::Same);
        assert_eq!(
            compare_screen(want, "A      B \n0 1 2  0 1 2 \n\n"),
            Screen::Whitespace
        );
        assert_eq!(
            compare_screen(want, "A B\n0 1 2 0 1 2\n"),
            Screen::Whitespace
        );
        assert_eq!(
            compare_screen(want, "debug: 3\nA      B\n0 1 2  0 1 2\n"),
            Screen::Extra(vec!["debug: 3".into()])
        );
        assert_eq!(compare_screen(want, ""), Screen::Missing);
        assert_eq!(
            compare_screen(want, "A      B\nX 1 2  0 1 2\n"),
            Screen::Contradicts
        );
        assert_eq!(compare_screen(want, "A\n0 1 2\n"), Screen::Contradicts);
    }

    #[test]
    fn whitespace_is_made_visible() {
        let d = visible_diff("A      B\n0 1 2\n", "A      B \n0 1 2\n", 16);
        assert!(d.contains("-A      B\n+A      B·"), "{d}");
        // A program's escape sequences are shown, not run.
        let d = visible_diff("A\n", "\x1b[2JA\n", 16);
        assert!(d.contains("+\\x1b[2JA"), "{d}");
        assert!(same_but_trailing_whitespace("a\nb\n", "a \nb"));
        assert!(!same_but_trailing_whitespace("a\nb\n", "a\n\nb\n"));
    }

    #[test]
    fn diffs_are_short() {
        let long_a: String = (0..100).map(|i| format!("{i}\n")).collect();
        let long_b: String = (0..100).map(|i| format!("{i} \n")).collect();
        let d = short_diff(&long_a, &long_b);
        assert!(d.lines().count() <= 17, "{d}");
        assert!(d.ends_with("more lines)"), "{d}");
    }
}
