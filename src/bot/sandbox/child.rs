//! Making a sandboxed bot's process: one `clone` (as `posix_spawn` does:
//! the child borrows referee's memory until it executes the bot) into new
//! namespaces, then only system calls on what [`Prepared`] holds until
//! `execve`.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use nix::libc;
use nix::sched::CloneFlags;
use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::Signal;
use nix::sys::wait::waitpid;
use nix::unistd::Pid;

use super::view::Mounts;
use super::{probe, rules, users};

/// The bot's program, arguments, environment and folder as C strings,
/// with the null-terminated pointer arrays `execve` takes.
pub(crate) struct Exec {
    path: CString,
    cwd: Option<CString>,
    _args: Vec<CString>,
    _env: Vec<CString>,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
}

impl Exec {
    /// The C strings of a start of `path` with `args` (the first is the
    /// program as named), `env` and folder `cwd`.
    pub(crate) fn new(
        path: &std::path::Path,
        args: &[String],
        env: &[(std::ffi::OsString, std::ffi::OsString)],
        cwd: Option<&std::path::Path>,
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

/// Everything one sandboxed start needs, prepared before the clone so that
/// the child only makes system calls: it shares referee's memory until it
/// executes the bot, so it must not allocate, free or lock anything.
pub(crate) struct Prepared {
    /// The Landlock ruleset's descriptor, when the kernel has Landlock.
    pub(crate) landlock: Option<OwnedFd>,
    /// The Landlock file-system rights the ruleset handles (all of them
    /// are given in the tmpfs `TMPDIR`).
    pub(crate) tmp_access: u64,
    pub(crate) setgroups: CString,
    pub(crate) uid_map_path: CString,
    pub(crate) uid_map: Vec<u8>,
    pub(crate) gid_map_path: CString,
    pub(crate) gid_map: Vec<u8>,
    /// The `cgroup.procs` files of the bot's cgroups, joined first.
    pub(crate) cgroup_procs: Vec<CString>,
    pub(crate) filter: Option<&'static seccompiler::BpfProgram>,
    /// `RLIMIT_NPROC`, counted per user: in the bot's own user namespace,
    /// or for its own user id.
    pub(crate) nproc: Option<u64>,
    /// Address space and CPU seconds (0: none).
    pub(crate) limits: [(Resource, u64); 2],
    /// `RLIMIT_FSIZE`, where no tmpfs caps the temporary folder.
    pub(crate) fsize: Option<u64>,
    pub(crate) exec: Exec,
    /// The bot's private view of the file system, when the kernel allows.
    pub(crate) mounts: Option<Mounts>,
    /// The per-bot user id it becomes (referee runs as root).
    pub(crate) user: Option<u32>,
    /// New namespaces (PID, IPC, UTS; and a user namespace without root).
    pub(crate) namespaces: bool,
    /// Whether its ids are mapped in a user namespace of its own.
    pub(crate) userns: bool,
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
const STEPS: [&str; 16] = [
    "",
    "the parent-death signal",
    "joining the bot's cgroups",
    "mapping the user and group ids",
    "setting the resource limits",
    "making the session",
    "entering the bot's folder",
    "connecting stdin, stdout and stderr",
    "resetting the signal handlers",
    "applying the seccomp filter",
    "applying the Landlock ruleset",
    "making the bot's private file system view",
    "becoming the bot's own user",
    "closing referee's other file descriptors",
    "marking the bot as its processes' reaper",
    "setting no_new_privs",
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
pub(crate) fn spawn(prepared: &Prepared) -> io::Result<Spawned> {
    use nix::sys::signal::{pthread_sigmask, SigSet, SigmaskHow};
    let (in_r, in_w) = pipe_above_stdio()?;
    let (out_r, out_w) = pipe_above_stdio()?;
    let (err_r, err_w) = pipe_above_stdio()?;
    let stdio = [in_r.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()];
    // What failed in the child: its step (high half) and errno (low half).
    let failure = AtomicU64::new(0);
    let mut stack = vec![0u8; CHILD_STACK];
    let mut flags = CloneFlags::CLONE_VM | CloneFlags::CLONE_VFORK;
    if prepared.namespaces {
        flags |= probe::namespace_flags(!prepared.userns);
    }
    if prepared.mounts.is_some() {
        flags |= CloneFlags::CLONE_NEWNS;
    }
    let p = prepared;
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

/// Writes `data` to the file `path` with plain system calls.
fn write_file(path: &CString, data: &[u8]) -> Result<(), Errno> {
    // SAFETY: plain system calls on a C string and a buffer that live in
    // the caller's frame.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(Errno::last());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let e = Errno::last();
        libc::close(fd);
        if n < 0 {
            return Err(e);
        }
        if n as usize != data.len() {
            return Err(Errno::EIO);
        }
    }
    Ok(())
}

/// Sets `res` to `value` (soft and hard), no higher than its hard limit.
fn lower_limit(res: Resource, value: u64) -> Result<(), Errno> {
    let (_, hard) = nix::sys::resource::getrlimit(res)?;
    let v = value.min(hard);
    setrlimit(res, v, v)
}

/// The child's life between the clone and the bot's `exec`: only system
/// calls on what `prepared` holds. Returns the failed step and its errno.
fn child_setup(
    p: &Prepared,
    stdio: [RawFd; 3],
) -> Result<std::convert::Infallible, (usize, Errno)> {
    let step = |n: usize| move |e: Errno| (n, e);
    nix::sys::prctl::set_pdeathsig(Some(Signal::SIGKILL)).map_err(step(1))?;
    for procs in &p.cgroup_procs {
        // "0": the writer itself, whatever its id in its new namespace.
        write_file(procs, b"0").map_err(step(2))?;
    }
    if p.userns {
        write_file(&p.setgroups, b"deny").map_err(step(3))?;
        write_file(&p.uid_map_path, &p.uid_map).map_err(step(3))?;
        write_file(&p.gid_map_path, &p.gid_map).map_err(step(3))?;
    }
    if let Some(m) = &p.mounts {
        private_root(m, p.user).map_err(step(11))?;
    }
    if let Some(id) = p.user {
        users::become_user(id).map_err(step(12))?;
        // A change of user clears the parent-death signal.
        nix::sys::prctl::set_pdeathsig(Some(Signal::SIGKILL)).map_err(step(1))?;
    }
    for &(res, value) in &p.limits {
        if value > 0 {
            lower_limit(res, value).map_err(step(4))?;
        }
    }
    // Counted per user: the bot's own id, or its own user namespace.
    if let Some(n) = p.nproc {
        lower_limit(Resource::RLIMIT_NPROC, n).map_err(step(4))?;
    }
    if let Some(bytes) = p.fsize {
        lower_limit(Resource::RLIMIT_FSIZE, bytes).map_err(step(4))?;
    }
    // Whatever the bot starts stays below it, even a double-forked daemon:
    // orphans come to their nearest reaper, which is the bot (kept across
    // `execve`; the seccomp filter forbids unsetting it).
    // SAFETY: a plain system call with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err((14, Errno::last()));
    }
    // A session (and process group) of its own: a bot cannot wake a
    // frozen opponent with SIGCONT, which the kernel lets through to every
    // process of the sender's session.
    nix::unistd::setsid().map_err(step(5))?;
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
    // No program it runs gains a privilege (set-uid bits are ignored), as
    // seccomp and Landlock ask.
    // SAFETY: a plain system call with integer arguments.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err((15, Errno::last()));
    }
    if let Some(filter) = p.filter {
        seccompiler::apply_filter(filter).map_err(|_| (9, Errno::last()))?;
    }
    if let Some(fd) = &p.landlock {
        if let Some(m) = &p.mounts {
            rules::allow_beneath(&m.tmpdir, fd.as_raw_fd(), p.tmp_access).map_err(step(10))?;
        }
        rules::restrict_self(fd.as_raw_fd()).map_err(step(10))?;
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
/// switches to it: only system calls on what `m` holds. With a per-bot
/// user, the bot's `TMPDIR` is given to that user, whom the bot becomes
/// next.
fn private_root(m: &Mounts, owner: Option<u32>) -> Result<(), Errno> {
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
        if let Some(id) = owner {
            ok(libc::chown(m.tmpdir_before.as_ptr(), id, id))?;
        }
        // The tmpfs becomes `/`; the old root is detached, out of reach.
        ok(libc::chdir(m.new_root.as_ptr()))?;
        ok(libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as libc::c_int)?;
        ok(libc::umount2(c".".as_ptr(), libc::MNT_DETACH))?;
        ok(libc::chdir(c"/".as_ptr()))?;
    }
    Ok(())
}

fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` ends the process at once, which is what a child that
    // shares its parent's memory must do instead of running exit handlers.
    unsafe { libc::_exit(code) }
}
