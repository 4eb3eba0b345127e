//! Helpers shared by the integration tests.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The `referee` binary under test.
pub fn referee() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_referee"));
    c.current_dir(root());
    c
}

/// The repository root (where `bots/` and `tournaments/` are).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `referee args...` with `stdin` as its input and returns its output.
pub fn run_with_input(args: &[&str], stdin: &str) -> Output {
    let mut child = referee()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("referee starts");
    {
        let mut sin = child.stdin.take().expect("stdin is piped");
        // A write error only means the program stopped reading early.
        let _ = sin.write_all(stdin.as_bytes());
    }
    child.wait_with_output().expect("referee runs")
}

/// Runs `referee args...` with no input.
pub fn run(args: &[&str]) -> Output {
    run_with_input(args, "")
}

/// Says on stderr that a test skips `what` because this machine lacks
/// something; with `REFEREE_REQUIRE_ALL=1` (which `.ci/run` sets where it has
/// installed what every test needs) the test fails instead.
pub fn skipped(what: &str) {
    if std::env::var("REFEREE_REQUIRE_ALL").is_ok_and(|v| v == "1") {
        panic!("{what} (REFEREE_REQUIRE_ALL=1: nothing may be skipped)");
    }
    eprintln!("SKIPPED: {what}");
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Plays `games` games of `G` between built-in bots (round robin over
/// `bots`, seats alternating) with real game records, ids from `first_id`.
pub fn builtin_records<G: referee::bot::BuiltinBots>(
    bots: &[&str],
    games: u64,
    first_id: u64,
    seed: u64,
) -> Vec<referee::play::record::GameRecord> {
    use referee::bot::spec::BotSpec;
    use referee::play::runner::{run_games, Entrant, RunConfig};
    use referee::play::schedule::{Format, Pairing, Schedule};
    let entrants: Vec<Entrant> = bots
        .iter()
        .map(|b| Entrant {
            name: b.to_string(),
            spec: BotSpec::resolve::<G>(b).expect("built-in bot"),
        })
        .collect();
    let cfg = RunConfig {
        options: referee::game::GameOptions::default(),
        time: referee::bot::TimeControl::default(),
        random_plies: 0,
        affinity: false,
    };
    // A round robin long enough for `games` games, ids from `first_id`.
    let pairs = (bots.len() * (bots.len() - 1) / 2) as u64;
    let per_pair = games.div_ceil(pairs).next_multiple_of(2);
    let schedule = Schedule::new(bots.len(), Format::RoundRobin, per_pair, seed);
    let pairings: Vec<Pairing> = schedule
        .pairings()
        .take(games as usize)
        .map(|p| Pairing {
            id: first_id + p.id,
            ..p
        })
        .collect();
    let mut recs = run_games::<G>(&entrants, &cfg, &pairings, 1, |_| {});
    recs.sort_by_key(|r| r.id);
    recs
}

/// Writes records as `dir/games.jsonl`.
pub fn write_games(dir: &std::path::Path, recs: &[referee::play::record::GameRecord]) {
    std::fs::create_dir_all(dir).expect("create run dir");
    let mut s = String::new();
    for r in recs {
        s.push_str(&serde_json::to_string(r).expect("record serialises"));
        s.push('\n');
    }
    std::fs::write(dir.join("games.jsonl"), s).expect("write games.jsonl");
}

/// Debian's chromium, if installed.
pub fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Runs headless chromium on `url` with `extra` arguments (e.g.
/// `--dump-dom`), offline and with a throw-away profile, and returns its
/// output. A watchdog kills it if it hangs, so no process outlives the test.
pub fn run_chromium(
    browser: &std::path::Path,
    profile: &std::path::Path,
    extra: &[&str],
    url: &str,
) -> Output {
    let child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if rx.recv_timeout(std::time::Duration::from_secs(60)).is_err() {
            // Still running after a minute: kill its process group leader.
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        }
    });
    let out = child.wait_with_output().expect("chromium runs");
    let _ = tx.send(());
    let _ = watchdog.join();
    out
}

/// Lines of a run folder's games.jsonl (0 when there is none).
pub fn lines(dir: &str) -> usize {
    std::fs::read_to_string(std::path::Path::new(dir).join("games.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// A run folder's standings.json without the fields that measure time.
pub fn standings(dir: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(std::path::Path::new(dir).join("standings.json"))
        .expect("standings");
    let mut j: serde_json::Value = serde_json::from_str(&text).expect("standings is JSON");
    for b in j["bots"].as_array_mut().expect("bots") {
        let o = b.as_object_mut().expect("bot");
        o.remove("avg_move_us");
        o.remove("max_move_us");
    }
    j
}

/// A run folder's games.jsonl in id order, without the measured times.
pub fn games_without_times(dir: &str) -> Vec<serde_json::Value> {
    let text =
        std::fs::read_to_string(std::path::Path::new(dir).join("games.jsonl")).expect("games");
    let mut v: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    v.sort_by_key(|g| g["id"].as_u64());
    for g in &mut v {
        g["times_us"] = serde_json::Value::Null;
    }
    v
}

/// Resumes the tournament `file` in the cut run folder `cut` (2 jobs) and
/// checks that it ends with `total` games and the standings of the
/// uninterrupted run in `full`.
pub fn resume_equals_full(file: &str, cut: &str, full: &str, total: usize) {
    let o = run(&["tournament", file, "--out", cut, "--resume", "--jobs", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("resumed"), "{}", stdout(&o));
    assert_eq!(lines(cut), total);
    assert_eq!(standings(cut), standings(full));
}

/// A process started in a process group of its own (a server, and every
/// bot it starts), stdout piped: killed with its whole group and reaped
/// when dropped, so that nothing outlives a test, even a failed one.
pub struct Group {
    /// The group's leader.
    pub child: std::process::Child,
}

impl Group {
    /// Starts `cmd` in a new process group, stdin from /dev/null, stdout
    /// piped, stderr dropped.
    pub fn spawn(cmd: &mut Command) -> Group {
        use std::os::unix::process::CommandExt;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("the process starts");
        Group { child }
    }

    /// Whether the leader is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        use nix::sys::signal::{killpg, Signal};
        use nix::unistd::Pid;
        let _ = killpg(Pid::from_raw(self.child.id() as i32), Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// A tic-tac-toe league in `dir` with the anchors random and greedy, seed
/// 7, sandboxed as far as this machine goes, placing versions in 8 games.
pub fn league_init(dir: &std::path::Path) {
    let d = dir.to_str().expect("a UTF-8 path");
    let o = run(&[
        "league",
        "init",
        d,
        "--game",
        "tictactoe",
        "--anchor",
        "random",
        "--anchor",
        "greedy",
        "--seed",
        "7",
    ]);
    assert!(o.status.success(), "league init: {}", stderr(&o));
    let settings = dir.join("league.toml");
    let text = std::fs::read_to_string(&settings).expect("league.toml");
    std::fs::write(
        &settings,
        text.replace("sandbox = true", "sandbox = \"best-effort\"")
            .replace("placement_games = 48", "placement_games = 8"),
    )
    .expect("league.toml written");
}

impl Group {
    /// The first line the process prints on stdout (a server's address).
    pub fn first_line(&mut self) -> String {
        use std::io::BufRead;
        let mut first = String::new();
        if let Some(out) = self.child.stdout.take() {
            let _ = std::io::BufReader::new(out).read_line(&mut first);
        }
        first
    }

    /// The address a server listens on, from its first line: `listening
    /// on ADDR` (`referee serve`) or `... http://ADDR/ ...` (`league
    /// serve`).
    pub fn address(&mut self) -> std::net::SocketAddr {
        let first = self.first_line();
        let text = match first.split_once("http://") {
            Some((_, rest)) => rest.split('/').next().unwrap_or(""),
            None => first.trim().strip_prefix("listening on ").unwrap_or(""),
        };
        text.parse()
            .unwrap_or_else(|_| panic!("no address in {first:?}"))
    }
}
