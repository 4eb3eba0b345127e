//! `referee match` through the real binary: statistics, the SPRT and its
//! stopping point at any --jobs, opening suites, --out and --resume,
//! unbounded Elo, streaming of huge --games, and the gauntlet ranking.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{referee, run, stderr, stdout};

fn json(o: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

/// The match JSON without the fields that measure time.
fn untimed(mut v: Value) -> Value {
    for b in v["bots"].as_array_mut().expect("bots") {
        b.as_object_mut().expect("bot").remove("avg_move_us");
    }
    v
}

/// games.jsonl in id order, without the measured times.
fn games(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("games.jsonl")).expect("games.jsonl");
    let mut v: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    v.sort_by_key(|g| g["id"].as_u64());
    for g in &mut v {
        g["times_us"] = Value::Null;
    }
    v
}

const SPRT: &str = "elo0=0,elo1=20,alpha=0.05,beta=0.05";

#[test]
fn the_sprt_stops_at_the_same_pair_at_one_and_two_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    for jobs in ["1", "2"] {
        let out = tmp.path().join(format!("j{jobs}"));
        let o = run(&[
            "match",
            "tictactoe",
            "greedy",
            "random",
            "--sprt",
            SPRT,
            "--random-plies",
            "1",
            "--jobs",
            jobs,
            "--json",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "H1 is exit 0: {}", stderr(&o));
        let v = untimed(json(&o));
        assert_eq!(v["ending"], "sprt");
        assert_eq!(v["sprt"]["result"], "H1");
        let llr = v["sprt"]["llr"].as_f64().unwrap();
        assert!(llr >= v["sprt"]["upper"].as_f64().unwrap(), "{v}");
        // The folder holds exactly the games counted, games past the
        // stopping pair having been dropped.
        let g = games(&out);
        assert_eq!(g.len() as u64, v["games"].as_u64().unwrap());
        seen.push((v, g));
    }
    assert_eq!(
        seen[0], seen[1],
        "the same games and stopping point at 1 and 2 jobs"
    );
    let games_played = seen[0].0["games"].as_u64().unwrap();
    assert!(
        games_played.is_multiple_of(2) && games_played < 1000,
        "{games_played}"
    );

    // The other way round the test accepts H0 (exit 1); a match too short
    // to decide is exit 3.
    let o = run(&[
        "match",
        "tictactoe",
        "random",
        "greedy",
        "--sprt",
        SPRT,
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(json(&o)["sprt"]["result"], "H0");
    let o = run(&[
        "match",
        "tictactoe",
        "greedy",
        "random",
        "--sprt",
        SPRT,
        "--games",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stdout(&o).contains("continue"), "{}", stdout(&o));
}

#[test]
fn rating_lines_come_every_n_games_and_do_not_depend_on_jobs() {
    let lines = |jobs: &str| {
        let o = run(&[
            "match",
            "tictactoe",
            "greedy",
            "random",
            "--games",
            "60",
            "--rating-interval",
            "20",
            "--jobs",
            jobs,
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let one = lines("1");
    let got: Vec<&str> = one.lines().collect();
    assert_eq!(got.len(), 3, "{one}");
    for (line, n) in got.iter().zip([20, 40, 60]) {
        assert!(
            line.starts_with(&format!("referee: {n}/60 games: ")),
            "{line}"
        );
        assert!(
            line.contains(", Elo ") && line.contains(", pairs ["),
            "{line}"
        );
    }
    assert_eq!(one, lines("2"));
    // --json without --rating-interval says nothing on stderr.
    let o = run(&["match", "tictactoe", "greedy", "random", "--json"]);
    assert_eq!(stderr(&o), "");
}

#[test]
fn the_summary_has_every_statistic() {
    let o = run(&[
        "match",
        "tictactoe",
        "greedy",
        "random",
        "--games",
        "40",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let s = &v["statistics"];
    for key in [
        "wins",
        "draws",
        "losses",
        "score",
        "elo",
        "los",
        "draw_ratio",
        "pairs",
        "pentanomial",
        "elo_pairs",
        "nelo",
    ] {
        assert!(!s[key].is_null(), "{key} missing: {v}");
    }
    assert_eq!(s["pairs"], 20);
    let p = &s["pentanomial"];
    let pairs: u64 = ["ll", "ld", "dd_wl", "wd", "ww"]
        .iter()
        .map(|k| p[k].as_u64().unwrap())
        .sum();
    assert_eq!(pairs, 20);
    assert_eq!(v["sprt"], Value::Null);
    let o = run(&["match", "tictactoe", "greedy", "random", "--games", "40"]);
    let text = stdout(&o);
    for want in [
        "greedy against random",
        "Elo (95%), per game",
        "Elo (95%), per pair",
        "nElo (95%)",
        "LOS",
        "draw ratio",
        "pairs LL, LD, DD+WL, WD, WW",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
}

#[test]
fn a_perfect_score_shows_an_open_elo_bound() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("m");
    // A bot that exits at once forfeits every game.
    let args = [
        "match",
        "tictactoe",
        "random",
        "sh -c 'exit 3'",
        "--games",
        "10",
        "--jobs",
        "1",
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("+inf ["), "{text}");
    assert!(!text.contains("2000"), "{text}");
    let mut with_out = args.to_vec();
    with_out.extend(["--json", "--out", out.to_str().unwrap()]);
    let o = run(&with_out);
    let v = json(&o);
    assert_eq!(v["statistics"]["elo"]["estimate"], "+inf", "{v}");
    assert_eq!(v["statistics"]["elo"]["upper"], "+inf", "{v}");
    assert!(v["statistics"]["elo"]["lower"].is_f64(), "{v}");
    let st: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("standings.json")).unwrap())
            .unwrap();
    assert_eq!(st["statistics"], v["statistics"]);
    let csv = std::fs::read_to_string(out.join("standings.csv")).unwrap();
    assert!(csv.contains(",inf,"), "{csv}");
    // The report names the match's settings and its bots.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    for want in [
        "[\"Format\",\"match\"]",
        "[\"Games\",\"10\"]",
        "\"bot\":\"sh -c 'exit 3'\"",
        "[\"Referee\",\"version ",
    ] {
        assert!(html.contains(want), "{want}");
    }
}

#[test]
fn out_then_resume_equals_one_full_run() {
    let tmp = tempfile::tempdir().unwrap();
    let (full, cut) = (tmp.path().join("full"), tmp.path().join("cut"));
    let args = |dir: &Path, jobs: &'static str| {
        vec![
            "match".to_string(),
            "uttt".into(),
            "greedy".into(),
            "random".into(),
            "--games".into(),
            "40".into(),
            "--openings".into(),
            "openings/uttt-2ply.txt".into(),
            "--shuffle-openings".into(),
            "--jobs".into(),
            jobs.into(),
            "--json".into(),
            "--out".into(),
            dir.to_string_lossy().into_owned(),
        ]
    };
    let run_v = |v: Vec<String>| run(&v.iter().map(String::as_str).collect::<Vec<_>>());
    let o = run_v(args(&full, "2"));
    assert!(o.status.success(), "{}", stderr(&o));
    let whole = untimed(json(&o));
    // The same match, as a kill would leave it: 13 games and a torn line.
    std::fs::create_dir_all(&cut).unwrap();
    for f in ["tournament.toml", "fingerprint.json"] {
        std::fs::copy(full.join(f), cut.join(f)).unwrap();
    }
    let text = std::fs::read_to_string(full.join("games.jsonl")).unwrap();
    let mut kept: String = text.lines().take(13).map(|l| format!("{l}\n")).collect();
    kept.push_str("{\"id\": 7, \"ga");
    std::fs::write(cut.join("games.jsonl"), kept).unwrap();
    let mut again = args(&cut, "1");
    again.push("--resume".into());
    let o = run_v(again.clone());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).is_empty() || stderr(&o).contains("torn"),
        "{}",
        stderr(&o)
    );
    assert_eq!(untimed(json(&o)), whole);
    assert_eq!(games(&cut), games(&full));
    // Every pair of games shares an opening of the suite, seats swapped.
    let g = games(&full);
    for pair in g.chunks(2) {
        assert_eq!(pair[0]["opening"], pair[1]["opening"]);
        assert_eq!(pair[0]["players"][0], pair[1]["players"][1]);
        assert_eq!(pair[0]["opening"].as_array().unwrap().len(), 2);
    }
    // Resuming a different match is refused, naming what differs.
    let mut other = again.clone();
    other.extend(["--seed".to_string(), "2".to_string()]);
    let o = run_v(other);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`seed` was 1, now 2"), "{}", stderr(&o));
    let other: Vec<String> = again
        .iter()
        .map(|a| {
            if a == "random" {
                "optimal:iters=5".to_string()
            } else {
                a.clone()
            }
        })
        .collect();
    let o = run_v(other);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("`bots` was"), "{}", stderr(&o));
}

#[test]
fn opening_files_with_bad_lines_are_errors_naming_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite.txt");
    std::fs::write(&suite, "# mine\n4 0\n\n4 4\n").unwrap();
    let o = run(&[
        "match",
        "tictactoe",
        "greedy",
        "random",
        "--openings",
        suite.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("{}:4: move 2 (index 1) '4'", suite.display())),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");

    std::fs::write(&suite, "4\nnot an opening\n").unwrap();
    let t = tmp.path().join("t.toml");
    std::fs::write(
        &t,
        "game = \"tictactoe\"\nopenings = \"suite.txt\"\n\
         [[bots]]\nname = \"a\"\nbuiltin = \"random\"\n\
         [[bots]]\nname = \"b\"\nbuiltin = \"greedy\"\n",
    )
    .unwrap();
    let o = run(&["tournament", t.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("{}:2: neither a position", suite.display())),
        "{e}"
    );
}

#[test]
fn a_position_opening_is_the_records_start_and_judge_replays_it() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite.txt");
    std::fs::write(&suite, "X...O....  # a position\n0 4         # moves\n").unwrap();
    let out = tmp.path().join("m");
    let o = run(&[
        "match",
        "tictactoe",
        "greedy",
        "random",
        "--games",
        "8",
        "--openings",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for g in games(&out) {
        let id = g["id"].as_u64().unwrap();
        let moves: Vec<&str> = g["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        let start = g["start"].as_str().unwrap();
        let mut args = vec!["judge", "tictactoe", "--position"];
        // Round 0 and 2 play the position, rounds 1 and 3 the moves.
        if (id / 2) % 2 == 0 {
            assert_eq!(start, "X...O....", "game {id}");
            assert_eq!(g["opening"], serde_json::json!([]), "game {id}");
            args.extend(["--from", start]);
        } else {
            assert_eq!(start, ".........", "game {id}");
            assert_eq!(g["opening"], serde_json::json!(["0", "4"]), "game {id}");
        }
        let list = moves.join(" ");
        args.push(&list);
        let j = run(&args);
        assert!(j.status.success(), "{}", stderr(&j));
        let verdict = match g["winner"].as_u64() {
            Some(1) => "A",
            Some(2) => "B",
            _ => "Draw",
        };
        assert_eq!(
            stdout(&j),
            format!("{verdict}\n{}\n", g["final_position"].as_str().unwrap()),
            "game {id}"
        );
    }
}

#[test]
fn a_huge_game_count_streams_in_bounded_memory() {
    // With an SPRT it stops as soon as it is decided.
    let o = run(&[
        "match",
        "tictactoe",
        "greedy",
        "random",
        "--games",
        "100000000000",
        "--sprt",
        SPRT,
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["scheduled"], 100_000_000_000u64);
    assert_eq!(v["ending"], "sprt");

    // Without one it plays on, in a few megabytes, until stopped.
    let mut child = referee()
        .args([
            "match",
            "tictactoe",
            "greedy",
            "random",
            "--games",
            "100000000000",
            "--jobs",
            "2",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let rss_kb = |pid: u32| -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    let start = Instant::now();
    let mut most = 0;
    while start.elapsed() < Duration::from_secs(3) {
        assert!(child.try_wait().unwrap().is_none(), "the match ended early");
        most = most.max(rss_kb(child.id()));
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(most > 0 && most < 200_000, "resident memory {most} kB");
}

#[test]
fn a_gauntlet_ranks_by_score_not_points() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("g.toml");
    // The challenger plays four bots, the field bots only the challenger:
    // random beats the three forfeiting bots and has the most points, but
    // optimal, which plays only random, has the best score.
    let mut text = String::from(
        "game = \"tictactoe\"\nformat = \"gauntlet\"\nchallengers = [\"random\"]\n\
         games_per_pairing = 10\nrandom_plies = 1\n\
         [[bots]]\nname = \"random\"\nbuiltin = \"random\"\n\
         [[bots]]\nname = \"optimal\"\nbuiltin = \"optimal\"\n",
    );
    for k in 1..=3 {
        text.push_str(&format!(
            "[[bots]]\nname = \"quits-{k}\"\ncommand = \"sh -c 'exit 3'\"\n"
        ));
    }
    std::fs::write(&t, text).unwrap();
    let out = tmp.path().join("out");
    let o = run(&[
        "tournament",
        t.to_str().unwrap(),
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = json(&o);
    let bots = v["bots"].as_array().unwrap();
    let names: Vec<&str> = bots.iter().map(|b| b["name"].as_str().unwrap()).collect();
    assert_eq!(&names[..2], ["optimal", "random"], "{v}");
    assert!(
        bots[1]["points"].as_f64() > bots[0]["points"].as_f64(),
        "{v}"
    );
    assert_eq!(bots[0]["rank"], 1);
    let csv = std::fs::read_to_string(out.join("standings.csv")).unwrap();
    let second: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(&second[..2], ["1", "optimal"], "{csv}");
}

#[test]
fn a_match_in_shards_merges_into_the_unsharded_statistics() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let play = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "match",
            "uttt",
            "greedy",
            "random",
            "--games",
            "60",
            "--random-plies",
            "2",
            "--seed",
            "9",
            "--json",
            "--out",
            out,
        ];
        args.extend_from_slice(extra);
        let o = crate::common::run(&args);
        assert!(o.status.success(), "{}", crate::common::stderr(&o));
        o
    };
    let whole: serde_json::Value =
        serde_json::from_str(&crate::common::stdout(&play(&dir("whole"), &[]))).unwrap();
    let shards: Vec<String> = (1..=4).map(|k| dir(&format!("s{k}"))).collect();
    for (k, d) in shards.iter().enumerate() {
        play(d, &["--shard", &format!("{}/4", k + 1)]);
    }
    let mut args = vec!["merge", "--json", "--out"];
    let merged = dir("merged");
    args.push(&merged);
    args.extend(shards.iter().map(String::as_str));
    let o = crate::common::run(&args);
    assert!(o.status.success(), "{}", crate::common::stderr(&o));
    let m: serde_json::Value = serde_json::from_str(&crate::common::stdout(&o)).unwrap();
    for key in ["statistics", "games", "distinct_games", "first", "second"] {
        assert_eq!(m[key], whole[key], "{key}");
    }
    assert_eq!(
        crate::common::games_without_times(&merged),
        crate::common::games_without_times(&dir("whole"))
    );
    // An SPRT match cannot be split.
    let o = crate::common::run(&[
        "match",
        "tictactoe",
        "greedy",
        "random",
        "--sprt",
        "elo0=0,elo1=5,alpha=0.05,beta=0.05",
        "--shard",
        "1/2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(crate::common::stderr(&o).contains("cannot be used with --sprt"));
    // Shards of another match (another seed) are refused, naming the key.
    let other = dir("other");
    let o = crate::common::run(&[
        "match",
        "uttt",
        "greedy",
        "random",
        "--games",
        "60",
        "--random-plies",
        "2",
        "--seed",
        "10",
        "--out",
        &other,
        "--shard",
        "2/4",
    ]);
    assert!(o.status.success(), "{}", crate::common::stderr(&o));
    let o = crate::common::run(&["merge", &shards[0], &other, &shards[2], &shards[3]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        crate::common::stderr(&o).contains("seed"),
        "{}",
        crate::common::stderr(&o)
    );
}
