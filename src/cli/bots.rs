//! `referee bots`: the built-in bots per game with their parameters.

use std::process::ExitCode;

use clap::Args;

use referee::bot::BuiltinBots;
use referee::game::GameKind;
use referee::with_game;

/// Arguments of `referee bots`.
#[derive(Args, Debug)]
pub struct BotsArgs {}

fn list<G: BuiltinBots>() -> String {
    let mut out = format!("{}:\n", G::KIND);
    for b in G::BUILTINS {
        out.push_str(&format!("  {:<10} {}\n", b.name, b.description));
        for p in b.params {
            out.push_str(&format!(
                "  {:<10}   {}={}: {}\n",
                "", p.key, p.default, p.meaning
            ));
        }
    }
    out
}

fn listing(kind: GameKind) -> anyhow::Result<String> {
    Ok(with_game!(kind, G => list::<G>()))
}

/// Prints the list.
pub fn run(_args: BotsArgs) -> anyhow::Result<ExitCode> {
    for kind in GameKind::ALL {
        // A game missing from this build is left out of the list, not an error.
        if let Ok(text) = listing(kind) {
            out!("{text}");
        }
    }
    outln!(
        "\nParameters follow the name after a colon: optimal:iters=20000,time_ms=500.\n\
         Any other name is an external bot: a manifest (.toml) or a command line."
    );
    out!("{}", manifests(std::path::Path::new("bots")));
    Ok(ExitCode::SUCCESS)
}

/// The bot manifests (`*.toml`) in `dir` as text, one line each, sorted
/// by file name; a manifest that does not load is listed with its error.
fn manifests(dir: &std::path::Path) -> String {
    let found = referee::bot::manifest::manifests_in(dir);
    if found.is_empty() {
        return String::new();
    }
    let mut out = format!("\nBot manifests in {}/:\n", dir.display());
    for (p, m) in found {
        match m {
            Ok(m) => {
                let games: Vec<&str> = m.games.iter().map(|g| g.name()).collect();
                let games = if games.is_empty() {
                    "any game".to_string()
                } else {
                    games.join(", ")
                };
                out.push_str(&format!(
                    "  {:<28} {} [{games}]: {}\n",
                    p.display(),
                    m.name,
                    m.description
                ));
            }
            Err(e) => out.push_str(&format!("  {:<28} error: {e}\n", p.display())),
        }
    }
    out
}
