//! What a sandboxed bot may read, and its private view of the file system
//! (docs/sandbox.md, "What a sandboxed bot may read").

use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};

use super::copy::Copies;
use crate::bot::manifest::ExternalSpec;

/// The system folders every sandboxed bot may read (before symbolic links
/// are followed: `/bin` is often a link to `usr/bin`).
pub(crate) const SYSTEM_DIRS: [&str; 7] =
    ["/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc"];

/// The devices every runtime opens: reading randomness, writing to nothing.
pub(crate) const DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"];

/// Where a bot's program is installed: its folder, or the folder above it
/// when that is a `bin`, `sbin` or `shims` folder (an interpreter's prefix,
/// with its libraries: `/usr/local`, `~/.pyenv/versions/3.11.7`, a
/// virtualenv).
pub(crate) fn installation(dir: &Path) -> PathBuf {
    let parent = match dir.file_name().and_then(|n| n.to_str()) {
        Some("bin" | "sbin" | "shims") => dir.parent(),
        _ => None,
    };
    // Never the root of everything (`/bin`) nor a home folder (`~/bin`).
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match parent {
        Some(p) if p.parent().is_some() && Some(p) != home.as_deref() => p.to_path_buf(),
        _ => dir.to_path_buf(),
    }
}

/// The folders a command line names, from `cwd`: the folder of each file
/// it names and each folder it names (`python3 bots/x/bot.py` names
/// `bots/x`; `java -cp build/classes Bot` names `build/classes`). Only words
/// with a `/` count, a `--flag=` prefix is skipped and a `:`-separated list
/// (a class path) counts item by item.
pub(crate) fn named_folders(command: &[String], cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for word in command {
        for item in path_items(word) {
            let p = cwd.join(item);
            if p.is_file() {
                out.extend(p.parent().map(Path::to_path_buf));
            } else if p.is_dir() {
                out.push(p);
            }
        }
    }
    out
}

/// The parts of a command word that may be paths: the word, or what
/// follows a `--flag=`, item by item of a `:` list, each with a `/`.
fn path_items(word: &str) -> impl Iterator<Item = &str> {
    let value = match word.split_once('=') {
        Some((flag, v)) if flag.starts_with('-') => v,
        _ => word,
    };
    value.split(':').filter(|i| i.contains('/'))
}

/// The program a bot's command names, as `execvp` would find it: a path
/// with a `/` taken from `cwd`, a bare name looked up on `path_var`.
pub(crate) fn program_path(program: &str, cwd: &Path, path_var: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if program.contains('/') {
        return Some(cwd.join(program));
    }
    std::env::split_paths(path_var)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(program))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The bot's PATH (its environment's: its own, or referee's, which every
/// bot keeps), where its program is looked up.
pub(crate) fn bot_path_var(spec: &ExternalSpec) -> String {
    spec.env
        .get("PATH")
        .cloned()
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default()
}

/// The folders of a PATH that open to the bot: absolute folders whose
/// name says they hold programs (`bin`, `sbin`, `.bin`, `shims`, ...),
/// each alone. `/`, a home folder or a class folder on a PATH opens
/// nothing (docs/sandbox.md).
pub(crate) fn program_folders(path_var: &str) -> Vec<PathBuf> {
    std::env::split_paths(path_var)
        .filter(|d| d.is_absolute() && d.is_dir())
        .filter(|d| {
            d.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains("bin") || n == "shims")
        })
        .collect()
}

/// The bot's own folders: the manifest's folder (or its `cwd`); for a bot
/// named by a command line (which whoever runs referee wrote), the folders
/// it names, else the current folder. Absolute, resolved, each once, none
/// inside another.
pub fn own_folders(spec: &ExternalSpec) -> Vec<PathBuf> {
    let cwd = spec
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    let mut dirs = match (&spec.manifest, &spec.cwd) {
        (Some(_), Some(dir)) => vec![dir.clone()],
        _ => {
            let named = named_folders(&spec.command, &cwd);
            if named.is_empty() {
                vec![cwd]
            } else {
                named
            }
        }
    };
    for d in &mut dirs {
        if let Ok(c) = d.canonicalize() {
            *d = c;
        }
    }
    dirs.sort();
    dirs.dedup();
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|o| o != d && d.starts_with(o)));
    dirs
}

/// The folders a sandboxed bot may read (and run programs from):
/// documented in docs/sandbox.md.
pub fn readable(spec: &ExternalSpec, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = SYSTEM_DIRS.iter().map(PathBuf::from).collect();
    dirs.extend(own_folders(spec));
    let cwd = spec
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    // The folders of programs on the bot's PATH (each alone: `~/.cargo/bin`
    // must not open `~/.cargo`), and the program with the installation it
    // belongs to (pyenv's shims need pyenv).
    let path_var = bot_path_var(spec);
    dirs.extend(program_folders(&path_var));
    if let Some(p) = spec
        .command
        .first()
        .and_then(|program| program_path(program, &cwd, &path_var))
    {
        for q in [Some(p.clone()), p.canonicalize().ok()]
            .into_iter()
            .flatten()
        {
            if let Some(dir) = q.parent() {
                dirs.push(installation(dir));
            }
        }
    }
    dirs.extend(extra.iter().cloned());
    // Only folders that exist, each once.
    let mut out: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let d = d.canonicalize().unwrap_or(d);
        if d.exists() && !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// The bot's private view of the file system, prepared before the clone: a
/// tmpfs capped at the bot's `tmp_mb`, mounted on its temporary folder,
/// becomes its root; in it every folder the bot may read is bind-mounted
/// read-only at its own path (its own folders from their private copies,
/// when it has a user of its own), the devices it may use are bound, the
/// system folders' symbolic links (`/bin -> usr/bin`) are made again, and
/// its `TMPDIR` is a folder of that tmpfs at the same path as outside.
/// What is not mounted does not exist for the bot: `stat` of it fails.
pub(crate) struct Mounts {
    pub(crate) new_root: CString,
    pub(crate) tmpfs_options: CString,
    /// Folders to make in the new root, parents first.
    pub(crate) dirs: Vec<CString>,
    /// Empty files to make in the new root, as mount points.
    pub(crate) files: Vec<CString>,
    /// Bind mounts: source, target in the new root, and the flags that
    /// make it read-only (`None`: a device, left as it is).
    pub(crate) binds: Vec<(CString, CString, Option<nix::libc::c_ulong>)>,
    /// Symbolic links: what each says, and where it goes in the new root.
    pub(crate) links: Vec<(CString, CString)>,
    /// Where a `/proc` of the bot's own PID namespace is mounted (unless
    /// the host's is readable): runtimes find their own program through
    /// `/proc/self/exe` (Java its libraries), which Landlock still lets
    /// them resolve but not read.
    pub(crate) proc: Option<CString>,
    /// The bot's `TMPDIR` in the new root, seen from before the switch.
    pub(crate) tmpdir_before: CString,
    /// The bot's `TMPDIR` once the new root is its `/`.
    pub(crate) tmpdir: CString,
}

/// `p` as a C string.
pub(crate) fn c_path(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_encoded_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))
}

/// The flags that remount the bind mount of `dir` read-only, keeping the
/// flags of the mount it comes from (in a user namespace the kernel
/// refuses to clear them).
fn read_only_flags(dir: &Path) -> nix::libc::c_ulong {
    use nix::libc;
    let mut flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID;
    let Ok(c) = c_path(dir) else {
        return flags | libc::MS_NODEV;
    };
    // SAFETY: statvfs fills the zeroed struct from a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return flags | libc::MS_NODEV;
    }
    let kept = [
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    for (st_flag, ms_flag) in kept {
        if st.f_flag & st_flag != 0 {
            flags |= ms_flag;
        }
    }
    flags
}

/// The bot's private view of the file system (see [`Mounts`]): what it may
/// read (`readable_dirs`, its own folders from `copies` when it has them),
/// its devices and links, and `tmp` as its root and `TMPDIR`.
pub(crate) fn mounts(
    spec: &ExternalSpec,
    readable_dirs: &[PathBuf],
    tmp: &Path,
    tmp_mb: u64,
    copies: Option<&Copies>,
) -> io::Result<Mounts> {
    use std::collections::BTreeSet;
    let c = c_path;
    let under = |p: &Path| tmp.join(p.strip_prefix("/").unwrap_or(p));
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    let chain = |dirs: &mut BTreeSet<PathBuf>, p: &Path| {
        for a in p.ancestors().filter(|a| a.parent().is_some()) {
            dirs.insert(under(a));
        }
    };
    let mut readable_set: Vec<PathBuf> = Vec::new();
    for d in readable_dirs.iter().cloned() {
        if d == Path::new("/") {
            // The whole file system, asked by whoever runs referee: every
            // top folder but the kernel's own and the temporary folders'.
            for e in std::fs::read_dir("/")?.flatten() {
                let p = e.path();
                let skip = ["/proc", "/sys", "/dev"].iter().any(|s| p == Path::new(s));
                if !skip && e.file_type().is_ok_and(|t| t.is_dir()) {
                    readable_set.push(p);
                }
            }
        } else {
            readable_set.push(d);
        }
    }
    // A readable folder that holds the temporary folder would cover it.
    readable_set.retain(|d| !tmp.starts_with(d));
    readable_set.sort();
    readable_set.dedup();
    let mut files = Vec::new();
    let mut binds = Vec::new();
    for d in &readable_set {
        if d.is_dir() {
            chain(&mut dirs, d);
        } else if let Some(parent) = d.parent() {
            chain(&mut dirs, parent);
            files.push(c(&under(d))?);
        }
        // The bot's own folder comes from its private copy, when it has
        // one, at the original's path.
        let source = copies
            .and_then(|cp| cp.translate(d))
            .unwrap_or_else(|| d.clone());
        binds.push((c(&source)?, c(&under(d))?, Some(read_only_flags(d))));
    }
    for dev in DEVICES.iter().map(Path::new).filter(|d| d.exists()) {
        if let Some(parent) = dev.parent() {
            chain(&mut dirs, parent);
        }
        files.push(c(&under(dev))?);
        binds.push((c(dev)?, c(&under(dev))?, None));
    }
    // Links such as `/bin -> usr/bin`, for the system folders and those on
    // the bot's PATH, where their parent is no link itself.
    let path_var = bot_path_var(spec);
    let mut links = Vec::new();
    let candidates = SYSTEM_DIRS
        .iter()
        .map(PathBuf::from)
        .chain(program_folders(&path_var));
    for d in candidates {
        let is_link = d
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink());
        let plain_parent = d
            .parent()
            .is_some_and(|p| p.canonicalize().is_ok_and(|q| q == p));
        let covered = readable_set.iter().any(|r| d.starts_with(r));
        if let (true, true, false, Ok(target)) = (is_link, plain_parent, covered, d.read_link()) {
            if let Some(parent) = d.parent() {
                chain(&mut dirs, parent);
            }
            let link = (c(&target)?, c(&under(&d))?);
            if !links.contains(&link) {
                links.push(link);
            }
        }
    }
    if let Some(parent) = tmp.parent() {
        chain(&mut dirs, parent);
    }
    // The bot's folder exists in its view even when only folders below it
    // are readable, so that it starts there and finds them by relative path.
    if let Some(cwd) = &spec.cwd {
        chain(&mut dirs, cwd);
    } else if let Ok(cwd) = std::env::current_dir() {
        chain(&mut dirs, &cwd);
    }
    let proc = if readable_set.iter().any(|d| d == Path::new("/proc")) {
        None
    } else {
        chain(&mut dirs, Path::new("/proc"));
        Some(c(&under(Path::new("/proc")))?)
    };
    Ok(Mounts {
        new_root: c(tmp)?,
        tmpfs_options: CString::new(format!("size={tmp_mb}m,mode=0755"))
            .map_err(io::Error::other)?,
        dirs: dirs.iter().map(|d| c(d)).collect::<io::Result<_>>()?,
        files,
        binds,
        links,
        proc,
        tmpdir_before: c(&under(tmp))?,
        tmpdir: c(tmp)?,
    })
}

/// `command` with every path into one of the bot's own folders moved to
/// its private copy (for a bot with a user of its own but no private view,
/// which runs from the copy): absolute paths, and relative ones from
/// `cwd`, word by word, after a `--flag=` prefix and item by item of a `:`
/// list.
pub(crate) fn translate_command(command: &[String], cwd: &Path, copies: &Copies) -> Vec<String> {
    command
        .iter()
        .map(|word| {
            let (prefix, value) = match word.split_once('=') {
                Some((flag, v)) if flag.starts_with('-') => (format!("{flag}="), v),
                _ => (String::new(), word.as_str()),
            };
            let items: Vec<String> = value
                .split(':')
                .map(|item| {
                    if !item.contains('/') {
                        return item.to_string();
                    }
                    let p = cwd.join(item);
                    let p = p.canonicalize().unwrap_or(p);
                    copies
                        .translate(&p)
                        .map_or_else(|| item.to_string(), |t| t.to_string_lossy().into_owned())
                })
                .collect();
            format!("{prefix}{}", items.join(":"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interpreter_is_read_from_its_installation() {
        assert_eq!(
            installation(Path::new("/root/.pyenv/versions/3.11.7/bin")),
            Path::new("/root/.pyenv/versions/3.11.7")
        );
        assert_eq!(
            installation(Path::new("/root/.pyenv/shims")),
            Path::new("/root/.pyenv")
        );
        assert_eq!(installation(Path::new("/opt/tool")), Path::new("/opt/tool"));
        assert_eq!(installation(Path::new("/bin")), Path::new("/bin"));
        assert_eq!(installation(Path::new("/usr/bin")), Path::new("/usr"));
        let mut spec = ExternalSpec::from_command_line("sh -c true").unwrap();
        spec.cwd = Some(std::env::temp_dir());
        let r = readable(&spec, &[]);
        assert!(r.iter().any(|d| d == Path::new("/usr")), "{r:?}");
        // Neither the home folder nor the root of everything.
        assert!(!r.iter().any(|d| d == Path::new("/")), "{r:?}");
    }

    #[test]
    fn a_command_line_opens_the_files_and_folders_it_names() {
        let tmp = tempfile::tempdir().unwrap();
        let cwd = tmp.path();
        for d in ["bots/x", "classes", "lib", "other"] {
            std::fs::create_dir_all(cwd.join(d)).unwrap();
        }
        std::fs::write(cwd.join("bots/x/bot.py"), "").unwrap();
        let words = |line: &str| line.split(' ').map(String::from).collect::<Vec<_>>();
        let named = |line: &str| named_folders(&words(line), cwd);
        assert_eq!(named("python3 bots/x/bot.py"), vec![cwd.join("bots/x")]);
        assert_eq!(
            named("java -cp ./classes:./lib/ Bot"),
            vec![cwd.join("./classes"), cwd.join("./lib/")]
        );
        assert_eq!(
            named("node --require=./lib/ main"),
            vec![cwd.join("./lib/")]
        );
        // Words without a `/` and paths that do not exist open nothing.
        assert!(named("java -cp classes Bot").is_empty());
        assert!(named("python3 ./missing/bot.py").is_empty());
        // A manifest's command opens only the manifest's folder.
        let mut spec = ExternalSpec::from_command_line("python3 ../../other").unwrap();
        spec.cwd = Some(cwd.join("bots/x"));
        spec.manifest = Some(cwd.join("bots/x/bot.toml"));
        let r = readable(&spec, &[]);
        assert!(!r.iter().any(|d| d.ends_with("other")), "{r:?}");
    }

    #[test]
    fn a_folder_on_path_opens_itself_not_its_parent() {
        // `~/.cargo/bin` on PATH must not open `~/.cargo` (credentials).
        let home = tempfile::tempdir().unwrap();
        let bin = home.path().join(".cargo/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(home.path().join(".cargo/credentials.toml"), "secret").unwrap();
        // The bot's own folder, apart from the fake home.
        let own = tempfile::tempdir().unwrap();
        let mut spec = ExternalSpec::from_command_line("sh -c true").unwrap();
        spec.cwd = Some(own.path().to_path_buf());
        spec.env
            .insert("PATH".into(), format!("{}:/usr/bin:/bin", bin.display()));
        let r = readable(&spec, &[]);
        let bin = bin.canonicalize().unwrap();
        assert!(r.contains(&bin), "{r:?}");
        assert!(!r.iter().any(|d| bin.starts_with(d) && d != &bin), "{r:?}");
        // The program's own installation is still open (here /usr).
        assert!(r.iter().any(|d| d == Path::new("/usr")), "{r:?}");
    }

    #[test]
    fn a_path_of_class_folders_or_the_root_opens_nothing() {
        // A submission that puts a classmate's folder, the class or `/` on
        // its PATH reads none of them (such a PATH is refused in a
        // submission's manifest besides; this holds for the TA's too).
        let class = tempfile::tempdir().unwrap();
        let alice = class.path().join("alice");
        let eve = class.path().join("eve");
        std::fs::create_dir_all(&alice).unwrap();
        std::fs::create_dir_all(&eve).unwrap();
        let mut spec = ExternalSpec::from_command_line("sh -c true").unwrap();
        spec.cwd = Some(eve.clone());
        spec.env.insert(
            "PATH".into(),
            format!(
                "{}:{}:/usr/bin:/bin:/",
                alice.display(),
                class.path().display()
            ),
        );
        let r = readable(&spec, &[]);
        let alice = alice.canonicalize().unwrap();
        assert!(!r.iter().any(|d| alice.starts_with(d)), "{r:?}");
        assert!(!r.iter().any(|d| d == Path::new("/")), "{r:?}");
    }

    #[test]
    fn own_folders_are_resolved_once_and_never_nested() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b")).unwrap();
        std::fs::write(tmp.path().join("a/x.py"), "").unwrap();
        std::fs::write(tmp.path().join("a/b/y.py"), "").unwrap();
        let mut spec = ExternalSpec::from_command_line("python3 a/x.py a/b/y.py a/./x.py").unwrap();
        spec.cwd = Some(tmp.path().to_path_buf());
        assert_eq!(
            own_folders(&spec),
            vec![tmp.path().join("a").canonicalize().unwrap()]
        );
    }
}
