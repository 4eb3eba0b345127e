//! Grading a whole class: every subfolder of a folder is a student's
//! submission; each gets its row in the gradebook, whatever is wrong with it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Context};
use serde::Serialize;

use super::{grade, GradeConfig};
use crate::game::GameKind;
use crate::output::{csv_line, Observer, Silent};

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

/// The bot command of a submission folder: its `bot.toml`, `bot.py` or
/// executable `bot`.
pub(crate) fn submission_bot(dir: &Path) -> Result<String, String> {
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

/// The student folders of a class folder, sorted.
pub(crate) fn student_folders(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut students: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    students.sort();
    if students.is_empty() {
        bail!("{} has no student folders", dir.display());
    }
    Ok(students)
}

/// Grades every student of class folder `dir`, `jobs` students at once
/// (each with one worker), telling `observer` as each is done. Rows come
/// sorted by student.
pub fn grade_class(
    kind: GameKind,
    dir: &Path,
    cfg: &GradeConfig,
    jobs: usize,
    observer: &dyn Observer,
) -> anyhow::Result<Vec<GradebookRow>> {
    let students = student_folders(dir)?;
    let one = GradeConfig {
        jobs: 1,
        out: None,
        ..cfg.clone()
    };
    let next = AtomicUsize::new(0);
    let rows = Mutex::new(Vec::new());
    observer.begin("students", Some(students.len() as u64), 0);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(students.len()) {
            s.spawn(|| loop {
                if crate::interrupt::interrupted().is_some() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(dir) = students.get(i) else { break };
                let row = grade_student(kind, dir, &one);
                if crate::interrupt::interrupted().is_some() {
                    // Its bot may have been killed by the interruption.
                    break;
                }
                observer.note(&format!("graded {}: {}", row.student, row.verdict));
                observer.advance(1);
                if let Ok(mut r) = rows.lock() {
                    r.push(row);
                }
            });
        }
    });
    observer.end();
    let mut rows = rows.into_inner().unwrap_or_default();
    rows.sort_by(|a, b| a.student.cmp(&b.student));
    Ok(rows)
}

/// Writes `gradebook.json` and `gradebook.csv` into `out`; returns their paths.
pub fn write_gradebook(out: &Path, rows: &[GradebookRow]) -> anyhow::Result<(PathBuf, PathBuf)> {
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
    ]);
    for r in rows {
        csv.push_str(&csv_line([
            r.student.clone(),
            r.verdict.clone(),
            format!("{:.1}", r.score_pct),
            r.wdl.clone(),
            r.forfeits.to_string(),
            r.example.clone(),
        ]));
    }
    std::fs::write(&csv_path, csv)
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    Ok((csv_path, json_path))
}

fn grade_student(kind: GameKind, dir: &Path, cfg: &GradeConfig) -> GradebookRow {
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
    let report = match grade(kind, &bot, cfg, &Silent) {
        Ok(r) => r,
        Err(e) => return error(format!("{e:#}")),
    };
    let score_pct = if report.games > 0 {
        100.0 * report.wdl.score()
    } else if report.passed {
        100.0
    } else {
        0.0
    };
    GradebookRow {
        student,
        verdict: if report.passed { "pass" } else { "fail" }.into(),
        score_pct,
        wdl: report.wdl.text(),
        forfeits: report.forfeits,
        example: report
            .failures
            .first()
            .map(|f| format!("{}: {}", f.reason, f.moves.join(" ")))
            .unwrap_or_default(),
    }
}
