//! `referee play`: console play, humans and bots in any seat.
//!
//! The Notakto transcript follows the course assignment byte for byte: the
//! board, then `Player N: ` prompts; invalid input is answered with
//! `Invalid move, please input again`; the end is `Player N wins game`.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::{GameArgs, TimeArgs};
use referee::bot::{BotSpec, BuiltinBots, TimeControl};
use referee::console::transcript::{console_game, ConsoleEnd, Player};
use referee::game::{GameKind, Seat};
use referee::with_game;

/// Arguments of `referee play`.
#[derive(Args, Debug)]
pub struct PlayArgs {
    #[command(flatten)]
    game: GameArgs,
    #[command(flatten)]
    rules: super::RulesArgs,
    /// Player 1: `human` or a bot.
    #[arg(long, default_value = "human")]
    p1: String,
    /// Player 2: `human` or a bot.
    #[arg(long, default_value = "human")]
    p2: String,
    /// Seed for the bots' randomness.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    time: TimeArgs,
    #[command(flatten)]
    pub(super) process: super::ProcessArgs,
}

/// Runs console play.
pub fn run(args: PlayArgs) -> anyhow::Result<ExitCode> {
    let kind: GameKind = args.game.game;
    with_game!(kind, G => play::<G>(&args))
}

fn play<G: BuiltinBots>(args: &PlayArgs) -> anyhow::Result<ExitCode> {
    let time: TimeControl = args.time.control();
    let mut players: Vec<Player<G>> = Vec::new();
    for (seat, name) in Seat::BOTH.into_iter().zip([&args.p1, &args.p2]) {
        if name == "human" {
            players.push(Player::Human);
        } else {
            let mut spec =
                BotSpec::resolve::<G>(name).with_context(|| format!("--p{}", seat.number()))?;
            args.process.apply(&mut spec, G::KIND)?;
            let seed = referee::seed::derive(args.seed, &[seat.number() as u64]);
            let mut bot = spec.instantiate::<G>(seed, &time, None)?;
            if let Err(f) = bot.begin(seat, &time) {
                anyhow::bail!("player {} could not start: {f}", seat.number());
            }
            players.push(Player::Bot(bot));
        }
    }
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut input = stdin.lock();
    let mut out = stdout.lock();
    match console_game(
        G::start(&args.game.options_under(&args.rules)?),
        &mut players,
        &mut input,
        &mut out,
    )? {
        ConsoleEnd::Finished(_) => Ok(ExitCode::SUCCESS),
        ConsoleEnd::InputEnded(seat) => {
            crate::cli::progress::say(&format!(
                "referee: input ended before the game did (player {} to move)",
                seat.number()
            ));
            Ok(ExitCode::from(1))
        }
    }
}
