//! UTTT strength: `optimal` against the plain `uct` baseline (random
//! rollouts, no solver) at the same iteration budget per move, in paired
//! games (two random opening plies per pair, each engine playing both seats
//! from them). Target: optimal scores >= 90 %.
//!
//! Run: `cargo bench --bench uttt_strength`; environment variables
//! `UTTT_ITERS` (iterations per move, default 2000), `UTTT_GAMES` (even,
//! default 200) and `UTTT_THREADS` (default: the number of cores); for
//! tuning, `UTTT_C_PERCENT` (optimal's exploration constant times 100) and
//! `UTTT_PLAYOUT_RANDOM` (its share of random playout moves, per mille).
//! The results do not depend on the number of threads.
//! A benchmark, not a test: it takes a minute or more.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use comfy_table::Table;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use referee::bot::uttt::{Mcts, SearchConfig};
use referee::game::{Game, Seat, Uttt, UtttMove};
use referee::standings::Wdl;
use referee::stats::elo_trinomial;

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Err(_) => default,
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!("{name}='{v}' is not a whole number");
            std::process::exit(2)
        }),
    }
}

/// One game from `opening`; returns optimal's points.
fn game(opening: &[UtttMove], optimal_seat: Seat, iters: u32, seed: u64) -> f64 {
    let mut pos = Uttt::new();
    for &mv in opening {
        pos.play_unchecked(mv);
    }
    let base = SearchConfig::optimal();
    let mut optimal = Mcts::new(
        SearchConfig {
            iterations: iters,
            exploration: env_u64("UTTT_C_PERCENT", (base.exploration * 100.0).round() as u64)
                as f32
                / 100.0,
            playout_random_permille: env_u64(
                "UTTT_PLAYOUT_RANDOM",
                base.playout_random_permille as u64,
            ) as u32,
            ..base
        },
        seed,
    );
    let mut uct = Mcts::new(
        SearchConfig {
            iterations: iters,
            ..SearchConfig::plain_uct()
        },
        seed ^ 0x9e37_79b9,
    );
    while pos.outcome().is_none() {
        let engine = if pos.to_move() == optimal_seat {
            &mut optimal
        } else {
            &mut uct
        };
        match engine.search(&pos) {
            Some(mv) => pos.play_unchecked(mv),
            None => break,
        }
    }
    pos.outcome().map_or(0.5, |o| o.points(optimal_seat))
}

fn main() {
    let iters = env_u64("UTTT_ITERS", 2000).clamp(1, u32::MAX as u64) as u32;
    let games = env_u64("UTTT_GAMES", 200).max(2) / 2 * 2;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let threads = env_u64("UTTT_THREADS", cores).max(1);
    let next_pair = AtomicU64::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let pair = next_pair.fetch_add(1, Ordering::Relaxed);
                if pair >= games / 2 {
                    break;
                }
                let mut rng = SmallRng::seed_from_u64(pair);
                let mut p = Uttt::new();
                let mut opening = Vec::new();
                for _ in 0..2 {
                    if let Some(mv) = p.random_move(&mut rng) {
                        opening.push(mv);
                        p.play_unchecked(mv);
                    }
                }
                let a = game(&opening, Seat::One, iters, pair * 2);
                let b = game(&opening, Seat::Two, iters, pair * 2 + 1);
                if let Ok(mut r) = results.lock() {
                    r.push((pair, a, b));
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_default();
    let mut wdl = Wdl::default();
    for &(_, a, b) in &results {
        wdl.add(a);
        wdl.add(b);
    }
    let elo = elo_trinomial(&wdl);
    let mut table = Table::new();
    table.set_header(vec![
        "opponent",
        "iterations per move",
        "games",
        "W / D / L",
        "score",
        "Elo (95 % interval)",
    ]);
    table.add_row(vec![
        "uct (plain UCT, random rollouts)".to_string(),
        iters.to_string(),
        wdl.games().to_string(),
        format!("{} / {} / {}", wdl.wins, wdl.draws, wdl.losses),
        format!("{:.1} %", 100.0 * wdl.score()),
        elo.to_string(),
    ]);
    println!("{table}");
}
