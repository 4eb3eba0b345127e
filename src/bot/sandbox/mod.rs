//! The sandbox for untrusted bots (docs/sandbox.md).
//!
//! A sandboxed bot runs under guarantees ([`Guarantee`]) that each come
//! from whichever layer this machine has ([`support`], [`guarantees`]):
//!
//! - **per-bot users** ([`users`]): run by root, each running bot is a user
//!   id of its own with its own group, from a private root-owned copy of
//!   its folder ([`copy`]): it reads nothing closed to others, signals no
//!   one else, and everything it starts is found and killed by its id. This
//!   layer needs no namespace, so it holds in a Docker container as
//!   Gradescope and PrairieLearn run one and on HPC nodes run by root;
//! - **namespaces**: new PID, IPC, UTS and mount namespaces (and a user
//!   namespace without root): a private view of the file system (a
//!   size-capped tmpfs root holding only what it may read, bound
//!   read-only: [`view`]), its own processes only, ended by the kernel with
//!   the bot;
//! - **Landlock and seccomp** ([`rules`]): the same read-only set and a
//!   writable `TMPDIR` as the kernel's own rules; no socket, no tracing;
//! - **cgroups** ([`cgroup`]): its processes' number and memory together;
//!   where none can be made, a watchdog ([`watch`]) holds memory and
//!   temporary space to their caps;
//! - **freezing**: its processes get no CPU while its opponent is on move
//!   (`SIGSTOP` of every process of its user, or of its process tree,
//!   between its turns: [`Confinement::pause`]).
//!
//! How a sandboxed bot starts ([`prepare`], [`child::spawn`]): referee
//! prepares everything (the lease of a user id, the copy, the ruleset, the
//! filter, the cgroups, the program's path, arguments and environment as C
//! strings), then `clone`s with `CLONE_VM | CLONE_VFORK` (as `posix_spawn`
//! does) and the new namespaces; the child only makes system calls until it
//! executes the bot.

pub(crate) mod cgroup;
pub(crate) mod child;
pub(crate) mod copy;
mod probe;
pub(crate) mod rules;
pub mod users;
pub(crate) mod view;
pub(crate) mod watch;

use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use nix::sys::resource::Resource;
use nix::unistd::Pid;

pub use probe::{support, Support};
pub use view::{own_folders, readable};

use super::manifest::{ExternalSpec, SandboxMode, DEFAULT_SANDBOX_PROCESSES, DEFAULT_TMP_MB};

/// One thing the sandbox promises about a bot, whatever gives it on the
/// machine at hand (docs/sandbox.md has the table of platforms).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guarantee {
    /// It has none of the grader's privileges.
    Privilege,
    /// It cannot read a classmate's submission or the grader's files.
    Reads,
    /// It cannot see the names of files it may not read.
    Names,
    /// It changes nothing of anyone else's; what it writes goes after its
    /// game.
    Writes,
    /// Its temporary files are capped.
    TmpCap,
    /// Only stdin, stdout and stderr cross into it.
    Stdio,
    /// No network.
    Network,
    /// A cap on the number of all its processes together.
    Processes,
    /// A cap on the memory of all its processes together.
    Memory,
    /// It gets no CPU while its opponent is on move.
    Cpu,
    /// It cannot signal or trace processes not its own.
    Signals,
    /// Nothing it starts outlives its game, even if referee is killed.
    Lifetime,
}

impl Guarantee {
    /// Every guarantee, in the docs' order.
    pub const ALL: [Guarantee; 12] = [
        Guarantee::Privilege,
        Guarantee::Reads,
        Guarantee::Names,
        Guarantee::Writes,
        Guarantee::TmpCap,
        Guarantee::Stdio,
        Guarantee::Network,
        Guarantee::Processes,
        Guarantee::Memory,
        Guarantee::Cpu,
        Guarantee::Signals,
        Guarantee::Lifetime,
    ];

    /// The guarantee in a few words, as the docs' table names it.
    pub fn name(self) -> &'static str {
        match self {
            Guarantee::Privilege => "no privilege of the grader's",
            Guarantee::Reads => "reads only its own files and the system's",
            Guarantee::Names => "cannot see names it may not read",
            Guarantee::Writes => "changes nothing of anyone else's",
            Guarantee::TmpCap => "temporary space capped",
            Guarantee::Stdio => "only stdin, stdout and stderr cross",
            Guarantee::Network => "no network",
            Guarantee::Processes => "process count capped",
            Guarantee::Memory => "memory of all its processes capped",
            Guarantee::Cpu => "no CPU on the opponent's turn",
            Guarantee::Signals => "cannot signal or trace others",
            Guarantee::Lifetime => "nothing outlives its game",
        }
    }

    /// What gives this guarantee on a machine with `s` (empty: nothing).
    pub fn layers(self, s: &Support) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |cond: bool, text: String| {
            if cond {
                out.push(text);
            }
        };
        let users = s.users.is_some();
        let own_user = match &s.users {
            Some(r) => format!("per-bot users (ids {r})"),
            None => String::new(),
        };
        match self {
            Guarantee::Privilege => {
                add(users, own_user);
                add(
                    !s.root && s.namespaces,
                    "a user namespace of its own".into(),
                );
                add(
                    !s.root && !s.namespaces,
                    "referee is not root (the bot is its user, confined by the rest)".into(),
                );
            }
            Guarantee::Reads => {
                add(s.mounts, "a private view (mount namespace)".into());
                add(
                    s.landlock_abi >= 1,
                    format!("Landlock ABI {}", s.landlock_abi),
                );
                add(
                    users,
                    format!("{own_user}: the grader's files closed to others"),
                );
            }
            Guarantee::Names => {
                add(s.mounts, "a private view (mount namespace)".into());
                add(
                    users,
                    format!("{own_user}: the class, run and lock folders closed to others"),
                );
            }
            Guarantee::Writes => {
                add(
                    s.mounts,
                    "a private view: all read-only but its TMPDIR".into(),
                );
                add(
                    s.landlock_abi >= 3,
                    "Landlock: writes only in its TMPDIR".into(),
                );
                add(
                    users,
                    format!("{own_user}: writes only where anyone may, removed after its game"),
                );
            }
            Guarantee::TmpCap => {
                add(s.mounts, "a size-capped tmpfs".into());
                add(
                    !s.mounts && (s.landlock_abi >= 3 || users),
                    "the watchdog (its TMPDIR and its files in shared folders, every 50 ms; \
                     each file at most the cap)"
                        .into(),
                );
            }
            Guarantee::Stdio => add(true, "close_range before exec".into()),
            Guarantee::Network => add(s.seccomp, "seccomp: no socket".into()),
            Guarantee::Processes => {
                add(
                    !s.root && s.namespaces,
                    "RLIMIT_NPROC in its user namespace".into(),
                );
                add(users, format!("RLIMIT_NPROC of its own id ({own_user})"));
                add(s.pids_cgroup.is_some(), "a pids cgroup".into());
            }
            Guarantee::Memory => {
                add(s.memory_cgroup.is_some(), "a memory cgroup".into());
                add(
                    s.memory_cgroup.is_none(),
                    "the watchdog (all its processes' memory, every 50 ms)".into(),
                );
            }
            Guarantee::Cpu => {
                add(
                    users,
                    format!("SIGSTOP of its user's processes ({own_user})"),
                );
                add(
                    !users && (s.namespaces || s.seccomp),
                    "SIGSTOP of its process tree".into(),
                );
            }
            Guarantee::Signals => {
                add(s.namespaces, "a PID namespace of its own".into());
                add(users, own_user.clone());
                add(s.landlock_abi >= 6, "Landlock's signal scope".into());
            }
            Guarantee::Lifetime => {
                add(
                    s.namespaces,
                    "a PID namespace: the kernel ends it with the bot".into(),
                );
                add(
                    users,
                    format!("{own_user}: killed by id after each game, by the janitor if referee is killed"),
                );
            }
        }
        out
    }

    /// Why this guarantee is missing on a machine with `s`, in words.
    fn why_missing(self, s: &Support) -> String {
        let cause = match self {
            Guarantee::Privilege => {
                "referee runs as root and cannot become the ids of its user range (a user \
                 namespace that maps too few ids?): the bot would run as root"
            }
            Guarantee::Reads => {
                "no private view, no Landlock and no per-bot users: the bot could read every \
                 file its user can"
            }
            Guarantee::Names => {
                "no private view and no per-bot users: the names, sizes and times of files it \
                 may not read can be seen with stat"
            }
            Guarantee::Writes => {
                "no private view, no Landlock ABI 3 and no per-bot users: the bot could write \
                 wherever its user can"
            }
            Guarantee::TmpCap => {
                "no size-capped tmpfs, and writes are not confined to its temporary folder: its \
                 files have no total cap"
            }
            Guarantee::Stdio => "",
            Guarantee::Network => {
                "the kernel cannot filter system calls (seccomp), so the bot could open sockets"
            }
            Guarantee::Processes => {
                if s.root {
                    "referee runs as root, whom the kernel exempts from the process limit, with \
                     no per-bot users and no writable pids cgroup"
                } else {
                    "without a user namespace the process limit counts every process of the \
                     user, not the bot's"
                }
            }
            Guarantee::Memory => "",
            Guarantee::Cpu => {
                "without namespaces or seccomp a process can leave the bot's process tree"
            }
            Guarantee::Signals => {
                "no PID namespace, no per-bot users and no Landlock ABI 6: the bot could signal \
                 referee's processes"
            }
            Guarantee::Lifetime => {
                "no PID namespace and no per-bot users: a process that leaves the bot's tree \
                 (the bot crashing under it) outlives the game"
            }
        };
        format!("{}: {cause}", self.name())
    }
}

/// Every guarantee with what gives it on a machine with `s`.
pub fn guarantees(s: &Support) -> Vec<(Guarantee, Vec<String>)> {
    Guarantee::ALL.iter().map(|&g| (g, g.layers(s))).collect()
}

/// The guarantees the sandbox cannot give on a machine with `s`, in words
/// (empty when it gives them all).
pub fn missing(s: &Support) -> Vec<String> {
    Guarantee::ALL
        .iter()
        .filter(|g| g.layers(s).is_empty())
        .map(|g| g.why_missing(s))
        .collect()
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

/// Closes `paths` to other users (clears the rights of others, as
/// `chmod o-rwx`) where the sandbox keeps bots from the grader's files by
/// per-bot users alone: root, with no private view (a container). There a
/// bot reads what others may read, so the class folder, the outputs, the
/// rubric and the league's folder must not be. Elsewhere nothing changes.
/// Returns the paths it changed; paths that do not exist are skipped.
pub fn close_to_bots(paths: &[&Path]) -> io::Result<Vec<PathBuf>> {
    use std::os::unix::fs::PermissionsExt;
    let s = support();
    if !(s.root && s.users.is_some() && !s.mounts) {
        return Ok(Vec::new());
    }
    let mut changed = Vec::new();
    for p in paths {
        let Ok(meta) = std::fs::metadata(p) else {
            continue;
        };
        let mode = meta.permissions().mode();
        if mode & 0o007 != 0 {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode & !0o007))?;
            changed.push(p.to_path_buf());
        }
    }
    Ok(changed)
}

/// Cleans up after the run's last bot: the copies kept for per-bot users
/// and this run's folders of per-bot cgroups (the kernel refuses while a
/// sandbox still runs).
pub fn finish() {
    copy::forget_all();
    for _ in 0..50 {
        cgroup::remove_pending();
        if !cgroup::any_pending() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    if let Some(s) = probe::probed() {
        cgroup::remove_bases(&[&s.pids_cgroup, &s.memory_cgroup]);
    }
}

/// What keeps one sandboxed bot confined while it runs and cleans up after
/// it: its user id, its private copy, its cgroups and its watch. Dropping
/// it kills whatever of the bot is left.
pub(crate) struct Confinement {
    /// Set once the bot runs ([`Confinement::started`]).
    watch: Option<watch::Watch>,
    members: Option<watch::Members>,
    cgroups: Vec<cgroup::Cgroup>,
    /// The bot as the freezer knows it (once started).
    freezable: Option<Arc<watch::Freezable>>,
    /// The private copy it runs from (kept for the next bot of its id
    /// from the same folders).
    _copies: Option<std::sync::Arc<copy::Copies>>,
    lease: Option<users::Lease>,
    verdict: watch::Verdict,
    /// The memory cap the watchdog holds (no memory cgroup), in bytes.
    watch_memory: u64,
    /// The temporary folder the watchdog holds to its cap (no tmpfs), with
    /// the cap in bytes.
    watch_tmp: Option<(PathBuf, u64)>,
    /// The cap of the memory cgroup, in MiB (for the verdict).
    memory_mb: u64,
    /// Whether the bot is process 1 of a PID namespace of its own.
    own_pid_namespace: bool,
}

impl std::fmt::Debug for Confinement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confinement")
            .field("members", &self.members)
            .finish()
    }
}

impl Confinement {
    /// The bot's first process is `pid`: its processes are now watched.
    pub(crate) fn started(&mut self, pid: Pid) {
        let members = match &self.lease {
            Some(l) => watch::Members::User(l.uid()),
            None => watch::Members::Tree(pid),
        };
        self.members = Some(members);
        self.freezable = Some(watch::Freezable::new(members));
        if self.watch_memory > 0 || self.watch_tmp.is_some() {
            self.watch = Some(watch::watch(
                pid,
                members,
                self.watch_memory,
                self.watch_tmp.clone(),
                self.lease.as_ref().map(|l| l.uid()),
                self.verdict.clone(),
            ));
        }
    }

    /// The bot is not on move: every process of it is frozen soon (after
    /// [`watch::FREEZE_AFTER`], unless it is asked for something first).
    pub(crate) fn pause(&mut self) {
        if let Some(f) = &self.freezable {
            f.idle();
        }
    }

    /// The bot is on move (or must end): it runs, continued if frozen.
    pub(crate) fn resume(&mut self) {
        if let Some(f) = &self.freezable {
            f.wake();
        }
    }

    /// Kills every process of the bot, wherever it went.
    pub(crate) fn kill(&mut self) {
        if let Some(f) = &self.freezable {
            f.gone();
        }
        // In a PID namespace of its own the kernel ends every process of
        // the bot with its first one, which referee kills.
        if let (Some(m), false) = (&self.members, self.own_pid_namespace) {
            m.kill();
        }
    }

    /// Why referee killed the bot for going over a cap, if it did.
    pub(crate) fn verdict(&self) -> Option<String> {
        if let Some(v) = self.verdict.get() {
            return Some(v.clone());
        }
        let kills: u64 = self.cgroups.iter().map(cgroup::Cgroup::oom_kills).sum();
        (kills > 0).then(|| {
            format!(
                "the kernel killed {kills} of its processes for going over its memory cap of {} \
                 MiB (all its processes together)",
                self.memory_mb
            )
        })
    }
}

impl Drop for Confinement {
    fn drop(&mut self) {
        self.watch = None;
        self.kill();
        // Then the cgroups (empty by now), the copy, and the id.
    }
}

/// Prepares the sandbox of one start of `spec`, with `tmp` its temporary
/// folder, `limits` (address space, CPU seconds; 0: none) and `env` its
/// whole environment: what the child needs, and what confines the bot
/// while it runs.
pub(crate) fn prepare(
    spec: &ExternalSpec,
    tmp: &Path,
    limits: [(Resource, u64); 2],
    env: &[(std::ffi::OsString, std::ffi::OsString)],
) -> io::Result<(child::Prepared, Confinement)> {
    let s = support();
    let own = own_folders(spec);
    // A bot gets the id it had last when it is free: its copy is kept.
    static LAST_ID: std::sync::Mutex<Vec<(Vec<PathBuf>, u32)>> = std::sync::Mutex::new(Vec::new());
    let lease = match (s.root, &s.users) {
        (true, Some(_)) => {
            let mut last = LAST_ID.lock().unwrap_or_else(|p| p.into_inner());
            let prefer = last.iter().find(|(f, _)| *f == own).map(|(_, id)| *id);
            // In PID and mount namespaces of its own nothing of the bot
            // outlives it, and it writes only in its tmpfs.
            let lease = users::lease(prefer, !(s.namespaces && s.mounts))?;
            last.retain(|(f, id)| *f != own && *id != lease.uid());
            last.push((own.clone(), lease.uid()));
            if last.len() > 4096 {
                last.remove(0);
            }
            Some(lease)
        }
        _ => None,
    };
    let user = lease.as_ref().map(users::Lease::uid);
    let cwd = match &spec.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir()?,
    };
    // With a user of its own and no private view, the bot runs from a
    // private copy of its own folders, which only its group may read (the
    // originals are closed to it: see `close_to_bots`). A private view
    // binds the originals, which hold nothing of another bot's.
    let copies = match (user, s.mounts) {
        (Some(id), false) => {
            let base = tmp.parent().unwrap_or(tmp);
            Some(copy::for_user(&own, base, id)?)
        }
        _ => None,
    };
    if let Some(id) = user {
        // Where the bot writes when no tmpfs is made for it.
        nix::unistd::chown(
            tmp,
            Some(nix::unistd::Uid::from_raw(id)),
            Some(nix::unistd::Gid::from_raw(id)),
        )?;
    }
    // Without a private view, the copy is found where it is: the command's
    // paths into the bot's folders and its folder move there.
    let mut command = spec.command.clone();
    let mut exec_cwd = match (&spec.cwd, s.mounts) {
        (Some(d), _) => Some(d.clone()),
        (None, true) => Some(cwd.clone()),
        (None, false) => None,
    };
    if let (Some(cp), false) = (&copies, s.mounts) {
        command = view::translate_command(&command, &cwd, cp);
        let real = cwd.canonicalize().unwrap_or_else(|_| cwd.clone());
        exec_cwd = cp
            .translate(&real)
            .or_else(|| cp.maps().first().map(|(_, c)| c.clone()));
    }
    let (program, _) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
    let look_from = exec_cwd.clone().unwrap_or_else(|| cwd.clone());
    let path = view::program_path(program, &look_from, &view::bot_path_var(spec))
        .ok_or_else(|| io::Error::from_raw_os_error(nix::libc::ENOENT))?;
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
    let exec = child::Exec::new(&path, &command, &whole, exec_cwd.as_deref())?;
    let processes = spec
        .limits
        .processes
        .filter(|&p| p > 0)
        .unwrap_or(DEFAULT_SANDBOX_PROCESSES);
    let tmp_mb = spec.limits.tmp_mb.unwrap_or(DEFAULT_TMP_MB);
    // The kernel's rules read the bot's own folders in their copies.
    let readable_dirs = readable(spec, &spec.sandbox_read);
    let read: Vec<PathBuf> = readable_dirs
        .iter()
        .cloned()
        .map(|d| copies.as_ref().and_then(|cp| cp.translate(&d)).unwrap_or(d))
        .collect();
    let landlock = if s.landlock_abi > 0 {
        rules::ruleset(&read, tmp).map_err(|e| io::Error::other(format!("sandbox: {e}")))?
    } else {
        None
    };
    let mounts = if s.mounts {
        Some(view::mounts(
            spec,
            &readable_dirs,
            tmp,
            tmp_mb,
            copies.as_deref(),
        )?)
    } else {
        None
    };
    let memory_mb = match spec.limits.memory_mb {
        Some(0) => 0,
        Some(m) => m,
        None => super::manifest::DEFAULT_MEMORY_MB,
    };
    let mut cgroups = Vec::new();
    if let (Some(base), true) = (&s.pids_cgroup, s.root) {
        cgroups.push(cgroup::Cgroup::new(base, false, processes)?);
    }
    let memory_cgroup = match (&s.memory_cgroup, s.root, memory_mb) {
        (Some(base), true, m) if m > 0 => {
            cgroups.push(cgroup::Cgroup::new(base, true, m << 20)?);
            true
        }
        _ => false,
    };
    let cgroup_procs = cgroups
        .iter()
        .map(|g| view::c_path(&g.procs()))
        .collect::<io::Result<Vec<CString>>>()?;
    let uid = nix::unistd::geteuid().as_raw();
    let gid = nix::unistd::getegid().as_raw();
    let cstr = |s: &str| CString::new(s).map_err(io::Error::other);
    let userns = !s.root && s.namespaces;
    let prepared = child::Prepared {
        landlock,
        tmp_access: rules::landlock_fs_access(s.landlock_abi),
        setgroups: cstr("/proc/self/setgroups")?,
        uid_map_path: cstr("/proc/self/uid_map")?,
        uid_map: format!("{uid} {uid} 1").into_bytes(),
        gid_map_path: cstr("/proc/self/gid_map")?,
        gid_map: format!("{gid} {gid} 1").into_bytes(),
        cgroup_procs,
        filter: if s.seccomp {
            rules::seccomp_filter()
        } else {
            None
        },
        nproc: match (userns, user, s.namespaces) {
            (true, _, _) | (false, Some(_), _) => Some(processes),
            // Without a namespace or an id of its own the limit counts every
            // process of the user, as outside the sandbox.
            (false, None, false) if !s.root => spec.limits.processes.filter(|&p| p > 0),
            _ => None,
        },
        limits,
        fsize: (mounts.is_none() && tmp_mb > 0).then_some(tmp_mb << 20),
        exec,
        mounts,
        user,
        namespaces: s.namespaces,
        userns,
    };
    let confinement = Confinement {
        watch: None,
        members: None,
        cgroups,
        _copies: copies,
        lease,
        verdict: Arc::new(OnceLock::new()),
        watch_memory: if memory_cgroup { 0 } else { memory_mb << 20 },
        watch_tmp: (!s.mounts && tmp_mb > 0).then(|| (tmp.to_path_buf(), tmp_mb << 20)),
        memory_mb,
        own_pid_namespace: s.namespaces,
        freezable: None,
    };
    Ok((prepared, confinement))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(root: bool, namespaces: bool, landlock: u8, users: bool) -> Support {
        Support {
            landlock_abi: landlock,
            namespaces,
            seccomp: true,
            root,
            pids_cgroup: None,
            memory_cgroup: None,
            mounts: namespaces,
            users: users.then_some(users::DEFAULT_UIDS),
        }
    }

    #[test]
    fn modes_read_from_text() {
        assert_eq!("best-effort".parse(), Ok(SandboxMode::BestEffort));
        assert_eq!("on".parse(), Ok(SandboxMode::On));
        assert_eq!("off".parse(), Ok(SandboxMode::Off));
        assert!("maybe".parse::<SandboxMode>().is_err());
    }

    #[test]
    fn every_platform_of_the_docs_gets_its_guarantees_from_some_layer() {
        // Bare Linux as root and as a user, a Docker container run by root
        // (no namespaces, no cgroups) with and without Landlock.
        for (what, s) in [
            ("bare root", machine(true, true, 6, true)),
            ("bare user", machine(false, true, 6, false)),
            ("docker root", machine(true, false, 6, true)),
            ("docker root, no Landlock", machine(true, false, 0, true)),
        ] {
            assert!(missing(&s).is_empty(), "{what}: {:?}", missing(&s));
        }
    }

    #[test]
    fn a_machine_that_cannot_give_a_guarantee_names_it() {
        // An HPC node without user namespaces, run as a user, no Landlock.
        let hpc = machine(false, false, 0, false);
        let m = missing(&hpc);
        for g in [
            Guarantee::Reads,
            Guarantee::Names,
            Guarantee::Signals,
            Guarantee::Lifetime,
        ] {
            assert!(m.iter().any(|l| l.starts_with(g.name())), "{g:?}: {m:?}");
        }
        assert!(!m.iter().any(|l| l.starts_with(Guarantee::Memory.name())));
        // Root that cannot become its ids, without namespaces: as root.
        let stuck = machine(true, false, 6, false);
        assert!(missing(&stuck)
            .iter()
            .any(|l| l.starts_with(Guarantee::Privilege.name())));
        let mut none = machine(true, false, 0, false);
        none.seccomp = false;
        assert!(missing(&none).len() >= 8, "{:?}", missing(&none));
    }
}
