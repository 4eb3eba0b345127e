//! Servers that slow clients cannot hold: `referee serve` and `league
//! serve`, each started under a 1024 open-file limit, keep answering
//! others with 1,100 idle sockets open, and close a client that does not
//! read (or, for the page, send) within the documented 10 s.
//!
//! Every server runs in its own process group and is killed with it by
//! [`Group`]'s `Drop`, even when a test fails. The bounds below are
//! generous multiples of the documented limits: they tell "closed after
//! about 10 s" from "held for ever", not milliseconds.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};

use crate::common::{referee, Group};

/// How many idle sockets the tests open: more than the server's 1024
/// open files.
const IDLE: usize = 1100;

/// Starts `referee args...` under `ulimit -n 1024`, in its own group.
fn start_limited(args: &[&str]) -> Group {
    let exe = env!("CARGO_BIN_EXE_referee");
    let mut cmd = std::process::Command::new("sh");
    cmd.current_dir(crate::common::root())
        .arg("-c")
        .arg("ulimit -n 1024 && exec \"$0\" \"$@\"")
        .arg(exe)
        .args(args);
    Group::spawn(&mut cmd)
}

/// Lets this test process open [`IDLE`] sockets and more; false (the test
/// is skipped) when its hard limit does not allow it.
fn room_for_idle_sockets() -> bool {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let want = IDLE as u64 + 512;
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return false;
    };
    if soft >= want {
        return true;
    }
    if hard < want {
        crate::common::skipped(&format!(
            "{IDLE} idle sockets: this process may open only {hard} files"
        ));
        return false;
    }
    setrlimit(Resource::RLIMIT_NOFILE, want, hard).is_ok()
}

/// A TCP connection to `to` from the loopback address `from` (so that it
/// does not count towards the idle sockets' address), with a small
/// receive buffer when `small_buffer`.
fn connect_from(from: &str, to: SocketAddr, small_buffer: bool) -> TcpStream {
    let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
    if small_buffer {
        s.set_recv_buffer_size(4096).unwrap();
    }
    let local: SocketAddr = format!("{from}:0").parse().unwrap();
    s.bind(&local.into()).unwrap();
    s.connect_timeout(&to.into(), Duration::from_secs(10))
        .unwrap();
    let s: TcpStream = s.into();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s
}

/// Opens [`IDLE`] connections to `addr` that send nothing.
fn idle_sockets(addr: SocketAddr) -> Vec<TcpStream> {
    (0..IDLE)
        .map(|i| {
            TcpStream::connect_timeout(&addr, Duration::from_secs(10))
                .unwrap_or_else(|e| panic!("idle socket {i}: {e}"))
        })
        .collect()
}

/// When the server closed `s`, within `limit`, while `s` sends one byte of
/// `trickle` every `every` (nothing when empty) and reads what comes: the
/// time it took and the bytes read before the end; `None` if it was not.
fn wait_closed(
    s: &mut TcpStream,
    trickle: &[u8],
    every: Duration,
    limit: Duration,
) -> Option<(Duration, usize)> {
    let start = Instant::now();
    s.set_read_timeout(Some(every)).unwrap();
    s.set_write_timeout(Some(every)).unwrap();
    let (mut sent, mut read) = (0, 0);
    let mut buf = [0u8; 65536];
    while start.elapsed() < limit {
        if !trickle.is_empty() {
            if s.write_all(&trickle[sent % trickle.len()..][..1]).is_err() {
                return Some((start.elapsed(), read));
            }
            sent += 1;
        }
        match s.read(&mut buf) {
            Ok(0) => return Some((start.elapsed(), read)),
            Ok(n) => read += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return Some((start.elapsed(), read)),
        }
    }
    None
}

/// Whether the server dropped `s`, a client that never reads, within
/// `limit`: a byte written every second fails once the server has reset
/// (or closed) the connection. Nothing is read: reading would make it a
/// client that reads.
fn dropped_within(s: &mut TcpStream, limit: Duration) -> bool {
    let start = Instant::now();
    s.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
    while start.elapsed() < limit {
        match s.write(b"\n") {
            Ok(_) => std::thread::sleep(Duration::from_secs(1)),
            // Its receive buffer is full: the server is not reading.
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return true,
        }
    }
    false
}

/// Reads from `r` until what was read ends with one of `ends`, or the end.
fn until(r: &mut impl Read, ends: &[&str]) -> String {
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while let Ok(1) = r.read(&mut byte) {
        got.push(byte[0]);
        if ends.iter().any(|e| got.ends_with(e.as_bytes())) {
            break;
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Writes as much of `bytes` as the peer takes before `limit` passes with
/// nothing going out.
fn flood(s: &mut TcpStream, bytes: &[u8], limit: Duration) {
    s.set_write_timeout(Some(limit)).unwrap();
    let mut rest = bytes;
    while !rest.is_empty() {
        match s.write(rest) {
            Ok(n) if n > 0 => rest = &rest[n..],
            _ => break,
        }
    }
}

#[test]
fn serve_plays_on_with_1100_idle_sockets_and_drops_a_client_that_never_reads() {
    if !room_for_idle_sockets() {
        return;
    }
    let mut server = start_limited(&[
        "serve",
        "tictactoe",
        "--bot",
        "random",
        "--protocol",
        "text",
        "--rounds",
        "4",
        "--listen",
        "127.0.0.1:0",
        "--quiet",
    ]);
    let addr = server.address();
    let idle = idle_sockets(addr);
    // A person from another address plays a whole match meanwhile: at
    // each prompt, the next cell (a taken one is refused with a line).
    let mut person = connect_from("127.0.0.2", addr, false);
    let mut reader = person.try_clone().unwrap();
    let mut seen = String::new();
    for next in 0..500 {
        let chunk = until(&mut reader, &["): ", "Thanks for playing!\n"]);
        seen.push_str(&chunk);
        if !chunk.ends_with("): ") {
            break;
        }
        writeln!(person, "{}", next % 9).unwrap();
    }
    assert!(
        seen.contains("Final score after 4 rounds"),
        "the person's match did not finish:\n{seen}"
    );
    // A client that sends moves and never reads what it is told: the
    // server stops writing to it after 10 s and frees its place.
    let mut deaf = connect_from("127.0.0.3", addr, true);
    let junk = "x\n".repeat(500_000);
    flood(&mut deaf, junk.as_bytes(), Duration::from_secs(2));
    assert!(
        dropped_within(&mut deaf, Duration::from_secs(40)),
        "a client that never reads was not dropped within 40 s"
    );
    assert!(server.alive(), "the server died");
    drop(idle);
}

#[test]
fn serve_frees_a_never_reading_client_s_place_after_about_10_s() {
    let mut server = Group::spawn(referee().args([
        "serve",
        "tictactoe",
        "--bot",
        "random",
        "--protocol",
        "text",
        "--max-clients",
        "1",
        "--listen",
        "127.0.0.1:0",
        "--quiet",
    ]));
    let addr = server.address();
    let mut deaf = connect_from("127.0.0.1", addr, true);
    let junk = "x\n".repeat(500_000);
    flood(&mut deaf, junk.as_bytes(), Duration::from_secs(2));
    let stalled = Instant::now();
    // The one place is the deaf client's until the server gives up on it.
    let served = loop {
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut line = String::new();
        let _ = BufReader::new(&mut c).read_line(&mut line);
        if line.starts_with("Welcome") {
            break stalled.elapsed();
        }
        assert!(line.contains("server full"), "{line}");
        assert!(
            stalled.elapsed() < Duration::from_secs(60),
            "the deaf client kept its place for a minute"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    // Documented: 10 s. It used to take 30-60 s (10 s per message).
    assert!(
        served < Duration::from_secs(25),
        "the place came free after {served:?}"
    );
    drop(deaf);
}

/// A league with its anchors alone, served under a 1024 open-file limit:
/// the server and its address.
fn league_server(dir: &std::path::Path) -> (Group, SocketAddr) {
    crate::common::league_init(dir);
    let d = dir.to_str().unwrap();
    let mut server = start_limited(&["league", "serve", d, "--listen", "127.0.0.1:0"]);
    let addr = server.address();
    (server, addr)
}

/// GET `path` on `s`: the status line.
fn get_status(mut s: TcpStream, path: &str) -> String {
    // A refused connection may be closed before the request is written.
    let _ = write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    );
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    text.lines().next().unwrap_or("").to_string()
}

#[test]
fn league_serve_answers_with_1100_idle_sockets_and_closes_them() {
    if !room_for_idle_sockets() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (mut server, addr) = league_server(&tmp.path().join("league"));
    let mut idle = idle_sockets(addr);
    // Others are answered, page after page.
    for path in ["/", "/league", "/api/ladder", "/", "/league"] {
        let status = get_status(connect_from("127.0.0.2", addr, false), path);
        assert!(status.contains("200"), "{path}: {status}");
    }
    // The idle sockets' address is at its cap: one more is told so.
    // (The server answers a refused connection at once: read before
    // writing, so that the close cannot reset the answer away.)
    let mut refused = String::new();
    let _ = connect_from("127.0.0.1", addr, false).read_to_string(&mut refused);
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    // The first idle connection had a place (it was told nothing), and
    // the server closes it after its 10 s without a byte.
    let (after, read) = wait_closed(
        &mut idle[0],
        b"",
        Duration::from_secs(1),
        Duration::from_secs(40),
    )
    .expect("an idle connection was held for 40 s");
    assert_eq!(read, 0, "the first idle connection was refused");
    assert!(after >= Duration::from_secs(3), "closed at once: {after:?}");
    assert!(server.alive(), "the server died");
    drop(idle);
}

#[test]
fn league_serve_closes_a_slow_loris_and_a_client_that_never_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut server, addr) = league_server(&tmp.path().join("league"));
    // One header byte every 2 s: never a whole header.
    let mut loris = connect_from("127.0.0.1", addr, false);
    let closed = wait_closed(
        &mut loris,
        b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        Duration::from_secs(2),
        Duration::from_secs(40),
    );
    assert!(closed.is_some(), "a slow-loris client was held for 40 s");
    // Thousands of pipelined requests whose answers are never read.
    let mut deaf = connect_from("127.0.0.2", addr, true);
    let requests = "GET /league HTTP/1.1\r\nHost: x\r\n\r\n".repeat(20_000);
    flood(&mut deaf, requests.as_bytes(), Duration::from_secs(2));
    assert!(
        dropped_within(&mut deaf, Duration::from_secs(40)),
        "a client that never reads was held for 40 s"
    );
    // And the page still answers.
    let status = get_status(connect_from("127.0.0.3", addr, false), "/");
    assert!(status.contains("200"), "{status}");
    assert!(server.alive(), "the server died");
}
