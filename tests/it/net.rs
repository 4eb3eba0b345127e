//! `referee serve` and `referee connect` on loopback: full matches, a text
//! session with bad input, disconnects, forfeits, many clients and refusals.
//! Every server is a child process killed by [`Server`]'s `Drop`, even when
//! a test fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use referee::net::{play_stream, ConnectConfig};
use referee::play::record::GameRecord;

use crate::common::{referee, stderr, stdout};

/// A running `referee serve`; killed and reaped when dropped.
struct Server {
    child: Child,
    addr: String,
    out: PathBuf,
    /// Removes the output folder when the server is dropped.
    _tmp: tempfile::TempDir,
}

impl Server {
    /// Starts `referee serve <args> --listen 127.0.0.1:0 --out <fresh dir>`
    /// and reads the bound address from its first stdout line.
    fn start(name: &str, args: &[&str]) -> Server {
        let tmp = tempfile::Builder::new()
            .prefix(&format!("referee-net-{name}-"))
            .tempdir()
            .expect("temp dir");
        let out = tmp.path().join("out");
        let mut child = referee()
            .arg("serve")
            .args(args)
            .args(["--listen", "127.0.0.1:0", "--quiet", "--out"])
            .arg(&out)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("referee serve starts");
        let mut first = String::new();
        if let Some(so) = child.stdout.take() {
            let _ = BufReader::new(so).read_line(&mut first);
        }
        let addr = first
            .trim()
            .strip_prefix("listening on ")
            .map(str::to_string);
        let mut server = Server {
            child,
            addr: String::new(),
            out,
            _tmp: tmp,
        };
        match addr {
            Some(a) => server.addr = a,
            None => panic!("serve did not print its address, got '{first}'"),
        }
        server
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(&self.addr).expect("connects to the server");
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }

    /// The records written so far.
    fn records(&self) -> Vec<GameRecord> {
        let text = std::fs::read_to_string(self.out.join("games.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }

    /// Waits (bounded) until `want` records matching `pred` are written.
    fn wait_records(&self, want: usize, pred: impl Fn(&GameRecord) -> bool) -> Vec<GameRecord> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let recs = self.records();
            if recs.iter().filter(|r| pred(r)).count() >= want || Instant::now() > deadline {
                return recs;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn assert_alive(&mut self) {
        assert!(
            self.child.try_wait().expect("wait works").is_none(),
            "the server died"
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A line-oriented test client.
struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Client {
    fn new(s: TcpStream) -> Client {
        Client {
            writer: s.try_clone().unwrap(),
            reader: BufReader::new(s),
        }
    }

    fn line(&mut self) -> String {
        let mut l = String::new();
        self.reader
            .read_line(&mut l)
            .expect("a line from the server");
        l
    }

    fn send(&mut self, text: &str) {
        self.writer.write_all(text.as_bytes()).unwrap();
    }

    /// Reads until the text read so far ends with one of `ends` (or EOF).
    fn until(&mut self, ends: &[&str]) -> String {
        let mut got = Vec::new();
        let mut byte = [0u8; 1];
        loop {
            match self.reader.read(&mut byte) {
                Ok(0) => break,
                Ok(_) => got.push(byte[0]),
                Err(e) => panic!(
                    "reading: {e}; got so far: {}",
                    String::from_utf8_lossy(&got)
                ),
            }
            let text = String::from_utf8_lossy(&got);
            if ends.iter().any(|e| text.ends_with(e)) {
                break;
            }
        }
        String::from_utf8_lossy(&got).into_owned()
    }

    fn rest(&mut self) -> String {
        let mut s = String::new();
        let _ = self.reader.read_to_string(&mut s);
        s
    }
}

#[test]
fn optimal_against_optimal_for_500_rounds_is_250_all() {
    let server = Server::start(
        "500",
        &["tictactoe", "--bot", "optimal", "--protocol", "v1"],
    );
    let o = referee()
        .args(["connect", &server.addr, "--bot", "optimal"])
        .output()
        .expect("connect runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("500 rounds of tictactoe: 0 won, 500 drawn, 0 lost"),
        "{out}"
    );
    assert!(
        out.contains("Final score: 250 : 250 (optimal vs server)"),
        "{out}"
    );
    let recs = server.records();
    assert_eq!(recs.len(), 500);
    assert!(recs
        .iter()
        .all(|r| r.winner.is_none() && r.moves.len() == 9));
    assert!(recs
        .iter()
        .all(|r| r.client.as_deref() == Some(r.players[0].as_str())
            || r.client.as_deref() == Some(r.players[1].as_str())));
    // Seats alternate: the client is player 1 in every other round.
    let client = recs[0].client.clone().unwrap();
    let as_p1 = recs.iter().filter(|r| r.players[0] == client).count();
    assert_eq!(as_p1, 250);
}

#[test]
fn text_session_with_bad_input() {
    let server = Server::start("text", &["tictactoe", "--bot", "optimal", "--rounds", "2"]);
    let mut c = Client::new(server.connect());
    let greeting = c.until(&["): "]);
    assert!(
        greeting.contains("tictactoe against the bot 'optimal', 2 rounds"),
        "{greeting}"
    );
    assert!(greeting.contains("cell number 0-8"), "{greeting}");
    assert!(
        greeting.contains("Round 1 of 2: you are player 1"),
        "{greeting}"
    );
    for (bad, want) in [
        ("name a:b\n", "Error: ':' in a name"),
        ("name  bob \n", "Your rounds are recorded as 'bob'."),
        ("x\n", "Error: bad tictactoe move 'x'"),
        ("99\n", "Error: bad tictactoe move '99'"),
        ("\n", "Error: empty line"),
        (
            &format!("{}\n", "7".repeat(10_000)),
            "Error: line too long (at most 4096 bytes)",
        ),
    ] {
        c.send(bad);
        let got = c.until(&["): "]);
        assert!(
            got.contains(want),
            "after {:?}: {got}",
            &bad[..bad.len().min(10)]
        );
        assert!(got.ends_with("Your move (player 1): "), "{got}");
    }
    // Try the cells in order: occupied ones are errors, free ones are moves.
    let mut transcript = String::new();
    let mut cell = 0;
    while !transcript.contains("Final score") {
        c.send(&format!("{cell}\n"));
        cell = (cell + 1) % 9;
        let got = c.until(&["): ", "Thanks for playing!\n"]);
        assert!(!got.is_empty(), "the server closed early: {transcript}");
        transcript.push_str(&got);
    }
    assert!(transcript.contains("You play 0:\n X |"), "{transcript}");
    assert!(transcript.contains("The server plays "), "{transcript}");
    assert!(transcript.contains("Error: illegal move"), "{transcript}");
    assert!(transcript.contains("Round 1 of 2: "), "{transcript}");
    assert!(transcript.contains("Round 2 of 2: you are player 2; the server moves first"));
    let results: Vec<&str> = transcript
        .lines()
        .filter(|l| l.contains(". Score: you "))
        .collect();
    assert_eq!(results.len(), 2, "{transcript}");
    // The optimal bot never loses.
    assert!(
        results
            .iter()
            .all(|l| l.contains("you lose") || l.contains("draw")),
        "{results:?}"
    );
    assert!(
        transcript.contains("Final score after 2 rounds: you "),
        "{transcript}"
    );
    assert_eq!(c.rest(), "", "the server closes after the summary");
    let recs = server.wait_records(2, |_| true);
    assert_eq!(recs.len(), 2);
    // Recorded under the name given, the address kept aside.
    assert!(recs.iter().all(|r| r.players.contains(&"bob".to_string())));
    assert!(recs
        .iter()
        .all(|r| r.client.as_deref().is_some_and(|c| c.contains(':'))));
}

#[test]
fn named_connections_are_one_player_in_the_report() {
    let server = Server::start(
        "names",
        &[
            "tictactoe",
            "--bot",
            "random",
            "--rounds",
            "2",
            "--protocol",
            "v1",
        ],
    );
    for _ in 0..2 {
        let o = referee()
            .args(["connect", &server.addr, "--bot", "optimal", "--name", "ada"])
            .output()
            .expect("connect runs");
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let r = play_stream(server.connect(), &ConnectConfig::new("optimal")).unwrap();
    assert_eq!(r.score.games(), 2);
    let recs = server.wait_records(6, |_| true);
    assert_eq!(recs.len(), 6);
    let st = referee::play::standings::Standings::from_records(&recs);
    let ranked = st.ranked();
    let names: Vec<&str> = ranked.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let ada = ranked.iter().find(|b| b.name == "ada").expect("ada plays");
    assert_eq!(ada.total.games(), 4);
    // The report shows the server's settings.
    let o = crate::common::run(&["report", server.out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(server.out.join("report.html")).unwrap();
    for want in [
        "[\"Format\",\"server (v1 protocol)\"]",
        "[\"Rounds per connection\",\"2\"]",
        "\"name\":\"ada\"",
    ] {
        assert!(html.contains(want), "{want}");
    }
    // A bad name is refused before connecting.
    let o = referee()
        .args(["connect", &server.addr, "--bot", "optimal", "--name", "a:b"])
        .output()
        .expect("connect runs");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--name"), "{}", stderr(&o));
}

#[test]
fn text_client_that_stays_silent_is_dropped() {
    let server = Server::start(
        "idle",
        &["tictactoe", "--bot", "random", "--idle-timeout-s", "1"],
    );
    let mut c = Client::new(server.connect());
    c.until(&["): "]);
    let rest = c.rest();
    assert!(
        rest.contains("No input for 1 s: you forfeit this round"),
        "{rest}"
    );
    let recs = server.wait_records(1, |_| true);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].termination.name(), "timeout");
    assert_eq!(recs[0].winner, Some(referee::game::Seat::Two));
}

#[test]
fn disconnect_mid_round_is_a_forfeit_and_others_play_on() {
    let mut server = Server::start(
        "disconnect",
        &[
            "tictactoe",
            "--bot",
            "optimal",
            "--protocol",
            "v1",
            "--rounds",
            "4",
        ],
    );
    let quitter = {
        let mut c = Client::new(server.connect());
        assert_eq!(c.line(), "begin tictactoe 1 1000\n");
        assert_eq!(c.line(), "turn .........\n");
        c.send("4\n");
        let turn = c.line();
        assert!(turn.starts_with("turn ") && turn.contains('X'), "{turn}");
        c.writer.local_addr().unwrap().to_string()
        // Dropped here: the client leaves in the middle of round 1.
    };
    let mut cfg = ConnectConfig::new("optimal");
    cfg.seed = 3;
    let report = play_stream(server.connect(), &cfg).expect("a second client plays");
    assert_eq!(report.score.games(), 4);
    assert_eq!(report.score.draws, 4);
    let recs = server.wait_records(1, |r| r.client.as_deref() == Some(quitter.as_str()));
    let mine: Vec<&GameRecord> = recs
        .iter()
        .filter(|r| r.client.as_deref() == Some(quitter.as_str()))
        .collect();
    assert_eq!(mine.len(), 1, "{recs:?}");
    assert_eq!(mine[0].termination.name(), "crash");
    assert_eq!(
        mine[0].winner,
        Some(referee::game::Seat::Two),
        "the client was player 1 and forfeits"
    );
    assert_eq!(mine[0].moves.len(), 2);
    let f = mine[0].forfeit.as_ref().expect("forfeit details");
    assert!(f.detail.contains("disconnected"), "{}", f.detail);
    server.assert_alive();
}

#[test]
fn v1_timeouts_and_garbage_are_forfeits() {
    let server = Server::start(
        "v1forfeit",
        &[
            "tictactoe",
            "--bot",
            "random",
            "--protocol",
            "v1",
            "--rounds",
            "3",
            "--time-ms",
            "200",
            "--startup-ms",
            "0",
        ],
    );
    let mut c = Client::new(server.connect());
    assert_eq!(c.line(), "begin tictactoe 1 200\n");
    assert_eq!(c.line(), "turn .........\n");
    c.send("hello\n");
    assert_eq!(c.line(), "end loss\n");
    // Garbage forfeits the round only; the match goes on.
    assert_eq!(c.line(), "begin tictactoe 2 200\n");
    assert!(c.line().starts_with("turn "));
    // Silence past the limit: a timeout, then the connection closes.
    assert_eq!(c.line(), "end loss\n");
    assert_eq!(c.rest(), "");
    let recs = server.wait_records(2, |_| true);
    let reasons: Vec<&str> = recs.iter().map(|r| r.termination.name()).collect();
    assert_eq!(reasons, ["malformed", "timeout"]);
    let f = recs[0].forfeit.as_ref().unwrap();
    assert_eq!(f.line.as_deref(), Some("hello"));
    let t = recs[1].forfeit.as_ref().unwrap();
    assert!(t.time_us >= 200_000, "{t:?}");
}

#[test]
fn two_hundred_clients_play_twenty_rounds_each() {
    let mut server = Server::start(
        "many",
        &[
            "tictactoe",
            "--bot",
            "optimal",
            "--protocol",
            "v1",
            "--rounds",
            "20",
            "--max-clients",
            "200",
            "--max-per-address",
            "200",
        ],
    );
    // Every connection is open before any plays: 200 matches at once.
    let streams: Vec<TcpStream> = (0..200).map(|_| server.connect()).collect();
    let handles: Vec<_> = streams
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            std::thread::spawn(move || {
                let mut cfg = ConnectConfig::new("optimal");
                cfg.seed = i as u64;
                play_stream(s, &cfg).map_err(|e| format!("client {i}: {e:#}"))
            })
        })
        .collect();
    for h in handles {
        let report = h.join().expect("client thread").expect("no client error");
        assert_eq!(report.score.games(), 20);
        assert_eq!(report.score.draws, 20);
        assert_eq!(report.local_forfeits, 0);
    }
    let recs = server.wait_records(4000, |_| true);
    assert_eq!(recs.len(), 4000);
    assert!(recs.iter().all(|r| r.forfeit.is_none()));
    server.assert_alive();
}

#[test]
fn extra_clients_are_refused_with_a_line() {
    let mut server = Server::start(
        "full",
        &[
            "tictactoe",
            "--bot",
            "optimal",
            "--protocol",
            "v1",
            "--max-clients",
            "1",
        ],
    );
    let mut first = Client::new(server.connect());
    assert!(first.line().starts_with("begin tictactoe 1 "));
    let mut extra = Client::new(server.connect());
    let refusal = extra.line();
    assert!(
        refusal.starts_with("error server full: at most 1 clients"),
        "{refusal}"
    );
    assert_eq!(extra.rest(), "");
    // `connect` says the same and fails.
    let o = referee()
        .args(["connect", &server.addr, "--bot", "optimal"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("server full"), "{}", stderr(&o));
    // Once the first client leaves, its slot is free again.
    drop(first);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut c = Client::new(server.connect());
        let l = c.line();
        if l.starts_with("begin ") {
            break;
        }
        assert!(Instant::now() < deadline, "the slot was never freed: {l}");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.assert_alive();
}

#[test]
fn notakto_and_uttt_over_v1() {
    for (game, extra, bot) in [
        ("notakto", ["--boards", "2"], "optimal"),
        ("uttt", ["--seed", "4"], "greedy"),
    ] {
        let server = Server::start(
            game,
            &[
                &[game, "--bot", "random", "--protocol", "v1", "--rounds", "4"],
                &extra[..],
            ]
            .concat(),
        );
        let o = referee()
            .args(["connect", &server.addr, "--bot", bot, "--game", game])
            .output()
            .unwrap();
        assert!(o.status.success(), "{game}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(out.contains(&format!("4 rounds of {game}: ")), "{out}");
        assert!(out.contains("Final score: ") && out.contains(&format!("({bot} vs server)")));
        let recs = server.records();
        assert_eq!(recs.len(), 4, "{game}");
        assert!(
            recs.iter()
                .all(|r| r.game.name() == game && r.forfeit.is_none()),
            "{recs:?}"
        );
        if game == "notakto" {
            assert!(
                recs.iter().all(|r| r.start == "........./........."),
                "{recs:?}"
            );
        }
    }
}

#[test]
fn uttt_text_session_explains_bad_moves() {
    let server = Server::start("uttt-text", &["uttt", "--bot", "random", "--rounds", "3"]);
    let mut c = Client::new(server.connect());
    let greeting = c.until(&["): "]);
    assert!(
        greeting.contains("uttt against the bot 'random', 3 rounds"),
        "{greeting}"
    );
    assert!(
        greeting.contains("board number and a cell number"),
        "{greeting}"
    );
    c.send("4 4\n");
    let got = c.until(&["): "]);
    assert!(
        got.contains("You play 4 4:") && got.contains("The server plays 4 "),
        "{got}"
    );
    c.send("9 9\n");
    assert!(c.until(&["): "]).contains("Error: bad uttt move '9 9'"));
    c.send("4 4\n");
    let got = c.until(&["): "]);
    assert!(got.contains("Error: illegal move 4 4"), "{got}");
    c.send("quit\n");
    let rest = c.rest();
    assert!(
        rest.contains("Round 1 of 3: you lose (you forfeit: crash)"),
        "{rest}"
    );
    assert!(
        rest.contains("Final score after 1 rounds: you 0 : server 1"),
        "{rest}"
    );
    let recs = server.wait_records(1, |_| true);
    assert_eq!(recs.len(), 1);
    assert_eq!(
        recs[0].forfeit.as_ref().map(|f| f.detail.as_str()),
        Some("the client quit")
    );
}

#[test]
fn external_bots_on_both_ends() {
    let server = Server::start(
        "external",
        &[
            "tictactoe",
            "--bot",
            "python3 bots/python/random_bot.py",
            "--protocol",
            "v1",
            "--rounds",
            "4",
        ],
    );
    let o = referee()
        .args([
            "connect",
            &server.addr,
            "--bot",
            "bots/python-heuristic.toml",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("4 rounds of tictactoe: "), "{out}");
    assert!(
        out.contains("(bots/python-heuristic.toml vs server)"),
        "{out}"
    );
    let recs = server.records();
    assert_eq!(recs.len(), 4);
    assert!(recs.iter().all(|r| r.forfeit.is_none()), "{recs:?}");
    assert!(recs.iter().all(|r| r
        .players
        .contains(&"python3 bots/python/random_bot.py".to_string())));
}

#[test]
fn connections_that_never_speak_are_not_rounds() {
    for protocol in ["v1", "text"] {
        let server = Server::start(
            &format!("silent-{protocol}"),
            &[
                "tictactoe",
                "--bot",
                "random",
                "--protocol",
                protocol,
                "--rounds",
                "2",
                "--max-per-address",
                "1000",
            ],
        );
        // Connect and close at once, as a port scan or a health check does.
        for _ in 0..100 {
            drop(server.connect());
        }
        if protocol == "v1" {
            let report = play_stream(server.connect(), &ConnectConfig::new("optimal"))
                .expect("a real client plays");
            assert_eq!(report.score.games(), 2);
        } else {
            let mut c = Client::new(server.connect());
            c.until(&["): "]);
            c.send("quit\n");
            assert!(c.rest().contains("Goodbye"));
        }
        // Only the real client's rounds are recorded.
        let want = if protocol == "v1" { 2 } else { 1 };
        std::thread::sleep(Duration::from_millis(300));
        let recs = server.wait_records(want, |_| true);
        assert_eq!(recs.len(), want, "{protocol}: {recs:?}");
    }
}

#[test]
fn one_address_cannot_take_every_slot() {
    let mut server = Server::start(
        "peraddr",
        &[
            "tictactoe",
            "--bot",
            "random",
            "--protocol",
            "v1",
            "--time-ms",
            "20000",
            "--max-per-address",
            "2",
        ],
    );
    // Two idle clients hold their slots...
    let mut idle: Vec<Client> = (0..2).map(|_| Client::new(server.connect())).collect();
    for c in &mut idle {
        assert!(c.line().starts_with("begin "));
    }
    // ...and a third from the same address is refused with a line saying why.
    let mut extra = Client::new(server.connect());
    let refusal = extra.line();
    assert!(
        refusal.starts_with("error too many connections from 127.0.0.1"),
        "{refusal}"
    );
    drop(idle);
    server.assert_alive();
}

#[test]
fn connect_gives_up_on_a_server_that_never_speaks() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let t = Instant::now();
    let res = referee()
        .args(["connect", &addr, "--bot", "random", "--timeout-s", "1"])
        .output()
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(10));
    assert_eq!(res.status.code(), Some(2));
    assert!(
        stderr(&res).contains("sent nothing for 1 s"),
        "{}",
        stderr(&res)
    );
    drop(listener);
}

#[test]
fn a_uttt_server_under_the_codingame_rule_records_it() {
    let server = Server::start(
        "uttt-rules",
        &[
            "uttt",
            "--bot",
            "random",
            "--protocol",
            "v1",
            "--rounds",
            "4",
            "--rules",
            "codingame",
        ],
    );
    let o = referee()
        .args(["connect", &server.addr, "--bot", "greedy", "--game", "uttt"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = server.records();
    assert_eq!(recs.len(), 4);
    assert!(
        recs.iter()
            .all(|r| r.rules == referee::game::Rules::CodinGame),
        "{recs:?}"
    );
}
