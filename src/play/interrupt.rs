//! Interruption: Ctrl-C, SIGTERM or SIGHUP stop a run cleanly.
//!
//! [`install`] (called by the command line for the commands that run bots)
//! starts a thread that waits for those signals. On the first one it
//! records the signal, kills the process group of every bot alive (so that
//! a bot ignoring signals or its closed stdin cannot outlive referee), and
//! refuses to start new bots. Runs notice [`interrupted`] between games:
//! games already finished are kept (written to disk by then), the games in
//! progress are dropped, as their bots were killed by the interruption, not
//! by their own doing. A second signal ends referee at once.

use std::sync::atomic::{AtomicI32, Ordering};

use crate::bot::groups;

/// The signal that interrupted the run (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signal that interrupted this run, if any.
pub fn interrupted() -> Option<i32> {
    match SIGNAL.load(Ordering::Acquire) {
        0 => None,
        s => Some(s),
    }
}

/// The exit code for an interruption by `signal`: 128 + its number (130
/// for SIGINT, 143 for SIGTERM, 129 for SIGHUP), as shells report it.
pub fn exit_code(signal: i32) -> u8 {
    (128 + signal).clamp(0, 255) as u8
}

/// The signal's name, for messages.
pub fn signal_name(signal: i32) -> &'static str {
    match signal {
        signal_hook::consts::SIGINT => "SIGINT (Ctrl-C)",
        signal_hook::consts::SIGTERM => "SIGTERM",
        signal_hook::consts::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// Marks the run interrupted by `signal` and kills every bot alive (what
/// the signal thread does; also for tests and embedders).
pub(crate) fn interrupt(signal: i32) {
    SIGNAL.store(signal, Ordering::Release);
    groups::stop_all();
}

/// Starts waiting for SIGINT, SIGTERM and SIGHUP on a thread of its own;
/// `tell` shows the user what happens. Without it, those signals end
/// referee the default way.
pub fn install(tell: fn(&str)) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if interrupted().is_some() {
                    // Asked twice: stop now, leaving no bot behind.
                    groups::kill_all();
                    std::process::exit(i32::from(exit_code(sig)));
                }
                // Marked first: telling may fail (a closed stderr) and must
                // not keep the run from stopping.
                interrupt(sig);
                tell(&format!(
                    "{} received: stopping the bots; games already finished are kept \
                     (again to quit at once)",
                    signal_name(sig)
                ));
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_128_plus_the_signal() {
        assert_eq!(exit_code(signal_hook::consts::SIGINT), 130);
        assert_eq!(exit_code(signal_hook::consts::SIGTERM), 143);
        assert_eq!(exit_code(signal_hook::consts::SIGHUP), 129);
    }
}
