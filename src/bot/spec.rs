//! Naming a bot: the one place that turns a user's bot text into a bot.
//!
//! A name is a built-in (`optimal:iters=5000`), a bot manifest (a path
//! ending in `.toml`, see [`BotManifest`]) or a command line split like a
//! shell does (`"python3 bots/python/random_bot.py"`).

use std::fmt;
use std::path::{Path, PathBuf};

use super::console::ConsoleBot;
use super::external::{ExternalBot, ProcessPool};
use super::manifest::{BotManifest, ExternalKind, ExternalSpec, SandboxMode};
use super::{Bot, BotError, BuiltinBots, BuiltinSpec, TimeControl};
use crate::game::GameKind;
use crate::protocol::BotProtocol;

/// How the external bots of a run start, as the command line sets it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProcessSettings {
    /// Keep protocol bots' processes across games.
    pub reuse: bool,
    /// Give bots referee's whole environment.
    pub inherit_env: bool,
    /// Run every external bot in this sandbox mode (`None`: each bot's own).
    pub sandbox: Option<SandboxMode>,
    /// More folders sandboxed bots may read.
    pub sandbox_read: Vec<PathBuf>,
    /// Size cap of every sandboxed bot's temporary folder in MiB (`None`:
    /// each bot's own, else the default; docs/sandbox.md).
    pub tmp_mb: Option<u64>,
    /// The protocol of every protocol bot given as a bare command line
    /// (`--protocol`; manifests and tournament entries say their own).
    pub protocol: Option<BotProtocol>,
}

/// Checks that a sandbox in `mode` can be given on this machine: the
/// missing guarantees as an error when it must be complete, as a list (to
/// tell) for a best-effort one.
#[cfg(target_os = "linux")]
pub fn sandbox_check(mode: SandboxMode) -> Result<Vec<String>, String> {
    super::sandbox::check(mode)
}

/// Without Linux there is no sandbox.
#[cfg(not(target_os = "linux"))]
pub(crate) fn sandbox_check(mode: SandboxMode) -> Result<Vec<String>, String> {
    match mode {
        SandboxMode::Off => Ok(Vec::new()),
        _ => Err("the sandbox needs Linux (Landlock and namespaces)".into()),
    }
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
    /// Resolves `text` for game `G`: a built-in, a manifest (`*.toml`) or a
    /// command line. Fails with a clear message when no such bot exists, its
    /// parameters are wrong, its program cannot be started, or its manifest
    /// does not list the game.
    ///
    /// ```
    /// use referee::bot::BotSpec;
    /// use referee::game::Uttt;
    ///
    /// assert!(BotSpec::resolve::<Uttt>("optimal:iters=500").is_ok());
    /// // A parameter the bot does not list is an error.
    /// assert!(BotSpec::resolve::<Uttt>("optimal:c=1.0").is_err());
    /// assert!(BotSpec::resolve::<Uttt>("no-such-bot-xyz").is_err());
    /// ```
    pub fn resolve<G: BuiltinBots>(text: &str) -> Result<BotSpec, BotError> {
        let b = BuiltinSpec::parse(text);
        if b.is_builtin::<G>() {
            // Checked once, here, before any game.
            return Ok(BotSpec::Builtin(b.prepare::<G>()?));
        }
        let trimmed = text.trim();
        // `console:<command>`: a program in the course's console format.
        let (trimmed, console) = match trimmed.strip_prefix("console:") {
            Some(rest) => (rest.trim(), true),
            None => (trimmed, false),
        };
        let mut spec = if trimmed.ends_with(".toml") {
            let path = Path::new(trimmed);
            let manifest = BotManifest::load(path)?;
            let base = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let mut spec = manifest.into_spec(&base)?;
            spec.manifest = Some(std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()));
            spec
        } else {
            let spec = ExternalSpec::from_command_line(trimmed)?;
            if let Err(e) = spec.check_startable() {
                return Err(BotError(format!(
                    "unknown bot '{trimmed}' for {}: not a built-in ({}), not a manifest (.toml), \
                     and not a command that can be started ({})",
                    G::KIND,
                    G::builtin_names(),
                    e.0
                )));
            }
            spec
        };
        if console {
            spec.kind = ExternalKind::Console;
            spec.name = text.trim().to_string();
        }
        spec.check_game(G::KIND)?;
        spec.check_startable()?;
        Ok(BotSpec::External(spec))
    }

    /// An external bot described inline by manifest fields (e.g. a bot entry
    /// of a tournament file in `base_dir`), checked for game `kind` the same
    /// way [`BotSpec::resolve`] checks a manifest file: the game must be
    /// listed and the program must be startable.
    pub(crate) fn from_manifest(
        manifest: BotManifest,
        base_dir: &Path,
        kind: GameKind,
    ) -> Result<BotSpec, BotError> {
        let spec = manifest.into_spec(base_dir)?;
        spec.check_game(kind)?;
        spec.check_startable()?;
        Ok(BotSpec::External(spec))
    }

    /// A bot for one game, seeded by `seed` (an external bot receives it,
    /// see docs/protocol.md). A protocol bot that declares `reuse` plays in
    /// a process kept in `pool` under `key` when one is given.
    pub fn instantiate<G: BuiltinBots>(
        &self,
        seed: u64,
        time: &TimeControl,
        pool: Option<(&ProcessPool, u64)>,
    ) -> Result<Box<dyn Bot<G>>, BotError> {
        match self {
            BotSpec::Builtin(b) => b.make::<G>(seed),
            BotSpec::External(e) => Ok(match e.kind {
                ExternalKind::Protocol => {
                    let bot = ExternalBot::<G>::new(e.clone(), *time, seed);
                    Box::new(match pool {
                        Some((pool, key)) => bot.keeping(pool, key),
                        None => bot,
                    })
                }
                ExternalKind::Console => Box::new(ConsoleBot::<G>::new(e.clone(), *time, seed)),
            }),
        }
    }

    /// Applies a run's process settings to an external bot: `reuse`
    /// (protocol bots only; console programs play one game per process)
    /// and `inherit_env` are switched on when asked, never off; the sandbox
    /// mode, when given, replaces the bot's own.
    pub fn adjust(&mut self, s: &ProcessSettings) {
        if let BotSpec::External(e) = self {
            if e.kind == ExternalKind::Protocol && e.protocol.is_none() {
                e.protocol = s.protocol;
            }
            // A CodinGame bot plays one game per process.
            e.reuse |= s.reuse && e.kind == ExternalKind::Protocol && e.speaks() == BotProtocol::V1;
            e.inherit_env |= s.inherit_env;
            if let Some(mode) = s.sandbox {
                e.sandbox = mode;
            }
            e.sandbox_read.extend(s.sandbox_read.iter().cloned());
            if let Some(mb) = s.tmp_mb {
                e.limits.tmp_mb = Some(mb);
            }
        }
    }

    /// Checks again that an external bot may play `game` (after
    /// [`BotSpec::adjust`], whose `--protocol` may have made it a CodinGame
    /// bot, and CodinGame has no Notakto).
    pub fn check_game(&self, game: GameKind) -> Result<(), BotError> {
        match self {
            BotSpec::External(e) => e.check_game(game),
            BotSpec::Builtin(_) => Ok(()),
        }
    }

    /// Checks that the bot's sandbox can be given here: an error naming
    /// the missing guarantees when it must be complete, or the list of them
    /// (to tell) when the bot runs sandboxed as far as it goes.
    pub fn check_sandbox(&self) -> Result<Vec<String>, BotError> {
        match self {
            BotSpec::External(e) => {
                sandbox_check(e.sandbox).map_err(|why| BotError(format!("bot '{}': {why}", e.name)))
            }
            BotSpec::Builtin(_) => Ok(Vec::new()),
        }
    }

    /// Why the bot can only play games from the empty board (a CodinGame
    /// bot is only ever told its opponent's last move), or `None` when it
    /// can play from any position.
    pub fn empty_board_only(&self) -> Option<String> {
        match self {
            BotSpec::External(e)
                if e.kind == ExternalKind::Protocol && e.speaks() == BotProtocol::CodinGame =>
            {
                Some(format!(
                    "bot '{}' speaks CodinGame's protocol, which tells a bot only its \
                     opponent's last move: it plays whole games from the empty board",
                    e.name
                ))
            }
            _ => None,
        }
    }

    /// Whether the bot runs in this process (no time limit enforcement needed).
    pub(crate) fn is_in_process(&self) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;

    #[test]
    fn inline_fields_are_checked_like_a_manifest() {
        let m: BotManifest =
            toml::from_str("name='t'\ncommand=['sh','-c','exit 0']\ngames=['tictactoe']\n")
                .unwrap();
        let s = BotSpec::from_manifest(m.clone(), Path::new("."), GameKind::TicTacToe).unwrap();
        assert_eq!(s.to_string(), "t");
        let e = BotSpec::from_manifest(m, Path::new("."), GameKind::Notakto).unwrap_err();
        assert!(e.0.contains("does not play notakto"), "{e}");
        let m: BotManifest = toml::from_str("name='t'\ncommand='./nope'\n").unwrap();
        let e = BotSpec::from_manifest(m, Path::new("."), GameKind::Uttt).unwrap_err();
        assert!(e.0.contains("cannot start"), "{e}");
    }

    #[test]
    fn console_kind_in_a_manifest_and_on_the_command_line() {
        let m: BotManifest = toml::from_str("name='c'\ncommand='sh'\nkind='console'\n").unwrap();
        assert_eq!(
            m.into_spec(Path::new(".")).unwrap().kind,
            ExternalKind::Console
        );
        let BotSpec::External(e) =
            BotSpec::resolve::<crate::game::Notakto>("console:sh -c true").unwrap()
        else {
            panic!("an external bot")
        };
        assert_eq!(e.kind, ExternalKind::Console);
        assert_eq!(e.command, vec!["sh", "-c", "true"]);
    }

    #[test]
    fn command_lines_and_unknown_names() {
        match BotSpec::resolve::<TicTacToe>("sh -c 'exit 0'").unwrap() {
            BotSpec::External(s) => assert_eq!(s.command, vec!["sh", "-c", "exit 0"]),
            other => panic!("{other:?}"),
        }
        let e = BotSpec::resolve::<TicTacToe>("no-such-program-xyz --fast")
            .unwrap_err()
            .0;
        assert!(e.contains("unknown bot"), "{e}");
        assert!(e.contains("no-such-program-xyz"), "{e}");
        let e = BotSpec::resolve::<TicTacToe>("./missing/bot")
            .unwrap_err()
            .0;
        assert!(e.contains("cannot start"), "{e}");
    }
}
