//! `referee serve`: a match of N rounds against the server's bot for every
//! client that connects (docs/network.md).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::{GameArgs, TimeArgs};
use crate::cli::progress::Progress;
use referee::bot::{BotSpec, BuiltinBots};
use referee::net::{Protocol, ServeConfig, Server, DEFAULT_LISTEN};
use referee::play::Log;
use referee::with_game;

/// Arguments of `referee serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    game: GameArgs,
    #[command(flatten)]
    rules: super::RulesArgs,
    /// The server's bot (built-in, manifest or command line); a fresh one per round.
    #[arg(long)]
    bot: String,
    /// Address to listen on; port 0 picks a free port (printed at start).
    #[arg(long, default_value = DEFAULT_LISTEN)]
    listen: String,
    /// Rounds per connection; who moves first alternates by round.
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// `text` for people with nc, `v1` for bots (the stdio protocol's lines).
    #[arg(long, default_value = "text", value_parser = parse_protocol)]
    protocol: Protocol,
    #[command(flatten)]
    time: TimeArgs,
    /// A text client silent this many seconds forfeits the round and is dropped.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    idle_timeout_s: u64,
    /// Clients served at once; more get a refusal line and are closed.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    max_clients: u32,
    /// Clients served at once from one IP address (idle clients from one
    /// machine cannot lock everyone out).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    max_per_address: u32,
    /// Longest input line in bytes; a longer line is an error (text) or a forfeit (v1).
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(16..=16_777_216))]
    max_line: u32,
    /// Folder for games.jsonl (every finished round, with the client's address).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Master seed of the server's bots.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// No log line per connection on stderr.
    #[arg(long)]
    quiet: bool,
    #[command(flatten)]
    pub(super) process: super::ProcessArgs,
}

fn parse_protocol(s: &str) -> Result<Protocol, String> {
    s.parse()
}

/// Runs the server until the process is stopped.
pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let kind = args.game.game;
    with_game!(kind, G => serve::<G>(&args))
}

fn serve<G: BuiltinBots>(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let mut spec = BotSpec::resolve::<G>(&args.bot).context("--bot")?;
    args.process.apply(&mut spec, G::KIND)?;
    let cfg = ServeConfig {
        rounds: args.rounds,
        protocol: args.protocol,
        time: args.time.control(),
        idle_timeout: Duration::from_secs(args.idle_timeout_s),
        max_clients: args.max_clients as usize,
        max_per_address: args.max_per_address as usize,
        max_line: args.max_line as usize,
        out: args.out.clone(),
        options: args.game.options_under(&args.rules)?,
        seed: args.seed,
        log: if args.quiet {
            Log::default()
        } else {
            Log::to(std::sync::Arc::new(Progress::new(false)))
        },
    };
    let server = Server::<G>::bind(&args.listen, spec, &args.bot, cfg)?;
    let addr = server.local_addr()?;
    // Scripts and tests read the real port from this first stdout line.
    let mut out = std::io::stdout();
    writeln!(out, "listening on {addr}")?;
    out.flush()?;
    crate::cli::progress::say(&format!(
        "referee: serving {} against '{}' on {addr}: protocol {}, {} rounds per client",
        G::KIND,
        args.bot,
        args.protocol,
        args.rounds
    ));
    referee::play::interrupt::install(super::tell)?;
    let handle = server.spawn()?;
    let sig = loop {
        if let Some(sig) = referee::play::interrupt::interrupted() {
            break sig;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    handle.shutdown();
    crate::cli::progress::say(&format!(
        "referee: interrupted by {}: the server stopped{}",
        referee::play::interrupt::signal_name(sig),
        match &args.out {
            Some(dir) => format!(
                "; finished rounds are in {}",
                referee::play::journal::games_path(dir).display()
            ),
            None => String::new(),
        }
    ));
    Ok(ExitCode::from(referee::play::interrupt::exit_code(sig)))
}
