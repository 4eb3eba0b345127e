//! External bots as data: a bot manifest ([`BotManifest`], a `.toml` file
//! or a tournament's bot entry) and the program it describes
//! ([`ExternalSpec`]): command, working directory, environment, limits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::fs::File;
use std::io::Read;

use anyhow::{bail, Context};
use serde::Deserialize;

use super::{BotError, TimeProfile};
use crate::game::GameKind;
use crate::protocol::BotProtocol;

/// Whether (and how strictly) a bot runs in the sandbox. In a manifest or
/// a tournament entry: `sandbox = true`, `false` or `"best-effort"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SandboxMode {
    /// Not sandboxed: the bot runs as the person who started referee.
    #[default]
    Off,
    /// Sandboxed; refused when the kernel cannot give every guarantee.
    On,
    /// Sandboxed with what the kernel offers; what it cannot give is said.
    BestEffort,
}

impl SandboxMode {
    /// Whether the bot runs sandboxed.
    pub fn is_on(self) -> bool {
        self != SandboxMode::Off
    }
}

/// Written back the way a manifest writes it: `true`, `false` or
/// `"best-effort"`.
impl serde::Serialize for SandboxMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SandboxMode::On => s.serialize_bool(true),
            SandboxMode::Off => s.serialize_bool(false),
            SandboxMode::BestEffort => s.serialize_str("best-effort"),
        }
    }
}

impl<'de> serde::Deserialize<'de> for SandboxMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Written {
            Flag(bool),
            Word(String),
        }
        match Written::deserialize(d)? {
            Written::Flag(true) => Ok(SandboxMode::On),
            Written::Flag(false) => Ok(SandboxMode::Off),
            Written::Word(w) => w.parse().map_err(serde::de::Error::custom),
        }
    }
}

impl std::str::FromStr for SandboxMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "off" | "false" | "no" => Ok(SandboxMode::Off),
            "on" | "true" | "yes" => Ok(SandboxMode::On),
            "best-effort" => Ok(SandboxMode::BestEffort),
            other => Err(format!(
                "unknown sandbox mode '{other}' (expected on, off or best-effort)"
            )),
        }
    }
}

/// Default address-space limit (MiB) when a bot's limits do not say.
pub(crate) const DEFAULT_MEMORY_MB: u64 = 4096;

/// Default CPU-time limit (seconds) when a bot's limits do not say.
pub(crate) const DEFAULT_CPU_SECONDS: u64 = 600;

/// Default process cap of a sandboxed bot (itself and everything it starts).
pub(crate) const DEFAULT_SANDBOX_PROCESSES: u64 = 64;

/// Default size cap of a sandboxed bot's temporary folder, in MiB.
pub const DEFAULT_TMP_MB: u64 = 256;

/// The largest of the small files referee reads whole: a manifest here; a
/// tournament file, an openings suite and a run folder's configuration,
/// fingerprint and settings elsewhere, all through [`read_small_text`] and
/// [`read_capped`].
pub(crate) const MAX_SMALL_FILE: u64 = 16 << 20;

/// Reads `path` whole, refusing more than `cap` bytes (a device such as
/// `/dev/zero`, or the wrong file, would otherwise fill memory): the
/// error names the file and the cap.
pub(crate) fn read_capped(path: &Path, cap: u64) -> anyhow::Result<Vec<u8>> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut bytes = Vec::new();
    std::io::Read::take(file, cap + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > cap {
        bail!(
            "{}: larger than {} MiB, so not read (is it the right file?)",
            path.display(),
            cap >> 20
        );
    }
    Ok(bytes)
}

/// [`read_capped`] with [`MAX_SMALL_FILE`], as UTF-8 text.
pub(crate) fn read_small_text(path: &Path) -> anyhow::Result<String> {
    String::from_utf8(read_capped(path, MAX_SMALL_FILE)?)
        .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", path.display()))
}

/// How an external program talks to referee.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExternalKind {
    /// Protocol v1 on stdin/stdout (docs/protocol.md).
    #[default]
    Protocol,
    /// The course assignment's console format (`Player N: ` prompts).
    Console,
}

/// Optional resource limits for an external bot's process (rlimits).
/// `None` means the documented default (docs/protocol.md): 4096 MiB of
/// address space, 600 s of CPU time, no process limit. `Some(0)` means no
/// limit at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceLimits {
    /// Address-space limit in MiB (RLIMIT_AS).
    pub memory_mb: Option<u64>,
    /// CPU time limit in seconds (RLIMIT_CPU).
    pub cpu_seconds: Option<u64>,
    /// Maximum number of processes of the bot's user (RLIMIT_NPROC; the
    /// kernel counts every process of that user, not only the bot's).
    pub processes: Option<u64>,
    /// Size cap of a sandboxed bot's temporary folder in MiB (default 256;
    /// docs/sandbox.md).
    pub tmp_mb: Option<u64>,
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
    /// Keep the process across games (protocol bots that declare it).
    pub reuse: bool,
    /// Start with referee's whole environment instead of the clean one.
    pub inherit_env: bool,
    /// Run in the sandbox (docs/sandbox.md).
    pub sandbox: SandboxMode,
    /// More folders a sandboxed bot may read.
    pub sandbox_read: Vec<PathBuf>,
    /// The manifest file it was read from, if any.
    pub manifest: Option<PathBuf>,
    /// The protocol a protocol bot speaks; `None` for a bare command line,
    /// which speaks v1 unless `--protocol` says otherwise.
    pub protocol: Option<BotProtocol>,
    /// Its own time limits (`time = "codingame"`), replacing the run's.
    pub time: Option<TimeProfile>,
}

/// A bot's `command`: one string split like a shell does, or an array.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum CommandText {
    /// `command = "python3 random_bot.py"`.
    Line(String),
    /// `command = ["python3", "random_bot.py"]`.
    Args(Vec<String>),
}

/// The fields that describe an external bot: a manifest file's whole
/// content, or one bot entry of a tournament file. Unknown fields are errors.
///
/// ```toml
/// name = "python-random"
/// command = "python3 python/random_bot.py"   # or an array of words
/// cwd = "."                                  # relative to the manifest's folder
/// games = ["tictactoe", "notakto", "uttt"]
/// description = "Uniformly random legal moves"
/// kind = "protocol"                          # the default
/// [env]
/// PYTHONUNBUFFERED = "1"
/// [limits]
/// memory_mb = 1024
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BotManifest {
    /// Display name.
    pub name: String,
    /// The program and its arguments.
    pub command: CommandText,
    /// Working directory, relative to the folder of the file that names the bot.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The games it plays (empty: any).
    #[serde(default)]
    pub games: Vec<GameKind>,
    /// One line on what it is.
    #[serde(default)]
    pub description: String,
    /// How it talks (`protocol`, the default).
    #[serde(default)]
    pub kind: ExternalKind,
    /// Resource limits.
    #[serde(default)]
    pub limits: ResourceLimits,
    /// The bot plays many games in one process (docs/protocol.md).
    #[serde(default)]
    pub reuse: bool,
    /// The bot gets referee's whole environment, not the clean one.
    #[serde(default)]
    pub inherit_env: bool,
    /// The bot runs in the sandbox: `true`, `false` or `"best-effort"`.
    #[serde(default)]
    pub sandbox: SandboxMode,
    /// More folders a sandboxed bot may read (relative to the manifest's
    /// folder).
    #[serde(default)]
    pub sandbox_read: Vec<PathBuf>,
    /// The protocol it speaks: `"v1"` (the default) or `"codingame"`.
    #[serde(default)]
    pub protocol: Option<BotProtocol>,
    /// Its time limits: `"codingame"` (1000 ms first turn, 100 ms later
    /// ones) instead of the run's.
    #[serde(default)]
    pub time: Option<TimeProfile>,
}

impl BotManifest {
    /// Reads a manifest file; errors name the file, line and column.
    pub(crate) fn load(path: &Path) -> Result<BotManifest, BotError> {
        // Capped, like every file a run reads whole.
        let text = read_small_text(path).map_err(|e| {
            BotError(match e.downcast_ref::<std::io::Error>() {
                Some(io) => format!("bot manifest {}: {io}", path.display()),
                None => format!("bot manifest {e:#}"),
            })
        })?;
        Self::parse(path, &text)
    }

    /// Reads a manifest's `text`; `path` names it in errors, with the line
    /// and column.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<BotManifest, BotError> {
        toml::from_str(text).map_err(|e| {
            let (line, col) = match e.span() {
                Some(span) => line_col(text, span.start),
                None => (1, 1),
            };
            BotError(format!(
                "{}:{line}:{col}: {}",
                path.display(),
                e.message().trim()
            ))
        })
    }

    /// The bot these fields describe. `base_dir` is the folder of the file
    /// they came from: the default working directory, and what a relative
    /// `cwd` is relative to. The command runs in that working directory.
    pub(crate) fn into_spec(self, base_dir: &Path) -> Result<ExternalSpec, BotError> {
        let command = match self.command {
            CommandText::Line(line) => split_command(&line)
                .map_err(|e| BotError(format!("bot '{}': command: {e}", self.name)))?,
            CommandText::Args(words) => words,
        };
        if command.is_empty() || command[0].is_empty() {
            return Err(BotError(format!("bot '{}': command is empty", self.name)));
        }
        if self.kind == ExternalKind::Console && self.protocol == Some(BotProtocol::CodinGame) {
            return Err(BotError(format!(
                "bot '{}': a console program (kind = \"console\") does not speak a protocol; \
                 leave out `protocol = \"codingame\"` or `kind`",
                self.name
            )));
        }
        let cwd = match self.cwd {
            Some(c) => base_dir.join(c),
            None => base_dir.to_path_buf(),
        };
        // Absolute paths: which directory a relative program is looked up
        // in after the child changes directory is platform-specific.
        let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
        let mut command = command;
        if command[0].contains('/') && Path::new(&command[0]).is_relative() {
            command[0] = cwd.join(&command[0]).to_string_lossy().into_owned();
        }
        Ok(ExternalSpec {
            name: self.name,
            command,
            cwd: Some(cwd),
            env: self.env,
            games: self.games,
            description: self.description,
            kind: self.kind,
            limits: self.limits,
            reuse: self.reuse,
            inherit_env: self.inherit_env,
            sandbox: self.sandbox,
            sandbox_read: self
                .sandbox_read
                .into_iter()
                .map(|p| std::path::absolute(base_dir.join(&p)).unwrap_or(p))
                .collect(),
            manifest: None,
            // A manifest or tournament entry that does not say speaks v1:
            // `--protocol` only sets the protocol of bare command lines.
            protocol: Some(self.protocol.unwrap_or_default()),
            time: self.time,
        })
    }
}

/// The bot manifests (`*.toml`) in `dir`, sorted by file name, each loaded
/// or with the error that stopped it.
pub fn manifests_in(dir: &Path) -> Vec<(PathBuf, Result<BotManifest, BotError>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let m = BotManifest::load(&p);
            (p, m)
        })
        .collect()
}

/// What a student's own `bot.toml` may say in a submission folder (graded
/// by `grade` or `grade-all`, played in the class tournament): how to start
/// the bot, nothing about how it is confined. The grader's options decide
/// the rest (docs/sandbox.md, "What a submission may say").
pub const SUBMISSION_KEYS: [&str; 10] = [
    "name",
    "protocol",
    "command",
    "cwd",
    "env",
    "reuse",
    "kind",
    "games",
    "description",
    "limits",
];

/// Checks a submission's manifest `path` (a student's `bot.toml`): only
/// [`SUBMISSION_KEYS`], a `cwd` and command paths inside the submission's
/// folder, limits that only lower the grader's, and `sandbox` only to ask
/// for it. The error is one line naming the file, the key and why.
pub fn vet_submission(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        let (line, col) = e.span().map_or((1, 1), |s| line_col(&text, s.start));
        format!("{}:{line}:{col}: {}", path.display(), e.message().trim())
    })?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let refuse = |key: &str, why: &str| {
        Err(format!(
            "{name}: `{key}` is not allowed in a submission: {why}"
        ))
    };
    let folder = path.parent().unwrap_or(Path::new("."));
    let own = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
    // `cwd` first: the command's paths are read from it.
    let mut keys: Vec<(&String, &toml::Value)> = table.iter().collect();
    keys.sort_by_key(|(k, _)| k.as_str() != "cwd");
    for (key, value) in keys {
        match key.as_str() {
            "sandbox" => {
                let off = match value {
                    toml::Value::Boolean(b) => !b,
                    toml::Value::String(w) => w.parse::<SandboxMode>().map_or(true, |m| !m.is_on()),
                    _ => true,
                };
                if off {
                    return refuse(key, "the grader decides whether bots run in the sandbox");
                }
            }
            "sandbox_read" => {
                return refuse(key, "the grader decides what a bot may read");
            }
            "inherit_env" => {
                if value.as_bool() != Some(false) {
                    return refuse(key, "a bot gets the clean environment, not the grader's");
                }
            }
            "cwd" => {
                let inside = value.as_str().is_some_and(|c| {
                    let dir = folder.join(c);
                    std::fs::canonicalize(&dir).is_ok_and(|d| d.starts_with(&own))
                });
                if !inside {
                    return refuse(
                        key,
                        "the bot runs in its own folder (or a folder inside it)",
                    );
                }
            }
            "command" => {
                let words: Vec<String> = match value {
                    toml::Value::String(line) => split_command(line).unwrap_or_default(),
                    toml::Value::Array(a) => a
                        .iter()
                        .filter_map(|w| w.as_str().map(String::from))
                        .collect(),
                    _ => Vec::new(),
                };
                let cwd = table
                    .get("cwd")
                    .and_then(|c| c.as_str())
                    .map_or_else(|| folder.to_path_buf(), |c| folder.join(c));
                if let Some(w) = words.iter().find(|w| absolute(w)) {
                    return refuse(
                        key,
                        &format!(
                            "'{w}' is an absolute path: a submission names programs by name \
                             (python3) or by a path inside its folder"
                        ),
                    );
                }
                if let Some(w) = words.iter().find(|w| escapes(w) || leaves(w, &cwd, &own)) {
                    return refuse(
                        key,
                        &format!("'{w}' names a path outside the submission's folder"),
                    );
                }
            }
            "env" => {
                if value.get("PATH").is_some() {
                    return refuse(
                        "env.PATH",
                        "the grader decides where programs are found (and what the bot may read)",
                    );
                }
            }
            "limits" => {
                let limits: ResourceLimits = value
                    .clone()
                    .try_into()
                    .map_err(|e| format!("{name}: `limits`: {}", e.message().trim()))?;
                let ceiling = [
                    ("memory_mb", limits.memory_mb, DEFAULT_MEMORY_MB),
                    ("cpu_seconds", limits.cpu_seconds, DEFAULT_CPU_SECONDS),
                    ("processes", limits.processes, SUBMISSION_MAX_PROCESSES),
                    ("tmp_mb", limits.tmp_mb, SUBMISSION_MAX_TMP_MB),
                ];
                for (what, asked, max) in ceiling {
                    if let Some(v) = asked.filter(|&v| v == 0 || v > max) {
                        return refuse(
                            &format!("limits.{what} = {v}"),
                            &format!("a submission may only lower the grader's limit ({max})"),
                        );
                    }
                }
            }
            k if SUBMISSION_KEYS.contains(&k) => {}
            other => {
                return refuse(
                    other,
                    "a submission's bot.toml says only how to start the bot",
                );
            }
        }
    }
    Ok(())
}

/// The process cap a submission may not raise (the sandbox's default).
const SUBMISSION_MAX_PROCESSES: u64 = DEFAULT_SANDBOX_PROCESSES;

/// The temporary-folder cap a submission may not raise (the sandbox's
/// default, in MiB).
const SUBMISSION_MAX_TMP_MB: u64 = DEFAULT_TMP_MB;

/// Whether a command word names a path outside the submission's folder:
/// `..` that climbs out of it, in any of its [`path_pieces`]. (Absolute
/// paths are refused apart, by [`absolute`].)
fn escapes(word: &str) -> bool {
    path_pieces(word).any(|item| {
        let mut depth = 0i32;
        for part in Path::new(item).components() {
            match part {
                std::path::Component::ParentDir => depth -= 1,
                std::path::Component::Normal(_) => depth += 1,
                _ => {}
            }
            if depth < 0 {
                return true;
            }
        }
        false
    })
}

/// The parts of a command word that could be paths: the word itself and
/// every piece after a `=`, a `:` or a `,` (`--flag=x`, `-Xkey=x`, a class
/// path `a:b`, a list `a,b`).
fn path_pieces(word: &str) -> impl Iterator<Item = &str> {
    word.split(['=', ':', ',']).filter(|p| !p.is_empty())
}

/// Whether a command word holds an absolute path anywhere in it.
fn absolute(word: &str) -> bool {
    path_pieces(word).any(|p| p.starts_with('/'))
}

/// Whether a command word names, from `cwd`, something that resolves
/// (through symbolic links) outside the submission's folder `own`.
fn leaves(word: &str, cwd: &Path, own: &Path) -> bool {
    path_pieces(word)
        .filter_map(|item| std::fs::canonicalize(cwd.join(item)).ok())
        .any(|real| !real.starts_with(own))
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn split_command(line: &str) -> Result<Vec<String>, String> {
    shell_words::split(line).map_err(|e| format!("cannot split '{line}': {e}"))
}

impl ExternalSpec {
    /// A bot from a command line split like a shell does, run in the current
    /// directory; its name is the command line.
    pub fn from_command_line(line: &str) -> Result<ExternalSpec, BotError> {
        let command = split_command(line).map_err(BotError)?;
        if command.is_empty() {
            return Err(BotError("empty bot command".into()));
        }
        Ok(ExternalSpec {
            name: line.trim().to_string(),
            command,
            cwd: None,
            env: BTreeMap::new(),
            games: Vec::new(),
            description: String::new(),
            kind: ExternalKind::Protocol,
            limits: ResourceLimits::default(),
            reuse: false,
            inherit_env: false,
            sandbox: SandboxMode::Off,
            sandbox_read: Vec::new(),
            manifest: None,
            protocol: None,
            time: None,
        })
    }

    /// The protocol it speaks (v1 unless it said otherwise).
    pub fn speaks(&self) -> BotProtocol {
        self.protocol.unwrap_or_default()
    }

    /// Fails unless the bot may play `game`, per its `games` list.
    pub(crate) fn check_game(&self, game: GameKind) -> Result<(), BotError> {
        if self.speaks() == BotProtocol::CodinGame && !game.has_codingame_grid() {
            return Err(BotError(format!(
                "bot '{}' speaks CodinGame's protocol, and CodinGame has no {game}: it plays \
                 tictactoe and uttt",
                self.name
            )));
        }
        if self.games.is_empty() || self.games.contains(&game) {
            return Ok(());
        }
        let list: Vec<&str> = self.games.iter().map(|g| g.name()).collect();
        Err(BotError(format!(
            "bot '{}' does not play {game} (its games: {})",
            self.name,
            list.join(", ")
        )))
    }

    /// Fails unless the program can be started: a path naming an
    /// executable file, or a name found on `PATH`.
    pub(crate) fn check_startable(&self) -> Result<(), BotError> {
        let program = self.command.first().map(String::as_str).unwrap_or("");
        if let Some(dir) = &self.cwd {
            if !dir.is_dir() {
                return Err(BotError(format!(
                    "bot '{}': working directory {} does not exist",
                    self.name,
                    dir.display()
                )));
            }
        }
        let found = if program.contains('/') {
            let p = Path::new(program);
            let p = match &self.cwd {
                Some(dir) if p.is_relative() => dir.join(p),
                _ => p.to_path_buf(),
            };
            if p.is_file() && !is_executable(&p) {
                // What a zip upload does to a compiled bot or a script.
                return Err(BotError(format!(
                    "bot '{}': cannot start '{program}': the file is not executable (uploads \
                     and zip files often lose the permission: `chmod +x {}` fixes it)",
                    self.name,
                    p.display()
                )));
            }
            is_executable(&p)
        } else {
            std::env::var_os("PATH")
                .map(|paths| std::env::split_paths(&paths).any(|d| is_executable(&d.join(program))))
                .unwrap_or(false)
        };
        if found {
            Ok(())
        } else {
            Err(BotError(format!(
                "bot '{}': cannot start '{program}': no such executable{}",
                self.name,
                if program.contains('/') {
                    ""
                } else {
                    " on PATH"
                }
            )))
        }
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_command_word_that_climbs_out_of_the_folder_is_found() {
        use super::escapes;
        assert!(escapes("../alice/bot.py"));
        assert!(escapes("--path=lib:../../x"));
        assert!(escapes("a/../../b"));
        assert!(!escapes("bot.py"));
        assert!(!escapes("./lib/../bot.py"));
        assert!(!escapes("/usr/bin/python3"));
    }

    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn manifest_fields_become_a_spec() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().to_path_buf();
        let p = write(
            &d,
            "bot.toml",
            "name = \"b\"\ncommand = \"sh -c 'echo hi'\"\ncwd = \"sub\"\ngames = [\"tictactoe\"]\n\
             [env]\nA = \"1\"\n[limits]\nmemory_mb = 10\n",
        );
        let m = BotManifest::load(&p).unwrap();
        let s = m.into_spec(&d).unwrap();
        assert_eq!(s.command, vec!["sh", "-c", "echo hi"]);
        assert_eq!(s.cwd, Some(std::path::absolute(d.join("sub")).unwrap()));
        assert_eq!(s.env["A"], "1");
        assert_eq!(s.limits.memory_mb, Some(10));
        assert!(s.check_game(GameKind::TicTacToe).is_ok());
        let e = s.check_game(GameKind::Uttt).unwrap_err().0;
        assert!(e.contains("does not play uttt"), "{e}");
    }
    #[test]
    fn protocol_and_time_in_a_manifest() {
        let m: BotManifest =
            toml::from_str("name='cg'\ncommand='sh'\nprotocol='codingame'\ntime='codingame'\n")
                .unwrap();
        let s = m.into_spec(Path::new(".")).unwrap();
        assert_eq!(s.speaks(), BotProtocol::CodinGame);
        assert_eq!(s.time, Some(TimeProfile::CodinGame));
        let e = s.check_game(GameKind::Notakto).unwrap_err().0;
        assert!(e.contains("CodinGame has no notakto"), "{e}");
        assert!(s.check_game(GameKind::Uttt).is_ok());
        // A manifest that does not say speaks v1; a bare command has no say.
        let m: BotManifest = toml::from_str("name='v'\ncommand='sh'\n").unwrap();
        assert_eq!(
            m.into_spec(Path::new(".")).unwrap().protocol,
            Some(BotProtocol::V1)
        );
        assert_eq!(
            ExternalSpec::from_command_line("sh").unwrap().protocol,
            None
        );
        let bad = toml::from_str::<BotManifest>("name='b'\ncommand='sh'\nprotocol='v2'\n");
        assert!(bad.is_err());
        let m: BotManifest =
            toml::from_str("name='c'\ncommand='sh'\nkind='console'\nprotocol='codingame'\n")
                .unwrap();
        let e = m.into_spec(Path::new(".")).unwrap_err().0;
        assert!(e.contains("console program"), "{e}");
    }

    #[test]
    fn unknown_key_names_file_line_and_column() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path().to_path_buf();
        let p = write(
            &d,
            "bad.toml",
            "name = \"b\"\ncommand = \"sh\"\n  colour = 1\n",
        );
        let e = BotManifest::load(&p).unwrap_err().0;
        assert!(e.contains("bad.toml:3:3:"), "{e}");
        assert!(e.contains("colour"), "{e}");
    }
}

#[cfg(test)]
mod props {
    //! Property tests of the manifest reader: no text makes it (or the
    //! vetting of a student's manifest) panic, errors name the file, and a
    //! manifest that reads becomes a spec or a clear error.
    use super::*;
    use proptest::prelude::*;

    const GOOD: &str = "name = \"b\"\ncommand = \"python3 bot.py --x\"\n\
        games = [\"tictactoe\"]\nreuse = true\nsandbox = \"best-effort\"\n\
        [env]\nA = \"1\"\n";

    fn check(text: &str) {
        let path = Path::new("dir/bot.toml");
        match BotManifest::parse(path, text) {
            Ok(m) => {
                let _ = m.into_spec(Path::new("dir"));
            }
            Err(e) => assert!(e.0.contains("bot.toml:"), "{}", e.0),
        }
    }

    proptest! {
        #[test]
        fn any_text_is_read_or_refused(text in any::<String>()) {
            check(&text);
        }

        #[test]
        fn a_damaged_good_manifest_is_read_or_refused(
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..4, "[\\[\\]=\"\n a-z0-9./-]{0,3}"), 1..6)
        ) {
            let mut text: Vec<char> = GOOD.chars().collect();
            for (at, cut, insert) in edits {
                let i = at.index(text.len() + 1);
                let end = (i + cut).min(text.len());
                text.splice(i..end, insert.chars());
            }
            check(&text.into_iter().collect::<String>());
        }
    }
}
