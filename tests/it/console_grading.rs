//! Right grades on the assignment's console programs as students write them
//! (tests/fixtures/console/student_ai.py and its quirks and holes): play
//! judged apart from format, every hole caught by default settings on 20
//! seeds, perfect programs passing, exhaustive grading by lines of play.

use crate::common::{root, run, stderr, stdout};

fn program(flags: &str) -> String {
    let path = root().join("tests/fixtures/console/student_ai.py");
    format!("console:python3 {} {flags}", path.display())
}

/// Grades `bot` for the assignment (Notakto, 3 boards, player 1, 1 s per
/// move) with `extra` options and the bundled part-2 rubric; the JSON
/// report.
fn grade(bot: &str, extra: &[&str]) -> serde_json::Value {
    let rubric = root().join("rubrics/notakto-assignment.toml");
    let mut args = vec![
        "grade",
        "notakto",
        "--boards",
        "3",
        "--seat",
        "1",
        "--time-ms",
        "1000",
        "--rubric",
        rubric.to_str().unwrap(),
        "--json",
        bot,
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&o), stderr(&o)));
    let code = o.status.code();
    let passed = v["passed"].as_bool() == Some(true);
    assert_eq!(code, Some(if passed { 0 } else { 1 }), "{v}");
    v
}

fn item<'a>(v: &'a serde_json::Value, check_name: &str) -> &'a serde_json::Value {
    v["rubric"]
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .find(|i| i["name"].as_str().is_some_and(|n| n.contains(check_name)))
        })
        .unwrap_or_else(|| panic!("no rubric item '{check_name}' in {v}"))
}

#[test]
fn output_quirks_are_format_findings_and_the_play_gets_its_points() {
    // (flags, what the format finding says)
    let cases = [
        ("--trailing-space", "whitespace"),
        (
            "--debug-line",
            "extra output beside the board: `thinking...",
        ),
        ("--no-first-board", "no board drawn before move 1"),
        ("--own-prompt", "`Your move (player 2):`"),
        ("--blank-line", "whitespace"),
    ];
    for (flags, said) in cases {
        let v = grade(&program(flags), &["--games", "6", "--seed", "4"]);
        assert_eq!(v["passed"], true, "{flags}: {v}");
        assert_eq!(v["points"], 25.0, "{flags}: {v}");
        assert_eq!(v["forfeits"], 0, "{flags}: {v}");
        let format = item(&v, "byte for byte");
        assert_eq!(format["passed"], false, "{flags}: {format}");
        let f = &v["format"];
        assert_eq!(f["compared"], 6, "{flags}: {f}");
        assert_eq!(f["exact"], 0, "{flags}: {f}");
        let notes = f["first"]["notes"].to_string();
        assert!(notes.contains(said), "{flags}: {notes}");
    }
    // Trailing spaces only: the transcript matches once they are ignored,
    // and the diff shows them.
    let v = grade(&program("--trailing-space"), &["--games", "2"]);
    assert_eq!(v["format"]["trailing_whitespace_only"], 2, "{v}");
    assert!(
        v["format"]["first"]["diff"]
            .as_str()
            .unwrap()
            .contains("·\n"),
        "{v}"
    );
    // A clean program matches byte for byte.
    let v = grade(&program(""), &["--games", "3"]);
    assert_eq!(v["format"]["exact"], 3, "{v}");
    assert_eq!(item(&v, "byte for byte")["passed"], true);
}

#[test]
fn every_hole_is_caught_by_default_settings_on_twenty_seeds() {
    // (flags, what the first failure must say)
    let cases = [
        ("--flaw-second-reply", "threw away a won position"),
        ("--flaw-six-deep", "threw away a won position"),
        ("--flaw-crash", "crash"),
        ("--flaw-stateful", "threw away a won position"),
        ("--flaw-random", ""),
        // The missing first board is format; the loss is what is reported.
        (
            "--no-first-board --flaw-second-reply",
            "threw away a won position",
        ),
    ];
    for (flags, reason) in cases {
        for seed in 1..=20 {
            let seed = seed.to_string();
            let v = grade(&program(flags), &["--seed", &seed, "--jobs", "2"]);
            assert_eq!(v["passed"], false, "{flags}, seed {seed}: {v}");
            assert_eq!(v["points"], 0.0, "{flags}, seed {seed}");
            let why = v["failures"][0]["reason"].as_str().unwrap_or_default();
            assert!(why.contains(reason), "{flags}, seed {seed}: {why}");
            // Grading stopped at the first failing game.
            let games = v["games"].as_u64().unwrap();
            assert_eq!(v["wins"].as_u64().unwrap() + 1, games, "{v}");
        }
    }
    // The crash shows its traceback.
    let v = grade(&program("--flaw-crash"), &["--seed", "1"]);
    let tail = v["first_forfeit"]["forfeit"]["stderr_tail"]
        .as_str()
        .unwrap_or_default();
    assert!(tail.contains("IndexError"), "{v}");
}

#[test]
fn a_perfect_program_passes_the_default_grading() {
    let v = grade(&program(""), &[]);
    assert_eq!(v["passed"], true, "{v}");
    assert_eq!(v["games"], 200, "the console default");
    assert_eq!(v["wins"], 200);
    assert_eq!(v["points"], 25.0);
    assert_eq!(item(&v, "within 1 s")["passed"], true, "{v}");
}

#[test]
fn exhaustive_grading_runs_every_line_of_a_small_game() {
    let base = ["--boards", "1", "--seat", "1", "--exhaustive", "--json"];
    let grade1 = |flags: &str, extra: &[&str]| {
        let bot = program(&format!("--boards 1 {flags}"));
        let mut args = vec!["grade", "notakto"];
        args.extend_from_slice(&base);
        args.extend_from_slice(extra);
        args.push(&bot);
        let o = run(&args);
        (o.status.code(), stdout(&o), stderr(&o))
    };
    let (code, out, err) = grade1("", &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["passed"], true);
    let note = v["note"].as_str().unwrap();
    assert!(note.contains("every line of play"), "{note}");
    let lines: u64 = note
        .split(": ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(lines > 8, "{note}");
    // A hole on some lines is found, with its line: the human's second
    // move A8.
    let (code, out, _) = grade1("--flaw-second-reply", &[]);
    assert_eq!(code, Some(1), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["failures"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("threw away"));
    assert_eq!(v["failures"][0]["moves"][3], "A8", "{v}");
    // A budget too small says so.
    let (code, _, err) = grade1("", &["--max-lines", "3"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--max-lines 3"), "{err}");
    // A randomised program is not deterministic: graded by sampling.
    let (code, out, err) = grade1("--flaw-random", &["--games", "30"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert!(
        v["note"].as_str().unwrap().contains("not deterministic") || v["mode"] == "exhaustive",
        "{v}"
    );
    assert!(code == Some(0) || code == Some(1));
}

#[test]
fn a_console_program_named_as_a_protocol_bot_is_told_the_fix() {
    let path = root().join("tests/fixtures/console/student_ai.py");
    let bot = format!("python3 {}", path.display());
    let o = run(&["grade", "notakto", &bot, "--games", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let why = v["failures"][0]["reason"].as_str().unwrap_or_default();
    assert!(why.contains("--form console"), "{v}");
    // And the reverse: a protocol bot graded in the console form.
    let bot = format!(
        "python3 {}",
        root().join("tests/fixtures/grade/notakto_bot.py").display()
    );
    let o = run(&[
        "grade",
        "notakto",
        &bot,
        "--form",
        "console",
        "--games",
        "1",
        "--startup-ms",
        "200",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let why = v["failures"][0]["reason"].as_str().unwrap_or_default();
    assert!(why.contains("--form protocol"), "{v}");
}

#[test]
fn a_submission_folder_finds_its_program() {
    let tmp = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(root().join("tests/fixtures/console/student_ai.py")).unwrap();
    let rubric = root().join("rubrics/notakto-assignment.toml");
    let grade_dir = |dir: &std::path::Path, extra: &[&str]| {
        let mut args = vec![
            "grade",
            "notakto",
            "--seat",
            "1",
            "--time-ms",
            "1000",
            "--games",
            "1",
            "--rubric",
            rubric.to_str().unwrap(),
            "--json",
            dir.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    // Several files: the one the others do not import.
    let a = tmp.path().join("a");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::write(a.join("ai.py"), "import game\n").unwrap();
    std::fs::write(a.join("game.py"), &src).unwrap();
    std::fs::write(a.join("zz_run.py"), format!("import ai\n{src}")).unwrap();
    let o = grade_dir(&a, &[]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    // Several roots: the error says how to name the program, and --entry
    // does.
    let b = tmp.path().join("b");
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(b.join("one.py"), &src).unwrap();
    std::fs::write(b.join("two.py"), &src).unwrap();
    let o = grade_dir(&b, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--entry"), "{}", stderr(&o));
    let o = grade_dir(&b, &["--entry", "two.py"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A zip unpacked with its own top folder.
    let c = tmp.path().join("c");
    std::fs::create_dir_all(c.join("assignment")).unwrap();
    std::fs::write(c.join("assignment/notakto.py"), &src).unwrap();
    let o = grade_dir(&c, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn part_one_is_graded_on_transcripts_with_whitespace_apart() {
    let hvh = root().join("tests/fixtures/console/notakto_hvh.py");
    let rubric = root().join("rubrics/notakto-part1.toml");
    let run_part1 = |flags: &str| {
        let bot = format!("python3 {} {flags}", hvh.display());
        let o = run(&[
            "grade",
            "notakto",
            "--rubric",
            rubric.to_str().unwrap(),
            "--json",
            &bot,
        ]);
        let v: serde_json::Value = serde_json::from_str(&stdout(&o))
            .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&o), stderr(&o)));
        (o.status.code(), v)
    };
    let (code, v) = run_part1("");
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["points"], 25.0);
    assert_eq!(v["transcripts"]["matched"], 50);
    let (code, v) = run_part1("--extra-space");
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["transcripts"]["whitespace_only"], 50, "{v}");
    assert_eq!(v["points"], 0.0);
}

#[test]
fn a_console_class_tournament_plays_each_student_in_the_assignments_seat() {
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    let src = std::fs::read_to_string(root().join("tests/fixtures/console/student_ai.py")).unwrap();
    for (name, flags) in [("alice", "[]"), ("bob", "['--flaw-random']")] {
        let dir = class.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let text = src.replacen("FLAGS = sys.argv[1:]", &format!("FLAGS = {flags}"), 1);
        std::fs::write(dir.join("notakto.py"), text).unwrap();
    }
    let rubric = root().join("rubrics/notakto-assignment.toml");
    let out = tmp.path().join("out");
    let o = run(&[
        "grade-all",
        "notakto",
        "--seat",
        "1",
        "--time-ms",
        "1000",
        "--games",
        "2",
        "--rubric",
        rubric.to_str().unwrap(),
        "--tournament",
        "--builtins",
        "random,optimal",
        class.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let games = std::fs::read_to_string(out.join("tournament/games.jsonl")).unwrap();
    let mut n = 0;
    for line in games.lines().filter(|l| l.starts_with('{')) {
        let g: serde_json::Value = serde_json::from_str(line).unwrap();
        let players = &g["players"];
        // A student is always player 1; the built-ins are player 2; no two
        // students meet.
        assert!(
            ["alice", "bob"].contains(&players[0].as_str().unwrap()),
            "{g}"
        );
        assert!(
            ["random", "optimal"].contains(&players[1].as_str().unwrap()),
            "{g}"
        );
        if players[0] == "alice" {
            assert!(g["forfeit"].is_null(), "a perfect program: {g}");
            assert_eq!(g["winner"], 1, "{g}");
        }
        n += 1;
    }
    // Two students, two built-ins, 2 games a pairing.
    assert_eq!(n, 8, "{games}");
    // A Swiss tournament cannot seat them: refused before any grading.
    let o = run(&[
        "grade-all",
        "notakto",
        "--seat",
        "1",
        "--rubric",
        rubric.to_str().unwrap(),
        "--tournament",
        "--swiss",
        "3",
        class.to_str().unwrap(),
        "--out",
        tmp.path().join("out2").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--swiss cannot be used"),
        "{}",
        stderr(&o)
    );
}
