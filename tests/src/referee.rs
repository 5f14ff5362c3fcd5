//! Harness for the tournament tests: locates the release binaries (`fivezero-tools`,
//! `pbrain-faulty`, `pbrain-fivezero`), runs `fivezero-tools tournament` with a hard wall-clock
//! cap (a hung manager fails the test instead of hanging the suite), optionally signals it
//! mid-run as a user's Ctrl-C would, and reads its JSON summary.
//!
//! Drives binaries only; depends on no workspace crate's internals.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where the release binaries are: `$FIVEZERO_BIN_DIR`, else `<workspace>/target/release`.
pub fn bin_dir() -> PathBuf {
    match std::env::var_os("FIVEZERO_BIN_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release"),
    }
}

/// Path of a release binary; panics with the build command when it is missing.
pub fn bin(name: &str) -> PathBuf {
    let p = bin_dir().join(name);
    assert!(
        p.is_file(),
        "{} not found: run `cargo build --release --workspace --bins` (or `make build`) first, \
         or point FIVEZERO_BIN_DIR at the binaries",
        p.display()
    );
    p
}

/// A `--engine` spec for `pbrain-faulty` in the given mode, with extra `arg=` pairs.
pub fn faulty(name: &str, mode: &str, extra: &[&str]) -> String {
    let mut s = format!(
        "cmd={},name={name},arg=--mode,arg={mode}",
        bin("pbrain-faulty").display()
    );
    for a in extra {
        s.push_str(",arg=");
        s.push_str(a);
    }
    s
}

/// What one tournament run produced.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// The `--json` summary (Null when the run failed before writing it).
    pub json: serde_json::Value,
    /// The `--pgn` record file.
    pub records: String,
    /// The `--log` wire log (every line to and from the engines), for failure messages.
    pub wire: String,
    _dir: tempfile::TempDir,
}

impl Run {
    /// The summary entry of engine `name`.
    pub fn engine(&self, name: &str) -> &serde_json::Value {
        self.json["engines"]
            .as_array()
            .and_then(|v| v.iter().find(|e| e["name"] == name))
            .unwrap_or_else(|| panic!("no engine {name} in {}", self.json))
    }

    /// Forfeits of engine `name` for `reason` (0 when absent).
    pub fn forfeits(&self, name: &str, reason: &str) -> u64 {
        self.engine(name)["forfeits"][reason].as_u64().unwrap_or(0)
    }
}

/// Runs `fivezero-tools tournament <args> --json F --pgn F --quiet`, killed after `cap`.
pub fn tournament(args: &[String], cap: Duration) -> Run {
    tournament_signalled(args, cap, &[])
}

/// Reads the `--json` summary now (Null while it is missing or unreadable).
fn read_json(path: &Path) -> serde_json::Value {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// As [`tournament`], but once the summary shows two finished games, sends `signals` to the
/// manager one after the other (a user's Ctrl-C, a second Ctrl-C, a SIGTERM).
pub fn tournament_signalled(args: &[String], cap: Duration, signals: &[libc::c_int]) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    let (json, pgn) = (
        dir.path().join("summary.json"),
        dir.path().join("games.pgn"),
    );
    let mut command = Command::new(bin("fivezero-tools"));
    // SAFETY: the closure runs in the forked child before exec and calls only signal(2), which
    // is async-signal-safe. Why: a suite started in the background of a script (`make test &`)
    // inherits SIGINT ignored, and the manager rightly keeps an ignored SIGINT ignored; the
    // manager these tests run is the one a user starts from a terminal.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = command
        .arg("tournament")
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg("--pgn")
        .arg(&pgn)
        .arg("--log")
        .arg(dir.path().join("wire.log"))
        .arg("--quiet")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fivezero-tools");
    let start = Instant::now();
    let (mut out, mut err) = (
        child.stdout.take().expect("stdout"),
        child.stderr.take().expect("stderr"),
    );
    let out_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let mut pending = signals.iter();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        // The summary is read only while a signal waits for the second finished game.
        let due = pending.len() > 0
            && (pending.len() < signals.len()
                || read_json(&json)["games_played"].as_u64() >= Some(2));
        if due && let Some(&sig) = pending.next() {
            let pid = libc::pid_t::try_from(child.id()).expect("pid");
            // SAFETY: kill(2) on our own child's pid; no memory involved.
            assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill({pid}, {sig})");
            // A user's second Ctrl-C comes after the first was handled, not with it.
            std::thread::sleep(Duration::from_millis(50));
        }
        if start.elapsed() > cap {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fivezero-tools tournament {args:?} still running after {cap:?}: hung");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let json = read_json(&json);
    let records = std::fs::read_to_string(&pgn).unwrap_or_default();
    let wire = std::fs::read_to_string(dir.path().join("wire.log")).unwrap_or_default();
    Run {
        code: status.code(),
        stdout: out_t.join().unwrap_or_default(),
        stderr: err_t.join().unwrap_or_default(),
        json,
        records,
        wire,
        _dir: dir,
    }
}

/// Turns `&str` literals into the owned argument list `tournament` takes.
pub fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}
