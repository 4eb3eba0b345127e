//! `grade-all` that a course can trust: resumed without regrading, never
//! overwriting an earlier gradebook unless told, progress from the first
//! seconds, and every hostile submission's output kept harmless.

use std::path::Path;

use crate::common::{root, run, stderr, stdout};

const GOOD_NOTAKTO: &str = "tests/fixtures/grade/notakto_bot.py";

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `(student, verdict)` of a gradebook.
fn verdicts(out: &Path) -> Vec<(String, String)> {
    read_json(&out.join("gradebook.json"))
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["student"].as_str().unwrap().to_string(),
                r["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A tic-tac-toe bot that crashes at its first turn after writing an
/// escape sequence and a multi-line traceback to stderr.
const ESCAPES: &str = "import sys\nsys.stdin.readline()\nsys.stdin.readline()\n\
    sys.stderr.write('\\x1b[2J\\x1b]0;owned\\x07Traceback:\\n  line 1\\nValueError: \\x1b[31mboom\\n')\n\
    sys.exit(1)\n";

#[test]
fn grade_all_resumes_without_regrading_and_never_overwrites_unless_told() {
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    let good = std::fs::read_to_string(root().join(GOOD_NOTAKTO)).unwrap();
    write(&class.join("alice/bot.py"), &good);
    write(&class.join("bob/bot.py"), ESCAPES);
    // A compiled bot from a zip upload: the execute bit is gone.
    write(&class.join("carol/bot"), "#!/bin/sh\necho 4\n");
    let rubric = root().join("rubrics/notakto-assignment.toml");
    let out = tmp.path().join("grades");
    let grade = |extra: &[&str]| {
        let mut args = vec![
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
            // Protocol bots graded by the assignment's console rubric.
            "--form",
            "protocol",
            class.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let o = grade(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let first = verdicts(&out);
    assert_eq!(
        first,
        [
            ("alice".to_string(), "pass".to_string()),
            ("bob".into(), "fail".into()),
            ("carol".into(), "error".into())
        ]
    );
    let book = read_json(&out.join("gradebook.json"));
    let carol = book[2]["reason"].as_str().unwrap();
    assert!(carol.contains("not executable"), "{carol}");
    assert!(carol.contains("chmod +x"), "{carol}");
    // Bob's stderr: one line in the gradebook, nothing a terminal or a
    // spreadsheet would act on.
    let bob = book[1]["reason"].as_str().unwrap();
    assert!(!bob.contains('\n'), "{bob}");
    for name in ["gradebook.csv", "gradebook.json", "feedback/bob.md"] {
        let bytes = std::fs::read(out.join(name)).unwrap();
        assert!(!bytes.contains(&0x1b), "{name} holds a raw ESC");
        assert!(!bytes.contains(&0x07), "{name} holds a raw BEL");
    }
    let md = std::fs::read_to_string(out.join("feedback/bob.md")).unwrap();
    assert!(md.contains("\\x1b[31mboom"), "{md}");
    // The reproduce line grades by the same rubric and sandbox.
    assert!(md.contains("--rubric"), "{md}");
    assert!(md.contains(rubric.to_str().unwrap()), "{md}");
    assert!(md.contains("--sandbox"), "{md}");

    // A second run into the same folder is refused, and changes nothing.
    let before = std::fs::read(out.join("gradebook.json")).unwrap();
    let o = grade(&[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("earlier grade-all"), "{err}");
    assert!(
        err.contains("--resume") && err.contains("--overwrite"),
        "{err}"
    );
    assert!(!err.contains("graded alice"), "{err}");
    assert_eq!(std::fs::read(out.join("gradebook.json")).unwrap(), before);

    // Resumed: Alice (now broken) is not graded again; Dave, new, is.
    write(&class.join("alice/bot.py"), "def f(:\n");
    write(&class.join("dave/bot.py"), &good);
    let o = grade(&["--resume"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("grading 1 of 4 students"), "{err}");
    assert!(!err.contains("graded alice"), "{err}");
    assert!(err.contains("graded dave"), "{err}");
    let resumed = verdicts(&out);
    assert_eq!(resumed.len(), 4);
    assert_eq!(resumed[0], ("alice".into(), "pass".into()));
    assert_eq!(resumed[3], ("dave".into(), "pass".into()));

    // Resuming with other settings would mix two gradings.
    let o = grade(&["--resume", "--seed", "9"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("other settings"), "{err}");

    // Told to, everyone is graded again.
    let o = grade(&["--overwrite"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(verdicts(&out)[0], ("alice".into(), "fail".into()));
}

#[test]
fn grade_all_shows_games_played_before_the_first_student_is_done() {
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    // About half a second a move: one student takes several seconds.
    write(
        &class.join("slow/bot.py"),
        "import sys, time\nfor line in sys.stdin:\n    w = line.split()\n\
         \x20   if w and w[0] == 'turn':\n        time.sleep(0.5)\n\
         \x20       print(w[1].index('.'), flush=True)\n",
    );
    let out = tmp.path().join("out");
    let o = run(&[
        "grade-all",
        "tictactoe",
        "--seat",
        "1",
        "--games",
        "4",
        // The bot loses: play every game all the same.
        "--keep-going",
        "--jobs",
        "1",
        "--time-ms",
        "3000",
        class.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // Off a terminal: a line at the start, then lines counting games
    // while the only student is still being graded.
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].contains("grading 1 student, 1 at once"), "{err}");
    let graded = lines
        .iter()
        .position(|l| l.contains("graded slow"))
        .unwrap();
    let progress = lines.iter().position(|l| l.contains("games played"));
    assert!(
        progress.is_some_and(|p| p < graded),
        "no progress before the student was done: {err}"
    );
}

#[test]
fn grade_all_on_a_missing_folder_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("clas");
    let o = run(&["grade-all", "tictactoe", missing.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("clas: no such folder"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!missing.exists());
}

#[test]
fn thresholds_outside_0_to_100_or_nan_are_refused() {
    for (flag, value) in [
        ("--min-vs-random", "150"),
        ("--min-vs-greedy", "-0.5"),
        ("--min-vs-optimal", "NaN"),
    ] {
        let o = run(&["grade", "uttt", "random", &format!("{flag}={value}")]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!("{flag} must be a percentage from 0 to 100")),
            "{err}"
        );
    }
}

#[test]
fn a_bot_that_never_flushes_is_told_so_by_check_and_feedback() {
    let tmp = tempfile::tempdir().unwrap();
    let bot = tmp.path().join("noflush.py");
    // print() to a pipe stays in Python's buffer: nothing reaches referee.
    write(
        &bot,
        "import sys\nfor line in sys.stdin:\n    w = line.split()\n\
         \x20   if w and w[0] == 'turn':\n        print(w[1].index('.'))\n",
    );
    let cmd = format!("python3 {}", bot.display());
    let o = run(&["check", "tictactoe", &cmd]);
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert_ne!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("nothing was received"), "{text}");
    assert!(text.contains("did the bot flush its output?"), "{text}");
    let md = tmp.path().join("feedback.md");
    let o = run(&[
        "grade",
        "tictactoe",
        "--games",
        "1",
        "--max-timeouts",
        "1",
        &cmd,
        "--feedback",
        md.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let page = std::fs::read_to_string(&md).unwrap();
    assert!(page.contains("did the bot flush its output?"), "{page}");
}

#[test]
fn no_replay_is_offered_for_a_game_without_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let bot = tmp.path().join("dies.py");
    // Dies at its first turn: the failing game has no moves to replay.
    write(&bot, "import sys\nsys.stdin.readline()\nsys.exit(1)\n");
    let md = tmp.path().join("feedback.md");
    let o = run(&[
        "grade",
        "tictactoe",
        "--seat",
        "1",
        "--games",
        "1",
        &format!("python3 {}", bot.display()),
        "--feedback",
        md.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let page = std::fs::read_to_string(&md).unwrap();
    assert!(page.contains("## First failing game"), "{page}");
    assert!(!page.contains("Replay it"), "{page}");
    assert!(!page.contains("referee judge"), "{page}");
}

#[test]
fn grade_all_on_a_terminal_shows_games_played_in_its_bar() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        crate::common::skipped("`script` (util-linux), which gives referee a terminal, is missing");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    write(
        &class.join("slow/bot.py"),
        "import sys, time\nfor line in sys.stdin:\n    w = line.split()\n\
         \x20   if w and w[0] == 'turn':\n        time.sleep(0.2)\n\
         \x20       print(w[1].index('.'), flush=True)\n",
    );
    let out = tmp.path().join("out");
    let command = shell_words::join([
        env!("CARGO_BIN_EXE_referee"),
        "grade-all",
        "tictactoe",
        "--seat",
        "1",
        "--games",
        "2",
        "--jobs",
        "1",
        "--time-ms",
        "3000",
        class.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    // `script` runs it on a pseudo-terminal and copies what it drew.
    let o = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{screen}");
    assert!(screen.contains("games played"), "{screen}");
    assert!(screen.contains("graded slow"), "{screen}");
}

/// A small class of tic-tac-toe protocol bots: perfect, random, crashing.
fn small_class(class: &Path) {
    let good = "import sys\nfor line in sys.stdin:\n    w = line.split()\n    \
        if w and w[0] == 'turn':\n        b = w[1]\n        \
        print(next(i for i in [4,0,2,6,8,1,3,5,7] if b[i] == '.'), flush=True)\n";
    for (name, text) in [
        ("ann", good),
        ("ben", ESCAPES),
        ("cat", good),
        ("dan", "import sys\nsys.exit(3)\n"),
        ("eve", good),
    ] {
        write(&class.join(name).join("bot.py"), text);
    }
}

#[test]
fn grade_all_in_shards_merges_into_the_unsharded_gradebook() {
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    small_class(&class);
    let grade = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "grade-all",
            "tictactoe",
            "--games",
            "4",
            "--no-sandbox",
            "--jobs",
            "2",
            class.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let whole = tmp.path().join("whole");
    let o = grade(&whole, &[]);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let mut shards = Vec::new();
    for k in 1..=3 {
        let d = tmp.path().join(format!("shard-{k}"));
        let o = grade(&d, &["--shard", &format!("{k}/3")]);
        assert!(o.status.code().is_some(), "{}", stderr(&o));
        shards.push(d);
    }
    // Whole students per shard, in name order: 1/3 has ann and dan.
    assert_eq!(
        verdicts(&shards[0])
            .iter()
            .map(|v| v.0.as_str())
            .collect::<Vec<_>>(),
        ["ann", "dan"]
    );
    let merged = tmp.path().join("merged");
    let mut args = vec!["merge", "--out", merged.to_str().unwrap()];
    args.extend(shards.iter().map(|d| d.to_str().unwrap()));
    let o = run(&args);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    for f in ["gradebook.json", "gradebook.csv", "grades.csv"] {
        assert_eq!(
            std::fs::read_to_string(merged.join(f)).unwrap(),
            std::fs::read_to_string(whole.join(f)).unwrap(),
            "{f}"
        );
    }
    for s in ["ann", "ben", "cat", "dan", "eve"] {
        assert!(merged.join(format!("feedback/{s}.md")).is_file());
        assert!(merged
            .join(format!("gradescope/{s}/results.json"))
            .is_file());
    }
    // A missing shard, a shard twice, and a class that changed between
    // shards are refused, naming what is wrong.
    let o = run(&[
        "merge",
        "--out",
        tmp.path().join("m2").to_str().unwrap(),
        shards[0].to_str().unwrap(),
        shards[2].to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("shards 2/3 are missing"),
        "{}",
        stderr(&o)
    );
    write(&class.join("cat/bot.py"), "print('changed')\n");
    let late = tmp.path().join("late-2");
    let o = grade(&late, &["--shard", "2/3"]);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let o = run(&[
        "merge",
        "--out",
        tmp.path().join("m3").to_str().unwrap(),
        shards[0].to_str().unwrap(),
        late.to_str().unwrap(),
        shards[2].to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cat's folder differs"),
        "{}",
        stderr(&o)
    );
    // Other settings are refused too.
    let other = tmp.path().join("other-2");
    let mut args = vec![
        "grade-all",
        "tictactoe",
        "--games",
        "6",
        "--no-sandbox",
        class.to_str().unwrap(),
        "--out",
        other.to_str().unwrap(),
        "--shard",
        "2/3",
    ];
    let o = run(&args);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    args.clear();
    let o = run(&[
        "merge",
        "--out",
        tmp.path().join("m4").to_str().unwrap(),
        shards[0].to_str().unwrap(),
        other.to_str().unwrap(),
        shards[2].to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("other settings"), "{}", stderr(&o));
}
