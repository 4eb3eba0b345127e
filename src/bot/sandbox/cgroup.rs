//! Per-bot cgroups, where referee may make them (as root, outside a
//! container that mounts `/sys/fs/cgroup` read-only): a `pids` group caps
//! the number of the bot's processes together, a `memory` group the memory
//! of all of them together. Each bot's groups live under
//! `<controller>/referee.PID/botN` and go when the bot does; a later run
//! removes those of a referee killed by SIGKILL.

use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

/// The folder for this run's per-bot groups of `controller` (`pids` or
/// `memory`): cgroup v1's hierarchy of that name, or the v2 root with the
/// controller enabled, if referee can make and cap a group there.
pub(crate) fn base(controller: &str) -> Option<PathBuf> {
    let name = format!("referee.{}", std::process::id());
    let v1 = Path::new("/sys/fs/cgroup").join(controller);
    let v2 = Path::new("/sys/fs/cgroup");
    let candidates = [
        (v1, false),
        (v2.to_path_buf(), true),
        (v2.join("unified"), true),
    ];
    for (base, v2) in candidates {
        if !base.join("cgroup.procs").exists() {
            continue;
        }
        if v2 {
            let controllers = std::fs::read_to_string(base.join("cgroup.controllers"));
            if !controllers.is_ok_and(|c| c.split_whitespace().any(|w| w == controller)) {
                continue;
            }
        }
        sweep_stale(&base);
        let dir = base.join(&name);
        if std::fs::create_dir(&dir).is_err() && !dir.is_dir() {
            continue;
        }
        if v2 {
            // Children of ours need the controller handed down.
            let _ = std::fs::write(dir.join("cgroup.subtree_control"), format!("+{controller}"));
        }
        // A probe: a child group with a cap.
        let probe = dir.join("probe");
        let ok = std::fs::create_dir(&probe).is_ok()
            && std::fs::write(
                probe.join(limit_file(controller, v2)),
                probe_cap(controller),
            )
            .is_ok();
        let _ = std::fs::remove_dir(&probe);
        // Made again by the first sandbox that needs it.
        let _ = std::fs::remove_dir(&dir);
        if ok {
            return Some(dir);
        }
    }
    None
}

/// A cap to try in a probe group of `controller`.
fn probe_cap(controller: &str) -> &'static str {
    if controller == "memory" {
        "8388608"
    } else {
        "8"
    }
}

/// The file that caps a group of `controller`.
fn limit_file(controller: &str, v2: bool) -> &'static str {
    match (controller, v2) {
        ("memory", false) => "memory.limit_in_bytes",
        ("memory", true) => "memory.max",
        _ => "pids.max",
    }
}

/// Whether `base` is in a cgroup v2 hierarchy (it has `cgroup.controllers`
/// above it) rather than a v1 one.
fn is_v2(base: &Path) -> bool {
    base.parent()
        .is_some_and(|p| p.join("cgroup.controllers").exists())
}

/// Removes the groups that a referee killed by SIGKILL (which cleans up
/// nothing) left in `base`: `referee.PID` folders whose process is gone,
/// with their (by then empty) per-bot groups. The kernel refuses to remove
/// a group that still has a process.
fn sweep_stale(base: &Path) {
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

/// Removes this run's folders of per-bot groups (at the run's end; the
/// kernel refuses while a bot still runs).
pub(crate) fn remove_bases(bases: &[&Option<PathBuf>]) {
    for base in bases.iter().copied().flatten() {
        let _ = std::fs::remove_dir(base);
    }
}

/// One bot's group of one controller, removed when dropped (once its
/// processes are gone).
#[derive(Debug)]
pub(crate) struct Cgroup {
    dir: PathBuf,
    memory: bool,
}

impl Cgroup {
    /// Makes the next bot group under `base` with `limit` in its cap file:
    /// a number of processes, or of bytes for a `memory` group.
    pub(crate) fn new(base: &Path, memory: bool, limit: u64) -> std::io::Result<Cgroup> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = base.join(format!("bot{n}"));
        let v2 = is_v2(base);
        let controller = if memory { "memory" } else { "pids" };
        // The folder of a run's groups goes when its last bot does (see
        // `Drop`): made again when needed.
        if std::fs::create_dir(&dir).is_err() {
            let _ = std::fs::create_dir_all(base);
            if v2 {
                let _ = std::fs::write(
                    base.join("cgroup.subtree_control"),
                    format!("+{controller}"),
                );
            }
            std::fs::create_dir(&dir)?;
        }
        let group = Cgroup { dir, memory };
        std::fs::write(
            group.dir.join(limit_file(controller, v2)),
            limit.to_string(),
        )?;
        if memory && v2 {
            // Swap would let it hold more than its cap; not every kernel has it.
            let _ = std::fs::write(group.dir.join("memory.swap.max"), "0");
        }
        Ok(group)
    }

    /// The `cgroup.procs` file a process writes `0` into to join.
    pub(crate) fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// How many times the kernel killed a process of this memory group for
    /// going over its cap.
    pub(crate) fn oom_kills(&self) -> u64 {
        if !self.memory {
            return 0;
        }
        ["memory.events", "memory.oom_control"]
            .iter()
            .filter_map(|f| std::fs::read_to_string(self.dir.join(f)).ok())
            .flat_map(|t| {
                t.lines()
                    .filter_map(|l| l.strip_prefix("oom_kill "))
                    .filter_map(|n| n.trim().parse::<u64>().ok())
                    .collect::<Vec<_>>()
            })
            .max()
            .unwrap_or(0)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The kernel refuses while processes remain; they are being reaped
        // by then, so a few tries suffice.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                // The run's folder too, unless another bot runs.
                if let Some(base) = self.dir.parent() {
                    let _ = std::fs::remove_dir(base);
                }
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}
