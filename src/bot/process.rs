//! One supervised bot process: started in its own process group, its stdout
//! read with deadlines, its stderr drained on a thread, and killed (with the
//! whole group) the moment it forfeits.
//!
//! Nothing here blocks without a deadline on anything the bot controls: the
//! stdout pipe is only read after `poll` says it is readable, and a bot that
//! ignores signals or leaves a grandchild holding its stdout is simply
//! SIGKILLed by group when its time runs out.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
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

use super::spec::{ExternalSpec, ResourceLimits};

/// The longest reply line accepted, in bytes (without its newline).
pub const MAX_LINE: usize = 64 * 1024;

/// How much of a bot's stderr is kept at each end of the log.
pub const LOG_KEEP: usize = 64 * 1024;

/// Default address-space limit (MiB) when a bot's limits do not say.
pub const DEFAULT_MEMORY_MB: u64 = 4096;

/// Default CPU-time limit (seconds) when a bot's limits do not say.
pub const DEFAULT_CPU_SECONDS: u64 = 600;

/// A bot's stderr, bounded: the first and the last [`LOG_KEEP`] bytes.
#[derive(Debug, Default)]
pub struct StderrLog {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    closed: bool,
}

impl StderrLog {
    fn push(&mut self, mut data: &[u8]) {
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
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// The kept log as text: head, a note of what was skipped, tail.
    pub fn text(&self) -> String {
        let mut out = String::from_utf8_lossy(&self.head).into_owned();
        let kept = (self.head.len() + self.tail.len()) as u64;
        if self.total > kept {
            out.push_str(&format!(
                "\n[... {} bytes of stderr skipped ...]\n",
                self.total - kept
            ));
        }
        let (a, b) = self.tail.as_slices();
        out.push_str(&String::from_utf8_lossy(&[a, b].concat()));
        out
    }

    /// At most the last `max` bytes the bot wrote (lossy UTF-8).
    pub fn tail(&self, max: usize) -> String {
        let mut bytes: Vec<u8> = self.tail.iter().copied().collect();
        if bytes.len() < max {
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

type SharedLog = Arc<(Mutex<StderrLog>, Condvar)>;

/// What came back from the bot when a reply was awaited.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// A complete line (without its newline), and when its newline arrived.
    Line(Vec<u8>, Instant),
    /// More than [`MAX_LINE`] bytes without a newline; the first bytes.
    TooLong(Vec<u8>),
    /// The bot closed its stdout (usually: it exited); what it wrote of a line.
    Closed(Vec<u8>),
    /// The deadline passed; what the bot wrote of a line so far.
    Timeout(Vec<u8>),
}

/// A running bot process. Dropping it kills the whole process group and
/// reaps the process, whatever state it is in.
#[derive(Debug)]
pub struct BotProcess {
    pid: Pid,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    stdout_open: bool,
    buf: Vec<u8>,
    log: SharedLog,
    status: Option<WaitStatus>,
    killed: bool,
    started: Instant,
    end_deadline: Option<Instant>,
}

/// The limits actually applied: the spec's, or the defaults; 0 means none.
pub fn effective_limits(l: &ResourceLimits) -> [(Resource, u64); 3] {
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

impl BotProcess {
    /// Starts the bot's command in a new process group with piped stdio and
    /// its resource limits.
    pub fn spawn(spec: &ExternalSpec) -> io::Result<BotProcess> {
        let (program, args) = spec
            .command
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .envs(&spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        let limits = effective_limits(&spec.limits);
        // Elsewhere than Linux the limits are set between fork and exec,
        // which keeps std from using the cheaper posix_spawn.
        #[cfg(not(target_os = "linux"))]
        if limits.iter().any(|&(_, v)| v > 0) {
            // SAFETY: the closure runs between fork and exec and only calls
            // getrlimit and setrlimit, which are async-signal-safe; it
            // allocates nothing.
            unsafe {
                cmd.pre_exec(move || {
                    let os_err = |e: Errno| io::Error::from_raw_os_error(e as i32);
                    for (res, value) in limits {
                        if value > 0 {
                            // Never above the hard limit we inherited: raising
                            // it would fail for an unprivileged referee.
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
        let mut child = cmd.spawn()?;
        let pid = Pid::from_raw(child.id() as i32);
        // On Linux the limits are set on the started process with
        // prlimit(2): std starts it with posix_spawn (no pre-exec hook), which
        // returns once the bot's program is exec'd, so the limits hold from
        // its first microseconds on (what it does before them is bounded by
        // that time).
        #[cfg(target_os = "linux")]
        if let Err(e) = apply_limits(pid, &limits) {
            let _ = killpg(pid, Signal::SIGKILL);
            let _ = waitpid(pid, None);
            return Err(e);
        }
        // From here on the process exists: build the struct first so that
        // Drop cleans up whatever fails next.
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            // Cannot happen with piped stdio; kill rather than leak.
            let _ = killpg(pid, Signal::SIGKILL);
            let _ = waitpid(pid, None);
            return Err(io::Error::other("child pipes missing"));
        };
        let log: SharedLog = Arc::new((Mutex::new(StderrLog::default()), Condvar::new()));
        let mut me = BotProcess {
            pid,
            stdin: Some(stdin),
            stdout,
            stdout_open: true,
            buf: Vec::new(),
            log: log.clone(),
            status: None,
            killed: false,
            started,
            end_deadline: None,
        };
        // A bot that never reads its stdin must not block the referee's writes.
        if let Some(s) = &me.stdin {
            let flags = fcntl(s.as_raw_fd(), FcntlArg::F_GETFL).map_err(io::Error::from)?;
            let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
            fcntl(s.as_raw_fd(), FcntlArg::F_SETFL(flags)).map_err(io::Error::from)?;
        }
        std::thread::Builder::new()
            .name("bot-stderr".into())
            .spawn(move || drain_stderr(stderr, log))
            .inspect_err(|_| me.kill())?;
        Ok(me)
    }

    /// The process id (also the process group id).
    pub fn pid(&self) -> i32 {
        self.pid.as_raw()
    }

    /// When the process was started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Whether the bot wrote output that was not yet consumed as a reply.
    pub fn has_pending_output(&self) -> bool {
        !self.buf.is_empty()
    }

    /// Writes `line` (which must end in a newline) to the bot's stdin,
    /// waiting for pipe space no later than `deadline`.
    pub fn send(&mut self, line: &[u8], deadline: Instant) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin closed"))?;
        let mut rest = line;
        while !rest.is_empty() {
            match stdin.write(rest) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLOUT)];
                    match poll(&mut fds, poll_timeout(deadline - now)) {
                        Ok(_) | Err(Errno::EINTR) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Whether a whole line has already been read and waits in the buffer,
    /// so that [`BotProcess::read_line`] would return it without waiting.
    pub fn has_line(&self) -> bool {
        self.buf.contains(&b'\n')
    }

    /// Waits for one reply line until `deadline`. Memory stays bounded by
    /// about twice [`MAX_LINE`] whatever the bot writes.
    pub fn read_line(&mut self, deadline: Instant) -> io::Result<Reply> {
        let reply = self.read_until(
            |buf| buf.iter().position(|&b| b == b'\n').map(|i| i + 1),
            deadline,
        )?;
        Ok(match reply {
            Reply::Line(mut line, at) => {
                line.pop();
                if line.len() > MAX_LINE {
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
    pub fn read_until(
        &mut self,
        find: impl Fn(&[u8]) -> Option<usize>,
        deadline: Instant,
    ) -> io::Result<Reply> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some(n) = find(&self.buf) {
                let n = n.min(self.buf.len());
                let msg: Vec<u8> = self.buf.drain(..n).collect();
                return Ok(Reply::Line(msg, Instant::now()));
            }
            if self.buf.len() > MAX_LINE {
                return Ok(Reply::TooLong(self.buf[..256].to_vec()));
            }
            if !self.stdout_open {
                return Ok(Reply::Closed(std::mem::take(&mut self.buf)));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(Reply::Timeout(std::mem::take(&mut self.buf)));
            }
            let mut fds = [PollFd::new(self.stdout.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, poll_timeout(deadline - now)) {
                Ok(0) | Err(Errno::EINTR) => continue,
                Ok(_) => {}
                Err(e) => return Err(e.into()),
            }
            match self.stdout.read(&mut chunk) {
                Ok(0) => self.stdout_open = false,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Kills the whole process group at once and reaps the process.
    pub fn kill(&mut self) {
        if self.status.is_some() {
            return;
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
    }

    /// Whether the process has exited (without reaping it).
    fn has_exited(&self) -> bool {
        if self.status.is_some() {
            return true;
        }
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        !matches!(waitid(Id::Pid(self.pid), flags), Ok(WaitStatus::StillAlive))
    }

    /// Sends `line` (the `end` line) and closes stdin; the bot then has
    /// until `grace` from now to exit, which [`BotProcess::wait_exit`] waits
    /// for. Split in two so that both bots of a game can exit at once.
    pub fn send_end(&mut self, line: &[u8], grace: Duration) {
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
    pub fn finish(&mut self, line: &[u8], grace: Duration) -> bool {
        self.send_end(line, grace);
        self.wait_exit()
    }

    /// After [`BotProcess::send_end`]: waits for the bot to exit until its
    /// deadline, then kills what is left of its group and reaps it. Returns
    /// whether it exited by itself in time.
    pub fn wait_exit(&mut self) -> bool {
        if self.status.is_some() {
            return false;
        }
        let deadline = self.end_deadline.unwrap_or_else(Instant::now);
        self.stdin = None;
        let mut step = Duration::from_micros(20);
        let mut scratch = [0u8; 4096];
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
            if self.stdout_open {
                // Output after `end` is ignored; its end usually means exit.
                let mut fds = [PollFd::new(self.stdout.as_fd(), PollFlags::POLLIN)];
                let wait = left.min(Duration::from_millis(10));
                if let Ok(n) = poll(&mut fds, poll_timeout(wait)) {
                    if n > 0 && matches!(self.stdout.read(&mut scratch), Ok(0) | Err(_)) {
                        self.stdout_open = false;
                    }
                }
            } else {
                std::thread::sleep(step.min(left));
                step = (step * 2).min(Duration::from_millis(5));
            }
        }
        // Grandchildren may remain in the group even after a clean exit.
        let _ = killpg(self.pid, Signal::SIGKILL);
        self.reap();
        exited
    }

    /// The exit status in words, once the process is reaped.
    pub fn exit_status(&self) -> Option<String> {
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

    /// The last `max` bytes of stderr, after giving the drain thread a
    /// moment to catch up with a process that just died.
    pub fn stderr_tail(&self, max: usize) -> String {
        let (lock, cv) = &*self.log;
        let Ok(mut log) = lock.lock() else {
            return String::new();
        };
        if self.status.is_some() {
            let until = Instant::now() + Duration::from_millis(20);
            while !log.closed {
                let now = Instant::now();
                if now >= until {
                    break;
                }
                match cv.wait_timeout(log, until - now) {
                    Ok((l, _)) => log = l,
                    Err(_) => return String::new(),
                }
            }
        }
        log.tail(max)
    }

    /// The whole kept stderr log (first and last 64 KiB).
    pub fn stderr_log(&self) -> String {
        match self.log.0.lock() {
            Ok(l) => l.text(),
            Err(_) => String::new(),
        }
    }
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

fn drain_stderr(mut stderr: std::process::ChildStderr, log: SharedLog) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match stderr.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                if let Ok(mut l) = log.0.lock() {
                    l.push(&chunk[..n]);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if let Ok(mut l) = log.0.lock() {
        l.closed = true;
    }
    log.1.notify_all();
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
        let t = l.text();
        assert!(t.contains("bytes of stderr skipped"));
        assert!(t.starts_with('a') && t.ends_with("end"));
    }

    #[test]
    fn short_log_tail_comes_from_head() {
        let mut l = StderrLog::default();
        l.push(b"hello\nworld\n");
        assert_eq!(l.tail(6), "world\n");
        assert_eq!(l.text(), "hello\nworld\n");
    }

    fn limits_seen_by(limits: ResourceLimits) -> String {
        let mut spec = ExternalSpec::from_command_line("sh").unwrap();
        // The shell waits for a line, which is sent once `spawn` returned:
        // the limits are in place by then, wherever they are applied.
        spec.command = vec![
            "sh".into(),
            "-c".into(),
            "read go; echo $(ulimit -v) $(ulimit -t)".into(),
        ];
        spec.limits = limits;
        let mut p = BotProcess::spawn(&spec).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        p.send(b"go\n", deadline).unwrap();
        match p.read_line(deadline).unwrap() {
            Reply::Line(l, _) => String::from_utf8(l).unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rlimits_apply_with_defaults_and_zero_means_none() {
        let set = ResourceLimits {
            memory_mb: Some(64),
            cpu_seconds: Some(5),
            processes: None,
        };
        assert_eq!(limits_seen_by(set), "65536 5");
        let want = format!("{} {DEFAULT_CPU_SECONDS}", DEFAULT_MEMORY_MB * 1024);
        assert_eq!(limits_seen_by(ResourceLimits::default()), want);
        let none = ResourceLimits {
            memory_mb: Some(0),
            cpu_seconds: Some(0),
            processes: Some(0),
        };
        assert_eq!(limits_seen_by(none), "unlimited unlimited");
    }

    #[test]
    fn has_line_tells_a_buffered_line_from_an_empty_buffer() {
        let mut spec = ExternalSpec::from_command_line("sh").unwrap();
        // Two lines in one write: reading the first buffers the second.
        spec.command = vec!["sh".into(), "-c".into(), "printf 'a\\nb\\n'".into()];
        let mut p = BotProcess::spawn(&spec).unwrap();
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
        // The shell writes both lines at once, so the second was buffered
        // when the first was returned.
        assert_eq!(first_had_company, Some(true));
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
