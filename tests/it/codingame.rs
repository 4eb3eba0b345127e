//! CodinGame bots (docs/protocol.md, "CodinGame bots"): the example
//! starter bots against built-ins and protocol v1 bots in every
//! combination, fixtures that misbehave, the exact text a bot is sent, and
//! UTTT's CodinGame rule in records and run folders. Games are few and
//! short: most opponents are `random` or `greedy`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{referee, root, stderr, stdout};

/// A CodinGame fixture in Python: logs every line it reads to `log`
/// (when given) and answers the first valid action, followed by `extra`
/// on the same line; `mode` makes it misbehave.
const FIXTURE: &str = r#"
import sys
log = open(sys.argv[1], "a") if len(sys.argv) > 1 and sys.argv[1] != "-" else None
mode = sys.argv[2] if len(sys.argv) > 2 else "first"
if log:
    log.write("---\n")
def read():
    line = input()
    if log:
        log.write(line + "\n")
        log.flush()
    return line
while True:
    read()
    n = int(read())
    actions = [read() for _ in range(n)]
    if mode == "off-grid":
        print("9 9", flush=True)
    elif mode == "taken" and n < 9:
        print("0 0", flush=True)
    elif mode == "words":
        print("centre please", flush=True)
    elif mode == "message":
        print(actions[-1] + " gl hf", flush=True)
    else:
        print(actions[0], flush=True)
"#;

fn fixture(dir: &Path) -> PathBuf {
    let p = dir.join("cg_fixture.py");
    std::fs::write(&p, FIXTURE).unwrap();
    p
}

fn referee_in(args: &[&str]) -> std::process::Output {
    referee().args(args).output().expect("referee runs")
}

fn games(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("games.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A match of two games; asserts it ran and no game was forfeited.
fn clean_match(game: &str, a: &str, b: &str, extra: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let mut args = vec!["match", game, a, b, "--games", "2", "--jobs", "1"];
    args.extend_from_slice(extra);
    args.extend(["--out", out.to_str().unwrap(), "--no-report"]);
    let o = referee_in(&args);
    assert_eq!(o.status.code(), Some(0), "{a} vs {b}: {}", stderr(&o));
    for g in games(&out) {
        assert_eq!(g["termination"], "normal", "{a} vs {b} in {game}: {g}");
    }
}

#[test]
fn the_python_example_plays_built_ins_v1_bots_and_itself() {
    let cg = "bots/codingame-python.toml";
    for game in ["tictactoe", "uttt"] {
        clean_match(game, cg, "random", &[]);
        clean_match(game, "greedy", cg, &[]);
        clean_match(game, cg, "bots/python-random.toml", &[]);
        clean_match(game, cg, cg, &["--time-profile", "codingame"]);
    }
    // `--protocol` sets the protocol of bare commands; a manifest that
    // does not say one speaks v1.
    clean_match(
        "uttt",
        "python3 bots/codingame/starter.py",
        "bots/python-random.toml",
        &["--protocol", "codingame"],
    );
}

#[test]
fn the_cpp_example_plays_built_ins_v1_bots_and_the_python_example() {
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("starter");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    match Command::new(&cxx)
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(root().join("bots/codingame/starter.cpp"))
        .status()
    {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("compiling bots/codingame/starter.cpp failed: {s}"),
        Err(e) => {
            crate::common::skipped(&format!(
                "the C++ CodinGame example needs a C++ compiler ('{cxx}': {e})"
            ));
            return;
        }
    }
    let manifest = tmp.path().join("cpp.toml");
    std::fs::write(
        &manifest,
        format!(
            "name = \"cg-cpp\"\ncommand = [\"{}\"]\nprotocol = \"codingame\"\n",
            exe.display()
        ),
    )
    .unwrap();
    let cpp = manifest.to_str().unwrap();
    for game in ["tictactoe", "uttt"] {
        clean_match(game, cpp, "random", &[]);
        clean_match(game, "bots/python-random.toml", cpp, &[]);
        clean_match(game, cpp, "bots/codingame-python.toml", &[]);
    }
}

#[test]
fn a_message_after_the_move_is_ignored_and_bad_replies_forfeit() {
    let tmp = tempfile::tempdir().unwrap();
    let fx = fixture(tmp.path());
    let bot = |mode: &str| format!("python3 {} - {mode}", fx.display());
    clean_match(
        "uttt",
        &bot("message"),
        "random",
        &["--protocol", "codingame"],
    );
    for (mode, reason, detail) in [
        ("off-grid", "illegal", "not among the valid actions"),
        ("taken", "illegal", "not among the valid actions"),
        ("words", "malformed", "two integers"),
    ] {
        let out = tmp.path().join(mode);
        let o = referee_in(&[
            "match",
            "tictactoe",
            &bot(mode),
            "greedy",
            "--games",
            "2",
            "--protocol",
            "codingame",
            "--out",
            out.to_str().unwrap(),
            "--no-report",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let gs = games(&out);
        let g = gs
            .iter()
            .find(|g| !g["forfeit"].is_null())
            .unwrap_or_else(|| panic!("{mode}: no forfeit in {gs:?}"));
        assert_eq!(g["termination"], reason, "{mode}: {g}");
        let d = g["forfeit"]["detail"].as_str().unwrap();
        assert!(d.contains(detail), "{mode}: {d}");
    }
}

#[test]
fn the_text_sent_on_a_first_and_a_later_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let fx = fixture(tmp.path());
    for (game, first, later) in [
        (
            "tictactoe",
            "-1 -1\n9\n0 0\n0 1\n0 2\n1 0\n1 1\n1 2\n2 0\n2 1\n2 2\n",
            // X took 0 0, O 0 1 (the first valid actions).
            "0 1\n7\n0 2\n1 0\n1 1\n1 2\n2 0\n2 1\n2 2\n",
        ),
        (
            "uttt",
            // Every cell, row by row.
            "-1 -1\n81\n",
            // X took 0 0 (board 0, cell 0), O was sent to board 0 and took
            // 0 1 (cell 1), which sends X to board 1: row 0-2, columns 3-5.
            "0 1\n9\n0 3\n0 4\n0 5\n1 3\n1 4\n1 5\n2 3\n2 4\n2 5\n",
        ),
    ] {
        let a = tmp.path().join(format!("{game}-a.log"));
        let b = tmp.path().join(format!("{game}-b.log"));
        let bot = |log: &Path| format!("python3 {} {}", fx.display(), log.display());
        let o = referee_in(&[
            "match",
            game,
            &bot(&a),
            &bot(&b),
            "--games",
            "2",
            "--jobs",
            "1",
            "--protocol",
            "codingame",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let log = std::fs::read_to_string(&a).unwrap();
        // Game 0: bot A is player 1.
        let game0 = log.split("---\n").nth(1).unwrap();
        assert!(game0.starts_with(first), "{game}: {game0}");
        if game == "uttt" {
            let cells: Vec<&str> = game0.lines().skip(2).take(81).collect();
            let want: Vec<String> = (0..9)
                .flat_map(|r| (0..9).map(move |c| format!("{r} {c}")))
                .collect();
            assert_eq!(cells, want);
        }
        let n_first = first.lines().count() + if game == "uttt" { 81 } else { 0 };
        let rest: String = game0
            .lines()
            .skip(n_first)
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(rest.starts_with(later), "{game} later turn: {rest}");
        // Bot B, player 2 in game 0, first hears X's move.
        let log_b = std::fs::read_to_string(&b).unwrap();
        let b0 = log_b.split("---\n").nth(1).unwrap();
        assert!(b0.starts_with("0 0\n"), "{game}: {b0}");
    }
}

#[test]
fn what_a_codingame_bot_cannot_do_is_refused_with_the_reason() {
    let cg = "bots/codingame-python.toml";
    let o = referee_in(&["match", "notakto", cg, "random"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("CodinGame has no notakto"),
        "{}",
        stderr(&o)
    );
    let o = referee_in(&["match", "tictactoe", cg, "random", "--random-plies", "2"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("--random-plies") && e.contains("empty board"),
        "{e}"
    );
    let o = referee_in(&["grade", "tictactoe", cg, "--exhaustive"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("without --exhaustive"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn check_finds_the_protocol_and_plays_whole_games() {
    let o = referee_in(&["check", "tictactoe", "python3 bots/codingame/starter.py"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}{}", stderr(&o));
    assert!(
        text.contains("protocol: codingame (the bot does not say; found by trying"),
        "{text}"
    );
    assert!(
        text.contains("PASS  full game as player 2 against greedy"),
        "{text}"
    );
    let o = referee_in(&["check", "uttt", "bots/codingame-python.toml"]);
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("protocol: codingame (as it says"), "{text}");
}

#[test]
fn the_codingame_rule_is_recorded_and_kept_across_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    let dir = out.to_str().unwrap();
    let base = [
        "match",
        "uttt",
        "random",
        "greedy",
        "--games",
        "4",
        "--out",
        dir,
        "--no-report",
    ];
    let o = referee_in(&[&base[..], &["--rules", "codingame"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for g in games(&out) {
        assert_eq!(g["rules"], "codingame", "{g}");
    }
    // Resuming under the other rule is refused, naming the rule.
    let o = referee_in(&[&base[..], &["--resume"]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("rules"), "{}", stderr(&o));
    // The standard rule writes no `rules` key, as before.
    let std_out = tmp.path().join("s");
    let o = referee_in(&[
        "match",
        "uttt",
        "random",
        "greedy",
        "--games",
        "2",
        "--out",
        std_out.to_str().unwrap(),
        "--no-report",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(games(&std_out).iter().all(|g| g.get("rules").is_none()));
    // Only UTTT has another rule.
    let o = referee_in(&["judge", "tictactoe", "0 4", "--rules", "codingame"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is for uttt"), "{}", stderr(&o));
}

#[test]
fn judge_decides_a_full_board_by_the_rule_it_is_given() {
    // X wins board 5 and fills the last board with no line of boards:
    // 5 boards to 3.
    let near_end = "O.XXX.XX.X.OOX.O.XOXOOOXXOXXXXO...O.OO.OOOX...OO.XOOOXOOO..X..O..XXX.XO.OXXXOXXXO/9/XX=XO.OXO";
    let verdict = |rules: &str| {
        let o = referee_in(&["judge", "uttt", "5 0", "--from", near_end, "--rules", rules]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o).trim().to_string()
    };
    assert_eq!(verdict("standard"), "Draw");
    assert_eq!(verdict("codingame"), "A");
}

#[test]
fn a_tournament_file_takes_rules_time_and_protocol() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("t.toml");
    let starter = root().join("bots/codingame/starter.py");
    std::fs::write(
        &file,
        format!(
            "game = \"uttt\"\nrules = \"codingame\"\ntime = \"codingame\"\n\
             [[bots]]\nname = \"cg\"\ncommand = \"python3 {}\"\nprotocol = \"codingame\"\n\
             [[bots]]\nname = \"r\"\nbuiltin = \"random\"\n",
            starter.display()
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = referee_in(&[
        "tournament",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-report",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for g in games(&out) {
        assert_eq!(g["rules"], "codingame");
        assert_eq!(g["termination"], "normal", "{g}");
    }
    std::fs::write(
        &file,
        "game = \"tictactoe\"\nrules = \"codingame\"\n[[bots]]\nname = \"a\"\nbuiltin = \"random\"\n\
         [[bots]]\nname = \"b\"\nbuiltin = \"random\"\n",
    )
    .unwrap();
    let o = referee_in(&["tournament", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("t.toml:2:9: rules:"), "{}", stderr(&o));
}

#[test]
fn shards_played_under_different_rules_are_not_merged() {
    let tmp = tempfile::tempdir().unwrap();
    let shard = |k: &str, rules: &str| {
        let out = tmp.path().join(format!("shard{k}"));
        let o = referee_in(&[
            "match",
            "uttt",
            "random",
            "greedy",
            "--games",
            "4",
            "--shard",
            &format!("{k}/2"),
            "--rules",
            rules,
            "--out",
            out.to_str().unwrap(),
            "--no-report",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        out
    };
    let (a, b) = (shard("1", "codingame"), shard("2", "standard"));
    let o = referee_in(&["merge", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("rules"), "{}", stderr(&o));
    // The same rule merges.
    std::fs::remove_dir_all(&b).unwrap();
    let c = shard("2", "codingame");
    let o = referee_in(&["merge", a.to_str().unwrap(), c.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// A CodinGame bot in Python that sleeps `start` seconds before it reads
/// anything (its start-up: imports, weights), then `first` seconds on its
/// first turn, timed from the moment it read that turn's first line as a
/// CodinGame bot times itself, and answers later turns at once.
fn slow_starter(dir: &Path, start: f64, first: f64) -> String {
    let p = dir.join(format!("slow_{start}_{first}.py"));
    std::fs::write(
        &p,
        format!(
            "import sys, time\n\
             time.sleep({start})\n\
             turn = 0\n\
             while True:\n\
             \x20   input()\n\
             \x20   t0 = time.monotonic()\n\
             \x20   actions = [input() for _ in range(int(input()))]\n\
             \x20   if turn == 0:\n\
             \x20       time.sleep(max(0.0, {first} - (time.monotonic() - t0)))\n\
             \x20   turn += 1\n\
             \x20   print(actions[0], flush=True)\n"
        ),
    )
    .unwrap();
    format!("python3 {}", p.display())
}

/// Games of a 2-game match of `bot` against `random` under CodinGame's
/// time profile (the bot plays each seat once).
fn codingame_timed(dir: &Path, bot: &str, name: &str) -> Vec<serde_json::Value> {
    let out = dir.join(name);
    let o = referee_in(&[
        "match",
        "tictactoe",
        bot,
        "random",
        "--games",
        "2",
        "--jobs",
        "1",
        "--protocol",
        "codingame",
        "--time-profile",
        "codingame",
        "--out",
        out.to_str().unwrap(),
        "--no-report",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    games(&out)
}

#[test]
fn codingame_s_first_turn_is_timed_from_the_bot_s_first_input() {
    // 300 ms of start-up before the first read and 950 ms on the turn: 1250
    // ms from the process's start, inside CodinGame's 1000 ms first turn
    // counted from the input, which is how CodinGame times it.
    let tmp = tempfile::tempdir().unwrap();
    let bot = slow_starter(tmp.path(), 0.3, 0.95);
    let gs = codingame_timed(tmp.path(), &bot, "in-time");
    assert_eq!(gs.len(), 2);
    for g in &gs {
        assert_eq!(g["termination"], "normal", "{g}");
    }
}

#[test]
fn codingame_s_first_turn_over_1000_ms_forfeits() {
    // 1100 ms on the first turn is over 1000 ms and its 10 ms tolerance,
    // in either seat.
    let tmp = tempfile::tempdir().unwrap();
    let bot = slow_starter(tmp.path(), 0.0, 1.1);
    let gs = codingame_timed(tmp.path(), &bot, "late");
    assert_eq!(gs.len(), 2);
    for g in &gs {
        assert_eq!(g["termination"], "timeout", "{g}");
        let f = &g["forfeit"];
        assert!(f["move_number"].as_u64().unwrap() <= 2, "{g}");
        let d = f["detail"].as_str().unwrap();
        assert!(d.contains("10 ms of tolerance"), "{d}");
    }
}

/// Whether a UTTT final position filled every board without three boards
/// in a row for either player: the games CodinGame's rule decides on
/// boards won (read from the position text's nine board states).
fn filled_without_a_line(final_position: &str) -> bool {
    let states: Vec<char> = final_position.rsplit('/').next().unwrap().chars().collect();
    const LINES: [[usize; 3]; 8] = [
        [0, 1, 2],
        [3, 4, 5],
        [6, 7, 8],
        [0, 3, 6],
        [1, 4, 7],
        [2, 5, 8],
        [0, 4, 8],
        [2, 4, 6],
    ];
    let line = |c: char| LINES.iter().any(|l| l.iter().all(|&b| states[b] == c));
    !states.contains(&'.') && !line('X') && !line('O')
}

#[test]
fn summaries_state_the_rule_and_the_games_it_decided() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |rules: &str, json: bool| {
        let mut args = vec![
            "match", "uttt", "random", "random", "--games", "40", "--rules", rules, "--out",
        ];
        let dir = tmp.path().join(format!("{rules}-{json}"));
        args.push(dir.to_str().unwrap());
        args.push("--no-report");
        if json {
            args.push("--json");
        }
        let o = referee_in(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        (stdout(&o), games(&dir))
    };
    let (json, gs) = run("codingame", true);
    let want = gs
        .iter()
        .filter(|g| filled_without_a_line(g["final_position"].as_str().unwrap()))
        .count();
    // 40 random games fill every board without a line often enough.
    assert!(want > 0, "no game decided on boards won in {gs:?}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["rules"], "codingame", "{v}");
    assert_eq!(v["decided_by_rule"], want as u64, "{v}");
    let (text, _) = run("codingame", false);
    assert!(
        text.contains(&format!("{want} of 40 games decided on boards won")),
        "{text}"
    );
    assert!(text.contains("codingame, "), "{text}");
    // The standard rule is named, and decides nothing.
    let (json, _) = run("standard", true);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["rules"], "standard");
    assert_eq!(v["decided_by_rule"], 0);
    // A game with one rule has no such keys.
    let o = referee_in(&[
        "match",
        "tictactoe",
        "random",
        "random",
        "--games",
        "2",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        v.get("rules").is_none() && v.get("decided_by_rule").is_none(),
        "{v}"
    );

    // A tournament says it too, in its table and its JSON.
    let file = tmp.path().join("t.toml");
    std::fs::write(
        &file,
        "game = \"uttt\"\nrules = \"codingame\"\ngames_per_pairing = 20\n\
         [[bots]]\nname = \"a\"\nbuiltin = \"random\"\n\
         [[bots]]\nname = \"b\"\nbuiltin = \"random\"\n",
    )
    .unwrap();
    let tdir = tmp.path().join("t");
    let o = referee_in(&[
        "tournament",
        file.to_str().unwrap(),
        "--out",
        tdir.to_str().unwrap(),
        "--no-report",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let want = games(&tdir)
        .iter()
        .filter(|g| filled_without_a_line(g["final_position"].as_str().unwrap()))
        .count();
    assert!(
        stdout(&o).contains(&format!(
            "Rule: codingame, {want} of 20 games decided on boards won"
        )),
        "{}",
        stdout(&o)
    );
    let o = referee_in(&["tournament", file.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["rules"], "codingame");
    assert_eq!(
        v["decided_by_rule"], want as u64,
        "the same seed, the same games"
    );
}

#[test]
fn a_uttt_run_s_files_hold_no_notakto_setting() {
    let tmp = tempfile::tempdir().unwrap();
    let config = |game: &str| {
        let dir = tmp.path().join(game);
        let o = referee_in(&[
            "match",
            game,
            "random",
            "random",
            "--games",
            "2",
            "--out",
            dir.to_str().unwrap(),
            "--no-report",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::read_to_string(dir.join("tournament.toml")).unwrap()
    };
    let has_boards = |t: &str| t.lines().any(|l| l.starts_with("boards"));
    assert!(!has_boards(&config("uttt")), "{}", config("uttt"));
    assert!(!has_boards(&config("tictactoe")));
    assert!(has_boards(&config("notakto")));
}

#[test]
fn a_folder_written_with_boards_for_uttt_resumes() {
    // Folders written before kept `boards = 3` for every game: resuming
    // one is the same run, not another.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("m");
    let args = |games: &str| {
        vec![
            "match".to_string(),
            "uttt".into(),
            "random".into(),
            "greedy".into(),
            "--games".into(),
            games.into(),
            "--out".into(),
            dir.to_str().unwrap().into(),
            "--no-report".into(),
        ]
    };
    let o = referee().args(args("2")).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let cfg = dir.join("tournament.toml");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("boards = 3\n{text}")).unwrap();
    let mut resume = args("2");
    resume.push("--resume".into());
    let o = referee().args(&resume).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn games_from_the_empty_board_vary_by_seed_and_a_match_warns_when_they_do_not() {
    let tmp = tempfile::tempdir().unwrap();
    let fx = fixture(tmp.path());
    // The fixture always answers the first valid action: against itself
    // every game is the same one, and the match says so.
    let first = format!("python3 {} - first", fx.display());
    let o = referee_in(&[
        "match",
        "tictactoe",
        &first,
        &first,
        "--games",
        "4",
        "--protocol",
        "codingame",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: only 1 of 4 games are distinct"),
        "{}",
        stderr(&o)
    );
    // optimal and greedy vary by seed where moves are close in value:
    // against the same deterministic bot most games differ, and nothing
    // is said.
    for bot in ["optimal:iters=300", "greedy"] {
        let o = referee_in(&[
            "match",
            "uttt",
            bot,
            &first,
            "--games",
            "10",
            "--protocol",
            "codingame",
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let distinct = v["distinct_games"].as_u64().unwrap();
        assert!(distinct >= 6, "{bot}: {distinct} distinct of 10");
        assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    }
}
