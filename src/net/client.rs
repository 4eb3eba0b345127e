//! A local bot answering a protocol session: `referee connect` plays a
//! remote v1 server over TCP, and `referee engine` answers referee (or
//! another harness) on stdin/stdout. The game comes from the first `begin`
//! line, so neither needs a game option.

use std::io::{BufWriter, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};

use super::line::{LineError, LineReader, TimedRead};
use crate::bot::external::ProcessPool;
use crate::bot::spec::ProcessSettings;
use crate::bot::{Bot, BotSpec, BuiltinBots, TimeControl};
use crate::game::GameKind;
use crate::play::standings::Wdl;
use crate::play::Log;
use crate::protocol::{Command, PositionText, FORFEIT_REPLY};
use crate::{seed, with_game};

/// How long `referee connect` waits by default for any line from the server.
pub(crate) const DEFAULT_SERVER_TIMEOUT: Duration = Duration::from_secs(60);

/// Settings of one session.
#[derive(Clone, Debug)]
pub struct ConnectConfig {
    /// The local bot, as the user named it (built-in or external).
    pub bot: String,
    /// Stop after this many rounds (`None`: until the other side ends).
    pub rounds: Option<u32>,
    /// The game the user expects; a session of another game is an error.
    pub game: Option<GameKind>,
    /// Seed of the local bot: round r gets `derive(seed, [r])`, unless its
    /// begin line carries a seed.
    pub seed: u64,
    /// Longest line accepted.
    pub max_line: usize,
    /// How long to wait for any line (`None`: for ever).
    pub timeout: Option<Duration>,
    /// Where the local bot's forfeits are told (nowhere by default).
    pub log: Log,
    /// How the local bot's process starts (sandbox, environment, reuse).
    pub process: ProcessSettings,
    /// The name to play under (`name NAME`, sent on connecting), so that the
    /// server records every connection of this client as one player.
    pub name: Option<String>,
}

impl ConnectConfig {
    /// Plays `bot` with default settings.
    pub fn new(bot: &str) -> Self {
        ConnectConfig {
            bot: bot.to_string(),
            rounds: None,
            game: None,
            seed: 0,
            max_line: 1 << 20,
            timeout: Some(DEFAULT_SERVER_TIMEOUT),
            log: Log::default(),
            process: ProcessSettings::default(),
            name: None,
        }
    }
}

/// What a finished session tells.
#[derive(Clone, Debug)]
pub struct ClientReport {
    /// The game played.
    pub game: GameKind,
    /// The local bot's score.
    pub score: Wdl,
    /// Turns the local bot could not answer (answered with [`FORFEIT_REPLY`]).
    pub local_forfeits: u32,
    /// For every move sent: µs from just before writing it to the next line
    /// received (the reply move or the end of the round).
    pub latencies_us: Vec<u64>,
}

/// Connects to `addr` and plays until the server ends the match (or
/// `cfg.rounds` rounds are done).
pub fn connect(addr: &str, cfg: &ConnectConfig) -> anyhow::Result<ClientReport> {
    let target = addr
        .to_socket_addrs()
        .with_context(|| format!("bad server address '{addr}' (expected HOST:PORT)"))?
        .next()
        .ok_or_else(|| anyhow!("server address '{addr}' resolves to nothing"))?;
    let stream = TcpStream::connect_timeout(&target, Duration::from_secs(10))
        .with_context(|| format!("cannot connect to {addr}"))?;
    play_stream(stream, cfg)
}

/// Plays on an already connected stream (for callers that open many
/// connections first, like the benchmark).
pub fn play_stream(stream: TcpStream, cfg: &ConnectConfig) -> anyhow::Result<ClientReport> {
    stream.set_nodelay(true)?;
    let reader = LineReader::new(stream.try_clone()?, cfg.max_line);
    let mut writer = BufWriter::new(stream);
    if let Some(name) = &cfg.name {
        let name = super::check_client_name(name)
            .map_err(|e| crate::play::SettingError::new("name", format!("cannot be used: {e}")))?;
        writer
            .write_all(format!("{}\n", crate::protocol::NameLine(name)).as_bytes())
            .and_then(|_| writer.flush())
            .context("cannot send the name to the server")?;
    }
    play_session(reader, writer, cfg, "the server")
}

/// Plays a session read from `reader` and answered on `writer`; `peer`
/// names the other side in messages.
pub fn play_session<R: TimedRead, W: Write>(
    mut reader: LineReader<R>,
    writer: W,
    cfg: &ConnectConfig,
    peer: &str,
) -> anyhow::Result<ClientReport> {
    let first = next_line(&mut reader, cfg, peer)?
        .ok_or_else(|| anyhow!("{peer} closed the connection before saying anything"))?;
    let kind = match first.parse::<Command<PositionText>>() {
        Ok(Command::Begin(b)) => b.game,
        Ok(Command::Error(msg)) => bail!("{peer} refused: {msg}"),
        Ok(_) | Err(_) => bail!(
            "the first line from {peer} is '{}', not a v1 'begin' line (is it a v1 server?)",
            crate::escape::terminal::reply(first.as_bytes())
        ),
    };
    if let Some(want) = cfg.game {
        if want != kind {
            bail!("{peer} plays {kind}, not {want}");
        }
    }
    with_game!(kind, G => session::<G, R, W>(reader, writer, first, cfg, peer))
}

/// The next line, trimmed; `None` when the other side closed.
fn next_line<R: TimedRead>(
    reader: &mut LineReader<R>,
    cfg: &ConnectConfig,
    peer: &str,
) -> anyhow::Result<Option<String>> {
    let deadline = cfg.timeout.map(|t| Instant::now() + t);
    match reader.read_line(deadline) {
        Ok(raw) => Ok(Some(String::from_utf8_lossy(&raw).trim().to_string())),
        Err(LineError::Closed) => Ok(None),
        Err(LineError::Timeout) => Err(crate::play::SettingError::new(
            "timeout-s",
            format!(
                "{peer} sent nothing for {} s; giving up",
                cfg.timeout.map_or(0, |t| t.as_secs())
            ),
        )
        .into()),
        Err(e) => Err(anyhow!("reading from {peer}: {e}")),
    }
}

fn session<G: BuiltinBots, R: TimedRead, W: Write>(
    mut reader: LineReader<R>,
    mut writer: W,
    first: String,
    cfg: &ConnectConfig,
    peer: &str,
) -> anyhow::Result<ClientReport> {
    let mut spec = BotSpec::resolve::<G>(&cfg.bot).with_context(|| format!("bot {}", cfg.bot))?;
    spec.adjust(&cfg.process);
    spec.check_game(G::KIND)?;
    for lack in spec.check_sandbox()? {
        cfg.log
            .note(&format!("warning: best-effort sandbox without {lack}"));
    }
    let mut report = ClientReport {
        game: G::KIND,
        score: Wdl::default(),
        local_forfeits: 0,
        latencies_us: Vec::new(),
    };
    // The local bot keeps its process between rounds if it declares reuse.
    let pool = ProcessPool::new(1);
    let mut pending = Some(first);
    let mut bot: Option<Box<dyn Bot<G>>> = None;
    let mut round = 0u64;
    let mut sent_at: Option<Instant> = None;
    loop {
        let line = match pending.take() {
            Some(l) => l,
            None => match next_line(&mut reader, cfg, peer)? {
                Some(l) => l,
                None => break,
            },
        };
        if let Some(t) = sent_at.take() {
            report.latencies_us.push(t.elapsed().as_micros() as u64);
        }
        let command: Command<G> = line.parse().map_err(|e| {
            anyhow!(
                "{peer} sent '{}': {e}",
                crate::escape::terminal::reply(line.as_bytes())
            )
        })?;
        match command {
            Command::Begin(b) => {
                round += 1;
                if b.game != G::KIND {
                    bail!("{peer} changed the game from {} to {}", G::KIND, b.game);
                }
                let time = TimeControl {
                    move_ms: b.time_ms,
                    ..TimeControl::default()
                };
                let bot_seed = b.seed.unwrap_or_else(|| seed::derive(cfg.seed, &[round]));
                if let Some(mut old) = bot.take() {
                    // A begin without an end: the last round was abandoned.
                    old.end(crate::protocol::BotResult::Draw);
                }
                let mut fresh = spec.instantiate::<G>(bot_seed, &time, Some((&pool, 0)))?;
                match fresh.begin(b.seat, &time) {
                    Ok(()) => bot = Some(fresh),
                    Err(f) => {
                        cfg.log.note(&format!(
                            "round {round}: the local bot could not start: {f}"
                        ));
                        bot = None;
                    }
                }
            }
            Command::Turn(pos) => {
                let reply = match bot.as_mut().map(|b| b.select_move(&pos)) {
                    Some(Ok(mv)) => mv.to_string(),
                    Some(Err(f)) => {
                        cfg.log
                            .note(&format!("round {round}: the local bot forfeits: {f}"));
                        bot = None;
                        report.local_forfeits += 1;
                        FORFEIT_REPLY.to_string()
                    }
                    None => {
                        report.local_forfeits += 1;
                        FORFEIT_REPLY.to_string()
                    }
                };
                // Timed from before the write: on loopback the write itself
                // carries the move through the kernel to the server.
                sent_at = Some(Instant::now());
                writer.write_all(reply.as_bytes())?;
                writer.write_all(b"\n")?;
                writer
                    .flush()
                    .with_context(|| format!("sending a move to {peer}"))?;
            }
            Command::End(result) => {
                report.score.record(result);
                if let Some(mut b) = bot.take() {
                    b.end(result);
                }
                if cfg
                    .rounds
                    .is_some_and(|n| report.score.games() >= u64::from(n))
                {
                    break;
                }
            }
            Command::Error(msg) => bail!("{peer} says: {msg}"),
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::line::Script;

    fn run(input: &str, bot: &str) -> (anyhow::Result<ClientReport>, String) {
        let reader = LineReader::new(Script::lines(input), 1 << 16);
        let mut out = Vec::new();
        let cfg = ConnectConfig::new(bot);
        let r = play_session(reader, &mut out, &cfg, "the test");
        (r, String::from_utf8(out).unwrap())
    }

    #[test]
    fn a_session_of_two_rounds_is_answered_and_scored() {
        let input = "begin tictactoe 1 1000\nturn XX.OO....\nend win\n\
                     begin tictactoe 2 1000 seed=5\nturn X........\nend draw\n";
        let (r, out) = run(input, "optimal");
        let r = r.unwrap();
        assert_eq!((r.score.wins, r.score.draws), (1, 1));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "2");
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn bad_first_lines_and_games_are_errors() {
        let (r, _) = run("hello\n", "random");
        assert!(r.unwrap_err().to_string().contains("not a v1 'begin' line"));
        let (r, _) = run("error server full\n", "random");
        assert!(r.unwrap_err().to_string().contains("refused: server full"));
        let (r, _) = run("begin tictactoe 1 1000\nbegin uttt 1 1000\n", "random");
        assert!(r.unwrap_err().to_string().contains("changed the game"));
        let (r, _) = run("", "random");
        assert!(r
            .unwrap_err()
            .to_string()
            .contains("before saying anything"));
    }
}
