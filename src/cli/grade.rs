//! `referee grade` and `referee grade-all`: students' AIs against the
//! optimal player.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{GameArgs, TimeArgs};
use referee::game::Seat;
use referee::grade::class::{grade_class, write_gradebook};
use referee::grade::{grade, GradeConfig, GradeMode, Thresholds};
use referee::output::grade::{grade_report_text, gradebook_table};
use referee::output::Progress;

/// Options shared by `grade` and `grade-all`.
#[derive(Args, Debug, Clone)]
pub struct GradeOptions {
    #[command(flatten)]
    game: GameArgs,
    /// The seat(s) the bot plays: 1, 2 or both (default: Notakto's winning
    /// seat; both for the other games).
    #[arg(long, value_parser = ["1", "2", "both"])]
    seat: Option<String>,
    /// Games per seat in sampled mode (per opponent for UTTT).
    #[arg(long, default_value_t = 100)]
    games: u64,
    /// Explore every opponent reply at every position the bot reaches
    /// (tictactoe and notakto): a proof or a refutation.
    #[arg(long)]
    exhaustive: bool,
    /// With --exhaustive: ask one representative per symmetry class.
    #[arg(long)]
    canonical: bool,
    /// Master seed: the optimal opponent's choices vary with it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Bot processes or games at once (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// UTTT: pass threshold in percent against random.
    #[arg(long, default_value_t = 95.0)]
    min_vs_random: f64,
    /// UTTT: pass threshold in percent against greedy.
    #[arg(long, default_value_t = 0.0)]
    min_vs_greedy: f64,
    /// UTTT: pass threshold in percent against optimal.
    #[arg(long, default_value_t = 0.0)]
    min_vs_optimal: f64,
    #[command(flatten)]
    time: TimeArgs,
    #[command(flatten)]
    process: super::ProcessArgs,
}

/// Arguments of `referee grade`.
#[derive(Args, Debug)]
pub struct GradeArgs {
    #[command(flatten)]
    opts: GradeOptions,
    /// The bot to grade (built-in, manifest, command line or console:...).
    bot: String,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Write every sampled game to DIR/games.jsonl.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `grade`: exit 0 pass, 1 fail, 2 harness error.
pub fn run(args: GradeArgs) -> anyhow::Result<ExitCode> {
    let mut cfg = args.opts.config()?;
    cfg.out = args.out.clone();
    referee::interrupt::install(super::tell)?;
    let progress = Progress::new(args.json);
    let report = grade(args.opts.game.game, &args.bot, &cfg, &progress)?;
    if let Some(sig) = referee::interrupt::interrupted() {
        eprintln!(
            "referee: interrupted by {}: grading stopped, no verdict",
            referee::interrupt::signal_name(sig)
        );
        return Ok(ExitCode::from(referee::interrupt::exit_code(sig)));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", grade_report_text(&report));
    }
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Most sampled games per seat: grading keeps every game to judge it.
const MAX_GAMES: u64 = 100_000;

impl GradeOptions {
    /// The library configuration these options describe, checked: the same
    /// one-line errors as `match` and `tournament` for `--jobs 0` and a
    /// `--games` of 0 (or beyond what grading can hold).
    fn config(&self) -> anyhow::Result<GradeConfig> {
        let jobs = super::jobs(self.jobs)?;
        if !self.exhaustive && !(1..=MAX_GAMES).contains(&self.games) {
            anyhow::bail!(
                "--games must be between 1 and {MAX_GAMES} (games per seat; grading keeps every \
                 game to judge it), got {}",
                self.games
            );
        }
        let seats = match self.seat.as_deref() {
            Some("1") => Some(vec![Seat::One]),
            Some("2") => Some(vec![Seat::Two]),
            Some(_) => Some(vec![Seat::One, Seat::Two]),
            None => None,
        };
        Ok(GradeConfig {
            options: self.game.options(),
            seats,
            games: self.games,
            mode: match (self.exhaustive, self.canonical) {
                (false, _) => GradeMode::Sampled,
                (true, false) => GradeMode::Exhaustive,
                (true, true) => GradeMode::ExhaustiveCanonical,
            },
            seed: self.seed,
            jobs,
            thresholds: Thresholds {
                random: self.min_vs_random,
                greedy: self.min_vs_greedy,
                optimal: self.min_vs_optimal,
            },
            time: self.time.control(),
            out: None,
            process: self.process.settings(),
            rubric: None,
        })
    }
}

/// Arguments of `referee grade-all`.
#[derive(Args, Debug)]
pub struct GradeAllArgs {
    #[command(flatten)]
    opts: GradeOptions,
    /// A folder with one subfolder per student, each holding `bot.toml`,
    /// `bot.py` or an executable `bot`.
    dir: PathBuf,
    /// Where to write gradebook.csv and gradebook.json (default: DIR).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `grade-all`: one row per student; a broken submission never stops it.
pub fn run_all(args: GradeAllArgs) -> anyhow::Result<ExitCode> {
    referee::interrupt::install(super::tell)?;
    let mut cfg = args.opts.config()?;
    // Students' code runs in the sandbox unless told otherwise.
    if cfg.process.sandbox.is_none() {
        cfg.process.sandbox = Some(referee::bot::manifest::SandboxMode::On);
    }
    if let Some(mode) = cfg.process.sandbox {
        for lack in referee::bot::spec::sandbox_check(mode).map_err(anyhow::Error::msg)? {
            super::tell(&format!("warning: best-effort sandbox without {lack}"));
        }
    }
    let progress = Progress::new(false);
    let rows = grade_class(args.opts.game.game, &args.dir, &cfg, cfg.jobs, &progress)?;
    let out = args.out.clone().unwrap_or_else(|| args.dir.clone());
    let (csv_path, json_path) = write_gradebook(&out, &rows)?;
    println!("{}", gradebook_table(&rows));
    println!(
        "gradebook: {} and {}",
        csv_path.display(),
        json_path.display()
    );
    if let Some(sig) = referee::interrupt::interrupted() {
        eprintln!(
            "referee: interrupted by {}: the gradebook holds the {} students graded before",
            referee::interrupt::signal_name(sig),
            rows.len()
        );
        return Ok(ExitCode::from(referee::interrupt::exit_code(sig)));
    }
    Ok(ExitCode::SUCCESS)
}
