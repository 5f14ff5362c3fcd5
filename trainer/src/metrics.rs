//! Metrics as JSON lines (`<checkpoint-dir>/metrics.jsonl`): one object per logged training step,
//! per epoch and per evaluation, appended and flushed as they happen. Depends on serde_json only.

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

    /// Appends `value` (an object) with `"kind": kind`.
    pub fn log(&mut self, kind: &str, mut value: serde_json::Value) -> std::io::Result<()> {
        if let Some(o) = value.as_object_mut() {
            o.insert("kind".into(), kind.into());
        }
        let mut line = value.to_string();
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }
}
