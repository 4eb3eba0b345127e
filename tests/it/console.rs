//! Students' programs as they are (the Notakto course assignment and the UTTT bot competition): `check-console` on
//! console Notakto programs, and the UTTT function-bot adapter.

use crate::common::{root, run, stderr, stdout};

fn program(flags: &str) -> String {
    let path = root().join("tests/fixtures/console/notakto_hvh.py");
    format!("python3 {} {flags}", path.display())
}

#[test]
fn a_correct_console_program_passes_check_console() {
    let o = run(&[
        "check-console",
        "notakto",
        &program(""),
        "--games",
        "25",
        "--seed",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("PASS: 25/25"), "{}", stdout(&o));
}

#[test]
fn one_extra_space_fails_with_the_diff_and_the_input() {
    let o = run(&[
        "check-console",
        "notakto",
        &program("--extra-space"),
        "--games",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("FAIL: 0/5"), "{out}");
    // A unified diff with the expected header line and the program's one.
    assert!(out.contains("--- expected (referee play)"), "{out}");
    assert!(
        out.contains("-A      B      C\n+A      B      C·\n"),
        "{out}"
    );
    assert!(out.contains("-- input"), "{out}");
    // Whitespace only: counted apart, and accepted on request.
    assert!(out.contains("5 differ in whitespace only"), "{out}");
    assert!(
        out.contains("transcript differs in whitespace only"),
        "{out}"
    );
    let o = run(&[
        "check-console",
        "notakto",
        &program("--extra-space"),
        "--games",
        "5",
        "--accept-whitespace",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("PASS: 0/5"), "{}", stdout(&o));
}

#[test]
fn a_program_that_cannot_start_is_a_harness_error() {
    let o = run(&[
        "check-console",
        "notakto",
        "no-such-program-xyz",
        "--games",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no-such-program-xyz"), "{}", stderr(&o));
}

#[test]
fn competition_function_bots_play_through_the_adapter() {
    let adapter = root().join("bots/python/uttt_function_bot.py");
    for f in ["random_player.py", "greedy_player.py"] {
        let module = root().join("bots/python/uttt_functions").join(f);
        let bot = format!("python3 {} {}", adapter.display(), module.display());
        let o = run(&["match", "uttt", &bot, "random", "--games", "4", "--json"]);
        assert!(o.status.success(), "{f}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
        let me = &v["bots"][0];
        let forfeits: u64 = me["forfeits"]
            .as_object()
            .map(|m| m.values().filter_map(|x| x.as_u64()).sum())
            .unwrap_or(99);
        assert_eq!(forfeits, 0, "{f}: {me}");
    }
}

#[test]
fn an_exception_in_a_function_bot_is_a_crash_with_its_traceback() {
    let guard = tempfile::tempdir().expect("temp dir");
    let dir = guard.path().to_path_buf();
    let module = dir.join("boom.py");
    // It answers its first turn, then raises: a crash mid-game. (A bot that
    // dies before its first reply is a start-up forfeit.)
    std::fs::write(
        &module,
        "calls = []\n\n\
         def boom(board, T, won):\n    calls.append(1)\n    if len(calls) > 1:\n        \
         raise ValueError('no idea')\n    \
         boards = [T] if T != 9 else [i for i in range(9) if won[i] == 0]\n    \
         return next((i, j) for i in boards for j in range(9) if board[i][j] == 0)\n",
    )
    .unwrap();
    let adapter = root().join("bots/python/uttt_function_bot.py");
    let bot = format!("python3 {} {}", adapter.display(), module.display());
    let o = run(&["match", "uttt", &bot, "random", "--games", "2", "--json"]);
    // The readable form shows the traceback's last line.
    let readable = run(&["match", "uttt", &bot, "random", "--games", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(v["bots"][0]["losses"].as_u64(), Some(2), "{v}");
    assert_eq!(v["bots"][0]["forfeits"]["crash"].as_u64(), Some(2), "{v}");
    assert!(
        stdout(&readable).contains("ValueError"),
        "{}",
        stdout(&readable)
    );
}

/// Plays `games` games of the console AI (as player 1, the seat the
/// assignment gives it) against the built-in optimal player, through the
/// library's referee, two at a time.
fn console_ai_games(flags: &str, games: u64) -> Vec<referee::play::record::GameRecord> {
    use referee::bot::{BotSpec, TimeControl};
    use referee::game::{Game, GameOptions, Notakto};
    use referee::play::referee::{play_game, GameSetup};
    let path = root().join("tests/fixtures/console/notakto_ai.py");
    let text = format!("console:python3 {} {flags}", path.display());
    let spec = BotSpec::resolve::<Notakto>(&text).expect("console bot resolves");
    let opt = BotSpec::resolve::<Notakto>("optimal").expect("built-in");
    let time = TimeControl::default();
    let mut out = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..2u64)
            .map(|t| {
                let (spec, opt) = (&spec, &opt);
                s.spawn(move || {
                    let mut recs = Vec::new();
                    for g in (t..games).step_by(2) {
                        let mut a = spec.instantiate::<Notakto>(g, &time, None).unwrap();
                        let mut b = opt.instantiate::<Notakto>(g, &time, None).unwrap();
                        let setup = GameSetup::new(g, g, Notakto::start(&GameOptions::default()));
                        recs.push(play_game(
                            &setup,
                            [&mut a, &mut b],
                            ["ai".into(), "opt".into()],
                        ));
                    }
                    recs
                })
            })
            .collect();
        for h in handles {
            out.extend(h.join().expect("game thread"));
        }
    });
    out
}

#[test]
fn a_console_notakto_ai_beats_the_optimal_player_as_player_1() {
    let recs = console_ai_games("", 12);
    for r in &recs {
        assert_eq!(
            r.winner,
            Some(referee::game::Seat::One),
            "game {}: {:?}",
            r.id,
            r.forfeit
        );
        assert!(r.forfeit.is_none(), "{:?}", r.forfeit);
        // The program's own moves (player 1's) are timed.
        assert!(
            r.times_us.iter().step_by(2).all(|&t| t > 0),
            "{:?}",
            r.times_us
        );
    }
}

#[test]
fn a_console_display_bug_is_a_malformed_forfeit_with_a_diff() {
    let recs = console_ai_games("--display-bug", 2);
    for r in &recs {
        let f = r.forfeit.as_ref().expect("a forfeit");
        assert_eq!(f.reason, referee::protocol::ForfeitReason::Malformed);
        assert_eq!(f.seat, referee::game::Seat::One);
        assert!(f.detail.contains("--- expected"), "{}", f.detail);
        assert!(f.detail.contains("+A      B      C"), "{}", f.detail);
    }
}

#[test]
fn a_console_notakto_ai_passes_sampled_grading_as_player_1() {
    let path = root().join("tests/fixtures/console/notakto_ai.py");
    let bot = format!("console:python3 {}", path.display());
    let o = run(&["grade", "notakto", &bot, "--games", "100", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o))
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), stderr(&o)));
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["passed"], true);
    assert_eq!(v["games"], 100);
    assert_eq!(v["wins"], 100);
    let o = run(&[
        "grade",
        "notakto",
        &format!("{bot} --display-bug"),
        "--games",
        "4",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    let reason = v["failures"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("malformed") && reason.contains("+A      B      C"),
        "{v}"
    );
}
