//! External bots at full speed and reproducible: processes kept across
//! games, a seed per game, a clean environment, output outside a turn,
//! interruption, and no thread or process left behind.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use referee::bot::external::{ExternalBot, ProcessPool};
use referee::bot::manifest::ExternalSpec;
use referee::bot::{Bot, TimeControl};
use referee::game::{Seat, TicTacToe};
use referee::play::record::{GameRecord, Termination};
use referee::play::referee::{play_game, GameSetup};
use referee::protocol::BotResult;
use referee::protocol::ForfeitReason;

use crate::common::{referee, root, run, stderr, stdout};

fn sh_spec(script: &str) -> ExternalSpec {
    let mut spec = ExternalSpec::from_command_line("sh").unwrap();
    spec.command = vec!["sh".into(), "-c".into(), script.into()];
    spec
}

/// The games of an output folder by id, without the measured times.
fn games(dir: &Path) -> Vec<GameRecord> {
    let text = std::fs::read_to_string(dir.join("games.jsonl")).unwrap();
    let mut v: Vec<GameRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    v.sort_by_key(|r| r.id);
    for r in &mut v {
        r.times_us.clear();
        if let Some(f) = &mut r.forfeit {
            f.time_us = 0;
        }
    }
    v
}

/// A round robin of the Python random bot against itself and the C-free
/// heuristic bot, every bot external, written to `dir`.
fn tournament_file(dir: &Path, reuse: bool) -> PathBuf {
    let bots = root().join("bots");
    let text = format!(
        "game = \"tictactoe\"\ngames_per_pairing = 6\nrandom_plies = 1\nseed = 11\n\
         [[bots]]\nname = \"r1\"\nmanifest = \"{m}\"\nreuse = {reuse}\n\
         [[bots]]\nname = \"r2\"\nmanifest = \"{m}\"\nreuse = {reuse}\n\
         [[bots]]\nname = \"h\"\nmanifest = \"{h}\"\nreuse = {reuse}\n",
        m = bots.join("python-random.toml").display(),
        h = bots.join("python-heuristic.toml").display(),
    );
    let path = dir.join(format!("t-{reuse}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn external_random_bots_give_the_same_games_with_any_jobs_and_with_or_without_reuse() {
    let tmp = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for (reuse, jobs) in [(false, "1"), (false, "2"), (true, "1"), (true, "2")] {
        let file = tournament_file(tmp.path(), reuse);
        let out = tmp.path().join(format!("out-{reuse}-{jobs}"));
        let res = run(&[
            "tournament",
            file.to_str().unwrap(),
            "--jobs",
            jobs,
            "--out",
            out.to_str().unwrap(),
            "--no-report",
        ]);
        assert_eq!(res.status.code(), Some(0), "{}", stderr(&res));
        runs.push(((reuse, jobs), games(&out)));
    }
    let (first_how, first) = &runs[0];
    assert_eq!(first.len(), 18);
    assert!(first.iter().all(|r| r.termination == Termination::Normal));
    // The random bots really are random: not every game is the same.
    let distinct: std::collections::HashSet<_> = first.iter().map(|r| &r.moves).collect();
    assert!(distinct.len() > 3, "{distinct:?}");
    for (how, g) in &runs[1..] {
        assert_eq!(g, first, "{how:?} differs from {first_how:?}");
    }
}

#[test]
fn a_kept_process_plays_many_games_and_one_that_exits_after_end_is_restarted() {
    // This bot keeps a count of the turns it answered in its process and
    // writes it to stderr; it plays the first empty cell.
    let stays = "n=0; while read cmd pos rest; do case $cmd in \
                 turn) n=$((n+1)); echo \"turns $n\" >&2; \
                 i=0; while [ \"$(echo \"$pos\" | cut -c$((i+1)))\" != . ]; do i=$((i+1)); done; \
                 echo $i;; esac; done";
    let mut spec = sh_spec(stays);
    spec.reuse = true;
    let pool = ProcessPool::new(4);
    let time = TimeControl::default();
    for game in 0..4u64 {
        let mut a = ExternalBot::<TicTacToe>::new(spec.clone(), time, game).keeping(&pool, 0);
        let mut b = ExternalBot::<TicTacToe>::new(spec.clone(), time, game).keeping(&pool, 0);
        let setup = GameSetup::new(game, game, TicTacToe::new());
        let rec = play_game(&setup, [&mut a, &mut b], ["a".into(), "b".into()]);
        assert_eq!(rec.termination, Termination::Normal, "{rec:?}");
    }
    // Two processes (one per seat) played all eight places.
    assert_eq!(pool.reused(), 6);
    assert_eq!(pool.len(), 2);
    drop(pool);

    // A bot that declares reuse but exits after `end` is simply started again.
    let mut spec =
        sh_spec("while read cmd pos; do case $cmd in turn) echo 4;; end) exit 0;; esac; done");
    spec.reuse = true;
    let pool = ProcessPool::new(4);
    for game in 0..3u64 {
        let mut a = ExternalBot::<TicTacToe>::new(spec.clone(), time, game).keeping(&pool, 0);
        a.begin(Seat::One, &time).unwrap();
        let mv = a.select_move(&TicTacToe::new());
        assert!(mv.is_ok(), "game {game}: {mv:?}");
        a.end(BotResult::Draw);
    }
}

#[test]
fn a_kept_process_that_dies_mid_game_forfeits_that_game_only() {
    // Crashes on the 5th turn it ever answers: in the second game.
    let script = "n=0; while read cmd pos rest; do case $cmd in turn) n=$((n+1)); \
                  if [ $n = 5 ]; then echo dying >&2; exit 4; fi; \
                  i=0; while [ \"$(echo \"$pos\" | cut -c$((i+1)))\" != . ]; do i=$((i+1)); done; \
                  echo $i;; esac; done";
    let mut spec = sh_spec(script);
    spec.reuse = true;
    let pool = ProcessPool::new(4);
    let time = TimeControl::default();
    let mut results = Vec::new();
    for game in 0..3u64 {
        let mut me = ExternalBot::<TicTacToe>::new(spec.clone(), time, game).keeping(&pool, 0);
        let mut other = referee::bot::BuiltinSpec::parse("greedy")
            .make::<TicTacToe>(game)
            .unwrap();
        let setup = GameSetup::new(game, game, TicTacToe::new());
        let rec = play_game(&setup, [&mut me, &mut other], ["me".into(), "g".into()]);
        results.push(rec);
    }
    let reasons: Vec<_> = results.iter().map(|r| r.termination).collect();
    assert_eq!(reasons[0], Termination::Normal, "{results:?}");
    assert_eq!(
        reasons[1],
        Termination::Forfeit(ForfeitReason::Crash),
        "{results:?}"
    );
    assert_eq!(reasons[2], Termination::Normal, "{results:?}");
    let f = results[1].forfeit.as_ref().unwrap();
    assert_eq!(f.exit_status.as_deref(), Some("exited with code 4"));
    // The stderr tail is that game's, not the whole process's.
    assert_eq!(f.stderr_tail, "dying\n");
}

#[test]
fn output_outside_a_turn_is_malformed_however_the_reads_split() {
    // Player 1 answers its first turn, then writes a second line 0.3 s later,
    // while player 2 (slow) thinks: a separate read from the answer.
    let late = "read b; read t; echo 4; sleep 0.3; echo 5; while read l; do echo 0; done";
    let at_once = "read b; read t; printf '4\\n5\\n'; while read l; do echo 0; done";
    let before = "echo hello; while read cmd pos; do case $cmd in turn) echo 4;; esac; done";
    let slow = "while read cmd pos; do case $cmd in turn) sleep 0.6; echo 0;; esac; done";
    let time = TimeControl::new(2000, 2000);
    // (label, script, its seat, the move it forfeits at). The greeting bot
    // plays second, so its line is in the pipe while the slow bot thinks.
    let cases = [
        ("late", late, Seat::One, 3),
        ("at once", at_once, Seat::One, 3),
        ("before", before, Seat::Two, 2),
    ];
    for (label, script, seat, move_number) in cases {
        let mut a = ExternalBot::<TicTacToe>::new(sh_spec(script), time, 1);
        let mut b = ExternalBot::<TicTacToe>::new(sh_spec(slow), time, 2);
        let setup = GameSetup::new(0, 0, TicTacToe::new());
        let bots: [&mut dyn Bot<TicTacToe>; 2] = match seat {
            Seat::One => [&mut a, &mut b],
            Seat::Two => [&mut b, &mut a],
        };
        let rec = play_game(&setup, bots, ["x".into(), "y".into()]);
        let f = rec
            .forfeit
            .as_ref()
            .unwrap_or_else(|| panic!("{label}: {rec:?}"));
        assert_eq!(f.reason, ForfeitReason::Malformed, "{label}: {f:?}");
        assert_eq!(f.seat, seat, "{label}");
        assert_eq!(f.move_number, move_number, "{label}: {f:?}");
        assert!(f.detail.contains("no reply was due"), "{label}: {f:?}");
    }
}

#[test]
fn a_first_turn_that_hangs_is_a_timeout_even_without_a_start_up_allowance() {
    let spec = sh_spec("read begin; read turn; sleep 30");
    let time = TimeControl::new(300, 0);
    let mut a = ExternalBot::<TicTacToe>::new(spec, time, 1);
    let mut b = referee::bot::BuiltinSpec::parse("random")
        .make::<TicTacToe>(1)
        .unwrap();
    let setup = GameSetup {
        time,
        ..GameSetup::new(0, 0, TicTacToe::new())
    };
    let t = Instant::now();
    let rec = play_game(&setup, [&mut a, &mut b], ["a".into(), "b".into()]);
    assert!(t.elapsed() < Duration::from_secs(5));
    let f = rec.forfeit.unwrap();
    assert_eq!(f.reason, ForfeitReason::Timeout, "{f:?}");
    assert!(!f.detail.contains("start-up"), "{f:?}");
}

#[test]
fn bots_start_with_a_clean_environment_and_check_catches_a_missing_flush() {
    let tmp = tempfile::tempdir().unwrap();
    let bot = tmp.path().join("noflush.py");
    std::fs::write(
        &bot,
        "import sys\nfor line in sys.stdin:\n    w = line.split()\n    \
         if w and w[0] == 'turn':\n        print(w[1].index('.'))\n",
    )
    .unwrap();
    let command = format!("python3 {}", bot.display());
    let check = |extra: &[&str]| {
        let mut args = vec!["check", "tictactoe", command.as_str()];
        args.extend_from_slice(extra);
        referee()
            .args(&args)
            .env("PYTHONUNBUFFERED", "1")
            .output()
            .expect("referee runs")
    };
    // The grader's machine has no PYTHONUNBUFFERED: neither does the bot,
    // whose replies then never leave its buffer (tight limits: it fails
    // whatever the load).
    let res = check(&["--time-ms", "300", "--startup-ms", "300"]);
    assert_eq!(res.status.code(), Some(1), "{}", stdout(&res));
    assert!(stdout(&res).contains("timeout"), "{}", stdout(&res));
    // Asked for, the caller's environment comes through (wide limits: it
    // passes on a loaded machine too).
    let res = check(&["--inherit-env", "--time-ms", "2000", "--startup-ms", "5000"]);
    assert_eq!(res.status.code(), Some(0), "{}", stdout(&res));
}

#[test]
fn check_tests_the_reuse_contract() {
    let res = run(&["check", "tictactoe", "bots/python-random.toml"]);
    assert_eq!(res.status.code(), Some(0), "{}", stdout(&res));
    assert!(
        stdout(&res).contains("PASS  reuse: plays on after end"),
        "{}",
        stdout(&res)
    );
    let tmp = tempfile::tempdir().unwrap();
    // Plays the first empty cell, but exits after `end` although it
    // declares `reuse`.
    std::fs::write(
        tmp.path().join("quit.sh"),
        "while read c p; do case $c in turn) i=0; \
         while [ \"$(echo $p | cut -c$((i+1)))\" != . ]; do i=$((i+1)); done; echo $i;; \
         end) exit 0;; esac; done\n",
    )
    .unwrap();
    let manifest = tmp.path().join("quitter.toml");
    std::fs::write(
        &manifest,
        "name = \"quitter\"\nreuse = true\ncommand = \"sh quit.sh\"\n",
    )
    .unwrap();
    let res = run(&["check", "tictactoe", manifest.to_str().unwrap()]);
    assert_eq!(res.status.code(), Some(1), "{}", stdout(&res));
    assert!(
        stdout(&res).contains("FAIL  reuse: plays on after end"),
        "{}",
        stdout(&res)
    );
}

/// Whether process `pid` still exists (zombies of other parents count as gone).
fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .next();
    !stat.is_empty() && state != Some("Z")
}

#[test]
fn a_signal_kills_every_bot_and_exits_with_128_plus_its_number() {
    // The last case closes referee's stderr first (as when Ctrl-C also
    // ends the `tail` that reads it): telling the user then fails, and the
    // run must stop all the same.
    for (sig, code, close_stderr) in [
        (nix::sys::signal::Signal::SIGINT, 130, false),
        (nix::sys::signal::Signal::SIGTERM, 143, false),
        (nix::sys::signal::Signal::SIGHUP, 129, true),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("pids");
        // Ignores SIGTERM and the end of its input, and never answers.
        let bot = format!(
            "python3 {} hang --turn 1 --pidfile {}",
            root().join("tests/fixtures/fixture_bot.py").display(),
            pidfile.display()
        );
        let mut child = referee()
            .args([
                "match",
                "tictactoe",
                &bot,
                "random",
                "--games",
                "4",
                "--jobs",
                "1",
                "--time-ms",
                "60000",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let pid: i32 = loop {
            let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
            if let Some(p) = text.split_whitespace().next().and_then(|p| p.parse().ok()) {
                break p;
            }
            assert!(Instant::now() < deadline, "the bot never started");
            std::thread::sleep(Duration::from_millis(20));
        };
        // Let it reach the hang.
        std::thread::sleep(Duration::from_millis(300));
        if close_stderr {
            drop(child.stderr.take());
        }
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
        let t = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
                panic!("referee did not stop after {sig}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            status.code(),
            Some(code),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(close_stderr || String::from_utf8_lossy(&out.stderr).contains("interrupted"));
        let until = Instant::now() + Duration::from_secs(2);
        while alive(pid) {
            assert!(Instant::now() < until, "bot {pid} survived referee");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Threads of process `pid` now.
fn threads(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn a_bot_that_escapes_its_group_costs_no_thread_per_game() {
    // Each game's bot leaves a grandchild in a new session that holds its
    // stderr for 3 s (it ends by itself), then plays.
    let bot = "sh -c 'setsid sleep 3 & while read c p; do case $c in turn) \
               i=0; while [ \"$(echo $p | cut -c$((i+1)))\" != . ]; do i=$((i+1)); done; echo $i;; \
               end) exit 0;; esac; done'";
    let mut child = referee()
        .args([
            "match",
            "tictactoe",
            bot,
            "random",
            "--games",
            "40",
            "--jobs",
            "1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut most = 0;
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        most = most.max(threads(child.id()));
        assert!(t.elapsed() < Duration::from_secs(60), "the match hangs");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The main thread, one worker, the signal thread: never one per game.
    assert!(most <= 6, "{most} threads");
}

/// A kept bot that, after `end`, starts a helper that inherits its stdout
/// and then exits a little later: the helper holds the pipe open, so only
/// the process itself tells that the bot is dead.
const LEAVES_A_CHILD_HOLDING_STDOUT: &str = r#"
import subprocess, sys, time
for line in sys.stdin:
    w = line.split()
    if not w:
        continue
    if w[0] == "turn":
        print(w[1].index("."), flush=True)
    elif w[0] == "end":
        subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL)
        time.sleep(0.2)
        sys.exit(0)
"#;

#[test]
fn a_kept_bot_that_exits_after_end_while_its_child_holds_stdout_is_restarted_not_timed_out() {
    let tmp = tempfile::tempdir().unwrap();
    let bot = tmp.path().join("leaver.py");
    std::fs::write(&bot, LEAVES_A_CHILD_HOLDING_STDOUT).unwrap();
    let file = tmp.path().join("t.toml");
    std::fs::write(
        &file,
        format!(
            "game = \"tictactoe\"\ngames_per_pairing = 20\nseed = 3\ntime_ms = 1000\n\
             [[bots]]\nname = \"leaver\"\ncommand = \"python3 {}\"\nreuse = true\n\
             [[bots]]\nname = \"random\"\nbuiltin = \"random\"\n",
            bot.display()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let res = run(&[
        "tournament",
        file.to_str().unwrap(),
        "--jobs",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--no-report",
    ]);
    assert_eq!(res.status.code(), Some(0), "{}", stderr(&res));
    let played = games(&out);
    assert_eq!(played.len(), 20);
    let forfeits: Vec<_> = played.iter().filter_map(|r| r.forfeit.as_ref()).collect();
    assert!(forfeits.is_empty(), "{forfeits:?}");
}
