//! CPU affinity: each worker, and the bot processes it starts, on one CPU.
//!
//! A reply from a bot on another core than the referee's thread costs a
//! cross-core wake-up per move (tens of microseconds); on one core the
//! referee and the bot hand over in a few (docs/performance.md). Bots
//! inherit the affinity of the thread that starts them, so pinning the
//! worker thread pins its bots too. The CPUs are taken round-robin from
//! those referee may use, starting at an offset drawn from the process id
//! so that several referee runs at once spread over the machine.

/// The CPUs for `workers` workers: one each, round-robin over the CPUs this
/// process may run on. Empty when affinity is not available (not Linux, or
/// the set cannot be read), or when there are more workers than CPUs, where
/// pinning would only take the scheduler's choices away.
pub fn plan(workers: usize) -> Vec<usize> {
    let allowed = allowed_cpus();
    if allowed.is_empty() || workers > allowed.len() {
        return Vec::new();
    }
    let offset = std::process::id() as usize % allowed.len();
    (0..workers)
        .map(|w| allowed[(offset + w) % allowed.len()])
        .collect()
}

/// The CPUs this process may run on.
#[cfg(target_os = "linux")]
pub(crate) fn allowed_cpus() -> Vec<usize> {
    use nix::sched::{sched_getaffinity, CpuSet};
    use nix::unistd::Pid;
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The CPUs this process may run on (none known off Linux).
#[cfg(not(target_os = "linux"))]
pub(crate) fn allowed_cpus() -> Vec<usize> {
    Vec::new()
}

/// Pins the calling thread to `cpu`; a failure leaves it unpinned (the
/// run is only slower, never wrong).
#[cfg(target_os = "linux")]
pub fn pin_current_thread(cpu: usize) {
    use nix::sched::{sched_setaffinity, CpuSet};
    use nix::unistd::Pid;
    let mut set = CpuSet::new();
    if set.set(cpu).is_ok() {
        let _ = sched_setaffinity(Pid::from_raw(0), &set);
    }
}

/// Does nothing off Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn pin_current_thread(_cpu: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_gives_distinct_allowed_cpus_or_nothing() {
        let allowed = allowed_cpus();
        let p = plan(allowed.len());
        if !allowed.is_empty() {
            let mut sorted = p.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, allowed);
        }
        assert!(plan(allowed.len() + 1).is_empty());
    }
}
