//! Metrics as JSON lines (`<checkpoint-dir>/metrics.jsonl`): one object per training process's
//! start (its settings), per logged training step, per epoch and per evaluation (and one per
//! bootstrap), appended and flushed as they happen,
//! each stamped with `time_s` (seconds since the UNIX epoch), `process_start_s` (when the writing
//! process first opened one) and, on Unix, `cpu_s` (that process's CPU seconds so far, every thread
//! counted), so a curve can be drawn against the CPU time a run took, across resumes and beside
//! other work. Depends on serde_json and libc.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

pub struct Metrics {
    file: File,
}

/// When this process first opened a metrics file: the same for every `Metrics` it opens, so a
/// curve tells processes apart (and a second run in one process continues its CPU count).
fn process_start_s() -> f64 {
    static START: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *START.get_or_init(unix_now_s)
}

fn unix_now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// This process's CPU time (user + system, all threads) in seconds.
#[cfg(unix)]
fn process_cpu_s() -> Option<f64> {
    // SAFETY: getrusage only writes the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(s(usage.ru_utime) + s(usage.ru_stime))
}

#[cfg(not(unix))]
fn process_cpu_s() -> Option<f64> {
    None
}

impl Metrics {
    pub fn open(path: &Path) -> std::io::Result<Metrics> {
        Ok(Metrics {
            file: OpenOptions::new().create(true).append(true).open(path)?,
        })
    }

    /// Appends `value` (an object) with `"kind": kind`, `"time_s"`, `"process_start_s"` and
    /// `"cpu_s"`.
    pub fn log(&mut self, kind: &str, mut value: serde_json::Value) -> std::io::Result<()> {
        if let Some(o) = value.as_object_mut() {
            o.insert("kind".into(), kind.into());
            o.insert("time_s".into(), unix_now_s().into());
            o.insert("process_start_s".into(), process_start_s().into());
            if let Some(cpu) = process_cpu_s() {
                o.insert("cpu_s".into(), cpu.into());
            }
        }
        let mut line = value.to_string();
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_carry_the_process_and_its_cpu_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.jsonl");
        let mut first = Metrics::open(&path).unwrap();
        first.log("step", serde_json::json!({"step": 1})).unwrap();
        // Some work, so the process's CPU time moves on.
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        // A second file opened by the same process names the same process.
        let mut second = Metrics::open(&path).unwrap();
        second
            .log("epoch", serde_json::json!({"epoch": 1}))
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let records: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(records[0]["kind"], "step");
        assert_eq!(records[1]["kind"], "epoch");
        assert_eq!(records[0]["process_start_s"], records[1]["process_start_s"]);
        assert!(records[0]["time_s"].as_f64().unwrap() > 1.6e9);
        if cfg!(unix) {
            let cpu = |r: &serde_json::Value| r["cpu_s"].as_f64().unwrap();
            assert!(cpu(&records[0]) > 0.0, "{text}");
            assert!(cpu(&records[1]) > cpu(&records[0]), "{text}");
        }
    }
}
