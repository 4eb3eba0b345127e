//! The commands of the core issue through the real binary: judge, play,
//! match and bots.

use crate::common::{run, run_with_input, stderr, stdout};

#[test]
fn judge_prints_the_seed_002_verdicts_exactly() {
    for (moves, want) in [
        ("[[0,0],[2,0],[1,1],[2,1],[2,2]]", "A\n"),
        ("[[0,0],[1,1],[0,1],[0,2],[1,0],[2,0]]", "B\n"),
        (
            "[[0,0],[1,1],[2,0],[1,0],[1,2],[2,1],[0,1],[0,2],[2,2]]",
            "Draw\n",
        ),
        ("[[0,0],[1,1]]", "Pending\n"),
    ] {
        let o = run(&["judge", "tictactoe", moves]);
        assert!(o.status.success(), "{moves}: {}", stderr(&o));
        assert_eq!(stdout(&o), want, "{moves}");
    }
}

#[test]
fn judge_accepts_notation_and_prints_the_position() {
    let o = run(&["judge", "tictactoe", "0 4, 8", "--position"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "Pending\nX...O...X\n");
}

#[test]
fn judge_names_the_first_bad_move_and_exits_2() {
    let o = run(&["judge", "tictactoe", "0 4 0 1"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("move 3 (index 2)") && e.contains("occupied"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "one-line error: {e}");
    assert!(stdout(&o).is_empty());

    let o = run(&["judge", "tictactoe", "[[0,0],[0,3]]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("index 1"), "{}", stderr(&o));

    let o = run(&["judge", "tictactoe", "0 3 1 4 2 5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("index 5"), "{}", stderr(&o));
}

#[test]
fn play_tictactoe_between_humans() {
    let o = run_with_input(&["play", "tictactoe"], "0\n0\nx\n3\n1\n4\n2\n");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.matches("Invalid move, please input again").count(), 2);
    assert!(out.ends_with("Player 1 wins game\n"), "{out}");
}

#[test]
fn play_against_a_bot_and_early_end_of_input() {
    // The optimal bot as player 2 never loses; feed enough moves for any game.
    let o = run_with_input(
        &["play", "tictactoe", "--p2", "optimal", "--seed", "3"],
        "0\n1\n2\n3\n4\n5\n6\n7\n8\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.ends_with("Player 2 wins game\n") || out.ends_with("Draw game\n"),
        "{out}"
    );

    let o = run_with_input(&["play", "tictactoe"], "4\n");
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

#[test]
fn match_json_summary_is_reproducible() {
    let args = [
        "match",
        "tictactoe",
        "greedy",
        "random",
        "--games",
        "40",
        "--seed",
        "5",
        "--json",
    ];
    let a = run(&args);
    assert!(a.status.success(), "{}", stderr(&a));
    let v: serde_json::Value = serde_json::from_str(&stdout(&a)).expect("JSON summary");
    let bots = v["bots"].as_array().expect("bots list");
    assert_eq!(bots.len(), 2);
    let mut total_points = 0.0;
    for b in bots {
        let (w, d, l) = (
            b["wins"].as_u64().unwrap(),
            b["draws"].as_u64().unwrap(),
            b["losses"].as_u64().unwrap(),
        );
        assert_eq!(w + d + l, 40);
        assert_eq!(b["games"].as_u64(), Some(40));
        total_points += b["points"].as_f64().unwrap();
    }
    assert_eq!(total_points, 40.0);
    // Greedy beats random over 40 games.
    assert!(bots[0]["points"].as_f64().unwrap() > bots[1]["points"].as_f64().unwrap());
    // Same seed, same games, whatever the number of jobs.
    let mut one_job = args.to_vec();
    one_job.extend(["--jobs", "1"]);
    let b = run(&one_job);
    let strip = |s: String| -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_str(&s).unwrap();
        for b in v["bots"].as_array_mut().unwrap() {
            b.as_object_mut().unwrap().remove("avg_move_us");
        }
        v
    };
    assert_eq!(strip(stdout(&a)), strip(stdout(&b)));
}

#[test]
fn match_rejects_odd_game_counts_and_unknown_bots() {
    let o = run(&["match", "tictactoe", "random", "random", "--games", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("even"), "{}", stderr(&o));
    let o = run(&["match", "tictactoe", "random", "nosuchbot_xyz"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("nosuchbot_xyz"), "{}", stderr(&o));
}

#[test]
fn bots_lists_every_builtin() {
    let o = run(&["bots"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for name in ["tictactoe", "random", "greedy", "optimal"] {
        assert!(out.contains(name), "{name} missing: {out}");
    }
}
