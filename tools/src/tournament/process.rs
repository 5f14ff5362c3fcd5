//! One running engine: child process in its own process group, a reader thread per output
//! stream feeding a channel (so waits have exact deadlines), a memory sampler thread, and
//! shutdown that never hangs (END, grace period, then SIGKILL to the whole group).
//!
//! Knows nothing of games or rules; speaks lines, not protocol semantics. Depends on
//! `spec`, `log` and `memory` of this module tree, std, libc and crossbeam-channel.

use std::io::{BufWriter, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::log::Logger;
use super::memory;
use super::spec::EngineSpec;

/// What the reader thread saw on the engine's stdout.
#[derive(Debug)]
enum Event {
    Line(String, Instant),
    Eof,
}

/// The result of waiting for one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recv {
    /// A non-empty line and when it arrived.
    Line(String, Instant),
    /// stdout closed: the engine exited or crashed.
    Eof,
    Timeout,
}

/// How an engine left at shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Exited by itself within the grace period after END.
    Clean,
    /// Ignored END (or hung) and was killed.
    Killed,
}

pub struct EngineProcess {
    pub name: String,
    child: Child,
    stdin: Option<BufWriter<ChildStdin>>,
    rx: Receiver<Event>,
    log: Logger,
    eof: bool,
    /// SIGSTOPped (`--suspend`); shared with the memory sampler, which skips a stopped tree: it
    /// cannot allocate, and reading smaps_rollup costs the manager's CPU (milliseconds per
    /// read) that the thinking engines need.
    suspended: Arc<AtomicBool>,
    crlf: bool,
    mem_peak: Arc<AtomicU64>,
    mem_stop: Arc<AtomicBool>,
}

/// Memory sampling period: fine enough to catch a table allocation (a move's own check after
/// the reply catches the rest).
const MEM_POLL: Duration = Duration::from_millis(25);
/// Reading smaps_rollup walks every mapping of the tree: about 4 ms of kernel time for an
/// engine with ONNX Runtime loaded (AMD EPYC), so at 25 ms four samplers took half a core from
/// the engines on a 2-core machine. The sampler waits this many times its last read, at least
/// MEM_POLL, which caps it near 5% of a core per engine.
const MEM_POLL_COST_FACTOR: u32 = 19;

/// The engine's command: piped stdio, its own process group (so the whole tree can be
/// signalled), the spec's folder and environment.
fn command(spec: &EngineSpec) -> Command {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(&spec.cmd);
    cmd.args(&spec.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(dir) = &spec.dir {
        cmd.current_dir(dir);
    }
    for (k, v) in &spec.env {
        cmd.env(k, v);
    }
    cmd
}

/// A named thread running `f`.
fn spawn_thread(label: String, f: Box<dyn FnOnce() + Send>) -> Result<(), String> {
    thread::Builder::new()
        .name(label)
        .spawn(f)
        .map(drop)
        .map_err(|e| format!("thread: {e}"))
}

/// The memory sampler thread's view of one engine: polls the private memory of its process tree
/// into `peak` until `stop`, skipping while the engine is `suspended`.
struct MemorySampler {
    pid: u32,
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    suspended: Arc<AtomicBool>,
}

impl MemorySampler {
    fn run(self) {
        while !self.stop.load(Ordering::Relaxed) {
            if self.suspended.load(Ordering::Relaxed) {
                thread::sleep(MEM_POLL);
                continue;
            }
            let read_at = Instant::now();
            match memory::tree_private_bytes(self.pid) {
                Some(b) => {
                    self.peak.fetch_max(b, Ordering::Relaxed);
                }
                None => break,
            }
            thread::sleep(MEM_POLL.max(read_at.elapsed() * MEM_POLL_COST_FACTOR));
        }
    }
}

impl EngineProcess {
    /// Starts the engine with piped stdio in its own process group.
    pub fn spawn(spec: &EngineSpec, log: Logger, crlf: bool) -> Result<Self, String> {
        let mut child = command(spec)
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", spec.cmd.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout pipe")?;
        let stderr = child.stderr.take().ok_or("no stderr pipe")?;
        let stdin = child.stdin.take().map(BufWriter::new);
        let (tx, rx) = crossbeam_channel::unbounded();
        let name = spec.name.clone();
        spawn_thread(
            format!("{name}-stdout"),
            Box::new(move || {
                split_lines(stdout, |line| {
                    tx.send(Event::Line(line, Instant::now())).is_ok()
                });
                let _ = tx.send(Event::Eof);
            }),
        )?;
        let (log2, name2) = (log.clone(), name.clone());
        spawn_thread(
            format!("{name}-stderr"),
            Box::new(move || {
                // Drained so a chatty engine never blocks on a full pipe.
                split_lines(stderr, |line| {
                    log2.line(&name2, "stderr", &line);
                    true
                })
            }),
        )?;
        let (mem_peak, mem_stop) = (
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let suspended = Arc::new(AtomicBool::new(false));
        let pid = child.id();
        let sampler = MemorySampler {
            pid,
            peak: mem_peak.clone(),
            stop: mem_stop.clone(),
            suspended: suspended.clone(),
        };
        spawn_thread(format!("{name}-mem"), Box::new(move || sampler.run()))?;
        log.line(
            &name,
            "info",
            &format!("started pid {pid}: {}", spec.cmd.display()),
        );
        Ok(Self {
            name,
            child,
            stdin,
            rx,
            log,
            eof: false,
            suspended,
            crlf,
            mem_peak,
            mem_stop,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// False once stdout closed or the process exited.
    pub fn is_alive(&mut self) -> bool {
        !self.eof && matches!(self.child.try_wait(), Ok(None))
    }

    /// Writes every line of `text` (multi-line commands joined by '\n') and flushes; returns the
    /// instant right after the flush, which is when the engine's clock starts.
    pub fn send(&mut self, text: &str) -> Result<Instant, String> {
        let term = if self.crlf { "\r\n" } else { "\n" };
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        for line in text.split('\n') {
            self.log.line(&self.name, "<", line);
            stdin
                .write_all(line.as_bytes())
                .map_err(|e| format!("write: {e}"))?;
            stdin
                .write_all(term.as_bytes())
                .map_err(|e| format!("write: {e}"))?;
        }
        stdin.flush().map_err(|e| format!("write: {e}"))?;
        Ok(Instant::now())
    }

    /// Waits for the next line until `deadline`.
    pub fn recv(&mut self, deadline: Instant) -> Recv {
        if self.eof {
            return Recv::Eof;
        }
        let timeout = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(timeout) {
            Ok(Event::Line(l, t)) => {
                self.log.line(&self.name, ">", &l);
                Recv::Line(l, t)
            }
            Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                self.log.line(&self.name, "info", "stdout closed");
                Recv::Eof
            }
            Err(RecvTimeoutError::Timeout) => Recv::Timeout,
        }
    }

    /// Drops lines already queued (stale output of an earlier game).
    pub fn drain(&mut self) {
        while let Ok(ev) = self.rx.try_recv() {
            match ev {
                Event::Line(l, _) => self.log.line(&self.name, "stale", &l),
                Event::Eof => self.eof = true,
            }
        }
    }

    /// Stops the whole process group (GomocupJudge: no thinking on the opponent's time).
    pub fn suspend(&mut self) {
        if !self.suspended.load(Ordering::Relaxed) && self.signal(libc::SIGSTOP) {
            self.suspended.store(true, Ordering::Relaxed);
        }
    }

    pub fn resume(&mut self) {
        if self.suspended.load(Ordering::Relaxed) {
            self.signal(libc::SIGCONT);
            self.suspended.store(false, Ordering::Relaxed);
        }
    }

    fn signal(&self, sig: libc::c_int) -> bool {
        let Ok(pgid) = libc::pid_t::try_from(self.child.id()) else {
            return false;
        };
        // SAFETY: kill(2) with a negative pid signals our child's process group; no memory involved.
        unsafe { libc::kill(-pgid, sig) == 0 }
    }

    /// Peak summed private memory of the process tree seen by the sampler, in bytes.
    pub fn peak_memory(&self) -> u64 {
        self.mem_peak.load(Ordering::Relaxed)
    }

    /// Samples the tree now (after a move, as GomocupJudge does) and returns the current value.
    pub fn memory_now(&self) -> u64 {
        let now = memory::tree_private_bytes(self.child.id()).unwrap_or(0);
        self.mem_peak.fetch_max(now, Ordering::Relaxed);
        now
    }

    /// Peak resident set of the main process (VmHWM), if still readable.
    pub fn peak_rss(&self) -> Option<u64> {
        memory::vm_hwm_bytes(self.child.id())
    }

    /// Exit status text, if the process has exited.
    pub fn exit_status(&mut self) -> Option<String> {
        // A crashed engine closes stdout slightly before it is reapable.
        for _ in 0..20 {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st.to_string());
            }
            thread::sleep(Duration::from_millis(5));
        }
        None
    }

    /// Kills the process group at once and reaps the child.
    pub fn kill(&mut self) {
        self.mem_stop.store(true, Ordering::Relaxed);
        if matches!(self.child.try_wait(), Ok(None)) {
            self.signal(libc::SIGKILL);
            self.log.line(&self.name, "info", "killed");
        }
        let _ = self.child.wait();
        self.stdin = None;
        self.eof = true;
    }

    /// Sends END, closes stdin, waits up to `grace`, then kills the group.
    pub fn quit(mut self, grace: Duration) -> Exit {
        self.resume();
        let _ = self.send("END");
        self.stdin = None;
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                self.mem_stop.store(true, Ordering::Relaxed);
                // Children of the engine that outlived it are still ours to stop.
                self.signal(libc::SIGKILL);
                return Exit::Clean;
            }
            thread::sleep(Duration::from_millis(5));
        }
        self.log.line(&self.name, "info", "ignored END");
        self.kill();
        Exit::Killed
    }
}

impl Drop for EngineProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Feeds lines (CR, LF or CRLF terminated, via the protocol crate's splitter) to `sink` until
/// end of stream or `sink` returns false. An over-long line becomes a marker that no parser
/// accepts, so it counts as garbled output rather than vanishing.
fn split_lines(r: impl Read, mut sink: impl FnMut(String) -> bool) {
    for item in protocol::read_lines(r) {
        let text = match item {
            Ok(l) => l.trim().to_string(),
            Err(protocol::LineError::TooLong(e)) => {
                format!("<line of {} bytes over the cap>", e.len)
            }
            Err(protocol::LineError::Io(_)) => break,
        };
        if !text.is_empty() && !sink(text) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_crlf_lf_cr() {
        let mut got = vec![];
        split_lines(&b"OK\r\n7,7\n8,8\rMESSAGE hi\r\n\r\ntail"[..], |l| {
            got.push(l);
            true
        });
        assert_eq!(got, vec!["OK", "7,7", "8,8", "MESSAGE hi", "tail"]);
    }
}
