//! The run folder: the one module that opens, locks, appends to and reads
//! an output folder (`--out DIR` of `tournament`, `match`, `grade`, `serve`,
//! `merge`).
//!
//! A run folder holds:
//! - `games.jsonl`: one finished game per line ([`GameRecord`] as JSON),
//!   appended with one `write` per game the moment it finishes, so a kill
//!   loses no finished game;
//! - `tournament.toml`: the configuration with its effective seed, for runs
//!   that can be resumed and merged;
//! - `fingerprint.json`: everything else that decides the games, above all
//!   each external bot's command, manifest and program checksums, so that
//!   `--resume` refuses a folder whose bots changed, and says what changed;
//! - `run.json`: what the report shows about the run ([`RunSettings`]): its
//!   settings in words, its title, when it was made and by which referee,
//!   and what each bot is. Nothing in it decides a game, so it is never
//!   checked on resume;
//! - `.referee.lock`: held (with `flock`) by the run writing the folder, so a
//!   second run, or a `--resume` while a run is going, is refused with the
//!   holder's pid and command line.
//!
//! One rule for a torn last line (a run killed in the middle of writing
//! one): a last line without its newline is not a game. Readers skip it and
//! report it ([`Torn`]); a run that continues the folder cuts it off before
//! appending, and says so. Any other bad line is an error naming
//! `file:line`.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use crate::bot::manifest::{read_capped, read_small_text, ExternalSpec, MAX_SMALL_FILE};
use crate::bot::BotSpec;
use crate::play::record::GameRecord;

/// The file of finished games in a run folder.
pub(crate) const GAMES: &str = "games.jsonl";
/// The configuration copy in a run folder.
pub const CONFIG: &str = "tournament.toml";
/// What else decides the games: the bots' programs.
pub(crate) const FINGERPRINT: &str = "fingerprint.json";
/// What the report shows about the run (its settings, title and date).
pub(crate) const SETTINGS: &str = "run.json";
/// The lock file held by the run writing the folder.
pub(crate) const LOCK: &str = ".referee.lock";

/// The longest line of a games file: far more than any game record (the
/// longest game with a forfeit's stderr tail is a few KiB).
pub(crate) const MAX_LINE: u64 = 1 << 20;

/// Why a run could not start, resume or finish in its run folder: the
/// data, for the caller to word (the command line names its flags).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The games file already holds games and resuming was not asked for.
    #[error("{} already holds games", .games.display())]
    HoldsGames {
        /// The games file.
        games: PathBuf,
    },
    /// Resuming a folder whose configuration differs from this run's.
    #[error("{} holds a different run: {}", .dir.display(), .differences.join("; "))]
    DifferentRun {
        /// The run folder.
        dir: PathBuf,
        /// What differs, one item each.
        differences: Vec<String>,
    },
    /// Resuming was asked for without a run folder.
    #[error("resuming needs a run folder (the folder of the run to continue)")]
    ResumeWithoutFolder,
    /// Writing a game failed; the folder ends on a whole game, so the run
    /// can be resumed once the cause is fixed.
    #[error("{cause}")]
    Unfinished {
        /// The failure, as text.
        cause: String,
    },
    /// The folder a merge writes into already holds games.
    #[error("{} already holds games", .games.display())]
    MergeIntoRun {
        /// The games file.
        games: PathBuf,
    },
    /// More shards than the schedule has pairs of games.
    #[error(
        "shard {k}/{n}: the schedule has only {couples} pairs of games, so at most {couples} \
         shards (a shard plays whole pairs)"
    )]
    TooManyShards {
        /// The shard.
        k: u64,
        /// The shards.
        n: u64,
        /// Pairs of games in the schedule.
        couples: u64,
    },
    /// A run that cannot be split into shards.
    #[error("shard {k}/{n}: {why}")]
    NoShards {
        /// The shard.
        k: u64,
        /// The shards.
        n: u64,
        /// Why the run is played whole.
        why: &'static str,
    },
    /// Merging found games missing from every folder given.
    #[error("{missing} of {total} games are missing (is a shard unfinished or not listed?)")]
    MissingGames {
        /// Games missing.
        missing: usize,
        /// Games of the schedule.
        total: u64,
    },
}

/// The path of the games file of run folder `dir`.
pub fn games_path(dir: &Path) -> PathBuf {
    dir.join(GAMES)
}

/// A torn last line: what a kill in the middle of a write leaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Torn {
    /// The file it is in.
    pub path: PathBuf,
    /// Its line number (1-based).
    pub line: usize,
    /// Its length in bytes.
    pub bytes: u64,
}

impl fmt::Display for Torn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: a torn last line ({} bytes without a newline: the run was stopped while \
             writing it) is not a game",
            self.path.display(),
            self.line,
            self.bytes
        )
    }
}

/// The games of a run folder, and the torn line skipped, if any.
#[derive(Clone, Debug, Default)]
pub struct Games {
    /// Every complete record, in file order.
    pub records: Vec<GameRecord>,
    /// The torn last line that was skipped.
    pub torn: Option<Torn>,
    /// What the user should know about the folder (a torn line cut off, a
    /// fingerprint missing), for the caller to show.
    pub notes: Vec<String>,
    /// Bytes of complete lines (where a torn line starts).
    good_len: u64,
}

/// Reads the games of run folder `dir` (none when it has no games file).
/// A torn last line is skipped and reported in [`Games::torn`]; any other
/// line that is not a game record is an error naming `file:line`.
pub(crate) fn read_games(dir: &Path) -> anyhow::Result<Games> {
    let mut records = Vec::new();
    let mut games = scan_games(dir, |r| {
        records.push(r);
        Ok(())
    })?;
    games.records = records;
    Ok(games)
}

/// Reads the games of run folder `dir` one at a time, handing each to
/// `each` (which may stop the scan with an error) and keeping none: memory
/// does not grow with the file. The rules are [`read_games`]'; the result's
/// `records` is empty.
pub(crate) fn scan_games(
    dir: &Path,
    mut each: impl FnMut(GameRecord) -> anyhow::Result<()>,
) -> anyhow::Result<Games> {
    let path = games_path(dir);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Games::default()),
        Err(e) => return Err(e).with_context(|| format!("cannot open {}", path.display())),
    };
    let mut reader = BufReader::new(file);
    let mut games = Games::default();
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        // Bounded: a file that never ends a line (a device, a damaged
        // file) is refused at the cap instead of filling memory.
        let n = (&mut reader)
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if n == 0 {
            break;
        }
        number += 1;
        if n as u64 > MAX_LINE {
            bail!(
                "{}:{number}: a line longer than {} MiB is not a game record (is this a run \
                 folder's games file?)",
                path.display(),
                MAX_LINE >> 20
            );
        }
        if line.last() != Some(&b'\n') {
            let torn = Torn {
                path: path.clone(),
                line: number,
                bytes: n as u64,
            };
            games.notes.push(torn.to_string());
            games.torn = Some(torn);
            break;
        }
        games.good_len += n as u64;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let rec: GameRecord = serde_json::from_slice(&line)
            .map_err(|e| anyhow::anyhow!("{}:{number}: not a game record: {e}", path.display()))?;
        each(rec)?;
    }
    Ok(games)
}

/// Reads the games of a run folder that must have them (to report or merge
/// it): a missing games file is an error naming it.
pub(crate) fn read_existing_games(dir: &Path) -> anyhow::Result<Games> {
    let path = games_path(dir);
    if !path.is_file() {
        bail!(
            "cannot open {}: no such file (is {} the output folder of a run?)",
            path.display(),
            dir.display()
        );
    }
    read_games(dir)
}

/// A run folder held for writing: its lock is taken, its games file open
/// for appending. Shared by reference between the threads that finish
/// games (appends of whole lines do not interleave).
#[derive(Debug)]
pub struct RunFolder {
    dir: PathBuf,
    games: File,
    /// Where the games file's last complete record ends, and whether an
    /// append failed; appends take it in turn, so that a failed one is
    /// cut off before any other is written.
    tail: std::sync::Mutex<Tail>,
    _lock: nix::fcntl::Flock<File>,
}

/// The end of the games file as the folder wrote it.
#[derive(Debug, Default)]
struct Tail {
    /// Bytes of complete records.
    good_len: u64,
    /// An append failed: the run must stop, and nothing more is written.
    failed: bool,
}

/// The error of an append that failed (a full disk, an I/O error): the
/// games file was cut back to its last complete record and the run must
/// stop (a tournament or match says that `--resume` finishes it). Found in an error's chain with
/// `downcast_ref`.
#[derive(Debug)]
pub struct AppendFailed {
    /// The games file.
    pub path: PathBuf,
    /// What the system said.
    pub error: std::io::Error,
    /// Whether cutting the partial record off worked too.
    pub cut: bool,
}

impl fmt::Display for AppendFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write {}: {}; ", self.path.display(), self.error)?;
        if self.cut {
            write!(f, "it was cut back to its last complete game and ")?;
        } else {
            write!(f, "its partial last line is skipped on resume and ")?;
        }
        write!(f, "the run stopped")
    }
}

impl std::error::Error for AppendFailed {}

/// Who holds a run folder, as its lock file says.
fn holder_text() -> String {
    let args: Vec<String> = std::env::args().collect();
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!(
        "pid {} since {since} (unix time): {}\n",
        std::process::id(),
        args.join(" ")
    )
}

/// Creates `dir` and takes its lock, or fails naming the run that holds it.
pub(crate) fn lock(dir: &Path) -> anyhow::Result<nix::fcntl::Flock<File>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create output folder {}", dir.display()))?;
    let lock_path = dir.join(LOCK);
    let lock_file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .with_context(|| format!("cannot open {}", lock_path.display()))?;
    let mut lock =
        match nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(l) => l,
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
                let holder = std::fs::read_to_string(&lock_path).unwrap_or_default();
                bail!(
                    "{} is in use by another referee run ({}); wait for it to finish, or \
                     choose another folder",
                    dir.display(),
                    holder.trim()
                );
            }
            Err((_, e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", lock_path.display()))
            }
        };
    // Say who holds it, for the next one that tries.
    lock.set_len(0)
        .and_then(|_| lock.write_all(holder_text().as_bytes()))
        .with_context(|| format!("cannot write {}", lock_path.display()))?;
    Ok(lock)
}

impl RunFolder {
    /// Opens `dir` for writing games: creates it, takes its lock (or fails
    /// naming the run that holds it), and cuts a torn last line off the
    /// games file so that appends start on a clean line. Returns the folder
    /// and the games already in it (with the torn line that was cut, if
    /// any, in [`Games::torn`]).
    pub fn open(dir: &Path) -> anyhow::Result<(RunFolder, Games)> {
        let lock = lock(dir)?;
        let mut records = Vec::new();
        let (folder, mut games) = RunFolder::open_locked(dir, lock, |r| {
            records.push(r);
            Ok(())
        })?;
        games.records = records;
        Ok((folder, games))
    }

    /// Reads the games of a locked folder through `each`, cuts a torn last
    /// line off, and opens the games file for appending.
    fn open_locked(
        dir: &Path,
        lock: nix::fcntl::Flock<File>,
        each: impl FnMut(GameRecord) -> anyhow::Result<()>,
    ) -> anyhow::Result<(RunFolder, Games)> {
        let mut games = scan_games(dir, each)?;
        let path = games_path(dir);
        if let Some(t) = &games.torn {
            // What reading said, and that it is now cut off.
            games.notes.pop();
            games.notes.push(format!("{t}; it was cut off"));
            let f = OpenOptions::new()
                .write(true)
                .open(&path)
                .with_context(|| format!("cannot open {}", path.display()))?;
            f.set_len(games.good_len)
                .with_context(|| format!("cannot cut the torn last line of {}", path.display()))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok((
            RunFolder {
                dir: dir.to_path_buf(),
                games: file,
                tail: std::sync::Mutex::new(Tail {
                    good_len: games.good_len,
                    failed: false,
                }),
                _lock: lock,
            },
            games,
        ))
    }

    /// Opens `dir` for a run that must not mix with an earlier one: games
    /// already there are refused unless `resume`, and a resumed folder must
    /// hold the same `config` and `bots` (the refusal names what differs).
    /// Writes the configuration and fingerprint; returns the folder and the
    /// games already played.
    #[cfg(test)]
    pub(crate) fn start(
        dir: &Path,
        config: &toml::Table,
        bots: &[BotPrint],
        resume: bool,
    ) -> anyhow::Result<(RunFolder, Games)> {
        let mut records = Vec::new();
        let (folder, mut games) = RunFolder::start_with(dir, config, bots, resume, |r| {
            records.push(r);
            Ok(())
        })?;
        games.records = records;
        Ok((folder, games))
    }

    /// `RunFolder::start` (tests) that hands the games already played to `each`,
    /// one at a time, instead of keeping them (the result's `records` is
    /// empty): a resumed run of any length reads its folder in bounded
    /// memory. The folder is checked against `config` and `bots` before any
    /// game is read.
    pub(crate) fn start_with(
        dir: &Path,
        config: &toml::Table,
        bots: &[BotPrint],
        resume: bool,
        each: impl FnMut(GameRecord) -> anyhow::Result<()>,
    ) -> anyhow::Result<(RunFolder, Games)> {
        let lock = lock(dir)?;
        // Any byte in the games file is a game, or a torn line of one.
        let has_games = std::fs::metadata(games_path(dir)).is_ok_and(|m| m.len() > 0);
        if has_games && !resume {
            return Err(RunError::HoldsGames {
                games: games_path(dir),
            }
            .into());
        }
        let mut notes = Vec::new();
        let cfg_path = dir.join(CONFIG);
        if resume && cfg_path.exists() {
            let old = read_config(dir)?;
            let diffs = config_differences(&old, config);
            if !diffs.is_empty() {
                return Err(RunError::DifferentRun {
                    dir: dir.to_path_buf(),
                    differences: diffs,
                }
                .into());
            }
            match read_fingerprint(dir)? {
                Some(old) => {
                    let diffs = bot_differences(&old, bots);
                    if !diffs.is_empty() {
                        bail!(
                            "{} was played by other bots: {}; resuming would mix two programs \
                             under one name (choose another folder)",
                            dir.display(),
                            diffs.join("; ")
                        );
                    }
                }
                None if has_games => notes.push(format!(
                    "warning: {} has no {FINGERPRINT} (written by an older referee): the bots' \
                     programs cannot be checked against the games already played",
                    dir.display()
                )),
                None => {}
            }
        } else if resume && has_games {
            bail!(
                "{} is missing, so the games in {} cannot be checked against this run",
                cfg_path.display(),
                games_path(dir).display()
            );
        }
        let (folder, mut games) = RunFolder::open_locked(dir, lock, each)?;
        games.notes.extend(notes);
        let text = toml::to_string(config).context("writing the configuration")?;
        folder.write_file(CONFIG, text.as_bytes())?;
        let print = crate::escape::json::to_string_pretty(bots)? + "\n";
        folder.write_file(FINGERPRINT, print.as_bytes())?;
        Ok((folder, games))
    }

    /// Keeps only the games whose id satisfies `keep`, rewriting the games
    /// file (to a temporary file, then renamed over it, so a reader or a
    /// kill never sees half of it) and appending to the new file from now
    /// on. Returns how many games were dropped. Used when a run stops early
    /// (a concluded SPRT) and games played past its end must not count.
    pub(crate) fn retain_games(&mut self, keep: impl Fn(u64) -> bool) -> anyhow::Result<u64> {
        let path = games_path(&self.dir);
        let tmp = self.dir.join(format!(".{GAMES}.tmp"));
        let mut out = std::io::BufWriter::new(
            File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?,
        );
        let mut dropped = 0;
        scan_games(&self.dir, |r| {
            if keep(r.id) {
                let mut line = crate::escape::json::to_vec(&r)?;
                line.push(b'\n');
                out.write_all(&line)
                    .with_context(|| format!("cannot write {}", tmp.display()))?;
            } else {
                dropped += 1;
            }
            Ok(())
        })?;
        let file = out
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all().map(|_| f))
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        drop(file);
        std::fs::rename(&tmp, &path)
            .with_context(|| format!("cannot replace {}", path.display()))?;
        self.games = OpenOptions::new()
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        let len = self
            .games
            .metadata()
            .with_context(|| format!("cannot read {}", path.display()))?
            .len();
        self.tail
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .good_len = len;
        Ok(dropped)
    }

    /// Appends one game: its JSON and a newline in one `write`.
    pub fn append(&self, rec: &GameRecord) -> anyhow::Result<()> {
        // A record always serialises (plain data); what a bot wrote in it
        // (a stderr tail) is safe to `cat` (`crate::escape::json`).
        let mut line = crate::escape::json::to_vec(rec)?;
        self.append_line(&mut line)
    }

    /// Appends one game already serialised as `line` (without its newline,
    /// which is added here so that the line goes out in one `write`).
    ///
    /// A failed write (a full disk, an I/O error) may leave part of the line
    /// in the file: it is cut back to the last complete record at once,
    /// before any other append, and every later append is refused, so that
    /// the file ends on a whole game and the run stops ([`AppendFailed`]).
    pub(crate) fn append_line(&self, line: &mut Vec<u8>) -> anyhow::Result<()> {
        let path = games_path(&self.dir);
        let mut tail = self.tail.lock().unwrap_or_else(|p| p.into_inner());
        if tail.failed {
            bail!(
                "{} is not written after an earlier failed write",
                path.display()
            );
        }
        line.push(b'\n');
        let result = (&self.games).write_all(line);
        line.pop();
        match result {
            Ok(()) => {
                tail.good_len += line.len() as u64 + 1;
                Ok(())
            }
            Err(error) => {
                tail.failed = true;
                // Cutting needs no free space: it gives blocks back.
                let cut = self.games.set_len(tail.good_len).is_ok();
                Err(AppendFailed { path, error, cut }.into())
            }
        }
    }

    /// Writes `name` in the folder whole: to a temporary file first, then
    /// renamed, so a reader never sees half of it.
    pub fn write_file(&self, name: &str, contents: &[u8]) -> anyhow::Result<()> {
        write_atomic(&self.dir, name, contents)
    }
}

/// Reads the configuration copy of a run folder.
/// What run folder `dir` holds, by its configuration: `"match"` for a
/// match's folder, `None` for a tournament's.
pub fn run_kind(dir: &Path) -> anyhow::Result<Option<String>> {
    Ok(read_config(dir)?
        .get("kind")
        .and_then(|k| k.as_str())
        .map(str::to_string))
}

pub(crate) fn read_config(dir: &Path) -> anyhow::Result<toml::Table> {
    let p = dir.join(CONFIG);
    let text = read_small_text(&p)?;
    toml::from_str(&text).with_context(|| format!("{}", p.display()))
}

/// How the bots that played run folder `other` differ from those of
/// `first` (empty when either folder has no fingerprint), for `merge`:
/// shards of one tournament must have been played by the same programs.
pub(crate) fn fingerprint_differences(first: &Path, other: &Path) -> anyhow::Result<Vec<String>> {
    Ok(match (read_fingerprint(first)?, read_fingerprint(other)?) {
        (Some(a), Some(b)) => bot_differences(&a, &b),
        _ => Vec::new(),
    })
}

fn read_fingerprint(dir: &Path) -> anyhow::Result<Option<Vec<BotPrint>>> {
    let p = dir.join(FINGERPRINT);
    if !p.exists() {
        return Ok(None);
    }
    let text = read_small_text(&p)?;
    Ok(Some(
        serde_json::from_str(&text).with_context(|| format!("{}", p.display()))?,
    ))
}

/// Adds CodinGame's clock to a run folder's configuration when `time`
/// has it (`launch_ms`, `slack_ms`; absent is referee's own clock, as in
/// folders written before there was another).
pub(crate) fn insert_clock(t: &mut toml::Table, time: &crate::bot::TimeControl) {
    let int = |v: u64| toml::Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
    if time.launch_ms > 0 {
        t.insert("launch_ms".into(), int(time.launch_ms));
    }
    if time.slack_ms > 0 {
        t.insert("slack_ms".into(), int(time.slack_ms));
    }
}

/// The keys whose values differ between two configurations, in words.
/// `boards = 3`, which folders of every game once held, is the same as
/// no `boards` (only Notakto's folders keep it now).
pub(crate) fn config_differences(old: &toml::Table, new: &toml::Table) -> Vec<String> {
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    let default_boards = toml::Value::Integer(3);
    keys.into_iter()
        .filter_map(|k| match (old.get(k), new.get(k)) {
            (Some(a), Some(b)) if a == b => None,
            (Some(a), None) | (None, Some(a)) if k == "boards" && *a == default_boards => None,
            (Some(a), Some(b)) => Some(format!("`{k}` was {a}, now {b}")),
            (Some(a), None) => Some(format!("`{k}` was {a}, now unset")),
            (None, Some(b)) => Some(format!("`{k}` was unset, now {b}")),
            (None, None) => None,
        })
        .collect()
}

/// What decides one bot's games, as a run folder keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BotPrint {
    /// The name the bot plays under.
    pub name: String,
    /// A built-in with its parameters (`optimal:iters=5000`), or the
    /// external program's command line.
    pub bot: String,
    /// An external bot's working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// An external bot's extra environment, as `K=V`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// SHA-256 of its manifest file, when it came from one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_sha256: Option<String>,
    /// SHA-256 of each file its command names (the program, a script), by
    /// path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<(String, String)>,
    /// SHA-256 of what else its program reads from its own folder, by path
    /// relative to that folder: every file of a manifest bot's folder, or
    /// the Python modules a script imports from its folder. `None` in a
    /// fingerprint written by an older referee (then not compared).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imports: Option<Vec<(String, String)>>,
}

impl BotPrint {
    /// The fingerprint of bot `spec` playing as `name`.
    pub(crate) fn of(name: &str, spec: &BotSpec) -> BotPrint {
        match spec {
            BotSpec::Builtin(b) => BotPrint {
                name: name.to_string(),
                bot: b.to_string(),
                cwd: None,
                env: Vec::new(),
                manifest_sha256: None,
                files: Vec::new(),
                imports: None,
            },
            BotSpec::External(e) => external_print(name, e),
        }
    }
}

fn external_print(name: &str, e: &ExternalSpec) -> BotPrint {
    let hash = |p: &Path| -> Option<String> {
        use sha2::Digest;
        let bytes = std::fs::read(p).ok()?;
        Some(format!("{:x}", sha2::Sha256::digest(&bytes)))
    };
    let resolve = |word: &str| -> PathBuf {
        let p = Path::new(word);
        match &e.cwd {
            Some(dir) if p.is_relative() => dir.join(p),
            _ => p.to_path_buf(),
        }
    };
    // The program when given as a path, and every argument naming a file
    // (a script): an interpreter on PATH is the machine's, not the bot's.
    let mut files = Vec::new();
    for (i, word) in e.command.iter().enumerate() {
        if i == 0 && !word.contains('/') {
            continue;
        }
        let p = resolve(word);
        if p.is_file() {
            if let Some(h) = hash(&p) {
                files.push((word.clone(), h));
            }
        }
    }
    // What the program reads besides: a manifest bot's whole folder (its
    // author keeps the bot there), or what a script imports from its own.
    let imports = match e.manifest.as_deref().and_then(Path::parent) {
        Some(dir) => folder_files(dir),
        None => {
            let scripts: Vec<PathBuf> = e
                .command
                .iter()
                .skip(1)
                .map(|w| resolve(w))
                .filter(|p| p.extension().is_some_and(|x| x == "py") && p.is_file())
                .collect();
            python_imports(&scripts)
        }
    };
    // The manifest and the files its command names are checked above.
    let named: Vec<PathBuf> = e
        .command
        .iter()
        .map(|w| resolve(w))
        .chain(e.manifest.clone())
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let imports = imports
        .into_iter()
        .filter(|(_, p)| p.canonicalize().map_or(true, |c| !named.contains(&c)))
        .filter_map(|(rel, p)| hash(&p).map(|h| (rel, h)))
        .collect();
    BotPrint {
        name: name.to_string(),
        bot: shell_words::join(&e.command),
        cwd: e.cwd.as_ref().map(|c| c.display().to_string()),
        env: e.env.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        manifest_sha256: e.manifest.as_deref().and_then(hash),
        files,
        imports: Some(imports),
    }
}

/// Most files fingerprinted in one bot's folder: a bot folder is a
/// program, not a data set; past this the rest is not checked.
const MAX_FOLDER_FILES: usize = 2000;

/// Every file under `dir` (by path relative to it, sorted), without hidden
/// files and folders, Python's caches, run folders (they hold a lock file
/// and change with every game) and symbolic links (which may lead out).
fn folder_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        if d.join(LOCK).exists() {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with('.') || name == "__pycache__" {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() {
                todo.push(path);
            } else if kind.is_file() && out.len() < MAX_FOLDER_FILES {
                if let Ok(rel) = path.strip_prefix(dir) {
                    out.push((rel.to_string_lossy().into_owned(), path));
                }
            }
        }
    }
    out.sort();
    out
}

/// The modules Python `scripts` import, directly or through each other,
/// that lie in a script's own folder (`helper.py`, or a package
/// `helper/__init__.py` and its `.py` files), by path relative to that
/// folder, sorted. Read from `import a, b` and `from a import b` lines
/// (the forms a student writes); modules elsewhere (the standard library)
/// are not the bot's.
fn python_imports(scripts: &[PathBuf]) -> Vec<(String, PathBuf)> {
    let mut seen: Vec<(String, PathBuf)> = Vec::new();
    let mut todo: Vec<(PathBuf, PathBuf)> = scripts
        .iter()
        .filter_map(|s| Some((s.clone(), s.parent()?.to_path_buf())))
        .collect();
    while let Some((file, root)) = todo.pop() {
        let Ok(bytes) = read_capped(&file, MAX_SMALL_FILE) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for module in imported_modules(&text) {
            // `a.b` is a/b.py or a/b/__init__.py; `a` alone the same.
            let parts: Vec<&str> = module.split('.').collect();
            let rel: PathBuf = parts.iter().collect();
            let mut found = vec![root.join(&rel).with_extension("py")];
            // Importing `a.b` runs `a/__init__.py` first.
            for n in 1..parts.len() {
                let package: PathBuf = parts[..n].iter().collect();
                found.push(root.join(package).join("__init__.py"));
            }
            let package = root.join(&rel);
            if package.is_dir() {
                found.extend(
                    std::fs::read_dir(&package)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .map(|e| e.path())
                        .filter(|p| p.extension().is_some_and(|x| x == "py")),
                );
            }
            for p in found {
                if !p.is_file() || seen.len() >= MAX_FOLDER_FILES {
                    continue;
                }
                let Ok(rel) = p.strip_prefix(&root) else {
                    continue;
                };
                let rel = rel.to_string_lossy().into_owned();
                if seen.iter().any(|(r, _)| *r == rel) {
                    continue;
                }
                seen.push((rel, p.clone()));
                todo.push((p, root.clone()));
            }
        }
    }
    seen.sort();
    seen
}

/// The module names of a Python source's `import` and `from ... import`
/// lines (relative imports as if from the script's folder).
fn imported_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                if let Some(m) = part.split_whitespace().next() {
                    out.push(m.to_string());
                }
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            let mut words = rest.split_whitespace();
            let module = words.next().unwrap_or("").trim_start_matches('.');
            if words.next() != Some("import") {
                continue;
            }
            if module.is_empty() {
                // `from . import a, b`: the names are modules.
                let names = words.collect::<Vec<_>>().join(" ");
                for n in names.trim_matches(|c| c == '(' || c == ')').split(',') {
                    if let Some(m) = n.split_whitespace().next() {
                        out.push(m.to_string());
                    }
                }
            } else {
                out.push(module.to_string());
            }
        }
    }
    out.retain(|m| {
        !m.is_empty()
            && m.split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || c == '_'))
    });
    out
}

/// How the bots of a resumed run differ from those that played it, in words.
pub(crate) fn bot_differences(old: &[BotPrint], new: &[BotPrint]) -> Vec<String> {
    let mut out = Vec::new();
    for n in new {
        let Some(o) = old.iter().find(|o| o.name == n.name) else {
            out.push(format!("bot '{}' is new", n.name));
            continue;
        };
        if o.bot != n.bot {
            out.push(format!("bot '{}' was `{}`, now `{}`", n.name, o.bot, n.bot));
        }
        if o.cwd != n.cwd {
            out.push(format!("bot '{}' changed its working directory", n.name));
        }
        if o.env != n.env {
            out.push(format!("bot '{}' changed its environment", n.name));
        }
        if o.manifest_sha256 != n.manifest_sha256 {
            out.push(format!("bot '{}': its manifest changed", n.name));
        }
        for (path, sum) in &n.files {
            match o.files.iter().find(|(p, _)| p == path) {
                Some((_, old_sum)) if old_sum == sum => {}
                Some(_) => out.push(format!("bot '{}': {path} changed", n.name)),
                None => out.push(format!("bot '{}': {path} is new", n.name)),
            }
        }
        // Fingerprints from before imports were kept say nothing of them.
        if let (Some(old_imports), Some(new_imports)) = (&o.imports, &n.imports) {
            for (path, sum) in new_imports {
                match old_imports.iter().find(|(p, _)| p == path) {
                    Some((_, old_sum)) if old_sum == sum => {}
                    Some(_) => out.push(format!("bot '{}': {path} changed", n.name)),
                    None => out.push(format!("bot '{}': {path} is new", n.name)),
                }
            }
            for (path, _) in old_imports {
                if !new_imports.iter().any(|(p, _)| p == path) {
                    out.push(format!("bot '{}': {path} is gone", n.name));
                }
            }
        }
    }
    for o in old {
        if !new.iter().any(|n| n.name == o.name) {
            out.push(format!("bot '{}' is gone", o.name));
        }
    }
    out
}

/// What the report shows about a run, kept in its folder as `run.json`:
/// the settings in words, the title, when the run was made and by which
/// referee, and what each bot is. Every field may be missing (a file
/// written by another version), and unknown fields are ignored.
// Every `None` field is left out of the file.
#[serde_with::skip_serializing_none]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSettings {
    /// The report's title, when the run was given one.
    pub title: Option<String>,
    /// `round-robin`, `gauntlet`, `match`, `server` or `grading`.
    pub format: String,
    /// The game's name.
    pub game: String,
    /// Notakto boards (Notakto only).
    pub boards: Option<u8>,
    /// UTTT's rule when it is not the standard one (`codingame`).
    pub rules: Option<String>,
    /// A tournament's games per pairing.
    pub games_per_pairing: Option<u64>,
    /// A match's games (at most, with an SPRT).
    pub games: Option<u64>,
    /// A server's rounds per connection.
    pub rounds: Option<u64>,
    /// A gauntlet's challengers.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub challengers: Vec<String>,
    /// Per-move limit of external bots (or network clients), in ms.
    pub time_ms: Option<u64>,
    /// Start-up allowance added to a first turn, in ms.
    pub startup_ms: Option<u64>,
    /// The opening suite's file name (without its folder).
    pub openings: Option<String>,
    /// Whether the suite is played in an order shuffled by the seed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub shuffle_openings: bool,
    /// Random plies at the start of each pair of games.
    pub random_plies: Option<u64>,
    /// The master seed.
    pub seed: Option<u64>,
    /// A match's SPRT, as given.
    pub sprt: Option<String>,
    /// A server's protocol (`text` or `v1`).
    pub protocol: Option<String>,
    /// When the run was first started, UTC, as `2025-06-01T14:03:07Z`.
    pub created: Option<String>,
    /// The referee version that wrote the file.
    pub referee_version: Option<String>,
    /// The bots named by the run (a server's own bot; not its clients).
    pub bots: Vec<BotAbout>,
}

/// One bot of a run as the report describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BotAbout {
    /// The name it plays under.
    pub name: String,
    /// A built-in with its parameters (`optimal:iters=5000`), or the
    /// external program's command line.
    pub bot: String,
    /// One line on what it is: the built-in's from its game's table, an
    /// external bot's from its manifest or tournament entry.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
}

impl BotAbout {
    /// Bot `spec` of game `G` playing as `name`.
    pub(crate) fn of<G: crate::bot::BuiltinBots>(name: &str, spec: &BotSpec) -> BotAbout {
        match spec {
            BotSpec::Builtin(b) => BotAbout {
                name: name.to_string(),
                bot: b.to_string(),
                description: G::builtin(&b.name)
                    .map(|d| d.description.to_string())
                    .unwrap_or_default(),
            },
            BotSpec::External(e) => BotAbout {
                name: name.to_string(),
                bot: shell_words::join(&e.command),
                description: e.description.clone(),
            },
        }
    }
}

impl RunSettings {
    /// Settings of format `format` for game `G`, stamped with the time now
    /// and this referee's version; the caller fills in the rest.
    pub(crate) fn new<G: crate::game::Game>(
        format: &str,
        options: &crate::game::GameOptions,
    ) -> Self {
        RunSettings {
            format: format.to_string(),
            game: G::KIND.name().to_string(),
            boards: G::KIND.boards(options),
            rules: (!options.rules.is_standard()).then(|| options.rules.name().to_string()),
            created: Some(utc_text(std::time::SystemTime::now())),
            referee_version: Some(env!("CARGO_PKG_VERSION").to_string()),
            ..RunSettings::default()
        }
    }
}

/// `2025-06-01T14:03:07Z`: a moment in UTC, without a date crate.
pub(crate) fn utc_text(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Reads the settings of a run folder: `None` when it has no `run.json`.
pub fn read_settings(dir: &Path) -> anyhow::Result<Option<RunSettings>> {
    let p = dir.join(SETTINGS);
    if !p.exists() {
        return Ok(None);
    }
    let text = read_small_text(&p)?;
    Ok(Some(
        serde_json::from_str(&text).with_context(|| format!("{}", p.display()))?,
    ))
}

/// Sets the title kept in run folder `dir` (its `run.json`, made with only
/// the title when the folder has none), so that later reports show it:
/// `referee report DIR --title TEXT`. Written whole to a temporary file and
/// renamed; the folder's lock is not needed, as nothing in the file decides
/// a game.
pub fn save_title(dir: &Path, title: &str) -> anyhow::Result<()> {
    // Unreadable settings are replaced, as a run does.
    let mut s = read_settings(dir).ok().flatten().unwrap_or_default();
    s.title = Some(title.to_string());
    let text = crate::escape::json::to_string_pretty(&s)? + "\n";
    write_atomic(dir, SETTINGS, text.as_bytes())
}

/// Writes `dir/name` whole: to a temporary file, then renamed, so a reader
/// never sees half of it.
fn write_atomic(dir: &Path, name: &str, contents: &[u8]) -> anyhow::Result<()> {
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, contents)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .with_context(|| format!("cannot write {}", path.display()))
}

impl RunFolder {
    /// Writes the run's settings (`run.json`). A folder that has them
    /// already (a resumed run) keeps its date, and its title unless
    /// `settings` gives one.
    pub fn write_settings(&self, settings: &RunSettings) -> anyhow::Result<()> {
        let mut s = settings.clone();
        // Unreadable old settings are replaced: nothing in them decides a game.
        if let Ok(Some(old)) = read_settings(&self.dir) {
            s.created = old.created.or(s.created);
            s.title = s.title.or(old.title);
        }
        let text = crate::escape::json::to_string_pretty(&s)? + "\n";
        self.write_file(SETTINGS, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::GameKind;

    fn rec(id: u64) -> GameRecord {
        let mut r = crate::play::record::sample(GameKind::TicTacToe, ["a", "b"], None, &["4"]);
        r.id = id;
        r.seed = id;
        r.start = ".........".into();
        r.times_us = vec![3];
        r
    }

    fn cfg(seed: i64) -> toml::Table {
        let mut t = toml::Table::new();
        t.insert("seed".into(), toml::Value::Integer(seed));
        t
    }

    #[test]
    fn a_torn_last_line_is_reported_skipped_and_cut_on_resume() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        {
            let (f, games) = RunFolder::start(dir, &cfg(1), &[], false).unwrap();
            assert!(games.records.is_empty());
            for id in 0..3 {
                f.append(&rec(id)).unwrap();
            }
        }
        // A kill in the middle of the fourth write.
        let p = games_path(dir);
        let mut text = std::fs::read(&p).unwrap();
        text.extend_from_slice(b"{\"id\": 3, \"gam");
        std::fs::write(&p, &text).unwrap();
        let read = read_games(dir).unwrap();
        assert_eq!(read.records.len(), 3);
        let torn = read.torn.unwrap();
        assert_eq!((torn.line, torn.bytes), (4, 14));
        assert!(
            torn.to_string().contains("games.jsonl:4: a torn last line"),
            "{torn}"
        );
        // Without --resume the folder is refused; with another seed too,
        // naming the key that differs.
        let e = RunFolder::start(dir, &cfg(1), &[], false).unwrap_err();
        assert!(
            matches!(e.downcast_ref(), Some(RunError::HoldsGames { .. })),
            "{e}"
        );
        let e = RunFolder::start(dir, &cfg(2), &[], true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`seed` was 1, now 2"), "{e}");
        let (f, games) = RunFolder::start(dir, &cfg(1), &[], true).unwrap();
        assert_eq!(games.records, (0..3).map(rec).collect::<Vec<_>>());
        f.append(&rec(3)).unwrap();
        let again = read_games(dir).unwrap();
        assert_eq!(again.records.len(), 4);
        assert!(again.torn.is_none());
    }

    #[test]
    fn a_second_run_on_the_same_folder_is_refused_naming_the_holder() {
        let tmp = tempfile::tempdir().unwrap();
        let (first, _) = RunFolder::open(tmp.path()).unwrap();
        let e = RunFolder::open(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("in use by another referee run"), "{e}");
        assert!(e.contains(&format!("pid {}", std::process::id())), "{e}");
        drop(first);
        assert!(RunFolder::open(tmp.path()).is_ok());
    }

    #[test]
    fn a_bad_line_that_is_not_the_last_is_an_error_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        let line = serde_json::to_string(&rec(0)).unwrap();
        std::fs::write(
            games_path(tmp.path()),
            format!("{line}\nnonsense\n{line}\n"),
        )
        .unwrap();
        let e = read_games(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("games.jsonl:2: not a game record"), "{e}");
    }

    #[test]
    fn changed_programs_are_named() {
        let tmp = tempfile::tempdir().unwrap();
        let script = tmp.path().join("bot.py");
        std::fs::write(&script, "print(4)\n").unwrap();
        let mut spec = ExternalSpec::from_command_line("python3 bot.py").unwrap();
        spec.cwd = Some(tmp.path().to_path_buf());
        let before = BotPrint::of("alice", &BotSpec::External(spec.clone()));
        assert_eq!(before.files.len(), 1, "{before:?}");
        std::fs::write(&script, "print(5)\n").unwrap();
        let after = BotPrint::of("alice", &BotSpec::External(spec));
        let d = bot_differences(std::slice::from_ref(&before), &[after]);
        assert_eq!(d, ["bot 'alice': bot.py changed"]);
        let builtin = BotPrint::of(
            "alice",
            &BotSpec::Builtin(crate::bot::BuiltinSpec::parse("random")),
        );
        let d = bot_differences(&[before], &[builtin]);
        assert!(d[0].contains("was `python3 bot.py`, now `random`"), "{d:?}");
    }

    #[test]
    fn an_edited_helper_module_or_a_file_of_a_manifest_folder_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(
            dir.join("bot.py"),
            "import sys, helper  # the student's\nfrom strategy.search import best\n\
             from . import tables\nimport json\n",
        )
        .unwrap();
        std::fs::write(dir.join("helper.py"), "import deep\n").unwrap();
        std::fs::write(dir.join("deep.py"), "X = 1\n").unwrap();
        std::fs::write(dir.join("tables.py"), "T = []\n").unwrap();
        std::fs::create_dir(dir.join("strategy")).unwrap();
        std::fs::write(dir.join("strategy/__init__.py"), "").unwrap();
        std::fs::write(dir.join("strategy/search.py"), "def best(): pass\n").unwrap();
        std::fs::write(dir.join("notes.txt"), "not imported\n").unwrap();
        let mut spec = ExternalSpec::from_command_line("python3 bot.py").unwrap();
        spec.cwd = Some(dir.to_path_buf());
        let print = || BotPrint::of("bob", &BotSpec::External(spec.clone()));
        let before = print();
        let names: Vec<&str> = before
            .imports
            .as_ref()
            .unwrap()
            .iter()
            .map(|(p, _)| p.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "deep.py",
                "helper.py",
                "strategy/__init__.py",
                "strategy/search.py",
                "tables.py"
            ]
        );
        std::fs::write(dir.join("deep.py"), "X = 2\n").unwrap();
        std::fs::write(dir.join("notes.txt"), "still not imported\n").unwrap();
        let d = bot_differences(std::slice::from_ref(&before), &[print()]);
        assert_eq!(d, ["bot 'bob': deep.py changed"]);
        // A fingerprint from before imports were kept is not compared on them.
        let mut old = before.clone();
        old.imports = None;
        assert!(bot_differences(&[old], &[print()]).is_empty());

        // A manifest bot: its whole folder, run folders and caches aside.
        let m = tempfile::tempdir().unwrap();
        std::fs::write(
            m.path().join("bot.toml"),
            "name = \"carol\"\ncommand = \"./run.sh\"\n",
        )
        .unwrap();
        std::fs::write(m.path().join("run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::create_dir_all(m.path().join("data/__pycache__")).unwrap();
        std::fs::write(m.path().join("data/book.bin"), [1u8, 2]).unwrap();
        std::fs::write(m.path().join("data/__pycache__/x.pyc"), [0u8]).unwrap();
        std::fs::create_dir(m.path().join("out")).unwrap();
        std::fs::write(m.path().join("out").join(LOCK), "").unwrap();
        std::fs::write(m.path().join("out/games.jsonl"), "").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            m.path().join("run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let manifest = m.path().join("bot.toml");
        let spec = BotSpec::resolve::<crate::game::TicTacToe>(&manifest.to_string_lossy()).unwrap();
        let p = BotPrint::of("carol", &spec);
        let names: Vec<&str> = p
            .imports
            .as_ref()
            .unwrap()
            .iter()
            .map(|(p, _)| p.as_str())
            .collect();
        assert_eq!(names, ["data/book.bin"]);
        std::fs::write(m.path().join("data/book.bin"), [3u8]).unwrap();
        std::fs::write(m.path().join("out/games.jsonl"), "{}\n").unwrap();
        let d = bot_differences(&[p], &[BotPrint::of("carol", &spec)]);
        assert_eq!(d, ["bot 'carol': data/book.bin changed"]);
    }

    #[test]
    fn utc_dates_and_settings_keep_their_first_date() {
        let at = |s: u64| utc_text(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_735_689_599), "2024-12-31T23:59:59Z");
        let tmp = tempfile::tempdir().unwrap();
        let (f, _) = RunFolder::open(tmp.path()).unwrap();
        let mut s = RunSettings::new::<crate::game::Notakto>("match", &Default::default());
        assert_eq!(s.boards, Some(3));
        s.created = Some("2001-01-01T00:00:00Z".into());
        s.title = Some("first".into());
        f.write_settings(&s).unwrap();
        let mut again = s.clone();
        again.created = Some("2002-02-02T00:00:00Z".into());
        again.title = None;
        f.write_settings(&again).unwrap();
        let read = read_settings(tmp.path()).unwrap().unwrap();
        assert_eq!(read.created.as_deref(), Some("2001-01-01T00:00:00Z"));
        assert_eq!(read.title.as_deref(), Some("first"));
        // Unknown fields and missing ones read.
        std::fs::write(tmp.path().join(SETTINGS), "{\"format\":\"x\",\"later\":1}").unwrap();
        assert_eq!(read_settings(tmp.path()).unwrap().unwrap().format, "x");
        // A title set afterwards keeps the rest.
        save_title(tmp.path(), "second").unwrap();
        let read = read_settings(tmp.path()).unwrap().unwrap();
        assert_eq!(
            (read.format.as_str(), read.title.as_deref()),
            ("x", Some("second"))
        );
        let bare = tempfile::tempdir().unwrap();
        save_title(bare.path(), "t").unwrap();
        assert_eq!(
            read_settings(bare.path())
                .unwrap()
                .unwrap()
                .title
                .as_deref(),
            Some("t")
        );
    }
}
