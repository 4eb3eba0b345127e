//! `referee sandbox [GAME BOT]`: what the sandbox gives on this machine,
//! and what a bot may read in it (docs/sandbox.md).

use std::process::ExitCode;

use clap::Args;

use referee::bot::sandbox::{guarantees, missing, own_folders, readable, support};
use referee::bot::spec::BotSpec;
use referee::game::GameKind;
use referee::with_game;

/// Arguments of `referee sandbox`.
#[derive(Args, Debug)]
pub struct SandboxArgs {
    /// The game the bot plays (with BOT).
    #[arg(value_parser = super::parse_game, requires = "bot")]
    game: Option<GameKind>,
    /// A bot (manifest or command line) whose readable folders to show.
    bot: Option<String>,
    #[command(flatten)]
    pub(super) process: super::ProcessArgs,
}

/// Prints the guarantees and, for a bot, its readable folders.
pub fn run(args: SandboxArgs) -> anyhow::Result<ExitCode> {
    let s = support();
    let lacks = missing(s);
    let offered = format!(
        "Landlock ABI {}, {}seccomp, {}namespaces, {}{}",
        s.landlock_abi,
        if s.seccomp { "" } else { "no " },
        if s.namespaces { "" } else { "no " },
        if s.root { "root" } else { "not root" },
        match &s.users {
            Some(r) => format!(", per-bot users {r}"),
            None if s.root => ", no per-bot users".to_string(),
            None => String::new(),
        }
    );
    if lacks.is_empty() {
        outln!("the sandbox gives every guarantee here ({offered})");
    } else {
        outln!("the sandbox cannot give every guarantee here ({offered})");
    }
    for (g, layers) in guarantees(s) {
        let by = if layers.is_empty() {
            "NOT GIVEN".to_string()
        } else {
            layers.join("; ")
        };
        outln!("  {:<42} {by}", g.name());
    }
    if !lacks.is_empty() {
        outln!("missing:");
        for l in &lacks {
            outln!("  - {l}");
        }
        outln!("--sandbox is refused; --sandbox=best-effort runs without these");
    }
    if let (Some(game), Some(text)) = (args.game, &args.bot) {
        let mut spec = with_game!(game, G => BotSpec::resolve::<G>(text))?;
        spec.adjust(&args.process.settings());
        match &spec {
            BotSpec::Builtin(b) => outln!("bot {b} is built in: it runs inside referee"),
            BotSpec::External(e) => {
                outln!("bot {} may read:", e.name);
                for dir in readable(e, &e.sandbox_read) {
                    outln!("  {}", dir.display());
                }
                if s.users.is_some() {
                    outln!(
                        "its own folders from a private copy only its user may read ({})",
                        own_folders(e)
                            .iter()
                            .map(|d| d.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    );
                }
                outln!("and write only to its private temporary folder");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
