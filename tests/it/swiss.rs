//! `referee tournament` on Swiss tournaments through the real binary: the
//! same standings at any `--jobs`, resume after a cut and after kill -9,
//! byes and Buchholz in every output, and the errors.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{
    games_without_times, lines, referee, resume_equals_full, run, standings, stderr, stdout,
};

/// Seven tic-tac-toe bots (odd: a bye every round), four rounds.
const SEVEN: &str = "game = \"tictactoe\"\nformat = \"swiss\"\nrounds = 4\n\
    games_per_pairing = 4\nrandom_plies = 1\nseed = 5\n\
    [[bots]]\nname = \"optimal\"\nbuiltin = \"optimal\"\n\
    [[bots]]\nname = \"optimal-2\"\nbuiltin = \"optimal\"\n\
    [[bots]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n\
    [[bots]]\nname = \"greedy-2\"\nbuiltin = \"greedy\"\n\
    [[bots]]\nname = \"greedy-3\"\nbuiltin = \"greedy\"\n\
    [[bots]]\nname = \"random\"\nbuiltin = \"random\"\n\
    [[bots]]\nname = \"random-2\"\nbuiltin = \"random\"\n";

fn temp(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("referee-it-swiss-{tag}-"))
        .tempdir()
        .expect("temp dir")
}

fn path(dir: &tempfile::TempDir, name: &str) -> String {
    dir.path().join(name).to_string_lossy().into_owned()
}

#[test]
fn swiss_gives_the_same_standings_at_one_and_two_jobs() {
    let tmp = temp("jobs");
    let file = path(&tmp, "seven.toml");
    std::fs::write(&file, SEVEN).expect("write");
    let (one, two) = (path(&tmp, "one"), path(&tmp, "two"));
    let o = run(&["tournament", &file, "--out", &one, "--jobs", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(table.contains("Swiss system: 4 of 4 rounds"), "{table}");
    assert!(table.contains("Buchholz"), "{table}");
    let o = run(&["tournament", &file, "--out", &two, "--jobs", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(standings(&one), standings(&two));
    assert_eq!(games_without_times(&one), games_without_times(&two));

    // 4 rounds of 3 pairings of 4 games; one bye a round, never twice to
    // the same bot; no pair meets twice.
    let s = standings(&one);
    assert_eq!(
        (s["games"].as_u64(), s["scheduled"].as_u64()),
        (Some(48), Some(48))
    );
    assert_eq!(s["format"], "swiss");
    let rounds = s["swiss"]["paired"].as_array().expect("rounds");
    assert_eq!(rounds.len(), 4);
    let mut byes = Vec::new();
    let mut met = std::collections::HashSet::new();
    for r in rounds {
        byes.push(r["bye"].as_str().expect("a bye").to_string());
        assert_eq!(r["rematches"], 0);
        for p in r["pairs"].as_array().expect("pairs") {
            let mut pair = [p[0].to_string(), p[1].to_string()];
            pair.sort();
            assert!(met.insert(pair), "{p} met twice");
        }
    }
    let distinct: std::collections::HashSet<&String> = byes.iter().collect();
    assert_eq!(distinct.len(), 4, "{byes:?}");
    for b in s["bots"].as_array().expect("bots") {
        assert!(b["buchholz"].is_number() && b["byes"].is_u64(), "{b}");
    }
    let csv = std::fs::read_to_string(Path::new(&one).join("standings.csv")).expect("csv");
    assert!(
        csv.lines().next().unwrap_or("").ends_with(",buchholz,byes"),
        "{csv}"
    );

    // --json prints the same standings.
    let o = run(&["tournament", &file, "--jobs", "2", "--json"]);
    let mut printed: Value = serde_json::from_str(&stdout(&o)).expect("JSON on stdout");
    for b in printed["bots"].as_array_mut().expect("bots") {
        let o = b.as_object_mut().expect("bot");
        o.remove("avg_move_us");
        o.remove("max_move_us");
    }
    assert_eq!(printed, s);
}

#[test]
fn a_cut_swiss_run_resumes_at_its_round() {
    let tmp = temp("cut");
    let file = path(&tmp, "seven.toml");
    std::fs::write(&file, SEVEN).expect("write");
    let (full, cut) = (path(&tmp, "full"), path(&tmp, "cut"));
    let o = run(&["tournament", &file, "--out", &full, "--jobs", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Rounds are 12 games: keep 1.5 rounds (and a torn line) of the
    // games as they were written, as if the run had stopped there.
    std::fs::create_dir_all(&cut).expect("mkdir");
    for f in ["tournament.toml", "fingerprint.json"] {
        std::fs::copy(Path::new(&full).join(f), Path::new(&cut).join(f)).expect("copy");
    }
    let text = std::fs::read_to_string(Path::new(&full).join("games.jsonl")).expect("games");
    let mut kept: String = text.lines().take(18).map(|l| format!("{l}\n")).collect();
    kept.push_str("{\"id\":");
    std::fs::write(Path::new(&cut).join("games.jsonl"), kept).expect("write");
    resume_equals_full(&file, &cut, &full, 48);
}

#[test]
fn kill_9_in_the_middle_of_the_example_then_resume() {
    let tmp = temp("kill");
    let file = "tournaments/swiss.toml";
    let (full, cut) = (path(&tmp, "full"), path(&tmp, "cut"));
    let o = run(&["tournament", file, "--out", &full, "--jobs", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let total = standings(&full)["scheduled"].as_u64().unwrap_or(0) as usize;
    assert_eq!(lines(&full), total);

    // The bots' private folders of a referee killed with -9 cannot be
    // removed by it: they go under the test's folder, removed with it.
    let mut child = referee()
        .args(["tournament", file, "--out", &cut, "--jobs", "2"])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("referee starts");
    // Past the first round (10 bots: 5 pairings of 4 games).
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines(&cut) < 25 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    let kept = lines(&cut);
    assert!(
        (25..total).contains(&kept),
        "killed after {kept} of {total} games"
    );

    let o = run(&["tournament", file, "--out", &cut, "--resume", "--jobs", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(lines(&cut), total);
    assert_eq!(standings(&cut), standings(&full));
}

#[test]
fn swiss_errors_come_before_any_game() {
    let tmp = temp("errors");
    let file = path(&tmp, "t.toml");
    let out = path(&tmp, "out");
    let cases = [
        (
            SEVEN.replace("rounds = 4", "rounds = 8"),
            "t.toml:3:10: rounds: must be between 1 and 7",
        ),
        (
            SEVEN.replace("rounds = 4", "rounds = 0"),
            "t.toml:3:10: rounds: must be at least 1",
        ),
        (
            SEVEN.replace("rounds = 4", "seeding = \"rating\""),
            "t.toml:3:11: seeding: unknown seeding",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(&file, &text).expect("write");
        let o = run(&["tournament", &file, "--out", &out]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        assert!(
            stderr(&o).contains(want),
            "wanted '{want}' in: {}",
            stderr(&o)
        );
        assert_eq!(lines(&out), 0, "no game may start");
    }
    std::fs::write(&file, SEVEN).expect("write");
    let o = run(&["tournament", &file, "--out", &out, "--shard", "1/2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot be split into shards"),
        "{}",
        stderr(&o)
    );
    assert_eq!(lines(&out), 0);
    let o = run(&["tournament", &file, "--out", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["merge", &out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("Swiss"), "{}", stderr(&o));
}
