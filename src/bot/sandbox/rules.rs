//! The kernel's rules for a sandboxed bot: the seccomp filter (no socket,
//! no tracing, no child-subreaper change, ...) and the Landlock ruleset
//! (read-only where it may read, read-write in its temporary folder, no
//! TCP, no signal or abstract socket outside). Both are built before the
//! bot's process is made; the child applies them with raw system calls on
//! the ruleset's descriptor, so nothing of another crate's types crosses
//! into a process that shares referee's memory.

use std::ffi::CString;
use std::os::fd::{OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};
use nix::errno::Errno;
use nix::libc;

/// The Landlock ABI the rules are written for; newer kernels apply them
/// as they are, older ones lose what they lack (said by the guarantees).
const ABI_WANTED: ABI = ABI::V6;

/// The seccomp filter of every sandboxed bot (built once): no socket of
/// any family, no io_uring (which could open one), no tracing, no other
/// process's memory, no kernel keyrings, BPF or performance counters, and
/// no change to its first process's child-subreaper mark (which keeps the
/// processes it starts below it: see `watch`).
pub(crate) fn seccomp_filter() -> Option<&'static seccompiler::BpfProgram> {
    static FILTER: OnceLock<Option<seccompiler::BpfProgram>> = OnceLock::new();
    FILTER
        .get_or_init(|| {
            use seccompiler::{
                SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
                SeccompRule,
            };
            let denied = [
                libc::SYS_socket,
                libc::SYS_io_uring_setup,
                libc::SYS_io_uring_enter,
                libc::SYS_io_uring_register,
                libc::SYS_ptrace,
                libc::SYS_process_vm_readv,
                libc::SYS_process_vm_writev,
                libc::SYS_add_key,
                libc::SYS_keyctl,
                libc::SYS_request_key,
                libc::SYS_bpf,
                libc::SYS_perf_event_open,
                libc::SYS_userfaultfd,
            ];
            let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> =
                denied.iter().map(|&n| (n, Vec::new())).collect();
            let subreaper = SeccompCondition::new(
                0,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                libc::PR_SET_CHILD_SUBREAPER as u64,
            )
            .ok()?;
            rules.insert(
                libc::SYS_prctl,
                vec![SeccompRule::new(vec![subreaper]).ok()?],
            );
            let arch = std::env::consts::ARCH.try_into().ok()?;
            let filter = SeccompFilter::new(
                rules,
                SeccompAction::Allow,
                SeccompAction::Errno(libc::EACCES as u32),
                arch,
            )
            .ok()?;
            filter.try_into().ok()
        })
        .as_ref()
}

/// The Landlock ruleset's descriptor: `read` read-only (with execution),
/// `tmp` read-write, the devices every runtime opens, no TCP, signals and
/// abstract sockets scoped to the bot's own processes.
pub(crate) fn ruleset(read: &[PathBuf], tmp: &Path) -> Result<Option<OwnedFd>, String> {
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
    let readable = AccessFs::from_read(abi);
    for dir in read {
        let Ok(fd) = PathFd::new(dir) else { continue };
        r = r.add_rule(PathBeneath::new(fd, readable)).map_err(err)?;
    }
    let fd = PathFd::new(tmp).map_err(|e| e.to_string())?;
    r = r
        .add_rule(PathBeneath::new(fd, AccessFs::from_all(abi)))
        .map_err(err)?;
    // Devices every runtime opens: reading randomness, writing to nothing.
    for dev in super::view::DEVICES {
        if let Ok(fd) = PathFd::new(dev) {
            r = r
                .add_rule(PathBeneath::new(fd, readable | AccessFs::WriteFile))
                .map_err(err)?;
        }
    }
    Ok(Option::<OwnedFd>::from(r))
}

/// The Landlock file-system rights a ruleset written for [`ABI_WANTED`]
/// handles on a kernel of ABI `kernel_abi` (the rights of both).
pub(crate) fn landlock_fs_access(kernel_abi: u8) -> u64 {
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

/// Allows every right in `access` beneath `path` through the ruleset
/// descriptor `ruleset`, with raw system calls (for the child: the bot's
/// tmpfs `TMPDIR` exists only there).
pub(crate) fn allow_beneath(path: &CString, ruleset: RawFd, access: u64) -> Result<(), Errno> {
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
            path.as_ptr(),
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

/// Puts the calling process under the ruleset `ruleset` (raw system
/// calls; `no_new_privs` must be set, as the kernel asks).
pub(crate) fn restrict_self(ruleset: RawFd) -> Result<(), Errno> {
    // SAFETY: a plain system call with integer arguments.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_restrict_self,
            ruleset as libc::c_long,
            0 as libc::c_long,
        )
    };
    if r != 0 {
        return Err(Errno::last());
    }
    Ok(())
}
