//! `referee sandbox [GAME BOT]`: what the sandbox gives on this machine,
//! and what a bot may read in it (docs/sandbox.md).

use std::process::ExitCode;

use clap::Args;

use referee::bot::sandbox::{missing, readable, support};
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
    process: super::ProcessArgs,
}

/// Prints the guarantees and, for a bot, its readable folders.
pub fn run(args: SandboxArgs) -> anyhow::Result<ExitCode> {
    let s = support();
    let lacks = missing(s);
    let offered = format!(
        "Landlock ABI {}, {}seccomp, {}user and PID namespaces{}",
        s.landlock_abi,
        if s.seccomp { "" } else { "no " },
        if s.namespaces { "" } else { "no " },
        if s.root {
            match &s.pids_cgroup {
                Some(dir) => format!(", pids cgroups under {}", dir.display()),
                None => ", no writable pids cgroup (referee runs as root)".to_string(),
            }
        } else {
            String::new()
        }
    );
    if lacks.is_empty() {
        outln!("the sandbox gives every guarantee here ({offered})");
    } else {
        outln!("the sandbox cannot give every guarantee here ({offered}):");
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
                outln!("and write only to its private temporary folder");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
