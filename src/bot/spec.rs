//! Naming a bot: the one place that turns a user's bot text into a bot.
//!
//! A name is a built-in (`optimal:iters=5000`); external bots (manifests and
//! command lines) are resolved here too.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use super::{Bot, BotError, BuiltinBots, BuiltinSpec, TimeControl};
use crate::game::GameKind;

/// How an external program talks to referee.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ExternalKind {
    /// Protocol v1 on stdin/stdout (docs/protocol.md).
    #[default]
    Protocol,
    /// The course assignment's console format (`Player N: ` prompts).
    Console,
}

/// Optional resource limits for an external bot's process (rlimits).
/// `None` means the documented default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceLimits {
    /// Address-space limit in MiB.
    pub memory_mb: Option<u64>,
    /// CPU time limit in seconds.
    pub cpu_seconds: Option<u64>,
    /// Maximum number of processes of the bot's user.
    pub processes: Option<u64>,
}

/// An external bot: a program started once per game, described by a
/// manifest, a tournament entry or a command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalSpec {
    /// Display name.
    pub name: String,
    /// Program and arguments (already split like a shell does).
    pub command: Vec<String>,
    /// Working directory (a manifest's `cwd` is resolved against the manifest's folder).
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
    /// The games it plays; empty means it did not say (any game is tried).
    pub games: Vec<GameKind>,
    /// One line on what it is.
    pub description: String,
    /// How it talks.
    pub kind: ExternalKind,
    /// Resource limits.
    pub limits: ResourceLimits,
}

/// A bot as the user named it, resolved and checked before any game starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BotSpec {
    /// A built-in bot with parameters.
    Builtin(BuiltinSpec),
    /// An external program.
    External(ExternalSpec),
}

impl BotSpec {
    /// Resolves `text` for game `G`; fails with a clear message when no bot
    /// of that name exists or its parameters are wrong.
    pub fn resolve<G: BuiltinBots>(text: &str) -> Result<BotSpec, BotError> {
        let b = BuiltinSpec::parse(text);
        if b.is_builtin::<G>() {
            // Build once now so that bad parameters fail before any game.
            b.make::<G>(0)?;
            return Ok(BotSpec::Builtin(b));
        }
        let names: Vec<_> = G::builtins().iter().map(|b| b.name).collect();
        Err(BotError(format!(
            "unknown bot '{text}' for {} (built-ins: {})",
            G::KIND,
            names.join(", ")
        )))
    }

    /// A fresh bot for one game, seeded by `seed`.
    pub fn instantiate<G: BuiltinBots>(
        &self,
        seed: u64,
        _time: &TimeControl,
    ) -> Result<Box<dyn Bot<G>>, BotError> {
        match self {
            BotSpec::Builtin(b) => b.make::<G>(seed),
            BotSpec::External(e) => Err(BotError(format!(
                "external bot '{}': process bots are not built yet",
                e.name
            ))),
        }
    }

    /// Whether the bot runs in this process (no time limit enforcement needed).
    pub fn is_in_process(&self) -> bool {
        matches!(self, BotSpec::Builtin(_))
    }
}

impl fmt::Display for BotSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BotSpec::Builtin(b) => write!(f, "{b}"),
            BotSpec::External(e) => f.write_str(&e.name),
        }
    }
}
