//! `referee match`: N games between two bots, seats alternating.

use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use serde_json::json;

use super::{GameArgs, TimeArgs};
use referee::bot::{BotSpec, BuiltinBots};
use referee::output::format_us;
use referee::runner::{run_games, Entrant, Pairing, RunConfig};
use referee::schedule::Schedule;
use referee::standings::{BotStats, Standings};
use referee::with_game;

/// Arguments of `referee match`.
#[derive(Args, Debug)]
pub struct MatchArgs {
    #[command(flatten)]
    game: GameArgs,
    /// The first bot (player 1 in odd-numbered games).
    bot1: String,
    /// The second bot.
    bot2: String,
    /// Number of games (even: each bot plays half as player 1).
    #[arg(long, default_value_t = 100)]
    games: u64,
    /// Master seed: same seed, same games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Random plies at the start of each pair of games (shared by both games of the pair).
    #[arg(long, default_value_t = 0)]
    random_plies: usize,
    /// Games played at once (default: number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Print a JSON summary instead of tables.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    time: TimeArgs,
    #[command(flatten)]
    process: super::ProcessArgs,
}

/// Runs the match.
pub fn run(args: MatchArgs) -> anyhow::Result<ExitCode> {
    if args.games == 0 || !args.games.is_multiple_of(2) {
        bail!(
            "--games must be a positive even number (seats alternate), got {}",
            args.games
        );
    }
    let kind = args.game.game;
    with_game!(kind, G => run_match::<G>(&args))
}

/// Distinct display names for the two bots (`x` and `x (2)` when equal).
pub fn unique_names(texts: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in texts {
        let mut name = t.to_string();
        let mut k = 2;
        while out.contains(&name) {
            name = format!("{t} ({k})");
            k += 1;
        }
        out.push(name);
    }
    out
}

fn run_match<G: BuiltinBots>(args: &MatchArgs) -> anyhow::Result<ExitCode> {
    let mut specs = Vec::new();
    for (i, text) in [&args.bot1, &args.bot2].iter().enumerate() {
        let mut spec = BotSpec::resolve::<G>(text).with_context(|| format!("bot {}", i + 1))?;
        args.process.apply(&mut spec)?;
        specs.push(spec);
    }
    // A manifest's bot is shown by its `name`, not by the manifest's path.
    let shown: Vec<String> = specs.iter().map(|s| s.to_string()).collect();
    let names = unique_names(&[&shown[0], &shown[1]]);
    let entrants: Vec<Entrant> = specs
        .into_iter()
        .zip(names)
        .map(|(spec, name)| Entrant { name, spec })
        .collect();
    let cfg = RunConfig {
        options: args.game.options(),
        time: args.time.control(),
        random_plies: args.random_plies,
        affinity: !args.process.no_affinity,
    };
    let pairings: Vec<Pairing> = Schedule::two_bots(args.games, args.seed)
        .pairings()
        .collect();
    let jobs = args.jobs.unwrap_or_else(referee::runner::default_jobs);
    referee::interrupt::install(super::tell)?;
    let records = run_games::<G>(&entrants, &cfg, &pairings, jobs, |_| {});
    let interrupted = referee::interrupt::interrupted();
    if let Some(sig) = interrupted {
        eprintln!(
            "referee: interrupted by {} after {} of {} games; the results below are of those",
            referee::interrupt::signal_name(sig),
            records.len(),
            pairings.len()
        );
    }
    let standings = Standings::from_records(&records);
    let stats: Vec<&BotStats> = entrants
        .iter()
        .filter_map(|e| standings.bots.get(&e.name))
        .collect();
    if args.json {
        let bots: Vec<_> = stats.iter().map(|s| bot_json(s)).collect();
        let out = json!({
            "game": G::KIND.name(),
            "games": records.len(),
            "seed": args.seed,
            "bots": bots,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("{}", table(&stats));
        for r in &records {
            if let Some(f) = &r.forfeit {
                println!(
                    "game {}: {} ({} as player {})",
                    r.id,
                    f,
                    r.players[f.seat.index()],
                    f.seat
                );
                // The bot's last words usually say what went wrong.
                if let Some(last) = f.stderr_tail.lines().rev().find(|l| !l.trim().is_empty()) {
                    println!(
                        "  stderr: {}",
                        referee::record::escape_line(last.as_bytes())
                    );
                }
            }
        }
    }
    Ok(match interrupted {
        Some(sig) => ExitCode::from(referee::interrupt::exit_code(sig)),
        None => ExitCode::SUCCESS,
    })
}

/// The JSON summary of one bot.
pub fn bot_json(s: &BotStats) -> serde_json::Value {
    let forfeits: serde_json::Map<String, serde_json::Value> = referee::record::ForfeitReason::ALL
        .iter()
        .map(|r| {
            (
                r.name().to_string(),
                json!(s.forfeits.get(r).copied().unwrap_or(0)),
            )
        })
        .collect();
    json!({
        "name": s.name,
        "games": s.total.games(),
        "wins": s.total.wins,
        "draws": s.total.draws,
        "losses": s.total.losses,
        "points": s.total.points(),
        "as_player1": s.by_seat[0],
        "as_player2": s.by_seat[1],
        "avg_move_us": s.avg_move_us(),
        "forfeits": forfeits,
    })
}

fn table(stats: &[&BotStats]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "bot",
        "games",
        "W-D-L",
        "as player 1",
        "as player 2",
        "points",
        "score",
        "avg move",
        "forfeits",
    ]);
    for s in stats {
        t.add_row(vec![
            s.name.clone(),
            s.total.games().to_string(),
            s.total.text(),
            s.by_seat[0].text(),
            s.by_seat[1].text(),
            format!("{}", s.total.points()),
            format!("{:.1}%", 100.0 * s.total.score()),
            format_us(s.avg_move_us()),
            s.forfeit_count().to_string(),
        ]);
    }
    t
}
