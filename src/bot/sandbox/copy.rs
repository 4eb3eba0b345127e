//! A bot's private copy of its own folder, for per-bot users: owned by
//! root and the bot's group, which gets what the original gives everyone
//! (a `0644` file becomes `0640`, a `0755` one `0750`, a `0600` one stays
//! closed to the bot as it was to anyone but its owner), others nothing:
//! no other bot can read it, the bot itself cannot change it between
//! games, and the grader's originals can stay root-only. Symbolic links
//! are copied as links (a submission's links that leave its folder are
//! refused before it gets here).

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Most bytes a bot's folder may hold to be copied for it.
pub(crate) const MAX_BYTES: u64 = 1 << 30;

/// Most files and folders a bot's folder may hold to be copied for it.
pub(crate) const MAX_ENTRIES: u64 = 50_000;

/// The copies of one bot's folders, removed when dropped.
#[derive(Debug)]
pub(crate) struct Copies {
    /// Removed (with the copies) when dropped.
    _dir: tempfile::TempDir,
    /// Each original folder and where its copy is.
    maps: Vec<(PathBuf, PathBuf)>,
}

impl Copies {
    /// Each original folder and its copy.
    pub(crate) fn maps(&self) -> &[(PathBuf, PathBuf)] {
        &self.maps
    }

    /// `path` (absolute) in the copies, when it is inside a copied folder.
    pub(crate) fn translate(&self, path: &Path) -> Option<PathBuf> {
        self.maps.iter().find_map(|(orig, copy)| {
            path.strip_prefix(orig).ok().map(|rest| {
                if rest.as_os_str().is_empty() {
                    copy.clone()
                } else {
                    copy.join(rest)
                }
            })
        })
    }
}

/// What was counted so far, against [`MAX_BYTES`] and [`MAX_ENTRIES`].
struct Budget {
    bytes: u64,
    entries: u64,
    folder: PathBuf,
}

impl Budget {
    fn take(&mut self, bytes: u64) -> io::Result<()> {
        self.bytes += bytes;
        self.entries += 1;
        if self.bytes > MAX_BYTES || self.entries > MAX_ENTRIES {
            return Err(io::Error::other(format!(
                "{} is too large to copy for the bot's own user (at most {} MiB in {} files): \
                 give the bot a folder of its own",
                self.folder.display(),
                MAX_BYTES >> 20,
                MAX_ENTRIES
            )));
        }
        Ok(())
    }
}

/// Copies `folders` (absolute, none inside another) into a new folder of
/// `base`, for the group `gid`.
pub(crate) fn make(folders: &[PathBuf], base: &Path, gid: u32) -> io::Result<Copies> {
    let dir = tempfile::Builder::new()
        .prefix("referee-copy-")
        .tempdir_in(base)?;
    own(dir.path(), gid, 0o750)?;
    let mut maps = Vec::new();
    for (i, folder) in folders.iter().enumerate() {
        let target = dir.path().join(i.to_string());
        let mut budget = Budget {
            bytes: 0,
            entries: 0,
            folder: folder.clone(),
        };
        copy_tree(folder, &target, gid, &mut budget)?;
        maps.push((folder.clone(), target));
    }
    Ok(Copies { _dir: dir, maps })
}

/// The mode of a copy of what had `mode`: the owner's bits for root, the
/// bits of others for the bot's group, nothing for others.
fn copy_mode(mode: u32) -> u32 {
    (mode & 0o700) | ((mode & 0o007) << 3)
}

/// The copies kept per user id: the next bot of that id from the same
/// folders runs from the same copy (it cannot have changed it).
static KEPT: std::sync::Mutex<Vec<(u32, std::sync::Arc<Copies>)>> =
    std::sync::Mutex::new(Vec::new());

/// The copy of `folders` for the user `gid`: the one kept for that id when
/// it copied the same folders, else a new one in `base` (which replaces it).
pub(crate) fn for_user(
    folders: &[PathBuf],
    base: &Path,
    gid: u32,
) -> io::Result<std::sync::Arc<Copies>> {
    let mut kept = KEPT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, c)) = kept
        .iter()
        .find(|(id, c)| *id == gid && c.maps.iter().map(|(o, _)| o).eq(folders.iter()))
    {
        return Ok(c.clone());
    }
    let copies = std::sync::Arc::new(make(folders, base, gid)?);
    kept.retain(|(id, _)| *id != gid);
    kept.push((gid, copies.clone()));
    Ok(copies)
}

/// Drops every kept copy (at the run's end), and the run's folder that
/// held them once it is empty.
pub(crate) fn forget_all() {
    let kept = std::mem::take(&mut *KEPT.lock().unwrap_or_else(|p| p.into_inner()));
    let bases: Vec<PathBuf> = kept
        .iter()
        .filter_map(|(_, c)| c._dir.path().parent().map(Path::to_path_buf))
        .collect();
    drop(kept);
    for b in bases {
        let _ = std::fs::remove_dir(b);
    }
}

/// Gives `path` to root and `gid` with `mode`.
fn own(path: &Path, gid: u32, mode: u32) -> io::Result<()> {
    std::os::unix::fs::lchown(path, Some(0), Some(gid))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Copies the folder `from` to `to` (made here), entry by entry.
fn copy_tree(from: &Path, to: &Path, gid: u32, budget: &mut Budget) -> io::Result<()> {
    std::fs::create_dir(to)?;
    own(to, gid, copy_mode(from.metadata()?.mode()))?;
    budget.take(0)?;
    let mut entries: Vec<_> = std::fs::read_dir(from)?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let src = e.path();
        let dst = to.join(e.file_name());
        let m = src.symlink_metadata()?;
        let t = m.file_type();
        if t.is_symlink() {
            budget.take(0)?;
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
            std::os::unix::fs::lchown(&dst, Some(0), Some(gid))?;
        } else if t.is_dir() {
            copy_tree(&src, &dst, gid, budget)?;
        } else if t.is_file() {
            budget.take(m.len())?;
            std::fs::copy(&src, &dst)?;
            own(&dst, gid, copy_mode(m.mode()))?;
        }
        // Sockets, pipes and devices are not a bot's files.
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_is_copied_for_one_group_with_its_links_and_modes() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("SKIPPED: copies for a bot's group need root");
            return;
        }
        let src = tempfile::tempdir().unwrap();
        let base = tempfile::tempdir().unwrap();
        std::fs::create_dir(src.path().join("lib")).unwrap();
        std::fs::write(src.path().join("lib/data.txt"), "x").unwrap();
        std::fs::write(src.path().join("run"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(src.path().join("run"), PermissionsExt::from_mode(0o755)).unwrap();
        std::fs::set_permissions(src.path(), PermissionsExt::from_mode(0o755)).unwrap();
        std::fs::write(src.path().join("secret"), "root only").unwrap();
        std::fs::set_permissions(src.path().join("secret"), PermissionsExt::from_mode(0o600))
            .unwrap();
        std::os::unix::fs::symlink("lib/data.txt", src.path().join("link")).unwrap();
        let copies = make(&[src.path().to_path_buf()], base.path(), 62001).unwrap();
        let (_, copy) = &copies.maps()[0];
        let meta = |p: &str| copy.join(p).symlink_metadata().unwrap();
        assert_eq!(std::fs::read_to_string(copy.join("link")).unwrap(), "x");
        assert_eq!(meta("run").mode() & 0o777, 0o750);
        assert_eq!(meta("lib/data.txt").mode() & 0o777, 0o640);
        assert_eq!(meta("lib").mode() & 0o777, 0o750);
        assert_eq!(meta("secret").mode() & 0o777, 0o600);
        assert_eq!(
            (meta("lib/data.txt").uid(), meta("lib/data.txt").gid()),
            (0, 62001)
        );
        assert_eq!(
            copies.translate(&src.path().join("lib/data.txt")),
            Some(copy.join("lib/data.txt"))
        );
        assert_eq!(copies.translate(Path::new("/elsewhere")), None);
        let root = copies._dir.path().to_path_buf();
        drop(copies);
        assert!(!root.exists());
    }
}
