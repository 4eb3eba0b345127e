//! The cost of sharding, through the real binary (as a cluster runs it):
//!
//! 1. one tournament (random against greedy, tic-tac-toe) played whole, then
//!    as 8 shards played one after another on this machine and merged:
//!    total time of each, and the merge's own time;
//! 2. the merge of a 1,000,000-game tournament played in 16 shards: its
//!    time (target under 10 s) and its peak memory (target: flat, the same
//!    at a quarter of the games), from `/usr/bin/time -f %M`.
//!
//! `cargo bench --bench shards` (optionally `-- GAMES` for part 2's size,
//! default 1000000; part 1 plays a tenth of it). Writes its folders under
//! target/shards-bench and removes them at the end.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const REFEREE: &str = env!("CARGO_BIN_EXE_referee");

/// Runs referee with `args`; its wall time and peak RSS in KiB (when
/// /usr/bin/time is there).
fn referee(args: &[&str]) -> (Duration, Option<u64>) {
    let timed = Path::new("/usr/bin/time").exists();
    let mut c = if timed {
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "%M", REFEREE]);
        c
    } else {
        Command::new(REFEREE)
    };
    let t = Instant::now();
    let o = c.args(args).output().expect("referee runs");
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "referee {args:?}: {err}");
    let rss = timed
        .then(|| err.lines().last().and_then(|l| l.trim().parse().ok()))
        .flatten();
    (took, rss)
}

fn tournament_file(dir: &Path, games: u64) -> PathBuf {
    let path = dir.join("t.toml");
    std::fs::write(
        &path,
        format!(
            "game = \"tictactoe\"\ngames_per_pairing = {games}\nrandom_plies = 1\nseed = 1\n\
             [[bots]]\nname = \"random\"\nbuiltin = \"random\"\n\
             [[bots]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n"
        ),
    )
    .expect("write the tournament file");
    path
}

/// Plays `file` in `n` shards one after another under `dir`; the total time.
fn shards(file: &Path, dir: &Path, n: u64) -> (Duration, Vec<String>) {
    let mut total = Duration::ZERO;
    let mut dirs = Vec::new();
    for k in 1..=n {
        let d = dir.join(format!("shard-{k}")).display().to_string();
        let shard = format!("{k}/{n}");
        let (t, _) = referee(&[
            "tournament",
            file.to_str().expect("a UTF-8 path"),
            "--shard",
            &shard,
            "--out",
            &d,
            "--no-report",
            "--json",
        ]);
        total += t;
        dirs.push(d);
    }
    (total, dirs)
}

fn merge(dirs: &[String], out: &Path) -> (Duration, Option<u64>) {
    let o = out.display().to_string();
    let mut args = vec!["merge", "--no-report", "--json", "--out", &o];
    args.extend(dirs.iter().map(String::as_str));
    referee(&args)
}

fn main() {
    let games: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/shards-bench");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("create the bench folder");

    // 1. Whole against 8 shards in a row.
    let small = (games / 10).max(16) & !1;
    let file = tournament_file(&root, small);
    let whole = root.join("whole").display().to_string();
    let (t_whole, _) = referee(&[
        "tournament",
        file.to_str().expect("a UTF-8 path"),
        "--out",
        &whole,
        "--no-report",
        "--json",
    ]);
    let part = root.join("eight");
    let (t_shards, dirs) = shards(&file, &part, 8);
    let (t_merge, _) = merge(&dirs, &part.join("merged"));
    println!("{small} games: whole {:.2} s; 8 shards one after another {:.2} s + merge {:.2} s = {:.2} s ({:+.0} %)",
        t_whole.as_secs_f64(),
        t_shards.as_secs_f64(),
        t_merge.as_secs_f64(),
        (t_shards + t_merge).as_secs_f64(),
        100.0 * ((t_shards + t_merge).as_secs_f64() / t_whole.as_secs_f64() - 1.0));

    // 2. The merge of 16 shards, at a quarter of the games and at all.
    for n in [games / 4, games] {
        let dir = root.join(format!("m{n}"));
        let file = tournament_file(&dir_created(&dir), n);
        let (_, dirs) = shards(&file, &dir, 16);
        let (t, rss) = merge(&dirs, &dir.join("merged"));
        let mem = rss.map_or(
            "peak memory not measured (no /usr/bin/time)".to_string(),
            |k| format!("peak memory {:.1} MiB", k as f64 / 1024.0),
        );
        println!(
            "merge of {n} games in 16 shards: {:.2} s ({:.0} games/s), {mem}",
            t.as_secs_f64(),
            n as f64 / t.as_secs_f64()
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_dir_all(&root);
}

fn dir_created(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("create a bench folder");
    dir.to_path_buf()
}
