//! Feedback a student can act on: one Markdown page per graded bot (the
//! verdict, the rubric's points, the first failing game with the command
//! that replays it and a better move, the forfeit with its stderr tail,
//! move times, and the command that reproduces the grading), and the same
//! page in Gradescope's `results.json`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::grade::rubric::Rubric;
use crate::grade::GradeReport;
use crate::play::text::{format_points, format_us};

use crate::escape::markdown::{block, code, text as md};
use crate::escape::terminal;

/// The verdict in one line: `PASS: 90 / 100 points`.
pub(crate) fn verdict_line(r: &GradeReport) -> String {
    format!(
        "{}: {} / {} points",
        if r.passed { "PASS" } else { "FAIL" },
        format_points(r.points),
        format_points(r.max_points)
    )
}

/// The feedback page for one graded bot, in Markdown.
pub fn feedback_markdown(r: &GradeReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}: {}\n", md(&r.rubric_title), md(&r.bot));
    let _ = writeln!(out, "**{}**\n", verdict_line(r));
    let _ = writeln!(
        out,
        "Requirement ({}): {}: **{}**.\n",
        r.game,
        r.requirement,
        if r.passed { "met" } else { "not met" }
    );
    if let Some(stop) = &r.stopped {
        let _ = writeln!(out, "Grading stopped early: {}.\n", md(stop));
    }
    out.push_str("| | |\n|---|---|\n");
    if r.positions_checked > 0 {
        let _ = writeln!(out, "| positions checked | {} |", r.positions_checked);
    }
    if r.games > 0 {
        let _ = writeln!(
            out,
            "| games | {} (won-drawn-lost {}) |",
            r.games,
            r.wdl.text()
        );
    }
    let _ = writeln!(out, "| forfeits | {} |", r.forfeits);
    if r.denied > 0 {
        // What the sandbox refused, so a student sees why, and a TA who.
        let example = r.denied_examples.first().map(|e| md(e)).unwrap_or_default();
        let _ = writeln!(
            out,
            "| denied by the sandbox | {} (first: {example}) |",
            r.denied
        );
    }
    for s in &r.scores {
        let _ = writeln!(
            out,
            "| score against {} | {:.1} % over {} games{} |",
            md(&s.opponent),
            s.score_pct,
            s.games,
            if s.threshold_pct > 0.0 {
                format!(" (needed {:.1} %)", s.threshold_pct)
            } else {
                String::new()
            }
        );
    }
    if let Some(t) = &r.timing {
        let _ = writeln!(
            out,
            "| move time | median {}, slowest {} over {} moves (a game's first move {}, \
             within the limit plus the {} ms start-up allowance) |",
            format_us(t.median_us as f64),
            format_us(t.max_us as f64),
            t.moves,
            format_us(t.first_max_us as f64),
            t.startup_ms
        );
    }
    if let Some(a) = r.accuracy {
        let _ = writeln!(
            out,
            "| moves that kept a won position winning | {:.1} % |",
            100.0 * a
        );
    }
    out.push('\n');

    out.push_str("## Rubric\n\n| | item | points | measured |\n|---|---|---:|---|\n");
    for i in &r.rubric {
        let _ = writeln!(
            out,
            "| {} | {} | {} / {} | {} |",
            if i.passed { "✅" } else { "❌" },
            md(&i.name),
            format_points(i.points),
            format_points(i.max_points),
            md(&i.detail)
        );
    }
    out.push('\n');

    if let Some(f) = r.failures.first() {
        out.push_str("## First failing game\n\n");
        let _ = writeln!(
            out,
            "Your bot played player {}. {}.\n",
            f.seat,
            md(&capitalized(&f.reason))
        );
        if !f.moves.is_empty() {
            let _ = writeln!(out, "Moves: {}\n", code(&f.moves.join(" ")));
        }
        let _ = writeln!(out, "Position before the move: {}\n", code(&f.position));
        if let Some(m) = &f.bot_move {
            let _ = write!(out, "Your bot's move: {}", code(m));
            match &f.missed {
                Some(b) => {
                    let _ = writeln!(out, "; a move that keeps the result: {}.\n", code(b));
                }
                None => out.push_str(".\n\n"),
            }
        } else if let Some(b) = &f.missed {
            let _ = writeln!(out, "A move that keeps the result: {}.\n", code(b));
        }
        // A game with no moves has nothing to replay.
        if !f.replay.is_empty() && !f.moves.is_empty() {
            let _ = writeln!(out, "Replay it:\n\n{}", block(&f.replay));
        }
        if r.failures.len() > 1 {
            let _ = writeln!(out, "({} more failing games.)\n", r.failures.len() - 1);
        }
    }

    if let Some(g) = &r.first_forfeit {
        let f = &g.forfeit;
        out.push_str("## Forfeit\n\n");
        let _ = writeln!(
            out,
            "Your bot forfeited a game against {} as player {} at move {}: **{}**: {}.\n",
            md(&g.opponent),
            g.seat,
            f.move_number,
            f.reason,
            md(f.detail.trim_end_matches('.'))
        );
        if let Some(line) = &f.line {
            let _ = writeln!(out, "It sent: {}\n", code(line));
        }
        if f.time_us > 0 {
            let _ = writeln!(out, "Time taken: {}.\n", format_us(f.time_us as f64));
        }
        if let Some(st) = &f.exit_status {
            let _ = writeln!(out, "Exit: {}.\n", md(st));
        }
        let _ = writeln!(
            out,
            "Position it was asked to move in: {}\n",
            code(&f.position)
        );
        if !f.stderr_tail.trim().is_empty() {
            let _ = writeln!(
                out,
                "The last lines it wrote to stderr:\n\n{}",
                block(&f.stderr_tail)
            );
        } else {
            out.push_str("It wrote nothing to stderr.\n\n");
        }
        if !g.replay.is_empty() && !g.moves.is_empty() {
            let _ = writeln!(out, "The moves before it:\n\n{}", block(&g.replay));
        }
    }

    if let Some(f) = &r.format {
        out.push_str("## Output format\n\n");
        let _ = writeln!(
            out,
            "Your program's printed games were compared with the assignment's transcript \
             (the play above is judged apart from this): {} of {} match byte for byte{}.\n",
            f.exact,
            f.compared,
            if f.trailing_whitespace_only > 0 {
                format!(
                    ", {} more differ in trailing whitespace only",
                    f.trailing_whitespace_only
                )
            } else {
                String::new()
            }
        );
        if let Some(e) = &f.first {
            let _ = writeln!(
                out,
                "The first difference appeared before move {} of this game: {}\n",
                e.turn,
                code(&e.moves.join(" "))
            );
            for n in &e.notes {
                let _ = writeln!(out, "- {}", md(n));
            }
            if !e.notes.is_empty() {
                out.push('\n');
            }
            if !e.diff.is_empty() {
                let _ = writeln!(
                    out,
                    "Expected (`-`) and printed (`+`); `·` is a trailing space, `→` a tab, `⏎` a \
                     missing newline:\n\n{}",
                    block(&e.diff)
                );
            }
        }
    }

    if let Some(t) = &r.transcripts {
        out.push_str("## Transcripts\n\n");
        let _ = writeln!(
            out,
            "{} of {} generated games print exactly what `referee play` prints for the same \
             input{}.\n",
            t.matched,
            t.games,
            if t.whitespace_only > 0 {
                format!(
                    "; {} differ in whitespace only{}",
                    t.whitespace_only,
                    if t.accept_whitespace {
                        " (accepted)"
                    } else {
                        ""
                    }
                )
            } else {
                String::new()
            }
        );
        if let Some(m) = &t.first {
            let _ = writeln!(
                out,
                "Game {} ({}; the program {}). The input, one line each:\n\n{}",
                m.game,
                if m.whitespace_only {
                    "whitespace only"
                } else {
                    "a real difference"
                },
                md(&m.status),
                block(&m.input)
            );
            let _ = writeln!(
                out,
                "Expected (`-`) and printed (`+`); `·` is a trailing space, `→` a tab, `⏎` a \
                 missing newline:\n\n{}",
                block(&m.diff)
            );
            if !m.stderr_tail.trim().is_empty() {
                let _ = writeln!(out, "Its stderr:\n\n{}", block(&m.stderr_tail));
            }
        }
    }

    if r.randomised {
        out.push_str(
            "Your program answered the same moves differently in different games: it makes \
             random choices of its own, so a rerun with the same seed plays other games (the \
             opponent's choices are the same).\n\n",
        );
    }

    if let Some(c) = &r.check {
        out.push_str("## referee check\n\n");
        if c.failed.is_empty() {
            let _ = writeln!(out, "All {} checks passed.\n", c.passed);
        } else {
            let _ = writeln!(out, "{} passed, {} failed:\n", c.passed, c.failed.len());
            for f in &c.failed {
                let _ = writeln!(out, "- {}", md(f));
            }
            out.push('\n');
        }
    }

    if !r.note.is_empty() {
        let _ = writeln!(out, "Note: {}\n", md(&r.note));
    }
    if !r.reproduce.is_empty() {
        out.push_str("## Reproduce\n\n");
        if r.reproduce.ends_with(" .") {
            out.push_str("From your submission folder, with referee installed:\n\n");
        } else {
            out.push_str("With referee installed:\n\n");
        }
        out.push_str(&block(&r.reproduce));
        out.push_str(
            "\nThe same seed plays the same games against the same opponents \
             (your bot's own choices aside).\n",
        );
    }
    out
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// One test of Gradescope's `results.json`.
#[derive(Clone, Debug, Serialize)]
pub struct GradescopeTest {
    /// The rubric item.
    pub name: String,
    /// Points given.
    pub score: f64,
    /// Points it is worth.
    pub max_score: f64,
    /// `passed` or `failed`.
    pub status: &'static str,
    /// What was measured.
    pub output: String,
    /// Who sees it: `visible`, `hidden`, `after_due_date` or
    /// `after_published`.
    pub visibility: String,
}

/// One leaderboard column of Gradescope's `results.json`.
#[derive(Clone, Debug, Serialize)]
pub struct LeaderboardEntry {
    /// The column.
    pub name: String,
    /// The student's value.
    pub value: serde_json::Value,
    /// `asc` when smaller is better (Gradescope sorts descending otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order: Option<&'static str>,
}

/// Gradescope's autograder `results.json`.
#[derive(Clone, Debug, Serialize)]
pub struct GradescopeResults {
    /// The total score.
    pub score: f64,
    /// The total possible (for people and tools reading the file; Gradescope
    /// takes the assignment's own).
    pub max_score: f64,
    /// Seconds the grading took.
    pub execution_time: u64,
    /// The feedback page.
    pub output: String,
    /// `md`: the output is Markdown.
    pub output_format: &'static str,
    /// The format of each test's output.
    pub test_output_format: &'static str,
    /// One test per rubric item.
    pub tests: Vec<GradescopeTest>,
    /// Leaderboard values, when there are any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub leaderboard: Vec<LeaderboardEntry>,
}

/// The leaderboard columns grading alone gives: points and the score
/// against each opponent.
pub fn grading_leaderboard(r: &GradeReport) -> Vec<LeaderboardEntry> {
    let mut out = vec![LeaderboardEntry {
        name: "points".into(),
        value: serde_json::json!(r.points),
        order: None,
    }];
    for s in &r.scores {
        out.push(LeaderboardEntry {
            name: format!("% vs {}", s.opponent),
            value: serde_json::json!((s.score_pct * 10.0).round() / 10.0),
            order: None,
        });
    }
    if let Some(t) = &r.timing {
        out.push(LeaderboardEntry {
            name: "median move ms".into(),
            value: serde_json::json!((t.median_us as f64 / 100.0).round() / 10.0),
            order: Some("asc"),
        });
    }
    out
}

/// What became of one rubric item: passed, failed, or not graded (the
/// submission could not be graded at all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    /// Met in full.
    Passed,
    /// Not met (in full).
    Failed,
    /// The submission could not be graded.
    NotGraded,
}

/// One rubric item's result, as every grading system's writer reads it.
#[derive(Clone, Debug, Serialize)]
pub struct ResultItem {
    /// The rubric item.
    pub name: String,
    /// Points given.
    pub points: f64,
    /// Points it is worth.
    pub max_points: f64,
    /// Who sees it: `visible`, `hidden`, `after_due_date` or
    /// `after_published` (Gradescope's words).
    pub visibility: String,
    /// Passed, failed or not graded.
    pub status: ItemStatus,
    /// What was measured, in words (or, not graded, the reason).
    pub message: String,
}

impl ResultItem {
    /// Whether a student may see the item's details now (`visible`); the
    /// others are shown later by Gradescope, or never.
    pub fn is_visible(&self) -> bool {
        self.visibility == "visible"
    }
}

/// One graded (or ungradable) submission, as every grading system's
/// writer reads it: Gradescope's `results.json` here, the others in
/// `grade::graders`. One type, so no writer repeats another's mapping.
#[derive(Clone, Debug, Serialize)]
pub struct GradeResult {
    /// `Some(reason)` when the submission could not be graded at all.
    pub error: Option<String>,
    /// Whether the verdict is a pass.
    pub passed: bool,
    /// The total given.
    pub points: f64,
    /// The total possible.
    pub max_points: f64,
    /// Seconds the grading took.
    pub elapsed_s: f64,
    /// The verdict in one line (`PASS: 90 / 100 points`, or `Not graded:
    /// ...`).
    pub summary: String,
    /// The feedback page, in Markdown.
    pub feedback: String,
    /// One per rubric item, in the rubric's order.
    pub items: Vec<ResultItem>,
    /// Leaderboard columns (Gradescope's leaderboard).
    pub leaderboard: Vec<LeaderboardEntry>,
}

impl GradeResult {
    /// The result of a graded bot: one item per rubric item, the feedback
    /// page, and `leaderboard`'s columns.
    pub fn graded(r: &GradeReport, leaderboard: Vec<LeaderboardEntry>) -> GradeResult {
        GradeResult {
            error: None,
            passed: r.passed,
            points: r.points,
            max_points: r.max_points,
            elapsed_s: r.elapsed_s,
            summary: verdict_line(r),
            feedback: feedback_markdown(r),
            items: r
                .rubric
                .iter()
                .map(|i| ResultItem {
                    name: i.name.clone(),
                    points: i.points,
                    max_points: i.max_points,
                    visibility: i.visibility.clone(),
                    status: if i.passed {
                        ItemStatus::Passed
                    } else {
                        ItemStatus::Failed
                    },
                    // Plain text in every system that shows it (Gradescope's
                    // test output, GitHub Classroom's log, CodeRunner's table).
                    message: terminal::text(&i.detail).into_owned(),
                })
                .collect(),
            leaderboard,
        }
    }

    /// The result of a submission that could not be graded under `rubric`
    /// (`None`: the requirement alone): no points, every item not graded
    /// with the reason, so the student sees what to fix.
    pub fn not_graded(error: &str, rubric: Option<&Rubric>, elapsed_s: f64) -> GradeResult {
        let rubric = rubric.cloned().unwrap_or_else(Rubric::requirement_only);
        let items: Vec<(String, f64, String)> = rubric
            .items
            .iter()
            .map(|i| (i.name.clone(), i.points, i.visibility.clone()))
            .collect();
        GradeResult::error(error, &items, elapsed_s)
    }

    /// The result of a submission that could not be graded, for the items
    /// `(name, points, visibility)`.
    pub fn error(error: &str, items: &[(String, f64, String)], elapsed_s: f64) -> GradeResult {
        GradeResult {
            error: Some(error.to_string()),
            passed: false,
            points: 0.0,
            max_points: items.iter().map(|i| i.1).sum(),
            elapsed_s,
            summary: format!(
                "Not graded: {}",
                terminal::line(error.lines().next().unwrap_or_default())
            ),
            feedback: format!(
                "# Not graded\n\nYour submission could not be graded:\n\n{}\nFix this and submit \
                 again.\n",
                block(error)
            ),
            items: items
                .iter()
                .map(|(name, max, visibility)| ResultItem {
                    name: name.clone(),
                    points: 0.0,
                    max_points: *max,
                    visibility: visibility.clone(),
                    status: ItemStatus::NotGraded,
                    message: format!("not graded: {}", terminal::text(error)),
                })
                .collect(),
            leaderboard: Vec::new(),
        }
    }

    /// The score as a fraction from 0 to 1: points over the points
    /// possible (a rubric worth nothing: 1 for a pass, else 0).
    pub fn fraction(&self) -> f64 {
        if self.max_points > 0.0 {
            (self.points / self.max_points).clamp(0.0, 1.0)
        } else if self.passed {
            1.0
        } else {
            0.0
        }
    }

    /// Gradescope's `results.json`: one test per item with its points,
    /// status and visibility, the feedback page as the output.
    pub fn gradescope(&self) -> GradescopeResults {
        GradescopeResults {
            score: self.points,
            max_score: self.max_points,
            execution_time: self.elapsed_s.round() as u64,
            output: self.feedback.clone(),
            output_format: "md",
            test_output_format: "text",
            tests: self
                .items
                .iter()
                .map(|i| GradescopeTest {
                    name: i.name.clone(),
                    score: i.points,
                    max_score: i.max_points,
                    status: if i.status == ItemStatus::Passed {
                        "passed"
                    } else {
                        "failed"
                    },
                    output: i.message.clone(),
                    visibility: i.visibility.clone(),
                })
                .collect(),
            leaderboard: self.leaderboard.clone(),
        }
    }
}

/// `results.json` for a graded bot: one test per rubric item, the
/// feedback page as its output.
pub fn gradescope_results(
    r: &GradeReport,
    leaderboard: Vec<LeaderboardEntry>,
) -> GradescopeResults {
    GradeResult::graded(r, leaderboard).gradescope()
}

/// `results.json` for a submission that could not be graded under
/// `rubric` (`None`: the requirement alone): no points, every item failed
/// with the reason.
pub fn not_graded(error: &str, rubric: Option<&Rubric>, elapsed_s: f64) -> GradescopeResults {
    GradeResult::not_graded(error, rubric, elapsed_s).gradescope()
}

/// `results.json` for a submission that could not be graded: no points,
/// every item failed with the reason, so the student sees what to fix.
pub fn gradescope_error(
    error: &str,
    items: &[(String, f64, String)],
    elapsed_s: f64,
) -> GradescopeResults {
    GradeResult::error(error, items, elapsed_s).gradescope()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::rubric::ItemScore;
    use crate::grade::{ForfeitedGame, Timing};
    use crate::protocol::{Forfeit, ForfeitReason};

    fn report() -> GradeReport {
        let mut f = Forfeit::new(ForfeitReason::Crash, "the bot exited");
        f.move_number = 1;
        f.stderr_tail = "Traceback (most recent call last):\n  File \"bot.py\", line 3\n    def f(:\n          ^\nSyntaxError: invalid syntax\n".into();
        f.exit_status = Some("exit status 1".into());
        f.line = Some("``` odd".into());
        GradeReport {
            game: "notakto".into(),
            bot: "alice".into(),
            requirement: "win every game as player 1".into(),
            games: 10,
            forfeits: 10,
            rubric_title: "Notakto AI".into(),
            rubric: vec![ItemScore {
                name: "never forfeits | ever".into(),
                points: 0.0,
                max_points: 10.0,
                passed: false,
                detail: "10 forfeits".into(),
                visibility: "after_due_date".into(),
            }],
            points: 0.0,
            max_points: 10.0,
            timing: Some(Timing {
                moves: 3,
                median_us: 1500,
                max_us: 2_000_000,
                first_max_us: 2_000_000,
                startup_ms: 3000,
            }),
            first_forfeit: Some(ForfeitedGame {
                opponent: "optimal".into(),
                seat: 1,
                moves: vec![],
                replay: String::new(),
                forfeit: f,
            }),
            reproduce: "referee grade notakto --boards=3 --games=10 --seed=1 --time-ms=1000 ."
                .into(),
            ..GradeReport::default()
        }
    }

    #[test]
    fn feedback_shows_the_traceback_and_how_to_reproduce() {
        let md = feedback_markdown(&report());
        assert!(md.contains("**FAIL: 0 / 10 points**"), "{md}");
        assert!(md.contains("SyntaxError: invalid syntax"), "{md}");
        assert!(md.contains("Exit: exit status 1."), "{md}");
        assert!(md.contains("never forfeits \\| ever"), "{md}");
        assert!(md.contains("From your submission folder"), "{md}");
        assert!(
            md.contains("median 1.5 ms, slowest 2.00 s over 3 moves"),
            "{md}"
        );
        // A line with backticks cannot break out of its code span.
        assert!(
            md.contains("````` ``` odd `````") || md.contains("```` ``` odd ````"),
            "{md}"
        );
    }

    #[test]
    fn results_json_has_gradescopes_fields() {
        let r = report();
        let json = serde_json::to_value(gradescope_results(&r, grading_leaderboard(&r))).unwrap();
        assert_eq!(json["score"], 0.0);
        assert_eq!(json["output_format"], "md");
        let t = &json["tests"][0];
        assert_eq!(t["max_score"], 10.0);
        assert_eq!(t["status"], "failed");
        assert_eq!(t["visibility"], "after_due_date");
        assert_eq!(json["leaderboard"][0]["name"], "points");
        assert_eq!(json["leaderboard"][1]["order"], "asc");
        let e = serde_json::to_value(gradescope_error(
            "no bot.py",
            &[("wins".into(), 50.0, "visible".into())],
            0.2,
        ))
        .unwrap();
        assert_eq!(e["tests"][0]["status"], "failed");
        assert_eq!(e["max_score"], 50.0);
        assert!(e["output"].as_str().unwrap().contains("no bot.py"));
    }
}
