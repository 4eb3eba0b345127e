//! `referee league`: a competition over a semester (docs/league.md).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use comfy_table::Table;

use referee::game::GameKind;
use referee::league::{self, FinalOptions, Ladder, League, LeagueSettings, RunLeague};

/// Arguments of `referee league`.
#[derive(Args, Debug)]
pub struct LeagueArgs {
    #[command(subcommand)]
    command: LeagueCommand,
}

#[derive(Subcommand, Debug)]
enum LeagueCommand {
    /// Create a league folder: league.toml and the database.
    Init(InitArgs),
    /// Add a student's bot (a folder or a file) as their next version.
    Submit(SubmitArgs),
    /// Admit new versions and play ladder games until stopped.
    Run(RunArgs),
    /// Print the ladder.
    Standings(StandingsArgs),
    /// Serve the league's web page (read-only).
    Serve(ServeArgs),
    /// Stop admissions: later submissions are stored, not played.
    Freeze(DirArgs),
    /// Play the final among the frozen versions.
    Final(FinalArgs),
    /// Write the final standings and, with a rubric, the grades.
    Export(ExportArgs),
}

#[derive(Args, Debug)]
struct InitArgs {
    /// The new league folder.
    dir: PathBuf,
    /// The game: tictactoe, notakto or uttt.
    #[arg(long, value_parser = super::parse_game)]
    game: GameKind,
    /// Number of Notakto boards (1-26).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=26))]
    boards: u8,
    /// Per-move time limit in milliseconds.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    time_ms: u64,
    /// A built-in bot in the ladder from the start (repeatable; the first is
    /// pinned at rating 0). Default: random and greedy.
    #[arg(long = "anchor", value_name = "BOT")]
    anchors: Vec<String>,
    /// The master seed of every pairing and game.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Args, Debug)]
struct SubmitArgs {
    /// The league folder.
    dir: PathBuf,
    /// The student's name.
    name: String,
    /// Their bot: a folder (bot.toml, bot.py or an executable bot) or one file.
    path: PathBuf,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// The league folder.
    dir: PathBuf,
    /// Worker threads (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Stop after this many ladder games (default: until Ctrl-C or SIGTERM).
    #[arg(long)]
    games: Option<u64>,
    /// A folder of NAME/ subfolders: each new or changed one becomes a version.
    #[arg(long, value_name = "FOLDER")]
    inbox: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct StandingsArgs {
    /// The league folder.
    dir: PathBuf,
    /// The ladder as JSON.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// The ladder as CSV.
    #[arg(long)]
    csv: bool,
}

#[derive(Args, Debug)]
struct ServeArgs {
    /// The league folder.
    dir: PathBuf,
    /// Address to listen on (port 0 picks a free one, printed at start).
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: String,
    /// Connections served at once; one more is answered 503 and closed.
    #[arg(long, default_value_t = league::http::DEFAULT_MAX_CONNECTIONS)]
    max_connections: usize,
    /// Connections served at once from one IP address (raise it behind a
    /// reverse proxy, where every browser comes from the proxy's address).
    #[arg(long, default_value_t = league::http::DEFAULT_MAX_PER_ADDRESS)]
    max_per_address: usize,
}

#[derive(Args, Debug)]
struct DirArgs {
    /// The league folder.
    dir: PathBuf,
}

#[derive(Args, Debug)]
struct FinalArgs {
    /// The league folder.
    dir: PathBuf,
    /// Games per pair of bots (even; default: the settings' final_games_per_pair).
    #[arg(long)]
    games_per_pair: Option<u64>,
    /// Worker threads (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
}

#[derive(Args, Debug)]
struct ExportArgs {
    /// The league folder.
    dir: PathBuf,
    /// The folder to write into.
    #[arg(long)]
    out: PathBuf,
    /// A league rubric (docs/league.md): points per student.
    #[arg(long, value_name = "FILE")]
    rubric: Option<PathBuf>,
}

/// Runs `referee league ...`.
pub fn run(args: LeagueArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        LeagueCommand::Init(a) => init(a),
        LeagueCommand::Submit(a) => submit(a),
        LeagueCommand::Run(a) => run_league(a),
        LeagueCommand::Standings(a) => standings(a),
        LeagueCommand::Serve(a) => serve(a),
        LeagueCommand::Freeze(a) => {
            let l = League::open(&a.dir)?;
            let was = l.frozen()?;
            let t = l.freeze()?;
            outln!(
                "{}: {} (unix time {t}); later submissions are stored, not played",
                a.dir.display(),
                if was.is_some() {
                    "already frozen"
                } else {
                    "frozen"
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        LeagueCommand::Final(a) => final_cmd(a),
        LeagueCommand::Export(a) => {
            let files = league::export(&a.dir, &a.out, a.rubric.as_deref())?;
            for f in files {
                outln!("wrote {}", f.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn init(a: InitArgs) -> anyhow::Result<ExitCode> {
    let anchors = if a.anchors.is_empty() {
        vec!["random".to_string(), "greedy".to_string()]
    } else {
        a.anchors
    };
    let mut s = LeagueSettings::new(a.game, anchors);
    s.boards = a.boards;
    s.time_ms = a.time_ms;
    s.seed = a.seed;
    s.title = a
        .dir
        .file_name()
        .map_or_else(|| "League".into(), |n| n.to_string_lossy().into_owned());
    let l = League::init(&a.dir, s)?;
    outln!(
        "league {} created: {} with anchors {}; edit {} to change the settings",
        a.dir.display(),
        l.settings.game,
        l.settings.anchors.join(", "),
        a.dir.join(league::settings::SETTINGS).display()
    );
    Ok(ExitCode::SUCCESS)
}

fn submit(a: SubmitArgs) -> anyhow::Result<ExitCode> {
    let l = League::open(&a.dir)?;
    let s = l.submit(&a.name, &a.path)?;
    match (&s.rejected, s.new) {
        (Some(why), _) => outln!("{} version {}: rejected: {why}", a.name, s.version),
        (None, false) => outln!(
            "{} version {}: the same as the newest version; nothing new",
            a.name,
            s.version
        ),
        (None, true) => outln!("{} version {}: {}", a.name, s.version, s.status.name()),
    }
    Ok(ExitCode::SUCCESS)
}

fn run_league(a: RunArgs) -> anyhow::Result<ExitCode> {
    let jobs = super::jobs(a.jobs)?;
    // The database and every submission are the grader's files.
    super::close_to_bots(&[&a.dir])?;
    referee::play::interrupt::install(super::tell)?;
    let tty = std::io::stderr().is_terminal();
    let last =
        std::sync::Mutex::new(std::time::Instant::now() - std::time::Duration::from_secs(60));
    let progress = |p: &league::Progress| {
        if let Some(m) = &p.message {
            super::progress::say(&format!("referee: {m}"));
        }
        let Ok(mut at) = last.lock() else { return };
        if at.elapsed().as_secs_f64() < if tty { 0.5 } else { 10.0 } && p.message.is_none() {
            return;
        }
        *at = std::time::Instant::now();
        let leader = p
            .leader
            .as_ref()
            .map_or_else(|| "none yet".into(), |(n, r)| format!("{n} ({r:.0})"));
        super::progress::say(&format!(
            "referee: league: {} games, {:.1} games/s, leader {leader}, {} pending",
            p.played, p.per_second, p.pending
        ));
    };
    let opts = RunLeague {
        jobs,
        games: a.games,
        inbox: a.inbox,
    };
    let summary = league::run(&a.dir, &opts, &progress)?;
    outln!(
        "{} ladder games played; {} versions admitted, {} rejected",
        summary.played,
        summary.admitted,
        summary.rejected
    );
    Ok(match summary.interrupted {
        Some(sig) => ExitCode::from(referee::play::interrupt::exit_code(sig)),
        None => ExitCode::SUCCESS,
    })
}

fn table(ladder: &Ladder) -> Table {
    let mut t = Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header([
        "#",
        "name",
        "rating",
        "95 % interval",
        "LOS ↓",
        "games",
        "W-D-L",
        "forfeits",
        "version",
    ]);
    let f = |x: Option<f64>| x.map_or_else(|| "-".into(), |v| format!("{v:.0}"));
    for r in &ladder.rows {
        let mut name = r.name.clone();
        if r.anchor {
            name.push_str(" (anchor)");
        } else if r.placing {
            name.push_str(" *");
        }
        t.add_row([
            r.rank.to_string(),
            name,
            f(r.rating),
            format!("{} .. {}", f(r.low), f(r.high)),
            r.los_next
                .map_or_else(String::new, |l| format!("{:.0} %", 100.0 * l)),
            r.games.to_string(),
            format!("{}-{}-{}", r.wins, r.draws, r.losses),
            r.forfeits.to_string(),
            if r.anchor {
                "-".into()
            } else {
                r.version.to_string()
            },
        ]);
    }
    t
}

fn standings(a: StandingsArgs) -> anyhow::Result<ExitCode> {
    let l = League::open(&a.dir)?;
    let ladder = l.ladder()?;
    if a.json {
        outln!("{}", referee::escape::json::to_string_pretty(&ladder)?);
    } else if a.csv {
        out!("{}", league::finals::standings_csv(&ladder));
    } else {
        outln!("{}", table(&ladder));
        outln!(
            "{} games rated; first move worth {:.0} Elo; * = still being placed",
            ladder.games,
            ladder.first_move
        );
        if let Some(rule) = league::rule_line(&ladder) {
            outln!("{rule}");
        }
        if let Some(w) = &ladder.warning {
            super::tell(&format!("warning: {w}"));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn serve(a: ServeArgs) -> anyhow::Result<ExitCode> {
    let addr: std::net::SocketAddr = a
        .listen
        .parse()
        .map_err(|_| anyhow::anyhow!("--listen: '{}' is not an ADDRESS:PORT", a.listen))?;
    referee::play::interrupt::install(super::tell)?;
    let limits = league::http::WebLimits {
        max_connections: a.max_connections,
        max_per_address: a.max_per_address,
        ..Default::default()
    };
    league::web::serve(&a.dir, addr, limits, |bound| {
        outln!(
            "serving {} on http://{bound}/ (Ctrl-C stops)",
            a.dir.display()
        );
    })?;
    Ok(ExitCode::SUCCESS)
}

fn final_cmd(a: FinalArgs) -> anyhow::Result<ExitCode> {
    let jobs = super::jobs(a.jobs)?;
    referee::play::interrupt::install(super::tell)?;
    let progress = super::progress::Progress::new(false);
    let ladder = league::final_round(
        &a.dir,
        &FinalOptions {
            games_per_pair: a.games_per_pair,
            jobs,
        },
        &progress,
    )?;
    drop(progress);
    outln!("{}", table(&ladder));
    outln!(
        "the final's games, report.html and standings are in {}",
        a.dir.join(league::finals::FINAL_DIR).display()
    );
    if let Some(sig) = referee::play::interrupt::interrupted() {
        return Ok(ExitCode::from(referee::play::interrupt::exit_code(sig)));
    }
    Ok(ExitCode::SUCCESS)
}
