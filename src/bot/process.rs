//! The one process supervisor: every program referee starts (protocol bots,
//! console programs, grading's pipelined bots) runs as a [`BotProcess`]:
//! in its own process group, with a clean environment and a private
//! temporary directory, under resource limits, its stdout read with
//! deadlines and its stderr drained as it comes, and killed (with the whole
//! group) the moment it forfeits.
//!
//! Nothing here blocks without a deadline on anything the bot controls, and
//! nothing here needs a thread: stdout and stderr are read in the same
//! `poll`, so a bot that escapes its group and keeps stderr open costs no
//! thread, and a noisy bot never blocks while referee waits on it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::os::unix::fs::DirBuilderExt;
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::resource::Resource;
#[cfg(not(target_os = "linux"))]
use nix::sys::resource::{getrlimit, setrlimit};
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

use super::groups;
use super::manifest::{ExternalSpec, ResourceLimits, DEFAULT_CPU_SECONDS, DEFAULT_MEMORY_MB};
use crate::protocol::MAX_REPLY;

/// How much of a bot's stderr is kept at each end of the log.
pub(crate) const LOG_KEEP: usize = 64 * 1024;

/// The environment variable that carries the seed of the first game a
/// process plays (docs/protocol.md).
pub const SEED_VAR: &str = "REFEREE_SEED";

/// The variables a bot keeps from referee's own environment when it does
/// not inherit the whole of it (docs/protocol.md): enough for interpreters
/// to be found and to start.
pub(crate) const KEPT_VARS: [&str; 3] = ["PATH", "HOME", "LANG"];

/// Where no pidfd can be had: how often a wait for a reply checks whether
/// the process itself has exited.
const DEATH_CHECK: Duration = Duration::from_millis(50);

/// What, in a line of a bot's stderr, says the operating system refused
/// it something: Python's `PermissionError`, C's `strerror` texts for
/// `EACCES`, `EPERM`, `EROFS`, `ENOSPC` and `EDQUOT`, and their names.
/// The sandbox refuses with exactly these errors (docs/sandbox.md).
const DENIAL_MARKS: [&str; 8] = [
    "Permission denied",
    "PermissionError",
    "Operation not permitted",
    "Read-only file system",
    "No space left on device",
    "Disk quota exceeded",
    "EACCES",
    "EPERM",
];

/// Most examples kept of a bot's denied attempts.
const DENIAL_EXAMPLES: usize = 5;

/// A bot's denied attempts, as its stderr told them: how many lines said
/// one, and the first few of those lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Denials {
    /// Lines of stderr that told of a refusal.
    pub count: u64,
    /// The first few of those lines (trimmed, at most 200 characters).
    pub examples: Vec<String>,
}

/// Denied attempts by bot (its folder and command), over every process
/// of the bot this run started; read by grading with [`take_denials`].
static DENIED: Mutex<Vec<(String, Denials)>> = Mutex::new(Vec::new());

/// The key of a bot in [`DENIED`]: its folder and its command, which
/// tell two students' bots apart whatever their manifests call them.
fn denial_key(spec: &ExternalSpec) -> String {
    format!("{:?}\0{}", spec.cwd, spec.command.join("\0"))
}

/// The denied attempts counted for `spec`'s bot since the last call (and
/// forgets them).
pub fn take_denials(spec: &ExternalSpec) -> Denials {
    let key = denial_key(spec);
    let mut all = DENIED.lock().unwrap_or_else(|p| p.into_inner());
    match all.iter().position(|(k, _)| *k == key) {
        Some(i) => all.swap_remove(i).1,
        None => Denials::default(),
    }
}

/// Counts `line` against the bot `key` if it tells of a refusal.
fn note_denial(key: &str, line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    if !DENIAL_MARKS.iter().any(|m| text.contains(m)) {
        return;
    }
    let mut all = DENIED.lock().unwrap_or_else(|p| p.into_inner());
    let i = match all.iter().position(|(k, _)| k == key) {
        Some(i) => i,
        None => {
            all.push((key.to_string(), Denials::default()));
            all.len() - 1
        }
    };
    let d = &mut all[i].1;
    d.count += 1;
    if d.examples.len() < DENIAL_EXAMPLES {
        d.examples.push(text.trim().chars().take(200).collect());
    }
}

/// The longest stderr line looked at for a denial; a longer one is cut.
const DENIAL_LINE_MAX: usize = 4096;

/// A bot's stderr, bounded: the first and the last [`LOG_KEEP`] bytes.
#[derive(Debug, Default)]
pub(crate) struct StderrLog {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    /// The bot's key in [`DENIED`] (empty: not counted).
    denial_key: String,
    /// The line being written, for the denial count (bounded).
    line: Vec<u8>,
}

impl StderrLog {
    /// Counts the lines of `data` that tell of a refusal.
    fn scan(&mut self, data: &[u8]) {
        if self.denial_key.is_empty() {
            return;
        }
        for &b in data {
            if b == b'\n' {
                note_denial(&self.denial_key, &self.line);
                self.line.clear();
            } else if self.line.len() < DENIAL_LINE_MAX {
                self.line.push(b);
            }
        }
    }

    fn push(&mut self, mut data: &[u8]) {
        self.scan(data);
        self.total += data.len() as u64;
        let room = LOG_KEEP - self.head.len();
        if room > 0 {
            let n = room.min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        if data.len() >= LOG_KEEP {
            self.tail.clear();
            data = &data[data.len() - LOG_KEEP..];
        }
        self.tail.extend(data.iter().copied());
        let excess = self.tail.len().saturating_sub(LOG_KEEP);
        self.tail.drain(..excess);
    }

    /// Bytes the bot wrote to stderr in total.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.total
    }

    /// At most the last `max` bytes the bot wrote (lossy UTF-8).
    pub(crate) fn tail(&self, max: usize) -> String {
        let mut bytes: Vec<u8> = self.tail.iter().copied().collect();
        if bytes.len() < max {
            // Only when everything written fits in head and tail, which are
            // then contiguous.
            let need = max - bytes.len();
            let from = self.head.len().saturating_sub(need);
            let mut h = self.head[from..].to_vec();
            h.extend_from_slice(&bytes);
            bytes = h;
        }
        let start = bytes.len().saturating_sub(max);
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    }
}

/// What came back from the bot when a reply was awaited.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// A complete line (without its newline), and when its newline arrived.
    Line(Vec<u8>, Instant),
    /// More than [`MAX_REPLY`] bytes without a newline; the first bytes.
    TooLong(Vec<u8>),
    /// The bot closed its stdout (usually: it exited); what it wrote of a line.
    Closed(Vec<u8>),
    /// The deadline passed; what the bot wrote of a line so far.
    Timeout(Vec<u8>),
}

impl Reply {
    /// The same thing in the protocol's terms, timed from `sent`.
    pub(crate) fn heard(self, sent: Instant) -> crate::protocol::Heard {
        use crate::protocol::Heard;
        match self {
            Reply::Line(l, at) => Heard::Line(l, at.saturating_duration_since(sent)),
            Reply::TooLong(b) => Heard::TooLong(b),
            Reply::Closed(b) => Heard::Closed(b),
            Reply::Timeout(b) => Heard::Deadline(b),
        }
    }
}

/// A running bot process. Dropping it kills the whole process group and
/// reaps the process, whatever state it is in.
#[derive(Debug)]
pub(crate) struct BotProcess {
    pid: Pid,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    stdout_open: bool,
    stderr: Option<ChildStderr>,
    buf: Vec<u8>,
    log: StderrLog,
    status: Option<WaitStatus>,
    killed: bool,
    started: Instant,
    end_deadline: Option<Instant>,
    /// Replies the process has given, over all its games.
    answered: u64,
    /// Stderr bytes written before the current game began.
    log_mark: u64,
    /// What confines a sandboxed bot (its user, copy, cgroups, watch),
    /// released once the process is reaped.
    #[cfg(target_os = "linux")]
    confinement: Option<super::sandbox::Confinement>,
    /// A pidfd of the process itself: readable once it has exited, so that
    /// waiting for a reply ends when the bot dies even though a child it
    /// started still holds its stdout open (a dead bot is not a slow one).
    /// `None` where pidfds are missing: then the wait checks the process
    /// every [`DEATH_CHECK`].
    #[cfg(target_os = "linux")]
    pidfd: Option<std::os::fd::OwnedFd>,
    /// The private temporary directory; removed when the process is dropped.
    _tmp: Option<tempfile::TempDir>,
}

/// The limits actually applied: the spec's, or the defaults; 0 means none.
pub(crate) fn effective_limits(l: &ResourceLimits) -> [(Resource, u64); 3] {
    [
        (
            Resource::RLIMIT_AS,
            l.memory_mb.unwrap_or(DEFAULT_MEMORY_MB) * 1024 * 1024,
        ),
        (
            Resource::RLIMIT_CPU,
            l.cpu_seconds.unwrap_or(DEFAULT_CPU_SECONDS),
        ),
        (Resource::RLIMIT_NPROC, l.processes.unwrap_or(0)),
    ]
}

/// Sets `limits` (0 means none) on the running process `pid`, each no
/// higher than the hard limit this process has (raising it would fail for
/// an unprivileged referee).
#[cfg(target_os = "linux")]
fn apply_limits(pid: Pid, limits: &[(Resource, u64)]) -> io::Result<()> {
    use rustix::process::{getrlimit, prlimit, Pid as RPid, Resource as R, Rlimit};
    let target = RPid::from_raw(pid.as_raw())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "bad process id"))?;
    for &(res, value) in limits {
        if value == 0 {
            continue;
        }
        let r = match res {
            Resource::RLIMIT_AS => R::As,
            Resource::RLIMIT_CPU => R::Cpu,
            Resource::RLIMIT_NPROC => R::Nproc,
            _ => continue,
        };
        let v = getrlimit(r).maximum.map_or(value, |hard| value.min(hard));
        prlimit(
            Some(target),
            r,
            Rlimit {
                current: Some(v),
                maximum: Some(v),
            },
        )
        .map_err(io::Error::from)?;
    }
    Ok(())
}

/// The environment a bot starts with: the [`KEPT_VARS`] of referee's own
/// (or all of it with `inherit_env`), its private `TMPDIR`, its seed, then
/// the spec's own variables, which win.
fn bot_env(spec: &ExternalSpec, tmp: &std::path::Path, seed: u64) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    if !spec.inherit_env {
        for key in KEPT_VARS {
            if let Some(v) = std::env::var_os(key) {
                env.push((key.into(), v));
            }
        }
        if std::env::var_os("LANG").is_none() {
            env.push(("LANG".into(), "C.UTF-8".into()));
        }
    }
    for key in ["TMPDIR", "TMP", "TEMP"] {
        env.push((key.into(), tmp.into()));
    }
    env.push((SEED_VAR.into(), seed.to_string().into()));
    for (k, v) in &spec.env {
        env.push((k.into(), v.into()));
    }
    env
}

/// Marks every descriptor above stderr close-on-exec, so that no
/// unsandboxed bot inherits one (the sandbox does the same in its child).
/// Every descriptor referee opens itself is close-on-exec already; this
/// catches those it was started with.
fn close_inherited_fds() {
    #[cfg(target_os = "linux")]
    {
        use nix::libc;
        // SAFETY: a plain system call on this process's descriptor table.
        let r = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                3 as libc::c_uint,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            )
        };
        if r == 0 {
            return;
        }
    }
    // Kernels before 5.11: one by one, from the list of open descriptors.
    let list = ["/proc/self/fd", "/dev/fd"]
        .iter()
        .find_map(|d| std::fs::read_dir(d).ok());
    for fd in list.into_iter().flatten().flatten() {
        if let Some(n) = fd.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) {
            if n > 2 {
                let _ = fcntl(n, FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC));
            }
        }
    }
}

/// The prefix of a run's folder of bots' temporary folders: `referee.PID`
/// in the system's temporary folder.
const RUN_TMP_PREFIX: &str = "referee.";

/// This run's folder of bots' temporary folders (`$TMPDIR/referee.PID`),
/// made at the first bot; the first time, the folders of runs whose
/// referee is gone (killed by SIGKILL, which cleans up nothing) are
/// removed, as stale cgroups are.
fn run_tmp_root() -> std::path::PathBuf {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    let base = std::env::temp_dir();
    SWEPT.call_once(|| sweep_stale_tmp(&base));
    base.join(format!("{RUN_TMP_PREFIX}{}", std::process::id()))
}

/// Removes the `referee.PID` folders in `base` whose process is gone.
fn sweep_stale_tmp(base: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(RUN_TMP_PREFIX))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        // EPERM: another user's referee, alive; only ESRCH means gone.
        let gone = pid > 0 && nix::sys::signal::kill(Pid::from_raw(pid), None) == Err(Errno::ESRCH);
        let is_dir = entry
            .file_type()
            .is_ok_and(|t| t.is_dir() && !t.is_symlink());
        if gone && is_dir {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A bot's private temporary folder, in this run's folder (see
/// [`run_tmp_root`]: only its owner lists it; a sandboxed bot dropped to
/// another user may still pass through it to its own folder).
fn bot_tmpdir() -> io::Result<tempfile::TempDir> {
    let root = run_tmp_root();
    for _ in 0..3 {
        // The run's folder goes when its last bot does (see `Drop`);
        // another thread may remove it between these two calls.
        match std::fs::DirBuilder::new().mode(0o711).create(&root) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        match tempfile::Builder::new()
            .prefix("referee-bot-")
            .tempdir_in(&root)
        {
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            other => return other,
        }
    }
    tempfile::Builder::new()
        .prefix("referee-bot-")
        .tempdir_in(&root)
}

fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    let flags = fcntl(fd.as_raw_fd(), FcntlArg::F_GETFL).map_err(io::Error::from)?;
    let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
    fcntl(fd.as_raw_fd(), FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
    Ok(())
}

impl BotProcess {
    /// Starts the bot's command in a new process group with piped stdio,
    /// its environment (with `seed` in [`SEED_VAR`]) and its resource
    /// limits. The process inherits the calling thread's CPU affinity.
    pub(crate) fn spawn(spec: &ExternalSpec, seed: u64) -> io::Result<BotProcess> {
        let (program, args) = spec
            .command
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
        if groups::stopping() {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "referee is being interrupted",
            ));
        }
        let tmp = bot_tmpdir()?;
        let env = bot_env(spec, tmp.path(), seed);
        // Only stdin, stdout and stderr cross into a bot: a descriptor
        // referee inherited without close-on-exec (`exec 7<secret` before
        // it) is marked so here; std's own pipes are marked already.
        close_inherited_fds();
        let limits = effective_limits(&spec.limits);
        // A sandboxed bot starts through the sandbox's own clone, which sets
        // its limits too (docs/sandbox.md).
        #[cfg(target_os = "linux")]
        if spec.sandbox.is_on() {
            super::sandbox::check(spec.sandbox).map_err(io::Error::other)?;
            let (prepared, mut confinement) =
                super::sandbox::prepare(spec, tmp.path(), [limits[0], limits[1]], &env)?;
            let started = Instant::now();
            let mut groups = groups::live();
            let s = super::sandbox::child::spawn(&prepared)?;
            groups.push(s.pid.as_raw());
            drop(groups);
            drop(prepared);
            confinement.started(s.pid);
            let mut me = BotProcess::new(
                s.pid,
                ChildStdin::from(s.stdin),
                ChildStdout::from(s.stdout),
                ChildStderr::from(s.stderr),
                started,
                tmp,
            );
            me.confinement = Some(confinement);
            me.log.denial_key = denial_key(spec);
            me.make_nonblocking()?;
            return Ok(me);
        }
        let mut cmd = Command::new(program);
        if !spec.inherit_env {
            cmd.env_clear();
        }
        cmd.args(args)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        // Elsewhere than Linux the limits are set between fork and exec,
        // which keeps std from using the cheaper posix_spawn.
        #[cfg(not(target_os = "linux"))]
        if limits.iter().any(|&(_, v)| v > 0) {
            // SAFETY: the closure runs between fork and exec and only calls
            // getrlimit and setrlimit, which are async-signal-safe; it
            // allocates nothing.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                    let os_err = |e: Errno| io::Error::from_raw_os_error(e as i32);
                    for (res, value) in limits {
                        if value > 0 {
                            let (_, hard) = getrlimit(res).map_err(os_err)?;
                            let v = value.min(hard);
                            setrlimit(res, v, v).map_err(os_err)?;
                        }
                    }
                    Ok(())
                });
            }
        }
        let started = Instant::now();
        // Registered before the spawn returns anything to kill, under the
        // lock, so that an interruption never misses a group.
        let mut groups = groups::live();
        let mut child = cmd.spawn()?;
        let pid = Pid::from_raw(child.id() as i32);
        groups.push(pid.as_raw());
        drop(groups);
        // From here on the process exists: build the struct first so that
        // Drop cleans up whatever fails next.
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = killpg(pid, Signal::SIGKILL);
            groups::forget(pid);
            let _ = waitpid(pid, None);
            return Err(io::Error::other("child pipes missing"));
        };
        let mut me = BotProcess::new(pid, stdin, stdout, stderr, started, tmp);
        me.log.denial_key = denial_key(spec);
        // On Linux the limits are set on the started process with
        // prlimit(2): std starts it with posix_spawn (no pre-exec hook), which
        // returns once the bot's program is exec'd, so the limits hold from
        // its first microseconds on (what it does before them is bounded by
        // that time, and it is sent nothing before).
        #[cfg(target_os = "linux")]
        apply_limits(pid, &limits)?;
        me.make_nonblocking()?;
        Ok(me)
    }

    fn new(
        pid: Pid,
        stdin: ChildStdin,
        stdout: ChildStdout,
        stderr: ChildStderr,
        started: Instant,
        tmp: tempfile::TempDir,
    ) -> BotProcess {
        BotProcess {
            pid,
            stdin: Some(stdin),
            stdout,
            stdout_open: true,
            stderr: Some(stderr),
            buf: Vec::new(),
            log: StderrLog::default(),
            status: None,
            killed: false,
            started,
            end_deadline: None,
            answered: 0,
            log_mark: 0,
            #[cfg(target_os = "linux")]
            confinement: None,
            #[cfg(target_os = "linux")]
            pidfd: rustix::process::Pid::from_raw(pid.as_raw()).and_then(|p| {
                rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok()
            }),
            _tmp: Some(tmp),
        }
    }

    /// A bot that never reads its stdin must not block the referee's
    /// writes, and reading stderr must never block.
    fn make_nonblocking(&self) -> io::Result<()> {
        if let Some(s) = &self.stdin {
            set_nonblocking(s.as_fd())?;
        }
        if let Some(e) = &self.stderr {
            set_nonblocking(e.as_fd())?;
        }
        Ok(())
    }

    /// The process id (also the process group id).
    #[cfg(test)]
    pub(crate) fn pid(&self) -> i32 {
        self.pid.as_raw()
    }

    /// When the process was started.
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    /// Freezes a sandboxed bot, every process of it, while it is not on
    /// move: it takes no CPU from its opponent (docs/sandbox.md). Nothing
    /// for a bot outside the sandbox.
    pub(crate) fn pause(&mut self) {
        #[cfg(target_os = "linux")]
        if let (None, Some(c)) = (self.status, self.confinement.as_mut()) {
            c.pause();
        }
    }

    /// Lets a frozen bot run again, before anything is sent to it.
    pub(crate) fn resume(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(c) = self.confinement.as_mut() {
            c.resume();
        }
    }

    /// Replies the process has given so far, over all its games.
    pub(crate) fn answered(&self) -> u64 {
        self.answered
    }

    /// Counts one reply (the caller judged the line a reply).
    pub(crate) fn count_answer(&mut self) {
        self.answered += 1;
    }

    /// Bytes written to the bot's stdin that it has not read yet; `None`
    /// where that cannot be known (stdin closed, or not Linux).
    fn unread_input(&self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        {
            let stdin = self.stdin.as_ref()?;
            rustix::io::ioctl_fionread(stdin.as_fd()).ok()
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }

    /// CodinGame's clock for a fresh process's first turn: waits until the
    /// bot has read everything written to it (the turn's input was written
    /// at `written`), until it replies or dies, or until `launch_end` (its
    /// start-up allowance), and returns when its turn's clock starts: the
    /// read, or `launch_end` if it had not read by then, and never before
    /// `written`. The read is seen within about a millisecond; where it
    /// cannot be seen, the clock starts at `written`.
    pub(crate) fn await_first_read(&mut self, written: Instant, launch_end: Instant) -> Instant {
        loop {
            let now = Instant::now();
            match self.unread_input() {
                Some(0) | None => return now.max(written),
                Some(_) => {}
            }
            if self.buf.contains(&b'\n') || !self.stdout_open {
                return now.max(written);
            }
            if now >= launch_end {
                return launch_end.max(written);
            }
            let step = (launch_end - now).min(Duration::from_millis(1));
            if self.wait(false, true, step).is_err() {
                return now.max(written);
            }
        }
    }

    /// Writes `line` (which must end in a newline) to the bot's stdin,
    /// waiting for pipe space no later than `deadline`.
    pub(crate) fn send(&mut self, line: &[u8], deadline: Instant) -> io::Result<()> {
        self.resume();
        let mut rest = line;
        while !rest.is_empty() {
            let stdin = self
                .stdin
                .as_mut()
                .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin closed"))?;
            match stdin.write(rest) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                    // The bot may be stuck writing stderr: drain it meanwhile.
                    self.wait(true, false, deadline - now)?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Waits up to `wait` for stdin to take data (`out`) or stdout to have
    /// some (`input`), reading stderr whenever it has some.
    fn wait(&mut self, out: bool, input: bool, wait: Duration) -> io::Result<()> {
        let timeout = poll_timeout(wait);
        let (stdin_ready, stdout_ready, stderr_ready, died) = {
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(3);
            let mut slots = [usize::MAX; 3];
            if let (true, Some(s)) = (out, &self.stdin) {
                slots[0] = fds.len();
                fds.push(PollFd::new(s.as_fd(), PollFlags::POLLOUT));
            }
            if input && self.stdout_open {
                slots[1] = fds.len();
                fds.push(PollFd::new(self.stdout.as_fd(), PollFlags::POLLIN));
            }
            if let Some(e) = &self.stderr {
                slots[2] = fds.len();
                fds.push(PollFd::new(e.as_fd(), PollFlags::POLLIN));
            }
            // Waiting for a reply also ends when the process itself exits:
            // its stdout may stay open in a child it left behind.
            let watch_exit = input && self.stdout_open && self.status.is_none();
            let mut death_slot = usize::MAX;
            #[cfg(target_os = "linux")]
            if let (true, Some(fd)) = (watch_exit, &self.pidfd) {
                death_slot = fds.len();
                fds.push(PollFd::new(fd.as_fd(), PollFlags::POLLIN));
            }
            let timeout = if watch_exit && death_slot == usize::MAX {
                poll_timeout(wait.min(DEATH_CHECK))
            } else {
                timeout
            };
            match poll(&mut fds, timeout) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(e) => return Err(e.into()),
            }
            let ready = |slot: usize| {
                fds.get(slot)
                    .and_then(|f| f.revents())
                    .is_some_and(|r| !r.is_empty())
            };
            let died = watch_exit
                && if death_slot == usize::MAX {
                    self.has_exited()
                } else {
                    ready(death_slot)
                };
            (ready(slots[0]), ready(slots[1]), ready(slots[2]), died)
        };
        let _ = stdin_ready;
        if stderr_ready {
            self.drain_stderr();
        }
        if stdout_ready {
            self.read_stdout()?;
        }
        if died {
            // What it wrote before it exited is in the pipe: read it
            // without waiting; after that nothing more is its answer.
            self.read_available();
            self.stdout_open = false;
        }
        Ok(())
    }

    /// Reads what stdout holds now, without waiting, up to about
    /// [`MAX_REPLY`] past what is buffered (a flood is judged on its start).
    fn read_available(&mut self) {
        while self.stdout_open && self.buf.len() <= MAX_REPLY {
            let mut fds = [PollFd::new(self.stdout.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::ZERO) {
                Ok(n) if n > 0 => {
                    if self.read_stdout().is_err() {
                        break;
                    }
                }
                Err(Errno::EINTR) => {}
                _ => break,
            }
        }
    }

    /// One read of stdout into the buffer (after poll said it is readable).
    fn read_stdout(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 16 * 1024];
        match self.stdout.read(&mut chunk) {
            Ok(0) => self.stdout_open = false,
            Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// Reads whatever stderr holds now, without waiting.
    fn drain_stderr(&mut self) {
        let mut chunk = [0u8; 16 * 1024];
        while let Some(e) = self.stderr.as_mut() {
            match e.read(&mut chunk) {
                Ok(0) => self.stderr = None,
                Ok(n) => self.log.push(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => self.stderr = None,
            }
        }
    }

    /// Everything the bot wrote to stdout that was not taken as a reply,
    /// including what is in the pipe right now (read without waiting):
    /// output outside a turn, whichever reads it arrived in. Empty when
    /// there is none.
    pub(crate) fn take_stray(&mut self) -> Vec<u8> {
        self.drain_stderr();
        // Bounded: a bot that floods its stdout is judged on the first part.
        self.read_available();
        let mut out = std::mem::take(&mut self.buf);
        out.truncate(MAX_REPLY);
        out
    }

    /// Whether the process is still running with its stdout open: what a
    /// kept process must be to play another game.
    pub(crate) fn is_alive(&self) -> bool {
        self.stdout_open && self.stdin.is_some() && !self.has_exited()
    }

    /// Whether a whole line has already been read and waits in the buffer,
    /// so that [`BotProcess::read_line`] would return it without waiting.
    pub(crate) fn has_line(&self) -> bool {
        self.buf.contains(&b'\n')
    }

    /// Waits for one reply line until `deadline`. Memory stays bounded by
    /// about twice [`MAX_REPLY`] whatever the bot writes.
    pub(crate) fn read_line(&mut self, deadline: Instant) -> io::Result<Reply> {
        let reply = self.read_until(
            |buf| buf.iter().position(|&b| b == b'\n').map(|i| i + 1),
            deadline,
        )?;
        Ok(match reply {
            Reply::Line(mut line, at) => {
                line.pop();
                if line.len() > MAX_REPLY {
                    line.truncate(256);
                    Reply::TooLong(line)
                } else {
                    Reply::Line(line, at)
                }
            }
            other => other,
        })
    }

    /// Waits until `find` locates the end of a message in the output
    /// gathered so far (it returns the message's length) and returns that
    /// message, for programs whose prompts do not end in a newline. Memory
    /// stays bounded as in [`BotProcess::read_line`].
    pub(crate) fn read_until(
        &mut self,
        find: impl Fn(&[u8]) -> Option<usize>,
        deadline: Instant,
    ) -> io::Result<Reply> {
        self.resume();
        loop {
            if let Some(n) = find(&self.buf) {
                let n = n.min(self.buf.len());
                let msg: Vec<u8> = self.buf.drain(..n).collect();
                return Ok(Reply::Line(msg, Instant::now()));
            }
            if self.buf.len() > MAX_REPLY {
                return Ok(Reply::TooLong(self.buf[..256].to_vec()));
            }
            if !self.stdout_open {
                return Ok(Reply::Closed(std::mem::take(&mut self.buf)));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(Reply::Timeout(std::mem::take(&mut self.buf)));
            }
            self.wait(false, true, deadline - now)?;
        }
    }

    /// Kills the whole process group at once and reaps the process.
    pub(crate) fn kill(&mut self) {
        if self.status.is_some() {
            return;
        }
        // A sandboxed bot's processes, wherever they went (another group,
        // another session), while its first process still holds them.
        #[cfg(target_os = "linux")]
        if let Some(c) = self.confinement.as_mut() {
            c.kill();
            self.killed = true;
        }
        // The group leader is not reaped yet, so its pid (the group id)
        // cannot have been reused: this kills only our bot's processes.
        if killpg(self.pid, Signal::SIGKILL).is_ok() {
            self.killed = true;
        }
        self.reap();
    }

    fn reap(&mut self) {
        self.stdin = None;
        groups::forget(self.pid);
        loop {
            match waitpid(self.pid, None) {
                Err(Errno::EINTR) => continue,
                Ok(st) => {
                    self.status = Some(st);
                    break;
                }
                // ECHILD: already reaped elsewhere; nothing left to wait for.
                Err(_) => {
                    self.status = Some(WaitStatus::StillAlive);
                    break;
                }
            }
        }
        // What the bot wrote before it died is in the pipe; a process that
        // left the group may keep stderr open, so nothing waits for its end.
        self.drain_stderr();
        self.stderr = None;
        // A last line without its newline still counts.
        let last = std::mem::take(&mut self.log.line);
        if !last.is_empty() && !self.log.denial_key.is_empty() {
            note_denial(&self.log.denial_key, &last);
        }
    }

    /// Whether the process has exited (without reaping it).
    fn has_exited(&self) -> bool {
        if self.status.is_some() {
            return true;
        }
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        !matches!(waitid(Id::Pid(self.pid), flags), Ok(WaitStatus::StillAlive))
    }

    /// Closes the bot's stdin: nothing more will be sent, and a bot that
    /// reads on sees the end of its input.
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Sends `line` (the `end` line) and closes stdin; the bot then has
    /// until `grace` from now to exit, which [`BotProcess::wait_exit`] waits
    /// for. Split in two so that both bots of a game can exit at once.
    pub(crate) fn send_end(&mut self, line: &[u8], grace: Duration) {
        if self.status.is_some() || self.end_deadline.is_some() {
            return;
        }
        let deadline = Instant::now() + grace;
        let _ = self.send(line, deadline);
        self.stdin = None;
        self.end_deadline = Some(deadline);
    }

    /// Sends `line`, closes stdin and gives the bot `grace` to exit; then kills
    /// what is left of its group and reaps it. Returns whether it exited by
    /// itself in time.
    pub(crate) fn finish(&mut self, line: &[u8], grace: Duration) -> bool {
        self.send_end(line, grace);
        self.wait_exit()
    }

    /// After [`BotProcess::send_end`]: waits for the bot to exit until its
    /// deadline, then kills what is left of its group and reaps it. Returns
    /// whether it exited by itself in time.
    pub(crate) fn wait_exit(&mut self) -> bool {
        if self.status.is_some() {
            return false;
        }
        let deadline = self.end_deadline.unwrap_or_else(Instant::now);
        self.stdin = None;
        let mut step = Duration::from_micros(20);
        let mut exited = false;
        loop {
            if self.has_exited() {
                exited = true;
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let left = deadline - now;
            if self.stdout_open || self.stderr.is_some() {
                // Output after `end` is ignored; its end usually means exit.
                let _ = self.wait(false, true, left.min(Duration::from_millis(10)));
                self.buf.clear();
            } else {
                std::thread::sleep(step.min(left));
                step = (step * 2).min(Duration::from_millis(5));
            }
        }
        // Grandchildren may remain in the group even after a clean exit,
        // or elsewhere for a sandboxed bot.
        #[cfg(target_os = "linux")]
        if let Some(c) = self.confinement.as_mut() {
            c.kill();
        }
        let _ = killpg(self.pid, Signal::SIGKILL);
        self.reap();
        exited
    }

    /// The exit status in words, once the process is reaped.
    pub(crate) fn exit_status(&self) -> Option<String> {
        #[cfg(target_os = "linux")]
        if let Some(why) = self.confinement.as_ref().and_then(|c| c.verdict()) {
            self.status?;
            return Some(format!("killed by the referee: {why}"));
        }
        match self.status? {
            WaitStatus::Exited(_, code) => Some(format!("exited with code {code}")),
            WaitStatus::Signaled(_, sig, _) => Some(if sig == Signal::SIGKILL && self.killed {
                "killed by the referee (SIGKILL)".to_string()
            } else {
                format!("killed by signal {}", sig.as_str())
            }),
            _ => None,
        }
    }

    /// Starts counting stderr for a new game: [`BotProcess::game_stderr_tail`]
    /// shows only what comes after.
    pub(crate) fn mark_game_start(&mut self) {
        self.drain_stderr();
        self.log_mark = self.log.total_bytes();
    }

    /// The last `max` bytes of stderr written since the current game began.
    pub(crate) fn game_stderr_tail(&mut self, max: usize) -> String {
        self.drain_stderr();
        let since = self.log.total_bytes() - self.log_mark;
        self.log.tail(max.min(since as usize))
    }

    /// The last `max` bytes of stderr of the whole process.
    pub(crate) fn stderr_tail(&mut self, max: usize) -> String {
        self.drain_stderr();
        self.log.tail(max)
    }
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        self.kill();
        // Its user, copy and cgroups go before its temporary folder.
        #[cfg(target_os = "linux")]
        drop(self.confinement.take());
        if let Some(tmp) = self._tmp.take() {
            let run = tmp.path().parent().map(std::path::Path::to_path_buf);
            drop(tmp);
            // The run's folder too, once no bot of this run has one in it.
            if let Some(run) = run {
                let _ = std::fs::remove_dir(run);
            }
        }
    }
}

/// A poll timeout that never wakes before `d` has passed (rounded up to ms).
fn poll_timeout(d: Duration) -> PollTimeout {
    let ms = d.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32;
    PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_keeps_head_and_tail() {
        let mut l = StderrLog::default();
        l.push(&vec![b'a'; LOG_KEEP]);
        l.push(&vec![b'b'; 3 * LOG_KEEP]);
        l.push(b"end");
        assert_eq!(l.total_bytes(), 4 * LOG_KEEP as u64 + 3);
        assert_eq!(l.head.len(), LOG_KEEP);
        assert_eq!(l.tail.len(), LOG_KEEP);
        assert!(l.tail(10).ends_with("bbbbbbbend"));
    }

    #[test]
    fn short_log_tail_comes_from_head() {
        let mut l = StderrLog::default();
        l.push(b"hello\nworld\n");
        assert_eq!(l.tail(6), "world\n");
    }

    fn sh(script: &str) -> ExternalSpec {
        let mut spec = ExternalSpec::from_command_line("sh").unwrap();
        spec.command = vec!["sh".into(), "-c".into(), script.into()];
        spec
    }

    fn first_line(spec: &ExternalSpec) -> String {
        let mut p = BotProcess::spawn(spec, 7).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        p.send(b"go\n", deadline).unwrap();
        match p.read_line(deadline).unwrap() {
            Reply::Line(l, _) => String::from_utf8(l).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    fn limits_seen_by(limits: ResourceLimits) -> String {
        // The shell waits for a line, which is sent once `spawn` returned:
        // the limits are in place by then, wherever they are applied.
        let mut spec = sh("read go; echo $(ulimit -v) $(ulimit -t)");
        spec.limits = limits;
        first_line(&spec)
    }

    #[test]
    fn rlimits_apply_with_defaults_and_zero_means_none() {
        let set = ResourceLimits {
            memory_mb: Some(64),
            cpu_seconds: Some(5),
            processes: None,
            tmp_mb: None,
        };
        assert_eq!(limits_seen_by(set), "65536 5");
        let want = format!("{} {DEFAULT_CPU_SECONDS}", DEFAULT_MEMORY_MB * 1024);
        assert_eq!(limits_seen_by(ResourceLimits::default()), want);
        let none = ResourceLimits {
            memory_mb: Some(0),
            cpu_seconds: Some(0),
            processes: Some(0),
            tmp_mb: None,
        };
        assert_eq!(limits_seen_by(none), "unlimited unlimited");
    }

    #[test]
    fn the_environment_is_clean_unless_inherited() {
        // A variable of referee's own that is not on the kept list: cargo
        // sets it for every test binary it runs.
        assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
        let script = "read go; echo \"${CARGO_PKG_NAME:-none} $REFEREE_SEED ${TMPDIR:+tmp} \
                      ${PATH:+path} $MINE\"";
        let mut spec = sh(script);
        spec.env.insert("MINE".into(), "mine".into());
        assert_eq!(first_line(&spec), "none 7 tmp path mine");
        spec.inherit_env = true;
        assert_eq!(first_line(&spec), "referee 7 tmp path mine");
    }

    /// Whether this kernel gives the whole sandbox (else the sandboxed
    /// variants of these tests say so and skip).
    #[cfg(target_os = "linux")]
    fn full_sandbox() -> bool {
        let missing = super::super::sandbox::missing(super::super::sandbox::support());
        if !missing.is_empty() {
            eprintln!("sandboxed start not tested here: {}", missing.join("; "));
        }
        missing.is_empty()
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_sandboxed_start_sees_what_an_unsandboxed_one_sees() {
        if !full_sandbox() {
            return;
        }
        let boxed = |mut spec: ExternalSpec| {
            spec.sandbox = crate::bot::manifest::SandboxMode::On;
            spec
        };
        // Environment, inherited or not.
        let script = "read go; echo \"${CARGO_PKG_NAME:-none} $REFEREE_SEED ${TMPDIR:+tmp} \
                      ${PATH:+path} $MINE\"";
        let mut spec = sh(script);
        spec.env.insert("MINE".into(), "mine".into());
        assert_eq!(first_line(&boxed(spec.clone())), "none 7 tmp path mine");
        spec.inherit_env = true;
        assert_eq!(first_line(&boxed(spec)), "referee 7 tmp path mine");
        // Limits.
        let mut spec = sh("read go; echo $(ulimit -v) $(ulimit -t)");
        spec.limits.memory_mb = Some(64);
        spec.limits.cpu_seconds = Some(5);
        assert_eq!(first_line(&boxed(spec)), "65536 5");
        // Signals: none blocked, none of referee's handlers, SIGPIPE back
        // to its default (Rust ignores it), as std starts a program.
        let script =
            "read go; grep -E '^Sig(Blk|Ign|Cgt)' /proc/self/status | tr '\\n\\t' '  '; echo";
        let plain = first_line(&sh(script));
        let mut spec = boxed(sh(script));
        spec.sandbox_read = vec!["/proc".into()];
        assert_eq!(first_line(&spec), plain);
        assert!(plain.contains("SigBlk: 0000000000000000"), "{plain}");
        // The folder: the spec's `cwd`, where a relative program is found.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("me.sh"), "read go; pwd\n").unwrap();
        let mut spec = ExternalSpec::from_command_line("sh me.sh").unwrap();
        spec.cwd = Some(dir.path().canonicalize().unwrap());
        spec.sandbox_read = vec![dir.path().to_path_buf()];
        let want = dir.path().canonicalize().unwrap();
        assert_eq!(first_line(&boxed(spec)), want.to_string_lossy());
        // A program that is not there fails to start as it does unsandboxed.
        let spec = ExternalSpec::from_command_line("no-such-program-here").unwrap();
        let plain = BotProcess::spawn(&spec, 1).unwrap_err();
        let e = BotProcess::spawn(&boxed(spec), 1).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound, "{e}");
        assert_eq!(e.kind(), plain.kind());
    }

    #[test]
    fn the_private_tmpdir_is_writable_and_removed_with_the_process() {
        let spec = sh("read go; touch \"$TMPDIR/x\" && echo \"$TMPDIR\"");
        let mut p = BotProcess::spawn(&spec, 1).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        p.send(b"go\n", deadline).unwrap();
        let Reply::Line(dir, _) = p.read_line(deadline).unwrap() else {
            panic!("no line")
        };
        let dir = std::path::PathBuf::from(String::from_utf8(dir).unwrap());
        assert!(dir.join("x").exists());
        drop(p);
        assert!(!dir.exists());
    }

    #[test]
    fn stray_output_is_found_however_the_reads_split() {
        // Two lines in two writes with a pause: the second is not in the
        // read that returned the first.
        let spec = sh("read go; echo a; sleep 0.2; echo b; read never");
        let mut p = BotProcess::spawn(&spec, 1).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        p.send(b"go\n", deadline).unwrap();
        assert!(matches!(p.read_line(deadline).unwrap(), Reply::Line(l, _) if l == b"a"));
        assert!(p.take_stray().is_empty());
        std::thread::sleep(Duration::from_millis(400));
        assert_eq!(p.take_stray(), b"b\n");
        assert!(p.is_alive());
    }

    #[test]
    fn stderr_is_kept_without_a_thread_and_per_game() {
        let spec = sh("echo one >&2; read go; echo two >&2; echo ok; read x; echo three >&2");
        let mut p = BotProcess::spawn(&spec, 1).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        p.send(b"go\n", deadline).unwrap();
        assert!(matches!(p.read_line(deadline).unwrap(), Reply::Line(..)));
        p.mark_game_start();
        p.send(b"x\n", deadline).unwrap();
        assert!(matches!(p.read_line(deadline).unwrap(), Reply::Closed(_)));
        p.kill();
        assert_eq!(p.game_stderr_tail(100), "three\n");
        assert_eq!(p.stderr_tail(100), "one\ntwo\nthree\n");
    }

    #[test]
    fn an_escaped_grandchild_holding_stderr_does_not_hold_the_referee() {
        // The grandchild leaves the group with setsid and keeps stderr open
        // for a while; the bot itself exits at once.
        let spec = sh("setsid sh -c 'sleep 3' & echo done");
        let mut p = BotProcess::spawn(&spec, 1).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        assert!(matches!(p.read_line(deadline).unwrap(), Reply::Line(..)));
        let t = Instant::now();
        p.send_end(b"", Duration::from_millis(500));
        p.wait_exit();
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert!(p.exit_status().is_some());
    }

    #[test]
    fn a_bot_that_exits_while_its_child_holds_stdout_is_dead_not_slow() {
        // The child inherits stdout and outlives the bot: stdout never
        // ends, so only the process itself says the bot is gone. The
        // deadline is far: a wait that ran into it would say Timeout.
        let spec = sh("sleep 30 & echo partial; exit 3");
        let mut p = BotProcess::spawn(&spec, 1).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        assert!(matches!(p.read_line(deadline).unwrap(), Reply::Line(..)));
        match p.read_line(deadline).unwrap() {
            Reply::Closed(rest) => assert!(rest.is_empty(), "{rest:?}"),
            other => panic!("{other:?}"),
        }
        assert!(!p.is_alive());
        p.kill();
        assert_eq!(p.exit_status().as_deref(), Some("exited with code 3"));
    }

    #[test]
    fn a_reply_written_just_before_exit_is_still_read() {
        let spec = sh("sleep 30 & printf '4\\n'; exit 0");
        let mut p = BotProcess::spawn(&spec, 1).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        match p.read_line(deadline).unwrap() {
            Reply::Line(l, _) => assert_eq!(l, b"4"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn has_line_tells_a_buffered_line_from_an_empty_buffer() {
        // Two lines in one write: reading the first buffers the second.
        let mut p = BotProcess::spawn(&sh("printf 'a\\nb\\n'"), 1).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        assert!(!p.has_line());
        let mut lines = Vec::new();
        while let Ok(Reply::Line(l, _)) = p.read_line(deadline) {
            lines.push((l, p.has_line()));
        }
        p.kill();
        let first_had_company = lines.first().map(|(_, more)| *more);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(!lines[1].1, "nothing follows the last line");
        assert_eq!(first_had_company, Some(true));
    }

    #[test]
    fn live_groups_are_tracked_until_reaped() {
        // (groups::kill_all itself is tested on the real binary: here it would kill
        // the bots of tests running alongside.)
        let mut p = BotProcess::spawn(&sh("sleep 30"), 1).unwrap();
        let pid = p.pid();
        assert!(groups::live().contains(&pid));
        p.kill();
        assert!(!groups::live().contains(&pid));
    }

    #[test]
    fn poll_timeout_rounds_up() {
        assert_eq!(
            poll_timeout(Duration::from_micros(1)),
            PollTimeout::try_from(1).unwrap()
        );
        assert_eq!(poll_timeout(Duration::ZERO), PollTimeout::ZERO);
    }
}
