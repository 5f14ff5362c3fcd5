//! A brain driven over real pipes: send lines, read replies with a deadline (MESSAGE and DEBUG
//! lines are collected aside, as managers do). Used by the engine protocol tests.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How long a test waits for a reply it is owed before calling the brain hung. Generous: on a
/// loaded two-core CI machine a process start alone has taken seconds. Time limits the engine
/// must keep are asserted separately, against the clock, with their own tolerances.
pub const HUNG: Duration = Duration::from_secs(30);

pub struct Brain {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(String, Instant)>,
    pub messages: Vec<String>,
    /// When each of `messages` left the brain's stdout (read by the pipe thread), for latency figures.
    pub message_times: Vec<Instant>,
}

impl Brain {
    pub fn spawn(path: &Path, args: &[&str]) -> Brain {
        Self::start(Command::new(path).args(args), path)
    }

    /// As [`Brain::spawn`], started in the folder `cwd` (managers start engines from their own).
    pub fn spawn_in(path: &Path, args: &[&str], cwd: &Path) -> Brain {
        Self::start(Command::new(path).args(args).current_dir(cwd), path)
    }

    fn start(command: &mut Command, path: &Path) -> Brain {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", path.display()));
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send((line, Instant::now())).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Brain {
            child,
            stdin,
            lines: rx,
            messages: Vec::new(),
            message_times: Vec::new(),
        }
    }

    /// The brain's process id (to read its memory figures from /proc).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends raw bytes (no line ending added).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin closed");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, line: &str) {
        self.send_raw(format!("{line}\r\n").as_bytes());
    }

    /// The next reply that is not MESSAGE/DEBUG, within `timeout`; `None` on timeout or exit.
    pub fn reply_within(&mut self, timeout: Duration) -> Option<String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((line, at)) => {
                    let upper = line.to_ascii_uppercase();
                    if upper.starts_with("MESSAGE") || upper.starts_with("DEBUG") {
                        self.messages.push(line);
                        self.message_times.push(at);
                        continue;
                    }
                    return Some(line.trim().to_string());
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    return None;
                }
            }
        }
    }

    /// The next reply, which must come within `timeout`.
    pub fn reply(&mut self, timeout: Duration) -> String {
        self.reply_within(timeout)
            .unwrap_or_else(|| panic!("no reply within {timeout:?}"))
    }

    /// Nothing but MESSAGE/DEBUG within `wait`.
    pub fn silent_for(&mut self, wait: Duration) -> bool {
        self.reply_within(wait).is_none()
    }

    /// Closes stdin (EOF).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Kills the process (as a manager does with an engine past its time) and waits for it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the process to exit; true if it did within `timeout`.
    pub fn exits_within(&mut self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

impl Drop for Brain {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Parses a move reply `x,y`.
pub fn parse_move(reply: &str) -> Option<(u32, u32)> {
    let (x, y) = reply.split_once(',')?;
    Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
}
