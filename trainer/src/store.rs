//! Checksummed, atomically written files: `magic (4) | version u32 | payload length u64 |
//! crc32 u32 | payload`, little-endian; payload is bincode 2 (serde). Written to a temporary file
//! in the same folder, fsynced, renamed over the target, then the folder fsynced, so a reader sees
//! the old file or the new one, never half of one. Used by the replay chunks and the checkpoints.
//!
//! Depends on serde/bincode/crc32fast only.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Serialize, de::DeserializeOwned};

const HEADER: usize = 4 + 4 + 8 + 4;
/// Refuse payloads above this (a corrupt length field must not allocate the machine away).
const MAX_PAYLOAD: u64 = 4 << 30;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{file}: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}: {why}")]
    Corrupt { file: String, why: String },
    #[error("{file}: encoding: {why}")]
    Encode { file: String, why: String },
}

fn name(p: &Path) -> String {
    p.display().to_string()
}

/// Serializes `value` and writes it atomically to `path`.
pub fn write<T: Serialize>(
    path: &Path,
    magic: [u8; 4],
    version: u32,
    value: &T,
) -> Result<(), StoreError> {
    let payload =
        bincode::serde::encode_to_vec(value, bincode::config::standard()).map_err(|e| {
            StoreError::Encode {
                file: name(path),
                why: e.to_string(),
            }
        })?;
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(&magic);
    bytes.extend_from_slice(&version.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    write_atomic(path, &bytes).map_err(|source| StoreError::Io {
        file: name(path),
        source,
    })
}

/// Reads and checks a file written by [`write`]; every failure names the file.
pub fn read<T: DeserializeOwned>(
    path: &Path,
    magic: [u8; 4],
    version: u32,
) -> Result<T, StoreError> {
    let bytes = fs::read(path).map_err(|source| StoreError::Io {
        file: name(path),
        source,
    })?;
    let corrupt = |why: String| StoreError::Corrupt {
        file: name(path),
        why,
    };
    if bytes.len() < HEADER {
        return Err(corrupt(format!(
            "truncated: {} bytes, header needs {HEADER}",
            bytes.len()
        )));
    }
    if bytes[0..4] != magic {
        return Err(corrupt(format!(
            "bad magic {:?}, expected {:?}",
            &bytes[0..4],
            magic
        )));
    }
    let v = u32::from_le_bytes(bytes[4..8].try_into().unwrap_or_default());
    if v != version {
        return Err(corrupt(format!(
            "format version {v}, this build reads {version}"
        )));
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().unwrap_or_default());
    let crc = u32::from_le_bytes(bytes[16..20].try_into().unwrap_or_default());
    if len > MAX_PAYLOAD || (bytes.len() - HEADER) as u64 != len {
        return Err(corrupt(format!(
            "truncated or padded: header says {len} payload bytes, file has {}",
            bytes.len() - HEADER
        )));
    }
    let payload = &bytes[HEADER..];
    let got = crc32fast::hash(payload);
    if got != crc {
        return Err(corrupt(format!(
            "checksum mismatch (crc32 {got:08x}, header {crc:08x})"
        )));
    }
    let (value, used) = bincode::serde::decode_from_slice(payload, bincode::config::standard())
        .map_err(|e| corrupt(format!("decoding: {e}")))?;
    if used != payload.len() {
        return Err(corrupt(format!(
            "{} trailing payload bytes",
            payload.len() - used
        )));
    }
    Ok(value)
}

/// tmp file in the same folder + fsync + rename + fsync of the folder.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir: PathBuf = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let file_name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{file_name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        if let Ok(d) = fs::File::open(&dir) {
            let _ = d.sync_all(); // not every filesystem can fsync a folder; the rename stands
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
