//! HTML report size and load time for 10,000 games.
//!
//! `cargo bench --bench report [-- GAME [GAMES]]` plays GAMES (default
//! 10,000) games of GAME (default tictactoe) between random, greedy and
//! optimal built-in bots, writes target/report-bench/GAME/report.html, prints
//! its size and build time and, when /usr/bin/chromium exists, the time the
//! page's script took to render (a mark it writes into the DOM) and the wall
//! time of a headless chromium load.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use referee::bot::spec::BotSpec;
use referee::bot::{BuiltinBots, TimeControl};
use referee::game::{GameKind, GameOptions};
use referee::play::record::GameRecord;
use referee::play::runner::{run_games, Entrant, RunConfig};
use referee::play::schedule::{Format, Pairing, Schedule};
use referee::report::ReportData;

fn records<G: BuiltinBots>(bots: &[&str], games: u64) -> Vec<GameRecord> {
    let entrants: Vec<Entrant> = bots
        .iter()
        .map(|b| Entrant {
            name: b.to_string(),
            spec: BotSpec::resolve::<G>(b).expect("built-in bot"),
        })
        .collect();
    let cfg = RunConfig {
        options: GameOptions::default(),
        time: TimeControl::default(),
        random_plies: 0,
        affinity: false,
    };
    let pairs = (bots.len() * (bots.len() - 1) / 2) as u64;
    let per_pair = games.div_ceil(pairs).next_multiple_of(2);
    let pairings: Vec<Pairing> = Schedule::new(bots.len(), Format::RoundRobin, per_pair, 42)
        .pairings()
        .take(games as usize)
        .collect();
    run_games::<G>(
        &entrants,
        &cfg,
        &pairings,
        referee::play::runner::default_jobs(),
        |_| {},
    )
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let kind: GameKind = args
        .first()
        .map_or("tictactoe", |s| s.as_str())
        .parse()
        .expect("game name");
    let games: u64 = args
        .get(1)
        .map_or(10_000, |s| s.parse().expect("number of games"));
    let bots: &[&str] = match kind {
        GameKind::Uttt => &["greedy", "random"],
        _ => &["optimal", "greedy", "random"],
    };
    let recs = referee::with_game!(kind, G => records::<G>(bots, games));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/report-bench")
        .join(kind.name());
    std::fs::create_dir_all(&dir).expect("bench dir");
    let mut jsonl = String::new();
    for r in &recs {
        jsonl.push_str(&serde_json::to_string(r).expect("record"));
        jsonl.push('\n');
    }
    std::fs::write(dir.join("games.jsonl"), &jsonl).expect("write games.jsonl");
    let t = Instant::now();
    let html = ReportData::from_records(kind.name(), &recs).to_html();
    let build = t.elapsed();
    let out = dir.join("report.html");
    std::fs::write(&out, &html).expect("write report");
    println!(
        "{kind}: {} games, games.jsonl {:.2} MB, report.html {:.2} MB, built in {:.0} ms",
        recs.len(),
        jsonl.len() as f64 / 1e6,
        html.len() as f64 / 1e6,
        build.as_secs_f64() * 1e3
    );
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        println!("chromium not installed: load time not measured");
        return;
    }
    for run in 0..3 {
        let profile = dir.join(format!("profile-{run}"));
        let t = Instant::now();
        let o = Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--dump-dom",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("file://{}", out.display()))
            .output()
            .expect("chromium runs");
        let wall = t.elapsed();
        let dom = String::from_utf8_lossy(&o.stdout);
        let ready = dom
            .split("data-ready-ms=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or("?");
        println!(
            "  chromium run {run}: page script ready after {ready} ms; whole headless run (browser start, load, dump) {:.0} ms",
            wall.as_secs_f64() * 1e3
        );
        let _ = std::fs::remove_dir_all(&profile);
    }
}
