//! `referee league`: a semester in minutes, with bots written the way
//! students write them (debug output on stderr, a crash with a traceback,
//! a prompt printed on stdout), a killed run, and the web page in a real
//! browser.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{chromium, referee, root, run, run_chromium, stderr, stdout, Group};
use referee::league::League;

/// A tic-tac-toe student bot: takes a win, blocks, else the centre, a
/// corner, a side; chats on stderr as students' bots do.
const HEURISTIC: &str = r#"import sys
LINES = [(0,1,2),(3,4,5),(6,7,8),(0,3,6),(1,4,7),(2,5,8),(0,4,8),(2,4,6)]
def pick(cells, me):
    other = 'O' if me == 'X' else 'X'
    free = [i for i, c in enumerate(cells) if c == '.']
    for mark in (me, other):
        for a, b, c in LINES:
            trio = [cells[a], cells[b], cells[c]]
            if trio.count(mark) == 2 and trio.count('.') == 1:
                return (a, b, c)[trio.index('.')]
    for i in (4, 0, 2, 6, 8, 1, 3, 5, 7):
        if i in free:
            return i
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == 'turn':
        cells = words[1]
        me = 'X' if cells.count('X') == cells.count('O') else 'O'
        m = pick(cells, me)
        print("thinking about", cells, "->", m, file=sys.stderr)
        print(m, flush=True)
    elif words[0] == 'end':
        break
"#;

/// Plays the first free cell.
const FIRST_FREE: &str = r#"import sys
for line in sys.stdin:
    w = line.split()
    if w and w[0] == 'turn':
        print(w[1].index('.'), flush=True)
    elif w and w[0] == 'end':
        break
"#;

/// Crashes on its first turn with a traceback.
const CRASHES: &str = r#"import sys
def score(board):
    return 1 / board.count('Z')
for line in sys.stdin:
    w = line.split()
    if w and w[0] == 'turn':
        print(score(w[1]), flush=True)
"#;

/// Prints a prompt before its move, as a console program would.
const CHATTY: &str = r#"import sys
for line in sys.stdin:
    w = line.split()
    if w and w[0] == 'turn':
        print("Enter your move:", w[1].index('.'), flush=True)
"#;

fn bot(dir: &Path, name: &str, code: &str) -> PathBuf {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("bot.py"), code).unwrap();
    d
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "referee {args:?} failed:\n{}{}",
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// A tic-tac-toe league in `dir`, sandboxed as far as this machine goes.
fn init(dir: &Path) {
    crate::common::league_init(dir);
}

fn ladder_json(dir: &str) -> serde_json::Value {
    serde_json::from_str(&ok(&["league", "standings", dir, "--json"])).unwrap()
}

fn row<'a>(ladder: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    ladder["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {ladder}"))
}

#[test]
fn a_semester_from_submissions_to_grades() {
    let tmp = tempfile::tempdir().unwrap();
    let (t, l) = (tmp.path(), tmp.path().join("league"));
    let d = l.to_str().unwrap();
    init(&l);
    let alice = bot(t, "alice", HEURISTIC);
    let bob = bot(t, "bob", FIRST_FREE);
    let carol = bot(t, "carol", CRASHES);
    let dave = bot(t, "dave", CHATTY);
    assert!(
        ok(&["league", "submit", d, "alice", alice.to_str().unwrap()])
            .contains("alice version 1: pending")
    );
    // The same bot again is recognised.
    assert!(ok(&["league", "submit", d, "alice", alice.to_str().unwrap()]).contains("nothing new"));
    // A single file is a submission too.
    let single = t.join("bob.py");
    std::fs::write(&single, FIRST_FREE).unwrap();
    assert!(ok(&["league", "submit", d, "bob", single.to_str().unwrap()]).contains("version 1"));
    ok(&["league", "submit", d, "carol", carol.to_str().unwrap()]);
    ok(&["league", "submit", d, "dave", dave.to_str().unwrap()]);
    // Not a bot: rejected at once, saying why.
    let empty = t.join("erin");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("notes.txt"), "todo").unwrap();
    assert!(ok(&["league", "submit", d, "erin", empty.to_str().unwrap()]).contains("rejected"));

    let out = ok(&["league", "run", d, "--games", "60", "--jobs", "2"]);
    assert!(out.contains("60 ladder games played"), "{out}");
    assert!(out.contains("2 versions admitted, 2 rejected"), "{out}");
    let league = League::open(&l).unwrap();
    let entries = league.db.entries().unwrap();
    let log = |name: &str| {
        entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| (e.status.name(), e.log.clone()))
            .unwrap()
    };
    // The crash: its traceback's last line and the replay command.
    let (status, text) = log("carol");
    assert_eq!(status, "rejected");
    assert!(text.contains("ZeroDivisionError"), "{text}");
    // The prompt before the move: a malformed reply, named.
    let (status, text) = log("dave");
    assert_eq!(status, "rejected");
    assert!(text.contains("Enter your move"), "{text}");
    assert_eq!(log("alice").0, "admitted");

    let ladder = ladder_json(d);
    let names: Vec<&str> = ladder["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    let games: u64 = ladder["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["games"].as_u64().unwrap())
        .sum();
    assert_eq!(games, 120, "every game counts for both bots");
    assert_eq!(row(&ladder, "random")["rating"], 0.0);
    assert!(
        row(&ladder, "alice")["rating"].as_f64().unwrap()
            > row(&ladder, "bob")["rating"].as_f64().unwrap(),
        "{ladder}"
    );
    // Every stored game replays to its recorded result through `judge`.
    for id in [1i64, 20, 40] {
        let Some(rec) = league.db.record(id).unwrap() else {
            continue;
        };
        if rec.forfeit.is_some() {
            continue;
        }
        let verdict = ok(&["judge", "tictactoe", &rec.moves.join(" ")]);
        let want = match rec.winner.map(|w| w.number()) {
            Some(1) => "A",
            Some(_) => "B",
            None => "Draw",
        };
        assert_eq!(verdict.trim(), want, "game {id}");
    }
    let csv = ok(&["league", "standings", d, "--csv"]);
    assert!(csv.starts_with("rank,name,version,anchor,rating"), "{csv}");

    // Bob's second version takes over; the first keeps its games.
    let bob2 = bot(t, "bob2", HEURISTIC);
    assert!(ok(&["league", "submit", d, "bob", bob2.to_str().unwrap()]).contains("version 2"));
    ok(&["league", "run", d, "--games", "12", "--jobs", "2"]);
    let ladder = ladder_json(d);
    assert_eq!(row(&ladder, "bob")["version"], 2);
    let bob1 = entries.iter().find(|e| e.name == "bob").unwrap().id;
    assert!(!league.db.games_of(bob1, 5).unwrap().is_empty());

    // The deadline.
    assert!(ok(&["league", "freeze", d]).contains("frozen"));
    assert!(ok(&["league", "submit", d, "frank", bob.to_str().unwrap()]).contains("late"));
    let out = ok(&["league", "final", d, "--games-per-pair", "2", "--jobs", "2"]);
    assert!(out.contains("alice"), "{out}");
    let final_games = std::fs::read_to_string(l.join("final/games.jsonl")).unwrap();
    assert_eq!(final_games.lines().count(), 4 * 3 / 2 * 2);
    assert!(l.join("final/report.html").is_file());
    let rubric = t.join("rubric.toml");
    std::fs::write(
        &rubric,
        "title = \"Tic-tac-toe league\"\n\
         [[item]]\nname = \"In the final\"\npoints = 10\nplayed = true\n\
         [[item]]\nname = \"Beats random\"\npoints = 20\nbeats = \"random\"\n\
         [[item]]\nname = \"Top 2\"\npoints = 5\nrank_at_most = 2\n",
    )
    .unwrap();
    let out_dir = t.join("export");
    ok(&[
        "league",
        "export",
        d,
        "--out",
        out_dir.to_str().unwrap(),
        "--rubric",
        rubric.to_str().unwrap(),
    ]);
    let grades = std::fs::read_to_string(out_dir.join("grades.csv")).unwrap();
    assert!(
        grades.starts_with("student,total,In the final,Beats random,Top 2"),
        "{grades}"
    );
    for student in ["alice", "bob", "carol", "dave", "erin", "frank"] {
        assert!(
            grades.contains(&format!("\n{student},")),
            "{student}: {grades}"
        );
    }
    let carol_line = grades.lines().find(|l| l.starts_with("carol,")).unwrap();
    assert!(carol_line.starts_with("carol,0,"), "{carol_line}");
    let alice: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("gradescope/alice/results.json")).unwrap(),
    )
    .unwrap();
    assert!(alice["score"].as_f64().unwrap() >= 30.0, "{alice}");
    assert_eq!(alice["tests"].as_array().unwrap().len(), 3);
    assert_eq!(alice["leaderboard"][0]["name"], "rank");
    // Every other grading system's file, from the same result.
    let pl: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("prairielearn/alice/results.json")).unwrap(),
    )
    .unwrap();
    let fraction = alice["score"].as_f64().unwrap() / 35.0;
    assert!(
        (pl["score"].as_f64().unwrap() - fraction).abs() < 1e-9,
        "{pl}"
    );
    let cg = std::fs::read_to_string(out_dir.join("codegrade/carol/score.txt")).unwrap();
    assert_eq!(cg.trim(), "0");
    let standings = std::fs::read_to_string(out_dir.join("standings.csv")).unwrap();
    assert_eq!(standings.lines().count(), 5);
}

/// `referee args...` in its own process group, so that the test can kill
/// it and every bot it started at once; its stdout is piped.
fn spawn_group(args: &[&str]) -> Group {
    Group::spawn(referee().args(args))
}

#[test]
fn a_killed_run_loses_nothing_and_a_second_run_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let l = tmp.path().join("league");
    let d = l.to_str().unwrap();
    init(&l);
    let a = bot(tmp.path(), "ann", HEURISTIC);
    ok(&["league", "submit", d, "ann", a.to_str().unwrap()]);
    let mut child = spawn_group(&["league", "run", d, "--jobs", "2"]);
    let league = League::open(&l).unwrap();
    let start = Instant::now();
    while league.db.game_count().unwrap() < 30 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no games after two minutes"
        );
        assert!(
            child.child.try_wait().unwrap().is_none(),
            "the run stopped early"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // A second run is refused, naming the first; the ladder reads meanwhile.
    let second = run(&["league", "run", d, "--games", "1"]);
    assert_eq!(second.status.code(), Some(2));
    let e = stderr(&second);
    assert!(e.contains(&format!("pid {}", child.child.id())), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    ok(&["league", "standings", d]);
    drop(child); // kill -9, bots and all
    let before = league.db.game_count().unwrap();
    let ladder_before = league.db.games("ladder", 0).unwrap().len();
    ok(&["league", "run", d, "--games", "10", "--jobs", "2"]);
    assert_eq!(
        league.db.games("ladder", 0).unwrap().len(),
        ladder_before + 10
    );
    assert_eq!(league.db.game_count().unwrap(), before + 10);
    // The stored games are whole records.
    let last = league.db.games("ladder", 0).unwrap().last().unwrap().id;
    assert!(league.db.record(last).unwrap().is_some());
}

#[test]
fn bad_input_gets_one_line_naming_what_and_where() {
    let tmp = tempfile::tempdir().unwrap();
    let l = tmp.path().join("league");
    let d = l.to_str().unwrap();
    init(&l);
    let bad = |args: &[&str], says: &str| {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
        let e = stderr(&o);
        assert!(e.contains(says), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    };
    let a = bot(tmp.path(), "a", FIRST_FREE);
    let a = a.to_str().unwrap();
    bad(
        &["league", "submit", d, "../../etc", a],
        "looks like a path",
    );
    bad(&["league", "submit", d, "random", a], "anchor's name");
    bad(&["league", "submit", d, "", a], "empty");
    bad(
        &["league", "submit", tmp.path().to_str().unwrap(), "x", a],
        "league.toml",
    );
    bad(&["league", "init", d, "--game", "uttt"], "not empty");
    // A symbolic link could carry a grader's file into the league.
    let linked = tmp.path().join("linked");
    std::fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", linked.join("bot.py")).unwrap();
    bad(
        &["league", "submit", d, "mallory", linked.to_str().unwrap()],
        "symbolic link",
    );
    // Settings: file and line.
    let settings = l.join("league.toml");
    let good = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(&settings, good.replace("degree = 4", "degree = 5")).unwrap();
    let line = good.lines().position(|x| x.starts_with("degree")).unwrap() + 1;
    bad(
        &["league", "standings", d],
        &format!("league.toml:{line}: degree: 5 must be even"),
    );
    std::fs::write(&settings, &good).unwrap();
    // A database that is not one.
    std::fs::write(
        l.join("league.db"),
        "garbage, not SQLite, long enough to matter",
    )
    .unwrap();
    for f in ["league.db-wal", "league.db-shm"] {
        let _ = std::fs::remove_file(l.join(f));
    }
    bad(&["league", "standings", d], "not a league database");
    bad(&["league", "final", d], "not a league database");
}

/// A GET over plain HTTP/1.1: status line and body.
fn get(addr: &str, path: &str) -> (String, String) {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.lines().next().unwrap_or("").to_string();
    let body = text.split_once("\r\n\r\n").map_or("", |x| x.1).to_string();
    (status, body)
}

#[test]
fn the_web_page_in_a_browser() {
    let tmp = tempfile::tempdir().unwrap();
    let l = tmp.path().join("league");
    let d = l.to_str().unwrap();
    init(&l);
    let a = bot(tmp.path(), "ann", HEURISTIC);
    ok(&["league", "submit", d, "ann", a.to_str().unwrap()]);
    let secret = tmp.path().join("ben");
    bot(
        tmp.path(),
        "ben",
        &format!("# SECRET-SOURCE-LINE\n{FIRST_FREE}"),
    );
    ok(&["league", "submit", d, "ben", secret.to_str().unwrap()]);
    ok(&["league", "run", d, "--games", "24", "--jobs", "2"]);
    let mut server = spawn_group(&["league", "serve", d, "--listen", "127.0.0.1:0"]);
    let addr = server.address().to_string();
    let (status, body) = get(&addr, "/");
    assert!(status.contains("200"), "{status}");
    assert!(body.contains("data-name=\"ann\""), "{body}");
    let (status, _) = get(&addr, "/student/nobody");
    assert!(status.contains("404"), "{status}");
    let (_, json) = get(&addr, "/api/ladder");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["rows"].as_array().unwrap().len(), 4);
    // No submitted source is served, whatever the address.
    for path in [
        "/submissions",
        "/../league.toml",
        "/student/ben/../../submissions",
        "/league.db",
    ] {
        let (_, body) = get(&addr, path);
        assert!(!body.contains("SECRET-SOURCE-LINE"), "{path}");
    }
    let (_, league_page) = get(&addr, "/league");
    assert!(league_page.contains("Next pairings"), "{league_page}");

    let Some(browser) = chromium() else {
        crate::common::skipped(
            "the browser half of the_web_page_in_a_browser: /usr/bin/chromium is not \
             installed (apt-get install -y chromium; .ci/run installs it)",
        );
        return;
    };
    let profile = tmp.path().join("profile");
    let dom = |url: &str| {
        let out = run_chromium(&browser, &profile, &["--dump-dom"], url);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let ladder = dom(&format!("http://{addr}/"));
    for name in ["ann", "ben", "random", "greedy"] {
        assert!(
            ladder.contains(&format!("data-name=\"{name}\"")),
            "{name}: {ladder}"
        );
    }
    let student = dom(&format!("http://{addr}/student/ann"));
    assert!(student.contains("id=\"versions\""), "{student}");
    assert!(student.contains("admitted"), "{student}");
    let id: String = student
        .split("href=\"/game/")
        .nth(1)
        .and_then(|x| x.split('"').next())
        .expect("a replay link")
        .to_string();
    let replay = dom(&format!("http://{addr}/game/{id}#selftest={id}"));
    let start = replay
        .find("<pre id=\"selftest\">")
        .unwrap_or_else(|| panic!("no self-test in the replay page:\n{replay}"))
        + "<pre id=\"selftest\">".len();
    let end = start + replay[start..].find("</pre>").unwrap();
    let text = replay[start..end]
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let league = League::open(&l).unwrap();
    let rec = league.db.record(id.parse().unwrap()).unwrap().unwrap();
    let positions = v["games"][0]["positions"].as_array().unwrap();
    assert_eq!(positions.len(), rec.moves.len() + 1, "{v}");
    assert_eq!(
        positions.last().unwrap().as_str().unwrap(),
        rec.final_position
    );
}

#[test]
fn an_inbox_folder_becomes_versions_and_jobs_do_not_change_the_games() {
    let tmp = tempfile::tempdir().unwrap();
    let inbox = tmp.path().join("inbox");
    bot(&inbox, "zoe", HEURISTIC);
    bot(&inbox, "yan", FIRST_FREE);
    // An LMS export that is still being copied would be newer than this.
    std::thread::sleep(Duration::from_millis(2500));
    let mut standings = Vec::new();
    for jobs in ["1", "2"] {
        let l = tmp.path().join(format!("league-{jobs}"));
        let d = l.to_str().unwrap();
        init(&l);
        let out = ok(&[
            "league",
            "run",
            d,
            "--games",
            "16",
            "--jobs",
            jobs,
            "--inbox",
            inbox.to_str().unwrap(),
        ]);
        assert!(out.contains("2 versions admitted"), "{out}");
        let league = League::open(&l).unwrap();
        let games: Vec<(Vec<String>, Option<u8>)> = league
            .db
            .games("ladder", 0)
            .unwrap()
            .iter()
            .map(|g| {
                let r = league.db.record(g.id).unwrap().unwrap();
                (r.moves, r.winner.map(|w| w.number()))
            })
            .collect();
        assert_eq!(games.len(), 16);
        let mut ladder = ladder_json(d);
        for r in ladder["rows"].as_array_mut().unwrap() {
            r["last_submission"] = serde_json::Value::Null;
        }
        standings.push((games, ladder));
    }
    assert_eq!(standings[0], standings[1], "--jobs changed the games");
}

#[test]
fn a_codingame_bot_plays_a_league_from_the_empty_board_only() {
    let tmp = tempfile::tempdir().unwrap();
    let starter = root().join("bots/codingame/starter.py");
    let cg = tmp.path().join("cg");
    std::fs::create_dir_all(&cg).unwrap();
    std::fs::copy(&starter, cg.join("starter.py")).unwrap();
    std::fs::write(
        cg.join("bot.toml"),
        "name = \"cg\"\ncommand = \"python3 starter.py\"\nprotocol = \"codingame\"\n",
    )
    .unwrap();
    // A league of whole games admits it, and it plays.
    let l = tmp.path().join("plain");
    let d = l.to_str().unwrap();
    init(&l);
    ok(&["league", "submit", d, "cg", cg.to_str().unwrap()]);
    let out = ok(&["league", "run", d, "--games", "4", "--jobs", "2"]);
    assert!(out.contains("1 versions admitted"), "{out}");
    // One that starts from random plies cannot: it is told why.
    let l = tmp.path().join("plies");
    let d = l.to_str().unwrap();
    init(&l);
    let settings = l.join("league.toml");
    let text = std::fs::read_to_string(&settings).unwrap();
    std::fs::write(
        &settings,
        text.replace("random_plies = 0", "random_plies = 2"),
    )
    .unwrap();
    ok(&["league", "submit", d, "cg", cg.to_str().unwrap()]);
    let out = ok(&["league", "run", d, "--games", "2", "--jobs", "2"]);
    assert!(out.contains("1 rejected"), "{out}");
    let league = League::open(&l).unwrap();
    let e = league
        .db
        .entries()
        .unwrap()
        .into_iter()
        .find(|e| e.name == "cg")
        .unwrap();
    assert!(
        e.log.contains("CodinGame") && e.log.contains("random_plies"),
        "{}",
        e.log
    );
}

#[test]
fn a_uttt_league_s_standings_state_the_rule_and_the_games_it_decided() {
    let tmp = tempfile::tempdir().unwrap();
    let l = tmp.path().join("uttt");
    let d = l.to_str().unwrap();
    ok(&[
        "league",
        "init",
        d,
        "--game",
        "uttt",
        "--anchor",
        "random",
        "--anchor",
        "uct:iters=1",
        "--seed",
        "3",
    ]);
    let settings = l.join("league.toml");
    let text = std::fs::read_to_string(&settings).unwrap();
    // A UTTT league's file holds UTTT's rule and no Notakto board count.
    assert!(!text.lines().any(|l| l.starts_with("boards")), "{text}");
    assert!(text.contains("rules = \"standard\""), "{text}");
    std::fs::write(
        &settings,
        text.replace("rules = \"standard\"", "rules = \"codingame\""),
    )
    .unwrap();
    ok(&["league", "run", d, "--games", "30", "--jobs", "2"]);
    let ladder = ladder_json(d);
    assert_eq!(ladder["rules"], "codingame", "{ladder}");
    let decided = ladder["decided_by_rule"].as_u64().unwrap();
    let games = ladder["games"].as_u64().unwrap();
    assert!(games >= 30 && decided <= games, "{ladder}");
    // The count is the games that filled every board without a line.
    let league = League::open(&l).unwrap();
    let rows = league.db.games("ladder", 0).unwrap();
    let by_hand = rows
        .iter()
        .filter(|g| {
            let rec = league.db.record(g.id).unwrap().unwrap();
            rec.decided_by_rule().is_some()
        })
        .count() as u64;
    assert_eq!(decided, by_hand);
    assert!(decided > 0, "30 random games fill a board without a line");
    let text = ok(&["league", "standings", d]);
    assert!(
        text.contains(&format!(
            "rule: codingame, {decided} of {games} games decided on boards won"
        )),
        "{text}"
    );
}
