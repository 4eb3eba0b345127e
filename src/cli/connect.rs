//! `referee connect`: play a local bot against a remote v1 server and print
//! the final score.

use std::process::ExitCode;

use clap::Args;

use super::parse_game;
use referee::game::GameKind;
use referee::net::{connect, ConnectConfig};
use referee::play::text::format_points;

/// Arguments of `referee connect`.
#[derive(Args, Debug)]
pub struct ConnectArgs {
    /// The server, as HOST:PORT.
    addr: String,
    /// The local bot (built-in, manifest or command line); a fresh one per round.
    #[arg(long)]
    bot: String,
    /// Stop after this many rounds (default: until the server ends the match).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: Option<u32>,
    /// The game you expect; the server's `begin` line decides, this only checks it.
    #[arg(long, value_parser = parse_game)]
    game: Option<GameKind>,
    /// The name to play under: the server records all your connections as
    /// one player of that name (letters, digits, spaces, _-.+@; at most 40).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Seed of the local bot.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Give up when the server sends nothing for this many seconds (0: wait for ever).
    #[arg(long, default_value_t = 60)]
    timeout_s: u64,
    #[command(flatten)]
    pub(super) process: super::ProcessArgs,
}

/// Plays the session and prints the score.
pub fn run(args: ConnectArgs) -> anyhow::Result<ExitCode> {
    let mut cfg = ConnectConfig::new(&args.bot);
    cfg.rounds = args.rounds;
    cfg.game = args.game;
    cfg.seed = args.seed;
    cfg.name = args.name.clone();
    cfg.process = args.process.settings();
    cfg.log = referee::play::Log::to(std::sync::Arc::new(crate::cli::progress::Progress::new(
        false,
    )));
    cfg.timeout = (args.timeout_s > 0).then(|| std::time::Duration::from_secs(args.timeout_s));
    let report = connect(&args.addr, &cfg)?;
    let s = report.score;
    outln!(
        "{} rounds of {}: {} won, {} drawn, {} lost",
        s.games(),
        report.game,
        s.wins,
        s.draws,
        s.losses
    );
    if report.local_forfeits > 0 {
        outln!("The local bot forfeited {} turns.", report.local_forfeits);
    }
    outln!(
        "Final score: {} : {} ({} vs server)",
        format_points(s.points()),
        format_points(s.opponent_points()),
        args.bot
    );
    Ok(ExitCode::SUCCESS)
}
