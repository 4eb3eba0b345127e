//! `referee connect`: a local bot plays a remote v1 server. The game comes
//! from the server's first `begin` line, so the client needs no game option.

use std::io::{BufWriter, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};

use super::line::{LineError, LineReader};
use super::Score;
use crate::bot::{Bot, BotResult, BotSpec, BuiltinBots, TimeControl};
use crate::game::{Game, GameKind, Seat};
use crate::record::escape_line;
use crate::{seed, with_game};

/// What a client sends for a turn its bot could not answer: not a move, so
/// the server records a forfeit of that round and the match goes on.
pub const FORFEIT_REPLY: &str = "forfeit";

/// How long the client waits for any line from the server.
const SERVER_SILENCE: Duration = Duration::from_secs(300);

/// Settings of one `connect` session.
#[derive(Clone, Debug)]
pub struct ConnectConfig {
    /// The local bot, as the user named it (built-in or external).
    pub bot: String,
    /// Stop after this many rounds (`None`: until the server ends the match).
    pub rounds: Option<u32>,
    /// The game the user expects; a server playing another game is an error.
    pub game: Option<GameKind>,
    /// Seed of the local bot: round r gets `derive(seed, [r])`.
    pub seed: u64,
    /// Longest line accepted from the server.
    pub max_line: usize,
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
        }
    }
}

/// What a finished session tells.
#[derive(Clone, Debug)]
pub struct ClientReport {
    /// The game the server played.
    pub game: GameKind,
    /// The local bot's score.
    pub score: Score,
    /// Turns the local bot could not answer (answered with [`FORFEIT_REPLY`]).
    pub local_forfeits: u32,
    /// For every move sent: µs from just before writing it to the server's next line
    /// (its reply move or the end of the round), as the client sees it.
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
    let mut reader = LineReader::new(stream.try_clone()?, cfg.max_line);
    let writer = BufWriter::new(stream);
    let first = next_line(&mut reader)?
        .ok_or_else(|| anyhow!("the server closed the connection at once"))?;
    let kind: GameKind = match first.split_once(' ') {
        Some(("begin", rest)) => rest
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .parse()
            .map_err(|e| anyhow!("server's begin line '{first}': {e}"))?,
        Some(("error", msg)) => bail!("the server refused: {msg}"),
        _ => bail!(
            "the server's first line is '{}', not a v1 'begin' line (is it running with --protocol v1?)",
            escape_line(first.as_bytes())
        ),
    };
    if let Some(want) = cfg.game {
        if want != kind {
            bail!("the server plays {kind}, not {want}");
        }
    }
    with_game!(kind, G => session::<G>(reader, writer, first, cfg))
}

/// The next line from the server, trimmed; `None` when it closed the connection.
fn next_line(reader: &mut LineReader) -> anyhow::Result<Option<String>> {
    match reader.read_line(Some(Instant::now() + SERVER_SILENCE)) {
        Ok(raw) => Ok(Some(String::from_utf8_lossy(&raw).trim().to_string())),
        Err(LineError::Closed) => Ok(None),
        Err(e) => Err(anyhow!("reading from the server: {e}")),
    }
}

fn session<G: BuiltinBots>(
    mut reader: LineReader,
    mut writer: BufWriter<TcpStream>,
    first: String,
    cfg: &ConnectConfig,
) -> anyhow::Result<ClientReport> {
    let spec = BotSpec::resolve::<G>(&cfg.bot).with_context(|| format!("--bot {}", cfg.bot))?;
    let mut report = ClientReport {
        game: G::KIND,
        score: Score::default(),
        local_forfeits: 0,
        latencies_us: Vec::new(),
    };
    let mut pending = Some(first);
    let mut bot: Option<Box<dyn Bot<G>>> = None;
    let mut round = 0u64;
    let mut sent_at: Option<Instant> = None;
    loop {
        let line = match pending.take() {
            Some(l) => l,
            None => match next_line(&mut reader)? {
                Some(l) => l,
                None => break,
            },
        };
        if let Some(t) = sent_at.take() {
            report.latencies_us.push(t.elapsed().as_micros() as u64);
        }
        let (cmd, rest) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        match cmd {
            "begin" => {
                round += 1;
                let (seat, time) =
                    parse_begin::<G>(rest).with_context(|| format!("server sent '{line}'"))?;
                let bot_seed = seed::derive(cfg.seed, &[round]);
                let mut b = spec.instantiate::<G>(bot_seed, &time)?;
                match b.begin(seat, &time) {
                    Ok(()) => bot = Some(b),
                    Err(f) => {
                        eprintln!("referee: round {round}: the local bot could not start: {f}");
                        bot = None;
                    }
                }
            }
            "turn" => {
                let pos: G = rest
                    .parse()
                    .map_err(|e| anyhow!("server sent a bad position '{rest}': {e}"))?;
                let reply = match bot.as_mut().map(|b| b.select_move(&pos)) {
                    Some(Ok(mv)) => mv.to_string(),
                    Some(Err(f)) => {
                        eprintln!("referee: round {round}: the local bot forfeits: {f}");
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
                writer.flush().context("sending a move to the server")?;
            }
            "end" => {
                let result = match rest.trim() {
                    "win" => BotResult::Win,
                    "loss" => BotResult::Loss,
                    "draw" => BotResult::Draw,
                    other => bail!("server sent a bad end line: 'end {other}'"),
                };
                report.score.add(result);
                if let Some(mut b) = bot.take() {
                    b.end(result);
                }
                if cfg.rounds.is_some_and(|n| report.score.rounds() >= n) {
                    break;
                }
            }
            "error" => bail!("the server says: {rest}"),
            _ => bail!(
                "unexpected line from the server: '{}'",
                escape_line(line.as_bytes())
            ),
        }
    }
    Ok(report)
}

/// `<game> <seat> <time_ms>` of a begin line.
fn parse_begin<G: Game>(rest: &str) -> anyhow::Result<(Seat, TimeControl)> {
    let parts: Vec<&str> = rest.split_whitespace().collect();
    let [game, seat, ms] = parts[..] else {
        bail!("expected 'begin <game> <seat> <time_ms>'");
    };
    let kind: GameKind = game.parse().map_err(|e| anyhow!("{e}"))?;
    if kind != G::KIND {
        bail!("the game changed from {} to {kind}", G::KIND);
    }
    let seat = seat
        .parse::<u8>()
        .ok()
        .and_then(Seat::from_number)
        .ok_or_else(|| anyhow!("bad seat '{seat}' (expected 1 or 2)"))?;
    let move_ms: u64 = ms.parse().map_err(|_| anyhow!("bad time '{ms}'"))?;
    Ok((
        seat,
        TimeControl {
            move_ms,
            ..TimeControl::default()
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;

    #[test]
    fn begin_lines() {
        let (seat, t) = parse_begin::<TicTacToe>("tictactoe 2 1500").unwrap();
        assert_eq!(seat, Seat::Two);
        assert_eq!(t.move_ms, 1500);
        assert!(parse_begin::<TicTacToe>("uttt 1 1000").is_err());
        assert!(parse_begin::<TicTacToe>("tictactoe 3 1000").is_err());
        assert!(parse_begin::<TicTacToe>("tictactoe 1").is_err());
    }
}
