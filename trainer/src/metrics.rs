//! Metrics as JSON lines (`<checkpoint-dir>/metrics.jsonl`): one object per logged training step,
//! per epoch and per evaluation (and one per bootstrap), appended and flushed as they happen,
//! each stamped with `time_s` (seconds since the UNIX epoch) so a curve can be drawn against the
//! time a run took. Depends on serde_json only.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

pub struct Metrics {
    file: File,
}

impl Metrics {
    pub fn open(path: &Path) -> std::io::Result<Metrics> {
        Ok(Metrics {
            file: OpenOptions::new().create(true).append(true).open(path)?,
        })
    }

    /// Appends `value` (an object) with `"kind": kind` and `"time_s"`.
    pub fn log(&mut self, kind: &str, mut value: serde_json::Value) -> std::io::Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        if let Some(o) = value.as_object_mut() {
            o.insert("kind".into(), kind.into());
            o.insert("time_s".into(), now.into());
        }
        let mut line = value.to_string();
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }
}
