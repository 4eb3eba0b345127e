//! An external program as a [`Bot`]: the protocol (docs/protocol.md) over a
//! supervised [`BotProcess`], a fresh process per game, or one kept across
//! games in a [`ProcessPool`] for bots that declare `reuse`.
//!
//! Every failure of the bot becomes a [`Forfeit`] through
//! [`protocol::judge_reply`], with the evidence attached (raw line, time,
//! exit status, the game's stderr tail), and the process group is killed
//! at once.

use std::collections::VecDeque;
use std::io::Write as _;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::manifest::ExternalSpec;
use super::process::BotProcess;
use super::{Bot, TimeControl};
use crate::game::{Game, Outcome, Seat};
use crate::protocol::{self, Allowance, Begin, BotProtocol, BotResult, Breach, Command, Heard};
use crate::protocol::{Forfeit, ForfeitReason};

/// How long a bot has to exit after `end` before it is killed.
pub(crate) const END_GRACE: Duration = Duration::from_secs(1);

/// How many bytes of stderr a forfeit record keeps.
pub(crate) const FORFEIT_STDERR_TAIL: usize = 2048;

/// The forfeit for breach `b` in `pos` with everything known about the
/// bot's process: it is killed at once, and its exit status and the
/// current game's stderr tail go into the record.
pub(crate) fn process_forfeit<G: Game>(process: Option<BotProcess>, b: Breach, pos: &G) -> Forfeit {
    let mut f = b.into_forfeit(pos);
    if let Some(mut p) = process {
        p.kill();
        f.exit_status = p.exit_status();
        f.stderr_tail = p.game_stderr_tail(FORFEIT_STDERR_TAIL);
    }
    f
}

/// Kept processes one worker holds at most by default: enough for the bots
/// of the games it plays in a row, few enough to bound memory.
pub(crate) const DEFAULT_POOL: usize = 8;

/// Bot processes kept between games (bots that declare `reuse`), owned by
/// one worker so that a process plays one game at a time. At most `cap`
/// processes wait; beyond that the least recently used is stopped. Dropping
/// the last handle closes every kept process's stdin and reaps it.
#[derive(Clone, Debug)]
pub struct ProcessPool(Arc<Mutex<PoolInner>>);

#[derive(Debug)]
struct PoolInner {
    idle: VecDeque<(u64, BotProcess)>,
    cap: usize,
    reused: u64,
}

impl ProcessPool {
    /// A pool keeping at most `cap` idle processes.
    pub fn new(cap: usize) -> Self {
        ProcessPool(Arc::new(Mutex::new(PoolInner {
            idle: VecDeque::new(),
            cap: cap.max(1),
            reused: 0,
        })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolInner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A kept process of the bot `key` that is still running, if one
    /// waits. Output it wrote after `end` is dropped (docs/protocol.md).
    fn take(&self, key: u64) -> Option<BotProcess> {
        loop {
            let mut p = {
                let mut inner = self.lock();
                let i = inner.idle.iter().position(|(k, _)| *k == key)?;
                inner.idle.remove(i).map(|(_, p)| p)?
            };
            p.take_stray();
            if p.is_alive() {
                self.lock().reused += 1;
                return Some(p);
            }
        }
    }

    /// How many games were played by a kept process so far.
    pub fn reused(&self) -> u64 {
        self.lock().reused
    }

    /// Keeps `p` for the bot `key`'s next game.
    fn put(&self, key: u64, p: BotProcess) {
        let evicted = {
            let mut inner = self.lock();
            inner.idle.push_back((key, p));
            if inner.idle.len() > inner.cap {
                inner.idle.pop_front()
            } else {
                None
            }
        };
        if let Some((_, mut old)) = evicted {
            old.finish(b"", Duration::from_millis(100));
        }
    }

    /// Processes waiting in the pool.
    pub fn len(&self) -> usize {
        self.lock().idle.len()
    }

    /// Whether no process waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for PoolInner {
    fn drop(&mut self) {
        // Closing stdin ends a well-behaved bot; all of them get their grace
        // at once, then what is left is killed.
        for (_, p) in self.idle.iter_mut() {
            p.send_end(b"", Duration::from_millis(200));
        }
        for (_, p) in self.idle.iter_mut() {
            p.wait_exit();
        }
    }
}

/// A bot that runs an external program speaking the protocol.
///
/// `begin` starts the process (or takes a kept one); `end` sends the end
/// line and closes its stdin (or keeps the process); dropping the bot waits
/// for the exit (at most [`END_GRACE`] after `end`) and kills whatever is
/// left of its process group.
#[derive(Debug)]
pub struct ExternalBot<G: Game> {
    spec: ExternalSpec,
    time: TimeControl,
    seed: u64,
    seat: Seat,
    keep: Option<(ProcessPool, u64)>,
    process: Option<BotProcess>,
    /// The process was kept from an earlier game (not started for this one).
    reused: bool,
    /// The bot has replied in this game.
    replied: bool,
    ending: Option<BotProcess>,
    last_time_us: Option<u64>,
    first_reply_us: Option<u64>,
    exited_cleanly: Option<bool>,
    exit_status: Option<String>,
    line: Vec<u8>,
    /// A CodinGame bot's position after its own last move, to find the
    /// opponent's move it is told.
    after_own: Option<G>,
    _game: PhantomData<fn() -> G>,
}

impl<G: Game> ExternalBot<G> {
    /// A bot for `spec` whose game has seed `seed`; nothing is started
    /// until `begin`.
    pub fn new(spec: ExternalSpec, time: TimeControl, seed: u64) -> Self {
        let time = spec.time.map_or(time, |p| p.control());
        ExternalBot {
            spec,
            time,
            seed,
            seat: Seat::One,
            keep: None,
            process: None,
            reused: false,
            replied: false,
            ending: None,
            last_time_us: None,
            first_reply_us: None,
            exited_cleanly: None,
            exit_status: None,
            line: Vec::with_capacity(512),
            after_own: None,
            _game: PhantomData,
        }
    }

    /// Plays with processes kept in `pool` under `key` (when the spec
    /// declares `reuse`; otherwise the pool is not used).
    pub fn keeping(mut self, pool: &ProcessPool, key: u64) -> Self {
        if self.spec.reuse && !self.codingame() {
            self.keep = Some((pool.clone(), key));
        }
        self
    }

    /// Whether the bot speaks CodinGame's protocol: one process per game,
    /// no `begin` or `end` line, CodinGame's turn input.
    fn codingame(&self) -> bool {
        self.spec.speaks() == BotProtocol::CodinGame
    }

    /// The move the opponent played last, which a CodinGame bot is told:
    /// `None` before the first move of the game. The game must have begun
    /// at the empty board (what is before the bot's first turn is played
    /// from there, and later the bot's own move is known).
    fn opponent_move(&self, pos: &G) -> Result<Option<G::Move>, Breach> {
        let before = match &self.after_own {
            Some(p) => p.clone(),
            None if pos.ply() == 0 => return Ok(None),
            None => G::start(&pos.options()),
        };
        before
            .legal_moves()
            .into_iter()
            .find(|&m| {
                let mut p = before.clone();
                p.play_unchecked(m);
                p == *pos
            })
            .map(Some)
            .ok_or_else(|| {
                Breach::new(
                    ForfeitReason::Startup,
                    "a CodinGame bot is told only its opponent's last move, so it plays whole \
                     games from the empty board, and this game began elsewhere",
                )
            })
    }

    /// Time from starting the process to its first reply's newline, in µs
    /// (for a process started in this game).
    pub(crate) fn startup_us(&self) -> Option<u64> {
        self.first_reply_us
    }

    /// After `end`: whether the bot exited by itself within the grace
    /// period (waits for that, at most [`END_GRACE`]). `None` for a kept
    /// process, which stays.
    pub fn exited_cleanly(&mut self) -> Option<bool> {
        self.settle();
        self.exited_cleanly
    }

    /// After the process is gone: its exit status in words (after `end`,
    /// waits for the exit, at most [`END_GRACE`]).
    pub(crate) fn exit_status(&mut self) -> Option<&str> {
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

    /// A process for this game: a kept one that is still alive, or a new one.
    fn acquire(&mut self) -> Result<(), Forfeit> {
        if let Some(p) = self.keep.as_ref().and_then(|(pool, key)| pool.take(*key)) {
            self.process = Some(p);
            self.reused = true;
            return Ok(());
        }
        self.reused = false;
        match BotProcess::spawn(&self.spec, self.seed) {
            Ok(p) => {
                self.process = Some(p);
                Ok(())
            }
            Err(e) => {
                let program = self.spec.command.first().cloned().unwrap_or_default();
                let b = Breach::not_started(&program, &e);
                Err(Forfeit::new(b.reason, b.detail))
            }
        }
    }

    /// Starts (or takes) the process and sends the begin line.
    fn start_game(&mut self) -> Result<(), Forfeit> {
        self.acquire()?;
        self.after_own = None;
        if self.codingame() {
            // CodinGame's bots get no line before their first turn.
            if let Some(p) = self.process.as_mut() {
                p.mark_game_start();
            }
            return Ok(());
        }
        let begin = Begin {
            seed: self.spec.reuse.then_some(self.seed),
            ..Begin::new(G::KIND, self.seat, self.time.move_ms)
        };
        let deadline =
            Instant::now() + Duration::from_millis(self.time.move_ms + self.time.startup_ms);
        if let Some(p) = self.process.as_mut() {
            p.mark_game_start();
            self.line.clear();
            let _ = writeln!(self.line, "{}", Command::<G>::Begin(begin));
            // A bot that is already gone shows when its first reply is
            // awaited; a write error here changes nothing.
            let _ = p.send(&self.line, deadline);
            // Sandboxed, it takes no CPU until its first turn (its start-up
            // goes on then, within the start-up allowance).
            p.pause();
        }
        Ok(())
    }

    fn allowance(&self, fresh: bool) -> Allowance {
        Allowance {
            move_ms: self.time.move_ms,
            startup_ms: if fresh { self.time.startup_ms } else { 0 },
            replied_before: !fresh,
            slack_ms: self.time.slack_ms,
        }
    }

    /// Kills the process and builds the forfeit with everything known.
    fn forfeit(&mut self, b: Breach, pos: &G) -> Forfeit {
        let had_process = self.process.is_some();
        let mut f = process_forfeit(self.process.take(), b, pos);
        if had_process {
            self.exit_status = f.exit_status.clone();
        } else {
            f.exit_status = self.exit_status.clone();
        }
        f
    }

    /// Asks the process for its move in `pos`: what it sent, judged.
    fn ask(&mut self, pos: &G) -> Result<G::Move, Breach> {
        // A CodinGame bot's whole turn input, or `None` for a v1 bot's turn line.
        let turn = if self.codingame() {
            let last = self.opponent_move(pos)?;
            let text = protocol::codingame_turn(last, pos).ok_or_else(|| {
                Breach::new(
                    ForfeitReason::Startup,
                    format!("CodinGame has no {}", G::KIND),
                )
            })?;
            Some(text)
        } else {
            None
        };
        let Some(p) = self.process.as_mut() else {
            let heard = Heard::Closed(Vec::new());
            let allow = self.allowance(!self.replied && !self.reused);
            return protocol::judge_reply(heard, pos, &allow);
        };
        let fresh = p.answered() == 0;
        let allow = Allowance {
            move_ms: self.time.move_ms,
            startup_ms: if fresh { self.time.startup_ms } else { 0 },
            replied_before: !fresh,
            slack_ms: self.time.slack_ms,
        };
        let limit = allow.limit();
        // CodinGame's clock: a process started for this game may take its
        // launch allowance to start before the turn's clock runs.
        let launch = (fresh && !self.reused && self.time.launch_ms > 0)
            .then(|| p.started() + Duration::from_millis(self.time.launch_ms));
        // Whatever waits in the pipe now was written when no reply was due.
        let stray = p.take_stray();
        let protocol = self.spec.speaks();
        let heard = if !stray.is_empty() {
            Heard::Stray(stray)
        } else {
            self.line.clear();
            match &turn {
                Some(text) => self.line.extend_from_slice(text.as_bytes()),
                None => {
                    let _ = writeln!(self.line, "{}", Command::Turn(pos));
                }
            }
            let now = Instant::now();
            match p.send(&self.line, now.max(launch.unwrap_or(now)) + limit) {
                Err(e) => Heard::Unsent(e),
                Ok(()) => {
                    // The clock starts once the whole turn line is in the
                    // pipe; on CodinGame's clock, once the bot has read it.
                    let written = Instant::now();
                    let t0 = match launch {
                        Some(end) => p.await_first_read(written, end),
                        None => written,
                    };
                    match p.read_line(t0 + limit) {
                        Ok(reply) => reply.heard(t0),
                        Err(_) => Heard::Closed(Vec::new()),
                    }
                }
            }
        };
        // Not on move any more: a sandboxed bot is frozen until its next
        // turn, so that it takes no CPU from its opponent.
        p.pause();
        if let Heard::Line(_, elapsed) = &heard {
            let us = elapsed.as_micros() as u64;
            self.last_time_us = Some(us);
            if fresh && !self.reused {
                self.first_reply_us = Some(p.started().elapsed().as_micros() as u64);
            }
        }
        let judged = protocol::judge_reply_in(protocol, heard, pos, &allow);
        if let Ok(mv) = judged {
            p.count_answer();
            self.replied = true;
            if turn.is_some() {
                let mut after = pos.clone();
                after.play_unchecked(mv);
                self.after_own = Some(after);
            }
        }
        judged
    }
}

impl<G: Game> Bot<G> for ExternalBot<G> {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn begin(&mut self, seat: Seat, time: &TimeControl) -> Result<(), Forfeit> {
        self.settle();
        self.time = self.spec.time.map_or(*time, |p| p.control());
        self.seat = seat;
        self.replied = false;
        self.process = None;
        self.start_game()
    }

    fn select_move(&mut self, pos: &G) -> Result<G::Move, Forfeit> {
        self.last_time_us = None;
        match self.ask(pos) {
            Ok(mv) => Ok(mv),
            Err(b) if b.reason == ForfeitReason::Crash && self.reused && !self.replied => {
                // A kept process that ended before this game's first reply
                // exited after the previous `end`, which a bot may do: a
                // fresh process plays this game.
                if let Some(mut old) = self.process.take() {
                    old.kill();
                }
                self.keep = None;
                self.start_game()?;
                self.ask(pos).map_err(|b| self.forfeit(b, pos))
            }
            Err(b) => Err(self.forfeit(b, pos)),
        }
    }

    fn last_move_time_us(&self) -> Option<u64> {
        self.last_time_us
    }

    fn confirm_end(&mut self, final_pos: &G, _outcome: Outcome) -> Result<(), Forfeit> {
        let Some(p) = self.process.as_mut() else {
            return Ok(());
        };
        let stray = p.take_stray();
        if stray.is_empty() {
            return Ok(());
        }
        let allow = self.allowance(false);
        let protocol = self.spec.speaks();
        match protocol::judge_reply_in(protocol, Heard::Stray(stray), final_pos, &allow) {
            Err(b) => Err(self.forfeit(b, final_pos)),
            Ok(_) => Ok(()),
        }
    }

    fn end(&mut self, result: BotResult) {
        let Some(mut p) = self.process.take() else {
            return;
        };
        if self.codingame() {
            // CodinGame ends a bot's process after the game; it gets no
            // `end` line (its loop would read on for ever).
            p.kill();
            self.exit_status = p.exit_status();
            return;
        }
        self.line.clear();
        let _ = writeln!(self.line, "{}", Command::<G>::End(result));
        match &self.keep {
            Some((pool, key)) => {
                let sent = p.send(&self.line, Instant::now() + END_GRACE);
                if sent.is_ok() && p.is_alive() {
                    // Frozen while it waits for its next game.
                    p.pause();
                    pool.put(*key, p);
                } else {
                    p.kill();
                    self.exit_status = p.exit_status();
                }
            }
            None => {
                // Waiting for the exit is deferred (see `settle`), so that the
                // other bot of the game gets its `end` without waiting for this one.
                p.send_end(&self.line, END_GRACE);
                self.ending = Some(p);
            }
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
    fn sh_spec(script: &str) -> ExternalSpec {
        let body = format!(
            "while read cmd pos; do case $cmd in turn) {script};; end) exit 0;; esac; done"
        );
        let mut spec = ExternalSpec::from_command_line("sh").unwrap();
        spec.command = vec!["sh".into(), "-c".into(), body];
        spec
    }

    fn time() -> TimeControl {
        TimeControl::new(2000, 2000)
    }

    fn sh_bot(script: &str) -> ExternalBot<TicTacToe> {
        let mut bot = ExternalBot::new(sh_spec(script), time(), 1);
        bot.begin(Seat::One, &time()).unwrap();
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
        assert!(f.detail.contains("no reply was due"), "{f:?}");
        assert_eq!(f.line.as_deref(), Some("5\\n"));
    }

    #[test]
    fn a_second_line_at_the_end_of_the_game_is_malformed_too() {
        let mut bot = sh_bot("printf '4\\n5\\n'");
        bot.select_move(&TicTacToe::new()).unwrap();
        let end: TicTacToe = "XXXOO....".parse().unwrap();
        let f = bot.confirm_end(&end, Outcome::Win(Seat::One)).unwrap_err();
        assert_eq!(f.reason, ForfeitReason::Malformed, "{f:?}");
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

    #[test]
    fn a_kept_process_plays_the_next_game_and_gets_its_seed() {
        // The bot echoes the begin line's seed field to stderr; the same
        // process id in both games means one process played them.
        let script = "while read cmd a b c d; do case $cmd in \
                      begin) echo \"$d\" >&2;; turn) echo 4;; end) ;; esac; done";
        let mut spec = ExternalSpec::from_command_line("sh").unwrap();
        spec.command = vec!["sh".into(), "-c".into(), script.into()];
        spec.reuse = true;
        let pool = ProcessPool::new(4);
        let mut pids = Vec::new();
        for seed in [11u64, 12] {
            let mut bot =
                ExternalBot::<TicTacToe>::new(spec.clone(), time(), seed).keeping(&pool, 0);
            bot.begin(Seat::One, &time()).unwrap();
            pids.push(bot.process.as_ref().map(BotProcess::pid));
            bot.select_move(&TicTacToe::new()).unwrap();
            let p = bot.process.as_mut().unwrap();
            assert!(p.game_stderr_tail(100).contains(&format!("seed={seed}")));
            bot.end(BotResult::Draw);
        }
        assert_eq!(pids[0], pids[1]);
        assert_eq!(pool.len(), 1);
    }

    #[test]
    fn a_kept_process_that_exits_after_end_is_started_again_without_forfeit() {
        let mut spec = sh_spec("echo 4");
        spec.reuse = true;
        let pool = ProcessPool::new(4);
        for seed in 0..3 {
            let mut bot =
                ExternalBot::<TicTacToe>::new(spec.clone(), time(), seed).keeping(&pool, 0);
            bot.begin(Seat::One, &time()).unwrap();
            let mv = bot.select_move(&TicTacToe::new());
            assert!(mv.is_ok(), "game {seed}: {mv:?}");
            bot.end(BotResult::Draw);
        }
    }
}
