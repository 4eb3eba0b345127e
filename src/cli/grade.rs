//! `referee grade` and `referee grade-all`: students' AIs against the
//! optimal player.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::{GameArgs, TimeArgs};
use referee::bot::BotSpec;
use referee::game::{GameKind, GameOptions, Seat, Uttt};
use referee::grade::exhaustive::{explore, make_oracle, Oracle};
use referee::grade::{
    default_seats, judge_sampled, play_games, requirement_text, GradeReport, OpponentScore,
    SampledConfig, Solved,
};
use referee::record::GameRecord;

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
    let kind = args.opts.game.game;
    referee::interrupt::install()?;
    let report = grade_kind(kind, &args.bot, &args.opts, args.out.as_deref(), true)?;
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
        print_report(&report);
    }
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn seats(opts: &GradeOptions) -> Vec<Seat> {
    match opts.seat.as_deref() {
        Some("1") => vec![Seat::One],
        Some("2") => vec![Seat::Two],
        Some(_) => vec![Seat::One, Seat::Two],
        None => default_seats(opts.game.game, &opts.game.options()),
    }
}

/// Grades one bot: the one place the game is chosen.
fn grade_kind(
    kind: GameKind,
    bot: &str,
    opts: &GradeOptions,
    out: Option<&Path>,
    show_progress: bool,
) -> anyhow::Result<GradeReport> {
    match kind {
        GameKind::TicTacToe => {
            grade_solved::<referee::game::TicTacToe>(bot, opts, out, show_progress)
        }
        GameKind::Notakto => grade_solved::<referee::game::Notakto>(bot, opts, out, show_progress),
        GameKind::Uttt => grade_uttt(bot, opts, out),
    }
}

fn jobs(opts: &GradeOptions) -> usize {
    opts.jobs
        .unwrap_or_else(referee::runner::default_jobs)
        .max(1)
}

fn write_records(out: Option<&Path>, records: &[GameRecord]) -> anyhow::Result<()> {
    let Some(dir) = out else { return Ok(()) };
    let (folder, games) = referee::journal::RunFolder::open(dir)?;
    if let Some(t) = &games.torn {
        eprintln!("referee: {t}; it was cut off");
    }
    for r in records {
        folder.append(r)?;
    }
    Ok(())
}

fn grade_solved<G: Solved>(
    bot: &str,
    opts: &GradeOptions,
    out: Option<&Path>,
    show_progress: bool,
) -> anyhow::Result<GradeReport> {
    let spec = BotSpec::resolve::<G>(bot).with_context(|| format!("bot '{bot}'"))?;
    let options = opts.game.options();
    let seats = seats(opts);
    for &s in &seats {
        if G::requirement(&options, s) < 0 {
            bail!(
                "player {} cannot avoid losing {} with {} board(s) against perfect play; \
                 grade the winning seat",
                s.number(),
                G::KIND,
                options.boards
            );
        }
    }
    let started = Instant::now();
    let mut report = GradeReport {
        game: G::KIND.name().into(),
        bot: bot.to_string(),
        requirement: requirement_text(G::KIND, &options, &seats),
        ..GradeReport::default()
    };
    if opts.exhaustive {
        report.mode = if opts.canonical {
            "exhaustive-canonical".into()
        } else {
            "exhaustive".into()
        };
        if opts.canonical {
            report.note = "checks the bot on one representative position per symmetry class \
                           (rotations and reflections of each board, and the order of the boards); \
                           answers are mapped back"
                .into();
        }
        let (mut won, mut kept) = (0u64, 0u64);
        for &seat in &seats {
            let mut oracles: Vec<Box<dyn Oracle<G>>> = Vec::new();
            for _ in 0..jobs(opts) {
                oracles.push(
                    make_oracle::<G>(&spec, seat, opts.time.control(), opts.seed)
                        .map_err(|e| anyhow::anyhow!("bot '{bot}': {e}"))?,
                );
            }
            let bar = if show_progress {
                ProgressBar::new_spinner()
            } else {
                ProgressBar::hidden()
            };
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} player {msg}: {pos} positions checked ({per_sec})",
                )
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(seat.number().to_string());
            let r = explore::<G>(&options, seat, &mut oracles, opts.canonical, |n| {
                bar.set_position(n)
            });
            bar.finish_and_clear();
            report.positions_checked += r.positions;
            won += r.won_positions;
            kept += r.kept;
            if let Some(f) = r.failure {
                report.failures.push(f);
                break;
            }
        }
        report.accuracy = (won > 0).then(|| kept as f64 / won as f64);
        report.passed = report.failures.is_empty();
    } else {
        report.mode = "sampled".into();
        let optimal = BotSpec::resolve::<G>("optimal")?;
        let cfg = SampledConfig {
            options,
            seats,
            games: opts.games,
            time: opts.time.control(),
            seed: opts.seed,
            jobs: jobs(opts),
        };
        let name = "student";
        let records = play_games::<G>(&spec, name, &optimal, "optimal", &cfg, |_| {});
        write_records(out, &records)?;
        judge_sampled::<G>(&records, name, &options, &mut report);
    }
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

fn grade_uttt(bot: &str, opts: &GradeOptions, out: Option<&Path>) -> anyhow::Result<GradeReport> {
    if opts.exhaustive {
        bail!("--exhaustive needs a solved game (tictactoe or notakto); UTTT is graded by score");
    }
    let spec = BotSpec::resolve::<Uttt>(bot).with_context(|| format!("bot '{bot}'"))?;
    let started = Instant::now();
    let seats = seats(opts);
    let mut report = GradeReport {
        game: "uttt".into(),
        bot: bot.to_string(),
        mode: "sampled".into(),
        requirement: requirement_text(GameKind::Uttt, &GameOptions::default(), &seats),
        ..GradeReport::default()
    };
    let mut all = Vec::new();
    for (opponent, threshold) in [
        ("random", opts.min_vs_random),
        ("greedy", opts.min_vs_greedy),
        ("optimal", opts.min_vs_optimal),
    ] {
        let opp = BotSpec::resolve::<Uttt>(opponent)?;
        let cfg = SampledConfig {
            options: GameOptions::default(),
            seats: seats.clone(),
            games: opts.games,
            time: opts.time.control(),
            seed: referee::seed::derive(opts.seed, &[opponent.len() as u64]),
            jobs: jobs(opts),
        };
        let records = play_games::<Uttt>(&spec, "student", &opp, opponent, &cfg, |_| {});
        let mut points = 0.0;
        for r in &records {
            let seat = if r.players[0] == "student" {
                Seat::One
            } else {
                Seat::Two
            };
            points += r.points(seat);
            report.games += 1;
            match r.outcome().winner() {
                Some(s) if s == seat => report.wins += 1,
                Some(_) => report.losses += 1,
                None => report.draws += 1,
            }
            if r.forfeit.as_ref().is_some_and(|f| f.seat == seat.number()) {
                report.forfeits += 1;
            }
        }
        let games = records.len() as u64;
        let pct = if games == 0 {
            0.0
        } else {
            100.0 * points / games as f64
        };
        report.scores.push(OpponentScore {
            opponent: opponent.into(),
            games,
            points,
            score_pct: pct,
            threshold_pct: threshold,
            passed: pct >= threshold,
        });
        all.extend(records);
    }
    write_records(out, &all)?;
    report.passed = report.scores.iter().all(|s| s.passed);
    report.elapsed_s = started.elapsed().as_secs_f64();
    Ok(report)
}

fn print_report(r: &GradeReport) {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(vec!["grade", ""]);
    t.add_row(vec!["bot".to_string(), r.bot.clone()]);
    t.add_row(vec!["game".to_string(), r.game.clone()]);
    t.add_row(vec!["mode".to_string(), r.mode.clone()]);
    t.add_row(vec!["requirement".to_string(), r.requirement.clone()]);
    if r.mode == "sampled" {
        t.add_row(vec![
            "games (W-D-L)".to_string(),
            format!("{} ({}-{}-{})", r.games, r.wins, r.draws, r.losses),
        ]);
        t.add_row(vec!["forfeits".to_string(), r.forfeits.to_string()]);
    } else {
        t.add_row(vec![
            "positions checked".to_string(),
            r.positions_checked.to_string(),
        ]);
    }
    if let Some(a) = r.accuracy {
        t.add_row(vec![
            "accuracy in won positions".to_string(),
            format!("{:.1}%", 100.0 * a),
        ]);
    }
    t.add_row(vec!["time".to_string(), format!("{:.2} s", r.elapsed_s)]);
    t.add_row(vec![
        "verdict".to_string(),
        if r.passed { "PASS" } else { "FAIL" }.to_string(),
    ]);
    println!("{t}");
    if !r.note.is_empty() {
        println!("note: {}", r.note);
    }
    if !r.scores.is_empty() {
        let mut s = Table::new();
        s.load_preset(UTF8_FULL_CONDENSED)
            .set_header(vec!["opponent", "games", "points", "score", "needed", ""]);
        for o in &r.scores {
            s.add_row(vec![
                o.opponent.clone(),
                o.games.to_string(),
                format!("{}", o.points),
                format!("{:.1}%", o.score_pct),
                format!("{:.1}%", o.threshold_pct),
                if o.passed { "pass" } else { "FAIL" }.to_string(),
            ]);
        }
        println!("{s}");
    }
    for (i, f) in r.failures.iter().take(5).enumerate() {
        println!("failure {} (bot as player {}): {}", i + 1, f.seat, f.reason);
        println!("  moves:    {}", f.moves.join(" "));
        println!("  position: {}", f.position);
        if let Some(m) = &f.bot_move {
            println!("  bot move: {m}");
        }
        if let Some(m) = &f.missed {
            println!("  better:   {m}");
        }
        println!(
            "  replay:   referee judge {} '{}'",
            r.game,
            f.moves.join(if r.game == "uttt" { ", " } else { " " })
        );
    }
    if r.failures.len() > 5 {
        println!("({} more failures)", r.failures.len() - 5);
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

/// One row of the gradebook.
#[derive(Clone, Debug, Serialize)]
pub struct GradebookRow {
    /// The student's folder name.
    pub student: String,
    /// `pass`, `fail` or `error`.
    pub verdict: String,
    /// Points over games (or, exhaustive, 1 for a pass), in percent.
    pub score_pct: f64,
    /// Games won, drawn and lost.
    pub wdl: String,
    /// Forfeits.
    pub forfeits: u64,
    /// One failure's line, or the error.
    pub example: String,
}

/// The bot command of a submission folder.
pub fn submission_bot(dir: &Path) -> Result<String, String> {
    let manifest = dir.join("bot.toml");
    if manifest.is_file() {
        return Ok(manifest.to_string_lossy().into_owned());
    }
    let py = dir.join("bot.py");
    if py.is_file() {
        return Ok(format!(
            "python3 {}",
            shell_words::quote(&py.to_string_lossy())
        ));
    }
    let exe = dir.join("bot");
    if exe.is_file() {
        return Ok(shell_words::quote(&exe.to_string_lossy()).into_owned());
    }
    Err("no bot.toml, bot.py or executable bot in the folder".into())
}

/// Runs `grade-all`: one row per student; a broken submission never stops it.
pub fn run_all(args: GradeAllArgs) -> anyhow::Result<ExitCode> {
    referee::interrupt::install()?;
    let mut students: Vec<PathBuf> = std::fs::read_dir(&args.dir)
        .with_context(|| format!("cannot read {}", args.dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    students.sort();
    if students.is_empty() {
        bail!("{} has no student folders", args.dir.display());
    }
    let kind = args.opts.game.game;
    let jobs = jobs(&args.opts);
    // Students are graded in parallel, each with one worker.
    let mut one = args.opts.clone();
    one.jobs = Some(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let rows = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(students.len()) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(dir) = students.get(i) else { break };
                let row = grade_student(kind, dir, &one);
                eprintln!("graded {}: {}", row.student, row.verdict);
                if let Ok(mut r) = rows.lock() {
                    r.push(row);
                }
            });
        }
    });
    let mut rows = rows.into_inner().unwrap_or_default();
    rows.sort_by(|a, b| a.student.cmp(&b.student));
    let out = args.out.clone().unwrap_or_else(|| args.dir.clone());
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let json_path = out.join("gradebook.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&rows)? + "\n")
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    let csv_path = out.join("gradebook.csv");
    let mut csv = String::from("student,verdict,score_pct,wdl,forfeits,example\n");
    for r in &rows {
        csv.push_str(&format!(
            "{},{},{:.1},{},{},{}\n",
            csv_field(&r.student),
            r.verdict,
            r.score_pct,
            r.wdl,
            r.forfeits,
            csv_field(&r.example)
        ));
    }
    std::fs::write(&csv_path, csv)
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_header(vec!["student", "verdict", "score", "W-D-L", "forfeits"]);
    for r in &rows {
        t.add_row(vec![
            r.student.clone(),
            r.verdict.clone(),
            format!("{:.1}%", r.score_pct),
            r.wdl.clone(),
            r.forfeits.to_string(),
        ]);
    }
    println!("{t}");
    println!(
        "gradebook: {} and {}",
        csv_path.display(),
        json_path.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\"").replace('\n', " "))
    } else {
        s.to_string()
    }
}

fn grade_student(kind: GameKind, dir: &Path, opts: &GradeOptions) -> GradebookRow {
    let student = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let error = |e: String| GradebookRow {
        student: student.clone(),
        verdict: "error".into(),
        score_pct: 0.0,
        wdl: "0-0-0".into(),
        forfeits: 0,
        example: e,
    };
    let bot = match submission_bot(dir) {
        Ok(b) => b,
        Err(e) => return error(e),
    };
    let report = match grade_kind(kind, &bot, opts, None, false) {
        Ok(r) => r,
        Err(e) => return error(format!("{e:#}")),
    };
    let score_pct = if report.games > 0 {
        100.0 * (report.wins as f64 + 0.5 * report.draws as f64) / report.games as f64
    } else if report.passed {
        100.0
    } else {
        0.0
    };
    GradebookRow {
        student,
        verdict: if report.passed { "pass" } else { "fail" }.into(),
        score_pct,
        wdl: format!("{}-{}-{}", report.wins, report.draws, report.losses),
        forfeits: report.forfeits,
        example: report
            .failures
            .first()
            .map(|f| format!("{}: {}", f.reason, f.moves.join(" ")))
            .unwrap_or_default(),
    }
}
