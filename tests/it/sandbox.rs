//! The sandbox against hostile bots: each attack is tried once without the
//! sandbox (where it works, so the test can fail) and once inside it (where
//! the operating system refuses it and the game goes on).

use std::net::{TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::Duration;

use referee::bot::external::ExternalBot;
use referee::bot::manifest::{ExternalSpec, SandboxMode};
use referee::bot::sandbox;
use referee::bot::{BuiltinSpec, TimeControl};
use referee::game::TicTacToe;
use referee::play::record::{GameRecord, Termination};
use referee::play::referee::{play_game, GameSetup};

use crate::common::{referee, root, run, stderr, stdout};

/// Whether this machine gives every guarantee; when it does not, the tests
/// check that referee refuses, and say what they skip.
fn full_sandbox() -> bool {
    let missing = sandbox::missing(sandbox::support());
    if !missing.is_empty() {
        crate::common::skipped(&format!("sandbox tests: {}", missing.join("; ")));
        let refused = sandbox::check(SandboxMode::On).unwrap_err();
        assert!(refused.contains("best-effort"), "{refused}");
    }
    missing.is_empty()
}

/// A student's folder holding the hostile bot as `bot.py`.
fn student(class: &Path, name: &str) -> PathBuf {
    let dir = class.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        root().join("tests/fixtures/hostile_bot.py"),
        dir.join("bot.py"),
    )
    .unwrap();
    dir
}

/// Plays the hostile bot in `dir` (as player 1) against `random`, trying
/// `attack`, with or without the sandbox and with `memory_mb`/`processes`.
fn play(
    dir: &Path,
    attack: &[&str],
    mode: SandboxMode,
    memory_mb: u64,
    processes: u64,
) -> GameRecord {
    let mut spec =
        ExternalSpec::from_command_line(&format!("python3 bot.py {}", attack.join(" "))).unwrap();
    spec.cwd = Some(dir.to_path_buf());
    spec.manifest = Some(dir.join("bot.toml"));
    spec.sandbox = mode;
    spec.limits.memory_mb = Some(memory_mb);
    spec.limits.processes = Some(processes);
    // Wide: the attacks (a fork bomb, a memory grab) are slow on a loaded
    // 2-core machine, and only a hang would reach these limits.
    let time = TimeControl::new(30_000, 30_000);
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

/// The attack worked without the sandbox and failed inside it.
fn contained(dir: &Path, attack: &[&str], unsandboxed_limits: (u64, u64)) {
    let (mem, procs) = unsandboxed_limits;
    let free = play(dir, attack, SandboxMode::Off, mem, procs);
    let f = free
        .forfeit
        .as_ref()
        .unwrap_or_else(|| panic!("{attack:?} did not work even without the sandbox: {free:?}"));
    assert!(f.stderr_tail.contains("ESCAPED"), "{f:?}");
    let boxed = play(dir, attack, SandboxMode::On, 512, 20);
    assert_eq!(
        boxed.termination,
        Termination::Normal,
        "{attack:?} in the sandbox: {:?}",
        boxed.forfeit
    );
}

#[test]
fn a_bot_cannot_read_or_list_what_is_not_its_own() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    let alice = student(&class, "alice");
    let bob = student(&class, "bob");
    std::fs::write(bob.join("secret.txt"), "bob's work").unwrap();
    contained(
        &alice,
        &["read", bob.join("secret.txt").to_str().unwrap()],
        (0, 0),
    );
    let out = tmp.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("games.jsonl"), "").unwrap();
    contained(&alice, &["list", out.to_str().unwrap()], (0, 0));
}

#[test]
fn a_bot_cannot_touch_the_results_or_the_home_folder() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let alice = student(tmp.path(), "alice");
    let games = tmp.path().join("games.jsonl");
    std::fs::write(&games, "").unwrap();
    contained(&alice, &["append", games.to_str().unwrap()], (0, 0));
    // Only the unsandboxed game wrote its forged line.
    assert_eq!(std::fs::read_to_string(&games).unwrap().lines().count(), 1);
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let planted = Path::new(&home).join(format!("referee-sandbox-test-{}", std::process::id()));
    contained(&alice, &["write", planted.to_str().unwrap()], (0, 0));
    let _ = std::fs::remove_file(&planted);
}

#[test]
fn a_bot_has_no_network_not_even_loopback() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let alice = student(tmp.path(), "alice");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    listener.set_nonblocking(true).unwrap();
    contained(&alice, &["tcp", &port], (0, 0));
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let uport = udp.local_addr().unwrap().port().to_string();
    let boxed = play(&alice, &["udp", &uport], SandboxMode::On, 512, 20);
    assert_eq!(boxed.termination, Termination::Normal, "{boxed:?}");
    let mut buf = [0u8; 16];
    assert!(udp.recv(&mut buf).is_err(), "a datagram left the sandbox");
    let free = play(&alice, &["udp", &uport], SandboxMode::Off, 0, 0);
    assert!(free.forfeit.is_some(), "udp works without the sandbox");
    assert_eq!(udp.recv(&mut buf).ok(), Some(5));
    // A Unix socket of the machine's (a database, a container engine).
    let path = tmp.path().join("service.sock");
    let _unix = std::os::unix::net::UnixListener::bind(&path).unwrap();
    contained(&alice, &["unix", path.to_str().unwrap()], (0, 0));
}

#[test]
fn process_count_and_memory_hold_whoever_runs_referee() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let alice = student(tmp.path(), "alice");
    // Bounded: the processes end by themselves after 3 s.
    contained(&alice, &["fork", "60"], (0, 0));
    contained(&alice, &["alloc", "2048"], (0, 0));
    // A process with CAP_SYS_RESOURCE (root, usually) may lift its own
    // limits, but not inside the sandbox's user namespace; without it the
    // limit holds anyway, and only the sandboxed half is checked.
    if may_raise_limits() {
        contained(&alice, &["raise", "2048"], (512, 0));
    } else {
        let boxed = play(&alice, &["raise", "2048"], SandboxMode::On, 512, 20);
        assert_eq!(
            boxed.termination,
            Termination::Normal,
            "{:?}",
            boxed.forfeit
        );
    }
}

/// Whether this process has CAP_SYS_RESOURCE (bit 24 of its effective
/// capabilities).
fn may_raise_limits() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps >> 24 & 1 == 1)
}

#[test]
fn a_bot_cannot_signal_referee() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let alice = student(tmp.path(), "alice");
    contained(&alice, &["kill", &std::process::id().to_string()], (0, 0));
}

/// Processes whose command line is `sleep <marker>`.
fn sleepers(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmdline.split(|&b| b == 0).any(|w| w == marker.as_bytes()) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn nothing_a_sandboxed_bot_started_outlives_it() {
    if !full_sandbox() {
        return;
    }
    // A grandchild leaves the process group (setsid) and sleeps on.
    let marker = format!("3{}.5", std::process::id() % 1000);
    let script = format!(
        "setsid sleep {marker} </dev/null >/dev/null 2>&1 & \
         while read c p; do case $c in turn) i=0; \
         while [ \"$(echo $p | cut -c$((i+1)))\" != . ]; do i=$((i+1)); done; echo $i;; esac; done"
    );
    let run_once = |mode: SandboxMode| {
        let mut spec = ExternalSpec::from_command_line("sh").unwrap();
        spec.command = vec!["sh".into(), "-c".into(), script.clone()];
        spec.sandbox = mode;
        let time = TimeControl::default();
        let mut me = ExternalBot::<TicTacToe>::new(spec, time, 1);
        let mut other = BuiltinSpec::parse("random").make::<TicTacToe>(1).unwrap();
        let setup = GameSetup::new(0, 1, TicTacToe::new());
        play_game(
            &setup,
            [&mut me, &mut other],
            ["sh".into(), "random".into()],
        );
        drop(me);
        std::thread::sleep(Duration::from_millis(300));
        sleepers(&marker)
    };
    let left = run_once(SandboxMode::Off);
    assert!(!left.is_empty(), "the escape works without the sandbox");
    for pid in left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        run_once(SandboxMode::On).is_empty(),
        "a process outlived its sandbox"
    );
}

#[test]
fn the_bundled_bots_play_unchanged_in_the_sandbox() {
    if !full_sandbox() {
        return;
    }
    let o = run(&["check", "tictactoe", "bots/python-random.toml", "--sandbox"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = run(&[
        "check",
        "uttt",
        "python3 bots/python/random_bot.py",
        "--sandbox",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    // The C bot, built into a bot folder of its own.
    let tmp = tempfile::tempdir().unwrap();
    let exe = tmp.path().join("random_bot");
    let built = std::process::Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(root().join("bots/c/random_bot.c"))
        .status()
        .is_ok_and(|s| s.success());
    if built {
        let o = run(&["check", "notakto", exe.to_str().unwrap(), "--sandbox"]);
        assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    } else {
        crate::common::skipped("the C bot in the sandbox: no C compiler");
    }
    // A student's console program of the Notakto course assignment (its AI
    // plays first, as the assignment asks), graded in the sandbox.
    let o = run(&[
        "grade",
        "notakto",
        "console:python3 tests/fixtures/console/notakto_ai.py",
        "--games",
        "4",
        "--sandbox",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("PASS"), "{}", stdout(&o));
}

#[test]
fn grade_all_is_sandboxed_by_default_and_a_peek_at_a_classmate_fails() {
    if !full_sandbox() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let class = tmp.path().join("class");
    let good = std::fs::read_to_string(root().join("tests/fixtures/grade/notakto_bot.py")).unwrap();
    // Alice copies Bob's bot if she can read it: a copier quits on the spot.
    let peek = "import sys\ntry:\n    open(__file__.replace('alice', 'bob')).read()\n    \
                print('copied bob', file=sys.stderr)\n    sys.exit(3)\n\
                except OSError as e:\n    print('denied:', e, file=sys.stderr)\n";
    for (name, text) in [("alice", format!("{peek}{good}")), ("bob", good.clone())] {
        let d = class.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("bot.py"), text).unwrap();
    }
    let out = tmp.path().join("book");
    let grade = |extra: &[&str]| {
        let mut args = vec![
            "grade-all",
            "notakto",
            "--boards",
            "1",
            "--games",
            "4",
            class.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--overwrite",
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::read_to_string(out.join("gradebook.csv")).unwrap()
    };
    let boxed = grade(&[]);
    assert!(boxed.contains("alice,pass"), "{boxed}");
    assert!(boxed.contains("bob,pass"), "{boxed}");
    // Without the sandbox Alice can read Bob's bot (and so she fails).
    let free = grade(&["--no-sandbox"]);
    assert!(free.contains("alice,fail"), "{free}");
}

#[test]
fn a_sandbox_the_kernel_cannot_give_is_refused_with_what_is_missing() {
    // Whatever this machine offers, the text names each missing guarantee.
    let none = sandbox::Support {
        landlock_abi: 0,
        namespaces: false,
        seccomp: false,
        root: false,
        pids_cgroup: None,
        memory_cgroup: None,
        mounts: false,
        users: None,
    };
    let missing = sandbox::missing(&none);
    for g in [
        sandbox::Guarantee::Reads,
        sandbox::Guarantee::Names,
        sandbox::Guarantee::Network,
        sandbox::Guarantee::Processes,
        sandbox::Guarantee::Lifetime,
    ] {
        assert!(
            missing.iter().any(|m| m.starts_with(g.name())),
            "{g:?}: {missing:?}"
        );
    }
    let o = referee()
        .args([
            "match",
            "tictactoe",
            "random",
            "greedy",
            "--games",
            "2",
            "--sandbox=maybe",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown sandbox mode 'maybe'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn kept_processes_play_unchanged_in_the_sandbox() {
    if !full_sandbox() {
        return;
    }
    // The bundled Python bots declare `reuse = true`: one process each for
    // the whole match, in the sandbox, gives the games it gives outside.
    let play = |extra: &[&str]| {
        let mut args = vec![
            "match",
            "tictactoe",
            "bots/python-random.toml",
            "bots/python-heuristic.toml",
            "--games",
            "8",
            "--jobs",
            "1",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let bots = v["bots"].as_array().unwrap().clone();
        for b in &bots {
            assert_eq!(b["games"], 8, "{v}");
            let forfeits: u64 = b["forfeits"]
                .as_object()
                .unwrap()
                .values()
                .map(|n| n.as_u64().unwrap())
                .sum();
            assert_eq!(forfeits, 0, "{v}");
        }
        bots.iter()
            .map(|b| (b["wins"].clone(), b["draws"].clone(), b["losses"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(play(&["--sandbox"]), play(&[]));
}

#[test]
fn cgroups_left_by_a_killed_referee_are_swept() {
    // Only where referee runs as root with per-sandbox pids cgroups.
    let Some(base) = sandbox::support()
        .pids_cgroup
        .as_ref()
        .and_then(|b| b.parent())
    else {
        crate::common::skipped("sweeping pids cgroups: the sandbox has none here");
        return;
    };
    // A referee.PID folder whose process cannot exist (above any pid_max),
    // with a per-bot group in it, as `kill -9` leaves them.
    let stale = base.join("referee.2147480001");
    std::fs::create_dir_all(stale.join("bot0")).unwrap();
    let o = run(&["sandbox"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let left = stale.exists();
    let _ = std::fs::remove_dir(stale.join("bot0"));
    let _ = std::fs::remove_dir(&stale);
    assert!(!left, "the stale cgroup folder is still there");
}

/// Whether `program` runs here (`program --version` succeeds).
fn installed(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn other_runtimes_play_in_the_sandbox() {
    if !full_sandbox() {
        return;
    }
    // The same first-empty-cell tictactoe bot in each language, checked with
    // and without the sandbox; a runtime that is not installed is skipped.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let node = "const rl = require('readline').createInterface({ input: process.stdin });\n\
                rl.on('line', (l) => { const w = l.trim().split(/\\s+/);\n\
                if (w[0] === 'turn') { process.stdout.write(w[1].indexOf('.') + '\\n'); } });\n";
    let perl = "$| = 1;\nwhile (my $l = <STDIN>) { my @w = split ' ', $l;\n\
                if ($w[0] eq 'turn') { print index($w[1], '.'), \"\\n\"; } }\n";
    let java = "import java.io.*;\npublic class Bot { public static void main(String[] a) \
                throws Exception {\n BufferedReader r = new BufferedReader(new \
                InputStreamReader(System.in)); String l;\n while ((l = r.readLine()) != null) \
                { String[] w = l.trim().split(\"\\\\s+\");\n if (w[0].equals(\"turn\")) { \
                System.out.println(w[1].indexOf('.')); System.out.flush(); } } } }\n";
    std::fs::write(dir.join("bot.js"), node).unwrap();
    std::fs::write(dir.join("bot.pl"), perl).unwrap();
    std::fs::write(dir.join("Bot.java"), java).unwrap();
    let mut checked = Vec::new();
    if installed("node") {
        checked.push(format!("node {}", dir.join("bot.js").display()));
    } else {
        crate::common::skipped("the Node.js bot in the sandbox: node is not installed");
    }
    if installed("perl") {
        checked.push(format!("perl {}", dir.join("bot.pl").display()));
    } else {
        crate::common::skipped("the Perl bot in the sandbox: perl is not installed");
    }
    let compiled = installed("javac")
        && std::process::Command::new("javac")
            .arg(dir.join("Bot.java"))
            .current_dir(dir)
            .status()
            .is_ok_and(|s| s.success());
    if compiled && installed("java") {
        // A heap of its own size: the JVM's default on a large machine,
        // with its reserved class space, comes near the 4 GiB address-space
        // limit and fails at random under load.
        checked.push(format!("java -Xmx256m -cp {} Bot", dir.display()));
    } else {
        crate::common::skipped("the Java bot in the sandbox: javac or java is not installed");
    }
    for bot in &checked {
        for sandbox in [&[][..], &["--sandbox"][..]] {
            let mut args = vec!["check", "tictactoe", bot.as_str()];
            args.extend_from_slice(sandbox);
            let o = run(&args);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{bot} {sandbox:?}: {}{}",
                stdout(&o),
                stderr(&o)
            );
        }
    }
}
