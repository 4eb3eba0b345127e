//! Servers under idle sockets (docs/performance.md): `league serve` and
//! `referee serve`, each started under `ulimit -n 1024`, answer a normal
//! client from another address with no idle socket open, then with 1,100
//! idle sockets open from 127.0.0.1 (more than the server's open files).
//!
//! - `league serve` (a league of its two anchors): 50 `GET /` one after
//!   the other, each on a new connection: median and slowest;
//! - `referee serve --protocol v1`: 20 matches of 10 rounds by a built-in
//!   client (`optimal`), one after the other: median and slowest.
//!
//! `cargo bench --bench slow_clients`. Every server is killed with its
//! process group at the end, or when the bench fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REFEREE: &str = env!("CARGO_BIN_EXE_referee");
const IDLE: usize = 1100;

/// A server in its own process group, killed with it when dropped.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        use nix::sys::signal::{killpg, Signal};
        let _ = killpg(
            nix::unistd::Pid::from_raw(self.0.id() as i32),
            Signal::SIGKILL,
        );
        let _ = self.0.wait();
    }
}

/// `referee args...` under `ulimit -n 1024`, and its first stdout line.
fn start(args: &[&str]) -> (Group, String) {
    use std::os::unix::process::CommandExt;
    let mut g = Group(
        Command::new("sh")
            .arg("-c")
            .arg("ulimit -n 1024 && exec \"$0\" \"$@\"")
            .arg(REFEREE)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("the server starts"),
    );
    let mut first = String::new();
    let out = g.0.stdout.take().expect("piped");
    BufReader::new(out).read_line(&mut first).expect("a line");
    (g, first)
}

/// A connection to `to` from loopback address `from`.
fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.bind(&format!("{from}:0").parse::<SocketAddr>().unwrap().into())
        .unwrap();
    s.connect(&to.into()).unwrap();
    s.into()
}

fn idle(addr: SocketAddr) -> Vec<TcpStream> {
    (0..IDLE)
        .map(|_| TcpStream::connect(addr).expect("an idle socket"))
        .collect()
}

fn summary(mut v: Vec<Duration>) -> String {
    v.sort();
    format!(
        "median {:.2} ms, slowest {:.2} ms over {}",
        v[v.len() / 2].as_secs_f64() * 1e3,
        v[v.len() - 1].as_secs_f64() * 1e3,
        v.len()
    )
}

fn page(addr: SocketAddr) -> Duration {
    let t = Instant::now();
    let mut s = connect_from("127.0.0.2", addr);
    write!(s, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let mut body = Vec::new();
    s.read_to_end(&mut body).unwrap();
    assert!(
        body.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&body)
    );
    t.elapsed()
}

fn league() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("league");
    let d = dir.to_str().unwrap();
    let o = Command::new(REFEREE)
        .args([
            "league",
            "init",
            d,
            "--game",
            "tictactoe",
            "--anchor",
            "random",
            "--anchor",
            "greedy",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let (_server, first) = start(&["league", "serve", d, "--listen", "127.0.0.1:0"]);
    let addr: SocketAddr = first
        .split("http://")
        .nth(1)
        .and_then(|x| x.split('/').next())
        .expect("an address")
        .parse()
        .unwrap();
    page(addr);
    let quiet: Vec<Duration> = (0..50).map(|_| page(addr)).collect();
    println!("league serve, GET /, no idle socket: {}", summary(quiet));
    let held = idle(addr);
    let busy: Vec<Duration> = (0..50).map(|_| page(addr)).collect();
    println!(
        "league serve, GET /, {IDLE} idle sockets open: {}",
        summary(busy)
    );
    drop(held);
}

fn serve() {
    let (_server, first) = start(&[
        "serve",
        "tictactoe",
        "--bot",
        "random",
        "--protocol",
        "v1",
        "--rounds",
        "10",
        "--listen",
        "127.0.0.1:0",
        "--quiet",
    ]);
    let addr: SocketAddr = first
        .trim()
        .strip_prefix("listening on ")
        .expect("an address")
        .parse()
        .unwrap();
    let play = || {
        let t = Instant::now();
        let cfg = referee::net::ConnectConfig::new("optimal");
        let r = referee::net::play_stream(connect_from("127.0.0.2", addr), &cfg).unwrap();
        assert_eq!(r.score.games(), 10);
        t.elapsed()
    };
    play();
    let quiet: Vec<Duration> = (0..20).map(|_| play()).collect();
    println!(
        "referee serve, a 10-round v1 match, no idle socket: {}",
        summary(quiet)
    );
    let held = idle(addr);
    let busy: Vec<Duration> = (0..20).map(|_| play()).collect();
    println!(
        "referee serve, a 10-round v1 match, {IDLE} idle sockets open: {}",
        summary(busy)
    );
    drop(held);
}

fn main() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("the open-file limit");
    let want = (IDLE as u64 + 512).min(hard);
    setrlimit(Resource::RLIMIT_NOFILE, want, hard).expect("room for the idle sockets");
    league();
    serve();
}
