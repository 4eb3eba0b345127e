//! What the sandbox's freezing costs and what it buys (issue 62).
//!
//! - **CPU theft**: a bot that needs 300 ms of CPU a move against one that
//!   runs 60 busy loops, both pinned to one CPU (`referee match --jobs 1`),
//!   3 s a move: the thinker's time forfeits and its move times without the
//!   sandbox and with it (where the hog is frozen while the thinker is on
//!   move).
//! - **Per-move overhead**: two bots that take 3 ms a move (so that the one
//!   off move is frozen every turn), sandboxed against unsandboxed, wall
//!   time per move; with kept processes the difference is what a freeze
//!   and a thaw cost, with fresh ones the sandboxed start too.
//!
//! Run: `cargo bench --bench sandbox` (as root for per-bot users; needs
//! python3). `SANDBOX_ONLY=theft` or `overhead` runs one part. Figures go
//! to docs/performance.md.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Plays `games` tictactoe games of `a` against `b` with `extra` flags and
/// returns the run folder's records and the wall time in seconds.
fn play(a: &str, b: &str, games: u32, extra: &[&str], out: &Path) -> (Vec<serde_json::Value>, f64) {
    let _ = std::fs::remove_dir_all(out);
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_referee"))
        .args([
            "match",
            "tictactoe",
            a,
            b,
            "--games",
            &games.to_string(),
            "--jobs",
            "1",
        ])
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .expect("referee runs");
    let secs = t.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(out.join("games.jsonl"))
        .unwrap_or_else(|_| panic!("no games: {}", String::from_utf8_lossy(&o.stderr)));
    let recs = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect();
    (recs, secs)
}

/// The move times (µs) of the bot whose name contains `who`, and its time
/// forfeits.
fn times_of(recs: &[serde_json::Value], who: &str) -> (Vec<u64>, usize) {
    let mut times = Vec::new();
    let mut forfeits = 0;
    for r in recs {
        let seat = r["players"].as_array().and_then(|p| {
            p.iter()
                .position(|n| n.as_str().is_some_and(|n| n.contains(who)))
        });
        let Some(seat) = seat else { continue };
        if r["termination"].as_str() == Some("timeout")
            && r["forfeit"]["seat"].as_u64() == Some(seat as u64 + 1)
        {
            forfeits += 1;
        }
        for (i, t) in r["times_us"].as_array().into_iter().flatten().enumerate() {
            if i % 2 == seat {
                times.extend(t.as_u64());
            }
        }
    }
    times.sort_unstable();
    (times, forfeits)
}

fn median(v: &[u64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2] as f64 / 1000.0
}

fn max(v: &[u64]) -> f64 {
    v.last().map_or(f64::NAN, |&m| m as f64 / 1000.0)
}

fn main() {
    let only = std::env::var("SANDBOX_ONLY").unwrap_or_default();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let d = dir.path();
    let full = referee::bot::sandbox::missing(referee::bot::sandbox::support()).is_empty();
    if !full {
        println!("sandbox bench: skipped (no full sandbox here)");
        return;
    }
    if only.is_empty() || only == "theft" {
        let thinker = d.join("thinker.py");
        std::fs::write(
            &thinker,
            "import sys, time\nfor line in sys.stdin:\n    w = line.split()\n    if w and w[0] == 'turn':\n        \
             t = time.process_time()\n        while time.process_time() - t < 0.3:\n            pass\n        \
             print(w[1].index('.'), flush=True)\n",
        )
        .unwrap();
        let hog = d.join("hog.py");
        std::fs::write(
            &hog,
            "import os, sys\nfor _ in range(60):\n    if os.fork() == 0:\n        while True:\n            pass\n\
             for line in sys.stdin:\n    w = line.split()\n    if w and w[0] == 'turn':\n        \
             print(w[1].index('.'), flush=True)\n",
        )
        .unwrap();
        let (a, b) = (
            format!("python3 {}", thinker.display()),
            format!("python3 {}", hog.display()),
        );
        for (label, games, flag) in [
            ("no sandbox", 4, "--no-sandbox"),
            ("sandboxed", 10, "--sandbox"),
        ] {
            let (recs, secs) = play(
                &a,
                &b,
                games,
                &["--time-ms", "3000", flag],
                &d.join("theft"),
            );
            let (times, forfeits) = times_of(&recs, "thinker");
            println!(
                "cpu theft, {label}: {games} games in {secs:.1} s; the thinker (300 ms of CPU a move) \
                 forfeited {forfeits} on time; its moves: median {:.0} ms, max {:.0} ms over {}",
                median(&times),
                max(&times),
                times.len()
            );
        }
    }
    if only.is_empty() || only == "overhead" {
        let sleeper = d.join("sleeper.py");
        std::fs::write(
            &sleeper,
            "import sys, time\nfor line in sys.stdin:\n    w = line.split()\n    if w and w[0] == 'turn':\n        \
             time.sleep(0.003)\n        print(w[1].index('.'), flush=True)\n",
        )
        .unwrap();
        let s = format!("python3 {}", sleeper.display());
        let manifest = d.join("sleeper.toml");
        std::fs::write(
            &manifest,
            format!(
                "name = \"sleeper\"\ncommand = \"python3 {}\"\nreuse = true\n",
                sleeper.display()
            ),
        )
        .unwrap();
        let m = manifest.to_string_lossy().to_string();
        for (label, bot) in [("fresh processes", &s), ("kept processes", &m)] {
            let mut per_move = Vec::new();
            for round in 0..3 {
                let mut rate = [0.0f64; 2];
                for (i, flag) in ["--no-sandbox", "--sandbox"].iter().enumerate() {
                    let (recs, secs) = play(bot, bot, 40, &[flag], &d.join("overhead"));
                    let moves: usize = recs
                        .iter()
                        .map(|r| r["moves"].as_array().map_or(0, Vec::len))
                        .sum();
                    rate[i] = secs * 1e6 / moves.max(1) as f64;
                }
                println!(
                    "wall time per move, 3 ms bots, {label}, round {round}: no sandbox {:.3} ms, \
                     sandboxed {:.3} ms",
                    rate[0] / 1000.0,
                    rate[1] / 1000.0
                );
                per_move.push(rate[1] - rate[0]);
            }
            per_move.sort_by(f64::total_cmp);
            println!(
                "sandbox, {label}: median {:.0} µs more wall time per move over 3 rounds \
                 (min {:.0}, max {:.0}; freeze and thaw, and for fresh processes the start)",
                per_move[1], per_move[0], per_move[2]
            );
        }
    }
}
