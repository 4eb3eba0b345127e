//! Grades a hostile class cannot forge (issue 52, section 1): a student's
//! manifest cannot loosen its confinement, a bot run by root has no
//! privilege of root, only stdio crosses into a bot, its temporary folder
//! has a size cap, what it may not read cannot even be `stat`ed, nothing of
//! a bot outlives a killed referee, and the Gradescope script's score
//! cannot be rewritten by a daemon.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use referee::bot::external::ExternalBot;
use referee::bot::manifest::{ExternalSpec, SandboxMode};
use referee::bot::sandbox;
use referee::bot::{BuiltinSpec, TimeControl};
use referee::game::TicTacToe;
use referee::play::record::{GameRecord, Termination};
use referee::play::referee::{play_game, GameSetup};

use crate::common::{referee, root, run, stderr, stdout};

/// Whether this machine gives every guarantee (else the test says what it
/// skips, on stderr).
fn full_sandbox() -> bool {
    let missing = sandbox::missing(sandbox::support());
    if !missing.is_empty() {
        crate::common::skipped(&format!("sandbox trust test: {}", missing.join("; ")));
    }
    missing.is_empty()
}

/// Whether the tests run as root (CI does); those about root's files say
/// what they skip otherwise.
fn as_root(what: &str) -> bool {
    let root = nix::unistd::geteuid().is_root();
    if !root {
        crate::common::skipped(&format!("{what}: the tests do not run as root"));
    }
    root
}

/// A folder holding the hostile bot as `bot.py`.
fn hostile(class: &Path, name: &str) -> PathBuf {
    let dir = class.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/hostile_bot.py"),
        dir.join("bot.py"),
    )
    .unwrap();
    dir
}

/// Plays the hostile bot in `dir` (player 1) against `random`, trying
/// `attack` in sandbox `mode`, with a temporary-folder cap of `tmp_mb`.
fn play(dir: &Path, attack: &[&str], mode: SandboxMode, tmp_mb: Option<u64>) -> GameRecord {
    let mut spec =
        ExternalSpec::from_command_line(&format!("python3 bot.py {}", attack.join(" "))).unwrap();
    spec.cwd = Some(dir.to_path_buf());
    spec.manifest = Some(dir.join("bot.toml"));
    spec.sandbox = mode;
    spec.limits.tmp_mb = tmp_mb;
    let time = TimeControl::new(20_000, 20_000);
    let mut me = ExternalBot::<TicTacToe>::new(spec, time, 1);
    let mut other = BuiltinSpec::parse("random").make::<TicTacToe>(1).unwrap();
    let setup = GameSetup {
        time,
        ..GameSetup::new(0, 1, TicTacToe::new())
    };
    play_game(
        &setup,
        [&mut me, &mut other],
        ["hostile".into(), "random".into()],
    )
}

/// The attack worked without the sandbox (so the test can fail) and was
/// refused inside it, the game going on to its end.
fn contained(dir: &Path, attack: &[&str]) -> GameRecord {
    let free = play(dir, attack, SandboxMode::Off, None);
    let f = free
        .forfeit
        .as_ref()
        .unwrap_or_else(|| panic!("{attack:?} did not work even without the sandbox: {free:?}"));
    assert!(f.stderr_tail.contains("ESCAPED"), "{f:?}");
    refused(dir, attack, None)
}

/// The attack was refused in the sandbox and the game went on.
fn refused(dir: &Path, attack: &[&str], tmp_mb: Option<u64>) -> GameRecord {
    let boxed = play(dir, attack, SandboxMode::On, tmp_mb);
    assert_eq!(
        boxed.termination,
        Termination::Normal,
        "{attack:?} in the sandbox: {:?}",
        boxed.forfeit
    );
    boxed
}

// ---- the sandboxed process has no privilege of root ----

#[test]
fn run_by_root_a_sandboxed_bot_reads_no_root_only_file() {
    if !full_sandbox() || !as_root("root-only files") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let alice = hostile(tmp.path(), "alice");
    // /etc is readable (runtimes need it): only the user keeps these shut.
    contained(&alice, &["read", "/etc/shadow"]);
    // Root's home, listed and read (the bot's own HOME is /root here).
    contained(&alice, &["read", "/root/.bashrc"]);
    // A root-only file even where the bot may read: its own folder.
    let key = alice.join("ssh_host_ed25519_key");
    std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    contained(&alice, &["read", key.to_str().unwrap()]);
    // The machine's own SSH host keys and other users' homes, where there
    // are any.
    let mut others: Vec<PathBuf> = std::fs::read_dir("/etc/ssh")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with("_key"))
        .collect();
    others.extend(
        std::fs::read_dir("/home")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path()),
    );
    if others.is_empty() {
        eprintln!("no SSH host key nor /home folder on this machine: those not tried");
    }
    for p in others {
        let attack = if p.is_dir() { "list" } else { "read" };
        refused(&alice, &[attack, p.to_str().unwrap()], None);
    }
}

// ---- only stdin, stdout and stderr cross into a bot ----

/// Plays `python3 hostile_bot.py fd N` through the real referee, started
/// with a file on descriptor 7 and a socket on 8 (as `exec 7<file` in a
/// shell would leave them), and returns how many games were forfeited.
fn forfeits_with_fds_7_and_8(tmp: &Path, fd: &str, extra: &[&str]) -> usize {
    use std::os::fd::AsRawFd;
    let secret = tmp.join("secret.txt");
    std::fs::write(&secret, "the grader's token").unwrap();
    let file = std::fs::File::open(&secret).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (file_fd, sock_fd) = (file.as_raw_fd(), listener.as_raw_fd());
    let out = tmp.join(format!("run-{fd}-{}", extra.len()));
    let bot = format!(
        "python3 {} fd {fd}",
        root().join("tests/fixtures/hostile_bot.py").display()
    );
    let mut cmd = referee();
    cmd.args(["match", "tictactoe", &bot, "random", "--games", "2"])
        .args(["--out", out.to_str().unwrap()])
        .args(extra)
        .stdin(Stdio::null());
    // SAFETY: dup2 only, between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if nix::libc::dup2(file_fd, 7) < 0 || nix::libc::dup2(sock_fd, 8) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let games = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    games
        .lines()
        .filter(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            !v["forfeit"].is_null()
        })
        .count()
}

#[test]
fn only_stdio_crosses_into_a_bot_sandboxed_or_not() {
    let tmp = tempfile::tempdir().unwrap();
    // The control: a program started the same way does see them.
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open("/dev/null").unwrap();
    let raw = file.as_raw_fd();
    let mut probe = std::process::Command::new("python3");
    probe.args(["-c", "import os; os.fstat(7); print('open')"]);
    // SAFETY: dup2 only, between fork and exec.
    unsafe {
        probe.pre_exec(move || {
            if nix::libc::dup2(raw, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let seen = probe.output().unwrap();
    assert_eq!(String::from_utf8_lossy(&seen.stdout).trim(), "open");
    for fd in ["7", "8"] {
        assert_eq!(forfeits_with_fds_7_and_8(tmp.path(), fd, &[]), 0, "fd {fd}");
        if full_sandbox() {
            let n = forfeits_with_fds_7_and_8(tmp.path(), fd, &["--sandbox"]);
            assert_eq!(n, 0, "fd {fd}, sandboxed");
        }
    }
}

// ---- a bot's temporary folder has a size cap ----

#[test]
fn a_bot_that_writes_1_gib_into_its_temporary_folder_is_stopped_at_the_cap() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let alice = hostile(tmp.path(), "alice");
    // The default cap (256 MiB): the write fails with ENOSPC, the bot
    // plays on and the game ends normally.
    let started = Instant::now();
    let r = refused(&alice, &["fill", "1024"], None);
    eprintln!(
        "a 1 GiB write into a sandboxed TMPDIR stopped at the cap in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let log = r.forfeit.map(|f| f.stderr_tail).unwrap_or_default();
    assert!(log.is_empty() || !log.contains("ESCAPED"), "{log}");
    // The setting: 16 MiB fits under a 32 MiB cap, 64 MiB does not.
    let fits = play(&alice, &["fill", "16"], SandboxMode::On, Some(32));
    let f = fits.forfeit.expect("16 MiB fits under a 32 MiB cap");
    assert!(f.stderr_tail.contains("wrote 16 MiB"), "{f:?}");
    let over = refused(&alice, &["fill", "64"], Some(32));
    assert_eq!(over.termination, Termination::Normal);
}

#[test]
fn the_temporary_folder_cap_is_a_command_line_setting() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let bot = format!(
        "python3 {} fill 16",
        root().join("tests/fixtures/hostile_bot.py").display()
    );
    let games = |mb: &str| {
        let out = tmp.path().join(format!("run-{mb}"));
        let o = run(&[
            "match",
            "tictactoe",
            &bot,
            "random",
            "--games",
            "2",
            "--sandbox",
            "--tmp-mb",
            mb,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(out.join("games.jsonl")).unwrap()
    };
    // 16 MiB do not fit in 8: refused, no forfeit; they fit in 64.
    let small = games("8");
    assert!(!small.contains("ESCAPED"), "{small}");
    let large = games("64");
    assert!(large.contains("ESCAPED"), "{large}");
}

// ---- what a bot may not read cannot be stat'ed ----

#[test]
fn a_bot_cannot_stat_a_classmates_file() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let alice = hostile(tmp.path(), "alice");
    let bob = hostile(tmp.path(), "bob");
    contained(&alice, &["stat", bob.join("bot.py").to_str().unwrap()]);
    contained(&alice, &["stat", bob.to_str().unwrap()]);
}

// ---- nothing of a bot outlives a killed referee ----

#[test]
fn temporary_folders_of_a_killed_referee_are_swept_by_the_next_run() {
    let tmp = tempfile::tempdir().unwrap();
    let tmpdir = tmp.path().join("tmp");
    std::fs::create_dir_all(&tmpdir).unwrap();
    // An unsandboxed bot that says where its folder is, writes its process
    // id there, and hangs.
    let bot = tmp.path().join("hang.sh");
    std::fs::write(
        &bot,
        "echo $$ > \"$TMPDIR/pid\"\nwhile read line; do sleep 100; done\n",
    )
    .unwrap();
    let mut child = referee()
        .args(["match", "tictactoe", &format!("sh {}", bot.display())])
        .args([
            "random",
            "--games",
            "2",
            "--jobs",
            "1",
            "--time-ms",
            "60000",
        ])
        .args(["--out", tmp.path().join("run").to_str().unwrap()])
        .env("TMPDIR", &tmpdir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let run_dir = tmpdir.join(format!("referee.{}", child.id()));
    let deadline = Instant::now() + Duration::from_secs(30);
    let pid_file = || -> Option<PathBuf> {
        let d = std::fs::read_dir(&run_dir).ok()?.flatten().next()?;
        let p = d.path().join("pid");
        std::fs::read_to_string(&p)
            .ok()
            .filter(|t| t.ends_with('\n'))
            .map(|_| p)
    };
    let mut found = None;
    while found.is_none() && Instant::now() < deadline {
        found = pid_file();
        std::thread::sleep(Duration::from_millis(20));
    }
    // SIGKILL: referee cleans up nothing.
    let _ = child.kill();
    let _ = child.wait();
    // Every orphaned bot (each its own process group) is stopped here,
    // whatever the assertions below say.
    let bots: Vec<i32> = std::fs::read_dir(&run_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| std::fs::read_to_string(d.path().join("pid")).ok())
        .filter_map(|t| t.trim().parse::<i32>().ok())
        .filter(|&p| p > 1)
        .collect();
    for &pid in &bots {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(found.is_some(), "the bot never wrote its pid");
    assert!(run_dir.is_dir(), "a killed referee leaves its folder");
    // The next run sweeps it at its first bot.
    let o = referee()
        .args(["match", "tictactoe", "python3 bots/python/random_bot.py"])
        .args(["random", "--games", "2"])
        .current_dir(root())
        .env("TMPDIR", &tmpdir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!run_dir.exists(), "the stale folder is still there");
    let left: Vec<_> = std::fs::read_dir(&tmpdir).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}

// ---- a student's manifest cannot loosen its confinement ----

/// Grades a class of one student, `mallory`, whose `bot.toml` adds `extra`
/// to a working manifest (alice's bot beside it); returns mallory's
/// gradebook row and feedback page.
fn grade_manifest(extra: &str) -> (String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    let good = std::fs::read_to_string(root().join("tests/fixtures/grade/notakto_bot.py")).unwrap();
    for name in ["alice", "mallory"] {
        let d = class.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("bot.py"), &good).unwrap();
    }
    std::fs::write(
        class.join("mallory/bot.toml"),
        format!("name = \"mallory\"\ncommand = \"python3 bot.py\"\n{extra}\n"),
    )
    .unwrap();
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
    let row = book
        .lines()
        .find(|l| l.starts_with("mallory,"))
        .unwrap_or_else(|| panic!("{book}"))
        .to_string();
    let page = std::fs::read_to_string(out.join("feedback/mallory.md")).unwrap();
    (row, page)
}

/// Mallory's manifest is refused: not graded, 0 points, and the key named
/// in the gradebook and in her feedback.
fn assert_refused(extra: &str, key: &str) {
    let (row, page) = grade_manifest(extra);
    assert!(row.starts_with("mallory,error,"), "{row}");
    assert!(row.contains(",0,"), "{row}");
    assert!(row.contains(key), "{row}");
    assert!(page.contains(key), "{page}");
}

#[test]
fn a_submission_cannot_set_its_cwd_outside_its_folder() {
    assert_refused("cwd = \"../alice\"", "`cwd`");
    assert_refused("cwd = \"..\"", "`cwd`");
}

#[test]
fn a_submission_cannot_widen_what_it_may_read() {
    assert_refused("sandbox_read = [\"/\"]", "`sandbox_read`");
}

#[test]
fn a_submission_cannot_inherit_the_graders_environment() {
    assert_refused("inherit_env = true", "`inherit_env`");
}

#[test]
fn a_submission_cannot_switch_the_sandbox_off() {
    assert_refused("sandbox = false", "`sandbox`");
    assert_refused("sandbox = \"off\"", "`sandbox`");
}

#[test]
fn a_submission_cannot_raise_its_limits() {
    assert_refused("[limits]\nmemory_mb = 0", "memory_mb");
    assert_refused("[limits]\nprocesses = 100000", "processes");
    assert_refused("[limits]\ntmp_mb = 100000", "tmp_mb");
}

#[test]
fn a_submission_cannot_start_a_classmates_program() {
    assert_refused("command = \"python3 ../alice/bot.py\"", "`command`");
}

#[test]
fn a_submission_may_say_how_to_start_its_bot() {
    let (row, _) = grade_manifest(
        "reuse = false\nkind = \"protocol\"\ncwd = \".\"\n\
         [env]\nPYTHONUNBUFFERED = \"1\"\n[limits]\nmemory_mb = 1024",
    );
    assert!(row.starts_with("mallory,pass,"), "{row}");
}

// ---- the Gradescope script ----

/// The fake autograder tree's submission: a bot that loses (random moves)
/// after leaving a daemon (double fork + setsid) that keeps rewriting
/// `results.json` to full marks (for two minutes at most), writing its
/// process id in `daemon.pid` beside the results when it can.
fn daemon_bot(results: &Path) -> String {
    format!(
        r#"import json, os, random, sys, time
RESULTS = {results:?}
def daemon():
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    try:
        with open(os.path.join(os.path.dirname(RESULTS), "daemon.pid"), "a") as f:
            f.write("%d\n" % os.getpid())
    except OSError:
        pass
    end = time.time() + 120
    while time.time() < end:
        try:
            with open(RESULTS) as f:
                r = json.load(f)
            r["score"] = 25.0
            with open(RESULTS, "w") as f:
                json.dump(r, f)
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    os._exit(0)
daemon()
for line in sys.stdin:
    w = line.split()
    if w and w[0] == "turn":
        boards = w[1].split("/")
        free = [(b, i) for b, s in enumerate(boards) for i, c in enumerate(s) if c == "."]
        b, i = random.choice(free)
        print(i if len(boards) == 1 else "%d %d" % (b, i), flush=True)
"#
    )
}

/// Runs the shipped Gradescope script on the fake tree `ag` with `env`.
fn run_autograder(ag: &Path, env: &[(&str, &str)]) {
    let o = std::process::Command::new("bash")
        .arg(root().join("gradescope/run_autograder"))
        .env("AUTOGRADER_ROOT", ag)
        .env("REFEREE", env!("CARGO_BIN_EXE_referee"))
        .env("RUBRIC", root().join("rubrics/notakto-assignment.toml"))
        .env("GAMES", "2")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Stops the daemons of an unsandboxed run (one per game), which wrote
/// their ids, when dropped: even when an assertion fails.
struct Daemons<'a>(&'a Path);

impl Drop for Daemons<'_> {
    fn drop(&mut self) {
        let file = self.0.join("results/daemon.pid");
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for pid in text.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            if pid > 1 {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

/// The score in the fake tree's `results.json`. The unsandboxed daemon
/// rewrites the file in place, so a read may catch it empty or half
/// written: read again until it parses.
fn score(ag: &Path) -> f64 {
    for _ in 0..100 {
        let text = std::fs::read_to_string(ag.join("results/results.json")).unwrap_or_default();
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            return v["score"].as_f64().expect("a score");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("results.json never parsed");
}

#[test]
fn the_gradescope_script_sandboxes_and_a_daemon_cannot_rewrite_the_score() {
    let tmp = tempfile::tempdir().unwrap();
    let ag = tmp.path();
    let results = ag.join("results/results.json");
    std::fs::create_dir_all(ag.join("submission")).unwrap();
    std::fs::create_dir_all(ag.join("source")).unwrap();
    std::fs::write(ag.join("submission/bot.py"), daemon_bot(&results)).unwrap();
    // The control: without the sandbox the daemon does rewrite the score
    // (within 30 s: it rewrites every 50 ms once the file is there).
    {
        let _daemons = Daemons(ag);
        run_autograder(ag, &[("SANDBOX", "off")]);
        let deadline = Instant::now() + Duration::from_secs(30);
        while score(ag) != 25.0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(
            score(ag),
            25.0,
            "the daemon could not even forge an unsandboxed run"
        );
    }
    // By default the script sandboxes: the losing bot keeps its 0, however
    // long one waits (here 1.5 s, thirty times the daemon's period).
    std::fs::remove_dir_all(ag.join("results")).unwrap();
    let _daemons = Daemons(ag);
    run_autograder(ag, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(score(ag), 0.0);
    let out = std::fs::read_to_string(ag.join("results/referee.txt")).unwrap();
    assert!(!out.contains("ESCAPED"), "{out}");
    assert!(!ag.join("results/daemon.pid").exists());
}

// ---- a denied attempt leaves a trace the TA can see ----

#[test]
fn denied_attempts_are_counted_in_the_gradebook_and_the_feedback() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    let good = std::fs::read_to_string(root().join("tests/fixtures/grade/notakto_bot.py")).unwrap();
    // Alice tries the grader's secrets and the network before playing
    // well; Bob only plays.
    let prying = "import socket, sys\nfor attempt in (lambda: open('/etc/shadow').read(), \
                  lambda: socket.socket()):\n    try:\n        attempt()\n    \
                  except OSError as e:\n        print('refused:', repr(e), file=sys.stderr)\n";
    for (name, text) in [("alice", format!("{prying}{good}")), ("bob", good.clone())] {
        let d = class.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("bot.py"), text).unwrap();
    }
    let out = tmp.path().join("book");
    let o = run(&[
        "grade-all",
        "notakto",
        "--boards",
        "1",
        "--games",
        "2",
        class.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let book: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("gradebook.json")).unwrap())
            .unwrap();
    let denied = |who: &str| {
        book.as_array()
            .unwrap()
            .iter()
            .find(|r| r["student"] == who)
            .map(|r| r["denied"].as_u64().unwrap())
            .unwrap()
    };
    // Once per process started (every game starts one).
    assert!(denied("alice") >= 2, "{book}");
    assert_eq!(denied("bob"), 0, "{book}");
    let page = std::fs::read_to_string(out.join("feedback/alice.md")).unwrap();
    assert!(page.contains("denied by the sandbox"), "{page}");
    assert!(page.contains("PermissionError"), "{page}");
    let csv = std::fs::read_to_string(out.join("gradebook.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",denied"), "{csv}");
}

#[test]
fn a_daemon_left_by_a_student_cannot_rewrite_a_grade_all_result() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    let out = tmp.path().join("book");
    let results = out.join("gradescope/mallory/results.json");
    std::fs::create_dir_all(class.join("mallory")).unwrap();
    std::fs::write(class.join("mallory/bot.py"), daemon_bot(&results)).unwrap();
    let o = run(&[
        "grade-all",
        "notakto",
        "--boards",
        "1",
        "--games",
        "2",
        class.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.code().is_some(), "{}", stderr(&o));
    // Thirty times the daemon's period: a live daemon would have written.
    std::thread::sleep(Duration::from_millis(1500));
    let text = std::fs::read_to_string(&results).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["score"].as_f64(), Some(0.0), "{v}");
    // No daemon ever reached the output folder to say where it was.
    assert!(!out.join("gradescope/mallory/daemon.pid").exists());
}
