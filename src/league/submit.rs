//! Submissions: a student's bot copied into the league, content-addressed
//! and read-only, as that student's next version.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use sha2::{Digest, Sha256};

use super::{db::Status, League};

/// Most bytes a submission may hold.
const MAX_BYTES: u64 = 64 << 20;
/// Most files a submission may hold.
const MAX_FILES: usize = 10_000;

/// What a submission became.
#[derive(Clone, Debug)]
pub struct Submitted {
    /// The version number.
    pub version: u32,
    /// False when it is the same as the newest version (nothing new).
    pub new: bool,
    /// Its admission state.
    pub status: Status,
    /// Why it was rejected at once (not a bot in a form referee reads).
    pub rejected: Option<String>,
}

/// Checks a student's name: 1 to 64 letters, digits, `.`, `_` or `-`,
/// starting with a letter or digit, and not an anchor's name.
pub fn check_name(name: &str, anchors: &[String]) -> anyhow::Result<()> {
    if name.is_empty() {
        anyhow::bail!("the name is empty");
    }
    if name.len() > 64 {
        anyhow::bail!(
            "the name '{}…' is longer than 64 characters",
            crate::escape::terminal::line(
                &name[..name.char_indices().nth(20).map_or(name.len(), |c| c.0)]
            )
        );
    }
    if name.contains(['/', '\\']) || name == "." || name == ".." {
        anyhow::bail!(
            "the name '{}' looks like a path: give the student's name alone",
            crate::escape::terminal::line(name)
        );
    }
    let ok = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric());
    if !ok {
        anyhow::bail!(
            "the name '{}' may hold only letters, digits, '.', '_' and '-', and starts with a \
             letter or digit",
            crate::escape::terminal::line(name)
        );
    }
    if anchors.iter().any(|a| a == name) {
        anyhow::bail!("'{name}' is an anchor's name: choose another");
    }
    Ok(())
}

/// The files of a submission: (relative path, executable, contents).
type Files = Vec<(String, bool, Vec<u8>)>;

/// Reads every file under `path` (a folder, or one file), refusing links,
/// special files and oversize submissions.
fn read_files(path: &Path) -> anyhow::Result<Files> {
    read_files_dated(path).map(|f| f.0)
}

/// [`read_files`], and the newest modification time among them.
fn read_files_dated(path: &Path) -> anyhow::Result<(Files, std::time::SystemTime)> {
    let mut newest = std::time::UNIX_EPOCH;
    let mut seen = |m: &std::fs::Metadata| {
        if let Ok(t) = m.modified() {
            newest = newest.max(t);
        }
    };
    let meta = std::fs::symlink_metadata(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let mut out = Vec::new();
    let mut total = 0u64;
    if meta.is_file() {
        let bytes = read_capped(path, &mut total)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // A single file becomes the folder's bot: `bot.py` or `bot`.
        let stored = if name.ends_with(".py") {
            "bot.py".to_string()
        } else if name == "bot.toml" {
            anyhow::bail!(
                "{}: a manifest alone names no program: submit its folder",
                path.display()
            );
        } else {
            "bot".to_string()
        };
        out.push((stored, executable(&meta), bytes));
        seen(&meta);
        return Ok((out, newest));
    }
    if !meta.is_dir() {
        anyhow::bail!("{}: not a file or a folder", path.display());
    }
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = path.join(&rel);
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .with_context(|| format!("{}: cannot read", dir.display()))?
            .filter_map(|e| e.ok())
            .collect();
        names.sort_by_key(|e| e.file_name());
        for e in names {
            let name = e.file_name();
            let child = rel.join(&name);
            let m = std::fs::symlink_metadata(e.path())
                .with_context(|| format!("{}: cannot read", e.path().display()))?;
            if m.file_type().is_symlink() {
                anyhow::bail!(
                    "{}: a symbolic link: submissions hold files and folders only",
                    e.path().display()
                );
            }
            seen(&m);
            if m.is_dir() {
                // Version control and caches are not the bot.
                if [".git", "__pycache__", ".venv", "node_modules"]
                    .iter()
                    .any(|s| name.to_str() == Some(s))
                {
                    continue;
                }
                stack.push(child);
            } else if m.is_file() {
                let bytes = read_capped(&e.path(), &mut total)?;
                out.push((child.to_string_lossy().into_owned(), executable(&m), bytes));
                if out.len() > MAX_FILES {
                    anyhow::bail!("{}: more than {MAX_FILES} files", path.display());
                }
            } else {
                anyhow::bail!("{}: not a regular file", e.path().display());
            }
        }
    }
    if out.is_empty() {
        anyhow::bail!("{}: an empty folder", path.display());
    }
    out.sort();
    Ok((out, newest))
}

fn read_capped(path: &Path, total: &mut u64) -> anyhow::Result<Vec<u8>> {
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    *total += bytes.len() as u64;
    if *total > MAX_BYTES {
        anyhow::bail!(
            "{}: the submission is larger than {} MiB",
            path.display(),
            MAX_BYTES >> 20
        );
    }
    Ok(bytes)
}

#[cfg(unix)]
fn executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    m.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_: &std::fs::Metadata) -> bool {
    false
}

/// The content checksum: every file's path, executable bit and bytes.
fn checksum(files: &Files) -> String {
    let mut h = Sha256::new();
    for (name, exe, bytes) in files {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update([*exe as u8]);
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes `files` into `dir`, read-only.
fn store(dir: &Path, files: &Files) -> anyhow::Result<()> {
    let tmp = dir.with_extension("partial");
    let _ = std::fs::remove_dir_all(&tmp);
    for (name, exe, bytes) in files {
        let p = tmp.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&p, bytes).with_context(|| format!("cannot write {}", p.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = if *exe { 0o555 } else { 0o444 };
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode))
                .with_context(|| format!("cannot set the mode of {}", p.display()))?;
        }
    }
    std::fs::rename(&tmp, dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(())
}

impl League {
    /// Submits the bot at `path` as `name`'s next version.
    pub fn submit(&self, name: &str, path: &Path) -> anyhow::Result<Submitted> {
        check_name(name, &self.settings.anchors)?;
        let files = read_files(path)?;
        self.submit_files(name, &files)
    }

    fn submit_files(&self, name: &str, files: &Files) -> anyhow::Result<Submitted> {
        let sha = checksum(files);
        let rel = format!("submissions/{}", &sha[..32]);
        let dir = self.dir.join(&rel);
        if !dir.is_dir() {
            store(&dir, files)?;
        }
        let status = if self.frozen()?.is_some() {
            Status::Late
        } else {
            Status::Pending
        };
        let (version, new) = self.db.add_version(name, &sha, &rel, status)?;
        let entry = self
            .db
            .entries()?
            .into_iter()
            .find(|e| !e.anchor && e.name == name && e.version == version)
            .context("the version just stored is missing")?;
        let mut rejected = None;
        if new && status == Status::Pending {
            // Not a bot in any form referee reads: rejected at once, with why.
            if let Err(why) = crate::grade::class::submission_bot(
                &dir,
                crate::grade::rubric::Form::Protocol,
                None,
            ) {
                let log = format!("not accepted: {why}");
                self.db.decide(entry.id, Status::Rejected, &log)?;
                rejected = Some(why);
            }
        }
        let status = if rejected.is_some() {
            Status::Rejected
        } else {
            entry.status
        };
        Ok(Submitted {
            version,
            new,
            status,
            rejected,
        })
    }
}

/// How long a subfolder of the inbox must have been left alone before it
/// is taken.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// A folder of `<name>/` subfolders watched for new versions. A subfolder
/// is submitted once nothing in it has changed for [`SETTLE`], or its
/// content stayed the same over two scans (so that one being copied in is
/// not taken half-way).
pub struct Inbox {
    dir: PathBuf,
    /// The checksum each name had at the last scan, and whether that one
    /// was submitted.
    seen: HashMap<String, (String, bool)>,
}

impl Inbox {
    /// Watches `dir`.
    pub fn new(dir: PathBuf) -> Inbox {
        Inbox {
            dir,
            seen: HashMap::new(),
        }
    }

    /// Submits every subfolder that changed and then stayed the same.
    pub fn scan(&mut self, league: &League) -> Vec<(String, anyhow::Result<Submitted>)> {
        let mut out = Vec::new();
        let Ok(list) = std::fs::read_dir(&self.dir) else {
            return out;
        };
        let mut names: Vec<(String, PathBuf)> = list
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .filter(|(n, _)| !n.starts_with('.'))
            .collect();
        names.sort();
        for (name, path) in names {
            let (files, newest) = match read_files_dated(&path) {
                Ok(f) => f,
                Err(e) => {
                    if self.seen.get(&name).map(|s| s.0.as_str()) != Some("error") {
                        out.push((name.clone(), Err(e)));
                    }
                    self.seen.insert(name, ("error".into(), true));
                    continue;
                }
            };
            let sha = checksum(&files);
            let quiet = newest.elapsed().is_ok_and(|age| age >= SETTLE);
            let settled = quiet || matches!(self.seen.get(&name), Some((s, false)) if *s == sha);
            let done = matches!(self.seen.get(&name), Some((s, true)) if *s == sha);
            if done {
                continue;
            }
            if !settled {
                self.seen.insert(name, (sha, false));
                continue;
            }
            let res = check_name(&name, &league.settings.anchors)
                .and_then(|_| league.submit_files(&name, &files));
            self.seen.insert(name.clone(), (sha, true));
            out.push((name, res));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        let anchors = vec!["random".to_string()];
        assert!(check_name("alice_01", &anchors).is_ok());
        for (bad, says) in [
            ("", "empty"),
            ("../x", "path"),
            ("a b", "letters"),
            ("random", "anchor"),
            ("-x", "starts with"),
        ] {
            let e = check_name(bad, &anchors).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let long = "a".repeat(65);
        assert!(check_name(&long, &anchors)
            .unwrap_err()
            .to_string()
            .contains("longer than 64"));
    }

    #[test]
    fn the_checksum_sees_names_modes_and_bytes() {
        let a = vec![("bot.py".to_string(), false, b"print(1)".to_vec())];
        let mut b = a.clone();
        b[0].1 = true;
        let mut c = a.clone();
        c[0].0 = "bot2.py".into();
        assert_ne!(checksum(&a), checksum(&b));
        assert_ne!(checksum(&a), checksum(&c));
        assert_eq!(checksum(&a), checksum(&a.clone()));
    }
}
