//! Grading a whole class: every subfolder of a folder is a student's
//! submission; each gets its row in the gradebook, whatever is wrong with it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::rubric::Form;
use super::{grade, GradeConfig, GradeReport};
use crate::escape::csv::line as csv_line;
use crate::game::GameKind;
use crate::grade::feedback::{grading_leaderboard, GradeResult, LeaderboardEntry};
use crate::grade::graders::Format;
use crate::play::text::format_points;
use crate::play::Observer;
use crate::protocol::ForfeitReason;

/// One row of the gradebook.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GradebookRow {
    /// The student's folder name.
    pub student: String,
    /// `pass`, `fail` or `error`.
    pub verdict: String,
    /// Points over games (or, exhaustive, 1 for a pass), in percent.
    pub score_pct: f64,
    /// Games won, drawn and lost.
    pub wdl: String,
    /// Forfeits.
    pub forfeits: u64,
    /// One failure's line, or the error.
    pub example: String,
    /// Attempts the sandbox (or the system) refused the bot, as its stderr
    /// told them (docs/sandbox.md).
    pub denied: u64,
    /// The rubric's points.
    pub points: f64,
    /// The points the rubric is worth.
    pub max_points: f64,
    /// Points per rubric item, in the rubric's order.
    pub items: Vec<ItemPoints>,
    /// Why the bot failed or could not be graded, in one line (empty for a
    /// pass): the error, the breaker, the forfeit with the last line of
    /// its stderr (a Python traceback's `SyntaxError: ...`), or the first
    /// failing game.
    pub reason: String,
}

/// A rubric item's points in a gradebook row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ItemPoints {
    /// The item.
    pub name: String,
    /// Points given.
    pub points: f64,
}

/// What `grade-all` writes besides the gradebook.
#[derive(Clone, Debug)]
pub struct ClassOutput {
    /// The output folder: `feedback/<student>.md` and
    /// `gradescope/<student>/results.json` go there as each student is
    /// graded.
    pub dir: PathBuf,
    /// Extra Gradescope leaderboard columns per student (a class
    /// tournament's rank, score and Elo), by student.
    pub leaderboard: Vec<(String, Vec<LeaderboardEntry>)>,
    /// What to do with an earlier run's gradebook in the folder.
    pub earlier: Earlier,
    /// Grade only slice `K` of `N` of the class (`--shard K/N`): the
    /// students at positions K-1, K-1+N, ... of the sorted class.
    pub shard: Option<(u64, u64)>,
    /// The grading systems whose results are written per student besides
    /// Gradescope's: `<format>/<student>/<file>` (`Format::file_name`).
    pub formats: Vec<Format>,
}

/// Why `grade-all` (or the merge of its shards) cannot go on: the data a
/// message needs; the command line words its advice (which flag to pass).
#[derive(Debug, thiserror::Error)]
pub enum ClassError {
    /// The output folder holds an earlier run's gradebook, and the run was
    /// told neither to resume nor to overwrite it.
    #[error("{} is from an earlier grade-all", .0.display())]
    EarlierGradebook(PathBuf),
    /// A resumed folder was graded with other settings.
    #[error("{} was graded with other settings (`{old}`, now `{new}`)", dir.display())]
    OtherSettings {
        /// The output folder.
        dir: PathBuf,
        /// Its settings.
        old: String,
        /// This run's.
        new: String,
    },
    /// The output folder cannot be created or written in.
    #[error("{}: cannot {what} the folder: {source}", dir.display())]
    OutDir {
        /// The folder.
        dir: PathBuf,
        /// `create` or `write in`.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// More shards than students.
    #[error(
        "shard {k}/{n}: the class has only {students} students, so at most {students} shards \
         (a shard grades whole students)"
    )]
    TooManyShards {
        /// The shard.
        k: u64,
        /// The shards.
        n: u64,
        /// Students in the class.
        students: usize,
    },
    /// A folder given to merge is not a shard's.
    #[error("{} is not a shard of grade-all (it has no {SHARD})", .0.display())]
    NotAShard(PathBuf),
    /// A shard's folder does not grade all of its students yet.
    #[error("shard {k}/{n} in {} is unfinished: {graded} of {total} students graded", dir.display())]
    ShardUnfinished {
        /// The shard.
        k: u64,
        /// The shards.
        n: u64,
        /// Its folder.
        dir: PathBuf,
        /// Students graded.
        graded: usize,
        /// Students of the shard.
        total: usize,
    },
}

/// What a shard of `grade-all` records in its folder, for `merge`: which
/// slice of which class it graded, and how.
pub const SHARD: &str = "shard.json";

/// The contents of [`SHARD`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct ShardInfo {
    /// `[K, N]`.
    shard: [u64; 2],
    /// The grading command line (its bot left as `BOT`), without the shard.
    settings: String,
    /// The rubric's items, in order (the columns of grades.csv).
    items: Vec<String>,
    /// Every student of the class, sorted, with a checksum of their
    /// submission folder: all shards must have seen the same class.
    class: Vec<(String, String)>,
}

/// The students of shard `K/N` of the sorted class `students`.
fn shard_of(students: Vec<PathBuf>, shard: Option<(u64, u64)>) -> anyhow::Result<Vec<PathBuf>> {
    let Some((k, n)) = shard else {
        return Ok(students);
    };
    if n as usize > students.len() {
        return Err(ClassError::TooManyShards {
            k,
            n,
            students: students.len(),
        }
        .into());
    }
    Ok(students
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i as u64 % n == k - 1)
        .map(|(_, s)| s)
        .collect())
}

/// A checksum of submission folder `dir`: its files' relative paths, sizes
/// and contents (the first 16 MiB of each), in path order. Links are not
/// followed.
fn submission_checksum(dir: &Path) -> String {
    use sha2::Digest;
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(e.path());
            } else if t.is_file() {
                files.push(e.path());
            }
        }
    }
    files.sort();
    let mut h = sha2::Sha256::new();
    for f in files {
        let rel = f.strip_prefix(dir).unwrap_or(&f);
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        if let Ok(file) = std::fs::File::open(&f) {
            use std::io::Read;
            let mut bytes = Vec::new();
            let _ = file.take(16 << 20).read_to_end(&mut bytes);
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
        }
    }
    format!("{:x}", h.finalize())
}

/// What `grade-all` does with the gradebook of an earlier run in its
/// output folder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Earlier {
    /// Refuse to start (the default): a second run must not silently
    /// overwrite grades.
    #[default]
    Refuse,
    /// Finish it (`--resume`): students already graded are kept as they
    /// were, the others are graded.
    Resume,
    /// Grade every student again over it (`--overwrite`).
    Overwrite,
}

/// The file of rows graded so far in a `grade-all` output folder: a first
/// line with the settings, then one [`GradebookRow`] per line, appended
/// as each student's files are written, so that `--resume` knows who is
/// done.
pub const GRADED: &str = "graded.jsonl";

/// The first line of [`GRADED`]: what a resumed run must grade by.
#[derive(Debug, Serialize, Deserialize)]
struct GradedHeader {
    /// The grading command line of a student (its bot left as `BOT`).
    settings: String,
}

/// The files an earlier `grade-all` leaves in its output folder.
const GRADEBOOK_FILES: [&str; 4] = ["gradebook.json", "gradebook.csv", "grades.csv", GRADED];

/// The rows of an earlier run in `out` to keep, by the rule `earlier`,
/// with the notes to show; fails on a folder that holds a gradebook when
/// told to refuse, or one graded with other settings.
fn earlier_rows(
    out: &Path,
    earlier: Earlier,
    settings: &str,
) -> anyhow::Result<(Vec<GradebookRow>, Vec<String>)> {
    let graded = out.join(GRADED);
    match earlier {
        Earlier::Refuse => {
            if let Some(f) = GRADEBOOK_FILES
                .iter()
                .map(|f| out.join(f))
                .find(|p| p.exists())
            {
                return Err(ClassError::EarlierGradebook(f).into());
            }
            Ok((Vec::new(), Vec::new()))
        }
        Earlier::Overwrite => {
            match std::fs::remove_file(&graded) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot remove {}", graded.display()))
                }
            }
            Ok((Vec::new(), Vec::new()))
        }
        Earlier::Resume => {
            if !graded.exists() {
                return Ok((
                    Vec::new(),
                    vec![format!(
                        "{} holds no earlier grading to resume, so every student is graded",
                        out.display()
                    )],
                ));
            }
            let bytes = crate::bot::manifest::read_capped(&graded, 256 << 20)?;
            let mut rows: Vec<GradebookRow> = Vec::new();
            let mut notes = Vec::new();
            let mut lines = bytes.split_inclusive(|&b| b == b'\n').enumerate();
            let header: GradedHeader = match lines.next() {
                Some((_, l)) if l.ends_with(b"\n") => serde_json::from_slice(l)
                    .with_context(|| format!("{}:1: not a grade-all header", graded.display()))?,
                _ => bail!("{}:1: not a grade-all header", graded.display()),
            };
            if header.settings != settings {
                return Err(ClassError::OtherSettings {
                    dir: out.to_path_buf(),
                    old: header.settings,
                    new: settings.to_string(),
                }
                .into());
            }
            for (i, l) in lines {
                if !l.ends_with(b"\n") {
                    // The torn-line rule of run folders: a kill mid-write.
                    notes.push(format!(
                        "{}:{}: a torn last line is not a graded student; they are graded again",
                        graded.display(),
                        i + 1
                    ));
                    break;
                }
                if l.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let row: GradebookRow = serde_json::from_slice(l).map_err(|e| {
                    anyhow::anyhow!("{}:{}: not a gradebook row: {e}", graded.display(), i + 1)
                })?;
                rows.retain(|r| r.student != row.student);
                rows.push(row);
            }
            Ok((rows, notes))
        }
    }
}

/// Appends graded rows to [`GRADED`], one whole line per write, after the
/// settings line of a new file.
struct GradedLog {
    file: Mutex<std::fs::File>,
    path: PathBuf,
}

impl GradedLog {
    /// Opens `out`'s log for appending, keeping `kept` (the rows resumed)
    /// and writing the settings first.
    fn open(out: &Path, settings: &str, kept: &[GradebookRow]) -> anyhow::Result<GradedLog> {
        let path = out.join(GRADED);
        // Rewritten whole, then renamed: a torn line or a student no longer
        // in the class is gone, and a kill never leaves half a header.
        let mut text = crate::escape::json::to_string(&GradedHeader {
            settings: settings.to_string(),
        })? + "\n";
        for r in kept {
            text += &(crate::escape::json::to_string(r)? + "\n");
        }
        let tmp = out.join(format!(".{GRADED}.tmp"));
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .with_context(|| format!("cannot write {}", path.display()))?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(GradedLog {
            file: Mutex::new(file),
            path,
        })
    }

    fn append(&self, row: &GradebookRow) -> anyhow::Result<()> {
        use std::io::Write;
        let line = crate::escape::json::to_string(row)? + "\n";
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(line.as_bytes())
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

/// The bot text of a submission folder, for a submission of `form`:
///
/// - a `bot.toml` manifest always (it says how the bot runs);
/// - a console program (`form = "console"`): the `entry` file when given,
///   else the folder's one `.py` file of any name, else of several
///   `main.py`, else the only one the others do not import; else an
///   executable `bot`. It runs as `console:python3 FILE`;
/// - a protocol bot: `bot.py` (run with `python3`), else an executable
///   `bot`.
///
/// A folder that holds nothing but one folder (a zip unpacked with its own
/// top folder) is looked into.
pub(crate) fn submission_bot(
    dir: &Path,
    form: Form,
    entry: Option<&str>,
) -> Result<String, String> {
    // A submission is its own files: a link that leaves its folder would
    // make a classmate's program (or the grader's file) its bot.
    links_stay_inside(dir)?;
    let dir = &inner_folder(dir);
    let manifest = dir.join("bot.toml");
    if manifest.is_file() {
        // A student's manifest says how to start the bot, never how it is
        // confined (docs/sandbox.md).
        crate::bot::manifest::vet_submission(&manifest)?;
        return Ok(manifest.to_string_lossy().into_owned());
    }
    let quoted = |p: &Path| shell_words::quote(&p.to_string_lossy()).into_owned();
    let exe = dir.join("bot");
    let not_executable = |p: &Path| {
        format!(
            "{} is not executable (a zip upload loses the executable bit: chmod +x, or submit \
             the source)",
            p.display()
        )
    };
    match form {
        Form::Console => {
            let program = match entry {
                Some(name) => {
                    let p = dir.join(name);
                    if !p.is_file() {
                        return Err(format!(
                            "no {name} in the folder (the rubric's or --entry's program file)"
                        ));
                    }
                    Some(p)
                }
                None => python_entry(dir)?,
            };
            match program {
                Some(p) if p.extension().is_some_and(|e| e == "py") => {
                    Ok(format!("console:python3 {}", quoted(&p)))
                }
                Some(p) => Ok(format!("console:{}", quoted(&p))),
                None if exe.is_file() && is_executable(&exe) => {
                    Ok(format!("console:{}", quoted(&exe)))
                }
                None if exe.is_file() => Err(not_executable(&exe)),
                None => {
                    Err("no Python program (.py) in the folder, nor an executable `bot`".into())
                }
            }
        }
        Form::Protocol => {
            let py = dir.join("bot.py");
            if py.is_file() {
                return Ok(format!("python3 {}", quoted(&py)));
            }
            if exe.is_file() {
                if !is_executable(&exe) {
                    return Err(not_executable(&exe));
                }
                return Ok(quoted(&exe));
            }
            let hint =
                match python_entry(dir) {
                    Ok(Some(p)) => format!(
                    " ({} looks like a console program: grade the assignment's console form with \
                     --form console or a rubric with form = \"console\")",
                    p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
                ),
                    _ => String::new(),
                };
            Err(format!(
                "no bot.toml, bot.py or executable bot in the folder{hint}"
            ))
        }
    }
}

/// Refuses a submission folder that holds a symbolic link leading out of
/// it (resolved, or by its words where it points nowhere), naming the
/// first such link. Links between its own files are kept.
pub(crate) fn links_stay_inside(dir: &Path) -> Result<(), String> {
    let own =
        std::fs::canonicalize(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut stack = vec![own.clone()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let entries =
            std::fs::read_dir(&d).map_err(|e| format!("cannot read {}: {e}", d.display()))?;
        for e in entries.flatten() {
            seen += 1;
            if seen > 200_000 {
                return Err(format!("{} holds more than 200,000 files", dir.display()));
            }
            let path = e.path();
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            if meta.file_type().is_dir() {
                stack.push(path);
                continue;
            }
            if !meta.file_type().is_symlink() {
                continue;
            }
            let target = std::fs::read_link(&path).unwrap_or_default();
            let inside = match std::fs::canonicalize(&path) {
                Ok(real) => real.starts_with(&own),
                // Dangling: judged by its words.
                Err(_) => {
                    let joined = d.join(&target);
                    let mut depth: Vec<&std::ffi::OsStr> = Vec::new();
                    let mut ok = true;
                    for c in joined.strip_prefix(&own).unwrap_or(&joined).components() {
                        match c {
                            std::path::Component::Normal(n) => depth.push(n),
                            std::path::Component::ParentDir => ok &= depth.pop().is_some(),
                            std::path::Component::CurDir => {}
                            _ => ok = false,
                        }
                    }
                    ok && joined.starts_with(&own)
                }
            };
            if !inside {
                let rel = path.strip_prefix(&own).unwrap_or(&path);
                return Err(format!(
                    "the link '{}' points outside the submission ({}): a submission is its own \
                     files",
                    rel.display(),
                    target.display()
                ));
            }
        }
    }
    Ok(())
}

/// The folder itself, or the one folder it holds when it holds nothing
/// else (hidden files aside).
fn inner_folder(dir: &Path) -> PathBuf {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return dir.to_path_buf();
    };
    let visible: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| !student_name(p).starts_with('.') && student_name(p) != "__MACOSX")
        .collect();
    match visible.as_slice() {
        [only] if only.is_dir() => only.clone(),
        _ => dir.to_path_buf(),
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// The Python program of a folder: its one `.py` file, else `main.py`,
/// else the only one no other imports; `None` without any `.py` file.
fn python_entry(dir: &Path) -> Result<Option<PathBuf>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    match files.len() {
        0 => return Ok(None),
        1 => return Ok(files.pop()),
        _ => {}
    }
    if let Some(main) = files.iter().find(|p| student_name(p) == "main.py") {
        return Ok(Some(main.clone()));
    }
    let module = |p: &Path| -> String {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let imported: Vec<String> = files
        .iter()
        .flat_map(|p| imports(&std::fs::read_to_string(p).unwrap_or_default()))
        .collect();
    let roots: Vec<&PathBuf> = files
        .iter()
        .filter(|p| !imported.contains(&module(p)))
        .collect();
    match roots.as_slice() {
        [one] => Ok(Some((*one).clone())),
        _ => {
            let names: Vec<String> = files.iter().map(|p| student_name(p)).collect();
            Err(format!(
                "several Python files ({}) and none is main.py or the only one the others do not \
                 import: name the program with entry = \"...\" in the rubric or --entry",
                names.join(", ")
            ))
        }
    }
}

/// The modules a Python source imports (`import a, b as c`, `from a import
/// x`, `from .a import x`), first names only.
fn imports(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in source.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("import ") {
            for part in rest.split(',') {
                if let Some(name) = part.split_whitespace().next() {
                    out.push(name.split('.').next().unwrap_or(name).to_string());
                }
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            if let Some(name) = rest.split_whitespace().next() {
                let name = name.trim_start_matches('.');
                out.push(name.split('.').next().unwrap_or(name).to_string());
            }
        }
    }
    out
}

/// The student folders of a class folder, sorted.
pub(crate) fn student_folders(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut students: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && !student_name(p).starts_with('.'))
        .collect();
    students.sort();
    if students.is_empty() {
        bail!("{} has no student folders", dir.display());
    }
    Ok(students)
}

/// The student folders of class folder `dir`, sorted, without the
/// output's own folders when the output `out` is inside it (the default).
pub fn class_students(dir: &Path, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let own: Vec<PathBuf> = ["feedback", "tournament"]
        .into_iter()
        .chain(Format::ALL.iter().map(|f| f.name()))
        .map(|d| out.join(d))
        .chain([out.to_path_buf()])
        .filter_map(|d| d.canonicalize().ok())
        .collect();
    Ok(student_folders(dir)?
        .into_iter()
        .filter(|s| s.canonicalize().map_or(true, |c| !own.contains(&c)))
        .collect())
}

/// Checks that the class folder exists, before anything is created: a
/// mistyped folder must not become an empty class with a gradebook.
pub(crate) fn check_class_dir(dir: &Path) -> anyhow::Result<()> {
    if !dir.is_dir() {
        bail!(
            "{}: no such folder (the class folder: one subfolder per student)",
            dir.display()
        );
    }
    Ok(())
}

/// Checks that `dir` can hold the class's outputs: created if missing,
/// and a file can be written in it. Run before the first student is
/// graded, so that an unwritable folder costs nothing.
pub(crate) fn check_out_dir(dir: &Path) -> anyhow::Result<()> {
    let out_dir = |what, source| ClassError::OutDir {
        dir: dir.to_path_buf(),
        what,
        source,
    };
    std::fs::create_dir_all(dir).map_err(|e| out_dir("create", e))?;
    tempfile::NamedTempFile::new_in(dir).map_err(|e| out_dir("write in", e))?;
    Ok(())
}

/// Grades every student of class folder `dir`, `jobs` students at once
/// (each with one worker), telling `observer` as each is done, and writes
/// each student's feedback page and `results.json` into `out` at once.
/// Rows come sorted by student. `out` is checked before the first game.
pub fn grade_class(
    kind: GameKind,
    dir: &Path,
    cfg: &GradeConfig,
    jobs: usize,
    out: &ClassOutput,
    observer: &dyn Observer,
) -> anyhow::Result<Vec<GradebookRow>> {
    super::check_rubric(kind, cfg)?;
    check_class_dir(dir)?;
    check_out_dir(&out.dir)?;
    // One grade-all at a time in a folder: two would interleave rows.
    let _lock = crate::play::journal::lock(&out.dir)?;
    let class = class_students(dir, &out.dir)?;
    let one = GradeConfig {
        jobs: 1,
        out: None,
        ..cfg.clone()
    };
    let mut settings = one.command_line(kind, "BOT");
    if let Some((k, n)) = out.shard {
        let info = ShardInfo {
            shard: [k, n],
            settings: settings.clone(),
            items: cfg.rubric().items.iter().map(|i| i.name.clone()).collect(),
            class: class
                .iter()
                .map(|s| (student_name(s), submission_checksum(s)))
                .collect(),
        };
        let path = out.dir.join(SHARD);
        std::fs::write(&path, crate::escape::json::to_string_pretty(&info)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
        settings = format!("{settings} --shard {k}/{n}");
    }
    let students = shard_of(class, out.shard)?;
    let (mut kept, notes) = earlier_rows(&out.dir, out.earlier, &settings)?;
    for n in &notes {
        observer.note(n);
    }
    // Only students still in the class; their files are already written.
    kept.retain(|r| students.iter().any(|s| student_name(s) == r.student));
    let todo: Vec<&PathBuf> = students
        .iter()
        .filter(|s| !kept.iter().any(|r| r.student == student_name(s)))
        .collect();
    for sub in ["feedback", "gradescope"] {
        let d = out.dir.join(sub);
        std::fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    let log = GradedLog::open(&out.dir, &settings, &kept)?;
    let next = AtomicUsize::new(0);
    let tally = Mutex::new(Tally::default());
    {
        let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
        for r in &kept {
            t.add(&r.verdict);
        }
        t.resumed = kept.len();
    }
    let rows = Mutex::new(kept);
    let started = Instant::now();
    let total = students.len();
    let workers = jobs.max(1).min(todo.len());
    observer.note(&if tally.lock().map_or(0, |t| t.resumed) > 0 {
        format!(
            "grading {} of {total} students ({} graded before, kept), {workers} at once",
            todo.len(),
            total - todo.len()
        )
    } else {
        let s = if total == 1 { "" } else { "s" };
        format!("grading {total} student{s}, {workers} at once")
    });
    observer.begin("students", Some(total as u64), (total - todo.len()) as u64);
    let steps = StepCount::default();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let failed = std::thread::scope(|s| {
        let workers: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| -> anyhow::Result<()> {
                    loop {
                        if crate::play::interrupt::interrupted().is_some()
                            || stop.load(Ordering::Relaxed)
                        {
                            return Ok(());
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(dir) = todo.get(i) else {
                            return Ok(());
                        };
                        let watch = StudentProgress {
                            outer: observer,
                            steps: &steps,
                            tally: &tally,
                        };
                        let (row, report) = grade_student(kind, dir, &one, &watch);
                        if crate::play::interrupt::interrupted().is_some() {
                            // Its bot may have been killed by the interruption.
                            return Ok(());
                        }
                        let written = write_student(out, &row, report.as_ref(), &one)
                            .and_then(|_| log.append(&row));
                        if let Err(e) = written {
                            // No more students once their files cannot be
                            // written; the row itself is kept.
                            stop.store(true, Ordering::Relaxed);
                            rows.lock().unwrap_or_else(|p| p.into_inner()).push(row);
                            return Err(e);
                        }
                        let (line, status) = {
                            let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
                            t.add(&row.verdict);
                            (t.line(total, started), steps.status(&t))
                        };
                        observer.note(&format!(
                            "graded {}: {} {}/{} ({line})",
                            row.student,
                            row.verdict,
                            format_points(row.points),
                            format_points(row.max_points)
                        ));
                        observer.status(&status);
                        observer.advance(1);
                        rows.lock().unwrap_or_else(|p| p.into_inner()).push(row);
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a grading thread panicked")))
            })
            .find_map(Result::err)
    });
    observer.end();
    let mut rows = rows.into_inner().unwrap_or_else(|p| p.into_inner());
    rows.sort_by(|a, b| a.student.cmp(&b.student));
    match failed {
        // The rows graded so far are not lost: the caller writes them.
        Some(e) => Err(e.context(GradedSoFar(rows))),
        None => Ok(rows),
    }
}

/// The rows graded before an output error stopped `grade_class` (the
/// error's context, so the gradebook can still be written).
#[derive(Debug)]
pub struct GradedSoFar(pub Vec<GradebookRow>);

impl std::fmt::Display for GradedSoFar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "after grading {} students", self.0.len())
    }
}

/// The games (or positions) played so far over the whole class, for
/// progress between students: a student can take minutes.
#[derive(Default)]
struct StepCount {
    done: std::sync::atomic::AtomicU64,
    /// What a step is (`games`, `positions`), as the grading said.
    label: Mutex<String>,
}

impl StepCount {
    /// `1234 games played, 3 failed, 1 error`.
    fn status(&self, t: &Tally) -> String {
        let label = self.label.lock().map(|l| l.clone()).unwrap_or_default();
        // `positions (player 1)` is `positions` across students.
        let label = label
            .split(' ')
            .next()
            .filter(|l| !l.is_empty())
            .unwrap_or("games");
        format!(
            "{} {label} played, {}",
            self.done.load(Ordering::Relaxed),
            t.status()
        )
    }
}

/// What one student's grading tells: its games go into the class's count,
/// which the class's observer shows as they are played, not only when
/// the student is done.
struct StudentProgress<'a> {
    outer: &'a dyn Observer,
    steps: &'a StepCount,
    tally: &'a Mutex<Tally>,
}

impl Observer for StudentProgress<'_> {
    fn begin(&self, label: &str, _total: Option<u64>, _done: u64) {
        if let Ok(mut l) = self.steps.label.lock() {
            label.clone_into(&mut l);
        }
    }

    fn advance(&self, n: u64) {
        self.steps.done.fetch_add(n, Ordering::Relaxed);
        let status = {
            let t = self.tally.lock().unwrap_or_else(|p| p.into_inner());
            self.steps.status(&t)
        };
        self.outer.status(&status);
        self.outer.tick();
    }
}

/// Counts for the class progress line.
#[derive(Default)]
struct Tally {
    done: usize,
    failed: usize,
    errors: usize,
    /// Students graded by an earlier run (`--resume`), among `done`.
    resumed: usize,
}

impl Tally {
    fn add(&mut self, verdict: &str) {
        self.done += 1;
        match verdict {
            "fail" => self.failed += 1,
            "error" => self.errors += 1,
            _ => {}
        }
    }

    /// `3 failed, 1 error`.
    fn status(&self) -> String {
        format!(
            "{} failed, {} error{}",
            self.failed,
            self.errors,
            if self.errors == 1 { "" } else { "s" }
        )
    }

    /// `12/40 done, 3 failed, 1 error, 1m 05s elapsed, about 2m 31s left`.
    fn line(&self, total: usize, started: Instant) -> String {
        let elapsed = started.elapsed().as_secs_f64();
        let now = self.done - self.resumed;
        let left = if now > 0 {
            elapsed / now as f64 * total.saturating_sub(self.done) as f64
        } else {
            0.0
        };
        format!(
            "{}/{total} done, {} failed, {} error{}, {} elapsed, about {} left",
            self.done,
            self.failed,
            self.errors,
            if self.errors == 1 { "" } else { "s" },
            duration_text(elapsed),
            duration_text(left)
        )
    }
}

/// `1h 02m`, `3m 05s` or `42s`.
fn duration_text(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 3600 {
        format!("{}h {:02}m", s / 3600, s / 60 % 60)
    } else if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// A student's name as a file name: their folder's name, which is one
/// already.
fn write_student(
    out: &ClassOutput,
    row: &GradebookRow,
    report: Option<&GradeReport>,
    cfg: &GradeConfig,
) -> anyhow::Result<()> {
    let md = out.dir.join("feedback").join(format!("{}.md", row.student));
    let extra = out
        .leaderboard
        .iter()
        .find(|(s, _)| s == &row.student)
        .map(|(_, l)| l.clone())
        .unwrap_or_default();
    let result = match report {
        Some(r) => {
            let mut board = extra;
            board.extend(grading_leaderboard(r));
            GradeResult::graded(r, board)
        }
        None => GradeResult::not_graded(&row.reason, cfg.rubric.as_ref(), 0.0),
    };
    std::fs::write(&md, &result.feedback)
        .with_context(|| format!("cannot write {}", md.display()))?;
    let formats = std::iter::once(Format::Gradescope).chain(
        out.formats
            .iter()
            .copied()
            .filter(|f| *f != Format::Gradescope),
    );
    for format in formats {
        let dir = out.dir.join(format.name()).join(&row.student);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(format.file_name());
        std::fs::write(&path, format.render(&result))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// Writes `gradebook.json`, `gradebook.csv` and `grades.csv` (one row per
/// student: total points and points per rubric item, for an LMS import)
/// into `out`; returns their paths.
pub fn write_gradebook(
    out: &Path,
    rows: &[GradebookRow],
    items: &[String],
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let json_path = out.join("gradebook.json");
    std::fs::write(
        &json_path,
        crate::escape::json::to_string_pretty(rows)? + "\n",
    )
    .with_context(|| format!("cannot write {}", json_path.display()))?;
    let csv_path = out.join("gradebook.csv");
    let mut csv = csv_line([
        "student",
        "verdict",
        "score_pct",
        "wdl",
        "forfeits",
        "example",
        "points",
        "max_points",
        "reason",
        "denied",
    ]);
    for r in rows {
        csv.push_str(&csv_line([
            r.student.clone(),
            r.verdict.clone(),
            format!("{:.1}", r.score_pct),
            r.wdl.clone(),
            r.forfeits.to_string(),
            r.example.clone(),
            format_points(r.points),
            format_points(r.max_points),
            r.reason.clone(),
            r.denied.to_string(),
        ]));
    }
    std::fs::write(&csv_path, csv)
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    let lms_path = out.join("grades.csv");
    let mut header = vec!["student".to_string(), "total".to_string()];
    header.extend(items.iter().cloned());
    let mut lms = csv_line(header);
    for r in rows {
        let mut line = vec![r.student.clone(), format_points(r.points)];
        line.extend(items.iter().enumerate().map(|(i, _)| {
            r.items
                .get(i)
                .map_or_else(|| "0".to_string(), |p| format_points(p.points))
        }));
        lms.push_str(&csv_line(line));
    }
    std::fs::write(&lms_path, lms)
        .with_context(|| format!("cannot write {}", lms_path.display()))?;
    Ok(vec![csv_path, json_path, lms_path])
}

/// The student's name: their folder's name.
pub(crate) fn student_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Grades one submission folder: its row, and its report when it could be
/// graded at all.
fn grade_student(
    kind: GameKind,
    dir: &Path,
    cfg: &GradeConfig,
    observer: &dyn Observer,
) -> (GradebookRow, Option<GradeReport>) {
    let student = student_name(dir);
    let rubric = cfg.rubric();
    let error = |e: String| GradebookRow {
        student: student.clone(),
        verdict: "error".into(),
        score_pct: 0.0,
        wdl: "0-0-0".into(),
        forfeits: 0,
        example: one_line(&e),
        denied: 0,
        points: 0.0,
        max_points: rubric.max_points(),
        items: rubric
            .items
            .iter()
            .map(|i| ItemPoints {
                name: i.name.clone(),
                points: 0.0,
            })
            .collect(),
        reason: one_line(&e),
    };
    // Graded as its folder, so that the feedback's command to reproduce
    // the grading is run from the student's own folder.
    if let Err(e) = submission_bot(dir, cfg.form(), cfg.entry().as_deref()) {
        return (error(e), None);
    }
    let mut report = match grade(kind, &dir.to_string_lossy(), cfg, observer) {
        Ok(r) => r,
        Err(e) => return (error(format!("{e:#}")), None),
    };
    report.bot.clone_from(&student);
    let score_pct = if report.games > 0 {
        100.0 * report.wdl.score()
    } else if report.passed {
        100.0
    } else {
        0.0
    };
    let row = GradebookRow {
        student,
        verdict: if report.passed { "pass" } else { "fail" }.into(),
        score_pct,
        wdl: report.wdl.text(),
        forfeits: report.forfeits,
        denied: report.denied,
        example: report
            .failures
            .first()
            .map(|f| {
                one_line(&if f.moves.is_empty() {
                    f.reason.clone()
                } else {
                    format!("{}: {}", f.reason, f.moves.join(" "))
                })
            })
            .unwrap_or_default(),
        points: report.points,
        max_points: report.max_points,
        items: report
            .rubric
            .iter()
            .map(|i| ItemPoints {
                name: i.name.clone(),
                points: i.points,
            })
            .collect(),
        reason: one_line(&reason(&report)),
    };
    (row, Some(report))
}

/// `text` as one gradebook cell: its first non-blank line, saying when
/// more follows (a diff, a traceback: the feedback page has all of it),
/// with control characters made visible.
fn one_line(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    let more = lines.next().is_some();
    let mut out = crate::escape::terminal::line(first).into_owned();
    if more {
        out.push_str(" (more in the feedback page)");
    }
    out
}

/// Why a graded bot failed, in one line (empty when it passed every item).
fn reason(r: &GradeReport) -> String {
    if let Some(stop) = &r.stopped {
        return stop.clone();
    }
    if let Some(g) = &r.first_forfeit {
        let f = &g.forfeit;
        let mut text = format!("forfeit by {}: {}", f.reason, f.detail);
        let last = f.stderr_tail.lines().rev().find(|l| !l.trim().is_empty());
        if let (
            Some(last),
            ForfeitReason::Startup | ForfeitReason::Crash | ForfeitReason::Timeout,
        ) = (last, f.reason)
        {
            text.push_str(&format!(" (stderr: {})", last.trim()));
        }
        return text;
    }
    if let Some(f) = r.failures.first() {
        return format!("{} (moves: {})", f.reason, f.moves.join(" "));
    }
    if let Some(i) = r.rubric.iter().find(|i| !i.passed) {
        return format!("{}: {}", i.name, i.detail);
    }
    String::new()
}

/// Combines the output folders of a `grade-all` played in shards
/// (`--shard K/N`) into one: every shard must be there once, finished, and
/// have graded the same class (same submissions) with the same settings
/// and rubric; the differences are named. Writes into `out` the gradebook,
/// grades, feedback pages and Gradescope results exactly as an unsharded
/// run does (and its graded.jsonl, so a later `--resume` there works);
/// returns the rows, sorted by student.
pub fn merge_class(dirs: &[PathBuf], out: &Path) -> anyhow::Result<Vec<GradebookRow>> {
    let mut infos: Vec<(ShardInfo, &PathBuf)> = Vec::new();
    for d in dirs {
        let path = d.join(SHARD);
        if !path.is_file() {
            return Err(ClassError::NotAShard(d.clone()).into());
        }
        let text = crate::bot::manifest::read_small_text(&path)?;
        let info: ShardInfo = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a grade-all shard file", path.display()))?;
        infos.push((info, d));
    }
    infos.sort_by_key(|(i, _)| i.shard[0]);
    let (first, first_dir) = &infos[0];
    let n = first.shard[1];
    for (info, d) in &infos[1..] {
        let what = |w: &str| {
            format!(
                "{} and {} graded with other {w}",
                first_dir.display(),
                d.display()
            )
        };
        if info.shard[1] != n {
            bail!(
                "{}: shard {}/{} of another split than {} (of {n})",
                d.display(),
                info.shard[0],
                info.shard[1],
                first_dir.display()
            );
        }
        if info.settings != first.settings {
            bail!(
                "{}: `{}` against `{}`",
                what("settings"),
                first.settings,
                info.settings
            );
        }
        if info.items != first.items {
            bail!(
                "{}: items {:?} against {:?}",
                what("rubrics"),
                first.items,
                info.items
            );
        }
        if let Some(((s, a), (_, b))) = first
            .class
            .iter()
            .zip(&info.class)
            .find(|((s, a), (t, b))| s != t || a != b)
        {
            bail!(
                "{} and {} graded different submissions: {s}'s folder differs ({} against {}); \
                 the class folder changed between the shards",
                first_dir.display(),
                d.display(),
                &a[..12.min(a.len())],
                &b[..12.min(b.len())]
            );
        }
        if info.class.len() != first.class.len() {
            bail!(
                "{} and {} graded different classes ({} and {} students)",
                first_dir.display(),
                d.display(),
                first.class.len(),
                info.class.len()
            );
        }
    }
    let have: Vec<u64> = infos.iter().map(|(i, _)| i.shard[0]).collect();
    let want: Vec<u64> = (1..=n).collect();
    if have != want {
        let missing: Vec<String> = want
            .iter()
            .filter(|k| !have.contains(k))
            .map(|k| format!("{k}/{n}"))
            .collect();
        if missing.is_empty() {
            bail!("a shard is given twice: give each shard's folder once");
        }
        bail!("shards {} are missing", missing.join(", "));
    }
    let mut rows = Vec::new();
    for (info, d) in &infos {
        let [k, n] = info.shard;
        let settings = format!("{} --shard {k}/{n}", info.settings);
        let (got, _) = earlier_rows(d, Earlier::Resume, &settings)?;
        let names: Vec<&String> = info
            .class
            .iter()
            .enumerate()
            .filter(|(i, _)| *i as u64 % n == k - 1)
            .map(|(_, (s, _))| s)
            .collect();
        let graded = names
            .iter()
            .filter(|s| got.iter().any(|r| r.student.as_str() == s.as_str()))
            .count();
        if graded < names.len() {
            return Err(ClassError::ShardUnfinished {
                k,
                n,
                dir: d.to_path_buf(),
                graded,
                total: names.len(),
            }
            .into());
        }
        for row in got.into_iter().filter(|r| names.contains(&&r.student)) {
            let results = Format::ALL
                .iter()
                .map(|f| (format!("{}/{}", row.student, f.file_name()), f.name()));
            for (file, sub) in [(format!("{}.md", row.student), "feedback")]
                .into_iter()
                .chain(results)
            {
                let from = d.join(sub).join(&file);
                if sub != "feedback" && sub != "gradescope" && !from.exists() {
                    // A format the shards were not asked for.
                    continue;
                }
                let to = out.join(sub).join(&file);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                std::fs::copy(&from, &to).with_context(|| {
                    format!("cannot copy {} to {}", from.display(), to.display())
                })?;
            }
            rows.push(row);
        }
    }
    rows.sort_by(|a, b| a.student.cmp(&b.student));
    let log = GradedLog::open(out, &first.settings, &rows)?;
    drop(log);
    write_gradebook(out, &rows, &first.items)?;
    Ok(rows)
}
