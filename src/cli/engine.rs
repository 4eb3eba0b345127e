//! `referee engine`: any bot (a built-in above all) as a program that
//! speaks the protocol on stdin/stdout, for other harnesses and for
//! comparing builds of referee's own engines.

use std::process::ExitCode;

use clap::Args;

use referee::bot::process::SEED_VAR;
use referee::net::line::LineReader;
use referee::net::{play_session, ConnectConfig};

/// Arguments of `referee engine`.
#[derive(Args, Debug)]
pub struct EngineArgs {
    /// The bot to play (built-in with parameters, manifest or command line).
    bot: String,
    /// Seed of the bot when the begin line carries none: round r gets a
    /// seed derived from it (default: $REFEREE_SEED, else 0).
    #[arg(long)]
    seed: Option<u64>,
    #[command(flatten)]
    pub(super) process: super::ProcessArgs,
}

/// Answers the session on stdin/stdout until stdin closes.
pub fn run(args: EngineArgs) -> anyhow::Result<ExitCode> {
    let mut cfg = ConnectConfig::new(&args.bot);
    cfg.timeout = None;
    cfg.process = args.process.settings();
    cfg.log = referee::play::Log::to(std::sync::Arc::new(crate::cli::progress::Progress::new(
        false,
    )));
    cfg.seed = match args.seed {
        Some(s) => s,
        None => match std::env::var(SEED_VAR) {
            Ok(v) => v
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("${SEED_VAR} is '{v}', not a number"))?,
            Err(_) => 0,
        },
    };
    let reader = LineReader::new(std::io::stdin(), cfg.max_line);
    play_session(reader, std::io::stdout().lock(), &cfg, "the harness")?;
    Ok(ExitCode::SUCCESS)
}
