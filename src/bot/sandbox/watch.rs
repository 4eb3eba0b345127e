//! A bot's processes as one: freezing them while the opponent is on move,
//! killing them all, and a watchdog that holds their memory (and, without a
//! size-capped tmpfs, their temporary folder) to the bot's cap where no
//! cgroup can.
//!
//! Which processes are the bot's ([`Members`]): with per-bot users, every
//! process of its user id; otherwise the bot's first process and its
//! descendants. That first process is a child subreaper (set before the
//! bot's program starts; the seccomp filter refuses to unset it), so a
//! process that double-forks or leaves its session stays below it, and in
//! a PID namespace of its own the first process is the namespace's init
//! anyway.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::users;

/// Which processes are one bot's.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Members {
    /// Every process of this per-bot user id.
    User(u32),
    /// This process and its descendants.
    Tree(Pid),
}

/// The children of `pid` (of all its threads), from `/proc`.
fn children(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|w| w.parse::<i32>().ok()),
            );
        }
    }
    out
}

/// `top` and all its descendants, as `/proc` shows them now.
pub(crate) fn descendants(top: Pid) -> Vec<i32> {
    let mut out = vec![top.as_raw()];
    let mut i = 0;
    while i < out.len() {
        let more = children(out[i]);
        for c in more {
            if !out.contains(&c) {
                out.push(c);
            }
        }
        i += 1;
        if out.len() > 100_000 {
            break;
        }
    }
    out
}

impl Members {
    /// Sends `sig` to every process of the bot. For a tree, again until no
    /// new process shows up: a process may fork while its parent is being
    /// signalled, and a stopped process forks no more.
    fn signal(&self, sig: Signal) {
        match *self {
            Members::User(uid) => {
                let _ = users::signal_all(uid, sig);
            }
            Members::Tree(top) => {
                let mut done: Vec<i32> = Vec::new();
                for _ in 0..16 {
                    let now = descendants(top);
                    let new: Vec<i32> = now.into_iter().filter(|p| !done.contains(p)).collect();
                    if new.is_empty() {
                        break;
                    }
                    for &p in &new {
                        let _ = kill(Pid::from_raw(p), sig);
                    }
                    done.extend(new);
                }
            }
        }
    }

    /// Stops every process of the bot (`SIGSTOP`): it uses no CPU until
    /// [`Members::resume`].
    pub(crate) fn pause(&self) {
        self.signal(Signal::SIGSTOP);
    }

    /// Lets a paused bot run again (`SIGCONT`).
    pub(crate) fn resume(&self) {
        self.signal(Signal::SIGCONT);
    }

    /// Kills every process of the bot.
    pub(crate) fn kill(&self) {
        match *self {
            Members::User(uid) => {
                let _ = users::kill_all(uid);
            }
            Members::Tree(_) => self.signal(Signal::SIGKILL),
        }
    }
}

/// Why the watchdog killed a bot, once it has (shown in its forfeit).
pub(crate) type Verdict = Arc<OnceLock<String>>;

/// One watched bot.
struct Watched {
    id: u64,
    top: Pid,
    members: Members,
    /// The memory cap of all its processes together, in bytes (0: none).
    memory: u64,
    /// Its temporary folder and that folder's cap in bytes, where no tmpfs
    /// caps it.
    tmp: Option<(PathBuf, u64)>,
    /// Its user id, whose files in the shared writable folders count with
    /// its temporary folder.
    owner: Option<u32>,
    verdict: Verdict,
}

/// The watched bots, and the condition the watchdog sleeps on while there
/// are none.
static WATCHED: Mutex<Vec<Watched>> = Mutex::new(Vec::new());
static WAKE: Condvar = Condvar::new();

/// How often the watchdog looks.
const PERIOD: Duration = Duration::from_millis(50);

/// Stops watching a bot when dropped.
#[derive(Debug)]
pub(crate) struct Watch(u64);

impl Drop for Watch {
    fn drop(&mut self) {
        let mut w = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
        w.retain(|x| x.id != self.0);
    }
}

/// Watches the bot whose first process is `top`: its processes' memory
/// together against `memory` bytes (0: none) and the size of `tmp` (with
/// the files `owner` has in the shared writable folders) against its cap.
/// Over either, every process of the bot is killed and the verdict says
/// why.
pub(crate) fn watch(
    top: Pid,
    members: Members,
    memory: u64,
    tmp: Option<(PathBuf, u64)>,
    owner: Option<u32>,
    verdict: Verdict,
) -> Watch {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static STARTED: std::sync::Once = std::sync::Once::new();
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("referee-watchdog".into())
            .spawn(watchdog);
    });
    let mut w = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    w.push(Watched {
        id,
        top,
        members,
        memory,
        tmp,
        owner,
        verdict,
    });
    WAKE.notify_all();
    Watch(id)
}

/// The watchdog's loop: every [`PERIOD`], each watched bot is measured.
fn watchdog() {
    let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .map_or(4096, |p| p as u64);
    let mut w = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        while w.is_empty() {
            w = WAKE.wait(w).unwrap_or_else(|p| p.into_inner());
        }
        // Measure outside the lock: a bot may start or end meanwhile.
        let jobs: Vec<Job> = w
            .iter()
            .filter(|x| x.verdict.get().is_none())
            .map(|x| Job {
                top: x.top,
                members: x.members,
                memory: x.memory,
                tmp: x.tmp.clone(),
                owner: x.owner,
                verdict: x.verdict.clone(),
            })
            .collect();
        drop(w);
        for job in jobs {
            let Job {
                top,
                members,
                memory,
                tmp,
                owner,
                verdict,
            } = job;
            if let Some(why) = over_cap(top, memory, tmp.as_ref(), owner, page) {
                if verdict.set(why).is_ok() {
                    members.kill();
                }
            }
        }
        std::thread::sleep(PERIOD);
        w = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    }
}

/// One bot to measure, copied out of the list.
struct Job {
    top: Pid,
    members: Members,
    memory: u64,
    tmp: Option<(PathBuf, u64)>,
    owner: Option<u32>,
    verdict: Verdict,
}

/// Why the bot whose first process is `top` is over a cap, if it is.
fn over_cap(
    top: Pid,
    memory: u64,
    tmp: Option<&(PathBuf, u64)>,
    owner: Option<u32>,
    page: u64,
) -> Option<String> {
    if memory > 0 {
        let pids = descendants(top);
        let resident: u64 = pids.iter().map(|&p| resident_bytes(p, page)).sum();
        // Resident sizes count shared pages once per process (a forked
        // worker shares its parent's); only the proportional share, which
        // counts them once in all, decides.
        if resident > memory {
            // Where the proportional size cannot be read (it asks for the
            // right to trace: a container without CAP_SYS_PTRACE), the
            // resident size counts.
            let shared: u64 = pids
                .iter()
                .map(|&p| proportional_bytes(p).unwrap_or_else(|| resident_bytes(p, page)))
                .sum();
            if shared > memory {
                return Some(format!(
                    "its {} processes used {} MiB of memory together, over its cap of {} MiB",
                    pids.len(),
                    shared >> 20,
                    memory >> 20
                ));
            }
        }
    }
    if let Some((dir, cap)) = tmp {
        let shared = owner.map_or(0, users::shared_bytes);
        let used = folder_bytes(dir, 20_000).saturating_add(shared);
        if used > *cap {
            return Some(format!(
                "its temporary folder grew to {} MiB, over its cap of {} MiB",
                used >> 20,
                cap >> 20
            ));
        }
    }
    None
}

/// The resident memory of process `pid`, in bytes (0 when it is gone).
fn resident_bytes(pid: i32, page: u64) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()
        .and_then(|t| t.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * page)
}

/// The proportional set size of process `pid` (its own pages plus its
/// share of pages it shares), in bytes, where it can be read.
fn proportional_bytes(pid: i32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
}

/// The disk space the files under `dir` take, in bytes, looking at no more
/// than `max_entries` entries (more counts as over any cap).
pub(crate) fn folder_bytes(dir: &Path, max_entries: usize) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0u64;
    let mut seen = 0usize;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > max_entries {
                return u64::MAX;
            }
            let Ok(m) = e.path().symlink_metadata() else {
                continue;
            };
            total += m.blocks() * 512;
            if m.file_type().is_dir() {
                stack.push(e.path());
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_include_grandchildren() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .spawn()
            .unwrap();
        let top = Pid::from_raw(child.id() as i32);
        let mut found = Vec::new();
        for _ in 0..200 {
            found = descendants(top);
            if found.len() >= 3 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Members::Tree(top).kill();
        let _ = child.wait();
        assert!(found.len() >= 3, "{found:?}");
    }

    #[test]
    fn a_folder_is_measured_by_its_blocks() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), vec![1u8; 1 << 20]).unwrap();
        let used = folder_bytes(dir.path(), 100);
        assert!(used >= 1 << 20, "{used}");
        assert_eq!(folder_bytes(dir.path(), 0), u64::MAX);
    }
}

/// How long a bot may stay idle, off move, before it is frozen. A turn
/// shorter than this costs no signal at all (fast bots play thousands of
/// games a second); a longer one freezes the idle bot, so that it takes at
/// most this much CPU from its opponent's turn.
pub(crate) const FREEZE_AFTER: Duration = Duration::from_millis(2);

/// Where a bot stands with the freezer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Idle {
    /// On move, or not watched.
    Running,
    /// Off move since this instant: frozen at [`FREEZE_AFTER`] past it.
    Since(std::time::Instant),
    /// Frozen (stopped).
    Frozen,
    /// Ended: never signalled again.
    Gone,
}

/// One bot as the freezer knows it.
#[derive(Debug)]
pub(crate) struct Freezable {
    members: Members,
    idle: Mutex<Idle>,
    /// Whether it is in the freezer's list.
    listed: std::sync::atomic::AtomicBool,
}

impl Freezable {
    /// The bot made of `members`, on move.
    pub(crate) fn new(members: Members) -> Arc<Freezable> {
        Arc::new(Freezable {
            members,
            idle: Mutex::new(Idle::Running),
            listed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Idle> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The bot is off move: the freezer stops it soon unless it is asked
    /// for something first. Costs a lock, and a wake-up of the freezer
    /// only when it sleeps with nothing to look at.
    pub(crate) fn idle(self: &Arc<Self>) {
        let mut s = self.state();
        if *s != Idle::Running {
            return;
        }
        *s = Idle::Since(std::time::Instant::now());
        drop(s);
        let mut f = FREEZER.lock().unwrap_or_else(|p| p.into_inner());
        if !self.listed.swap(true, std::sync::atomic::Ordering::Relaxed) {
            f.bots.retain(|w| w.strong_count() > 0);
            f.bots.push(Arc::downgrade(self));
        }
        f.idles += 1;
        if !f.looking {
            f.looking = true;
            FREEZER_WAKE.notify_all();
        }
        drop(f);
        static STARTED: std::sync::Once = std::sync::Once::new();
        STARTED.call_once(|| {
            let _ = std::thread::Builder::new()
                .name("referee-freezer".into())
                .spawn(freezer);
        });
    }

    /// The bot is on move (or must end): it runs again, continued if it
    /// was frozen.
    pub(crate) fn wake(&self) {
        let mut s = self.state();
        if *s == Idle::Frozen {
            self.members.resume();
        }
        if *s != Idle::Gone {
            *s = Idle::Running;
        }
    }

    /// The bot has ended: the freezer leaves it alone.
    pub(crate) fn gone(&self) {
        *self.state() = Idle::Gone;
    }

    /// Freezes the bot now if it is still idle and its time has come;
    /// returns when it should be looked at again, if ever.
    fn due(&self, now: std::time::Instant) -> Option<std::time::Instant> {
        let mut s = self.state();
        match *s {
            Idle::Since(t) if now >= t + FREEZE_AFTER => {
                self.members.pause();
                *s = Idle::Frozen;
                None
            }
            Idle::Since(t) => Some(t + FREEZE_AFTER),
            _ => None,
        }
    }
}

/// The bots the freezer may have to stop, and whether it is looking
/// (has a time to look again) or sleeps until told.
struct Freezer {
    bots: Vec<std::sync::Weak<Freezable>>,
    looking: bool,
    /// How many times a bot went idle: one that did while the freezer
    /// looked (and was not told) is seen before it sleeps.
    idles: u64,
}

static FREEZER: Mutex<Freezer> = Mutex::new(Freezer {
    bots: Vec::new(),
    looking: false,
    idles: 0,
});
static FREEZER_WAKE: Condvar = Condvar::new();

/// The freezer's loop: stops each idle bot when its time comes.
fn freezer() {
    let mut f = FREEZER.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        while !f.looking {
            f = FREEZER_WAKE.wait(f).unwrap_or_else(|p| p.into_inner());
        }
        let bots: Vec<Arc<Freezable>> = f.bots.iter().filter_map(|w| w.upgrade()).collect();
        let seen = f.idles;
        drop(f);
        let now = std::time::Instant::now();
        let next = bots.iter().filter_map(|b| b.due(now)).min();
        drop(bots);
        f = FREEZER.lock().unwrap_or_else(|p| p.into_inner());
        f.bots.retain(|w| w.strong_count() > 0);
        match next {
            Some(at) => {
                let wait = at.saturating_duration_since(std::time::Instant::now());
                f = FREEZER_WAKE
                    .wait_timeout(f, wait)
                    .map_or_else(|p| p.into_inner().0, |(g, _)| g);
            }
            // Nothing idle: sleep until a bot goes idle (which sets it),
            // unless one did meanwhile.
            None if f.idles == seen => f.looking = false,
            None => {}
        }
    }
}
