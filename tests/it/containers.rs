//! The sandbox's guarantees inside containers like the ones course
//! graders run in (issue 62, section 3): Docker with its default seccomp
//! profile and capabilities, run by root (Gradescope, PrairieLearn), the
//! same with a seccomp profile that makes Landlock unavailable (an older
//! kernel), and a container run as a user without namespaces (an HPC node).
//!
//! The image is made here, from nothing a registry serves: `docker import`
//! of an empty tree with the host's `/usr` and `/etc` mounted read-only.
//! These tests need a running Docker daemon (`.ci/run` installs Debian's
//! `docker.io` and starts `dockerd`); they are slow, so they run with
//! `cargo test --release -- --ignored --test-threads 1`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use crate::common::{root, stderr, stdout};

/// The image's name.
const IMAGE: &str = "referee-test-base:1";

/// Whether Docker runs here, with the test image made (once).
fn docker() -> bool {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    let ready = READY.get_or_init(|| {
        let info = Command::new("docker")
            .args(["info", "--format", "{{.ServerVersion}}"])
            .output()
            .map_err(|e| format!("no docker client: {e}"))?;
        if !info.status.success() {
            return Err(format!("no Docker daemon: {}", stderr(&info).trim()));
        }
        let have = Command::new("docker")
            .args(["image", "inspect", IMAGE])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if have {
            return Ok(());
        }
        // An empty tree: the host's /usr and /etc are mounted into it.
        let tree = tempfile::tempdir().map_err(|e| e.to_string())?;
        for d in [
            "usr", "etc", "tmp", "proc", "sys", "dev", "root", "run", "var/tmp", "work",
        ] {
            std::fs::create_dir_all(tree.path().join(d)).map_err(|e| e.to_string())?;
        }
        for (link, to) in [
            ("bin", "usr/bin"),
            ("lib", "usr/lib"),
            ("lib64", "usr/lib64"),
            ("sbin", "usr/sbin"),
        ] {
            std::os::unix::fs::symlink(to, tree.path().join(link)).map_err(|e| e.to_string())?;
        }
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &str, m: u32| {
            std::fs::set_permissions(tree.path().join(p), std::fs::Permissions::from_mode(m))
        };
        mode("root", 0o700).map_err(|e| e.to_string())?;
        mode("tmp", 0o1777).map_err(|e| e.to_string())?;
        mode("var/tmp", 0o1777).map_err(|e| e.to_string())?;
        let tar = Command::new("tar")
            .args(["-C", &tree.path().to_string_lossy(), "-cf", "-", "."])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let import = Command::new("docker")
            .args(["import", "-", IMAGE])
            .stdin(tar.stdout.ok_or("no tar output")?)
            .output()
            .map_err(|e| e.to_string())?;
        if !import.status.success() {
            return Err(format!("docker import failed: {}", stderr(&import)));
        }
        Ok(())
    });
    match ready {
        Ok(()) => true,
        Err(why) => {
            crate::common::skipped(&format!("container tests: {why}"));
            false
        }
    }
}

/// A seccomp profile that lets everything through but Landlock (ENOSYS,
/// as on a kernel without it) and namespaces (as Docker's default profile
/// without `CAP_SYS_ADMIN`).
fn no_landlock_profile(dir: &Path) -> PathBuf {
    let path = dir.join("no-landlock.json");
    let profile = serde_json::json!({
        "defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [
            {
                "names": ["landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"],
                "action": "SCMP_ACT_ERRNO",
                "errnoRet": 38
            },
            {
                "names": ["unshare", "setns", "mount", "umount2", "pivot_root"],
                "action": "SCMP_ACT_ERRNO",
                "errnoRet": 1
            },
            {
                "names": ["clone3"],
                "action": "SCMP_ACT_ERRNO",
                "errnoRet": 38
            }
        ]
    });
    std::fs::write(&path, profile.to_string()).unwrap();
    path
}

/// How a container runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Root, Docker's default seccomp profile and capabilities (Gradescope).
    Default,
    /// Root, Landlock unavailable (an older kernel).
    NoLandlock,
    /// A user (1000), Landlock unavailable, no namespaces (an HPC node).
    UserNoLandlock,
}

/// Kills the container when dropped, whatever happened.
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("docker")
            .args(["rm", "-f", &self.0])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Runs `script` with bash in a container of `kind`, with `work` mounted
/// at /work (read-write), the referee binary and the repository's
/// gradescope/ and rubrics/ at /opt/referee, and no network. A watchdog
/// removes the container after 5 minutes.
fn in_container(kind: Kind, work: &Path, script: &str) -> Output {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let name = format!(
        "referee-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let guard = Container(name.clone());
    let mount = |from: &Path, to: &str, ro: bool| {
        format!("{}:{to}{}", from.display(), if ro { ":ro" } else { "" })
    };
    let mut cmd = Command::new("docker");
    cmd.args(["run", "--rm", "--name", &name, "--network", "none"]);
    for (from, to, ro) in [
        (PathBuf::from("/usr"), "/usr", true),
        (PathBuf::from("/etc"), "/etc", true),
        (
            PathBuf::from(env!("CARGO_BIN_EXE_referee")),
            "/opt/referee/referee",
            true,
        ),
        (root().join("gradescope"), "/opt/referee/gradescope", true),
        (root().join("rubrics"), "/opt/referee/rubrics", true),
        (work.to_path_buf(), "/work", false),
    ] {
        cmd.args(["-v", &mount(&from, to, ro)]);
    }
    let profile = no_landlock_profile(work);
    match kind {
        Kind::Default => {}
        Kind::NoLandlock => {
            cmd.args(["--security-opt", &format!("seccomp={}", profile.display())]);
        }
        Kind::UserNoLandlock => {
            cmd.args(["--security-opt", &format!("seccomp={}", profile.display())]);
            cmd.args(["--user", "1000:1000", "-e", "HOME=/tmp"]);
        }
    }
    cmd.args([
        "-e",
        "PATH=/usr/local/bin:/usr/bin:/bin",
        IMAGE,
        "bash",
        "-c",
        script,
    ]);
    cmd.stdin(Stdio::null());
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let watch = name.clone();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(300)).is_err() {
            let _ = Command::new("docker").args(["rm", "-f", &watch]).status();
        }
    });
    let out = cmd.output().expect("docker runs");
    let _ = tx.send(());
    let _ = watchdog.join();
    drop(guard);
    out
}

/// A shell line that prints `LEFT n`: the processes (not zombies) of the
/// sandbox's user ids still alive in the container.
const COUNT_LEFT: &str = r#"python3 - <<'PY'
import os
n = 0
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        st = open("/proc/%s/status" % p).read()
    except OSError:
        continue
    f = dict(l.split(":", 1) for l in st.splitlines() if ":" in l)
    uid = int(f["Uid"].split()[0])
    if 62000 <= uid <= 62999 and not f["State"].strip().startswith("Z"):
        n += 1
print("LEFT %d" % n)
PY"#;

/// A console-form Notakto submission that tries the grader's files and
/// leaves a double-forked daemon that rewrites the results for a minute;
/// every attempt's outcome goes to stderr (shown in the feedback), `read
/// ok` where one worked.
fn hostile_gradescope_submission(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("main.py"),
        r#"import os, sys, time
def daemon():
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    end = time.time() + 60
    while time.time() < end:
        try:
            with open("/autograder/results/results.json", "w") as f:
                f.write('{"score": 25.0}')
        except OSError:
            pass
        time.sleep(0.05)
    os._exit(0)
daemon()
for p in ["/autograder/source/solution.py", "/autograder/source/rubric.toml",
          "/autograder/submission_metadata.json", "/autograder/source", "/autograder"]:
    try:
        if os.path.isdir(p):
            os.listdir(p)
        else:
            open(p).read()
        print("read ok", p, file=sys.stderr)
    except OSError as e:
        print("read denied", p, e.strerror, file=sys.stderr)
sys.stdout.flush()
time.sleep(0.5)
"#,
    )
    .unwrap();
}

/// The Gradescope tree under `work/autograder`: the rubric and a reference
/// solution in source/ (with their markers), `submission` as the student's
/// folder, Gradescope's metadata.
fn gradescope_tree(work: &Path, submission: impl FnOnce(&Path)) -> PathBuf {
    let ag = work.join("autograder");
    std::fs::create_dir_all(ag.join("source")).unwrap();
    std::fs::create_dir_all(ag.join("results")).unwrap();
    std::fs::copy(
        root().join("rubrics/notakto-assignment.toml"),
        ag.join("source/rubric.toml"),
    )
    .unwrap();
    std::fs::write(ag.join("source/solution.py"), "# REFERENCE-SOLUTION\n").unwrap();
    std::fs::write(ag.join("submission_metadata.json"), "{\"users\": []}\n").unwrap();
    submission(&ag.join("submission"));
    ag
}

/// The shell script that runs the Gradescope script on /work/autograder,
/// waits 1.5 s (thirty times the daemon's period), prints the score and
/// counts what is left of the bots.
fn gradescope_script() -> String {
    format!(
        "AUTOGRADER_ROOT=/work/autograder REFEREE=/opt/referee/referee \
         RUBRIC=/work/autograder/source/rubric.toml GAMES=2 \
         bash /opt/referee/gradescope/run_autograder; sleep 1.5; \
         python3 -c 'import json; print(\"SCORE\", json.load(open(\"/work/autograder/results/results.json\"))[\"score\"])'; \
         {COUNT_LEFT}"
    )
}

/// The value after `key ` in `text`'s line that starts with it.
fn value<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key} ")))
        .unwrap_or_else(|| panic!("no {key} in: {text}"))
        .trim()
}

#[test]
#[ignore = "slow: Docker containers (cargo test --release -- --ignored --test-threads 1)"]
fn in_a_gradescope_container_a_submission_reads_nothing_of_the_graders_and_leaves_nothing() {
    if !docker() {
        return;
    }
    for kind in [Kind::Default, Kind::NoLandlock] {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path();
        let ag = gradescope_tree(work, hostile_gradescope_submission);
        let o = in_container(kind, work, &gradescope_script());
        let out = stdout(&o);
        assert!(o.status.success(), "{kind:?}: {out}{}", stderr(&o));
        assert_eq!(value(&out, "SCORE"), "0.0", "{kind:?}: {out}");
        assert_eq!(value(&out, "LEFT"), "0", "{kind:?}: {out}");
        let said = std::fs::read_to_string(ag.join("results/referee.txt")).unwrap();
        // It tried (the attempts are in its stderr) and got nothing.
        assert!(
            said.contains("read denied /autograder/source/solution.py"),
            "{kind:?}: {said}"
        );
        assert!(!said.contains("read ok"), "{kind:?}: {said}");
        let results = std::fs::read_to_string(ag.join("results/results.json")).unwrap();
        assert!(!results.contains("REFERENCE-SOLUTION"), "{kind:?}");
    }
}

#[test]
#[ignore = "slow: Docker containers (cargo test --release -- --ignored --test-threads 1)"]
fn in_a_gradescope_container_the_grade_is_the_one_on_the_host() {
    if !docker() {
        return;
    }
    let honest = |dir: &Path| {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::copy(
            root().join("tests/fixtures/console/notakto_ai.py"),
            dir.join("notakto_ai.py"),
        )
        .unwrap();
    };
    // On the host, through the same script.
    let host = tempfile::tempdir().unwrap();
    let ag = gradescope_tree(host.path(), honest);
    let o = Command::new("bash")
        .arg(root().join("gradescope/run_autograder"))
        .env("AUTOGRADER_ROOT", &ag)
        .env("REFEREE", env!("CARGO_BIN_EXE_referee"))
        .env("RUBRIC", ag.join("source/rubric.toml"))
        .env("GAMES", "4")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let scores = |text: &str| {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let tests: Vec<(String, f64)> = v["tests"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|x| {
                        (
                            x["name"].as_str().unwrap_or_default().to_string(),
                            x["score"].as_f64().unwrap_or(-1.0),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        (v["score"].as_f64(), tests)
    };
    let on_host = scores(&std::fs::read_to_string(ag.join("results/results.json")).unwrap());
    assert_eq!(on_host.0, Some(25.0), "{on_host:?}");
    for kind in [Kind::Default, Kind::NoLandlock] {
        let tmp = tempfile::tempdir().unwrap();
        let ag = gradescope_tree(tmp.path(), honest);
        let script = "AUTOGRADER_ROOT=/work/autograder REFEREE=/opt/referee/referee \
                      RUBRIC=/work/autograder/source/rubric.toml GAMES=4 \
                      bash /opt/referee/gradescope/run_autograder";
        let o = in_container(kind, tmp.path(), script);
        assert!(o.status.success(), "{kind:?}: {}{}", stdout(&o), stderr(&o));
        let inside = scores(&std::fs::read_to_string(ag.join("results/results.json")).unwrap());
        assert_eq!(inside, on_host, "{kind:?}");
    }
}

/// A class for grade-all, as the assignment's console programs: alice's
/// honest AI (its source carries a marker) and eve's, which reads alice's
/// code, lists the class, reads the rubric and the TA's reference
/// solution, leaves a daemon, and says on stderr what it could read (her
/// feedback shows it: she prints no board).
fn class(work: &Path) {
    use std::os::unix::fs::PermissionsExt;
    // A folder anyone may pass through, as a TA's often is: what keeps the
    // bots out is referee's doing.
    std::fs::set_permissions(work, std::fs::Permissions::from_mode(0o755)).unwrap();
    let alice = work.join("class/alice");
    std::fs::create_dir_all(&alice).unwrap();
    let mut code =
        std::fs::read_to_string(root().join("tests/fixtures/console/notakto_ai.py")).unwrap();
    code.push_str("\n# ALICE-SECRET\n");
    std::fs::write(alice.join("notakto_ai.py"), code).unwrap();
    let eve = work.join("class/eve");
    std::fs::create_dir_all(&eve).unwrap();
    std::fs::write(
        eve.join("main.py"),
        r#"import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(120)
    os._exit(0)
got = []
for p in ["/work/class/alice/notakto_ai.py", "/work/class", "/work/rubric.toml", "/root/solution.py"]:
    try:
        data = str(os.listdir(p)) if os.path.isdir(p) else open(p).read()
        got.append("ok")
    except OSError:
        got.append("denied")
print("read:" + ",".join(got), file=sys.stderr, flush=True)
"#,
    )
    .unwrap();
    std::fs::copy(
        root().join("rubrics/notakto-assignment.toml"),
        work.join("rubric.toml"),
    )
    .unwrap();
}

#[test]
#[ignore = "slow: Docker containers (cargo test --release -- --ignored --test-threads 1)"]
fn in_a_container_grade_all_keeps_classmates_apart_and_leaves_nothing() {
    if !docker() {
        return;
    }
    for kind in [Kind::Default, Kind::NoLandlock] {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path();
        class(work);
        let grade = |sandbox: &str, out: &str| {
            format!(
                "echo '# REFERENCE' > /root/solution.py; \
                 /opt/referee/referee grade-all notakto --boards 3 --seat 1 --games 2 \
                 --rubric /work/rubric.toml {sandbox} /work/class --out /work/{out}; \
                 echo STATUS $?; sleep 1.5; {COUNT_LEFT}"
            )
        };
        // The control: without the sandbox eve reads everything.
        let o = in_container(kind, work, &grade("--no-sandbox", "free"));
        let free = std::fs::read_to_string(work.join("free/feedback/eve.md")).unwrap_or_default();
        assert!(
            free.contains("read:ok,ok,ok,ok"),
            "{kind:?}: {free}{}",
            stdout(&o)
        );
        // The control opened what referee closes; a TA's class is open.
        let o = in_container(kind, work, "chmod -R o+rX /work/class /work/rubric.toml");
        assert!(o.status.success());
        let o = in_container(kind, work, &grade("--sandbox=best-effort", "boxed"));
        let out = stdout(&o);
        assert_eq!(value(&out, "LEFT"), "0", "{kind:?}: {out}{}", stderr(&o));
        let book = std::fs::read_to_string(work.join("boxed/gradebook.csv")).unwrap();
        assert!(book.contains("alice,pass"), "{kind:?}: {book}");
        let eve = std::fs::read_to_string(work.join("boxed/feedback/eve.md")).unwrap();
        assert!(
            eve.contains("read:denied,denied,denied,denied"),
            "{kind:?}: {eve}"
        );
        assert!(!eve.contains("ALICE-SECRET"), "{kind:?}");
        assert!(
            stderr(&o).contains("closed to other users"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
#[ignore = "slow: Docker containers (cargo test --release -- --ignored --test-threads 1)"]
fn in_a_container_a_killed_referee_leaves_no_process_of_a_bot() {
    if !docker() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path();
    std::fs::create_dir_all(work.join("slow")).unwrap();
    // A bot that leaves a daemon and then thinks for a minute.
    std::fs::write(
        work.join("slow/bot.py"),
        "import os, sys, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        \
         time.sleep(300)\n    os._exit(0)\nfor l in sys.stdin:\n    if l.startswith('turn'):\n        \
         time.sleep(60)\n",
    )
    .unwrap();
    let script = format!(
        "/opt/referee/referee match tictactoe 'python3 /work/slow/bot.py' random --games 2 \
         --time-ms 100000 --sandbox & pid=$!; sleep 3\n{COUNT_LEFT}\nkill -9 $pid; sleep 2\n\
         {COUNT_LEFT}\n"
    );
    let o = in_container(Kind::NoLandlock, work, &script);
    let out = stdout(&o);
    let counts: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("LEFT "))
        .collect();
    assert_eq!(counts.len(), 2, "{out}{}", stderr(&o));
    // While referee ran, the bot and its daemon were there; once it was
    // killed, its janitor killed them.
    assert!(counts[0].parse::<u32>().unwrap() >= 2, "{out}");
    assert_eq!(counts[1], "0", "{out}");
}

#[test]
#[ignore = "slow: Docker containers (cargo test --release -- --ignored --test-threads 1)"]
fn on_a_node_without_namespaces_or_root_the_strict_sandbox_names_what_it_lacks() {
    if !docker() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(work, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(
        work.join("first.py"),
        "import sys\nfor l in sys.stdin:\n    w = l.split()\n    if w and w[0] == 'turn':\n        \
         print(w[1].index('.'), flush=True)\n",
    )
    .unwrap();
    let script = "/opt/referee/referee sandbox; echo SANDBOX $?; \
                  /opt/referee/referee match tictactoe 'python3 /work/first.py' random --games 2 \
                  --sandbox; echo STRICT $?; \
                  /opt/referee/referee match tictactoe 'python3 /work/first.py' random --games 2 \
                  --sandbox=best-effort; echo BEST $?";
    let o = in_container(Kind::UserNoLandlock, work, script);
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(value(&out, "SANDBOX"), "0", "{out}{err}");
    assert!(out.contains("NOT GIVEN"), "{out}");
    // Strict refuses before any game, naming each missing guarantee.
    assert_eq!(value(&out, "STRICT"), "2", "{out}{err}");
    for g in [
        "reads only its own files",
        "cannot see names",
        "nothing outlives its game",
    ] {
        assert!(err.contains(g), "{g}: {err}");
    }
    // Best effort plays, and says what it goes without.
    assert_eq!(value(&out, "BEST"), "0", "{out}{err}");
    assert!(err.contains("best-effort sandbox without"), "{err}");
}

#[test]
#[ignore = "slow: Docker containers (cargo test --release -- --ignored --test-threads 1)"]
fn in_a_container_memory_processes_and_cpu_are_held_per_bot() {
    if !docker() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path();
    // 8 processes of 600 MB each (4.8 GB) under the 4 GiB cap: with no
    // cgroup here, the watchdog kills the bot within its period.
    std::fs::write(
        work.join("mem.py"),
        r#"import os, sys, time
for line in sys.stdin:
    if not line.startswith("turn"):
        continue
    r, w = os.pipe()
    kids = []
    for _ in range(7):
        pid = os.fork()
        if pid == 0:
            mine = b"x" * (600 << 20)
            os.write(w, b"k")
            time.sleep(30)
            os._exit(0)
        kids.append(pid)
    mine = b"x" * (600 << 20)
    got = 0
    end = time.time() + 20
    while got < 7 and time.time() < end:
        got += len(os.read(r, 16))
    time.sleep(1)
    alive = sum(1 for k in kids if os.waitpid(k, os.WNOHANG) == (0, 0))
    print("ESCAPED" if got == 7 and alive == 7 else line.split()[1].index("."), flush=True)
"#,
    )
    .unwrap();
    // A fork bomb: more than the 64 processes a sandboxed bot may have.
    std::fs::write(
        work.join("bomb.py"),
        r#"import os, sys, time
n = 0
try:
    for _ in range(200):
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError:
    pass
for line in sys.stdin:
    if line.startswith("turn"):
        print("forked%d" % n, flush=True)
"#,
    )
    .unwrap();
    // A thinker that needs 300 ms of CPU a move against a bot that runs 60
    // busy loops: frozen by its user id while the thinker is on move.
    std::fs::write(
        work.join("think.py"),
        "import sys, time\nfor line in sys.stdin:\n    w = line.split()\n    if w and w[0] == 'turn':\n        \
         t = time.process_time()\n        while time.process_time() - t < 0.3:\n            pass\n        \
         print(w[1].index('.'), flush=True)\n",
    )
    .unwrap();
    std::fs::write(
        work.join("hog.py"),
        "import os, sys\nfor _ in range(60):\n    if os.fork() == 0:\n        while True:\n            pass\n\
         for line in sys.stdin:\n    w = line.split()\n    if w and w[0] == 'turn':\n        \
         print(w[1].index('.'), flush=True)\n",
    )
    .unwrap();
    let script = "cd /work; \
        /opt/referee/referee match tictactoe 'python3 /work/think.py' 'python3 /work/hog.py' \
        --games 4 --jobs 1 --time-ms 3000 --sandbox --out cpu >/dev/null 2>&1; \
        /opt/referee/referee match tictactoe 'python3 /work/mem.py' random --games 2 --jobs 1 \
        --time-ms 60000 --sandbox --out mem >/dev/null 2>&1; \
        /opt/referee/referee match tictactoe 'python3 /work/bomb.py' random --games 2 --jobs 1 \
        --sandbox --out bomb >/dev/null 2>&1; echo DONE";
    for kind in [Kind::Default, Kind::NoLandlock] {
        let _ = std::fs::remove_dir_all(work.join("mem"));
        let _ = std::fs::remove_dir_all(work.join("bomb"));
        let _ = std::fs::remove_dir_all(work.join("cpu"));
        let o = in_container(kind, work, script);
        assert!(stdout(&o).contains("DONE"), "{kind:?}: {}", stderr(&o));
        let games = |dir: &str| -> Vec<serde_json::Value> {
            std::fs::read_to_string(work.join(dir).join("games.jsonl"))
                .unwrap_or_else(|_| panic!("{kind:?}: no {dir} games: {}", stderr(&o)))
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        for g in games("mem") {
            let f = &g["forfeit"];
            assert_ne!(f["line"].as_str(), Some("ESCAPED"), "{kind:?}: {g}");
            if !f.is_null() {
                let status = f["exit_status"].as_str().unwrap_or_default();
                assert!(status.contains("memory"), "{kind:?}: {g}");
            }
        }
        let cpu = games("cpu");
        assert_eq!(cpu.len(), 4, "{kind:?}");
        for g in cpu {
            assert_ne!(g["termination"].as_str(), Some("timeout"), "{kind:?}: {g}");
        }
        for g in games("bomb") {
            let line = g["forfeit"]["line"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let n: u32 = line
                .strip_prefix("forked")
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{kind:?}: {g}"));
            assert!(n < 64, "{kind:?}: {line}");
        }
    }
}
