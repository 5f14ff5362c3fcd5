//! The tournament's wire log: every line sent to and read from each engine, stamped with
//! milliseconds since start. Optional (`--log FILE`); a disabled logger costs a branch.
//!
//! Depends on std only.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Clone)]
pub struct Logger {
    inner: Option<Arc<Mutex<BufWriter<File>>>>,
    start: Instant,
}

impl Logger {
    pub fn disabled() -> Self {
        Self {
            inner: None,
            start: Instant::now(),
        }
    }

    pub fn to_file(path: &std::path::Path) -> Result<Self, String> {
        let f = File::create(path).map_err(|e| format!("log file `{}`: {e}", path.display()))?;
        Ok(Self {
            inner: Some(Arc::new(Mutex::new(BufWriter::new(f)))),
            start: Instant::now(),
        })
    }

    /// `dir` is `<` (to the engine), `>` (from it), `stderr`, `info`, ...
    pub fn line(&self, who: &str, dir: &str, text: &str) {
        if let Some(w) = &self.inner {
            let ms = self.start.elapsed().as_secs_f64() * 1000.0;
            if let Ok(mut w) = w.lock() {
                let _ = writeln!(w, "{ms:10.3} {who} {dir} {text}");
            }
        }
    }

    pub fn flush(&self) {
        if let Some(w) = &self.inner
            && let Ok(mut w) = w.lock()
        {
            let _ = w.flush();
        }
    }
}
