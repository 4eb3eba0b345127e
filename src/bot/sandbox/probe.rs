//! What this machine offers the sandbox, found out once per run: the
//! Landlock ABI, seccomp, namespaces, a private mount view, cgroups and
//! per-bot users. Each probe tries the real thing in a throwaway child
//! (or a throwaway cgroup), so a container that forbids it is seen as it
//! is, whatever the kernel's version says.

use std::ffi::CString;
use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use landlock::{Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, ABI};
use nix::sched::{unshare, CloneFlags};

use super::users::{self, UidRange};
use super::{cgroup, rules};

/// What the kernel offers the sandbox, found out once per run.
#[derive(Clone, Debug)]
pub struct Support {
    /// The highest Landlock ABI supported (0: none).
    pub landlock_abi: u8,
    /// New PID, IPC and UTS namespaces (and a user namespace, without
    /// root) can be made.
    pub namespaces: bool,
    /// System calls can be filtered (seccomp): the network is cut with it.
    pub seccomp: bool,
    /// referee runs as root.
    pub root: bool,
    /// The folder under which per-bot `pids` cgroups are made, when there
    /// is one referee can write (root only).
    pub pids_cgroup: Option<PathBuf>,
    /// The folder under which per-bot `memory` cgroups are made, when there
    /// is one referee can write (root only).
    pub memory_cgroup: Option<PathBuf>,
    /// A private mount namespace with a size-capped tmpfs can be made: the
    /// bot sees only what it may read, and its temporary folder has a cap.
    pub mounts: bool,
    /// Per-bot users: referee runs as root and can become each id of this
    /// range (docs/sandbox.md, "Per-bot users").
    pub users: Option<UidRange>,
}

/// What the kernel offers, once probed.
static SUPPORT: OnceLock<Support> = OnceLock::new();

/// Probes the machine (once; later calls return the first answer).
pub fn support() -> &'static Support {
    SUPPORT.get_or_init(|| {
        let root = nix::unistd::geteuid().is_root();
        let namespaces = namespaces_work(root);
        Support {
            landlock_abi: landlock_abi(),
            namespaces,
            seccomp: seccomp_works(),
            root,
            pids_cgroup: if root { cgroup::base("pids") } else { None },
            memory_cgroup: if root { cgroup::base("memory") } else { None },
            mounts: namespaces && mounts_work(root),
            users: if root {
                users_work(users::range())
            } else {
                None
            },
        }
    })
}

/// The support probed, if it has been (for the run's end, which must not
/// start a probe).
pub(crate) fn probed() -> Option<&'static Support> {
    SUPPORT.get()
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

/// A `/bin/sh -c 'exit 0'` with no input or output, for the probes.
fn quiet_shell() -> Command {
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", "exit 0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Whether a child can enter the sandbox's namespaces (some containers
/// forbid it: Docker's default seccomp profile without `CAP_SYS_ADMIN`).
fn namespaces_work(root: bool) -> bool {
    let mut cmd = quiet_shell();
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
/// namespace: it becomes its own unprivileged user instead, which a user
/// namespace made by root could not do (only a process with `CAP_SETUID`
/// in the parent namespace may map other ids, and the child has none
/// there). Without root, a user namespace is what allows the others.
pub(crate) fn namespace_flags(root: bool) -> CloneFlags {
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
    let mut cmd = quiet_shell();
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

/// Whether the kernel filters system calls (seccomp) and the filter builds.
fn seccomp_works() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Seccomp:")))
        && rules::seccomp_filter().is_some()
}

/// `range` when a child of root's can become its first and last ids (a
/// container whose user namespace maps fewer ids refuses them).
fn users_work(range: UidRange) -> Option<UidRange> {
    let works = |id: u32| {
        let mut cmd = quiet_shell();
        // SAFETY: the hook only makes raw system calls, no allocation.
        unsafe {
            cmd.pre_exec(move || {
                users::become_user(id).map_err(io::Error::from)?;
                Ok(())
            });
        }
        cmd.status().is_ok_and(|s| s.success())
    };
    (works(range.first) && works(range.last)).then_some(range)
}

/// Whether `path` is a folder that nobody but root may change (not a
/// symbolic link, owned by root, not writable by group or others): a
/// place root may keep state that bots must not touch.
pub(crate) fn root_only_dir(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.file_type().is_dir() && m.uid() == 0 && m.mode() & 0o022 == 0)
}
