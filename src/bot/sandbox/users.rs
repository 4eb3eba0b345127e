//! Per-bot users: the confinement that needs no namespace.
//!
//! When referee runs as root, each running bot gets a user id of its own
//! from a range the TA can set ([`UidRange`], `--sandbox-uids`,
//! `REFEREE_SANDBOX_UIDS`), with the group id of the same number and no
//! other group. A bot then cannot read what is closed to others (its
//! classmates' private copies, the grader's root-only files), cannot
//! signal or trace another bot or referee, and everything it started can be
//! found and killed by its user id, whatever process group or session it
//! moved to: a short-lived child that becomes that user sends the signal to
//! every process it may signal (`kill(-1, ...)`), which is exactly the
//! bot's. The same is how a bot is frozen while its opponent is on move.
//!
//! An id is leased under a lock file (`flock`) in a root-only folder, so
//! that several referees on one machine (two `grade-all`s, Slurm tasks on
//! one node) never share one; before an id is used and after it is given
//! back, every process of that id is killed and every file it left in the
//! machine's shared writable folders and its System V IPC objects are
//! removed, so nothing of one bot reaches the next bot of that id. A
//! referee killed by SIGKILL cannot give its ids back: its janitor (a
//! small process of its own, [`set_janitor`]) does, the moment referee's
//! end closes the janitor's input.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{self, BufRead, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use nix::errno::Errno;
use nix::libc;
use nix::sys::signal::Signal;

/// A range of user ids for per-bot users, both ends included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UidRange {
    /// The first id.
    pub first: u32,
    /// The last id.
    pub last: u32,
}

/// The ids used when nobody says otherwise: above the ids Debian, Ubuntu,
/// RHEL and SUSE give to people (up to 59999 or 60000), below 65534
/// (`nobody`), and inside the 65,536 ids a user namespace of a rootless
/// container usually maps. Ids that the machine's user database knows
/// (`getpwuid`, `getgrgid`) are skipped.
pub const DEFAULT_UIDS: UidRange = UidRange {
    first: 62000,
    last: 62999,
};

/// The environment variable that sets the range (as `FIRST-LAST`) where a
/// command line cannot (the Gradescope script, a Slurm job).
pub const UIDS_VAR: &str = "REFEREE_SANDBOX_UIDS";

impl UidRange {
    /// How many ids the range holds.
    pub fn len(&self) -> u32 {
        self.last - self.first + 1
    }

    /// Never true: a range holds at least one id.
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl std::fmt::Display for UidRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

impl FromStr for UidRange {
    type Err = String;

    /// `FIRST-LAST`, at least two ids, none of them root's (0) or the
    /// overflow id 65534, and none above 4294967294.
    fn from_str(s: &str) -> Result<UidRange, String> {
        let (a, b) = s
            .split_once('-')
            .ok_or_else(|| format!("'{s}' is not a range of user ids FIRST-LAST"))?;
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| format!("'{t}' in '{s}' is not a user id"))
        };
        let (first, last) = (num(a)?, num(b)?);
        if first == 0 || last == u32::MAX {
            return Err(format!(
                "'{s}': the range may not hold root's id 0 nor 4294967295"
            ));
        }
        if last <= first {
            return Err(format!(
                "'{s}': the last id must be above the first (two ids at least: one per running bot)"
            ));
        }
        if (first..=last).contains(&65534) {
            return Err(format!(
                "'{s}': the range may not hold 65534 (nobody, which other programs use)"
            ));
        }
        Ok(UidRange { first, last })
    }
}

/// The range set by [`set_range`], else by [`UIDS_VAR`], else
/// [`DEFAULT_UIDS`].
static RANGE: OnceLock<UidRange> = OnceLock::new();

/// Sets the range of per-bot user ids for this run (before the first bot
/// starts): `given` (a command-line flag), else [`UIDS_VAR`], else the
/// default. An unreadable variable is an error naming it.
pub fn configure(given: Option<UidRange>) -> Result<UidRange, String> {
    let range = match given {
        Some(r) => r,
        None => match std::env::var(UIDS_VAR) {
            Ok(v) => v
                .parse::<UidRange>()
                .map_err(|e| format!("{UIDS_VAR}: {e}"))?,
            Err(_) => DEFAULT_UIDS,
        },
    };
    let set = *RANGE.get_or_init(|| range);
    if set != range {
        return Err(format!(
            "the sandbox's user ids are already {set}; they cannot change to {range} in one run"
        ));
    }
    Ok(set)
}

/// The range of per-bot user ids of this run.
pub fn range() -> UidRange {
    *RANGE.get_or_init(|| {
        std::env::var(UIDS_VAR)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(DEFAULT_UIDS)
    })
}

/// Becomes user and group `id`, with no supplementary group, by raw system
/// calls: they change only the calling process, where glibc's wrappers
/// would ask every thread of referee to change (a child made with
/// `CLONE_VM` shares referee's list of threads). Only system calls: safe
/// in a child that shares referee's memory.
pub(crate) fn become_user(id: u32) -> Result<(), Errno> {
    // SAFETY: plain system calls with integer arguments and a null list.
    unsafe {
        if libc::syscall(
            libc::SYS_setgroups,
            0 as libc::c_long,
            std::ptr::null::<u32>(),
        ) != 0
            || libc::syscall(libc::SYS_setresgid, id, id, id) != 0
            || libc::syscall(libc::SYS_setresuid, id, id, id) != 0
        {
            return Err(Errno::last());
        }
    }
    Ok(())
}

/// Sends `sig` to every process of user `uid` (but the sender), from a
/// short-lived child that becomes `uid`: `kill(-1, sig)` there reaches
/// exactly the processes that user may signal, its own. Returns whether
/// there was any.
pub(crate) fn signal_all(uid: u32, sig: Signal) -> io::Result<bool> {
    use nix::sched::CloneFlags;
    use nix::sys::signal::{pthread_sigmask, SigSet, SigmaskHow};
    // 1: some process got it; 0: none; negative: -errno.
    let outcome = AtomicI64::new(i64::MIN);
    let mut stack = vec![0u8; 64 * 1024];
    let out = &outcome;
    let child = Box::new(move || -> isize {
        // A session of its own first: the kernel lets SIGCONT reach every
        // process of the sender's session, whoever owns it (referee's, and
        // other bots' were they in it).
        // SAFETY: a plain system call.
        unsafe { libc::setsid() };
        let r = match become_user(uid) {
            Err(e) => -(e as i64),
            // SAFETY: a plain system call.
            Ok(()) => match unsafe { libc::kill(-1, sig as libc::c_int) } {
                0 => 1,
                _ => match Errno::last() {
                    Errno::ESRCH => 0,
                    e => -(e as i64),
                },
            },
        };
        out.store(r, Ordering::SeqCst);
        // SAFETY: the child shares referee's memory: it must end at once.
        unsafe { libc::_exit(0) }
    });
    // No handler of referee's may run in the child, which shares its memory.
    let mut old = SigSet::empty();
    pthread_sigmask(
        SigmaskHow::SIG_SETMASK,
        Some(&SigSet::all()),
        Some(&mut old),
    )?;
    // SAFETY: the child only makes system calls on memory that outlives
    // it and exits; with CLONE_VFORK this thread waits until it has.
    let res = unsafe {
        nix::sched::clone(
            child,
            &mut stack,
            CloneFlags::CLONE_VM | CloneFlags::CLONE_VFORK,
            Some(Signal::SIGCHLD as i32),
        )
    };
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    let pid = res?;
    while let Err(Errno::EINTR) = nix::sys::wait::waitpid(pid, None) {}
    match outcome.load(Ordering::SeqCst) {
        1 => Ok(true),
        0 => Ok(false),
        i64::MIN => Err(io::Error::other("the signalling child did not run")),
        e => Err(io::Error::from_raw_os_error((-e) as i32)),
    }
}

/// Whether user `uid` has a process that is not a zombie (read from
/// `/proc`: its real user id and state).
fn has_live_process(uid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        if !name
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        {
            return false;
        }
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            return false;
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(str::trim)
                .unwrap_or("")
        };
        let real = field("Uid:").split_whitespace().next();
        real == Some(&uid.to_string()) && !field("State:").starts_with('Z')
    })
}

/// Kills every process of user `uid` and makes sure none is left (but
/// zombies, which their parent reaps).
pub(crate) fn kill_all(uid: u32) -> io::Result<()> {
    for round in 0..400u32 {
        if !signal_all(uid, Signal::SIGKILL)? {
            return Ok(());
        }
        if round >= 2 && !has_live_process(uid) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(if round < 10 { 1 } else { 5 }));
    }
    Err(io::Error::other(format!(
        "processes of the sandbox's user {uid} survive SIGKILL"
    )))
}

/// The folders anyone may write to, where a bot without Landlock or a
/// private view could leave files for the next bot of its id.
const SHARED_WRITABLE: [&str; 6] = [
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/run/lock",
    "/var/lock",
    "/dev/mqueue",
];

/// The disk space the files of user `uid` take at the top of
/// [`SHARED_WRITABLE`] (and below its folders there), in bytes.
pub(crate) fn shared_bytes(uid: u32) -> u64 {
    let mut total = 0u64;
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in SHARED_WRITABLE {
        let Ok(real) = std::fs::canonicalize(dir) else {
            continue;
        };
        if seen.contains(&real) {
            continue;
        }
        seen.push(real.clone());
        let Ok(entries) = std::fs::read_dir(&real) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.path().symlink_metadata() else {
                continue;
            };
            if m.uid() != uid {
                continue;
            }
            let size = if m.file_type().is_dir() {
                super::watch::folder_bytes(&e.path(), 20_000)
            } else {
                m.blocks() * 512
            };
            total = total.saturating_add(size);
        }
    }
    total
}

/// Removes what user `uid` left on the machine: the files and folders it
/// owns at the top of [`SHARED_WRITABLE`] (symbolic links as links), and
/// its System V shared memory, message queues and semaphores.
pub(crate) fn remove_files(uid: u32) {
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in SHARED_WRITABLE {
        let Ok(real) = std::fs::canonicalize(dir) else {
            continue;
        };
        if seen.contains(&real) {
            continue;
        }
        seen.push(real.clone());
        let Ok(entries) = std::fs::read_dir(&real) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.path().symlink_metadata() else {
                continue;
            };
            if m.uid() != uid {
                continue;
            }
            let _ = if m.file_type().is_dir() {
                std::fs::remove_dir_all(e.path())
            } else {
                std::fs::remove_file(e.path())
            };
        }
    }
    // (file, column of the id, columns of the owner and the creator).
    let ipc: [(&str, usize, [usize; 2]); 3] = [
        ("/proc/sysvipc/shm", 1, [7, 9]),
        ("/proc/sysvipc/msg", 1, [7, 9]),
        ("/proc/sysvipc/sem", 1, [4, 6]),
    ];
    for (i, (file, id_col, owners)) in ipc.iter().enumerate() {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let owned = owners
                .iter()
                .any(|&c| cols.get(c).and_then(|v| v.parse::<u32>().ok()) == Some(uid));
            let Some(id) = cols.get(*id_col).and_then(|v| v.parse::<i32>().ok()) else {
                continue;
            };
            if !owned {
                continue;
            }
            // SAFETY: removal by id; a null buffer is allowed for IPC_RMID.
            unsafe {
                match i {
                    0 => libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()),
                    1 => libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()),
                    _ => libc::semctl(id, 0, libc::IPC_RMID),
                };
            }
        }
    }
}

/// Whether the machine's user database names `id` as a user or a group:
/// such an id belongs to someone and is never a bot's.
fn registered(id: u32) -> bool {
    static KNOWN: Mutex<Option<HashMap<u32, bool>>> = Mutex::new(None);
    let mut known = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
    *known
        .get_or_insert_with(HashMap::new)
        .entry(id)
        .or_insert_with(|| {
            use nix::unistd::{Gid, Group, Uid, User};
            !matches!(User::from_uid(Uid::from_raw(id)), Ok(None))
                || !matches!(Group::from_gid(Gid::from_raw(id)), Ok(None))
        })
}

/// The root-only folder of the lease locks: `/run/referee-sandbox`, or
/// `referee-sandbox-0` in the temporary folder where `/run` is missing.
fn lock_dir() -> io::Result<PathBuf> {
    let candidates = [
        PathBuf::from("/run/referee-sandbox"),
        std::env::temp_dir().join("referee-sandbox-0"),
    ];
    let mut last = io::Error::other("no folder for the sandbox's locks");
    for dir in candidates {
        if dir.parent().is_none_or(|p| !p.is_dir()) {
            continue;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                last = e;
                continue;
            }
        }
        if super::probe::root_only_dir(&dir) {
            return Ok(dir);
        }
        last = io::Error::other(format!(
            "{} is not a folder of root's that only root may change: the sandbox will not keep \
             its locks there",
            dir.display()
        ));
    }
    Err(last)
}

use std::os::unix::fs::DirBuilderExt;

/// One user id, leased to one running bot: locked against every other
/// referee of the machine. Giving it back (dropping it) kills whatever of
/// that user is left and removes its files.
#[derive(Debug)]
pub(crate) struct Lease {
    uid: u32,
    _lock: std::fs::File,
}

impl Lease {
    /// The leased id (the bot's user and group).
    pub(crate) fn uid(&self) -> u32 {
        self.uid
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let _ = kill_all(self.uid);
        remove_files(self.uid);
        // The lock goes with the file.
    }
}

/// Leases a free id of [`range`] (`prefer` first, when it is in it): one
/// no other referee holds, no user or group of the machine has, and whose
/// processes and files (of a referee killed before it could give it back)
/// are removed first.
pub(crate) fn lease(prefer: Option<u32>) -> io::Result<Lease> {
    static CURSOR: AtomicU32 = AtomicU32::new(u32::MAX);
    let r = range();
    let n = r.len();
    let start = match CURSOR.load(Ordering::Relaxed) {
        // Referees started together begin apart.
        u32::MAX => std::process::id().wrapping_mul(7919) % n,
        c => c,
    };
    let dir = lock_dir()?;
    let preferred = prefer
        .filter(|u| (r.first..=r.last).contains(u))
        .map(|u| u - r.first);
    for i in 0..=n {
        let offset = match (i, preferred) {
            (0, Some(p)) => p,
            (0, None) => continue,
            _ => (start + i - 1) % n,
        };
        let uid = r.first + offset;
        if registered(uid) {
            continue;
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(dir.join(format!("uid-{uid}")))?;
        // SAFETY: a plain system call on a descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            continue;
        }
        if i > 0 {
            CURSOR.store((offset + 1) % n, Ordering::Relaxed);
        }
        kill_all(uid)?;
        remove_files(uid);
        janitor_watch(uid);
        return Ok(Lease { uid, _lock: file });
    }
    Err(io::Error::new(
        io::ErrorKind::ResourceBusy,
        format!(
            "every id of the sandbox's user range {r} is in use or belongs to someone: give a \
             larger range ({UIDS_VAR} or --sandbox-uids)"
        ),
    ))
}

/// The program and arguments that run the janitor ([`janitor`] on its
/// stdin), set by the binary.
static JANITOR_PROGRAM: OnceLock<(PathBuf, Vec<OsString>)> = OnceLock::new();

/// The running janitor's input, once started.
static JANITOR: Mutex<Option<(std::process::Child, std::process::ChildStdin)>> = Mutex::new(None);

/// Names the program that runs [`janitor`] (the binary itself with a
/// hidden argument). Without one, ids a killed referee held are cleaned
/// when a later referee leases them.
pub fn set_janitor(program: PathBuf, args: Vec<OsString>) {
    let _ = JANITOR_PROGRAM.set((program, args));
}

/// Tells the janitor (started the first time) that `uid` is leased.
fn janitor_watch(uid: u32) {
    let Some((program, args)) = JANITOR_PROGRAM.get() else {
        return;
    };
    let mut janitor = JANITOR.lock().unwrap_or_else(|p| p.into_inner());
    if janitor.is_none() {
        use std::os::unix::process::CommandExt;
        let child = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // Out of referee's group: a kill of the group leaves it to clean.
            .process_group(0)
            .spawn();
        if let Ok(mut c) = child {
            if let Some(input) = c.stdin.take() {
                *janitor = Some((c, input));
            }
        }
    }
    if let Some((_, input)) = janitor.as_mut() {
        let _ = writeln!(input, "{uid}");
    }
}

/// The janitor's work: reads the ids referee leases, one a line, until
/// referee's end closes `input` (however it ended), then kills the
/// processes and removes the files of each id no referee holds any more.
pub fn janitor(input: impl BufRead) -> io::Result<()> {
    let mut ids: Vec<u32> = Vec::new();
    for line in input.lines() {
        let Ok(line) = line else { break };
        if let Ok(uid) = line.trim().parse::<u32>() {
            if !ids.contains(&uid) {
                ids.push(uid);
            }
        }
    }
    let dir = lock_dir()?;
    for uid in ids {
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(dir.join(format!("uid-{uid}")))
        else {
            continue;
        };
        // The dying referee's descriptors close one by one: its lock may
        // still be held a moment after this input ended. One held for
        // seconds is another referee's, which cleans it.
        let mut locked = false;
        for _ in 0..300 {
            // SAFETY: a plain system call on a descriptor we own.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                locked = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if locked {
            let _ = kill_all(uid);
            remove_files(uid);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_read_and_checked() {
        assert_eq!(
            "62000-62999".parse::<UidRange>(),
            Ok(UidRange {
                first: 62000,
                last: 62999
            })
        );
        for bad in [
            "",
            "62000",
            "a-b",
            "0-10",
            "10-10",
            "20-10",
            "65000-66000",
            "1-4294967295",
        ] {
            assert!(bad.parse::<UidRange>().is_err(), "{bad}");
        }
        assert_eq!(DEFAULT_UIDS.len(), 1000);
        assert_eq!(DEFAULT_UIDS.to_string(), "62000-62999");
    }
}
