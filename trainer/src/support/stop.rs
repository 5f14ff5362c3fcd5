//! Stop requests for the commands that produce work: the first SIGINT (Ctrl-C) or SIGTERM
//! (`timeout`, a batch system, `kill`) asks the command to stop once the unit of work in progress
//! is saved, so nothing it has already computed is thrown away:
//! - the training run finishes and saves the epoch in progress (`--resume auto` continues there);
//! - `bootstrap` writes the replay chunk in progress;
//! - a self-play worker pushes the batch of games in progress;
//! - a train worker checkpoints and publishes the steps trained since its last publish, and
//!   removes its heartbeat.
//!
//! The handler then falls back to the default action, so a second signal stops the process at
//! once (losing only that unit, as a kill does).
//!
//! The handler only records the signal in two atomics and writes a fixed line with `write(2)`:
//! nothing else is safe inside a signal handler. The commands ask `requested()` (or read `flag()`)
//! between units; `main` installs the handler for these commands only and exits with 128 + the
//! signal's number, as a shell reports a process stopped by it, so a script does not go on as if
//! the command had finished.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The signal that asked for a stop (0: none yet).
static REQUESTED: AtomicI32 = AtomicI32::new(0);
/// Set with `REQUESTED`, for the loops that take a stop flag (the distributed workers).
static STOP: AtomicBool = AtomicBool::new(false);

const NOTICE: &[u8] =
    b"\ntrainer: stop requested: the work in progress is finished and saved first \
(a second signal stops at once, losing it)\n";

extern "C" fn on_signal(signal: libc::c_int) {
    REQUESTED.store(signal, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
    // SAFETY: write(2) is async-signal-safe; the buffer is a static of the given length.
    unsafe {
        libc::write(2, NOTICE.as_ptr().cast(), NOTICE.len());
    }
}

/// Installs the handler for SIGINT and SIGTERM, once for the process (each fires once:
/// SA_RESETHAND puts the default action back for the next signal).
pub fn install() -> anyhow::Result<()> {
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" start; the handler is an
        // `extern "C" fn(c_int)` that touches only an atomic and write(2).
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESETHAND | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            anyhow::bail!(
                "installing the stop handler for signal {signal}: {}",
                std::io::Error::last_os_error()
            );
        }
    }
    Ok(())
}

/// The signal that asked the run to stop, if one has.
pub fn requested() -> Option<i32> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// The stop request as a flag, set by the same signals as `requested()`.
pub fn flag() -> &'static AtomicBool {
    &STOP
}

/// The name a user knows a stop signal by.
pub fn name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}
