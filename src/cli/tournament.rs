//! `referee tournament` and `referee merge`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::parse_shard;
use crate::cli::progress::Progress;
use referee::bot::BuiltinBots;
use referee::play::RunOptions;
use referee::tournament::{self, TournamentFile};
use referee::with_game;

/// Arguments of `referee tournament`.
#[derive(Args, Debug)]
pub struct TournamentArgs {
    /// The tournament file (docs/tournaments.md).
    file: PathBuf,
    /// Games played at once (default: the number of cores). Keep it at or
    /// below the number of cores with timed external bots.
    #[arg(long)]
    jobs: Option<usize>,
    /// Folder for games.jsonl, tournament.toml, standings.json and standings.csv.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seed (overrides the file's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Continue the run in --out: play only the games missing from games.jsonl.
    #[arg(long)]
    resume: bool,
    /// Play only slice K of N of the schedule (combine with `referee merge`).
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Print the standings as JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Do not write DIR/report.html (the HTML report with replays) at the end.
    #[arg(long)]
    no_report: bool,
    /// The report's title (overrides the file's `title`; kept in DIR/run.json).
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    #[command(flatten)]
    pub(super) process: super::ProcessArgs,
}

/// Arguments of `referee merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Output folders of the shards.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Folder for the merged games.jsonl and standings.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the standings as JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Do not write OUT/report.html.
    #[arg(long)]
    no_report: bool,
    /// The merged report's title (default: the shards' title).
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
}

/// Runs a tournament.
pub fn run(args: TournamentArgs) -> anyhow::Result<ExitCode> {
    let file = TournamentFile::load(&args.file, args.seed)?;
    let kind = file.game;
    with_game!(kind, G => run_game::<G>(file, &args))
}

fn run_game<G: BuiltinBots>(
    file: TournamentFile,
    args: &TournamentArgs,
) -> anyhow::Result<ExitCode> {
    let mut t = file.resolve::<G>()?;
    for e in &mut t.entrants {
        args.process.apply(&mut e.spec, G::KIND)?;
    }
    let jobs = super::jobs(args.jobs)?;
    let shard = args
        .shard
        .as_deref()
        .map(parse_shard)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    super::warn_jobs(jobs, t.has_external());
    let opts = RunOptions {
        jobs,
        out: args.out.clone(),
        resume: args.resume,
        shard,
        affinity: !args.process.no_affinity,
        title: args.title.clone(),
    };
    referee::play::interrupt::install(super::tell)?;
    let progress = Progress::new(args.json);
    let r = tournament::run::<G>(&t, &opts, &progress)?;
    if let Some(sig) = referee::play::interrupt::interrupted() {
        let done = r.played + r.resumed;
        crate::cli::progress::say(&format!(
            "referee: interrupted by {} after {done} of {} games",
            referee::play::interrupt::signal_name(sig),
            r.slice_games
        ));
        match &args.out {
            Some(dir) => crate::cli::progress::say(&format!(
                "referee: the finished games are in {}; finish the tournament with:\n  referee tournament {} --out {} --resume{}",
                referee::play::journal::games_path(dir).display(),
                args.file.display(),
                dir.display(),
                args.seed.map(|s| format!(" --seed {s}")).unwrap_or_default()
            )),
            None => crate::cli::progress::say("referee: nothing was saved (no --out); run with --out DIR to be able to resume"),
        }
        return Ok(ExitCode::from(referee::play::interrupt::exit_code(sig)));
    }
    let report = match (&args.out, args.no_report) {
        (Some(dir), false) => super::write_report(dir, r.summary.standings.games, &progress)?,
        _ => None,
    };
    if args.json {
        outln!(
            "{}",
            referee::escape::json::to_string_pretty(&r.summary.to_json())?
        );
    } else {
        out!(
            "{}",
            referee::tournament::standings::standings_tables(&r.summary)
        );
        outln!(
            "{}",
            super::played_line(r.played, r.elapsed, r.resumed, shard)
        );
        if let Some(dir) = &args.out {
            outln!("Results in {}", dir.display());
        }
        if let Some(path) = &report {
            outln!("Report: {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Merges shard folders.
pub fn merge(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let progress = Progress::new(args.json);
    if args.dirs[0].join(referee::grade::class::GRADED).is_file() {
        return super::grade::merge_class(&args.dirs, args.out.as_deref(), args.json);
    }
    let matched = referee::play::journal::run_kind(&args.dirs[0])?.as_deref() == Some("match");
    let (summary, report) = if matched {
        let r = referee::matches::merge(
            &args.dirs,
            args.out.as_deref(),
            args.title.as_deref(),
            &progress,
        )?;
        (r.summary.clone(), Some(r))
    } else {
        let (_, summary) = tournament::merge(
            &args.dirs,
            args.out.as_deref(),
            args.title.as_deref(),
            &progress,
        )?;
        (summary, None)
    };
    if let Some(dir) = &args.out {
        if !args.no_report {
            referee::report::write_report(dir, &dir.join("report.html"), None, &progress)?;
        }
    }
    match (&report, args.json) {
        (Some(r), true) => outln!("{}", referee::escape::json::to_string_pretty(&r.to_json())?),
        (Some(r), false) => out!("{}", referee::matches::output::match_text(r)),
        (None, true) => outln!(
            "{}",
            referee::escape::json::to_string_pretty(&summary.to_json())?
        ),
        (None, false) => out!(
            "{}",
            referee::tournament::standings::standings_tables(&summary)
        ),
    }
    Ok(ExitCode::SUCCESS)
}
