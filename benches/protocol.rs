//! External bot overhead: the per-move round trip through the referee's
//! supervision with a compiled bot that answers at once, next to the raw pipe
//! round trip of a tiny echo pair measured in the same run; and whole
//! tictactoe games per second between two compiled bots, process start
//! included.
//!
//! Run: `cargo bench --bench protocol` (needs `cc`; builds bots/c/random_bot.c
//! into target/). Figures go to docs/performance.md.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use referee::bot::external::ExternalBot;
use referee::bot::spec::{ExternalSpec, ResourceLimits};
use referee::bot::{Bot, BotResult, TimeControl};
use referee::game::{Seat, TicTacToe};
use referee::record::Termination;
use referee::referee::{play_game, GameSetup};

const ROUND_TRIPS: usize = 20_000;

fn build_c_bot() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = root.join("target/bench-random_bot");
    let ok = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&out)
        .arg(root.join("bots/c/random_bot.c"))
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "the protocol benchmark needs a C compiler (cc)");
    out
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn summary(label: &str, mut ns: Vec<u64>) -> (u64, u64) {
    ns.sort_unstable();
    let (med, p99) = (percentile(&ns, 0.5), percentile(&ns, 0.99));
    println!(
        "{label:<44} median {:>7.2} µs   p99 {:>7.2} µs   ({} round trips)",
        med as f64 / 1000.0,
        p99 as f64 / 1000.0,
        ns.len()
    );
    (med, p99)
}

/// The raw pipe round trip: one short line to `cat` and back, through plain
/// std pipes with no supervision at all.
fn raw_echo() -> Vec<u64> {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start cat");
    let mut input = child.stdin.take().expect("stdin");
    let mut output = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    let msg = b"turn X...O....\n";
    let mut times = Vec::with_capacity(ROUND_TRIPS);
    for i in 0..ROUND_TRIPS + 1000 {
        let t = Instant::now();
        input.write_all(msg).expect("write");
        line.clear();
        output.read_line(&mut line).expect("read");
        if i >= 1000 {
            times.push(t.elapsed().as_nanos() as u64);
        }
    }
    drop(input);
    let _ = child.wait();
    times
}

/// The referee's round trip: `select_move` on an external bot (format the
/// turn line, write, poll, read, parse, legality check), as a game sees it.
fn supervised(bot_exe: &str) -> Vec<u64> {
    let spec = ExternalSpec::from_command_line(bot_exe).expect("spec");
    let time = TimeControl::default();
    let mut bot = ExternalBot::<TicTacToe>::new(spec, time, 0);
    bot.begin(Seat::Two, &time).expect("start the C bot");
    let pos: TicTacToe = "X...O...X".parse().expect("position");
    let mut times = Vec::with_capacity(ROUND_TRIPS);
    for i in 0..ROUND_TRIPS + 1000 {
        let t = Instant::now();
        bot.select_move(&pos).expect("the C bot replies");
        if i >= 1000 {
            times.push(t.elapsed().as_nanos() as u64);
        }
    }
    bot.end(BotResult::Draw);
    times
}

/// Whole games between two fresh C bot processes on `threads` threads;
/// returns games per second in total and the number of games.
fn games_per_second(spec: &ExternalSpec, threads: usize, seconds: f64) -> (f64, usize) {
    let time = TimeControl::default();
    let start = Instant::now();
    let total: usize = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut games = 0usize;
                    while start.elapsed() < Duration::from_secs_f64(seconds) {
                        let mut a = ExternalBot::<TicTacToe>::new(spec.clone(), time, 0);
                        let mut b = ExternalBot::<TicTacToe>::new(spec.clone(), time, 0);
                        let mut setup = GameSetup::new(games as u64, 0, TicTacToe::new());
                        setup.time = time;
                        let r = play_game(&setup, [&mut a, &mut b], ["a".into(), "b".into()]);
                        assert_eq!(r.termination, Termination::Normal, "{r:?}");
                        games += 1;
                    }
                    games
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).sum()
    });
    (total as f64 / start.elapsed().as_secs_f64(), total)
}

fn main() {
    // `cargo test --benches` runs bench targets without `--bench`: nothing
    // to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let exe = build_c_bot();
    let exe = exe.to_str().expect("utf-8 path").to_string();
    println!(
        "protocol overhead ({} round trips each, after 1000 warm-up)",
        ROUND_TRIPS
    );
    let (raw_med, raw_p99) = summary("raw pipe round trip (cat echo)", raw_echo());
    let (med, p99) = summary("referee select_move with the C bot", supervised(&exe));
    println!(
        "ratio of medians: {:.2}x (target <= 2x); p99 {:.1} µs (target <= 100 µs); raw p99 {:.1} µs",
        med as f64 / raw_med as f64,
        p99 as f64 / 1000.0,
        raw_p99 as f64 / 1000.0
    );
    let spec = ExternalSpec::from_command_line(&exe).expect("spec");
    let mut unlimited = spec.clone();
    unlimited.limits = ResourceLimits {
        memory_mb: Some(0),
        cpu_seconds: Some(0),
        processes: Some(0),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (label, spec, threads) in [
        ("default rlimits (posix_spawn, then prlimit)", &spec, 1),
        ("no rlimits (posix_spawn only)", &unlimited, 1),
        ("default rlimits", &spec, cores),
    ] {
        let (gps, n) = games_per_second(spec, threads, 4.0);
        println!(
            "whole tictactoe games, two C bots, {label}, {threads} thread(s): \
             {gps:.0} games/s = {:.0} per core ({n} games; target >= 500 per core)",
            gps / threads as f64
        );
    }
}
