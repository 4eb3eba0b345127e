//! Results for grading systems besides Gradescope: `grade`'s flags, and
//! each ready-to-copy folder in `graders/` run on a fake tree of its
//! system's layout (as `gradescope_run_autograder_grades_a_fake_tree` does
//! for Gradescope). One cheap student throughout: a tic-tac-toe bot that
//! plays the first free cell (it loses, never forfeits), under a rubric of
//! a hidden 30-point item it fails and a visible 10-point item it passes:
//! 10 of 40 points, 0.25.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{referee, root, stderr, stdout};

const BOT: &str = "import sys\n\
for line in sys.stdin:\n    \
words = line.split()\n    \
if words and words[0] == \"turn\":\n        \
print(words[1].index(\".\"), flush=True)\n";

const RUBRIC: &str = "title = \"First free cell\"\n\n\
[settings]\ngame = \"tictactoe\"\n\n\
[[items]]\nname = \"never loses\"\ncheck = \"passes\"\npoints = 30\nvisibility = \"hidden\"\n\n\
[[items]]\nname = \"never forfeits\"\ncheck = \"no-forfeits\"\npoints = 10\n";

/// A temporary folder with the rubric, and `dir` holding the student's bot
/// as `file`.
struct Fixture {
    tmp: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(tmp.path().join("rubric.toml"), RUBRIC).expect("the rubric");
        Fixture { tmp }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    fn rubric(&self) -> PathBuf {
        self.path("rubric.toml")
    }

    /// Writes the bot as `rel` (folders created).
    fn bot(&self, rel: &str) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("the folder");
        std::fs::write(&p, BOT).expect("the bot");
        p
    }

    /// `bash script` with the settings every script shares.
    fn script(&self, script: &str) -> Command {
        let mut c = Command::new("bash");
        c.arg(root().join(script))
            .env("REFEREE", env!("CARGO_BIN_EXE_referee"))
            .env("RUBRIC", self.rubric())
            .env("GRADE", "tictactoe")
            .env("GAMES", "1")
            // The sandbox is the Gradescope script's tests'; these check the
            // results.
            .env("SANDBOX", "off")
            .env_remove("GITHUB_OUTPUT")
            .stdin(Stdio::null());
        c
    }
}

fn output(c: &mut Command) -> Output {
    c.output().expect("the command runs")
}

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", path.display()))
}

fn last_line(o: &Output) -> String {
    stdout(o).lines().last().unwrap_or_default().to_string()
}

/// Standard base64, decoded (GitHub Classroom's result).
fn unbase64(text: &str) -> Vec<u8> {
    const ABC: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let (mut bits, mut n, mut out) = (0u32, 0, Vec::new());
    for c in text.trim().chars().filter(|&c| c != '=') {
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

/// The JSON in a `result=BASE64` line.
fn classroom_json(line: &str) -> serde_json::Value {
    let b64 = line.strip_prefix("result=").expect("a result= line");
    serde_json::from_slice(&unbase64(b64)).expect("base64 JSON")
}

fn grade(f: &Fixture, extra: &[&str], submission: &Path) -> Output {
    let mut c = referee();
    c.args([
        "grade",
        "tictactoe",
        "--games",
        "1",
        "--no-sandbox",
        "--rubric",
    ])
    .arg(f.rubric())
    .args(extra)
    .arg(submission)
    .env_remove("GITHUB_OUTPUT");
    output(&mut c)
}

#[test]
fn grade_writes_each_systems_result_and_the_machine_line_last() {
    let f = Fixture::new();
    let bot = f.bot("s/bot.py");
    let sub = bot.parent().expect("its folder").to_path_buf();
    let pl = f.path("out/pl/results.json");
    let gh = f.path("github_output");
    std::fs::write(&gh, "earlier=kept\n").expect("GITHUB_OUTPUT");
    let mut c = referee();
    c.args([
        "grade",
        "tictactoe",
        "--games",
        "1",
        "--no-sandbox",
        "--rubric",
    ])
    .arg(f.rubric())
    .arg("--prairielearn")
    .arg(&pl)
    .args(["--github-classroom", "--autolab"])
    .arg(&sub)
    .env("GITHUB_OUTPUT", &gh);
    let o = output(&mut c);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The report, then the autoresult last.
    assert!(
        stdout(&o).contains("FAIL: 10 / 40 points"),
        "{}",
        stdout(&o)
    );
    let auto: serde_json::Value = serde_json::from_str(&last_line(&o)).expect("JSON");
    assert_eq!(auto["scores"]["never forfeits"], 10.0);
    assert_eq!(auto["scores"]["never loses"], 0.0);
    assert_eq!(auto["scoreboard"], serde_json::json!([10.0, 0.0, 10.0]));
    let p = read_json(&pl);
    assert_eq!(p["score"], 0.25);
    assert_eq!(p["gradable"], true);
    // $GITHUB_OUTPUT gets a line appended; what was there stays.
    let text = std::fs::read_to_string(&gh).expect("GITHUB_OUTPUT");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("earlier=kept"));
    let r = classroom_json(lines.next().expect("the result line"));
    assert_eq!(r["status"], "fail");
    assert_eq!(r["max_score"], 40.0);
    assert_eq!(r["tests"][1]["score"], 10.0);

    // Without GITHUB_OUTPUT the result line is printed, last.
    let o = grade(&f, &["--github-classroom", "--json"], &sub);
    let r = classroom_json(&last_line(&o));
    assert_eq!(r["tests"][0]["status"], "fail");
    assert!(stdout(&o).starts_with('{'), "the JSON report first");

    // Two last lines cannot both be last: refused before any game.
    let o = grade(&f, &["--autolab", "--codegrade"], &sub);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--autolab and --codegrade both print the last line"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty());

    // Not graded: each result says so, with 0 points, and referee exits 2.
    let empty = f.path("empty");
    std::fs::create_dir_all(&empty).expect("a folder");
    let pl = f.path("pl-empty.json");
    let o = grade(
        &f,
        &[
            "--coderunner",
            "--prairielearn",
            pl.to_str().expect("utf-8"),
        ],
        &empty,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let cr: serde_json::Value = serde_json::from_str(&last_line(&o)).expect("JSON");
    assert_eq!(cr["fraction"], 0.0);
    assert_eq!(cr["testresults"].as_array().map(Vec::len), Some(3));
    assert!(cr["prologuehtml"].as_str().is_some_and(|s| !s.is_empty()));
    let p = read_json(&pl);
    assert_eq!(p["gradable"], false);
    assert_eq!(p["tests"][0]["points"], 0.0);
    let o = grade(&f, &["--codegrade"], &empty);
    assert_eq!(last_line(&o), "0");
}

#[test]
fn grade_all_writes_each_systems_results_per_student() {
    let f = Fixture::new();
    f.bot("class/alice/bot.py");
    std::fs::create_dir_all(f.path("class/carol")).expect("carol");
    let out = f.path("out");
    let mut c = referee();
    c.args([
        "grade-all",
        "tictactoe",
        "--games",
        "1",
        "--no-sandbox",
        "--rubric",
    ])
    .arg(f.rubric())
    .arg(f.path("class"))
    .arg("--out")
    .arg(&out)
    .args([
        "--prairielearn",
        "--github-classroom",
        "--autolab",
        "--coderunner",
        "--codegrade",
    ]);
    let o = output(&mut c);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("prairielearn"), "{}", stdout(&o));
    let at = |system: &str, student: &str, file: &str| out.join(system).join(student).join(file);
    let read = |p: PathBuf| std::fs::read_to_string(&p).expect("the student's file");
    for (student, fraction, points) in [("alice", 0.25, 10.0), ("carol", 0.0, 0.0)] {
        assert_eq!(
            read_json(&at("gradescope", student, "results.json"))["score"],
            points
        );
        let p = read_json(&at("prairielearn", student, "results.json"));
        assert_eq!(p["score"], fraction, "{student}: {p}");
        assert_eq!(p["gradable"], student == "alice");
        let r = classroom_json(read(at("github-classroom", student, "result.txt")).trim_end());
        assert_eq!(r["tests"][1]["score"], points);
        let a: serde_json::Value =
            serde_json::from_str(&read(at("autolab", student, "autoresult.json"))).expect("JSON");
        assert_eq!(a["scoreboard"][0], points);
        let cr = read_json(&at("coderunner", student, "coderunner.json"));
        assert_eq!(cr["fraction"], fraction);
        let score = read(at("codegrade", student, "score.txt"));
        assert_eq!(score.trim_end().parse::<f64>().ok(), Some(fraction));
    }
}

#[test]
fn prairielearn_run_sh_grades_a_fake_tree() {
    let f = Fixture::new();
    let student = f.bot("grade/student/bot.py");
    let grade_root = f.path("grade");
    let o = output(
        f.script("graders/prairielearn/run.sh")
            .env("GRADE_ROOT", &grade_root),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&grade_root.join("results/results.json"));
    assert_eq!(r["gradable"], true, "{r}");
    assert_eq!(r["score"], 0.25);
    assert_eq!(r["tests"][0]["max_points"], 30.0);
    // A hidden item: its points count, its details are not shown.
    assert!(
        r["tests"][0]["output"]
            .as_str()
            .is_some_and(|s| s.starts_with("details hidden")),
        "{r}"
    );
    assert_eq!(r["tests"][1]["points"], 10.0);
    assert_eq!(r["tests"][1]["message"], "passed");
    assert!(r["output"].as_str().is_some_and(|s| s.contains("Rubric")));
    // No program: not gradable, with the reason.
    std::fs::remove_file(student).expect("removed");
    let o = output(
        f.script("graders/prairielearn/run.sh")
            .env("GRADE_ROOT", &grade_root),
    );
    assert!(o.status.success());
    let r = read_json(&grade_root.join("results/results.json"));
    assert_eq!(r["gradable"], false, "{r}");
    assert_eq!(r["score"], 0.0);
    assert!(r["format_errors"][0]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
}

#[test]
fn github_classroom_grade_sh_grades_a_fake_repository() {
    let yml = std::fs::read_to_string(root().join("graders/github-classroom/classroom.yml"))
        .expect("classroom.yml");
    // What the reporter requires, and the step id tied to the runner name.
    for needed in [
        "name: Autograding Tests",
        "  run-autograding-tests:",
        "id: referee",
        "run: bash .github/referee/grade.sh",
        "uses: classroom-resources/autograding-grading-reporter@v1",
        "REFEREE_RESULTS: \"${{ steps.referee.outputs.result }}\"",
        "runners: referee",
    ] {
        assert!(yml.contains(needed), "classroom.yml lacks {needed:?}");
    }
    let f = Fixture::new();
    f.bot("repo/bot.py");
    let repo = f.path("repo");
    let gh = f.path("github_output");
    let o = output(
        f.script("graders/github-classroom/grade.sh")
            .current_dir(&repo)
            .env("GITHUB_OUTPUT", &gh),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("FAIL: 10 / 40 points"),
        "{}",
        stdout(&o)
    );
    let text = std::fs::read_to_string(&gh).expect("GITHUB_OUTPUT");
    let r = classroom_json(text.lines().last().expect("a line"));
    assert_eq!(r["version"], 1);
    assert_eq!(r["status"], "fail");
    assert_eq!(r["max_score"], 40.0);
    let total: f64 = r["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .filter_map(|t| t["score"].as_f64())
        .sum();
    assert_eq!(total, 10.0);
    // An empty repository: status error, every test at 0 with the reason.
    std::fs::remove_file(repo.join("bot.py")).expect("removed");
    std::fs::write(&gh, "").expect("emptied");
    let o = output(
        f.script("graders/github-classroom/grade.sh")
            .current_dir(&repo)
            .env("GITHUB_OUTPUT", &gh),
    );
    assert!(
        o.status.success(),
        "the step succeeds: the reporter decides"
    );
    let text = std::fs::read_to_string(&gh).expect("GITHUB_OUTPUT");
    let r = classroom_json(text.lines().last().expect("a line"));
    assert_eq!(r["status"], "error");
    assert_eq!(r["tests"][0]["status"], "error");
    assert_eq!(r["tests"][0]["score"], 0.0);
}

#[test]
fn autolab_makefile_grades_a_fake_folder() {
    if which("make").is_none() || which("tar").is_none() {
        crate::common::skipped("the Autolab test needs make and tar");
        return;
    }
    let f = Fixture::new();
    // The lab's autograde.tar: referee/driver.sh (the binary and rubric
    // come from REFEREE and RUBRIC here).
    let lab = f.path("lab");
    std::fs::create_dir_all(lab.join("referee")).expect("lab");
    std::fs::copy(
        root().join("graders/autolab/driver.sh"),
        lab.join("referee/driver.sh"),
    )
    .expect("driver.sh");
    // What Autolab does: an empty folder with the handin, the Makefile and
    // autograde.tar, then `make`.
    let run = f.path("run");
    std::fs::create_dir_all(&run).expect("run");
    let tar = Command::new("tar")
        .arg("cf")
        .arg(run.join("autograde.tar"))
        .arg("-C")
        .arg(&lab)
        .arg("referee")
        .status()
        .expect("tar runs");
    assert!(tar.success());
    std::fs::copy(
        root().join("graders/autolab/autograde-Makefile"),
        run.join("Makefile"),
    )
    .expect("Makefile");
    std::fs::write(run.join("bot.py"), BOT).expect("handin");
    let make = |handin: &str| {
        let mut c = Command::new("make");
        c.current_dir(&run)
            .env("HANDIN", handin)
            .env("REFEREE", env!("CARGO_BIN_EXE_referee"))
            .env("RUBRIC", f.rubric())
            .env("GRADE", "tictactoe")
            .env("GAMES", "1")
            .env("SANDBOX", "off")
            .env_remove("MAKEFLAGS")
            .stdin(Stdio::null());
        output(&mut c)
    };
    let o = make("bot.py");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let auto: serde_json::Value =
        serde_json::from_str(&last_line(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    assert_eq!(
        auto,
        serde_json::json!({"scores": {"never loses": 0.0, "never forfeits": 10.0},
                           "scoreboard": [10.0, 0.0, 10.0]})
    );
    assert!(stdout(&o).contains("FAIL: 10 / 40 points"));
    // A handin that is no bot: every problem 0, still the last line.
    std::fs::write(run.join("notes.txt"), "no program").expect("handin");
    let _ = std::fs::remove_dir_all(run.join("submission"));
    let o = make("notes.txt");
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let auto: serde_json::Value =
        serde_json::from_str(&last_line(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    assert_eq!(auto["scores"]["never forfeits"], 0.0);
    assert_eq!(auto["scoreboard"][0], 0.0);
}

#[test]
fn coderunner_template_grades_an_answer() {
    let f = Fixture::new();
    let template = std::fs::read_to_string(root().join("graders/coderunner/template.py"))
        .expect("template.py");
    // What CodeRunner's e('py') filter does: the answer inside """...""".
    let answer = BOT.replace('\\', "\\\\").replace('"', "\\\"");
    let slot = "{{ STUDENT_ANSWER | e('py') }}";
    assert!(template.contains(slot));
    std::fs::write(f.path("prog.py"), template.replace(slot, &answer)).expect("prog.py");
    let run = |file: &str| {
        let mut c = Command::new("python3");
        c.arg("prog.py")
            .current_dir(f.tmp.path())
            .env("REFEREE", env!("CARGO_BIN_EXE_referee"))
            .env("RUBRIC", f.rubric())
            .env("GRADE", "tictactoe")
            .env("GAMES", "1")
            .env("FILE", file)
            .stdin(Stdio::null());
        output(&mut c)
    };
    let o = run("bot.py");
    assert!(o.status.success(), "{}", stderr(&o));
    // The whole output is the one JSON object CodeRunner reads.
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    assert_eq!(v["fraction"], 0.25, "{v}");
    assert_eq!(
        v["testresults"][0],
        serde_json::json!(["iscorrect", "ishidden", "Item", "Points", "Measured"])
    );
    assert_eq!(v["testresults"][1][0], 0);
    assert_eq!(v["testresults"][1][1], 1, "the hidden item is hidden");
    assert_eq!(v["testresults"][2][0], 1);
    assert_eq!(v["testresults"][2][3], "10 / 10");
    assert!(v["epiloguehtml"]
        .as_str()
        .is_some_and(|s| s.starts_with("<pre")));
    // An answer saved under another name is no bot: 0, with the reason.
    let o = run("notes.txt");
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    assert_eq!(v["fraction"], 0.0);
    assert!(v["prologuehtml"].as_str().is_some_and(|s| !s.is_empty()));
}

#[test]
fn codegrade_run_sh_scores_a_submission() {
    let f = Fixture::new();
    f.bot("student/bot.py");
    let student = f.path("student");
    let o = output(f.script("graders/codegrade/run.sh").current_dir(&student));
    assert!(o.status.success(), "{}", stderr(&o));
    // The score alone on stdout; the report on stderr.
    assert_eq!(stdout(&o), "0.25\n");
    assert!(
        stderr(&o).contains("FAIL: 10 / 40 points"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(student.join("bot.py")).expect("removed");
    let o = output(f.script("graders/codegrade/run.sh").current_dir(&student));
    assert!(o.status.success());
    assert_eq!(stdout(&o), "0\n");
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}
