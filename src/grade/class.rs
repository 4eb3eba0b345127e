//! Grading a whole class: every subfolder of a folder is a student's
//! submission; each gets its row in the gradebook, whatever is wrong with it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context};
use serde::Serialize;

use super::rubric::Rubric;
use super::{grade, GradeConfig, GradeReport};
use crate::game::GameKind;
use crate::output::feedback::{
    feedback_markdown, gradescope_results, grading_leaderboard, not_graded, LeaderboardEntry,
};
use crate::output::{csv_line, format_points, Observer, Silent};
use crate::record::ForfeitReason;

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
    /// Attempts the sandbox (or the system) refused the bot, as its stderr
    /// told them (docs/sandbox.md).
    pub denied: u64,
    /// The rubric's points.
    pub points: f64,
    /// The points the rubric is worth.
    pub max_points: f64,
    /// Points per rubric item, in the rubric's order.
    pub items: Vec<ItemPoints>,
    /// Why the bot failed or could not be graded, in one line (empty for a
    /// pass): the error, the breaker, the forfeit with the last line of
    /// its stderr (a Python traceback's `SyntaxError: ...`), or the first
    /// failing game.
    pub reason: String,
}

/// A rubric item's points in a gradebook row.
#[derive(Clone, Debug, Serialize)]
pub struct ItemPoints {
    /// The item.
    pub name: String,
    /// Points given.
    pub points: f64,
}

/// What `grade-all` writes besides the gradebook.
#[derive(Clone, Debug)]
pub struct ClassOutput {
    /// The output folder: `feedback/<student>.md` and
    /// `gradescope/<student>/results.json` go there as each student is
    /// graded.
    pub dir: PathBuf,
    /// Extra Gradescope leaderboard columns per student (a class
    /// tournament's rank, score and Elo), by student.
    pub leaderboard: Vec<(String, Vec<LeaderboardEntry>)>,
}

/// The bot command of a submission folder: its `bot.toml`, `bot.py` or
/// executable `bot`.
pub(crate) fn submission_bot(dir: &Path) -> Result<String, String> {
    let manifest = dir.join("bot.toml");
    if manifest.is_file() {
        // A student's manifest says how to start the bot, never how it is
        // confined (docs/sandbox.md).
        crate::bot::manifest::vet_submission(&manifest)?;
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

/// The student folders of a class folder, sorted.
pub(crate) fn student_folders(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut students: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && !student_name(p).starts_with('.'))
        .collect();
    students.sort();
    if students.is_empty() {
        bail!("{} has no student folders", dir.display());
    }
    Ok(students)
}

/// The student folders of class folder `dir`, sorted, without the
/// output's own folders when the output `out` is inside it (the default).
pub fn class_students(dir: &Path, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let own: Vec<PathBuf> = ["feedback", "gradescope", "tournament"]
        .iter()
        .map(|d| out.join(d))
        .chain([out.to_path_buf()])
        .filter_map(|d| d.canonicalize().ok())
        .collect();
    Ok(student_folders(dir)?
        .into_iter()
        .filter(|s| s.canonicalize().map_or(true, |c| !own.contains(&c)))
        .collect())
}

/// Checks that `dir` can hold the class's outputs: created if missing,
/// and a file can be written in it. Run before the first student is
/// graded, so that an unwritable folder costs nothing.
pub(crate) fn check_out_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--out {}: cannot create the folder", dir.display()))?;
    tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("--out {}: cannot write in the folder", dir.display()))?;
    Ok(())
}

/// Grades every student of class folder `dir`, `jobs` students at once
/// (each with one worker), telling `observer` as each is done, and writes
/// each student's feedback page and `results.json` into `out` at once.
/// Rows come sorted by student. `out` is checked before the first game.
pub fn grade_class(
    kind: GameKind,
    dir: &Path,
    cfg: &GradeConfig,
    jobs: usize,
    out: &ClassOutput,
    observer: &dyn Observer,
) -> anyhow::Result<Vec<GradebookRow>> {
    super::check_rubric(kind, cfg)?;
    check_out_dir(&out.dir)?;
    let students = class_students(dir, &out.dir)?;
    for sub in ["feedback", "gradescope"] {
        let d = out.dir.join(sub);
        std::fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let one = GradeConfig {
        jobs: 1,
        out: None,
        ..cfg.clone()
    };
    let next = AtomicUsize::new(0);
    let rows = Mutex::new(Vec::new());
    let tally = Mutex::new(Tally::default());
    let started = Instant::now();
    let total = students.len();
    observer.begin("students", Some(total as u64), 0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let failed = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs.max(1).min(total))
            .map(|_| {
                s.spawn(|| -> anyhow::Result<()> {
                    loop {
                        if crate::interrupt::interrupted().is_some() || stop.load(Ordering::Relaxed)
                        {
                            return Ok(());
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(dir) = students.get(i) else {
                            return Ok(());
                        };
                        let (row, report) = grade_student(kind, dir, &one);
                        if crate::interrupt::interrupted().is_some() {
                            // Its bot may have been killed by the interruption.
                            return Ok(());
                        }
                        if let Err(e) = write_student(out, &row, report.as_ref(), &one) {
                            // No more students once their files cannot be
                            // written; the row itself is kept.
                            stop.store(true, Ordering::Relaxed);
                            rows.lock().unwrap_or_else(|p| p.into_inner()).push(row);
                            return Err(e);
                        }
                        let (line, status) = {
                            let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
                            t.add(&row.verdict);
                            (t.line(total, started), t.status())
                        };
                        observer.note(&format!(
                            "graded {}: {} {}/{} ({line})",
                            row.student,
                            row.verdict,
                            format_points(row.points),
                            format_points(row.max_points)
                        ));
                        observer.status(&status);
                        observer.advance(1);
                        rows.lock().unwrap_or_else(|p| p.into_inner()).push(row);
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a grading thread panicked")))
            })
            .find_map(Result::err)
    });
    observer.end();
    let mut rows = rows.into_inner().unwrap_or_else(|p| p.into_inner());
    rows.sort_by(|a, b| a.student.cmp(&b.student));
    match failed {
        // The rows graded so far are not lost: the caller writes them.
        Some(e) => Err(e.context(GradedSoFar(rows))),
        None => Ok(rows),
    }
}

/// The rows graded before an output error stopped `grade_class` (the
/// error's context, so the gradebook can still be written).
#[derive(Debug)]
pub struct GradedSoFar(pub Vec<GradebookRow>);

impl std::fmt::Display for GradedSoFar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "after grading {} students", self.0.len())
    }
}

/// Counts for the class progress line.
#[derive(Default)]
struct Tally {
    done: usize,
    failed: usize,
    errors: usize,
}

impl Tally {
    fn add(&mut self, verdict: &str) {
        self.done += 1;
        match verdict {
            "fail" => self.failed += 1,
            "error" => self.errors += 1,
            _ => {}
        }
    }

    /// `3 failed, 1 error`.
    fn status(&self) -> String {
        format!(
            "{} failed, {} error{}",
            self.failed,
            self.errors,
            if self.errors == 1 { "" } else { "s" }
        )
    }

    /// `12/40 done, 3 failed, 1 error, 1m 05s elapsed, about 2m 31s left`.
    fn line(&self, total: usize, started: Instant) -> String {
        let elapsed = started.elapsed().as_secs_f64();
        let left = if self.done > 0 {
            elapsed / self.done as f64 * total.saturating_sub(self.done) as f64
        } else {
            0.0
        };
        format!(
            "{}/{total} done, {} failed, {} error{}, {} elapsed, about {} left",
            self.done,
            self.failed,
            self.errors,
            if self.errors == 1 { "" } else { "s" },
            duration_text(elapsed),
            duration_text(left)
        )
    }
}

/// `1h 02m`, `3m 05s` or `42s`.
fn duration_text(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 3600 {
        format!("{}h {:02}m", s / 3600, s / 60 % 60)
    } else if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// A student's name as a file name: their folder's name, which is one
/// already.
fn write_student(
    out: &ClassOutput,
    row: &GradebookRow,
    report: Option<&GradeReport>,
    cfg: &GradeConfig,
) -> anyhow::Result<()> {
    let md = out.dir.join("feedback").join(format!("{}.md", row.student));
    let gs_dir = out.dir.join("gradescope").join(&row.student);
    std::fs::create_dir_all(&gs_dir)
        .with_context(|| format!("cannot create {}", gs_dir.display()))?;
    let extra = out
        .leaderboard
        .iter()
        .find(|(s, _)| s == &row.student)
        .map(|(_, l)| l.clone())
        .unwrap_or_default();
    let (page, results) = match report {
        Some(r) => {
            let mut board = extra;
            board.extend(grading_leaderboard(r));
            (feedback_markdown(r), gradescope_results(r, board))
        }
        None => {
            let r = not_graded(&row.reason, cfg.rubric.as_ref(), 0.0);
            (r.output.clone(), r)
        }
    };
    std::fs::write(&md, page).with_context(|| format!("cannot write {}", md.display()))?;
    let json = gs_dir.join("results.json");
    std::fs::write(&json, serde_json::to_string_pretty(&results)? + "\n")
        .with_context(|| format!("cannot write {}", json.display()))?;
    Ok(())
}

/// Writes `gradebook.json`, `gradebook.csv` and `grades.csv` (one row per
/// student: total points and points per rubric item, for an LMS import)
/// into `out`; returns their paths.
pub fn write_gradebook(
    out: &Path,
    rows: &[GradebookRow],
    rubric: &Rubric,
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let json_path = out.join("gradebook.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(rows)? + "\n")
        .with_context(|| format!("cannot write {}", json_path.display()))?;
    let csv_path = out.join("gradebook.csv");
    let mut csv = csv_line([
        "student",
        "verdict",
        "score_pct",
        "wdl",
        "forfeits",
        "example",
        "points",
        "max_points",
        "reason",
        "denied",
    ]);
    for r in rows {
        csv.push_str(&csv_line([
            r.student.clone(),
            r.verdict.clone(),
            format!("{:.1}", r.score_pct),
            r.wdl.clone(),
            r.forfeits.to_string(),
            r.example.clone(),
            format_points(r.points),
            format_points(r.max_points),
            r.reason.clone(),
            r.denied.to_string(),
        ]));
    }
    std::fs::write(&csv_path, csv)
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    let lms_path = out.join("grades.csv");
    let mut header = vec!["student".to_string(), "total".to_string()];
    header.extend(rubric.items.iter().map(|i| i.name.clone()));
    let mut lms = csv_line(header);
    for r in rows {
        let mut line = vec![r.student.clone(), format_points(r.points)];
        line.extend(rubric.items.iter().enumerate().map(|(i, _)| {
            r.items
                .get(i)
                .map_or_else(|| "0".to_string(), |p| format_points(p.points))
        }));
        lms.push_str(&csv_line(line));
    }
    std::fs::write(&lms_path, lms)
        .with_context(|| format!("cannot write {}", lms_path.display()))?;
    Ok(vec![csv_path, json_path, lms_path])
}

/// The student's name: their folder's name.
pub(crate) fn student_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Grades one submission folder: its row, and its report when it could be
/// graded at all.
fn grade_student(
    kind: GameKind,
    dir: &Path,
    cfg: &GradeConfig,
) -> (GradebookRow, Option<GradeReport>) {
    let student = student_name(dir);
    let rubric = cfg.rubric();
    let error = |e: String| GradebookRow {
        student: student.clone(),
        verdict: "error".into(),
        score_pct: 0.0,
        wdl: "0-0-0".into(),
        forfeits: 0,
        example: e.clone(),
        denied: 0,
        points: 0.0,
        max_points: rubric.max_points(),
        items: rubric
            .items
            .iter()
            .map(|i| ItemPoints {
                name: i.name.clone(),
                points: 0.0,
            })
            .collect(),
        reason: e,
    };
    // Graded as its folder, so that the feedback's command to reproduce
    // the grading is run from the student's own folder.
    if let Err(e) = submission_bot(dir) {
        return (error(e), None);
    }
    let mut report = match grade(kind, &dir.to_string_lossy(), cfg, &Silent) {
        Ok(r) => r,
        Err(e) => return (error(format!("{e:#}")), None),
    };
    report.bot.clone_from(&student);
    let score_pct = if report.games > 0 {
        100.0 * report.wdl.score()
    } else if report.passed {
        100.0
    } else {
        0.0
    };
    let row = GradebookRow {
        student,
        verdict: if report.passed { "pass" } else { "fail" }.into(),
        score_pct,
        wdl: report.wdl.text(),
        forfeits: report.forfeits,
        denied: report.denied,
        example: report
            .failures
            .first()
            .map(|f| {
                if f.moves.is_empty() {
                    f.reason.clone()
                } else {
                    format!("{}: {}", f.reason, f.moves.join(" "))
                }
            })
            .unwrap_or_default(),
        points: report.points,
        max_points: report.max_points,
        items: report
            .rubric
            .iter()
            .map(|i| ItemPoints {
                name: i.name.clone(),
                points: i.points,
            })
            .collect(),
        reason: reason(&report),
    };
    (row, Some(report))
}

/// Why a graded bot failed, in one line (empty when it passed every item).
fn reason(r: &GradeReport) -> String {
    if let Some(stop) = &r.stopped {
        return stop.clone();
    }
    if let Some(g) = &r.first_forfeit {
        let f = &g.forfeit;
        let mut text = format!("forfeit by {}: {}", f.reason, f.detail);
        let last = f.stderr_tail.lines().rev().find(|l| !l.trim().is_empty());
        if let (
            Some(last),
            ForfeitReason::Startup | ForfeitReason::Crash | ForfeitReason::Timeout,
        ) = (last, f.reason)
        {
            text.push_str(&format!(" (stderr: {})", last.trim()));
        }
        return text;
    }
    if let Some(f) = r.failures.first() {
        return format!("{} (moves: {})", f.reason, f.moves.join(" "));
    }
    if let Some(i) = r.rubric.iter().find(|i| !i.passed) {
        return format!("{}: {}", i.name, i.detail);
    }
    String::new()
}
