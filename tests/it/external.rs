//! External bots (issue 3): supervision and forfeits with a fixture bot that
//! misbehaves on a flag, the example bots through `referee check` and
//! `referee match`, and no process left behind.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use referee::bot::external::ExternalBot;
use referee::bot::manifest::ExternalSpec;
use referee::bot::{Bot, BuiltinSpec, TimeControl};
use referee::game::{Game, Seat, TicTacToe};
use referee::play::record::{GameRecord, Termination};
use referee::play::referee::{play_game, GameSetup};
use referee::protocol::BotResult;
use referee::protocol::{Forfeit, ForfeitReason};

use crate::common::{referee, root};

/// A fresh, empty scratch directory for one test, removed when dropped
/// (even when the test fails).
fn scratch(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("referee-ext-{tag}-"))
        .tempdir()
        .expect("create scratch dir")
}

fn fixture_command(args: &str, pidfile: &Path) -> String {
    format!(
        "python3 {} {args} --pidfile {}",
        root().join("tests/fixtures/fixture_bot.py").display(),
        pidfile.display()
    )
}

/// Whether `pid` is gone. A zombie whose parent is not us counts as gone:
/// it is dead, and only init can reap it.
fn is_gone(pid: i32) -> Result<(), String> {
    if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err() {
        return Ok(());
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name: state, ppid, ...
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let me = std::process::id().to_string();
    if fields.first() == Some(&"Z") && fields.get(1) != Some(&me.as_str()) {
        Ok(())
    } else {
        Err(stat)
    }
}

/// Asserts that every process the fixture recorded is gone. SIGKILL is
/// delivered asynchronously: a grandchild (not ours to reap) may take a
/// moment to finish dying, so it gets a second.
fn assert_no_process_left(pidfile: &Path) {
    let text = std::fs::read_to_string(pidfile).unwrap_or_default();
    assert!(!text.is_empty(), "the fixture recorded no pid");
    for line in text.lines() {
        let pid: i32 = line.split_whitespace().next().unwrap().parse().unwrap();
        let until = Instant::now() + Duration::from_secs(1);
        while let Err(stat) = is_gone(pid) {
            assert!(
                Instant::now() < until,
                "process {pid} survived the game: {stat}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Wraps a bot and remembers how long its last `select_move` call took, as
/// the game sees it (kill and clean-up included): in a forfeited game, the
/// forfeited move.
struct Timed<B> {
    inner: B,
    last: Duration,
}

impl<B: Bot<TicTacToe>> Bot<TicTacToe> for Timed<B> {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn begin(&mut self, seat: Seat, time: &TimeControl) -> Result<(), Forfeit> {
        self.inner.begin(seat, time)
    }
    fn select_move(&mut self, pos: &TicTacToe) -> Result<referee::game::tictactoe::Cell, Forfeit> {
        let t = Instant::now();
        let r = self.inner.select_move(pos);
        self.last = t.elapsed();
        r
    }
    fn last_move_time_us(&self) -> Option<u64> {
        self.inner.last_move_time_us()
    }
    fn end(&mut self, result: BotResult) {
        self.inner.end(result)
    }
}

struct Played {
    record: GameRecord,
    /// The duration of the last move asked for (the forfeit, if any).
    last: Duration,
}

/// Plays the fixture (as player 1) against the built-in random bot.
fn play_fixture(tag: &str, args: &str, move_ms: u64, startup_ms: u64) -> Played {
    let tmp = scratch(tag);
    let dir = tmp.path().to_path_buf();
    let pidfile = dir.join("pids");
    let spec = ExternalSpec::from_command_line(&fixture_command(args, &pidfile)).unwrap();
    let time = TimeControl::new(move_ms, startup_ms);
    let mut me = Timed {
        inner: ExternalBot::<TicTacToe>::new(spec, time, 0),
        last: Duration::ZERO,
    };
    let mut other = BuiltinSpec::parse("random").make::<TicTacToe>(5).unwrap();
    let mut setup = GameSetup::new(0, 1, TicTacToe::new());
    setup.time = time;
    let record = play_game(
        &setup,
        [&mut me, &mut other],
        ["fixture".into(), "random".into()],
    );
    let last = me.last;
    drop(me);
    assert_no_process_left(&pidfile);
    Played { record, last }
}

fn forfeit_of(p: &Played) -> &Forfeit {
    match &p.record.forfeit {
        Some(f) => f,
        None => panic!("expected a forfeit: {:?}", p.record),
    }
}

fn assert_forfeit(p: &Played, reason: ForfeitReason, move_number: usize) -> &Forfeit {
    let f = forfeit_of(p);
    assert_eq!(f.reason, reason, "{f:?}");
    assert_eq!(f.seat, Seat::One);
    assert_eq!(f.move_number, move_number, "{f:?}");
    assert_eq!(p.record.termination, Termination::Forfeit(reason));
    assert_eq!(p.record.winner, Some(Seat::Two));
    assert!(!f.position.is_empty());
    f
}

/// The wide-margin timing assert: the game never waits more than 400 ms
/// past a bot's limit (a loaded 2-core machine can delay the kill and the
/// clean-up by tens of milliseconds; the slow fixture answers 500 ms past
/// its limit, so waiting for it would still fail).
fn assert_within(p: &Played, limit_ms: u64) {
    let cap = Duration::from_millis(limit_ms + 400);
    assert!(
        p.last > Duration::ZERO && p.last <= cap,
        "the forfeited move took {:?} (> {cap:?})",
        p.last
    );
}

#[test]
fn slow_reply_past_the_limit_times_out() {
    let p = play_fixture("slow", "slow --turn 2 --delay 1.5", 1000, 2000);
    let f = assert_forfeit(&p, ForfeitReason::Timeout, 3);
    assert!(f.time_us >= 1_000_000, "{f:?}");
    assert_eq!(f.overrun_us, f.time_us - 1_000_000);
    assert_eq!(
        f.exit_status.as_deref(),
        Some("killed by the referee (SIGKILL)")
    );
    assert_within(&p, 1000);
}

#[test]
fn reply_at_sixty_percent_of_the_limit_is_fine() {
    let p = play_fixture("sixty", "slow --turn 2 --delay 0.6", 1000, 2000);
    assert_eq!(p.record.termination, Termination::Normal, "{:?}", p.record);
    let slow = p.record.times_us.iter().copied().max().unwrap();
    assert!(slow >= 600_000, "times {:?}", p.record.times_us);
}

#[test]
fn crash_mid_game_is_a_crash_with_status_and_stderr() {
    let p = play_fixture("crash", "crash --turn 2", 1000, 2000);
    let f = assert_forfeit(&p, ForfeitReason::Crash, 3);
    assert_eq!(f.exit_status.as_deref(), Some("exited with code 3"));
    assert!(f.stderr_tail.contains("crashing on purpose"), "{f:?}");
}

#[test]
fn garbage_and_bad_utf8_are_malformed() {
    let p = play_fixture("garbage", "garbage", 1000, 2000);
    let f = assert_forfeit(&p, ForfeitReason::Malformed, 1);
    assert_eq!(f.line.as_deref(), Some("hello world"));
    let p = play_fixture("utf8", "badutf8", 1000, 2000);
    let f = assert_forfeit(&p, ForfeitReason::Malformed, 1);
    assert_eq!(f.line.as_deref(), Some("\\xff\\xfe4"));
    assert!(f.detail.contains("UTF-8"), "{f:?}");
}

#[test]
fn illegal_move_keeps_the_raw_line() {
    let p = play_fixture("illegal", "illegal --turn 2", 1000, 2000);
    let f = assert_forfeit(&p, ForfeitReason::Illegal, 3);
    assert_eq!(f.line.as_deref(), Some("0"));
    assert!(f.detail.contains("occupied"), "{f:?}");
}

#[test]
fn hang_ignoring_sigterm_is_killed_in_time() {
    let p = play_fixture("hang", "hang --turn 2", 300, 2000);
    assert_forfeit(&p, ForfeitReason::Timeout, 3);
    assert_within(&p, 300);
}

#[test]
fn two_hundred_megabytes_without_newline_is_malformed() {
    let p = play_fixture("flood", "flood", 1000, 2000);
    let f = assert_forfeit(&p, ForfeitReason::Malformed, 1);
    let line = f.line.as_deref().unwrap();
    assert!(
        line.starts_with("xxxx") && line.chars().count() <= 201,
        "{line}"
    );
}

#[test]
fn grandchild_holding_stdout_does_not_delay_the_game() {
    // The bot exits without replying while its child keeps stdout open:
    // it is dead, not slow, which its process (not the pipe) tells.
    let p = play_fixture("grandchild", "grandchild --turn 2", 300, 2000);
    let f = assert_forfeit(&p, ForfeitReason::Crash, 3);
    assert_eq!(
        f.exit_status.as_deref(),
        Some("exited with code 0"),
        "{f:?}"
    );
    assert_within(&p, 300);
}

#[test]
fn missing_newline_at_the_deadline_is_a_timeout() {
    let p = play_fixture("nonewline", "nonewline --turn 2", 300, 2000);
    let f = assert_forfeit(&p, ForfeitReason::Timeout, 3);
    assert!(f.detail.contains("newline"), "{f:?}");
    assert!(f.line.is_some());
    assert_within(&p, 300);
}

#[test]
fn ten_megabytes_of_stderr_per_turn_never_blocks() {
    let p = play_fixture("stderr", "stderr", 2000, 2000);
    assert_eq!(p.record.termination, Termination::Normal, "{:?}", p.record);
}

#[test]
fn slow_start_within_the_allowance_is_fine_beyond_it_is_a_timeout() {
    let p = play_fixture("slowstart-ok", "slowstart --delay 0.5", 300, 1500);
    assert_eq!(p.record.termination, Termination::Normal, "{:?}", p.record);
    // Wide enough that a loaded machine still starts Python (which records
    // its pid first) well within it; the bot then sleeps far beyond it.
    let p = play_fixture("slowstart-bad", "slowstart --delay 5", 400, 1000);
    // It is running, so it is a timeout (not a start-up failure), and the
    // record says the limit included the allowance.
    let f = assert_forfeit(&p, ForfeitReason::Timeout, 1);
    assert!(f.detail.contains("start-up allowance"), "{f:?}");
    // The first turn's limit is the move limit plus the start-up allowance.
    assert_within(&p, 400 + 1000);
}

#[test]
fn a_program_that_cannot_start_is_a_startup_forfeit() {
    let spec = ExternalSpec::from_command_line("/nonexistent/referee-bot").unwrap();
    let mut bot = ExternalBot::<TicTacToe>::new(spec, TimeControl::default(), 0);
    let f = bot.begin(Seat::One, &TimeControl::default()).unwrap_err();
    assert_eq!(f.reason, ForfeitReason::Startup);
    assert!(f.detail.contains("could not start"), "{f:?}");
}

#[test]
fn a_bot_that_dies_before_replying_is_a_startup_forfeit() {
    let spec = ExternalSpec::from_command_line("sh -c 'exit 7'").unwrap();
    let time = TimeControl::default();
    let mut bot = ExternalBot::<TicTacToe>::new(spec, time, 0);
    bot.begin(Seat::One, &time).unwrap();
    let f = bot.select_move(&TicTacToe::new()).unwrap_err();
    assert_eq!(f.reason, ForfeitReason::Startup, "{f:?}");
    assert_eq!(f.exit_status.as_deref(), Some("exited with code 7"));
}

#[test]
fn a_bot_that_ignores_end_is_killed_after_a_second() {
    let tmp = scratch("ignore-end");
    let dir = tmp.path().to_path_buf();
    let pidfile = dir.join("pids");
    let spec =
        ExternalSpec::from_command_line(&fixture_command("hang --turn 99", &pidfile)).unwrap();
    let time = TimeControl::default();
    let mut bot = ExternalBot::<TicTacToe>::new(spec, time, 0);
    bot.begin(Seat::One, &time).unwrap();
    bot.select_move(&TicTacToe::new()).unwrap();
    // Keep the process busy so that it never sees `end`.
    let spec2 =
        ExternalSpec::from_command_line("sh -c 'trap \"\" TERM; read x; sleep 30'").unwrap();
    let mut stubborn = ExternalBot::<TicTacToe>::new(spec2, time, 0);
    stubborn.begin(Seat::Two, &time).unwrap();
    let t = Instant::now();
    stubborn.end(BotResult::Draw);
    assert_eq!(stubborn.exited_cleanly(), Some(false));
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "{took:?}"
    );
    bot.end(BotResult::Draw);
    assert_eq!(bot.exited_cleanly(), Some(true));
    assert_no_process_left(&pidfile);
}

fn match_json(bot1: &str, bot2: &str, extra: &[&str]) -> serde_json::Value {
    let out = referee()
        .current_dir(root())
        .args(["match", "tictactoe", bot1, bot2, "--games", "2", "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn match_json_counts_forfeits_by_reason() {
    let tmp = scratch("match-json");
    let dir = tmp.path().to_path_buf();
    let pidfile = dir.join("pids");
    let crash = fixture_command("crash --turn 2", &pidfile);
    let v = match_json(&crash, "random", &["--time-ms", "1000"]);
    let bot = &v["bots"][0];
    assert_eq!(bot["forfeits"]["crash"], 2, "{v}");
    assert_eq!(bot["forfeits"]["timeout"], 0, "{v}");
    assert_eq!(bot["losses"], 2);
    assert_eq!(v["bots"][1]["forfeits"]["crash"], 0);
    assert_no_process_left(&pidfile);

    let out = referee()
        .args(["match", "tictactoe", &crash, "random", "--games", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("forfeits by crash at move 3")
            && text.contains("exited with code 3")
            && text.contains("stderr: fixture: crashing on purpose"),
        "{text}"
    );

    let garbage = fixture_command("garbage", &pidfile);
    let out = referee()
        .args(["match", "tictactoe", &garbage, "random", "--games", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("forfeits by malformed at move 1")
            && text.contains("received \"hello world\""),
        "{text}"
    );
    assert_no_process_left(&pidfile);
}

#[test]
fn bad_bot_names_fail_before_any_game() {
    let out = referee()
        .args([
            "match",
            "tictactoe",
            "no-such-bot-program",
            "random",
            "--games",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-bot-program"), "{err}");

    let tmp = scratch("manifests");
    let dir = tmp.path().to_path_buf();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "name = \"x\"\ncommand = \"sh\"\nspeed = 3\n").unwrap();
    let out = referee()
        .args(["match", "tictactoe", bad.to_str().unwrap(), "random"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml:3:1") && err.contains("speed"),
        "{err}"
    );

    let uttt_only = dir.join("uttt.toml");
    std::fs::write(
        &uttt_only,
        "name = \"u\"\ncommand = \"sh\"\ngames = [\"uttt\"]\n",
    )
    .unwrap();
    let out = referee()
        .args(["match", "tictactoe", uttt_only.to_str().unwrap(), "random"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not play tictactoe"), "{err}");
}

/// Compiles the C example into `dir`; `None` (with a message) when there is
/// no C compiler on this machine.
fn build_c_bot(dir: &Path) -> Option<PathBuf> {
    let exe = dir.join("random_bot");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    match Command::new(&cc)
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(root().join("bots/c/random_bot.c"))
        .status()
    {
        Ok(s) if s.success() => Some(exe),
        Ok(s) => panic!("compiling bots/c/random_bot.c failed: {s}"),
        Err(e) => {
            crate::common::skipped(&format!(
                "the C example bot needs a C compiler ('{cc}': {e})"
            ));
            None
        }
    }
}

fn check_passes(game: &str, bot: &str) {
    let out = referee()
        .current_dir(root())
        .args(["check", game, bot])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!text.contains("FAIL"), "{text}");
    assert!(text.contains("move time: min"), "{text}");
}

/// Runs `referee check` on `bot` for every game.
fn check_passes_all_games(bot: &str) {
    for game in ["tictactoe", "notakto", "uttt"] {
        check_passes(game, bot);
    }
}

#[test]
fn example_bots_pass_check_and_play_a_match() {
    check_passes_all_games("bots/python-random.toml");
    for manifest in ["bots/python-random.toml", "bots/python-heuristic.toml"] {
        check_passes("tictactoe", manifest);
        let v = match_json(manifest, "random", &[]);
        assert_eq!(v["games"], 2);
        assert_eq!(v["bots"][0]["games"], 2);
        let forfeits = &v["bots"][0]["forfeits"];
        for r in ForfeitReason::ALL {
            assert_eq!(forfeits[r.name()], 0, "{manifest}: {v}");
        }
    }
    let tmp = scratch("cbot");
    let dir = tmp.path().to_path_buf();
    if let Some(exe) = build_c_bot(&dir) {
        let exe = exe.to_str().unwrap();
        check_passes_all_games(exe);
        let v = match_json(exe, "python3 bots/python/random_bot.py", &[]);
        assert_eq!(v["bots"][0]["forfeits"]["illegal"], 0, "{v}");
        assert_eq!(v["bots"][1]["forfeits"]["illegal"], 0, "{v}");
    }
}

#[test]
fn check_reports_failures_with_exit_code_one() {
    let tmp = scratch("check-fail");
    let dir = tmp.path().to_path_buf();
    let pidfile = dir.join("pids");
    let out = referee()
        .args([
            "check",
            "tictactoe",
            &fixture_command("illegal --turn 2", &pidfile),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("FAIL") && text.contains("forfeit by illegal"),
        "{text}"
    );
    assert!(text.contains("PASS"), "{text}");
    assert_no_process_left(&pidfile);
}

#[test]
fn bots_lists_the_manifests_in_bots() {
    let out = referee().arg("bots").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "bots/python-random.toml",
        "bots/python-heuristic.toml",
        "bots/c-random.toml",
    ] {
        assert!(text.contains(name), "{text}");
    }
    // A broken manifest is listed with its error, not fatal.
    let tmp = scratch("list");
    let dir = tmp.path().to_path_buf();
    std::fs::write(dir.join("a.toml"), "name = 1\n").unwrap();
    let found = referee::bot::manifest::manifests_in(&dir);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].0.ends_with("a.toml") && found[0].1.is_err(),
        "{found:?}"
    );
}

/// The Python random bot's move lists for every game agree with referee's
/// rules on positions from random games (the games that are compiled in).
#[test]
fn python_random_bot_plays_legal_moves_from_random_positions() {
    let spec = ExternalSpec::from_command_line(&format!(
        "python3 {}",
        root().join("bots/python/random_bot.py").display()
    ))
    .unwrap();
    let time = TimeControl::default();
    let mut bot = ExternalBot::<TicTacToe>::new(spec, time, 0);
    bot.begin(Seat::One, &time).unwrap();
    let mut rng = referee::seed::rng(3);
    for _ in 0..20 {
        let mut pos = TicTacToe::new();
        let plies = rand::Rng::random_range(&mut rng, 0..8);
        for _ in 0..plies {
            if let Some(m) = pos.random_move(&mut rng) {
                pos.play_unchecked(m);
            }
        }
        if pos.is_over() {
            continue;
        }
        let mv = bot.select_move(&pos).unwrap_or_else(|f| panic!("{f}"));
        assert!(pos.is_legal(mv));
    }
    bot.end(BotResult::Draw);
    assert_eq!(bot.exited_cleanly(), Some(true));
}
