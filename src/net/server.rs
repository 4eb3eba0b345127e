//! The server: an accept loop, one thread per client (bounded by
//! `max_clients`), and one match loop shared by both protocols.

use std::collections::HashMap;
use std::io::Write;
use std::marker::PhantomData;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context;

use super::remote::{Conn, Remote, TextRemote, V1Remote};
use super::Protocol;
use crate::bot::{Bot, BotSpec, BuiltinBots, TimeControl};
use crate::game::{GameOptions, Seat};
use crate::play::journal::{BotAbout, RunFolder, RunSettings};
use crate::play::record::GameRecord;
use crate::play::referee::{play_game, GameSetup};
use crate::play::standings::Wdl;
use crate::play::text::format_points;
use crate::play::Log;
use crate::protocol::BotResult;
use crate::seed;

/// Everything that fixes how a server plays its clients.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Rounds per connection.
    pub rounds: u32,
    /// The protocol every client speaks.
    pub protocol: Protocol,
    /// Per-move limit for v1 clients (plus start-up on each round's first
    /// turn), and the time control of the server's own bot.
    pub time: TimeControl,
    /// A text client silent this long forfeits the round and is dropped.
    pub idle_timeout: Duration,
    /// Clients served at once; more are refused with a line saying so.
    pub max_clients: usize,
    /// Clients served at once from one IP address, so that idle clients
    /// from one machine cannot take every slot.
    pub max_per_address: usize,
    /// Longest accepted input line in bytes.
    pub max_line: usize,
    /// Where `games.jsonl` is written (nothing is written when `None`).
    pub out: Option<PathBuf>,
    /// Game options (Notakto boards).
    pub options: GameOptions,
    /// Master seed: round r of connection c gets `derive(seed, [c, r])`.
    pub seed: u64,
    /// Where the per-connection log lines go (nowhere by default).
    pub log: Log,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            rounds: 500,
            protocol: Protocol::Text,
            time: TimeControl::default(),
            idle_timeout: Duration::from_secs(300),
            max_clients: 256,
            max_per_address: 16,
            max_line: 4096,
            out: None,
            options: GameOptions::default(),
            seed: 0,
            log: Log::default(),
        }
    }
}

/// The run folder of `--out`, and whether a failed write was reported
/// already (said once: a full disk would otherwise flood the log).
struct Journal {
    folder: RunFolder,
    failed: AtomicBool,
    log: Log,
}

impl Journal {
    fn open(dir: &std::path::Path, log: &Log) -> anyhow::Result<Journal> {
        let (folder, games) = RunFolder::open(dir)?;
        for n in &games.notes {
            log.note(n);
        }
        Ok(Journal {
            folder,
            failed: AtomicBool::new(false),
            log: log.clone(),
        })
    }

    fn append(&self, rec: &GameRecord) {
        if let Err(e) = self.folder.append(rec) {
            if !self.failed.swap(true, Ordering::Relaxed) {
                // Clients still play (they came for that); the folder keeps
                // the games up to the failure, and no later one.
                let text = match e.downcast_ref::<crate::play::journal::AppendFailed>() {
                    Some(f) => format!(
                        "cannot write {}: {}; it ends on its last complete game, and the \
                         games from now on are not kept",
                        f.path.display(),
                        f.error
                    ),
                    None => format!("{e:#}"),
                };
                self.log.note(&text);
            }
        }
    }
}

struct Shared<G> {
    spec: BotSpec,
    bot_name: String,
    cfg: ServeConfig,
    journal: Option<Journal>,
    active: AtomicUsize,
    /// Connections being served, by client address.
    per_address: Mutex<HashMap<IpAddr, usize>>,
    next_conn: AtomicU64,
    next_game: AtomicU64,
    stop: AtomicBool,
    game: PhantomData<fn() -> G>,
}

/// A bound server for game `G`, not yet accepting.
pub struct Server<G: BuiltinBots> {
    listener: TcpListener,
    shared: Arc<Shared<G>>,
}

/// A server running on its own thread; [`ServerHandle::shutdown`] stops it.
pub struct ServerHandle {
    addr: SocketAddr,
    stop: Arc<dyn Fn() + Send + Sync>,
    thread: Option<JoinHandle<()>>,
}

impl ServerHandle {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting and waits for the accept loop to end. Matches in
    /// progress finish on their own threads.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        (self.stop)();
        // Wake the blocked accept; if the connect fails the listener is gone.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop_now();
        }
    }
}

/// A connection's place in the counts: released when its thread ends, even
/// by a panic in a bot.
struct Slot<G> {
    sh: Arc<Shared<G>>,
    ip: IpAddr,
}

impl<G> Slot<G> {
    /// Takes a place for a client from `ip`, or says why there is none.
    fn take(sh: &Arc<Shared<G>>, ip: IpAddr) -> Result<Slot<G>, String> {
        let cfg = &sh.cfg;
        let mut per = sh.per_address.lock().unwrap_or_else(|p| p.into_inner());
        let mine = per.entry(ip).or_insert(0);
        if *mine >= cfg.max_per_address {
            return Err(format!(
                "too many connections from {ip}: at most {} at once; try again later",
                cfg.max_per_address
            ));
        }
        if sh.active.fetch_add(1, Ordering::AcqRel) >= cfg.max_clients {
            sh.active.fetch_sub(1, Ordering::AcqRel);
            return Err(format!(
                "server full: at most {} clients at once; try again later",
                cfg.max_clients
            ));
        }
        *mine += 1;
        Ok(Slot {
            sh: Arc::clone(sh),
            ip,
        })
    }
}

impl<G> Drop for Slot<G> {
    fn drop(&mut self) {
        self.sh.active.fetch_sub(1, Ordering::AcqRel);
        let mut per = self
            .sh
            .per_address
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = per.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                per.remove(&self.ip);
            }
        }
    }
}

impl<G: BuiltinBots> Server<G> {
    /// Listens on `addr` (port 0: any free port) with the server's bot
    /// `spec`, shown to clients as `bot_name`.
    pub fn bind(
        addr: &str,
        spec: BotSpec,
        bot_name: &str,
        cfg: ServeConfig,
    ) -> anyhow::Result<Self> {
        cfg.options.validate()?;
        use crate::play::SettingError;
        for (setting, value) in [
            ("rounds", cfg.rounds as u64),
            ("max-clients", cfg.max_clients as u64),
            ("max-per-address", cfg.max_per_address as u64),
        ] {
            if value == 0 {
                return Err(SettingError::new(setting, "must be at least 1").into());
            }
        }
        let listener =
            TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
        let journal = match &cfg.out {
            Some(dir) => {
                let j = Journal::open(dir, &cfg.log)?;
                j.folder
                    .write_settings(&settings::<G>(&spec, bot_name, &cfg))?;
                Some(j)
            }
            None => None,
        };
        Ok(Server {
            listener,
            shared: Arc::new(Shared {
                spec,
                bot_name: bot_name.to_string(),
                cfg,
                journal,
                active: AtomicUsize::new(0),
                per_address: Mutex::new(HashMap::new()),
                next_conn: AtomicU64::new(0),
                next_game: AtomicU64::new(0),
                stop: AtomicBool::new(false),
                game: PhantomData,
            }),
        })
    }

    /// The address actually bound (the real port when 0 was asked for).
    pub fn local_addr(&self) -> anyhow::Result<SocketAddr> {
        Ok(self.listener.local_addr()?)
    }

    /// Accepts clients until stopped, each on its own thread.
    pub(crate) fn run(&self) {
        let shared = &self.shared;
        for incoming in self.listener.incoming() {
            if shared.stop.load(Ordering::Acquire) {
                break;
            }
            let stream = match incoming {
                Ok(s) => s,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little
                    // rather than spin, and keep serving.
                    shared.cfg.log.note(&format!("accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
            };
            let Ok(peer) = stream.peer_addr() else {
                continue;
            };
            // Taken here, before the next accept, and released when the
            // connection's thread ends (or could not start).
            let slot = match Slot::take(shared, peer.ip()) {
                Ok(slot) => slot,
                Err(why) => {
                    shared.cfg.log.note(&format!("refused {peer}: {why}"));
                    refuse(
                        stream,
                        &crate::protocol::Command::<G>::Error(why).to_string(),
                    );
                    continue;
                }
            };
            let conn_id = shared.next_conn.fetch_add(1, Ordering::Relaxed);
            let spawned = std::thread::Builder::new()
                .name(format!("client-{conn_id}"))
                .spawn(move || {
                    serve_client(&slot.sh, stream, peer, conn_id);
                    drop(slot);
                });
            if let Err(e) = spawned {
                shared
                    .cfg
                    .log
                    .note(&format!("cannot start a thread for {peer}: {e}"));
            }
        }
    }

    /// Runs the accept loop on a new thread.
    pub fn spawn(self) -> anyhow::Result<ServerHandle> {
        let addr = self.local_addr()?;
        let shared = Arc::clone(&self.shared);
        let thread = std::thread::Builder::new()
            .name("accept".into())
            .spawn(move || self.run())?;
        Ok(ServerHandle {
            addr,
            stop: Arc::new(move || shared.stop.store(true, Ordering::Release)),
            thread: Some(thread),
        })
    }
}

/// What the report shows about a server's run (`run.json`): its clients
/// are not known in advance, so the only bot is the server's own.
fn settings<G: BuiltinBots>(spec: &BotSpec, bot_name: &str, cfg: &ServeConfig) -> RunSettings {
    let mut s = RunSettings::new::<G>("server", &cfg.options);
    s.rounds = Some(u64::from(cfg.rounds));
    s.protocol = Some(cfg.protocol.name().to_string());
    s.time_ms = Some(cfg.time.move_ms);
    s.startup_ms = Some(cfg.time.startup_ms);
    s.seed = Some(cfg.seed);
    s.bots = vec![BotAbout::of::<G>(bot_name, spec)];
    s
}

/// Sends one refusal line and closes; bounded so a refused client cannot hold
/// up the accept loop.
fn refuse(stream: TcpStream, line: &str) {
    let mut stream = stream;
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = stream.write_all(format!("{line}\n").as_bytes());
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

fn serve_client<G: BuiltinBots>(sh: &Shared<G>, stream: TcpStream, peer: SocketAddr, conn_id: u64) {
    let cfg = &sh.cfg;
    // Moves are tiny and latency matters more than packet count.
    let _ = stream.set_nodelay(true);
    let conn = match Conn::new(stream, cfg.max_line) {
        Ok(c) => c,
        Err(e) => {
            cfg.log.note(&format!("{peer}: {e}"));
            return;
        }
    };
    cfg.log
        .note(&format!("{peer} connected (client {conn_id})"));
    let score = match cfg.protocol {
        Protocol::V1 => play_match(sh, peer, conn_id, V1Remote::new(conn, G::KIND, cfg.time)),
        Protocol::Text => {
            let remote = TextRemote::<G>::new(conn, cfg.idle_timeout, &sh.bot_name, &cfg.options);
            play_match(sh, peer, conn_id, remote)
        }
    };
    cfg.log.note(&format!(
        "{peer} done after {} rounds: client {} : server {}",
        score.games(),
        format_points(score.points()),
        format_points(score.opponent_points())
    ));
}

/// Plays up to `rounds` rounds against `remote`, recording each one, and
/// returns the client's score.
fn play_match<G: BuiltinBots, R: Remote<G>>(
    sh: &Shared<G>,
    peer: SocketAddr,
    conn_id: u64,
    mut remote: R,
) -> Wdl {
    let cfg = &sh.cfg;
    let mut score = Wdl::default();
    remote.greet(cfg.rounds);
    let client_name = peer.to_string();
    let mut announced = false;
    for round in 0..cfg.rounds {
        if !remote.is_open() {
            break;
        }
        // Seats alternate: the client moves first in odd rounds (1, 3, ...).
        let seat = if round % 2 == 0 { Seat::One } else { Seat::Two };
        let game_seed = seed::derive(cfg.seed, &[conn_id, u64::from(round)]);
        let start = G::start(&cfg.options);
        let id = sh.next_game.fetch_add(1, Ordering::Relaxed);
        let mut setup = GameSetup::new(id, game_seed, start.clone());
        setup.time = cfg.time;
        let bot_seed = seed::derive(game_seed, &[u64::from(seat.other().number())]);
        let mut bot = match sh.spec.instantiate::<G>(bot_seed, &cfg.time, None) {
            Ok(b) => b,
            Err(e) => {
                cfg.log
                    .note(&format!("the server's bot cannot be made: {e}"));
                break;
            }
        };
        remote.start_round(round + 1, seat, &start);
        let mut names = [sh.bot_name.clone(), sh.bot_name.clone()];
        names[seat.index()] = client_name.clone();
        let bots: [&mut dyn Bot<G>; 2] = match seat {
            Seat::One => [&mut remote, &mut *bot],
            Seat::Two => [&mut *bot, &mut remote],
        };
        let mut rec = play_game(&setup, bots, names);
        if crate::play::interrupt::interrupted().is_some() {
            // The server is stopping and may have killed its own bot.
            break;
        }
        let client_left = rec
            .forfeit
            .as_ref()
            .is_some_and(|f| f.seat == seat && f.reason == crate::protocol::ForfeitReason::Crash);
        if client_left && !remote.has_spoken() {
            // Connected and gone without a word (a port scan, a health
            // check): not a player, so not a round.
            break;
        }
        // A client that declared a name plays under it, so that all its
        // connections count as one player; the address stays in `client`.
        // The server's bot's own name is not taken.
        if let Some(n) = remote.declared_name().filter(|n| *n != sh.bot_name) {
            if !std::mem::replace(&mut announced, true) {
                cfg.log.note(&format!("{peer} plays as '{n}'"));
            }
            rec.players[seat.index()] = n.to_string();
        }
        rec.client = Some(client_name.clone());
        if let Some(j) = &sh.journal {
            j.append(&rec);
        }
        score.record(BotResult::for_seat(rec.outcome(), seat));
        remote.after_round(round + 1, &rec, seat, &score);
    }
    remote.finish(&score);
    score
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;
    use crate::net::{play_stream, ConnectConfig};

    #[test]
    fn in_process_match_is_recorded_line_by_line_and_shutdown_stops_accepting() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let spec = BotSpec::resolve::<TicTacToe>("random").unwrap();
        let cfg = ServeConfig {
            rounds: 6,
            protocol: Protocol::V1,
            out: Some(dir.clone()),
            log: Log::default(),
            seed: 5,
            ..ServeConfig::default()
        };
        let server = Server::<TicTacToe>::bind("127.0.0.1:0", spec, "random", cfg)
            .unwrap()
            .spawn()
            .unwrap();
        let addr = server.addr();
        let report = play_stream(
            TcpStream::connect(addr).unwrap(),
            &ConnectConfig::new("optimal"),
        )
        .unwrap();
        assert_eq!(report.score.games(), 6);
        assert_eq!(report.score.losses, 0, "optimal never loses");
        server.shutdown();
        let text = std::fs::read_to_string(crate::play::journal::games_path(&dir)).unwrap();
        let recs: Vec<GameRecord> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(recs.len(), 6);
        let ids: Vec<u64> = recs.iter().map(|r| r.id).collect();
        assert_eq!(ids, [0, 1, 2, 3, 4, 5]);
        // Distinct seeds per round, and the client named in every record.
        assert_ne!(recs[0].seed, recs[1].seed);
        assert!(recs.iter().all(|r| r.client.is_some()));
        // After shutdown nobody is served any more.
        let served = TcpStream::connect(addr).ok().and_then(|s| {
            s.set_read_timeout(Some(Duration::from_millis(500))).ok()?;
            let mut b = [0u8; 1];
            std::io::Read::read(&mut &s, &mut b).ok().filter(|&n| n > 0)
        });
        assert!(served.is_none());
    }

    #[test]
    fn a_declared_name_gathers_a_client_s_connections_into_one_player() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let spec = BotSpec::resolve::<TicTacToe>("random").unwrap();
        let cfg = ServeConfig {
            rounds: 2,
            protocol: Protocol::V1,
            out: Some(dir.clone()),
            log: Log::default(),
            ..ServeConfig::default()
        };
        let server = Server::<TicTacToe>::bind("127.0.0.1:0", spec, "random", cfg)
            .unwrap()
            .spawn()
            .unwrap();
        let addr = server.addr();
        let mut named = ConnectConfig::new("optimal");
        named.name = Some(" ada ".into());
        // The server's bot's name is not taken: that client keeps its address.
        let mut impostor = ConnectConfig::new("optimal");
        impostor.name = Some("random".into());
        for c in [&named, &named, &ConnectConfig::new("optimal"), &impostor] {
            let r = play_stream(TcpStream::connect(addr).unwrap(), c).unwrap();
            assert_eq!(r.score.games(), 2);
        }
        server.shutdown();
        let recs = crate::play::journal::read_games(&dir).unwrap().records;
        assert_eq!(recs.len(), 8);
        let client = |r: &GameRecord| {
            let seat = r.players.iter().position(|p| p != "random").unwrap();
            r.players[seat].clone()
        };
        let ada: Vec<&GameRecord> = recs.iter().filter(|r| client(r) == "ada").collect();
        assert_eq!(ada.len(), 4);
        // Still told apart by address.
        assert_ne!(ada[0].client, ada[3].client);
        let others: std::collections::BTreeSet<String> =
            recs.iter().map(client).filter(|n| n != "ada").collect();
        assert_eq!(others.len(), 2, "{others:?}");
        assert!(others.iter().all(|n| n.contains(':')));
        let settings = crate::play::journal::read_settings(&dir).unwrap().unwrap();
        assert_eq!(settings.format, "server");
        assert_eq!(settings.rounds, Some(2));
        // A bad name is refused before anything is sent.
        let mut bad = ConnectConfig::new("optimal");
        bad.name = Some("a:b".into());
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let e = play_stream(stream, &bad).unwrap_err().to_string();
        assert!(e.contains("name"), "{e}");
    }
}
