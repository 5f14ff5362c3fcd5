//! Ctrl-C (SIGINT) and SIGTERM during a tournament. The first one asks the scheduler to stop:
//! no new games start, the games in flight finish (the engines live in their own process groups,
//! so a terminal's Ctrl-C does not reach them), and the report and `--json` summary cover every
//! finished game. The handler then restores the default action, so a second signal ends the
//! process at once; the summary, rewritten after every game, still holds what was finished.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    REQUESTED.store(true, Ordering::SeqCst);
    // SAFETY: signal(2) is async-signal-safe; it only resets these two dispositions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
    }
}

/// Installs the handler for SIGINT and SIGTERM. A signal that was ignored when the tournament
/// started (`nohup`, a background job of a script) stays ignored.
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic and calls signal(2), both async-signal-safe.
        unsafe {
            let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            if libc::signal(sig, handler) == libc::SIG_IGN {
                libc::signal(sig, libc::SIG_IGN);
            }
        }
    }
}

/// Whether a stop was asked for since `install`.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
