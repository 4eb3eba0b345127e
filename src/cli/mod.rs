//! The command line: arguments become validated configuration, then one
//! generic function per command runs with the game chosen once.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use referee::bot::manifest::SandboxMode;
use referee::bot::sandbox::users::UidRange;
use referee::bot::spec::{BotSpec, ProcessSettings};
use referee::bot::{TimeControl, TimeProfile};
use referee::game::{GameKind, GameOptions, Rules};
use referee::protocol::BotProtocol;

/// Prints on stdout as [`print`] does, through [`show`]: what a command
/// prints may hold a bot's or a student's words.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::show(&format!($($arg)*), false)
    };
}

/// Prints a line on stdout as [`println`] does, through [`show`].
macro_rules! outln {
    () => {
        $crate::cli::show("", true)
    };
    ($($arg:tt)*) => {
        $crate::cli::show(&format!($($arg)*), true)
    };
}

pub mod bots;
pub mod check;
pub mod check_console;
pub mod connect;
pub mod engine;
pub mod grade;
pub mod judge;
pub mod league;
pub mod match_cmd;
pub mod play;
pub mod progress;
pub mod report;
pub mod sandbox;
pub mod serve;
pub mod tournament;

/// referee: play, judge and run tournaments of tic-tac-toe, Notakto and
/// Ultimate tic-tac-toe bots.
#[derive(Parser, Debug)]
#[command(name = "referee", version, about, long_about = None)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Every command.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Play a game on the console; each seat is `human` or a bot.
    Play(play::PlayArgs),
    /// Judge a recorded game: print A, B, Draw or Pending.
    Judge(judge::JudgeArgs),
    /// Play two bots in pairs of games: score, Elo, LOS, pentanomial counts, optional SPRT.
    Match(match_cmd::MatchArgs),
    /// List the built-in bots of every game with their parameters.
    Bots(bots::BotsArgs),
    /// Run a tournament from a TOML file (docs/tournaments.md).
    Tournament(tournament::TournamentArgs),
    /// Combine the output folders of a sharded tournament.
    Merge(tournament::MergeArgs),
    /// Write one self-contained HTML page (standings, charts, replays) for a run directory.
    Report(report::ReportArgs),
    /// Compliance self-test of an external bot: positions in both seats, timing.
    Check(check::CheckArgs),
    /// Check a console game program's transcripts against `referee play`.
    CheckConsole(check_console::CheckConsoleArgs),
    /// Grade a bot against the optimal player (sampled or exhaustive).
    Grade(grade::GradeArgs),
    /// Grade every submission in a folder and write a gradebook.
    GradeAll(grade::GradeAllArgs),
    /// Serve N-round matches against a bot over TCP (text for nc, or v1 for bots).
    Serve(serve::ServeArgs),
    /// Play a local bot against a remote v1 server and print the final score.
    Connect(connect::ConnectArgs),
    /// Speak the bot protocol on stdin/stdout as the given bot (for other harnesses).
    Engine(engine::EngineArgs),
    /// Show what the sandbox gives on this machine, and what a bot may read in it.
    Sandbox(sandbox::SandboxArgs),
    /// A competition over a semester: submissions, a rated ladder, a web page, a final.
    League(league::LeagueArgs),
}

/// The game and its options, shared by every command that plays.
#[derive(Args, Debug, Clone)]
pub struct GameArgs {
    /// The game: tictactoe, notakto or uttt.
    #[arg(value_parser = parse_game)]
    pub game: GameKind,
    /// Number of Notakto boards (1-26).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=26))]
    pub boards: u8,
}

impl GameArgs {
    /// The game options.
    pub fn options(&self) -> GameOptions {
        GameOptions {
            boards: self.boards,
            ..GameOptions::default()
        }
    }
}

/// Time limits for external bots, shared by every command that plays them.
#[derive(Args, Debug, Clone)]
pub struct TimeArgs {
    /// Per-move time limit in milliseconds.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub time_ms: u64,
    /// Extra time for start-up, added to a bot's first turn only.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(0..=3_600_000))]
    pub startup_ms: u64,
    /// Named limits instead of --time-ms and --startup-ms: `codingame`
    /// (1000 ms for the first turn, 100 ms for each later one, timed from
    /// the bot's input as on CodinGame, with 10 ms of tolerance).
    #[arg(long, value_name = "PROFILE", conflicts_with_all = ["time_ms", "startup_ms"])]
    pub time_profile: Option<TimeProfile>,
}

impl TimeArgs {
    /// The time control.
    pub fn control(&self) -> TimeControl {
        match self.time_profile {
            Some(p) => p.control(),
            None => TimeControl::new(self.time_ms, self.startup_ms),
        }
    }
}

/// UTTT's rule, for the commands that play or judge games.
#[derive(Args, Debug, Clone, Default)]
pub struct RulesArgs {
    /// How a UTTT game that fills every board without three in a row ends:
    /// `standard` (a draw, the default) or `codingame` (more boards won wins).
    #[arg(long, value_name = "RULES", value_parser = parse_rules)]
    pub rules: Option<Rules>,
}

impl GameArgs {
    /// The game options under `rules`; CodinGame's rule is for UTTT only.
    pub fn options_under(&self, rules: &RulesArgs) -> anyhow::Result<GameOptions> {
        let rules = rules.rules.unwrap_or_default();
        if !rules.is_standard() && !self.game.has_rules() {
            anyhow::bail!("--rules {rules} is for uttt; {} has one rule", self.game);
        }
        Ok(GameOptions {
            rules,
            ..self.options()
        })
    }
}

fn parse_rules(s: &str) -> Result<Rules, String> {
    s.parse()
        .map_err(|e: referee::game::ParseError| e.to_string())
}

fn parse_uids(s: &str) -> Result<UidRange, String> {
    s.parse()
}

fn parse_protocol(s: &str) -> Result<BotProtocol, String> {
    s.parse()
}

/// How external bots' processes run, shared by every command that plays them.
#[derive(Args, Debug, Clone, Default)]
pub struct ProcessArgs {
    /// Keep each external protocol bot's process across games (the bot
    /// must expect a new `begin` after `end`: docs/protocol.md).
    #[arg(long)]
    pub reuse: bool,
    /// Give external bots referee's whole environment instead of the clean
    /// one (PATH, HOME, LANG, a private TMPDIR, REFEREE_SEED, their `env`).
    #[arg(long)]
    pub inherit_env: bool,
    /// Do not pin each worker, and the bots it starts, to one CPU.
    #[arg(long)]
    pub no_affinity: bool,
    /// Run every external bot in the sandbox (docs/sandbox.md): `on` (the
    /// default value) refuses a kernel that cannot give every guarantee,
    /// `best-effort` says what it cannot give and goes on.
    #[arg(long, num_args = 0..=1, default_missing_value = "on", value_name = "MODE")]
    pub sandbox: Option<SandboxMode>,
    /// Run no bot in the sandbox, whatever its manifest says.
    #[arg(long, conflicts_with = "sandbox")]
    pub no_sandbox: bool,
    /// A folder sandboxed bots may read besides their own (repeatable).
    #[arg(long, value_name = "DIR")]
    pub sandbox_read: Vec<std::path::PathBuf>,
    /// Size cap of each sandboxed bot's temporary folder, in MiB (default
    /// 256; 0: no cap). Writing past it fails with "no space left".
    #[arg(long, value_name = "MB")]
    pub tmp_mb: Option<u64>,
    /// The user ids of per-bot users, when referee runs as root
    /// (docs/sandbox.md): FIRST-LAST, default 62000-62999 or
    /// $REFEREE_SANDBOX_UIDS.
    #[arg(long, value_name = "FIRST-LAST", value_parser = parse_uids)]
    pub sandbox_uids: Option<UidRange>,
    /// The protocol of external bots given as a bare command line (a
    /// manifest says its own): `v1` (the default) or `codingame`
    /// (CodinGame's turn input and `row col` replies; docs/protocol.md,
    /// "CodinGame bots").
    #[arg(long, value_name = "PROTOCOL", value_parser = parse_protocol)]
    pub protocol: Option<BotProtocol>,
}

impl ProcessArgs {
    /// The library's process settings these flags describe.
    pub fn settings(&self) -> ProcessSettings {
        ProcessSettings {
            reuse: self.reuse,
            inherit_env: self.inherit_env,
            sandbox: if self.no_sandbox {
                Some(SandboxMode::Off)
            } else {
                self.sandbox
            },
            sandbox_read: self
                .sandbox_read
                .iter()
                .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
                .collect(),
            tmp_mb: self.tmp_mb,
            protocol: self.protocol,
        }
    }

    /// Applies the flags to a resolved bot, and checks its sandbox can be
    /// given (telling what a best-effort sandbox lacks).
    pub fn apply(&self, spec: &mut BotSpec, game: GameKind) -> anyhow::Result<()> {
        spec.adjust(&self.settings());
        spec.check_game(game)?;
        for lack in spec.check_sandbox()? {
            tell(&format!("warning: best-effort sandbox without {lack}"));
        }
        Ok(())
    }
}

/// The `--jobs` of every command that plays games: the number of cores by
/// default; 0 is an error.
pub fn jobs(arg: Option<usize>) -> anyhow::Result<usize> {
    match arg {
        Some(0) => anyhow::bail!("--jobs must be at least 1"),
        Some(n) => Ok(n),
        None => Ok(referee::play::runner::default_jobs()),
    }
}

/// Warns when timed external bots would share cores (docs/tournaments.md).
pub fn warn_jobs(jobs: usize, external: bool) {
    let cores = referee::play::runner::default_jobs();
    if jobs > cores && external {
        crate::cli::progress::say(&format!(
            "referee: warning: --jobs {jobs} is more than the {cores} cores; timed external bots \
             will share cores and may forfeit by timeout (see docs/tournaments.md)"
        ));
    }
}

/// Most games of a run whose `report.html` is written by itself at the end:
/// the page embeds every game, and is read whole into memory to be written.
/// A larger run says so; `referee report DIR` writes it anyway.
pub const REPORT_MAX_GAMES: u64 = 100_000;

/// Writes `DIR/report.html` for a run of `games` games, unless it has more
/// than [`REPORT_MAX_GAMES`] (then a note says how to write it anyway).
pub fn write_report(
    dir: &std::path::Path,
    games: u64,
    progress: &crate::cli::progress::Progress,
) -> anyhow::Result<Option<std::path::PathBuf>> {
    use referee::play::Observer;
    if games > REPORT_MAX_GAMES {
        progress.note(&format!(
            "report.html not written: {games} games is more than the {REPORT_MAX_GAMES} a \
             report is written for by itself (the page holds every game); \
             `referee report {}` writes it anyway",
            dir.display()
        ));
        return Ok(None);
    }
    let path = dir.join("report.html");
    referee::report::write_report(dir, &path, None, progress)?;
    Ok(Some(path))
}

/// `Played N games in T s (R games/s); M resumed from before; shard K/N`.
pub fn played_line(
    played: u64,
    elapsed: std::time::Duration,
    resumed: u64,
    shard: Option<(u64, u64)>,
) -> String {
    let secs = elapsed.as_secs_f64();
    format!(
        "Played {played} games in {secs:.2} s ({:.0} games/s){}{}",
        if secs > 0.0 {
            played as f64 / secs
        } else {
            0.0
        },
        if resumed > 0 {
            format!("; {resumed} resumed from before")
        } else {
            String::new()
        },
        match shard {
            Some((k, n)) => format!("; shard {k}/{n}"),
            None => String::new(),
        }
    )
}

/// Writes `text` (and a newline) on stdout as a terminal must show it:
/// the control characters, escape sequences and bidi overrides it holds
/// as visible escapes ([`referee::escape::terminal::text`]), so that no
/// bot's reply, stderr or name, and no student's file name, can act on
/// the terminal of whoever runs referee. Every command prints through
/// here (the `out!` and `outln!` macros) or through
/// [`progress::say`] on stderr. A closed stdout (`referee ... | head`)
/// is not an error worth a panic.
pub fn show(text: &str, newline: bool) {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(referee::escape::terminal::text(text).as_bytes());
    if newline {
        let _ = o.write_all(b"\n");
    }
    let _ = o.flush();
}

/// Closes the grader's `paths` to other users where per-bot users alone
/// keep bots from them (docs/sandbox.md), saying so.
pub fn close_to_bots(paths: &[&std::path::Path]) -> anyhow::Result<()> {
    let changed = referee::bot::sandbox::close_to_bots(paths)
        .map_err(|e| anyhow::anyhow!("cannot close the grader's files to the bots: {e}"))?;
    for p in changed {
        tell(&format!(
            "note: {} is now closed to other users (chmod o-rwx): here bots run as users of \
             their own without a private view, and read what others may",
            p.display()
        ));
    }
    Ok(())
}

/// Tells the user something on stderr, as every command does.
pub fn tell(text: &str) {
    crate::cli::progress::say(&format!("referee: {text}"));
}

pub(crate) fn parse_game(s: &str) -> Result<GameKind, String> {
    s.parse()
        .map_err(|e: referee::game::ParseError| e.to_string())
}

/// Runs the command line and returns the process exit code: 0 success,
/// 1 a negative verdict or interrupted input, 2 bad input or a harness error.
pub fn main() -> ExitCode {
    // The sandbox's janitor: referee itself, started with a hidden word.
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new(JANITOR_WORD)) {
        let stdin = std::io::stdin();
        return match referee::bot::sandbox::users::janitor(stdin.lock()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::from(2),
        };
    }
    if let Ok(me) = std::env::current_exe() {
        referee::bot::sandbox::users::set_janitor(me, vec![JANITOR_WORD.into()]);
    }
    let cli = Cli::parse();
    if let Err(e) = referee::bot::sandbox::users::configure(cli.command.sandbox_uids()) {
        crate::cli::progress::say(&format!("referee: error: {e}"));
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Play(a) => play::run(a),
        Command::Judge(a) => judge::run(a),
        Command::Match(a) => match_cmd::run(a),
        Command::Bots(a) => bots::run(a),
        Command::Tournament(a) => tournament::run(a),
        Command::Merge(a) => tournament::merge(a),
        Command::Report(a) => report::run(a),
        Command::Check(a) => check::run(a),
        Command::CheckConsole(a) => check_console::run(a),
        Command::Grade(a) => grade::run(a),
        Command::GradeAll(a) => grade::run_all(a),
        Command::Serve(a) => serve::run(a),
        Command::Connect(a) => connect::run(a),
        Command::Engine(a) => engine::run(a),
        Command::Sandbox(a) => sandbox::run(a),
        Command::League(a) => league::run(a),
    };
    referee::bot::sandbox::finish();
    match result {
        Ok(code) => code,
        Err(e) => {
            crate::cli::progress::say(&format!("referee: error: {}", error_text(&e)));
            ExitCode::from(2)
        }
    }
}

/// The hidden first argument that runs the sandbox's janitor
/// (`bot::sandbox::users`), never typed by a user.
const JANITOR_WORD: &str = "__sandbox-janitor";

impl Command {
    /// The `--sandbox-uids` of a command that runs bots.
    fn sandbox_uids(&self) -> Option<UidRange> {
        let process = match self {
            Command::Play(a) => &a.process,
            Command::Match(a) => &a.process,
            Command::Tournament(a) => &a.process,
            Command::Check(a) => &a.process,
            Command::Grade(a) => &a.opts.process,
            Command::GradeAll(a) => &a.opts.process,
            Command::Serve(a) => &a.process,
            Command::Connect(a) => &a.process,
            Command::Engine(a) => &a.process,
            Command::Sandbox(a) => &a.process,
            _ => return None,
        };
        process.sandbox_uids
    }
}

/// Parses `--shard K/N` with 1 <= K <= N.
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("--shard must be K/N with 1 <= K <= N, got '{text}'");
    let (k, n) = text.split_once('/').ok_or_else(bad)?;
    let k: u64 = k.trim().parse().map_err(|_| bad())?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    if k == 0 || n == 0 || k > n {
        return Err(bad());
    }
    Ok((k, n))
}

#[cfg(test)]
#[test]
fn shards_read_as_k_of_n() {
    assert_eq!(parse_shard("2/3"), Ok((2, 3)));
    assert!(parse_shard("0/3").is_err());
    assert!(parse_shard("4/3").is_err());
    assert!(parse_shard("x").is_err());
}

/// An error as the user reads it: its chain joined by `: ` (as anyhow's
/// `{:#}`), with the library's typed errors worded by the flags of this
/// command line (the library carries the data and names no flag).
pub fn error_text(e: &anyhow::Error) -> String {
    use referee::grade::class::ClassError;
    use referee::matches::MatchError;
    use referee::play::journal::RunError;
    e.chain()
        .map(|cause| {
            if let Some(r) = cause.downcast_ref::<RunError>() {
                match r {
                    RunError::HoldsGames { .. } => {
                        format!("{r}; pass --resume to finish that run, or choose another --out")
                    }
                    RunError::DifferentRun { .. } => format!(
                        "{r}; resume with the same settings (the same file or arguments, and --seed)"
                    ),
                    RunError::ResumeWithoutFolder => {
                        "--resume needs --out DIR (the folder of the run to continue)".into()
                    }
                    RunError::Unfinished { .. } => {
                        format!("{r}; make room and run the same command with --resume to finish it")
                    }
                    RunError::MergeIntoRun { .. } => format!("{r}; choose another --out"),
                    RunError::TooManyShards { .. } => format!("--{r}"),
                    RunError::NoShards { k, n, why } if why.contains("SPRT") => format!(
                        "--shard {k}/{n} cannot be used with --sprt: the test must see the \
                         games in order to stop at the right pair; play a fixed number of games \
                         (--games) in shards"
                    ),
                    RunError::NoShards { .. } => format!("--{r}"),
                    RunError::MissingGames { missing, total } => format!(
                        "{missing} of {total} games are missing (is a shard unfinished or not \
                         listed? finish it with --resume)"
                    ),
                    _ => r.to_string(),
                }
            } else if let Some(s) = cause.downcast_ref::<referee::play::SettingError>() {
                format!("--{} {}", s.setting, s.problem)
            } else if let Some(c) = cause.downcast_ref::<ClassError>() {
                match c {
                    ClassError::EarlierGradebook(_) => format!(
                        "{c}; pass --resume to finish that run without regrading its students, \
                         --overwrite to grade everyone again, or choose another --out"
                    ),
                    ClassError::OtherSettings { .. } => format!(
                        "{c}; resume with the same options, or pass --overwrite to grade \
                         everyone again"
                    ),
                    ClassError::OutDir { .. } => format!("--out {c}"),
                    ClassError::TooManyShards { .. } => format!("--{c}"),
                    ClassError::NotAShard(_) => format!("{c}: was it run with --shard?"),
                    ClassError::ShardUnfinished { .. } => {
                        format!("{c}; finish it with the same command and --resume")
                    }
                }
            } else if let Some(m) = cause.downcast_ref::<MatchError>() {
                match m {
                    MatchError::OddGames(g) => format!(
                        "--games must be a positive even number (games come in pairs, seats \
                         swapped), got {g}"
                    ),
                    MatchError::TooManyGames(g) => {
                        format!("--games must be at most {} (2^40), got {g}", 1u64 << 40)
                    }
                    MatchError::NoJobs => "--jobs must be at least 1".into(),
                    _ => m.to_string(),
                }
            } else {
                cause.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(": ")
}
