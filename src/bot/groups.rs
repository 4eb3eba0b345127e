//! The process groups of every bot alive, so that an interrupted referee
//! can kill them all. [`super::process`] registers each bot's group when it
//! starts it and forgets it before reaping the leader; the interruption
//! (`play::interrupt`) stops them all through [`stop_all`]. This module
//! uses neither: both use it, one way.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

/// Every live group id. An id is removed before its leader is reaped, so
/// an id in here always names one of our groups.
static LIVE: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Set once referee is stopping: no new bot may start.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// The registry, locked. A bot's group is pushed under this lock before
/// its spawn returns anything to kill, so that a stop never misses it.
pub(crate) fn live() -> MutexGuard<'static, Vec<i32>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Removes a group (before its leader is reaped).
pub(crate) fn forget(pid: Pid) {
    let mut groups = live();
    if let Some(i) = groups.iter().position(|&g| g == pid.as_raw()) {
        groups.swap_remove(i);
    }
}

/// Whether referee is stopping (no new bot may start).
pub(crate) fn stopping() -> bool {
    STOPPING.load(Ordering::Acquire)
}

/// Refuses every new bot from now on and kills the group of every bot
/// alive; returns how many there were.
pub(crate) fn stop_all() -> usize {
    STOPPING.store(true, Ordering::Release);
    kill_all()
}

/// Kills the process group of every bot alive and returns how many there
/// were. The processes are reaped by their owners.
pub(crate) fn kill_all() -> usize {
    let groups = live();
    for &pgid in groups.iter() {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    groups.len()
}
