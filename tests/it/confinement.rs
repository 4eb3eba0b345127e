//! Trust wherever graders run (issue 62), on this machine: nothing a
//! student writes widens what their bot can reach (every route, as a real
//! hostile submission against a real classmate, in `grade-all`, the league
//! and the Gradescope script), a bot's time is its own (frozen while its
//! opponent is on move), its memory is capped over all its processes, and
//! each running bot is a user of its own. `containers.rs` runs the same
//! guarantees inside Docker containers like Gradescope's. The tests that
//! load the machine (60 busy loops, 4.8 GB) are in the slow set, run one at
//! a time: beside other tests they would starve those tests' bots.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use referee::bot::external::ExternalBot;
use referee::bot::manifest::{ExternalSpec, SandboxMode};
use referee::bot::sandbox;
use referee::bot::{BuiltinSpec, TimeControl};
use referee::game::TicTacToe;
use referee::play::record::GameRecord;
use referee::play::referee::{play_game, GameSetup};

use crate::common::{root, run, stderr, stdout};

/// Whether this machine gives every guarantee (else the test says what it
/// skips).
fn full_sandbox() -> bool {
    let missing = sandbox::missing(sandbox::support());
    if !missing.is_empty() {
        crate::common::skipped(&format!("confinement test: {}", missing.join("; ")));
    }
    missing.is_empty()
}

fn write_exec(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The classmate: alice's honest, perfect Notakto bot, as `bot.py` and as
/// an executable `bot` beside it.
fn alice(class: &Path) -> PathBuf {
    let dir = class.join("alice");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/grade/notakto_bot.py"),
        dir.join("bot.py"),
    )
    .unwrap();
    write_exec(
        &dir.join("bot"),
        "#!/bin/sh\nexec python3 \"$(dirname \"$0\")/bot.py\"\n",
    );
    dir
}

/// A hostile student `name` whose folder holds a losing bot (`lose.py`)
/// and whatever `build` adds: a route to alice's bot.
fn hostile(class: &Path, name: &str, build: impl FnOnce(&Path)) -> PathBuf {
    let dir = class.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("lose.py"),
        "import sys\nfor l in sys.stdin:\n    w = l.split()\n    if w and w[0] == 'turn':\n        \
         print('0 0', flush=True)\n",
    )
    .unwrap();
    build(&dir);
    dir
}

/// Every route from a submission to a classmate's program that testers
/// found (issue 62), with the word its refusal names.
fn routes(class: &Path) -> Vec<(&'static str, &'static str)> {
    let a = class.join("alice");
    let a = a.to_str().unwrap().to_string();
    let c = class.to_str().unwrap().to_string();
    let manifest = |dir: &Path, body: &str| {
        std::fs::write(dir.join("bot.toml"), format!("name = \"x\"\n{body}\n")).unwrap();
    };
    hostile(class, "eve-path", |d| {
        manifest(
            d,
            &format!("command = \"bot\"\n[env]\nPATH = \"{a}:{c}:/usr/bin:/bin\""),
        )
    });
    hostile(class, "eve-root-path", |d| {
        manifest(d, "command = \"bot\"\n[env]\nPATH = \"/usr/bin:/bin:/\"")
    });
    hostile(class, "eve-absolute", |d| {
        manifest(d, &format!("command = [\"{a}/bot\"]"))
    });
    hostile(class, "eve-interpreter", |d| {
        manifest(d, &format!("command = [\"python3\", \"{a}/bot.py\"]"))
    });
    hostile(class, "eve-flag", |d| {
        manifest(
            d,
            &format!("command = [\"python3\", \"-X\", \"pycache_prefix={a}\", \"lose.py\"]"),
        )
    });
    hostile(class, "eve-link", |d| {
        std::os::unix::fs::symlink("../alice/bot", d.join("run")).unwrap();
        manifest(d, "command = [\"./run\"]");
    });
    hostile(class, "eve-bare-link", |d| {
        std::fs::remove_file(d.join("lose.py")).unwrap();
        std::os::unix::fs::symlink(format!("{a}/bot.py"), d.join("bot.py")).unwrap();
    });
    hostile(class, "eve-deep-link", |d| {
        std::fs::create_dir_all(d.join("lib")).unwrap();
        std::os::unix::fs::symlink("../../alice", d.join("lib/friend")).unwrap();
        manifest(d, "command = \"python3 lose.py\"");
    });
    hostile(class, "eve-cwd", |d| {
        manifest(d, "command = \"python3 bot.py\"\ncwd = \"../alice\"")
    });
    vec![
        ("eve-path", "env.PATH"),
        ("eve-root-path", "env.PATH"),
        ("eve-absolute", "absolute path"),
        ("eve-interpreter", "absolute path"),
        ("eve-flag", "absolute path"),
        ("eve-link", "the link 'run' points outside"),
        ("eve-bare-link", "the link 'bot.py' points outside"),
        ("eve-deep-link", "the link 'lib/friend' points outside"),
        ("eve-cwd", "`cwd`"),
    ]
}

#[test]
fn no_route_from_a_submission_reaches_a_classmate_in_grade_all() {
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    alice(&class);
    let routes = routes(&class);
    let out = tmp.path().join("book");
    let o = run(&[
        "grade-all",
        "notakto",
        "--boards",
        "1",
        "--games",
        "2",
        "--sandbox=best-effort",
        class.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let book = std::fs::read_to_string(out.join("gradebook.csv")).unwrap();
    let row = |name: &str| {
        book.lines()
            .find(|l| l.starts_with(&format!("{name},")))
            .unwrap_or_else(|| panic!("no row for {name}: {book}"))
            .to_string()
    };
    // The control: alice's own bot passes, so a route that worked would
    // have given eve alice's grade.
    assert!(row("alice").starts_with("alice,pass,"), "{book}");
    for (name, why) in routes {
        let r = row(name);
        assert!(r.starts_with(&format!("{name},error,")), "{name}: {r}");
        assert!(r.contains(",0,"), "{name}: {r}");
        assert!(r.contains(why), "{name} should say {why:?}: {r}");
        let page = std::fs::read_to_string(out.join(format!("feedback/{name}.md"))).unwrap();
        assert!(page.contains(why), "{name}: {page}");
    }
}

#[test]
fn no_route_from_a_submission_reaches_a_classmate_in_the_league() {
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    alice(&class);
    let routes = routes(&class);
    let league = tmp.path().join("league");
    let l = league.to_str().unwrap();
    let o = run(&[
        "league", "init", l, "--game", "notakto", "--anchor", "random",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for (name, why) in routes {
        let dir = class.join(name);
        let o = run(&["league", "submit", l, name, dir.to_str().unwrap()]);
        let said = format!("{}{}", stdout(&o), stderr(&o));
        assert!(
            said.contains("rejected") || o.status.code() != Some(0),
            "{name}: {said}"
        );
        // The link routes are refused as links at submission, the others
        // with the manifest's key.
        let expected = if why.starts_with("the link") {
            "link"
        } else {
            why
        };
        assert!(
            said.contains(expected),
            "{name} should say {expected:?}: {said}"
        );
    }
    let o = run(&["league", "standings", l, "--json"]);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let admitted = j["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["name"].as_str().is_some_and(|n| n.starts_with("eve")))
        .count();
    assert_eq!(admitted, 0, "{j}");
}

/// Runs the shipped Gradescope script on the fake tree `ag`.
fn run_autograder(ag: &Path) -> String {
    let o = std::process::Command::new("bash")
        .arg(root().join("gradescope/run_autograder"))
        .env("AUTOGRADER_ROOT", ag)
        .env("REFEREE", env!("CARGO_BIN_EXE_referee"))
        .env("RUBRIC", root().join("rubrics/notakto-assignment.toml"))
        .env("GAMES", "2")
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::read_to_string(ag.join("results/results.json")).unwrap()
}

/// Writes a route into the submission folder, given the source folder.
type Route = dyn Fn(&Path, &Path);

#[test]
fn no_route_from_a_submission_reaches_the_graders_files_in_the_gradescope_script() {
    // Gradescope's tree: the grader's reference solution in source/, which
    // a route would run as the student's bot (it wins: full marks).
    let tmp = tempfile::tempdir().unwrap();
    let solution = "/autograder-solution";
    let cases: Vec<(&str, Box<Route>, &str)> = vec![
        (
            "PATH",
            Box::new(|sub: &Path, src: &Path| {
                std::fs::write(
                    sub.join("bot.toml"),
                    format!(
                        "name = \"x\"\ncommand = \"solution\"\n[env]\nPATH = \"{}:/usr/bin:/bin\"\n",
                        src.display()
                    ),
                )
                .unwrap();
            }),
            "env.PATH",
        ),
        (
            "absolute",
            Box::new(|sub: &Path, src: &Path| {
                std::fs::write(
                    sub.join("bot.toml"),
                    format!(
                        "name = \"x\"\ncommand = [\"python3\", \"{}/solution.py\"]\n",
                        src.display()
                    ),
                )
                .unwrap();
            }),
            "absolute path",
        ),
        (
            "link",
            Box::new(|sub: &Path, _src: &Path| {
                std::os::unix::fs::symlink("../source/solution.py", sub.join("main.py")).unwrap();
            }),
            "points outside",
        ),
        (
            "cwd",
            Box::new(|sub: &Path, _src: &Path| {
                std::fs::write(
                    sub.join("bot.toml"),
                    "name = \"x\"\ncommand = \"python3 solution.py\"\ncwd = \"../source\"\n",
                )
                .unwrap();
            }),
            "`cwd`",
        ),
    ];
    for (what, build, why) in cases {
        let ag = tmp.path().join(what);
        let (sub, src) = (ag.join("submission"), ag.join("source"));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir_all(&src).unwrap();
        let mut sol =
            std::fs::read_to_string(root().join("tests/fixtures/grade/notakto_bot.py")).unwrap();
        sol.push_str(&format!("\n# {solution}\n"));
        std::fs::write(src.join("solution.py"), &sol).unwrap();
        write_exec(
            &src.join("solution"),
            &format!("#!/bin/sh\nexec python3 {}/solution.py\n", src.display()),
        );
        build(&sub, &src);
        let results = run_autograder(&ag);
        let v: serde_json::Value = serde_json::from_str(&results).unwrap();
        assert_eq!(v["score"].as_f64(), Some(0.0), "{what}: {results}");
        assert!(
            results.contains(why),
            "{what} should say {why:?}: {results}"
        );
        assert!(!results.contains(solution), "{what}: {results}");
    }
}

// ---- a bot's time is its own ----

/// A Python bot that spends `cpu_ms` of CPU time on each move, then plays
/// the first empty cell (tic-tac-toe).
fn thinker(dir: &Path, cpu_ms: u64) -> String {
    let path = dir.join("thinker.py");
    std::fs::write(
        &path,
        format!(
            "import sys, time\n\
             for line in sys.stdin:\n\
             \x20   w = line.split()\n\
             \x20   if w and w[0] == 'turn':\n\
             \x20       t = time.process_time()\n\
             \x20       while time.process_time() - t < {cpu} / 1000:\n\
             \x20           pass\n\
             \x20       print(w[1].index('.'), flush=True)\n",
            cpu = cpu_ms
        ),
    )
    .unwrap();
    format!("python3 {}", path.display())
}

/// A Python bot that starts `n` busy loops as soon as it runs, then plays
/// the first empty cell at once.
fn hog(dir: &Path, n: usize) -> String {
    let path = dir.join("hog.py");
    std::fs::write(
        &path,
        format!(
            "import os, sys\n\
             for _ in range({n}):\n\
             \x20   if os.fork() == 0:\n\
             \x20       while True:\n\
             \x20           pass\n\
             for line in sys.stdin:\n\
             \x20   w = line.split()\n\
             \x20   if w and w[0] == 'turn':\n\
             \x20       print(w[1].index('.'), flush=True)\n"
        ),
    )
    .unwrap();
    format!("python3 {}", path.display())
}

/// Plays `games` tic-tac-toe games of `a` against `b` on one worker (both
/// bots on one CPU) with 3 s a move and returns the run folder's records.
fn match_records(
    a: &str,
    b: &str,
    games: &str,
    sandbox: &str,
    out: &Path,
) -> Vec<serde_json::Value> {
    let o = run(&[
        "match",
        "tictactoe",
        a,
        b,
        "--games",
        games,
        "--jobs",
        "1",
        "--time-ms",
        "3000",
        sandbox,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    std::fs::read_to_string(out.join("games.jsonl"))
        .unwrap_or_else(|_| panic!("{}{}", stdout(&o), stderr(&o)))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The records in which `bot` forfeited on time.
fn time_forfeits(records: &[serde_json::Value]) -> usize {
    records
        .iter()
        .filter(|r| r["forfeit"]["reason"].as_str() == Some("timeout"))
        .count()
}

#[test]
#[ignore = "slow and heavy: 60 busy loops or 4.8 GB (cargo test --release -- --ignored --test-threads 1)"]
fn a_bot_that_forks_busy_loops_cannot_make_its_opponent_lose_on_time() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (think, hog) = (thinker(tmp.path(), 300), hog(tmp.path(), 60));
    // The control: without the sandbox the hog's 60 loops share the one
    // CPU with the thinker, whose 300 ms of CPU take over 3 s.
    let free = match_records(&think, &hog, "2", "--no-sandbox", &tmp.path().join("free"));
    assert!(
        time_forfeits(&free) >= 1,
        "the hog slowed nothing: {free:?}"
    );
    // Sandboxed, the hog is frozen while the thinker is on move.
    let boxed = match_records(&think, &hog, "10", "--sandbox", &tmp.path().join("boxed"));
    assert_eq!(boxed.len(), 10);
    assert_eq!(time_forfeits(&boxed), 0, "{boxed:?}");
}

// ---- memory for all a bot's processes together ----

/// A bot whose first turn starts 7 children; it and each child hold
/// 600 MB (8 x 600 MB, over a 4 GiB cap), and after holding it a second
/// it answers ESCAPED (a forfeit that shows it) if all of them still
/// live; else it plays.
fn memory_hog(dir: &Path) -> PathBuf {
    let d = dir.join("memhog");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("bot.py"),
        r#"import os, sys, time
MB = 600
def hold():
    return b"x" * (MB << 20)
first = True
for line in sys.stdin:
    w = line.split()
    if not w or w[0] != "turn":
        continue
    if first:
        first = False
        r, wr = os.pipe()
        kids = []
        for _ in range(7):
            pid = os.fork()
            if pid == 0:
                mine = hold()
                os.write(wr, b"k")
                time.sleep(30)
                os._exit(0)
            kids.append(pid)
        mine = hold()
        got = 0
        end = time.time() + 20
        while got < 7 and time.time() < end:
            got += len(os.read(r, 16))
        time.sleep(1)
        alive = sum(1 for k in kids if os.waitpid(k, os.WNOHANG) == (0, 0))
        for k in kids:
            try:
                os.kill(k, 9)
            except OSError:
                pass
        del mine
        if got == 7 and alive == 7:
            print("ESCAPED-%dMB" % (8 * MB), flush=True)
            continue
    print(w[1].index("."), flush=True)
"#,
    )
    .unwrap();
    d
}

/// Plays the bot in `dir` (`python3 bot.py`, its manifest folder) as
/// player 1 against `random` in sandbox `mode`, with generous time.
fn play(dir: &Path, mode: SandboxMode) -> GameRecord {
    let mut spec = ExternalSpec::from_command_line("python3 bot.py").unwrap();
    spec.cwd = Some(dir.to_path_buf());
    spec.manifest = Some(dir.join("bot.toml"));
    spec.sandbox = mode;
    let time = TimeControl::new(60_000, 20_000);
    let mut me = ExternalBot::<TicTacToe>::new(spec, time, 1);
    let mut other = BuiltinSpec::parse("random").make::<TicTacToe>(1).unwrap();
    let setup = GameSetup {
        time,
        ..GameSetup::new(0, 1, TicTacToe::new())
    };
    play_game(
        &setup,
        [&mut me, &mut other],
        ["memhog".into(), "random".into()],
    )
}

#[test]
#[ignore = "slow and heavy: 60 busy loops or 4.8 GB (cargo test --release -- --ignored --test-threads 1)"]
fn memory_is_capped_for_all_of_a_bots_processes_together() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = memory_hog(tmp.path());
    // The control: outside the sandbox each process is under its own 4 GiB
    // address-space limit, and the 8 of them hold 4.8 GB together.
    let free = play(&dir, SandboxMode::Off);
    let line = |r: &GameRecord| {
        r.forfeit
            .as_ref()
            .and_then(|f| f.line.clone())
            .unwrap_or_default()
    };
    assert_eq!(line(&free), "ESCAPED-4800MB", "{free:?}");
    // Sandboxed, the 8 of them never hold it together: the cgroup or the
    // watchdog kills what goes over, and says so when the bot dies of it.
    let boxed = play(&dir, SandboxMode::On);
    assert!(!line(&boxed).contains("ESCAPED"), "{boxed:?}");
    if let Some(f) = &boxed.forfeit {
        assert!(
            f.exit_status
                .as_deref()
                .is_some_and(|s| s.contains("memory")),
            "{f:?}"
        );
    }
}

// ---- per-bot users ----

#[test]
fn concurrently_running_bots_are_users_of_their_own_from_the_range() {
    if !full_sandbox() {
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        crate::common::skipped("per-bot users: the tests do not run as root");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // Each first mover sleeps, then answers with its user and group ids
    // (a forfeit that shows them); with 2 jobs the two games' bots run at
    // once.
    let bot = tmp.path().join("who.py");
    std::fs::write(
        &bot,
        "import os, sys, time\nfor l in sys.stdin:\n    if l.startswith('turn'):\n        \
         time.sleep(1)\n        print('uid%d-gid%d-groups%s' % (os.getuid(), os.getgid(), \
         ','.join(map(str, os.getgroups()))), flush=True)\n",
    )
    .unwrap();
    let cmd = format!("python3 {}", bot.display());
    let out = tmp.path().join("run");
    let o = run(&[
        "match",
        "tictactoe",
        &cmd,
        &cmd,
        "--games",
        "2",
        "--jobs",
        "2",
        "--sandbox",
        "--sandbox-uids",
        "62300-62399",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let text = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    let mut ids = Vec::new();
    for l in text.lines() {
        let r: serde_json::Value = serde_json::from_str(l).unwrap();
        let line = r["forfeit"]["line"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let uid: u32 = line
            .strip_prefix("uid")
            .and_then(|s| s.split('-').next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{r}"));
        assert!((62300..=62399).contains(&uid), "{line}");
        assert!(line.contains(&format!("-gid{uid}-groups")), "{line}");
        assert!(
            line.ends_with("-groups") || line.ends_with(&format!("-groups{uid}")),
            "{line}"
        );
        ids.push(uid);
    }
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1], "two bots at once shared a user");
    // A bad range is a one-line error before any game.
    let o = run(&[
        "match",
        "tictactoe",
        "random",
        "random",
        "--sandbox-uids",
        "0-10",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("root's id 0"), "{}", stderr(&o));
    let o = crate::common::referee()
        .args(["sandbox"])
        .env("REFEREE_SANDBOX_UIDS", "nonsense")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("REFEREE_SANDBOX_UIDS"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_sandbox_command_names_each_guarantee_and_what_gives_it() {
    let o = run(&["sandbox"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    for g in sandbox::Guarantee::ALL {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(g.name()))
            .unwrap_or_else(|| panic!("{g:?} not shown: {text}"));
        let layers = g.layers(sandbox::support());
        if layers.is_empty() {
            assert!(line.contains("NOT GIVEN"), "{line}");
        } else {
            assert!(line.contains(&layers[0]), "{line}");
        }
    }
}

// ---- as a user ----

/// Runs referee with `args` as user and group 1000 (no root), with a PATH
/// of the system's programs only.
fn run_as_user(args: &[&str], cwd: &Path) -> std::process::Output {
    std::process::Command::new("setpriv")
        .args(["--reuid=1000", "--regid=1000", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_referee"))
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", cwd)
        .env("TMPDIR", "/tmp")
        .stdin(Stdio::null())
        .output()
        .expect("setpriv runs")
}

/// Whether the tests can run referee as a user (root, with setpriv), and
/// the sandbox gives every guarantee to that user.
fn user_sandbox(dir: &Path) -> bool {
    let o = std::process::Command::new("setpriv")
        .arg("--version")
        .output();
    if !o.is_ok_and(|o| o.status.success()) {
        crate::common::skipped("as a user: no setpriv (util-linux)");
        return false;
    }
    let o = run_as_user(&["sandbox"], dir);
    let ok = stdout(&o).starts_with("the sandbox gives every guarantee");
    if !ok {
        crate::common::skipped(&format!("as a user: {}", stdout(&o)));
    }
    ok
}

#[test]
#[ignore = "slow and heavy: 60 busy loops or 4.8 GB (cargo test --release -- --ignored --test-threads 1)"]
fn as_a_user_classmates_stay_apart_time_and_memory_are_held_and_nothing_is_left() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path();
    std::fs::set_permissions(work, std::fs::Permissions::from_mode(0o755)).unwrap();
    if !nix::unistd::geteuid().is_root() {
        crate::common::skipped("as a user: the tests do not run as root");
        return;
    }
    let class = work.join("class");
    let alice = class.join("alice");
    std::fs::create_dir_all(&alice).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/grade/notakto_bot.py"),
        alice.join("bot.py"),
    )
    .unwrap();
    let eve = class.join("eve");
    std::fs::create_dir_all(&eve).unwrap();
    std::fs::write(
        eve.join("bot.py"),
        format!(
            "import os, sys, time\n\
             if os.fork() == 0:\n\
             \x20   os.setsid()\n\
             \x20   if os.fork() == 0:\n\
             \x20       time.sleep(120)\n\
             \x20   os._exit(0)\n\
             got = []\n\
             for p in [{a:?}, {c:?}]:\n\
             \x20   try:\n\
             \x20       os.listdir(p) if os.path.isdir(p) else open(p).read()\n\
             \x20       got.append('ok')\n\
             \x20   except OSError:\n\
             \x20       got.append('denied')\n\
             for line in sys.stdin:\n\
             \x20   if line.startswith('turn'):\n\
             \x20       print('read:' + ','.join(got), flush=True)\n",
            a = alice.join("bot.py").display().to_string(),
            c = class.display().to_string()
        ),
    )
    .unwrap();
    let think = thinker(work, 300);
    let hogbot = hog(work, 60);
    let mem = memory_hog(work);
    let chown = std::process::Command::new("chown")
        .args(["-R", "1000:1000"])
        .arg(work)
        .status()
        .unwrap();
    assert!(chown.success());
    if !user_sandbox(work) {
        return;
    }
    let w = |p: &Path| p.to_str().unwrap().to_string();
    // Grading: eve reads nothing of alice's, alice passes.
    let o = run_as_user(
        &[
            "grade-all",
            "notakto",
            "--boards",
            "1",
            "--games",
            "2",
            &w(&class),
            "--out",
            &w(&work.join("book")),
        ],
        work,
    );
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    let book = std::fs::read_to_string(work.join("book/gradebook.csv"))
        .unwrap_or_else(|_| panic!("{}{}", stdout(&o), stderr(&o)));
    assert!(book.contains("alice,pass"), "{book}");
    let page = std::fs::read_to_string(work.join("book/feedback/eve.md")).unwrap();
    assert!(page.contains("read:denied,denied"), "{page}");
    // Time: the hog is frozen while the thinker is on move.
    let o = run_as_user(
        &[
            "match",
            "tictactoe",
            &think,
            &hogbot,
            "--games",
            "4",
            "--jobs",
            "1",
            "--time-ms",
            "3000",
            "--sandbox",
            "--out",
            &w(&work.join("cpu")),
        ],
        work,
    );
    let games = std::fs::read_to_string(work.join("cpu/games.jsonl"))
        .unwrap_or_else(|_| panic!("{}", stderr(&o)));
    assert_eq!(games.lines().count(), 4);
    for g in games.lines() {
        assert!(g.contains("\"termination\":\"normal\""), "{g}");
    }
    // Memory: 8 processes of 600 MB are not held together.
    let o = run_as_user(
        &[
            "match",
            "tictactoe",
            &format!("python3 {}", mem.join("bot.py").display()),
            "random",
            "--games",
            "2",
            "--jobs",
            "1",
            "--time-ms",
            "60000",
            "--sandbox",
            "--out",
            &w(&work.join("mem")),
        ],
        work,
    );
    let games = std::fs::read_to_string(work.join("mem/games.jsonl"))
        .unwrap_or_else(|_| panic!("{}", stderr(&o)));
    for g in games.lines() {
        let r: serde_json::Value = serde_json::from_str(g).unwrap();
        let f = &r["forfeit"];
        assert!(
            f.is_null()
                || f["exit_status"]
                    .as_str()
                    .is_some_and(|s| s.contains("memory")),
            "{g}"
        );
    }
    // Nothing of the bots is left: no process runs from this folder.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&w(work)) && c.starts_with("python3"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
