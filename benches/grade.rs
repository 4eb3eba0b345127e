//! Exhaustive grading speed with an external Python bot (target: >= 30,000
//! positions per second on 2 cores with a bot that answers in about 50 us).
//!
//! 1. The bot alone: `tests/fixtures/grade/notakto_bot.py` (a perfect
//!    Notakto bot, memoised) answers a sample of positions piped to it in
//!    one go after a warm-up, which gives its own cost per answer,
//!    interpreter I/O included: the ceiling for N processes is N / that.
//! 2. `explore` (what `referee grade --exhaustive` runs) on Notakto with
//!    `GRADE_BOARDS` boards (default 3, more than 4 million positions), the
//!    bot as player 1, with 1 and with `GRADE_WORKERS` processes (default:
//!    the number of cores): positions checked per second, start-up
//!    included.
//!
//! The bot is slowed to at least `GRADE_ANSWER_US` microseconds of work
//! per answer (default 50, the target's bot; 0 for its natural speed).
//!
//! Run: `cargo bench --bench grade` (needs python3; a few minutes).
//! `GRADE_SKIP_ONE=1` skips the one-process run.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use referee::bot::manifest::ExternalSpec;
use referee::bot::{BuiltinSpec, TimeControl};
use referee::game::{Game, GameOptions, Notakto, Seat};
use referee::grade::exhaustive::{explore, Oracle, Pipelined};

const BOT: &str = "tests/fixtures/grade/notakto_bot.py";

fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Err(_) => default,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!("{name}='{v}' is not a whole number");
            std::process::exit(2)
        }),
    }
}

/// Positions like those exhaustive grading asks: player 1 (the bot's seat)
/// to move, reached by perfect play for player 1 against random replies.
fn sample(opts: &GameOptions, n: usize) -> Vec<Notakto> {
    let mut rng = SmallRng::seed_from_u64(5);
    let mut perfect = BuiltinSpec::parse("optimal")
        .make::<Notakto>(1)
        .expect("built-in");
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut p = Notakto::start(opts);
        let stop = rng.random_range(0..12);
        let mut plies = 0;
        while !p.is_over() && plies < stop {
            let mv = if p.to_move() == Seat::One {
                perfect.select_move(&p).expect("a move")
            } else {
                p.random_move(&mut rng).expect("a move")
            };
            p.play_unchecked(mv);
            plies += 1;
        }
        if !p.is_over() && p.to_move() == Seat::One {
            out.push(p);
        }
    }
    out
}

/// The bot's own time per answer, its I/O included, over `positions`
/// (after answering them all once, so its memo is as warm as in a long run).
fn bot_alone(positions: &[Notakto], answer_us: usize) -> f64 {
    let mut child = Command::new("python3")
        .arg(BOT)
        .args(["--answer-us", &answer_us.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 starts");
    let mut stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let text: String = positions.iter().map(|p| format!("turn {p}\n")).collect();
    // A thread writes, so that neither side blocks on a full pipe.
    let writer = std::thread::spawn(move || {
        stdin.write_all(b"begin notakto 1 1000\n").expect("write");
        stdin.write_all(text.as_bytes()).expect("write");
        stdin.write_all(text.as_bytes()).expect("write");
        stdin.write_all(b"end\n").expect("write");
    });
    let mut lines = BufReader::new(stdout).lines();
    for _ in positions {
        lines.next().expect("an answer").expect("read");
    }
    let t = Instant::now();
    for _ in positions {
        lines.next().expect("an answer").expect("read");
    }
    let per = t.elapsed().as_secs_f64() / positions.len() as f64;
    writer.join().expect("writer");
    let _ = child.wait();
    per
}

fn main() {
    let boards = env_usize("GRADE_BOARDS", 3);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = env_usize("GRADE_WORKERS", cores).max(1);
    let opts = GameOptions {
        boards: boards as u8,
        ..GameOptions::default()
    };
    let answer_us = env_usize("GRADE_ANSWER_US", 50);
    let positions = sample(&opts, 20_000);
    let per = bot_alone(&positions, answer_us);
    println!(
        "grade/bot alone (--answer-us {answer_us}): {:.1} us per answer over {} sampled \
         positions (warm memo), so at most {:.0} positions/s per process",
        per * 1e6,
        positions.len(),
        1.0 / per
    );
    let spec = ExternalSpec::from_command_line(&format!("python3 {BOT} --answer-us {answer_us}"))
        .expect("command");
    let mut counts = vec![workers];
    if std::env::var("GRADE_SKIP_ONE").is_err() && workers != 1 {
        counts.insert(0, 1);
    }
    for n in counts {
        let mut oracles: Vec<Box<dyn Oracle<Notakto>>> = (0..n)
            .map(|_| {
                Box::new(Pipelined::<Notakto>::new(
                    spec.clone(),
                    Seat::One,
                    TimeControl::default(),
                    0,
                )) as Box<dyn Oracle<Notakto>>
            })
            .collect();
        let t = Instant::now();
        let r = explore::<Notakto>(&opts, Seat::One, &mut oracles, false, |_| {});
        let secs = t.elapsed().as_secs_f64();
        drop(oracles);
        println!(
            "grade/notakto {boards} boards exhaustive, {n} process(es): {} positions in {secs:.1} s \
             = {:.0} positions/s ({}; target >= 30000 on 2 cores)",
            r.positions,
            r.positions as f64 / secs,
            if r.failure.is_none() {
                "passed"
            } else {
                "FAILED"
            }
        );
    }
}
