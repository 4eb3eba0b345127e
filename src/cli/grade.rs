//! `referee grade` and `referee grade-all`: students' AIs against the
//! optimal player.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{GameArgs, TimeArgs};
use crate::cli::progress::Progress;
use referee::game::Seat;
use referee::grade::class::{
    class_students, grade_class, write_gradebook, ClassOutput, Earlier, GradedSoFar,
};
use referee::grade::feedback::{grading_leaderboard, GradeResult};
use referee::grade::graders::Format;
use referee::grade::league::{self, LeagueConfig};
use referee::grade::rubric::Rubric;
use referee::grade::text::{grade_report_text, gradebook_table};
use referee::grade::{grade, GradeConfig, GradeMode, Thresholds};

/// Options shared by `grade` and `grade-all`.
#[derive(Args, Debug, Clone)]
pub struct GradeOptions {
    #[command(flatten)]
    game: GameArgs,
    #[command(flatten)]
    rules: super::RulesArgs,
    /// The seat(s) the bot plays: 1, 2 or both (default: Notakto's winning
    /// seat; both for the other games).
    #[arg(long, value_parser = ["1", "2", "both"])]
    seat: Option<String>,
    /// Games per seat in sampled mode (per opponent for UTTT); default 100,
    /// and 200 for a console program (sized to catch an AI that loses 1 %
    /// of random games: docs/grading.md).
    #[arg(long)]
    games: Option<u64>,
    /// Play every game even after one has missed the requirement (by
    /// default grading stops at the first failing game: the verdict is
    /// settled).
    #[arg(long)]
    keep_going: bool,
    /// The form of the submission: `console` (the assignment's program, as
    /// it is) or `protocol` (referee's bot protocol). Default: the
    /// rubric's `form`, else protocol.
    #[arg(long, value_parser = ["console", "protocol"])]
    form: Option<String>,
    /// The program file of a submission folder with several `.py` files
    /// (default: the rubric's `entry`, else main.py, else the one the others
    /// do not import).
    #[arg(long, value_name = "FILE")]
    entry: Option<String>,
    /// With --exhaustive on a console program: at most this many lines of
    /// play (one program run each).
    #[arg(long, default_value_t = referee::grade::DEFAULT_MAX_LINES)]
    max_lines: u64,
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
    /// Stop a bot that times out on this many games in a row: its
    /// remaining games count as timeout forfeits without being played
    /// (0: never stop it).
    #[arg(long, default_value_t = referee::grade::DEFAULT_MAX_TIMEOUTS)]
    max_timeouts: u32,
    /// A rubric (TOML) that turns the results into points
    /// (docs/grading.md); default: the requirement, 100 points or none.
    #[arg(long, value_name = "FILE")]
    pub(super) rubric: Option<PathBuf>,
    #[command(flatten)]
    time: TimeArgs,
    #[command(flatten)]
    pub(super) process: super::ProcessArgs,
}

/// Arguments of `referee grade`.
#[derive(Args, Debug)]
pub struct GradeArgs {
    #[command(flatten)]
    pub(super) opts: GradeOptions,
    /// The bot to grade (built-in, manifest, command line or console:...).
    bot: String,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Write every sampled game to DIR/games.jsonl.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write Gradescope's results.json here (also when the bot cannot be
    /// graded: then every rubric item fails with the reason).
    #[arg(long, value_name = "FILE")]
    gradescope: Option<PathBuf>,
    /// Write the student's feedback page (Markdown) here.
    #[arg(long, value_name = "FILE")]
    feedback: Option<PathBuf>,
    #[command(flatten)]
    systems: SystemArgs,
}

/// Runs `grade`: exit 0 pass, 1 fail, 2 harness error.
pub fn run(args: GradeArgs) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let github_output = std::env::var_os("GITHUB_OUTPUT").map(PathBuf::from);
    let last_line = args.systems.last_line(github_output.is_some())?;
    let cfg = match args.opts.config() {
        Ok(mut cfg) => {
            cfg.out = args.out.clone();
            cfg
        }
        Err(e) => return Err(not_graded(&args, e, None, started)),
    };
    let github_file = github_output.filter(|_| args.systems.github_classroom);
    for file in [
        &args.gradescope,
        &args.feedback,
        &args.systems.prairielearn,
        &github_file,
    ]
    .into_iter()
    .flatten()
    {
        check_writable(file)?;
    }
    if cfg.process.sandbox.is_some_and(|m| m.is_on()) {
        if let Some(r) = &args.opts.rubric {
            super::close_to_bots(&[r])?;
        }
    }
    referee::play::interrupt::install(super::tell)?;
    let progress = Progress::new(args.json);
    let report = match grade(args.opts.game.game, &args.bot, &cfg, &progress) {
        Ok(r) => r,
        Err(e) => return Err(not_graded(&args, e, cfg.rubric.as_ref(), started)),
    };
    if let Some(sig) = referee::play::interrupt::interrupted() {
        crate::cli::progress::say(&format!(
            "referee: interrupted by {}: grading stopped, no verdict",
            referee::play::interrupt::signal_name(sig)
        ));
        return Ok(ExitCode::from(referee::play::interrupt::exit_code(sig)));
    }
    let result = GradeResult::graded(&report, grading_leaderboard(&report));
    let text = if args.json {
        referee::escape::json::to_string_pretty(&report)? + "\n"
    } else {
        grade_report_text(&report)
    };
    write_results(&args, &result, &text, last_line)?;
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The grading systems' results `grade` writes besides Gradescope's.
#[derive(Args, Debug)]
pub struct SystemArgs {
    /// Write PrairieLearn's external grader results.json here (also when
    /// the bot cannot be graded: then `gradable` is false, with the reason).
    #[arg(long, value_name = "FILE")]
    prairielearn: Option<PathBuf>,
    /// Write GitHub Classroom's autograding result, `result=BASE64`:
    /// appended to $GITHUB_OUTPUT when that is set, else as the last line
    /// of standard output.
    #[arg(long)]
    github_classroom: bool,
    /// Print Autolab's autoresult (`{"scores": ..., "scoreboard": ...}`)
    /// as the last line of standard output.
    #[arg(long)]
    autolab: bool,
    /// Print a Moodle CodeRunner combinator template grader result (JSON)
    /// as the last line of standard output.
    #[arg(long)]
    coderunner: bool,
    /// Print the score from 0 to 1 as the last line of standard output
    /// (CodeGrade's capture points).
    #[arg(long)]
    codegrade: bool,
}

impl SystemArgs {
    /// The one format that prints the last line of standard output, if
    /// any; two are refused (both cannot be last).
    fn last_line(&self, github_output: bool) -> anyhow::Result<Option<Format>> {
        let asked: Vec<Format> = [
            (
                self.github_classroom && !github_output,
                Format::GithubClassroom,
            ),
            (self.autolab, Format::Autolab),
            (self.coderunner, Format::CodeRunner),
            (self.codegrade, Format::CodeGrade),
        ]
        .into_iter()
        .filter_map(|(on, f)| on.then_some(f))
        .collect();
        match asked.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            [a, b, ..] => anyhow::bail!(
                "--{} and --{} both print the last line of standard output: give one of them{}",
                a.name(),
                b.name(),
                if asked.contains(&Format::GithubClassroom) {
                    " (--github-classroom prints only when GITHUB_OUTPUT is not set)"
                } else {
                    ""
                }
            ),
        }
    }
}

/// Writes `result` everywhere the command line asks: the files, then
/// `text` (the report) on standard output, then GitHub Classroom's line
/// (into $GITHUB_OUTPUT, or printed), then the one last line.
fn write_results(
    args: &GradeArgs,
    result: &GradeResult,
    text: &str,
    last_line: Option<Format>,
) -> anyhow::Result<()> {
    for (path, format) in [
        (&args.gradescope, Format::Gradescope),
        (&args.systems.prairielearn, Format::PrairieLearn),
    ] {
        if let Some(path) = path {
            write_file(path, &format.render(result))?;
        }
    }
    if let Some(path) = &args.feedback {
        write_file(path, &result.feedback)?;
    }
    out!("{text}");
    if args.systems.github_classroom && last_line != Some(Format::GithubClassroom) {
        if let Some(path) = std::env::var_os("GITHUB_OUTPUT") {
            append_file(
                std::path::Path::new(&path),
                &Format::GithubClassroom.render(result),
            )?;
        }
    }
    if let Some(format) = last_line {
        out!("{}", format.render(result));
    }
    Ok(())
}

/// The bot could not be graded: every result asked for says so, with 0
/// points and the reason (so the student sees it), then the error.
fn not_graded(
    args: &GradeArgs,
    e: anyhow::Error,
    rubric: Option<&Rubric>,
    started: std::time::Instant,
) -> anyhow::Error {
    let last_line = match args
        .systems
        .last_line(std::env::var_os("GITHUB_OUTPUT").is_some())
    {
        Ok(l) => l,
        Err(usage) => return usage,
    };
    let result =
        GradeResult::not_graded(&format!("{e:#}"), rubric, started.elapsed().as_secs_f64());
    match write_results(args, &result, "", last_line) {
        Ok(()) => e,
        Err(w) => e.context(format!("{w:#}")),
    }
}

/// Fails now, before any game, if `path` cannot be written.
fn check_writable(path: &std::path::Path) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    Ok(())
}

fn write_file(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

fn append_file(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

/// Most sampled games per seat: grading keeps every game to judge it.
const MAX_GAMES: u64 = 100_000;

impl GradeOptions {
    /// The library configuration these options describe, checked: the same
    /// one-line errors as `match` and `tournament` for `--jobs 0` and a
    /// `--games` of 0 (or beyond what grading can hold).
    fn config(&self) -> anyhow::Result<GradeConfig> {
        let jobs = super::jobs(self.jobs)?;
        let games = self.games.unwrap_or(100);
        if !self.exhaustive && !(1..=MAX_GAMES).contains(&games) {
            anyhow::bail!(
                "--games must be between 1 and {MAX_GAMES} (games per seat; grading keeps every \
                 game to judge it), got {games}"
            );
        }
        if self.max_lines == 0 {
            anyhow::bail!("--max-lines must be at least 1");
        }
        for (flag, v) in [
            ("--min-vs-random", self.min_vs_random),
            ("--min-vs-greedy", self.min_vs_greedy),
            ("--min-vs-optimal", self.min_vs_optimal),
        ] {
            // NaN passes no comparison: it would make every bot fail.
            if !(0.0..=100.0).contains(&v) {
                anyhow::bail!("{flag} must be a percentage from 0 to 100, got {v}");
            }
        }
        let seats = match self.seat.as_deref() {
            Some("1") => Some(vec![Seat::One]),
            Some("2") => Some(vec![Seat::Two]),
            Some(_) => Some(vec![Seat::One, Seat::Two]),
            None => None,
        };
        Ok(GradeConfig {
            options: self.game.options_under(&self.rules)?,
            seats,
            games,
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
            rubric: match &self.rubric {
                Some(path) => Some(Rubric::load(path).map_err(anyhow::Error::msg)?),
                None => None,
            },
            max_timeouts: self.max_timeouts,
            keep_going: self.keep_going,
            games_explicit: self.games.is_some(),
            form: match self.form.as_deref() {
                Some(f) => Some(f.parse().map_err(anyhow::Error::msg)?),
                None => None,
            },
            entry: self.entry.clone(),
            max_lines: self.max_lines,
        })
    }
}

/// Arguments of `referee grade-all`.
#[derive(Args, Debug)]
pub struct GradeAllArgs {
    #[command(flatten)]
    pub(super) opts: GradeOptions,
    /// A folder with one subfolder per student, each holding `bot.toml`,
    /// `bot.py` or an executable `bot`.
    dir: PathBuf,
    /// Where to write gradebook.csv, gradebook.json, grades.csv (points per
    /// rubric item, for an LMS), feedback/STUDENT.md and
    /// gradescope/STUDENT/results.json (default: DIR). Checked before the
    /// first game.
    #[arg(long)]
    out: Option<PathBuf>,
    /// After grading, play a class tournament between the students' bots
    /// and the built-ins: standings, OUT/tournament/report.html, and each
    /// student's rank, score and Elo in their results.json leaderboard.
    #[arg(long)]
    tournament: bool,
    /// Games per pairing of the class tournament (even).
    #[arg(long, default_value_t = 2, requires = "tournament")]
    tournament_games: u64,
    /// Play the class tournament as a Swiss system of R rounds (default
    /// ceil(log2 bots) + 2) instead of a round-robin: for a large class.
    #[arg(long, value_name = "R", num_args = 0..=1, default_missing_value = "0", requires = "tournament")]
    swiss: Option<u64>,
    /// The built-in bots that play in the class tournament.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "random,greedy,optimal",
        requires = "tournament"
    )]
    builtins: Vec<String>,
    /// The class tournament report's title.
    #[arg(long, requires = "tournament")]
    title: Option<String>,
    /// Finish an earlier grade-all into the same --out (stopped, or
    /// interrupted): students it graded are kept, not graded again; the
    /// options must be the same.
    #[arg(long, conflicts_with = "overwrite")]
    resume: bool,
    /// Grade every student again over an earlier gradebook in --out
    /// (which is refused otherwise).
    #[arg(long, alias = "force")]
    overwrite: bool,
    /// Grade only slice K of N of the class (students in name order, whole
    /// students per shard); combine the shards' folders with `referee merge`.
    #[arg(long, value_name = "K/N", conflicts_with = "tournament")]
    shard: Option<String>,
    #[command(flatten)]
    systems: ClassSystemArgs,
}

/// The grading systems' results `grade-all` writes per student besides
/// Gradescope's, each into `OUT/<system>/STUDENT/`.
#[derive(Args, Debug)]
pub struct ClassSystemArgs {
    /// Write each student's PrairieLearn results.json to
    /// OUT/prairielearn/STUDENT/results.json.
    #[arg(long)]
    prairielearn: bool,
    /// Write each student's GitHub Classroom `result=BASE64` line to
    /// OUT/github-classroom/STUDENT/result.txt.
    #[arg(long)]
    github_classroom: bool,
    /// Write each student's Autolab autoresult to
    /// OUT/autolab/STUDENT/autoresult.json.
    #[arg(long)]
    autolab: bool,
    /// Write each student's CodeRunner grader JSON to
    /// OUT/coderunner/STUDENT/coderunner.json.
    #[arg(long)]
    coderunner: bool,
    /// Write each student's score from 0 to 1 to OUT/codegrade/STUDENT/score.txt.
    #[arg(long)]
    codegrade: bool,
}

impl ClassSystemArgs {
    fn formats(&self) -> Vec<Format> {
        [
            (self.prairielearn, Format::PrairieLearn),
            (self.github_classroom, Format::GithubClassroom),
            (self.autolab, Format::Autolab),
            (self.coderunner, Format::CodeRunner),
            (self.codegrade, Format::CodeGrade),
        ]
        .into_iter()
        .filter_map(|(on, f)| on.then_some(f))
        .collect()
    }
}

/// Runs `grade-all`: one row per student; a broken submission never stops it.
pub fn run_all(args: GradeAllArgs) -> anyhow::Result<ExitCode> {
    referee::play::interrupt::install(super::tell)?;
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
    let out = args.out.clone().unwrap_or_else(|| args.dir.clone());
    let league = args.tournament.then(|| LeagueConfig {
        games_per_pairing: args.tournament_games,
        swiss: args.swiss.map(|r| (r > 0).then_some(r)),
        builtins: args.builtins.clone(),
        title: args.title.clone(),
    });
    if !args.dir.is_dir() {
        // Checked before anything is created: a mistyped folder is no class.
        anyhow::bail!(
            "{}: no such folder (the class folder: one subfolder per student)",
            args.dir.display()
        );
    }
    if cfg.process.sandbox.is_some_and(|m| m.is_on()) {
        if !out.exists() {
            std::fs::create_dir_all(&out)
                .map_err(|e| anyhow::anyhow!("cannot make {}: {e}", out.display()))?;
        }
        let mut keep: Vec<&std::path::Path> = vec![&args.dir, &out];
        if let Some(r) = &args.opts.rubric {
            keep.push(r);
        }
        super::close_to_bots(&keep)?;
    }
    if let Some(l) = &league {
        // Before any game: the built-ins exist and the plan fits the class.
        let students = class_students(&args.dir, &out)?;
        league::check(args.opts.game.game, students.len(), &cfg, l)?;
    }
    let progress = Progress::new(false);
    let class_out = ClassOutput {
        dir: out.clone(),
        leaderboard: Vec::new(),
        earlier: match (args.resume, args.overwrite) {
            (true, _) => Earlier::Resume,
            (_, true) => Earlier::Overwrite,
            _ => Earlier::Refuse,
        },
        shard: args
            .shard
            .as_deref()
            .map(super::parse_shard)
            .transpose()
            .map_err(anyhow::Error::msg)?,
        formats: args.systems.formats(),
    };
    let rubric = cfg.rubric();
    let (rows, failed) = match grade_class(
        args.opts.game.game,
        &args.dir,
        &cfg,
        cfg.jobs,
        &class_out,
        &progress,
    ) {
        Ok(rows) => (rows, None),
        Err(e) => match e.downcast_ref::<GradedSoFar>() {
            // An output error mid-way: what was graded is kept.
            Some(so_far) => (so_far.0.clone(), Some(e)),
            None => return Err(e),
        },
    };
    let items: Vec<String> = rubric.items.iter().map(|i| i.name.clone()).collect();
    let paths = write_gradebook(&out, &rows, &items)?;
    outln!("{}", gradebook_table(&rows));
    let results: Vec<String> = std::iter::once(Format::Gradescope)
        .chain(class_out.formats.iter().copied())
        .map(|f| out.join(f.name()).display().to_string())
        .collect();
    outln!(
        "gradebook: {}; feedback: {}; results: {}",
        paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        out.join("feedback").display(),
        results.join(", ")
    );
    if let Some(e) = failed {
        return Err(e);
    }
    if let Some(sig) = referee::play::interrupt::interrupted() {
        crate::cli::progress::say(&format!(
            "referee: interrupted by {}: the gradebook holds the {} students graded before; \
             run the same command with --resume to grade the others",
            referee::play::interrupt::signal_name(sig),
            rows.len()
        ));
        return Ok(ExitCode::from(referee::play::interrupt::exit_code(sig)));
    }
    if let Some(l) = &league {
        let students = class_students(&args.dir, &out)?;
        let dir = out.join("tournament");
        let played =
            league::class_tournament(args.opts.game.game, &students, &cfg, l, &dir, &progress)?;
        for (s, why) in &played.left_out {
            super::tell(&format!("class tournament: {s} left out: {why}"));
        }
        if let Some(sig) = referee::play::interrupt::interrupted() {
            crate::cli::progress::say(&format!(
                "referee: interrupted by {}: the class tournament's games so far are in {}; \
                 run the same command with --resume to continue it (no student is graded again)",
                referee::play::interrupt::signal_name(sig),
                dir.display()
            ));
            return Ok(ExitCode::from(referee::play::interrupt::exit_code(sig)));
        }
        league::add_to_gradescope(&out, &played.rows)?;
        std::fs::write(
            out.join("leaderboard.json"),
            referee::escape::json::to_string_pretty(&played.rows)? + "\n",
        )?;
        out!(
            "{}",
            referee::tournament::standings::standings_tables(&played.run.summary)
        );
        outln!(
            "class tournament: {} (report: {})",
            out.join("leaderboard.json").display(),
            dir.join("report.html").display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `referee merge` of `grade-all --shard` folders: one gradebook, as an
/// unsharded run writes it.
pub fn merge_class(
    dirs: &[PathBuf],
    out: Option<&std::path::Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let Some(out) = out else {
        anyhow::bail!(
            "merging grade-all shards needs --out DIR: the folder for the class's gradebook"
        );
    };
    std::fs::create_dir_all(out)
        .map_err(|e| anyhow::anyhow!("--out {}: cannot create the folder: {e}", out.display()))?;
    let rows = referee::grade::class::merge_class(dirs, out)?;
    if json {
        outln!("{}", referee::escape::json::to_string_pretty(&rows)?);
    } else {
        outln!("{}", gradebook_table(&rows));
        outln!("gradebook: {}", out.join("gradebook.csv").display());
    }
    Ok(ExitCode::SUCCESS)
}
