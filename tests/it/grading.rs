//! Grading a course end to end: rubrics, Gradescope results, feedback, the
//! timeout breaker, and a class run that survives broken submissions.

use std::path::Path;

use crate::common::{root, run, stderr, stdout};

const GOOD_NOTAKTO: &str = "tests/fixtures/grade/notakto_bot.py";

fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", path.display()))
}

fn write(path: &Path, text: &str) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

const RUBRIC: &str = r#"title = "Tic-tac-toe AI"
[[items]]
check = "passes"
points = 60
[[items]]
check = "no-forfeits"
points = 10
visibility = "after_due_date"
[[items]]
check = "score-vs"
opponent = "random"
min_pct = 90
points = 20
[[items]]
check = "median-move-ms"
max = 500
points = 10
"#;

#[test]
fn a_syntax_error_shows_its_traceback_in_feedback_and_gradescope() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("submission");
    write(&sub.join("bot.py"), "import sys\n\ndef move(:\n    pass\n");
    let rubric = tmp.path().join("rubric.toml");
    write(&rubric, RUBRIC);
    let results = tmp.path().join("results/results.json");
    let feedback = tmp.path().join("feedback.md");
    let out = run(&[
        "grade",
        "tictactoe",
        sub.to_str().unwrap(),
        "--games",
        "2",
        "--rubric",
        rubric.to_str().unwrap(),
        "--gradescope",
        results.to_str().unwrap(),
        "--feedback",
        feedback.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // The text report shows the traceback and how to reproduce.
    let text = stdout(&out);
    assert!(text.contains("SyntaxError"), "{text}");
    assert!(text.contains("0 / 100 points"), "{text}");
    let md = std::fs::read_to_string(&feedback).unwrap();
    assert!(md.contains("SyntaxError"), "{md}");
    assert!(md.contains("def move(:"), "{md}");
    // Graded as a folder: the command is run from the student's folder,
    // and grades by the same rubric.
    let again = format!(
        "referee grade tictactoe --games 2 --seed 1 --time-ms 1000 --rubric {} .",
        rubric.display()
    );
    assert!(md.contains(&again), "{md}");
    let r = read_json(&results);
    assert_eq!(r["score"], 0.0);
    assert_eq!(r["max_score"], 100.0);
    assert!(r["output"].as_str().unwrap().contains("SyntaxError"));
    let tests = r["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 4);
    assert!(tests.iter().all(|t| t["status"] == "failed"), "{r}");
    assert_eq!(tests[1]["visibility"], "after_due_date");
    assert_eq!(tests[0]["visibility"], "visible");
    assert_eq!(tests[2]["max_score"], 20.0);
}

#[test]
fn a_passing_bot_gets_its_points_item_by_item() {
    let tmp = tempfile::tempdir().unwrap();
    let rubric = tmp.path().join("rubric.toml");
    write(&rubric, RUBRIC);
    let results = tmp.path().join("results.json");
    let out = run(&[
        "grade",
        "tictactoe",
        "optimal",
        "--games",
        "3",
        "--rubric",
        rubric.to_str().unwrap(),
        "--gradescope",
        results.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["points"], 100.0);
    assert_eq!(report["rubric"].as_array().unwrap().len(), 4);
    // Its games against random were played for the rubric.
    assert_eq!(report["scores"][0]["opponent"], "random");
    let r = read_json(&results);
    assert_eq!(r["score"], 100.0);
    assert!(r["tests"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["status"] == "passed"));
    assert_eq!(r["leaderboard"][0]["name"], "points");
}

#[test]
fn a_bad_rubric_is_a_file_line_error_and_a_mismatched_one_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let rubric = tmp.path().join("bad.toml");
    write(
        &rubric,
        "[[items]]\ncheck = \"passes\"\npoints = 10\nbonus = 3\n",
    );
    let out = run(&[
        "grade",
        "tictactoe",
        "optimal",
        "--rubric",
        rubric.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("bad.toml:4:"), "{err}");
    assert!(err.contains("bonus"), "{err}");
    // The bundled assignment rubric fixes its settings.
    let out = run(&[
        "grade",
        "notakto",
        "optimal",
        "--time-ms",
        "500",
        "--rubric",
        "rubrics/notakto-assignment.toml",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("it is for 1000 ms per move: add --time-ms 1000"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bot_that_keeps_timing_out_is_stopped_after_k_games() {
    let tmp = tempfile::tempdir().unwrap();
    let bot = tmp.path().join("hang.py");
    write(
        &bot,
        "import sys, time\nfor line in sys.stdin:\n    if line.startswith('turn'):\n        time.sleep(30)\n",
    );
    let command = format!("python3 {}", bot.display());
    let out = run(&[
        "grade",
        "tictactoe",
        &command,
        "--games",
        "5",
        "--jobs",
        "1",
        "--time-ms",
        "200",
        "--startup-ms",
        "100",
        "--max-timeouts",
        "2",
        // Past the first failing game (where grading stops by default).
        "--keep-going",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    // Every scheduled game has its result: 2 played, 8 not played.
    assert_eq!(r["games"], 10);
    assert_eq!(r["forfeits"], 10);
    let stopped = r["stopped"].as_str().unwrap();
    assert!(
        stopped.contains("timed out on 2 games in a row"),
        "{stopped}"
    );
    assert!(stopped.contains("its 8 remaining games"), "{stopped}");
    let failures = r["failures"].as_array().unwrap();
    let unplayed = failures
        .iter()
        .filter(|f| f["reason"].as_str().unwrap().contains("not played"))
        .count();
    assert_eq!(unplayed, 8, "{r}");
}

#[test]
fn grading_stops_at_the_first_failing_game_whatever_the_jobs() {
    // greedy tic-tac-toe loses some games to the grading opponent: the
    // games played are those up to the first lost one in the schedule's
    // order, the same with 1 and 2 jobs.
    let games = |jobs: &str| {
        let o = run(&[
            "grade",
            "tictactoe",
            "greedy",
            "--games",
            "60",
            "--jobs",
            jobs,
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["passed"], false, "{v}");
        (
            v["games"].as_u64().unwrap(),
            v["failures"][0]["moves"].clone(),
        )
    };
    let one = games("1");
    assert!(one.0 < 120, "stopped early: {one:?}");
    assert_eq!(one, games("2"));
}

#[test]
fn grade_all_checks_out_before_the_first_game() {
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    write(
        &class.join("alice/bot.py"),
        &std::fs::read_to_string(root().join(GOOD_NOTAKTO)).unwrap(),
    );
    // A file where the output folder should be.
    let blocker = tmp.path().join("out");
    write(&blocker, "not a folder");
    let out = run(&[
        "grade-all",
        "notakto",
        class.to_str().unwrap(),
        "--out",
        blocker.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("--out"), "{err}");
    assert!(!err.contains("graded alice"), "{err}");
}

/// The assignment's console AI (tests/fixtures/console/student_ai.py) with
/// `flags` baked in, as a student would submit it: one file, no arguments.
fn student_program(flags: &[&str]) -> String {
    let source = std::fs::read_to_string(root().join("tests/fixtures/console/student_ai.py"))
        .expect("the fixture");
    let list: Vec<String> = flags.iter().map(|f| format!("{f:?}")).collect();
    source.replacen(
        "FLAGS = sys.argv[1:]",
        &format!("FLAGS = [{}]", list.join(", ")),
        1,
    )
}

#[test]
fn grade_all_writes_feedback_gradescope_and_lms_files_for_every_student() {
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    // The assignment's programs as they are: any file name, no bot.toml.
    write(&class.join("alice/notakto.py"), &student_program(&[]));
    write(&class.join("bob/assignment2.py"), "def f(:\n");
    std::fs::create_dir_all(class.join("carol")).unwrap();
    write(&class.join("dave/main.py"), "");
    write(&class.join("dave/helper.py"), "X = 1\n");
    let rubric = root().join("rubrics/notakto-assignment.toml");
    let out_dir = tmp.path().join("grades");
    let res = run(&[
        "grade-all",
        "notakto",
        "--boards",
        "3",
        "--seat",
        "1",
        "--time-ms",
        "1000",
        "--games",
        "2",
        "--rubric",
        rubric.to_str().unwrap(),
        class.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(res.status.code(), Some(0), "{}", stderr(&res));
    // Class progress: done of total and failures so far.
    let err = stderr(&res);
    assert!(err.contains("/4 done"), "{err}");
    assert!(err.contains("elapsed"), "{err}");
    let book = read_json(&out_dir.join("gradebook.json"));
    let rows = book.as_array().unwrap();
    let row = |name: &str| rows.iter().find(|r| r["student"] == name).unwrap();
    assert_eq!(row("alice")["points"], 25.0, "{book}");
    assert_eq!(row("bob")["verdict"], "fail");
    assert!(
        row("bob")["reason"]
            .as_str()
            .unwrap()
            .contains("SyntaxError"),
        "{book}"
    );
    assert_eq!(row("carol")["verdict"], "error");
    assert!(
        row("carol")["reason"]
            .as_str()
            .unwrap()
            .contains("no Python program"),
        "{book}"
    );
    assert_eq!(row("dave")["points"], 0.0);
    // The LMS file: a column per rubric item.
    let lms = std::fs::read_to_string(out_dir.join("grades.csv")).unwrap();
    let mut lines = lms.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("student,total,wins every game"), "{lms}");
    assert_eq!(lines.next().unwrap(), "alice,25,25,0,0,0");
    assert_eq!(lms.lines().count(), 5);
    // Feedback and results.json for every student, the broken ones too.
    for s in ["alice", "bob", "carol", "dave"] {
        let md = std::fs::read_to_string(out_dir.join(format!("feedback/{s}.md"))).unwrap();
        let r = read_json(&out_dir.join(format!("gradescope/{s}/results.json")));
        assert_eq!(r["max_score"], 25.0, "{s}: {r}");
        assert!(!md.is_empty());
    }
    let carol = read_json(&out_dir.join("gradescope/carol/results.json"));
    assert_eq!(carol["score"], 0.0);
    assert!(carol["output"]
        .as_str()
        .unwrap()
        .contains("no Python program"));
    let alice = std::fs::read_to_string(out_dir.join("feedback/alice.md")).unwrap();
    assert!(alice.contains("PASS: 25 / 25 points"), "{alice}");
    assert!(alice.contains("match byte for byte"), "{alice}");
}

#[test]
fn gradescope_run_autograder_grades_a_fake_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let ag = tmp.path();
    // The assignment's program, named as the student likes.
    write(
        &ag.join("submission/my_notakto_ai.py"),
        &student_program(&["--trailing-space"]),
    );
    std::fs::create_dir_all(ag.join("source")).unwrap();
    let status = std::process::Command::new("bash")
        .arg(root().join("gradescope/run_autograder"))
        .env("AUTOGRADER_ROOT", ag)
        .env("REFEREE", env!("CARGO_BIN_EXE_referee"))
        .env("RUBRIC", root().join("rubrics/notakto-assignment.toml"))
        .env("GAMES", "2")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("bash runs");
    assert!(status.status.success(), "{}", stderr(&status));
    let r = read_json(&ag.join("results/results.json"));
    // The play earns the points; the trailing spaces are the format item's.
    assert_eq!(r["score"], 25.0, "{r}");
    assert_eq!(r["tests"][0]["status"], "passed");
    assert_eq!(r["tests"][1]["status"], "failed", "{r}");
    let md = std::fs::read_to_string(ag.join("results/feedback.md")).unwrap();
    assert!(md.contains("·"), "the trailing space is shown: {md}");
    // A submission without a program: 0 points and the reason, not an
    // empty result.
    std::fs::remove_file(ag.join("submission/my_notakto_ai.py")).unwrap();
    let status = std::process::Command::new("bash")
        .arg(root().join("gradescope/run_autograder"))
        .env("AUTOGRADER_ROOT", ag)
        .env("REFEREE", env!("CARGO_BIN_EXE_referee"))
        .env("RUBRIC", root().join("rubrics/notakto-assignment.toml"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("bash runs");
    assert!(status.status.success());
    let r = read_json(&ag.join("results/results.json"));
    assert_eq!(r["score"], 0.0);
    assert!(
        r["output"].as_str().unwrap().contains("no Python program"),
        "{r}"
    );
}

#[test]
fn grade_all_tournament_ranks_the_class_and_feeds_the_leaderboard() {
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    let heuristic = std::fs::read_to_string(root().join("bots/python/heuristic_ttt.py")).unwrap();
    let random = std::fs::read_to_string(root().join("bots/python/random_bot.py")).unwrap();
    write(&class.join("alice/bot.py"), &heuristic);
    write(&class.join("bob/bot.py"), &random);
    write(&class.join("carol/bot.py"), "def f(:\n");
    std::fs::create_dir_all(class.join("dave")).unwrap();
    let out_dir = tmp.path().join("out");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "grade-all",
            "tictactoe",
            "--games",
            "1",
            "--jobs",
            "2",
            class.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--tournament",
            "--builtins",
            "optimal,random",
        ];
        a.extend_from_slice(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    // A Swiss system that cannot fit is refused before any game.
    let bad: Vec<String> = args(&["--swiss", "9"]);
    let res = run(&bad.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(res.status.code(), Some(2));
    assert!(
        stderr(&res).contains("class tournament"),
        "{}",
        stderr(&res)
    );
    assert!(!out_dir.join("gradebook.json").exists());

    let good = args(&["--tournament-games", "2"]);
    let res = run(&good.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(res.status.code(), Some(0), "{}", stderr(&res));
    // Dave has no bot: graded as an error, left out of the tournament.
    let board = read_json(&out_dir.join("leaderboard.json"));
    let rows = board.as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(rows.len(), 5, "{board}");
    assert!(!names.contains(&"dave"));
    // 5 bots, round-robin, 2 games per pairing: 8 games each.
    assert!(rows.iter().all(|r| r["games"] == 8), "{board}");
    // The bot that cannot start is last; optimal never loses.
    assert_eq!(names[4], "carol", "{board}");
    let optimal = rows.iter().position(|r| r["name"] == "optimal").unwrap();
    let alice = rows.iter().position(|r| r["name"] == "alice").unwrap();
    let bob = rows.iter().position(|r| r["name"] == "bob").unwrap();
    assert!(optimal < bob && alice < bob, "{board}");
    let r = read_json(&out_dir.join("gradescope/alice/results.json"));
    assert_eq!(r["leaderboard"][0]["name"], "rank");
    assert_eq!(r["leaderboard"][0]["value"], alice + 1);
    assert!(out_dir.join("tournament/report.html").is_file());
    assert!(out_dir.join("tournament/standings.json").is_file());
}
