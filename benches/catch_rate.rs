//! How many sampled games catch a Notakto AI that loses about 1 % of random
//! games (the target: caught on at least 99 % of seeds), and which
//! share of fewest-winning-replies moves serves the grading opponent best.
//! The figures behind `DEFAULT_CONSOLE_GAMES` and `PRESSURE`
//! (docs/grading.md, "How many games").
//!
//! 1. Flaws: the perfect AI (player 1, 3 boards, first winning move in
//!    move order) against 20,000 uniformly random humans; sets of the
//!    positions it meets (each with a losing move to play), drawn at random
//!    until the AI flawed there loses about 1 % of random games (a random
//!    human converts a handed-over win only sometimes), each set one flawed
//!    AI (`CATCH_FLAWS`, default 24); each loss rate is then measured on
//!    20,000 fresh random games.
//! 2. Each flawed AI is graded with `CATCH_SEEDS` seeds (default 100) at
//!    each budget of games and each pressure; a grading catches it when a
//!    game is lost.
//!
//! Run: `cargo bench --bench catch_rate` (about a minute).

use std::time::Instant;

use referee::grade::catch::{flaws, measure};

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Err(_) => default,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!("{name}='{v}' is not a whole number");
            std::process::exit(2)
        }),
    }
}

fn main() {
    let flaws_wanted = env_u64("CATCH_FLAWS", 24) as usize;
    let seeds = env_u64("CATCH_SEEDS", 100);
    let t = Instant::now();
    let flaws = flaws(3, flaws_wanted, 0.007, 0.015, 7);
    let mean = flaws.iter().map(|f| f.1).sum::<f64>() / flaws.len().max(1) as f64;
    println!(
        "{} flawed AIs, losing {:.2} % of random games on average (measured; {:.1} s)",
        flaws.len(),
        100.0 * mean,
        t.elapsed().as_secs_f64()
    );
    println!("games  pressure  caught (all gradings)  worst flaw");
    let rows = measure(
        3,
        &flaws,
        seeds,
        &[100, 200, 300, 500],
        &[0.0, 0.25, 0.5, 1.0],
    );
    for r in rows {
        println!(
            "{:>5}  {:>8.2}  {:>6.2} % ({}/{})  {:>6.1} %",
            r.games,
            r.pressure,
            100.0 * r.caught as f64 / r.runs as f64,
            r.caught,
            r.runs,
            100.0 * r.worst
        );
    }
    println!("({:.1} s)", t.elapsed().as_secs_f64());
}
