//! `referee tournament` and `referee merge` through the real binary: the
//! bundled tournaments, errors before any game, kill -9 and resume, shards.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{
    games_without_times, lines, referee, resume_equals_full, run, standings, stderr, stdout,
};

/// A fresh temporary folder for one test, removed when dropped.
struct TempDir {
    _guard: tempfile::TempDir,
    root: PathBuf,
}

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let t = tempfile::Builder::new()
            .prefix(&format!("referee-it-tour-{tag}-"))
            .tempdir()
            .expect("temp dir");
        let root = t.path().to_path_buf();
        TempDir { _guard: t, root }
    }

    fn path(&self, name: &str) -> String {
        self.root.join(name).to_string_lossy().into_owned()
    }
}

#[test]
fn every_bundled_tournament_runs_to_the_end() {
    let tmp = TempDir::new("bundled");
    for name in [
        "tictactoe",
        "tictactoe-external",
        "notakto",
        "uttt",
        "uttt-functions",
        "swiss",
    ] {
        let out = tmp.path(name);
        let file = format!("tournaments/{name}.toml");
        let o = run(&["tournament", &file, "--out", &out, "--jobs", "2"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(stdout(&o).contains("Leaderboard"), "{name}");
        let s = standings(&out);
        assert_eq!(s["games"], s["scheduled"], "{name}");
        assert_eq!(
            lines(&out) as u64,
            s["games"].as_u64().unwrap_or(0),
            "{name}"
        );
        assert!(
            std::fs::read_to_string(Path::new(&out).join("standings.csv"))
                .unwrap_or_default()
                .starts_with("rank,bot,")
        );
    }
}

#[test]
fn bad_files_fail_before_any_game_with_file_line_and_column() {
    let tmp = TempDir::new("bad");
    let good = "game = \"tictactoe\"\n[[bots]]\nname = \"a\"\nbuiltin = \"random\"\n\
                [[bots]]\nname = \"b\"\nbuiltin = \"greedy\"\n";
    let cases = [
        (format!("{good}rounds = 3\n"), "rounds"),
        (
            good.replace("\"b\"", "\"a\""),
            "t.toml:6:8: bots[1].name: duplicate",
        ),
        (
            good.replace("greedy", "greedy:depth=3"),
            "t.toml:7:11: bots[1].builtin",
        ),
        (
            format!("{good}[[bots]]\nname = \"c\"\ncommand = \"./not-here\"\n"),
            "bots[2].command",
        ),
        (
            format!("games_per_pairing = 3\n{good}"),
            "t.toml:1:21: games_per_pairing",
        ),
    ];
    for (text, want) in cases {
        let file = tmp.path("t.toml");
        std::fs::write(&file, &text).expect("write");
        let out = tmp.path("out");
        let o = run(&["tournament", &file, "--out", &out]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        let e = stderr(&o);
        assert!(e.contains(want), "wanted '{want}' in: {e}");
        assert_eq!(lines(&out), 0, "no game may start");
    }
}

#[test]
fn refuses_to_overwrite_games_without_resume() {
    let tmp = TempDir::new("overwrite");
    let out = tmp.path("out");
    let o = run(&["tournament", "tournaments/tictactoe.toml", "--out", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = std::fs::read(Path::new(&out).join("games.jsonl")).expect("games");
    let o = run(&["tournament", "tournaments/tictactoe.toml", "--out", &out]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--resume"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(Path::new(&out).join("games.jsonl")).expect("games"),
        before
    );
    // A different seed is a different tournament: resuming it is refused.
    let o = run(&[
        "tournament",
        "tournaments/tictactoe.toml",
        "--out",
        &out,
        "--resume",
        "--seed",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds a different run: `seed` was 1, now 2"),
        "{}",
        stderr(&o)
    );
}

/// A tournament slow enough (UTTT engines) to be killed in the middle.
const SLOW: &str = "game = \"uttt\"\ngames_per_pairing = 40\nrandom_plies = 2\nseed = 3\n\
    [[bots]]\nname = \"mcts\"\nbuiltin = \"optimal:iters=60\"\n\
    [[bots]]\nname = \"uct\"\nbuiltin = \"uct:iters=60\"\n\
    [[bots]]\nname = \"greedy\"\nbuiltin = \"greedy\"\n";

#[test]
fn kill_9_then_resume_gives_the_uninterrupted_standings() {
    let tmp = TempDir::new("kill");
    let file = tmp.path("slow.toml");
    std::fs::write(&file, SLOW).expect("write");
    let (full, cut) = (tmp.path("full"), tmp.path("cut"));
    let o = run(&["tournament", &file, "--out", &full, "--jobs", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));

    let mut child = referee()
        .args(["tournament", &file, "--out", &cut, "--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("referee starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while lines(&cut) < 5 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    // SIGKILL: no chance to clean up or flush anything.
    let _ = child.kill();
    let _ = child.wait();
    let kept = lines(&cut);
    assert!((5..120).contains(&kept), "killed after {kept} of 120 games");

    resume_equals_full(&file, &cut, &full, 120);
}

#[test]
fn same_games_at_any_jobs_and_shards_merge_into_the_unsharded_standings() {
    let tmp = TempDir::new("shards");
    let file = "tournaments/tictactoe.toml";
    let whole = tmp.path("whole");
    let o = run(&[
        "tournament",
        file,
        "--out",
        &whole,
        "--jobs",
        "1",
        "--seed",
        "11",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The same games at any job count.
    let two = tmp.path("two");
    let o = run(&[
        "tournament",
        file,
        "--out",
        &two,
        "--jobs",
        "2",
        "--seed",
        "11",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(standings(&two), standings(&whole));
    assert_eq!(games_without_times(&two), games_without_times(&whole));
    let mut dirs = Vec::new();
    for k in 1..=3 {
        let d = tmp.path(&format!("shard{k}"));
        let shard = format!("{k}/3");
        let o = run(&[
            "tournament",
            file,
            "--out",
            &d,
            "--shard",
            &shard,
            "--seed",
            "11",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        dirs.push(d);
    }
    let merged = tmp.path("merged");
    let mut args = vec!["merge", "--out", &merged, "--title", "All shards"];
    args.extend(dirs.iter().map(String::as_str));
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(standings(&merged), standings(&whole));
    // The merged report has the shards' settings and its own title.
    let html = std::fs::read_to_string(Path::new(&merged).join("report.html")).unwrap();
    assert!(html.contains("<title>referee report: All shards</title>"));
    assert!(html.contains("[\"Seed\",\"11\"]"));
    // --json prints the same standings.
    let mut args = vec!["merge", "--json"];
    args.extend(dirs.iter().map(String::as_str));
    let o = run(&args);
    let printed: Value = serde_json::from_str(&stdout(&o)).expect("JSON on stdout");
    assert_eq!(printed["games"], standings(&whole)["games"]);
    // Two of three shards are not the whole tournament.
    let o = run(&["merge", &dirs[0], &dirs[1]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing"), "{}", stderr(&o));
}

#[test]
fn out_writes_the_html_report_unless_told_not_to() {
    let t = TempDir::new("report");
    let with = t.path("with");
    let o = run(&[
        "tournament",
        "tournaments/tictactoe.toml",
        "--out",
        &with,
        "--title",
        "Week 3 <ladder>",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let report = Path::new(&with).join("report.html");
    let html = std::fs::read_to_string(&report).expect("report.html");
    assert!(
        html.contains("<html") && html.contains("optimal"),
        "{}",
        &html[..200.min(html.len())]
    );
    assert!(stdout(&o).contains("report.html"));
    // The title and the settings, from the run folder: `referee report`
    // alone shows them again.
    let settings = |html: &str| {
        for want in [
            "<title>referee report: Week 3 &lt;ladder&gt;</title>",
            "[\"Format\",\"round-robin\"]",
            "[\"Games per pairing\",\"200\"]",
            "[\"Seed\",\"1\"]",
            "[\"Openings\",\"1 random ply\"]",
            "\"bot\":\"optimal\",\"description\":\"perfect play",
        ] {
            assert!(html.contains(want), "{want}");
        }
    };
    settings(&html);
    std::fs::remove_file(&report).unwrap();
    let o = run(&["report", &with]);
    assert!(o.status.success(), "{}", stderr(&o));
    settings(&std::fs::read_to_string(&report).unwrap());
    // A title given to `report` is kept for the next one.
    assert!(run(&["report", &with, "--title", "Final"]).status.success());
    assert!(run(&["report", &with]).status.success());
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("<title>referee report: Final</title>"));
    let without = t.path("without");
    let o = run(&[
        "tournament",
        "tournaments/tictactoe.toml",
        "--out",
        &without,
        "--no-report",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!Path::new(&without).join("report.html").exists());
    assert!(Path::new(&without).join("standings.json").exists());
}

#[test]
fn a_run_folder_in_use_is_refused_naming_its_holder() {
    let tmp = TempDir::new("locked");
    let out = tmp.path("out");
    // A server writing the folder holds it as long as it runs.
    let mut server = referee()
        .args([
            "serve",
            "tictactoe",
            "--bot",
            "random",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--quiet", "--out", &out])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut first = String::new();
    if let Some(so) = server.stdout.as_mut() {
        use std::io::BufRead;
        let _ = std::io::BufReader::new(so).read_line(&mut first);
    }
    let o = run(&["tournament", "tournaments/tictactoe.toml", "--out", &out]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(first.starts_with("listening on"), "{first}");
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("is in use by another referee run"), "{e}");
    assert!(e.contains(&format!("pid {}", server.id())), "{e}");
    assert!(e.contains("serve tictactoe"), "{e}");
    // Once the holder is gone, the folder is free.
    let o = run(&["tournament", "tournaments/tictactoe.toml", "--out", &out]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn resume_refuses_a_bot_whose_program_changed() {
    let tmp = TempDir::new("changed");
    let script = tmp.root.join("first.sh");
    let play = "while read c p; do case $c in turn) i=0; \
                while [ \"$(echo $p | cut -c$((i+1)))\" != . ]; do i=$((i+1)); done; echo $i;; \
                end) exit 0;; esac; done\n";
    std::fs::write(&script, play).unwrap();
    let file = tmp.root.join("t.toml");
    std::fs::write(
        &file,
        "game = \"tictactoe\"\ngames_per_pairing = 2\n\
         [[bots]]\nname = \"first\"\ncommand = \"sh first.sh\"\n\
         [[bots]]\nname = \"random\"\nbuiltin = \"random\"\n",
    )
    .unwrap();
    let out = tmp.path("out");
    let file = file.to_string_lossy().into_owned();
    let o = run(&["tournament", &file, "--out", &out, "--no-report"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Same name, another program: resuming would mix the two.
    std::fs::write(&script, format!("# version 2\n{play}")).unwrap();
    let o = run(&["tournament", &file, "--out", &out, "--resume"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("bot 'first': first.sh changed"),
        "{}",
        stderr(&o)
    );
}

/// Game records written by referee 0.1 (before seats and games were typed
/// in the code) read back and write out byte for byte the same.
#[test]
fn records_of_earlier_versions_read_and_write_back_unchanged() {
    let dir = crate::common::root().join("tests/fixtures/records");
    let text = std::fs::read_to_string(dir.join("games-v0.1.jsonl")).expect("fixture");
    let mut n = 0;
    for line in text.lines() {
        let rec: referee::play::record::GameRecord = serde_json::from_str(line).expect(line);
        assert_eq!(serde_json::to_string(&rec).unwrap(), line);
        n += 1;
    }
    assert!(n >= 16);
    assert!(text.contains("\"winner\":null") && text.contains("\"client\":"));
}
