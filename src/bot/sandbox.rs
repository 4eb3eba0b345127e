//! The sandbox for untrusted bots (docs/sandbox.md).
//!
//! A sandboxed bot and everything it starts run in new PID, IPC, UTS and
//! mount namespaces (and a user namespace when referee is not root), under
//! a Landlock ruleset and a seccomp filter, with their process count and
//! memory capped:
//!
//! - when referee runs as root, the bot runs as the overflow user
//!   ([`OVERFLOW_ID`]), so root-only files stay closed to it;
//! - its root folder is a size-capped tmpfs holding only what it may read
//!   (system directories, the bot's own folder, the installation of its
//!   interpreter, the directories on its `PATH`, and `sandbox_read`), bound
//!   read-only: nothing else exists for it, not even for `stat`; the only
//!   place it can write is its `TMPDIR` in that tmpfs (`tmp_mb`, default
//!   [`DEFAULT_TMP_MB`] MiB); Landlock says the same as a second layer;
//! - only stdin, stdout and stderr cross into it;
//! - the seccomp filter refuses to create any socket (`socket(2)` fails with
//!   `EACCES`; only `socketpair(2)` pipes work) and io_uring, and Landlock
//!   denies TCP besides: no TCP, UDP, raw or Unix-socket connection
//!   anywhere, loopback included;
//! - in its own PID namespace the bot is process 1: it cannot see, signal
//!   or trace anything outside (Landlock's signal scope says the same), and
//!   when it ends, or when referee dies, the kernel kills every process left
//!   in it, even one that left the process group;
//! - the number of processes is capped per sandbox (by `RLIMIT_NPROC`,
//!   counted in the sandbox's own user namespace, or, when referee runs as
//!   root and the kernel exempts root from that limit, by a `pids` cgroup),
//!   and the address space by `RLIMIT_AS`, which the bot cannot raise: it
//!   has no capability (in a user namespace of its own, or as `nobody`).
//!
//! How a sandboxed bot starts ([`spawn`]): referee prepares everything
//! (the ruleset, the filter, the cgroup, the program's path, arguments and
//! environment as C strings), then `clone`s with `CLONE_VM | CLONE_VFORK`
//! (as `posix_spawn` does, so nothing of referee's memory is copied) and
//! the new namespaces. The child is process 1 of its PID namespace from the
//! start: it joins its cgroup, maps its user and group ids (without root),
//! makes its private view, drops to the overflow user (as root), sets its
//! limits, process group, folder and stdio, resets the signal handlers,
//! applies the seccomp filter and the Landlock ruleset, marks every other
//! descriptor close-on-exec and executes the bot. It dies
//! with the referee thread that started it (a parent-death signal).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};
use nix::errno::Errno;
use nix::sched::{unshare, CloneFlags};
use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;

use super::manifest::{ExternalSpec, SandboxMode, DEFAULT_SANDBOX_PROCESSES, DEFAULT_TMP_MB};

/// The Landlock ABI the rules are written for; newer kernels apply them
/// as they are, older ones lose what they lack (said by [`missing`]).
const ABI_WANTED: ABI = ABI::V6;

/// What the kernel offers the sandbox, found out once per run.
#[derive(Clone, Debug)]
pub struct Support {
    /// The highest Landlock ABI supported (0: none).
    pub landlock_abi: u8,
    /// New user, PID, IPC and UTS namespaces can be made.
    pub namespaces: bool,
    /// System calls can be filtered (seccomp): the network is cut with it.
    pub seccomp: bool,
    /// referee runs as root (whom the kernel exempts from `RLIMIT_NPROC`).
    pub root: bool,
    /// The folder under which per-sandbox `pids` cgroups are made (root
    /// only), when there is one referee can write.
    pub pids_cgroup: Option<PathBuf>,
    /// A private mount namespace with a size-capped tmpfs can be made: the
    /// bot sees only what it may read, and its temporary folder has a cap.
    pub mounts: bool,
}

/// The unprivileged user and group a sandboxed bot runs as when referee
/// runs as root: the kernel's overflow ids (`nobody`), which own nothing
/// that matters, so root-only files stay closed.
pub const OVERFLOW_ID: u32 = 65534;

/// What the kernel offers, once probed.
static SUPPORT: OnceLock<Support> = OnceLock::new();

/// Probes the kernel (once; later calls return the first answer).
pub fn support() -> &'static Support {
    SUPPORT.get_or_init(|| {
        let root = nix::unistd::geteuid().is_root();
        let namespaces = namespaces_work(root);
        Support {
            landlock_abi: landlock_abi(),
            namespaces,
            seccomp: seccomp_works(),
            root,
            pids_cgroup: if root { pids_cgroup_base() } else { None },
            mounts: namespaces && mounts_work(root),
        }
    })
}

/// The highest Landlock ABI this kernel supports, by asking for each
/// version's rights as a hard requirement (nothing is restricted).
fn landlock_abi() -> u8 {
    let abis = [
        (7, ABI::V7),
        (6, ABI::V6),
        (5, ABI::V5),
        (4, ABI::V4),
        (3, ABI::V3),
        (2, ABI::V2),
        (1, ABI::V1),
    ];
    for (n, abi) in abis {
        let created = Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.create());
        if created.is_ok() {
            return n;
        }
    }
    0
}

/// Whether a child can enter new user (or, as root, PID) namespaces (some
/// containers forbid it).
fn namespaces_work(root: bool) -> bool {
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", "exit 0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the hook only makes system calls (unshare), no allocation.
    unsafe {
        cmd.pre_exec(move || {
            unshare(namespace_flags(root)).map_err(io::Error::from)?;
            Ok(())
        });
    }
    cmd.status().is_ok_and(|s| s.success())
}

/// The namespaces a sandboxed bot is born in. As root the bot gets no user
/// namespace: it is dropped to [`OVERFLOW_ID`] instead, which a user
/// namespace made by root could not do (only a process with `CAP_SETUID`
/// in the parent namespace may map other ids, and the child has none
/// there). Without root, a user namespace is what allows the others.
fn namespace_flags(root: bool) -> CloneFlags {
    let others = CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWIPC | CloneFlags::CLONE_NEWUTS;
    if root {
        others
    } else {
        others | CloneFlags::CLONE_NEWUSER
    }
}

/// Whether a child in the sandbox's namespaces can also have a mount
/// namespace of its own and mount a tmpfs there (some containers forbid
/// it), tried on a throwaway folder.
fn mounts_work(root: bool) -> bool {
    let Ok(dir) = tempfile::Builder::new().prefix("referee-probe-").tempdir() else {
        return false;
    };
    let Ok(target) = CString::new(dir.path().as_os_str().as_encoded_bytes()) else {
        return false;
    };
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", "exit 0"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the hook only makes system calls on memory prepared before.
    unsafe {
        cmd.pre_exec(move || {
            unshare(namespace_flags(root) | CloneFlags::CLONE_NEWNS).map_err(io::Error::from)?;
            use nix::libc;
            let none = std::ptr::null();
            if libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
                || libc::mount(
                    c"tmpfs".as_ptr(),
                    target.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    c"size=1m".as_ptr().cast(),
                ) != 0
                || libc::chdir(target.as_ptr()) != 0
                || libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // The switch worked; there is nothing to execute in the new root.
            libc::_exit(0)
        });
    }
    cmd.status().is_ok_and(|s| s.success())
}

/// The seccomp filter of every sandboxed bot (built once): no socket of
/// any family, no io_uring (which could open one), no tracing, no other
/// process's memory, no kernel keyrings, BPF or performance counters.
fn network_filter() -> Option<&'static seccompiler::BpfProgram> {
    static FILTER: OnceLock<Option<seccompiler::BpfProgram>> = OnceLock::new();
    FILTER
        .get_or_init(|| {
            use seccompiler::{SeccompAction, SeccompFilter};
            let denied = [
                nix::libc::SYS_socket,
                nix::libc::SYS_io_uring_setup,
                nix::libc::SYS_io_uring_enter,
                nix::libc::SYS_io_uring_register,
                nix::libc::SYS_ptrace,
                nix::libc::SYS_process_vm_readv,
                nix::libc::SYS_process_vm_writev,
                nix::libc::SYS_add_key,
                nix::libc::SYS_keyctl,
                nix::libc::SYS_request_key,
                nix::libc::SYS_bpf,
                nix::libc::SYS_perf_event_open,
                nix::libc::SYS_userfaultfd,
            ];
            let rules = denied.iter().map(|&n| (n, Vec::new())).collect();
            let arch = std::env::consts::ARCH.try_into().ok()?;
            let filter = SeccompFilter::new(
                rules,
                SeccompAction::Allow,
                SeccompAction::Errno(nix::libc::EACCES as u32),
                arch,
            )
            .ok()?;
            filter.try_into().ok()
        })
        .as_ref()
}

/// Whether the kernel filters system calls (seccomp).
fn seccomp_works() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
        && network_filter().is_some()
}

/// A folder for per-sandbox `pids` cgroups: cgroup v1's `pids` hierarchy,
/// or the v2 root with the `pids` controller, if referee can make one there.
fn pids_cgroup_base() -> Option<PathBuf> {
    let name = format!("referee.{}", std::process::id());
    let v1 = Path::new("/sys/fs/cgroup/pids");
    let v2 = Path::new("/sys/fs/cgroup");
    let candidates = [
        (v1.to_path_buf(), false),
        (v2.to_path_buf(), true),
        (v2.join("unified"), true),
    ];
    for (base, v2) in candidates {
        if !base.join("cgroup.procs").exists() {
            continue;
        }
        if v2 {
            let controllers = std::fs::read_to_string(base.join("cgroup.controllers"));
            if !controllers.is_ok_and(|c| c.split_whitespace().any(|w| w == "pids")) {
                continue;
            }
        }
        sweep_stale_cgroups(&base);
        let dir = base.join(&name);
        if std::fs::create_dir(&dir).is_err() && !dir.is_dir() {
            continue;
        }
        if v2 {
            // Children of ours need the controller handed down.
            let _ = std::fs::write(dir.join("cgroup.subtree_control"), "+pids");
        }
        // A probe: a child group with a cap.
        let probe = dir.join("probe");
        let ok = std::fs::create_dir(&probe).is_ok()
            && std::fs::write(probe.join("pids.max"), "8").is_ok();
        let _ = std::fs::remove_dir(&probe);
        // Made again by the first sandbox that needs it.
        let _ = std::fs::remove_dir(&dir);
        if ok {
            return Some(dir);
        }
    }
    None
}

/// Removes the cgroups that a referee killed by SIGKILL (which cleans up
/// nothing) left in `base`: `referee.PID` folders whose process is gone,
/// with their (by then empty) per-bot groups. The kernel refuses to remove
/// a group that still has a process.
fn sweep_stale_cgroups(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("referee."))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid <= 0 || kill(Pid::from_raw(pid), None) != Err(Errno::ESRCH) {
            continue;
        }
        let dir = entry.path();
        if let Ok(groups) = std::fs::read_dir(&dir) {
            for g in groups.flatten() {
                if g.file_type().is_ok_and(|t| t.is_dir()) {
                    let _ = std::fs::remove_dir(g.path());
                }
            }
        }
        let _ = std::fs::remove_dir(&dir);
    }
}

/// Removes the folder of per-sandbox cgroups, if this run made one (at
/// the end of the run; the kernel refuses while a sandbox still runs).
pub fn remove_cgroup_base() {
    if let Some(base) = SUPPORT.get().and_then(|s| s.pids_cgroup.as_ref()) {
        let _ = std::fs::remove_dir(base);
    }
}

/// The guarantees the sandbox cannot give on this kernel, in words (empty
/// when it gives them all).
pub fn missing(s: &Support) -> Vec<String> {
    let mut out = Vec::new();
    if s.landlock_abi < 3 {
        out.push(format!(
            "file system: Landlock ABI 3 or later is needed to keep the file system \
             read-only and hidden (this kernel has {})",
            if s.landlock_abi == 0 {
                "no Landlock".to_string()
            } else {
                format!("ABI {}", s.landlock_abi)
            }
        ));
    }
    if !s.seccomp {
        out.push(
            "network: the kernel cannot filter system calls (seccomp), so the bot could \
             open sockets"
                .into(),
        );
    }
    if !s.namespaces {
        out.push(
            "processes and signals: new user and PID namespaces cannot be made here \
             (unprivileged user namespaces are off, or a container forbids them): the bot \
             could signal referee's processes, outlive its game, and raise its limits as root"
                .into(),
        );
    }
    if !s.mounts {
        out.push(
            "private file system view: a mount namespace with a size-capped tmpfs cannot be \
             made here, so the bot's temporary folder has no size cap and the names, sizes and \
             times of files it may not read can still be seen with stat"
                .into(),
        );
    }
    if s.root && s.pids_cgroup.is_none() {
        out.push(
            "process count: referee runs as root, whom the kernel exempts from the process \
             limit, and no writable pids cgroup was found to cap it"
                .into(),
        );
    }
    out
}

/// Checks that a sandbox can be used in `mode`: `On` needs every
/// guarantee; `BestEffort` gets the list of those it lacks, to show.
pub fn check(mode: SandboxMode) -> Result<Vec<String>, String> {
    if !mode.is_on() {
        return Ok(Vec::new());
    }
    let lacks = missing(support());
    match (mode, lacks.is_empty()) {
        (_, true) => Ok(Vec::new()),
        (SandboxMode::BestEffort, false) => Ok(lacks),
        _ => Err(format!(
            "the sandbox cannot give every guarantee on this machine: {}; run with \
             --sandbox=best-effort to sandbox the bots as far as it goes, or --no-sandbox",
            lacks.join("; ")
        )),
    }
}

/// Where a bot's program is installed: its folder, or the folder above it
/// when that is a `bin`, `sbin` or `shims` folder (an interpreter's prefix,
/// with its libraries: `/usr/local`, `~/.pyenv/versions/3.11.7`, a
/// virtualenv).
fn installation(dir: &Path) -> PathBuf {
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
fn named_folders(command: &[String], cwd: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for word in command {
        let value = match word.split_once('=') {
            Some((flag, v)) if flag.starts_with('-') => v,
            _ => word.as_str(),
        };
        for item in value.split(':').filter(|i| i.contains('/')) {
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

/// The folders a sandboxed bot may read (and run programs from):
/// documented in docs/sandbox.md.
pub fn readable(spec: &ExternalSpec, extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let cwd = spec
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."));
    // The bot's own folder: the manifest's (or `cwd`); for a bot named by a
    // command line (which whoever runs referee wrote), the folders it names.
    match (&spec.manifest, &spec.cwd) {
        (Some(_), Some(dir)) => dirs.push(dir.clone()),
        _ => {
            let named = named_folders(&spec.command, &cwd);
            if named.is_empty() {
                dirs.push(cwd.clone());
            }
            dirs.extend(named);
        }
    }
    // Every folder on the bot's PATH (the folder alone: `~/.cargo/bin` on
    // PATH must not open `~/.cargo`), and the program with the
    // installation it belongs to (pyenv's shims need pyenv).
    let path_var = bot_path_var(spec);
    for d in std::env::split_paths(&path_var) {
        if d.is_absolute() && d.is_dir() {
            dirs.push(d);
        }
    }
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

/// Everything one sandboxed start needs, prepared before the clone so that
/// the child only makes system calls: it shares referee's memory until it
/// executes the bot, so it must not allocate, free or lock anything.
pub(crate) struct Prepared {
    ruleset: Option<RulesetCreated>,
    setgroups: CString,
    uid_map_path: CString,
    uid_map: Vec<u8>,
    gid_map_path: CString,
    gid_map: Vec<u8>,
    cgroup_procs: Option<CString>,
    filter: Option<&'static seccompiler::BpfProgram>,
    nproc: Option<u64>,
    limits: [(Resource, u64); 2],
    exec: Exec,
    /// The bot's private view of the file system, when the kernel allows.
    mounts: Option<Mounts>,
    /// Whether the bot drops to [`OVERFLOW_ID`] (referee runs as root).
    drop_to_overflow: bool,
    /// A second descriptor of the Landlock ruleset, through which the child
    /// allows its own tmpfs `TMPDIR` (made only after the clone).
    ruleset_fd: Option<OwnedFd>,
    /// The Landlock file-system rights the ruleset handles (all of them
    /// are given in `TMPDIR`).
    tmp_access: u64,
}

/// The bot's private view of the file system, prepared before the clone: a
/// tmpfs capped at the bot's `tmp_mb`, mounted on its temporary folder,
/// becomes its root; in it every folder the bot may read is bind-mounted
/// read-only at its own path, the devices it may use are bound, the system
/// folders' symbolic links (`/bin -> usr/bin`) are made again, and its
/// `TMPDIR` is a folder of that tmpfs at the same path as outside. What is
/// not mounted does not exist for the bot: `stat` of it fails.
struct Mounts {
    new_root: CString,
    tmpfs_options: CString,
    /// Folders to make in the new root, parents first.
    dirs: Vec<CString>,
    /// Empty files to make in the new root, as mount points.
    files: Vec<CString>,
    /// Bind mounts: source, target in the new root, and the flags that
    /// make it read-only (`None`: a device, left as it is).
    binds: Vec<(CString, CString, Option<nix::libc::c_ulong>)>,
    /// Symbolic links: what each says, and where it goes in the new root.
    links: Vec<(CString, CString)>,
    /// Where a `/proc` of the bot's own PID namespace is mounted (unless
    /// the host's is readable): runtimes find their own program through
    /// `/proc/self/exe` (Java its libraries), which Landlock still lets
    /// them resolve but not read.
    proc: Option<CString>,
    /// The bot's `TMPDIR` in the new root, seen from before the switch.
    tmpdir_before: CString,
    /// The bot's `TMPDIR` once the new root is its `/`.
    tmpdir: CString,
}

/// The flags that remount the bind mount of `dir` read-only, keeping the
/// flags of the mount it comes from (in a user namespace the kernel
/// refuses to clear them).
fn read_only_flags(dir: &Path) -> nix::libc::c_ulong {
    use nix::libc;
    let mut flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID;
    let Ok(c) = CString::new(dir.as_os_str().as_encoded_bytes()) else {
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

/// The system folders every sandboxed bot may read (before symbolic links
/// are followed: `/bin` is often a link to `usr/bin`).
const SYSTEM_DIRS: [&str; 7] = ["/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc"];

/// The devices every runtime opens: reading randomness, writing to nothing.
const DEVICES: [&str; 4] = ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"];

/// The bot's private view of the file system (see [`Mounts`]): what it may
/// read, its devices and links, and `tmp` as its root and `TMPDIR`.
fn mounts(spec: &ExternalSpec, tmp: &Path, tmp_mb: u64) -> io::Result<Mounts> {
    use std::collections::BTreeSet;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_encoded_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))
    };
    let under = |p: &Path| tmp.join(p.strip_prefix("/").unwrap_or(p));
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    let chain = |dirs: &mut BTreeSet<PathBuf>, p: &Path| {
        for a in p.ancestors().filter(|a| a.parent().is_some()) {
            dirs.insert(under(a));
        }
    };
    let mut readable_set: Vec<PathBuf> = Vec::new();
    for d in readable(spec, &spec.sandbox_read) {
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
        binds.push((c(d)?, c(&under(d))?, Some(read_only_flags(d))));
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
        .chain(std::env::split_paths(&path_var).filter(|d| d.is_absolute()));
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

/// The bot's program, arguments, environment and folder as C strings,
/// with the null-terminated pointer arrays `execve` takes.
struct Exec {
    path: CString,
    cwd: Option<CString>,
    _args: Vec<CString>,
    _env: Vec<CString>,
    argv: Vec<*const nix::libc::c_char>,
    envp: Vec<*const nix::libc::c_char>,
}

impl Exec {
    fn new(
        path: &Path,
        args: &[String],
        env: &[(std::ffi::OsString, std::ffi::OsString)],
        cwd: Option<&Path>,
    ) -> io::Result<Exec> {
        use std::os::unix::ffi::OsStrExt;
        let c = |b: &[u8]| {
            CString::new(b).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a NUL byte in the bot's command",
                )
            })
        };
        let args: Vec<CString> = args
            .iter()
            .map(|a| c(a.as_bytes()))
            .collect::<io::Result<_>>()?;
        let env: Vec<CString> = env
            .iter()
            .map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                c(&kv)
            })
            .collect::<io::Result<_>>()?;
        let nul_ended = |v: &[CString]| {
            v.iter()
                .map(|s| s.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect()
        };
        Ok(Exec {
            path: c(path.as_os_str().as_bytes())?,
            cwd: cwd.map(|d| c(d.as_os_str().as_bytes())).transpose()?,
            argv: nul_ended(&args),
            envp: nul_ended(&env),
            _args: args,
            _env: env,
        })
    }
}

/// A per-sandbox cgroup, removed when dropped (once its processes are gone).
#[derive(Debug)]
pub(crate) struct Cgroup(PathBuf);

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The kernel refuses while processes remain; they are being reaped
        // by then, so a few tries suffice.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.0).is_ok() || !self.0.exists() {
                // The run's folder too, unless another sandbox runs.
                if let Some(base) = self.0.parent() {
                    let _ = std::fs::remove_dir(base);
                }
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

/// The program a bot's command names, as `execvp` would find it: a path
/// with a `/` taken from `cwd`, a bare name looked up on `path_var`.
fn program_path(program: &str, cwd: &Path, path_var: &str) -> Option<PathBuf> {
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
fn bot_path_var(spec: &ExternalSpec) -> String {
    spec.env
        .get("PATH")
        .cloned()
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default()
}

/// Prepares the sandbox of one start of `spec`, with `tmp` its only
/// writable folder, `limits` (address space, CPU seconds; 0: none) and
/// `env` its whole environment.
pub(crate) fn prepare(
    spec: &ExternalSpec,
    tmp: &Path,
    limits: [(Resource, u64); 2],
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> io::Result<(Prepared, Option<Cgroup>)> {
    let s = support();
    if s.root {
        // Where the bot writes when no tmpfs can be given (best-effort).
        nix::unistd::chown(
            tmp,
            Some(nix::unistd::Uid::from_raw(OVERFLOW_ID)),
            Some(nix::unistd::Gid::from_raw(OVERFLOW_ID)),
        )?;
    }
    let (program, args) = spec
        .command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
    let cwd = match &spec.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir()?,
    };
    let path = program_path(program, &cwd, &bot_path_var(spec))
        .ok_or_else(|| io::Error::from_raw_os_error(nix::libc::ENOENT))?;
    let mut argv = vec![program.clone()];
    argv.extend(args.iter().cloned());
    // With `inherit_env`, referee's whole environment under the bot's own
    // variables; each name once, the last value winning.
    let mut whole: Vec<(std::ffi::OsString, std::ffi::OsString)> = Vec::new();
    let inherited = spec
        .inherit_env
        .then(std::env::vars_os)
        .into_iter()
        .flatten();
    for (k, v) in inherited.chain(env.iter().cloned()) {
        whole.retain(|(old, _)| *old != k);
        whole.push((k, v));
    }
    // In its own mount namespace the bot would start in `/`: it is given
    // referee's folder, as outside, when its spec names none.
    let exec_cwd = match (&spec.cwd, s.mounts) {
        (Some(d), _) => Some(d.clone()),
        (None, true) => Some(cwd.clone()),
        (None, false) => None,
    };
    let exec = Exec::new(&path, &argv, &whole, exec_cwd.as_deref())?;
    let processes = spec
        .limits
        .processes
        .filter(|&p| p > 0)
        .unwrap_or(DEFAULT_SANDBOX_PROCESSES);
    let ruleset = if s.landlock_abi > 0 {
        Some(ruleset(spec, tmp).map_err(|e| io::Error::other(format!("sandbox: {e}")))?)
    } else {
        None
    };
    let ruleset_fd = match &ruleset {
        Some(r) => Option::<OwnedFd>::from(r.try_clone()?),
        None => None,
    };
    let mounts = if s.mounts {
        let tmp_mb = spec.limits.tmp_mb.unwrap_or(DEFAULT_TMP_MB);
        Some(mounts(spec, tmp, tmp_mb)?)
    } else {
        None
    };
    let uid = nix::unistd::geteuid().as_raw();
    let gid = nix::unistd::getegid().as_raw();
    let cstr = |s: &str| CString::new(s).map_err(io::Error::other);
    let cgroup = match (&s.pids_cgroup, s.root) {
        (Some(base), true) => {
            static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let dir = base.join(format!("bot{n}"));
            // The folder of a run's cgroups goes when its last sandbox does
            // (see `Cgroup`): made again when needed.
            if std::fs::create_dir(&dir).is_err() {
                let _ = std::fs::create_dir_all(base);
                if base.starts_with("/sys/fs/cgroup/pids") {
                    std::fs::create_dir(&dir)?;
                } else {
                    let _ = std::fs::write(base.join("cgroup.subtree_control"), "+pids");
                    std::fs::create_dir(&dir)?;
                }
            }
            let group = Cgroup(dir);
            std::fs::write(group.0.join("pids.max"), processes.to_string())?;
            Some(group)
        }
        _ => None,
    };
    let cgroup_procs = match &cgroup {
        Some(g) => Some(cstr(&g.0.join("cgroup.procs").to_string_lossy())?),
        None => None,
    };
    Ok((
        Prepared {
            ruleset,
            setgroups: cstr("/proc/self/setgroups")?,
            uid_map_path: cstr("/proc/self/uid_map")?,
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map_path: cstr("/proc/self/gid_map")?,
            gid_map: format!("{gid} {gid} 1").into_bytes(),
            cgroup_procs,
            filter: if s.seccomp { network_filter() } else { None },
            nproc: match (s.root, s.namespaces) {
                (false, true) => Some(processes),
                // Without a namespace of its own the limit counts every
                // process of the user, as outside the sandbox.
                (false, false) => spec.limits.processes.filter(|&p| p > 0),
                (true, _) => None,
            },
            limits,
            exec,
            mounts,
            drop_to_overflow: s.root,
            ruleset_fd,
            tmp_access: landlock_fs_access(s.landlock_abi),
        },
        cgroup,
    ))
}

/// The Landlock ruleset: read-only where the bot may read, read-write in
/// its temporary folder, no TCP, no signals or abstract sockets outside.
fn ruleset(spec: &ExternalSpec, tmp: &Path) -> Result<RulesetCreated, String> {
    let abi = ABI_WANTED;
    let err = |e: landlock::RulesetError| e.to_string();
    let mut r = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?
        .handle_access(AccessNet::from_all(abi))
        .map_err(err)?
        .scope(Scope::from_all(abi))
        .map_err(err)?
        .create()
        .map_err(err)?;
    let read = AccessFs::from_read(abi);
    for dir in readable(spec, &spec.sandbox_read) {
        let Ok(fd) = PathFd::new(&dir) else { continue };
        r = r.add_rule(PathBeneath::new(fd, read)).map_err(err)?;
    }
    let write = AccessFs::from_all(abi);
    let fd = PathFd::new(tmp).map_err(|e| e.to_string())?;
    r = r.add_rule(PathBeneath::new(fd, write)).map_err(err)?;
    // Devices every runtime opens: reading randomness, writing to nothing.
    for dev in ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"] {
        if let Ok(fd) = PathFd::new(dev) {
            r = r
                .add_rule(PathBeneath::new(fd, read | AccessFs::WriteFile))
                .map_err(err)?;
        }
    }
    Ok(r)
}

/// The Landlock file-system rights a ruleset written for [`ABI_WANTED`]
/// handles on a kernel of ABI `kernel_abi` (the rights of both).
fn landlock_fs_access(kernel_abi: u8) -> u64 {
    let abi = match kernel_abi.min(6) {
        0 => return 0,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        _ => ABI_WANTED,
    };
    AccessFs::from_all(abi).bits()
}

/// Writes `data` to the file `path` with plain system calls.
fn write_file(path: &CString, data: &[u8]) -> Result<(), Errno> {
    use nix::fcntl::{open, OFlag};
    use nix::sys::stat::Mode;
    use std::os::fd::{FromRawFd, OwnedFd};
    let raw = open(
        path.as_c_str(),
        OFlag::O_WRONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?;
    // SAFETY: `raw` was just opened here and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let n = nix::unistd::write(&fd, data)?;
    if n != data.len() {
        return Err(Errno::EIO);
    }
    Ok(())
}

/// A sandboxed bot just started: its process id (in referee's PID
/// namespace; also its process group) and referee's ends of its pipes.
pub(crate) struct Spawned {
    pub(crate) pid: Pid,
    pub(crate) stdin: OwnedFd,
    pub(crate) stdout: OwnedFd,
    pub(crate) stderr: OwnedFd,
}

/// The steps of a sandboxed start, named in the error when one fails.
const STEPS: [&str; 14] = [
    "",
    "the parent-death signal",
    "joining the sandbox's cgroup",
    "mapping the user and group ids",
    "setting the resource limits",
    "making the process group",
    "entering the bot's folder",
    "connecting stdin, stdout and stderr",
    "resetting the signal handlers",
    "applying the seccomp filter",
    "applying the Landlock ruleset",
    "making the bot's private file system view",
    "dropping to the unprivileged user",
    "closing referee's other file descriptors",
];

/// The child's stack until it executes the bot (it only makes system calls).
const CHILD_STACK: usize = 256 * 1024;

/// A pipe whose two ends are above stdin, stdout and stderr (so that
/// connecting them in the child never overwrites one another) and closed on
/// exec.
fn pipe_above_stdio() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let lift = |fd: OwnedFd| -> io::Result<OwnedFd> {
        if fd.as_raw_fd() > 2 {
            return Ok(fd);
        }
        let raw = nix::fcntl::fcntl(fd.as_raw_fd(), nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(3))?;
        // SAFETY: `raw` was just made by F_DUPFD_CLOEXEC and is owned by
        // nothing else.
        Ok(unsafe { OwnedFd::from_raw_fd(raw) })
    };
    Ok((lift(r)?, lift(w)?))
}

/// Starts the bot `prepared` describes in its sandbox and returns its
/// process and pipes.
///
/// The child is made by `clone` with `CLONE_VM | CLONE_VFORK` (as
/// `posix_spawn` does) and the new namespaces: it borrows referee's memory
/// until it executes the bot, so nothing of referee's is copied, and it is
/// process 1 of its PID namespace from the start. A `fork` instead copied
/// referee's page tables and made every thread of referee fault on its next
/// write, which was most of a sandboxed start's cost.
pub(crate) fn spawn(prepared: Prepared) -> io::Result<Spawned> {
    use nix::sys::signal::{pthread_sigmask, SigSet, SigmaskHow};
    let (in_r, in_w) = pipe_above_stdio()?;
    let (out_r, out_w) = pipe_above_stdio()?;
    let (err_r, err_w) = pipe_above_stdio()?;
    let stdio = [in_r.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()];
    // What failed in the child: its step (high half) and errno (low half).
    let failure = AtomicU64::new(0);
    let mut stack = vec![0u8; CHILD_STACK];
    let mut flags = CloneFlags::CLONE_VM | CloneFlags::CLONE_VFORK;
    if support().namespaces {
        flags |= namespace_flags(support().root);
    }
    if prepared.mounts.is_some() {
        flags |= CloneFlags::CLONE_NEWNS;
    }
    let p = &prepared;
    let failed = &failure;
    let child = Box::new(move || -> isize {
        let (step, errno) = match child_setup(p, stdio) {
            Ok(never) => match never {},
            Err(e) => e,
        };
        failed.store(
            ((step as u64) << 32) | errno as u32 as u64,
            Ordering::SeqCst,
        );
        exit_now(127)
    });
    // No signal handler of referee's may run in the child, which shares
    // referee's memory: everything is blocked across the clone, and the
    // child resets the handlers before it unblocks.
    let mut old = SigSet::empty();
    pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut old),
    )?;
    // SAFETY: the child runs `child_setup` on its own stack and only makes
    // system calls on memory prepared before the clone, then executes the
    // bot or exits; with CLONE_VFORK this thread waits until it has done so.
    let res = unsafe { nix::sched::clone(child, &mut stack, flags, Some(Signal::SIGCHLD as i32)) };
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    let pid = res?;
    drop((in_r, out_w, err_w));
    let f = failure.load(Ordering::SeqCst);
    if f != 0 {
        let _ = waitpid(pid, None);
        let (step, errno) = ((f >> 32) as usize, Errno::from_raw(f as u32 as i32));
        // A program that cannot be executed fails as it would unsandboxed.
        return Err(match STEPS.get(step).filter(|s| !s.is_empty()) {
            Some(what) => io::Error::new(
                io::Error::from(errno).kind(),
                format!("sandbox: {what} failed: {}", errno.desc()),
            ),
            None => io::Error::from(errno),
        });
    }
    Ok(Spawned {
        pid,
        stdin: in_w,
        stdout: out_r,
        stderr: err_r,
    })
}

/// The child's life between the clone and the bot's `exec`: only system
/// calls on what `prepared` holds. Returns the failed step and its errno.
fn child_setup(
    p: &Prepared,
    stdio: [RawFd; 3],
) -> Result<std::convert::Infallible, (usize, Errno)> {
    use nix::libc;
    let step = |n: usize| move |e: Errno| (n, e);
    nix::sys::prctl::set_pdeathsig(Some(Signal::SIGKILL)).map_err(step(1))?;
    if let Some(procs) = &p.cgroup_procs {
        // "0": the writer itself, whatever its id in its new namespace.
        write_file(procs, b"0").map_err(step(2))?;
    }
    if support().namespaces && !p.drop_to_overflow {
        write_file(&p.setgroups, b"deny").map_err(step(3))?;
        write_file(&p.uid_map_path, &p.uid_map).map_err(step(3))?;
        write_file(&p.gid_map_path, &p.gid_map).map_err(step(3))?;
    }
    if let Some(m) = &p.mounts {
        private_root(m, p.drop_to_overflow).map_err(step(11))?;
    }
    if p.drop_to_overflow {
        // Groups first: without root, the ids could not be changed.
        // SAFETY: plain system calls with no pointers but a null list.
        unsafe {
            let id = OVERFLOW_ID;
            if libc::setgroups(0, std::ptr::null()) != 0
                || libc::setresgid(id, id, id) != 0
                || libc::setresuid(id, id, id) != 0
            {
                return Err((12, Errno::last()));
            }
        }
        // A change of user clears the parent-death signal.
        nix::sys::prctl::set_pdeathsig(Some(Signal::SIGKILL)).map_err(step(1))?;
    }
    for &(res, value) in &p.limits {
        if value > 0 {
            let (_, hard) = nix::sys::resource::getrlimit(res).map_err(step(4))?;
            let v = value.min(hard);
            setrlimit(res, v, v).map_err(step(4))?;
        }
    }
    // Counted in the new user namespace (the bot's own processes); root is
    // exempt and capped by its cgroup instead.
    if let Some(n) = p.nproc {
        setrlimit(Resource::RLIMIT_NPROC, n, n).map_err(step(4))?;
    }
    nix::unistd::setpgid(Pid::from_raw(0), Pid::from_raw(0)).map_err(step(5))?;
    if let Some(dir) = &p.exec.cwd {
        nix::unistd::chdir(dir.as_c_str()).map_err(step(6))?;
    }
    for (target, fd) in stdio.into_iter().enumerate() {
        // SAFETY: `fd` is open (the pipes outlive the clone) and above 2.
        if unsafe { libc::dup2(fd, target as i32) } < 0 {
            return Err((7, Errno::last()));
        }
    }
    // Handlers go back to the default (the bot gets no handler of
    // referee's), and SIGPIPE, which Rust programs ignore, too; signals
    // ignored by whoever started referee stay ignored, as with std.
    for sig in 1..libc::SIGRTMAX() {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        // SAFETY: sigaction with plain structs on this stack.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                continue;
            }
            let handled = old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN;
            if handled || (sig == libc::SIGPIPE && old.sa_sigaction == libc::SIG_IGN) {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                if libc::sigaction(sig, &dfl, std::ptr::null_mut()) != 0 {
                    return Err((8, Errno::last()));
                }
            }
        }
    }
    nix::sys::signal::pthread_sigmask(
        nix::sys::signal::SigmaskHow::SIG_SETMASK,
        Some(&nix::sys::signal::SigSet::empty()),
        None,
    )
    .map_err(step(8))?;
    if let Some(filter) = p.filter {
        seccompiler::apply_filter(filter).map_err(|_| (9, Errno::last()))?;
    }
    if let (Some(m), Some(fd)) = (&p.mounts, &p.ruleset_fd) {
        allow_tmpdir(m, fd.as_raw_fd(), p.tmp_access).map_err(step(10))?;
    }
    if let Some(r) = &p.ruleset {
        // SAFETY: a bitwise copy of the ruleset, for this process alone:
        // it holds a descriptor (this process's copy is closed here,
        // referee's when referee drops its own) and plain flags, no heap.
        let mine: RulesetCreated = unsafe { std::ptr::read(r) };
        mine.restrict_self().map_err(|_| (10, Errno::last()))?;
    }
    // Only stdin, stdout and stderr cross into the bot: whatever referee
    // inherited (a descriptor its caller left open) closes on exec.
    // SAFETY: a plain system call on this process's descriptor table.
    if unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    } != 0
    {
        return Err((13, Errno::last()));
    }
    // SAFETY: null-terminated arrays of pointers into C strings that live
    // in `p`, which outlives this call.
    unsafe {
        libc::execve(
            p.exec.path.as_ptr(),
            p.exec.argv.as_ptr(),
            p.exec.envp.as_ptr(),
        );
    }
    Err((0, Errno::last()))
}

/// Makes the bot's private view of the file system (see [`Mounts`]) and
/// switches to it: only system calls on what `m` holds. As root, the bot's
/// `TMPDIR` is given to [`OVERFLOW_ID`], whom the bot becomes next.
fn private_root(m: &Mounts, chown_tmpdir: bool) -> Result<(), Errno> {
    use nix::libc;
    let none = std::ptr::null();
    let ok = |r: libc::c_int| if r == 0 { Ok(()) } else { Err(Errno::last()) };
    // SAFETY: every call below takes C strings that live in `m` (or
    // literals) and no other pointer.
    unsafe {
        // Nothing mounted here may reach referee's own mount namespace.
        ok(libc::mount(
            none,
            c"/".as_ptr(),
            none,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        ok(libc::mount(
            c"tmpfs".as_ptr(),
            m.new_root.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            m.tmpfs_options.as_ptr().cast(),
        ))?;
        // Folders readable by anyone, whatever referee's umask.
        let old_mask = libc::umask(0o022);
        for d in &m.dirs {
            if libc::mkdir(d.as_ptr(), 0o755) != 0 && Errno::last() != Errno::EEXIST {
                libc::umask(old_mask);
                return Err(Errno::last());
            }
        }
        libc::umask(old_mask);
        for f in &m.files {
            let fd = libc::open(
                f.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o644,
            );
            if fd < 0 {
                return Err(Errno::last());
            }
            libc::close(fd);
        }
        for (source, target, read_only) in &m.binds {
            ok(libc::mount(
                source.as_ptr(),
                target.as_ptr(),
                none,
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))?;
            if let Some(flags) = read_only {
                // Landlock keeps it read-only too, should a kernel refuse.
                let _ = libc::mount(none, target.as_ptr(), none, *flags, std::ptr::null());
            }
        }
        if let Some(proc) = &m.proc {
            // Not fatal: a container may refuse it, and most bots never look.
            let _ = libc::mount(
                c"proc".as_ptr(),
                proc.as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            );
        }
        for (target, link) in &m.links {
            if libc::symlink(target.as_ptr(), link.as_ptr()) != 0 && Errno::last() != Errno::EEXIST
            {
                return Err(Errno::last());
            }
        }
        ok(libc::mkdir(m.tmpdir_before.as_ptr(), 0o700))?;
        if chown_tmpdir {
            ok(libc::chown(
                m.tmpdir_before.as_ptr(),
                OVERFLOW_ID,
                OVERFLOW_ID,
            ))?;
        }
        // The tmpfs becomes `/`; the old root is detached, out of reach.
        ok(libc::chdir(m.new_root.as_ptr()))?;
        ok(libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as libc::c_int)?;
        ok(libc::umount2(c".".as_ptr(), libc::MNT_DETACH))?;
        ok(libc::chdir(c"/".as_ptr()))?;
    }
    Ok(())
}

/// Allows every file-system right in the bot's tmpfs `TMPDIR`, through
/// `ruleset`, the Landlock ruleset's descriptor (the tmpfs exists only in
/// the child, so the rule can only be added there).
fn allow_tmpdir(m: &Mounts, ruleset: RawFd, access: u64) -> Result<(), Errno> {
    use nix::libc;
    /// `struct landlock_path_beneath_attr` (packed, as in the kernel).
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_long = 1;
    // SAFETY: plain system calls; the attribute lives on this stack.
    unsafe {
        let fd = libc::open(
            m.tmpdir.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return Err(Errno::last());
        }
        let attr = PathBeneathAttr {
            allowed_access: access,
            parent_fd: fd,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset as libc::c_long,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0 as libc::c_long,
        );
        let e = Errno::last();
        libc::close(fd);
        if r != 0 {
            return Err(e);
        }
    }
    Ok(())
}

fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` ends the process at once, which is what a child that
    // shares its parent's memory must do instead of running exit handlers.
    unsafe { nix::libc::_exit(code) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_read_from_text() {
        assert_eq!("best-effort".parse(), Ok(SandboxMode::BestEffort));
        assert_eq!("on".parse(), Ok(SandboxMode::On));
        assert_eq!("off".parse(), Ok(SandboxMode::Off));
        assert!("maybe".parse::<SandboxMode>().is_err());
    }

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
    fn missing_guarantees_are_named() {
        let none = Support {
            landlock_abi: 0,
            namespaces: false,
            seccomp: false,
            root: true,
            pids_cgroup: None,
            mounts: false,
        };
        let m = missing(&none);
        assert_eq!(m.len(), 5, "{m:?}");
        assert!(m[0].contains("no Landlock"));
        let all = Support {
            landlock_abi: 6,
            namespaces: true,
            seccomp: true,
            root: false,
            pids_cgroup: None,
            mounts: true,
        };
        assert!(missing(&all).is_empty());
    }
}
