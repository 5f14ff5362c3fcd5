//! Skipped, not passed: a test that cannot run on this machine (a server without TLS, say) calls
//! `skip` and returns. libtest has no run-time skip, so the test still counts as passed there;
//! `skip` therefore says so on stderr and appends a line to the skip log, which `make test`
//! prints at the end of the suite as "Skipped (not run here)". CI's summary is that output.

use std::io::Write;
use std::path::PathBuf;

/// Where skipped tests are listed: `FIVEZERO_SKIP_LOG`, or `target/test-skips.log` of the
/// workspace (the file `make test` empties before the suite and prints after it).
pub fn log_path() -> PathBuf {
    match std::env::var_os("FIVEZERO_SKIP_LOG") {
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/test-skips.log"
        )),
    }
}

/// Records that `test` did not run here and why; the caller returns right after.
pub fn skip(test: &str, reason: &str) {
    let line = format!("{test}: {reason}");
    eprintln!("SKIPPED {line}");
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path())
        .and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = written {
        eprintln!("(could not add it to {}: {e})", log_path().display());
    }
}
