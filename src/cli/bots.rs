//! `referee bots`: the built-in bots per game with their parameters.

use std::process::ExitCode;

use clap::Args;

use crate::bot::BuiltinBots;
use crate::game::GameKind;
use crate::with_game;

/// Arguments of `referee bots`.
#[derive(Args, Debug)]
pub struct BotsArgs {}

fn list<G: BuiltinBots>() -> String {
    let mut out = format!("{}:\n", G::KIND);
    for b in G::builtins() {
        out.push_str(&format!("  {:<10} {}\n", b.name, b.description));
        for p in &b.params {
            out.push_str(&format!("  {:<10}   {p}\n", ""));
        }
    }
    out
}

/// Prints the list.
pub fn run(_args: BotsArgs) -> anyhow::Result<ExitCode> {
    for kind in GameKind::ALL {
        print!("{}", with_game!(kind, G => list::<G>()));
    }
    println!(
        "\nParameters follow the name after a colon: optimal:iters=20000,time_ms=500.\n\
         Any other name is an external bot: a manifest (.toml) or a command line."
    );
    Ok(ExitCode::SUCCESS)
}
