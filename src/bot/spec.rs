//! Naming a bot: the one place that turns a user's bot text into a bot.
//!
//! A name is a built-in (`optimal:iters=5000`); external bots (manifests and
//! command lines) are resolved here too.

use std::fmt;

use super::{Bot, BotError, BuiltinBots, BuiltinSpec, TimeControl};

/// A bot as the user named it, resolved and checked before any game starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BotSpec {
    /// A built-in bot with parameters.
    Builtin(BuiltinSpec),
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
        }
    }
}
