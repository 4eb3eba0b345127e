//! `referee grade` and `referee grade-all`: proofs, refutations and forfeits.

use crate::common::{run, stdout};

const BOT: &str = "python3 tests/fixtures/grade/notakto_bot.py";

fn json(args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let out = run(args);
    let text = stdout(&out);
    let v = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}\n{}", crate::common::stderr(&out)));
    (out.status.code(), v)
}

#[test]
fn a_perfect_python_notakto_bot_passes_exhaustive_grading() {
    let (code, v) = json(&[
        "grade",
        "notakto",
        "--boards",
        "2",
        BOT,
        "--exhaustive",
        "--json",
    ]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["passed"], true);
    assert!(v["positions_checked"].as_u64().unwrap() > 1000, "{v}");
    assert_eq!(v["failures"].as_array().unwrap().len(), 0);
}

#[test]
fn a_bot_flawed_in_one_family_fails_with_a_replayable_line() {
    let flawed = format!("{BOT} --flaw");
    let (code, v) = json(&[
        "grade",
        "notakto",
        "--boards",
        "2",
        &flawed,
        "--exhaustive",
        "--json",
    ]);
    assert_eq!(code, Some(1), "{v}");
    let f = &v["failures"][0];
    let moves: Vec<&str> = f["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    // The line ends with the bot's bad move; the moves before it replay with
    // `referee judge` to the reported position.
    assert_eq!(moves.last().copied(), f["bot_move"].as_str());
    let out = run(&[
        "judge",
        "notakto",
        "--boards",
        "2",
        &moves[..moves.len() - 1].join(" "),
        "--position",
    ]);
    let judged = stdout(&out);
    assert!(
        judged.contains(f["position"].as_str().unwrap()),
        "{judged} vs {f}"
    );
    assert!(f["missed"].as_str().is_some());
    assert_ne!(f["bot_move"], f["missed"]);
}

#[test]
fn the_classic_tictactoe_heuristic_fails_never_lose() {
    let out = run(&[
        "grade",
        "tictactoe",
        "bots/python-heuristic.toml",
        "--exhaustive",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("FAIL"), "{text}");
    assert!(text.contains("moves: "), "{text}");
    assert!(text.contains("refutation"), "{text}");
}

#[test]
fn illegal_moves_and_timeouts_fail_with_the_reason() {
    let (code, v) = json(&[
        "grade",
        "tictactoe",
        "python3 tests/fixtures/fixture_bot.py illegal --turn 1",
        "--exhaustive",
        "--seat",
        "2",
        "--json",
    ]);
    assert_eq!(code, Some(1));
    assert!(
        v["failures"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("illegal"),
        "{v}"
    );
    let (code, v) = json(&[
        "grade",
        "tictactoe",
        "python3 tests/fixtures/fixture_bot.py slow --turn 2 --delay 2",
        "--games",
        "1",
        "--seat",
        "1",
        "--time-ms",
        "300",
        "--json",
    ]);
    assert_eq!(code, Some(1));
    assert_eq!(v["forfeits"], 1);
    assert!(
        v["failures"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("timeout"),
        "{v}"
    );
}

#[test]
fn a_bot_that_cannot_start_is_a_harness_error() {
    let out = run(&["grade", "tictactoe", "./no/such/bot", "--exhaustive"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn grade_all_writes_one_row_per_submission() {
    let root = crate::common::root();
    let guard = tempfile::tempdir().expect("temp dir");
    let class = guard.path().join("class");
    let student = |name: &str, script: Option<&str>| {
        let d = class.join(name);
        std::fs::create_dir_all(&d).unwrap();
        if let Some(s) = script {
            std::fs::write(d.join("bot.py"), s).unwrap();
        }
    };
    let good = std::fs::read_to_string(root.join("tests/fixtures/grade/notakto_bot.py")).unwrap();
    let random = std::fs::read_to_string(root.join("bots/python/random_bot.py")).unwrap();
    student("alice", Some(&good));
    student("bob", Some(&random));
    student("carol", Some("import sys\nsys.exit(3)\n"));
    student("dave", None);
    let out = class.join("book");
    let res = run(&[
        "grade-all",
        "notakto",
        "--boards",
        "1",
        class.to_str().unwrap(),
        "--exhaustive",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        res.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&res)
    );
    let book: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("gradebook.json")).unwrap())
            .unwrap();
    let verdicts: Vec<(&str, &str)> = book
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["student"].as_str().unwrap(),
                r["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("alice", "pass"),
            ("bob", "fail"),
            ("carol", "fail"),
            ("dave", "error")
        ]
    );
    // A bot that exits before its first reply fails to start, with its
    // exit status.
    let carol = book[2]["example"].as_str().unwrap();
    assert!(carol.contains("startup"), "{book}");
    assert!(carol.contains("exited with code 3"), "{book}");
    assert!(book[3]["example"].as_str().unwrap().contains("no bot.toml"));
    let csv = std::fs::read_to_string(out.join("gradebook.csv")).unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
}
