//! Results for the grading systems besides Gradescope: PrairieLearn's
//! external grader `results.json`, GitHub Classroom's autograding result,
//! Autolab's autoresult, Moodle CodeRunner's combinator grader and
//! CodeGrade's capture-points fraction. Every writer reads the one
//! [`GradeResult`] (Gradescope's too, in `grade::feedback`): one test per
//! rubric item with its points, and the reason when the submission could
//! not be graded.
//!
//! Visibility: Gradescope and CodeRunner (its `ishidden` column) hide an
//! item that is not `visible` from the student themselves. PrairieLearn and
//! GitHub Classroom cannot: such an item keeps its name and points (the
//! total must add up) but its message says only that its details are
//! hidden. Autolab's and CodeGrade's results carry no text per item.

use serde::Serialize;
use serde_json::{json, Value};

use crate::grade::feedback::{GradeResult, ItemStatus, ResultItem};
use crate::play::text::format_points;

/// A grading system referee writes results for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Gradescope's autograder `results.json`.
    Gradescope,
    /// PrairieLearn's external grader `results.json`.
    PrairieLearn,
    /// GitHub Classroom's autograding result (base64 JSON).
    GithubClassroom,
    /// Autolab's autoresult line.
    Autolab,
    /// Moodle CodeRunner's combinator template grader JSON.
    CodeRunner,
    /// CodeGrade's capture-points fraction.
    CodeGrade,
}

impl Format {
    /// Every format, in the order the documentation lists them.
    pub const ALL: [Format; 6] = [
        Format::Gradescope,
        Format::PrairieLearn,
        Format::GithubClassroom,
        Format::Autolab,
        Format::CodeRunner,
        Format::CodeGrade,
    ];

    /// Its name: the command-line flag without `--`, and the folder of
    /// `grade-all`'s per-student files.
    pub fn name(self) -> &'static str {
        match self {
            Format::Gradescope => "gradescope",
            Format::PrairieLearn => "prairielearn",
            Format::GithubClassroom => "github-classroom",
            Format::Autolab => "autolab",
            Format::CodeRunner => "coderunner",
            Format::CodeGrade => "codegrade",
        }
    }

    /// The file name of a student's result in `grade-all`'s
    /// `OUT/<name>/STUDENT/` folder.
    pub fn file_name(self) -> &'static str {
        match self {
            Format::Gradescope | Format::PrairieLearn => "results.json",
            Format::GithubClassroom => "result.txt",
            Format::Autolab => "autoresult.json",
            Format::CodeRunner => "coderunner.json",
            Format::CodeGrade => "score.txt",
        }
    }

    /// Whether `grade` writes it on standard output (its last line) rather
    /// than into a file it is given.
    pub fn on_stdout(self) -> bool {
        matches!(
            self,
            Format::Autolab | Format::CodeRunner | Format::CodeGrade
        )
    }

    /// The text the system reads, ending in a newline: pretty JSON for the
    /// files, one line for what goes on standard output, and GitHub
    /// Classroom's `result=BASE64` line (what `$GITHUB_OUTPUT` gets).
    pub fn render(self, r: &GradeResult) -> String {
        match self {
            // The struct itself: its fields in Gradescope's order.
            Format::Gradescope => pretty(&r.gradescope()),
            Format::PrairieLearn => pretty(&prairielearn(r)),
            Format::GithubClassroom => format!("result={}\n", github_classroom_base64(r)),
            Format::Autolab => line(&autolab(r)),
            Format::CodeRunner => line(&coderunner(r)),
            Format::CodeGrade => codegrade(r) + "\n",
        }
    }
}

/// Pretty JSON and a newline, safe to print ([`crate::escape::json`]): a TA
/// reads these files and lines on terminals.
fn pretty<T: Serialize>(value: &T) -> String {
    crate::escape::json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// One line of JSON and a newline, safe to print.
fn line<T: Serialize>(value: &T) -> String {
    crate::escape::json::to_string(value).unwrap_or_default() + "\n"
}

/// An item's message for a system that cannot hide one item from the
/// student: its own, or that its details are hidden.
fn shown_message(i: &ResultItem) -> String {
    if i.is_visible() {
        i.message.clone()
    } else {
        format!(
            "details hidden ({}); the points count",
            i.visibility.replace('_', " ")
        )
    }
}

fn status_word(i: &ResultItem) -> &'static str {
    match i.status {
        ItemStatus::Passed => "passed",
        ItemStatus::Failed => "failed",
        ItemStatus::NotGraded => "not graded",
    }
}

/// PrairieLearn's external grader `results.json`
/// (<https://prairielearn.readthedocs.io/en/latest/externalGrading/>):
/// `score` from 0 to 1, `message` (the verdict), `output` (the feedback
/// page), and `tests`, one per rubric item (`name`, `points`,
/// `max_points`, `message` passed/failed, `output` what was measured). A
/// submission that cannot be graded is `gradable: false` (PrairieLearn
/// then charges no attempt) with the reason in `format_errors`, and its
/// items at 0 points.
pub fn prairielearn(r: &GradeResult) -> Value {
    let tests: Vec<Value> = r
        .items
        .iter()
        .map(|i| {
            json!({
                "name": i.name,
                "points": i.points,
                "max_points": i.max_points,
                "message": status_word(i),
                "output": shown_message(i),
            })
        })
        .collect();
    let mut v = json!({
        "gradable": r.error.is_none(),
        "score": r.fraction(),
        "message": r.summary,
        "output": r.feedback,
        "tests": tests,
    });
    if let Some(e) = &r.error {
        v["format_errors"] = json!([crate::escape::terminal::text(e)]);
    }
    v
}

/// One test of GitHub Classroom's autograding result.
#[derive(Clone, Debug, Serialize)]
pub struct ClassroomTest {
    /// The rubric item.
    pub name: String,
    /// `pass`, `fail` or `error` (not graded).
    pub status: &'static str,
    /// Points given.
    pub score: f64,
    /// Points it is worth.
    pub max_score: f64,
    /// What was measured.
    pub message: String,
    /// Empty: the reporter prints it when set.
    pub test_code: String,
    /// Empty.
    pub filename: String,
    /// 0: no line (the reporter prints a line number otherwise).
    pub line_no: u32,
    /// 0: the items are not timed one by one.
    pub duration: u64,
}

/// GitHub Classroom's autograding result, the JSON the
/// `autograding-grading-reporter` action decodes from a runner's output.
#[derive(Clone, Debug, Serialize)]
pub struct ClassroomResult {
    /// 1.
    pub version: u32,
    /// `pass` (the verdict), `fail`, or `error` (not graded): the reporter
    /// fails the workflow unless `pass`.
    pub status: &'static str,
    /// The total possible (the reporter sums the tests' scores).
    pub max_score: f64,
    /// One per rubric item.
    pub tests: Vec<ClassroomTest>,
}

/// GitHub Classroom's result for `r`.
pub fn github_classroom(r: &GradeResult) -> ClassroomResult {
    ClassroomResult {
        version: 1,
        status: match (&r.error, r.passed) {
            (Some(_), _) => "error",
            (None, true) => "pass",
            (None, false) => "fail",
        },
        max_score: r.max_points,
        tests: r
            .items
            .iter()
            .map(|i| ClassroomTest {
                name: i.name.clone(),
                status: match i.status {
                    ItemStatus::Passed => "pass",
                    ItemStatus::Failed => "fail",
                    ItemStatus::NotGraded => "error",
                },
                score: i.points,
                max_score: i.max_points,
                message: shown_message(i),
                test_code: String::new(),
                filename: String::new(),
                line_no: 0,
                duration: 0,
            })
            .collect(),
    }
}

/// GitHub Classroom's result as the reporter reads it: its JSON in base64
/// (one line).
pub fn github_classroom_base64(r: &GradeResult) -> String {
    base64(
        crate::escape::json::to_string(&github_classroom(r))
            .unwrap_or_default()
            .as_bytes(),
    )
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * k)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Autolab's autoresult (the last line of the autograder's output):
/// `scores`, each rubric item's points under its name (the assessment's
/// problems must have these names; items of one name add up), and
/// `scoreboard`: the total, then each item's points in the rubric's order.
pub fn autolab(r: &GradeResult) -> Value {
    let mut scores = serde_json::Map::new();
    for i in &r.items {
        let sum = scores.get(&i.name).and_then(Value::as_f64).unwrap_or(0.0) + i.points;
        scores.insert(i.name.clone(), json!(sum));
    }
    let mut board = vec![json!(r.points)];
    board.extend(r.items.iter().map(|i| json!(i.points)));
    json!({ "scores": scores, "scoreboard": board })
}

/// Moodle CodeRunner's combinator template grader result (one JSON line):
/// `fraction` from 0 to 1, `testresults` (a header row `iscorrect`,
/// `ishidden`, `Item`, `Points`, `Measured`, then a row per rubric item;
/// an item that is not `visible` is hidden from the student, shown to
/// staff), `epiloguehtml` (the feedback page, HTML-escaped in a `<pre>`),
/// and, not graded, `prologuehtml` with the reason.
pub fn coderunner(r: &GradeResult) -> Value {
    let mut rows = vec![json!([
        "iscorrect",
        "ishidden",
        "Item",
        "Points",
        "Measured"
    ])];
    for i in &r.items {
        rows.push(json!([
            u8::from(i.status == ItemStatus::Passed),
            u8::from(!i.is_visible()),
            i.name,
            format!(
                "{} / {}",
                format_points(i.points),
                format_points(i.max_points)
            ),
            i.message,
        ]));
    }
    let mut v = json!({
        "fraction": r.fraction(),
        "testresults": rows,
        "epiloguehtml": format!(
            "<pre style=\"white-space: pre-wrap\">{}</pre>",
            crate::escape::html::text(&r.feedback)
        ),
    });
    if let Some(e) = &r.error {
        v["prologuehtml"] = json!(format!(
            "<p><b>Not graded:</b></p><pre>{}</pre>",
            crate::escape::html::text(e)
        ));
    }
    v
}

/// CodeGrade's capture-points line: the fraction from 0 to 1 (at most
/// four decimals, trailing zeros dropped: `1`, `0.75`, `0`).
pub fn codegrade(r: &GradeResult) -> String {
    let text = format!("{:.4}", r.fraction());
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() {
        "0".to_string()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grade::feedback::LeaderboardEntry;

    fn result() -> GradeResult {
        GradeResult {
            error: None,
            passed: false,
            points: 30.0,
            max_points: 40.0,
            elapsed_s: 1.4,
            summary: "FAIL: 30 / 40 points".into(),
            feedback: "# Page <b>&</b>\n".into(),
            items: vec![
                ResultItem {
                    name: "wins".into(),
                    points: 30.0,
                    max_points: 30.0,
                    visibility: "visible".into(),
                    status: ItemStatus::Passed,
                    message: "10 of 10 won".into(),
                },
                ResultItem {
                    name: "fast".into(),
                    points: 0.0,
                    max_points: 10.0,
                    visibility: "after_due_date".into(),
                    status: ItemStatus::Failed,
                    message: "median 900 ms".into(),
                },
            ],
            leaderboard: vec![LeaderboardEntry {
                name: "points".into(),
                value: json!(30.0),
                order: None,
            }],
        }
    }

    fn not_graded() -> GradeResult {
        GradeResult::error(
            "no bot.py",
            &[
                ("wins".into(), 30.0, "visible".into()),
                ("fast".into(), 10.0, "hidden".into()),
            ],
            0.2,
        )
    }

    /// Decodes standard base64 (the test's own, to check the round trip).
    fn unbase64(text: &str) -> Vec<u8> {
        const ABC: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut bits = 0u32;
        let mut n = 0;
        let mut out = Vec::new();
        for c in text.chars().filter(|&c| c != '=') {
            bits = (bits << 6) | ABC.find(c).expect("a base64 character") as u32;
            n += 6;
            if n >= 8 {
                n -= 8;
                out.push((bits >> n) as u8);
                bits &= (1 << n) - 1;
            }
        }
        out
    }

    #[test]
    fn base64_matches_the_standard_and_round_trips() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64("é✅".as_bytes()), "w6ninIU=");
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(unbase64(&base64(&all)), all);
    }

    #[test]
    fn prairielearn_has_its_fields() {
        let v = prairielearn(&result());
        assert_eq!(v["gradable"], true);
        assert_eq!(v["score"], 0.75);
        assert_eq!(v["message"], "FAIL: 30 / 40 points");
        assert_eq!(v["output"], "# Page <b>&</b>\n");
        assert!(v.get("format_errors").is_none());
        assert_eq!(
            v["tests"][0],
            json!({"name": "wins", "points": 30.0, "max_points": 30.0,
                   "message": "passed", "output": "10 of 10 won"})
        );
        // Hidden: the points count, the details do not show.
        assert_eq!(v["tests"][1]["points"], 0.0);
        assert_eq!(v["tests"][1]["max_points"], 10.0);
        assert_eq!(
            v["tests"][1]["output"],
            "details hidden (after due date); the points count"
        );
        let e = prairielearn(&not_graded());
        assert_eq!(e["gradable"], false);
        assert_eq!(e["score"], 0.0);
        assert_eq!(e["format_errors"], json!(["no bot.py"]));
        assert_eq!(e["message"], "Not graded: no bot.py");
        assert_eq!(e["tests"][0]["message"], "not graded");
        assert_eq!(e["tests"][0]["output"], "not graded: no bot.py");
        assert_eq!(e["tests"][1]["max_points"], 10.0);
    }

    #[test]
    fn github_classroom_is_what_the_reporter_reads() {
        let v = serde_json::to_value(github_classroom(&result())).unwrap();
        assert_eq!(
            v,
            json!({
                "version": 1, "status": "fail", "max_score": 40.0,
                "tests": [
                    {"name": "wins", "status": "pass", "score": 30.0, "max_score": 30.0,
                     "message": "10 of 10 won", "test_code": "", "filename": "",
                     "line_no": 0, "duration": 0},
                    {"name": "fast", "status": "fail", "score": 0.0, "max_score": 10.0,
                     "message": "details hidden (after due date); the points count",
                     "test_code": "", "filename": "", "line_no": 0, "duration": 0}
                ]
            })
        );
        let line = Format::GithubClassroom.render(&result());
        let b64 = line.strip_prefix("result=").unwrap().trim_end();
        assert!(!b64.contains('\n'));
        let back: Value = serde_json::from_slice(&unbase64(b64)).unwrap();
        assert_eq!(back, v);
        let e = github_classroom(&not_graded());
        assert_eq!(e.status, "error");
        assert_eq!(e.tests[0].status, "error");
        assert_eq!(e.tests[0].score, 0.0);
        assert_eq!(e.max_score, 40.0);
        let mut passed = result();
        passed.passed = true;
        assert_eq!(github_classroom(&passed).status, "pass");
    }

    #[test]
    fn autolab_scores_items_by_name_and_documents_its_scoreboard() {
        assert_eq!(
            autolab(&result()),
            json!({"scores": {"wins": 30.0, "fast": 0.0}, "scoreboard": [30.0, 30.0, 0.0]})
        );
        let line = Format::Autolab.render(&result());
        assert_eq!(line.lines().count(), 1);
        let mut twice = result();
        twice.items[1].name = "wins".into();
        twice.items[1].points = 5.0;
        assert_eq!(autolab(&twice)["scores"], json!({"wins": 35.0}));
        assert_eq!(
            autolab(&not_graded()),
            json!({"scores": {"wins": 0.0, "fast": 0.0}, "scoreboard": [0.0, 0.0, 0.0]})
        );
    }

    #[test]
    fn coderunner_rows_have_a_header_and_hide_what_is_hidden() {
        let v = coderunner(&result());
        assert_eq!(v["fraction"], 0.75);
        assert_eq!(
            v["testresults"],
            json!([
                ["iscorrect", "ishidden", "Item", "Points", "Measured"],
                [1, 0, "wins", "30 / 30", "10 of 10 won"],
                [0, 1, "fast", "0 / 10", "median 900 ms"]
            ])
        );
        assert_eq!(
            v["epiloguehtml"],
            "<pre style=\"white-space: pre-wrap\"># Page &lt;b&gt;&amp;&lt;/b&gt;\n</pre>"
        );
        assert!(v.get("prologuehtml").is_none());
        assert_eq!(Format::CodeRunner.render(&result()).lines().count(), 1);
        let e = coderunner(&not_graded());
        assert_eq!(e["fraction"], 0.0);
        assert_eq!(e["testresults"][2][1], 1);
        assert!(e["prologuehtml"].as_str().unwrap().contains("no bot.py"));
        assert!(e["epiloguehtml"].as_str().unwrap().contains("no bot.py"));
    }

    #[test]
    fn codegrade_is_a_fraction() {
        assert_eq!(codegrade(&result()), "0.75");
        assert_eq!(codegrade(&not_graded()), "0");
        let mut full = result();
        full.points = 40.0;
        assert_eq!(codegrade(&full), "1");
        full.points = 10.0;
        full.max_points = 30.0;
        assert_eq!(codegrade(&full), "0.3333");
        // A rubric worth nothing: the verdict.
        full.max_points = 0.0;
        full.passed = true;
        assert_eq!(codegrade(&full), "1");
        assert_eq!(Format::CodeGrade.render(&result()), "0.75\n");
    }

    #[test]
    fn every_format_has_its_own_folder_and_gradescope_keeps_its_shape() {
        let names: std::collections::BTreeSet<_> = Format::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(names.len(), Format::ALL.len());
        let text = Format::Gradescope.render(&result());
        // Gradescope's fields in their order, as the struct has them.
        assert!(
            text.starts_with("{\n  \"score\": 30.0,\n  \"max_score\""),
            "{text}"
        );
        let gs: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(gs["score"], 30.0);
        assert_eq!(gs["tests"][1]["visibility"], "after_due_date");
        assert_eq!(gs["tests"][1]["status"], "failed");
        assert_eq!(gs["leaderboard"][0]["name"], "points");
        let e: Value = serde_json::from_str(&Format::Gradescope.render(&not_graded())).unwrap();
        assert_eq!(e["tests"][1]["status"], "failed");
        assert_eq!(e["tests"][1]["visibility"], "hidden");
    }
}
