//! External bot overhead: the per-move round trip through the referee's
//! supervision with a compiled bot that answers at once, pinned to one CPU
//! (the default for tournament workers) and not, next to the raw pipe round
//! trip of a tiny echo pair measured in the same run; whole tictactoe games
//! per second between two compiled bots, a fresh process per game and kept
//! processes (`reuse`), each also in the sandbox; and the same for the
//! bundled Python bots.
//!
//! Run: `cargo bench --bench protocol` (needs `cc`; builds bots/c/random_bot.c
//! into target/); `PROTOCOL_ONLY=c`, `sandbox` (the sandbox against the
//! same games without it) or `python` runs one part of the whole-game
//! figures. Figures go to docs/performance.md.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use referee::bot::affinity;
use referee::bot::external::ExternalBot;
use referee::bot::manifest::{ExternalSpec, ResourceLimits, SandboxMode};
use referee::bot::{Bot, BotSpec, TimeControl};
use referee::game::{GameOptions, Seat, TicTacToe};
use referee::play::record::Termination;
use referee::play::runner::{run_games, Entrant, RunConfig};
use referee::play::schedule::{Pairing, Schedule};
use referee::protocol::BotResult;

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
/// With `pinned`, this thread (and so the bot it starts) runs on one CPU,
/// as a tournament worker does by default.
fn supervised(bot_exe: &str, pinned: bool) -> Vec<u64> {
    std::thread::scope(|s| {
        s.spawn(|| {
            if pinned {
                let cpus = affinity::plan(1);
                assert!(!cpus.is_empty(), "CPU affinity is not available here");
                affinity::pin_current_thread(cpus[0]);
            }
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
        })
        .join()
        .expect("bench thread")
    })
}

/// Whole tictactoe games between two external bots, as `referee match`
/// plays them (the runner, its workers and their kept processes), for
/// about `seconds` or at most `max_games`; returns games per second and
/// the number of games.
fn games_per_second(
    specs: [&ExternalSpec; 2],
    jobs: usize,
    affinity: bool,
    seconds: f64,
    max_games: u64,
) -> (f64, u64) {
    let entrants: Vec<Entrant> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| Entrant {
            name: format!("bot{i}"),
            spec: BotSpec::External((*s).clone()),
        })
        .collect();
    let cfg = RunConfig {
        options: GameOptions::default(),
        time: TimeControl::default(),
        random_plies: 0,
        affinity,
    };
    // Calibrate: a short run tells how many games fill the time.
    let run = |n: u64| {
        let pairings: Vec<Pairing> = Schedule::two_bots(n.next_multiple_of(2), 1)
            .pairings()
            .collect();
        let t = Instant::now();
        let recs = run_games::<TicTacToe>(&entrants, &cfg, &pairings, jobs, |_| {});
        let secs = t.elapsed().as_secs_f64();
        for r in &recs {
            assert_eq!(r.termination, Termination::Normal, "{r:?}");
        }
        (n as f64 / secs, n)
    };
    // Calibrate on a run long enough that starting the processes (kept
    // ones start once) does not dominate it.
    let (mut rate, mut n) = run(8.min(max_games));
    while n < max_games && (n as f64) < rate * 0.5 {
        n = (n * 8).min(max_games);
        rate = run(n).0;
    }
    let n = ((rate * seconds) as u64).clamp(8, max_games);
    run(n)
}

fn main() {
    // `cargo test --benches` runs bench targets without `--bench`: nothing
    // to measure then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let exe = build_c_bot();
    let exe = exe.to_str().expect("utf-8 path").to_string();
    println!(
        "protocol overhead ({} round trips each, after 1000 warm-up)",
        ROUND_TRIPS
    );
    let (raw_med, raw_p99) = summary("raw pipe round trip (cat echo)", raw_echo());
    for (label, pinned) in [
        ("referee select_move, C bot, pinned (default)", true),
        ("referee select_move, C bot, not pinned", false),
    ] {
        let (med, p99) = summary(label, supervised(&exe, pinned));
        println!(
            "  ratio of medians {:.2}x (target <= 2x); p99 {:.1} µs (target <= 100 µs); raw p99 {:.1} µs",
            med as f64 / raw_med as f64,
            p99 as f64 / 1000.0,
            raw_p99 as f64 / 1000.0
        );
    }
    let c = ExternalSpec::from_command_line(&exe).expect("spec");
    let mut c_unlimited = c.clone();
    c_unlimited.limits = ResourceLimits {
        memory_mb: Some(0),
        cpu_seconds: Some(0),
        processes: Some(0),
        tmp_mb: None,
    };
    let mut c_reuse = c.clone();
    c_reuse.reuse = true;
    let mut c_boxed = c.clone();
    c_boxed.sandbox = SandboxMode::On;
    let mut c_boxed_reuse = c_reuse.clone();
    c_boxed_reuse.sandbox = SandboxMode::On;
    let sandbox_ok = referee::bot::spec::sandbox_check(SandboxMode::On).is_ok();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let only = std::env::var("PROTOCOL_ONLY").unwrap_or_default();
    if only.is_empty() || only == "c" || only == "sandbox" {
        for (label, spec, jobs, affinity) in [
            (
                "fresh process per game, default rlimits, pinned",
                &c,
                1,
                true,
            ),
            (
                "fresh process per game, default rlimits, not pinned",
                &c,
                1,
                false,
            ),
            (
                "fresh process per game, no rlimits, pinned",
                &c_unlimited,
                1,
                true,
            ),
            (
                "fresh process per game, default rlimits, pinned",
                &c,
                cores,
                true,
            ),
            ("kept processes (reuse), pinned", &c_reuse, 1, true),
            ("kept processes (reuse), not pinned", &c_reuse, 1, false),
        ] {
            if only == "sandbox" {
                break;
            }
            let (gps, n) = games_per_second([spec, spec], jobs, affinity, 4.0, 1_000_000);
            println!(
                "whole tictactoe games, two C bots, {label}, {jobs} job(s): \
                 {gps:.0} games/s = {:.0} per core ({n} games)",
                gps / jobs as f64
            );
        }
    }
    if only.is_empty() || only == "sandbox" {
        sandbox_cost(&c, &c_boxed, &c_reuse, &c_boxed_reuse, sandbox_ok);
    }
    if only.is_empty() || only == "python" {
        let manifest = |name: &str| {
            let path = root.join("bots").join(name);
            match BotSpec::resolve::<TicTacToe>(&path.to_string_lossy()) {
                Ok(BotSpec::External(e)) => e,
                other => panic!("{name}: {other:?}"),
            }
        };
        let (mut random, mut heuristic) = (
            manifest("python-random.toml"),
            manifest("python-heuristic.toml"),
        );
        for reuse in [false, true] {
            random.reuse = reuse;
            heuristic.reuse = reuse;
            let (gps, n) = games_per_second([&random, &heuristic], 1, true, 6.0, 100_000);
            println!(
                "whole tictactoe games, the bundled Python random and heuristic bots, {}, 1 job: \
                 {gps:.1} games/s ({n} games; target with reuse >= 500)",
                if reuse {
                    "kept processes (reuse)"
                } else {
                    "fresh process per game"
                }
            );
        }
    }
}

/// What the sandbox costs on whole games between two C bots, fresh
/// processes and kept ones, measured in alternation (five rounds of about
/// 1.5 s per line) so that a noisy machine weighs on both sides alike; the
/// median of the rounds' ratios is the figure.
fn sandbox_cost(
    plain: &ExternalSpec,
    boxed: &ExternalSpec,
    plain_reuse: &ExternalSpec,
    boxed_reuse: &ExternalSpec,
    sandbox_ok: bool,
) {
    if !sandbox_ok {
        println!("sandbox cost: skipped (no full sandbox here)");
        return;
    }
    for (label, a, b) in [
        ("fresh process per game", plain, boxed),
        ("kept processes (reuse)", plain_reuse, boxed_reuse),
    ] {
        let mut ratios = Vec::new();
        for round in 1..=5 {
            let (without, _) = games_per_second([a, a], 1, true, 1.5, 1_000_000);
            let (with, _) = games_per_second([b, b], 1, true, 1.5, 1_000_000);
            ratios.push(without / with);
            println!(
                "sandbox cost, two C bots, {label}, pinned, round {round}: \
                 {without:.0} games/s without, {with:.0} with: {:.2}x",
                without / with
            );
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "sandbox cost, {label}: median {:.2}x over 5 rounds (min {:.2}x, max {:.2}x; \
             target {})",
            ratios[2],
            ratios[0],
            ratios[4],
            if label.starts_with("fresh") {
                "<= 2x"
            } else {
                "< 1.10x"
            }
        );
    }
}
