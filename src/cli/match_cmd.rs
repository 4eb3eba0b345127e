//! `referee match`: two bots, games in pairs with seats swapped, the
//! statistics of the first against the second, an optional SPRT
//! ([`referee::matches`]).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;

use super::{GameArgs, TimeArgs};
use crate::cli::progress::Progress;
use referee::bot::{BotSpec, BuiltinBots};
use referee::matches::{self, Ending, MatchConfig};
use referee::play::openings::Openings;
use referee::play::runner::{Entrant, RunConfig};
use referee::play::stats::{Sprt, SprtStatus};
use referee::play::RunOptions;
use referee::with_game;

/// Games when `--games` is not given.
const DEFAULT_GAMES: u64 = 100;
/// Games when `--games` is not given with `--sprt`: an upper bound the
/// test should rarely reach.
const DEFAULT_SPRT_GAMES: u64 = 1_000_000;

/// Most random plies, as in a tournament file.
const MAX_RANDOM_PLIES: usize = 80;

/// Exit code when the SPRT accepted H0 (no gain of elo1).
const EXIT_H0: u8 = 1;
/// Exit code when the games ran out before the SPRT was decided.
const EXIT_UNDECIDED: u8 = 3;

/// Arguments of `referee match`.
#[derive(Args, Debug)]
pub struct MatchArgs {
    #[command(flatten)]
    game: GameArgs,
    #[command(flatten)]
    rules: super::RulesArgs,
    /// The first bot (player 1 in even-numbered games): every figure is
    /// from its side.
    bot1: String,
    /// The second bot.
    bot2: String,
    /// Games to play (even: pairs of games share an opening, seats
    /// swapped); with --sprt, the most to play [default: 100, or 1000000
    /// with --sprt]
    #[arg(long)]
    games: Option<u64>,
    /// Master seed: same seed, same games.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Random plies at the start of each pair of games (shared by both
    /// games of the pair; after the suite's opening with --openings).
    #[arg(long, default_value_t = 0)]
    random_plies: usize,
    /// An opening suite: one position or move list per line (docs/tournaments.md,
    /// "Opening suites"); pair k plays opening k, seats swapped.
    #[arg(long, value_name = "FILE")]
    openings: Option<PathBuf>,
    /// Play the suite in an order shuffled by the seed instead of file order.
    #[arg(long)]
    shuffle_openings: bool,
    /// Stop as soon as a sequential probability ratio test is decided:
    /// `elo0=0,elo1=5,alpha=0.05,beta=0.05[,model=normalized|logistic]`.
    #[arg(long, value_name = "SPEC")]
    sprt: Option<String>,
    /// Print the running statistics every N games (on stderr; with --json
    /// too). Without it: a progress bar with them on a terminal, a line
    /// every few seconds otherwise, nothing with --json.
    #[arg(long, value_name = "N", default_value_t = 0)]
    rating_interval: u64,
    /// Folder for games.jsonl, standings.json, standings.csv and report.html.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue the match in --out: play only the games missing from games.jsonl.
    #[arg(long)]
    resume: bool,
    /// Play only slice K of N of the games (whole pairs; not with --sprt);
    /// combine the shards' folders with `referee merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Do not write DIR/report.html at the end.
    #[arg(long)]
    no_report: bool,
    /// The report's title (kept in DIR/run.json).
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// Games played at once (default: number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Print a JSON summary instead of tables.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    time: TimeArgs,
    #[command(flatten)]
    pub(super) process: super::ProcessArgs,
}

/// Runs the match. Exit code 0, or with --sprt: 0 H1 accepted, 1 H0
/// accepted, 3 undecided when the games ran out.
pub fn run(args: MatchArgs) -> anyhow::Result<ExitCode> {
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
    let sprt: Option<Sprt> = args.sprt.as_deref().map(str::parse).transpose()?;
    let games = args.games.unwrap_or(if sprt.is_some() {
        DEFAULT_SPRT_GAMES
    } else {
        DEFAULT_GAMES
    });
    matches::check_games(games)?;
    let jobs = super::jobs(args.jobs)?;
    if args.random_plies > MAX_RANDOM_PLIES {
        anyhow::bail!(
            "--random-plies must be at most {MAX_RANDOM_PLIES}, got {}",
            args.random_plies
        );
    }
    if args.shuffle_openings && args.openings.is_none() {
        anyhow::bail!("--shuffle-openings needs --openings FILE");
    }
    let options = args.game.options_under(&args.rules)?;
    let openings = match &args.openings {
        Some(path) => Some(Arc::new(Openings::load(
            G::KIND,
            &options,
            path,
            args.shuffle_openings,
            args.seed,
        )?)),
        None => None,
    };
    let mut specs = Vec::new();
    for (i, text) in [&args.bot1, &args.bot2].iter().enumerate() {
        let mut spec = BotSpec::resolve::<G>(text).with_context(|| format!("bot {}", i + 1))?;
        args.process.apply(&mut spec, G::KIND)?;
        specs.push(spec);
    }
    // A manifest's bot is shown by its `name`, not by the manifest's path.
    let shown: Vec<String> = specs.iter().map(|s| s.to_string()).collect();
    let names = unique_names(&[&shown[0], &shown[1]]);
    let mut entrants = specs
        .into_iter()
        .zip(names)
        .map(|(spec, name)| Entrant { name, spec });
    let (Some(first), Some(second)) = (entrants.next(), entrants.next()) else {
        unreachable!("two bots were resolved above")
    };
    let entrants = [first, second];
    super::warn_jobs(
        jobs,
        entrants
            .iter()
            .any(|e| !matches!(e.spec, BotSpec::Builtin(_))),
    );
    let cfg = MatchConfig {
        games,
        seed: args.seed,
        run: RunConfig {
            options,
            time: args.time.control(),
            random_plies: args.random_plies,
            affinity: !args.process.no_affinity,
        },
        openings,
        sprt,
        rating_interval: args.rating_interval,
    };
    let opts = RunOptions {
        jobs,
        out: args.out.clone(),
        resume: args.resume,
        shard: args
            .shard
            .as_deref()
            .map(super::parse_shard)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        affinity: !args.process.no_affinity,
        title: args.title.clone(),
    };
    // A bar on a terminal (with the running figures), timed lines otherwise;
    // --rating-interval lines replace the timed ones; --json is quiet
    // unless --rating-interval asks for lines.
    let progress = match (args.json, args.rating_interval > 0) {
        (true, false) => Progress::new(true),
        (true, true) => Progress::notes(),
        (false, true) if !std::io::stderr().is_terminal() => Progress::notes(),
        (false, _) => Progress::new(false),
    };
    referee::play::interrupt::install(super::tell)?;
    let r = matches::run::<G>(&entrants, &cfg, &opts, &progress)?;
    if let Some(sig) = referee::play::interrupt::interrupted() {
        crate::cli::progress::say(&format!(
            "referee: interrupted by {} after {} of {} games; the results below are of those",
            referee::play::interrupt::signal_name(sig),
            r.played + r.resumed,
            games
        ));
        if let Some(dir) = &args.out {
            crate::cli::progress::say(&format!(
                "referee: the finished games are in {}; finish the match by running the same \
                 command with --resume",
                referee::play::journal::games_path(dir).display()
            ));
        }
    }
    let report = match (&args.out, args.no_report, r.ending) {
        (Some(dir), false, Ending::Complete | Ending::Decided) => {
            super::write_report(dir, r.games(), &progress)?
        }
        _ => None,
    };
    if let Some(w) = r.few_distinct() {
        super::tell(&format!("warning: {w}"));
    }
    if args.json {
        outln!("{}", referee::escape::json::to_string_pretty(&r.to_json())?);
    } else {
        out!("{}", referee::matches::output::match_text(&r));
        outln!(
            "{}",
            super::played_line(r.played, r.elapsed, r.resumed, None)
        );
        if r.discarded > 0 {
            outln!(
                "{} after the SPRT was decided: not counted, and not kept",
                match r.discarded {
                    1 => "1 game finished".to_string(),
                    n => format!("{n} games finished"),
                }
            );
        }
        if let Some(dir) = &args.out {
            outln!("Results in {}", dir.display());
        }
        if let Some(path) = &report {
            outln!("Report: {}", path.display());
        }
    }
    if let Some(sig) = referee::play::interrupt::interrupted() {
        return Ok(ExitCode::from(referee::play::interrupt::exit_code(sig)));
    }
    Ok(match r.sprt.map(|s| s.report.status) {
        None | Some(SprtStatus::AcceptH1) => ExitCode::SUCCESS,
        Some(SprtStatus::AcceptH0) => ExitCode::from(EXIT_H0),
        Some(SprtStatus::Continue) => ExitCode::from(EXIT_UNDECIDED),
    })
}
