//! `referee judge`: the "find the winner" exercise, for every game
//! ([`referee::game::judge`]).

use std::process::ExitCode;

use clap::Args;

use referee::game::Game;
use referee::with_game;

/// Arguments of `referee judge`.
#[derive(Args, Debug)]
pub struct JudgeArgs {
    #[command(flatten)]
    game: super::GameArgs,
    #[command(flatten)]
    rules: super::RulesArgs,
    /// The moves: a JSON list of [row, col] pairs (tictactoe), or move texts
    /// separated by spaces or commas (`0 4 8`, `A6 A7`, `4 4, 4 0`).
    moves: String,
    /// Also print the final position text (on a second line).
    #[arg(long)]
    position: bool,
    /// Play the moves from this position (a position text, e.g. a game
    /// record's `start`) instead of the start.
    #[arg(long, value_name = "POSITION")]
    from: Option<String>,
}

/// Judges the moves.
pub fn run(args: JudgeArgs) -> anyhow::Result<ExitCode> {
    let kind = args.game.game;
    let opts = args.game.options_under(&args.rules)?;
    let (verdict, position) = with_game!(kind, G => {
        let (v, pos) = match &args.from {
            Some(text) => {
                let start: G = text
                    .parse()
                    .map_err(|e| anyhow::anyhow!("--from '{text}': {e}"))?;
                let start = start.under_rules(opts.rules);
                referee::game::judge::judge_from(start, &args.moves)?
            }
            None => referee::game::judge::judge::<G>(&opts, &args.moves)?,
        };
        (v, pos.to_string())
    });
    outln!("{verdict}");
    if args.position {
        outln!("{position}");
    }
    Ok(ExitCode::SUCCESS)
}
