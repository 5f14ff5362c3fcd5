//! Checksummed, atomically written files: `magic (4) | version u32 | payload length u64 |
//! crc32 u32 | payload`, little-endian; payload is bincode 2 (serde). Written to a temporary file
//! in the same folder, fsynced, renamed over the target, then the folder fsynced, so a reader sees
//! the old file or the new one, never half of one. Used by the replay chunks and the checkpoints.
//!
//! Depends on serde/bincode/crc32fast, and on the engine's atomic file write.

use std::fs;
use std::path::{Path, PathBuf};

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

/// Why a frame (the header + payload of [`encode`]) was refused; the distributed queue counts
/// these by kind, the file readers report them with the file's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("truncated: {0} bytes, header needs {HEADER}")]
    Truncated(usize),
    #[error("bad magic {got:?}, expected {want:?}")]
    Magic { got: [u8; 4], want: [u8; 4] },
    #[error("format version {got}, this build reads {want}")]
    Version { got: u32, want: u32 },
    #[error("payload of {len} bytes is over the {max}-byte cap")]
    TooLarge { len: u64, max: u64 },
    #[error("truncated or padded: header says {header} payload bytes, got {got}")]
    Length { header: u64, got: u64 },
    #[error("checksum mismatch (crc32 {got:08x}, header {header:08x})")]
    Checksum { got: u32, header: u32 },
    #[error("decoding: {0}")]
    Decode(String),
}

/// `magic | version | length | crc32 | bincode payload`: the one framing of every stored or sent
/// value (replay chunks, checkpoints, queue payloads).
pub fn encode<T: Serialize>(magic: [u8; 4], version: u32, value: &T) -> Result<Vec<u8>, String> {
    let payload = bincode::serde::encode_to_vec(value, bincode::config::standard())
        .map_err(|e| e.to_string())?;
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(&magic);
    bytes.extend_from_slice(&version.to_le_bytes());
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    Ok(bytes)
}

/// Checks a frame of [`encode`] (magic, version, size cap, exact length, crc32) before decoding
/// it; bincode never sees bytes that failed a check.
pub fn decode<T: DeserializeOwned>(
    bytes: &[u8],
    magic: [u8; 4],
    version: u32,
    max_payload: u64,
) -> Result<T, FrameError> {
    if bytes.len() < HEADER {
        return Err(FrameError::Truncated(bytes.len()));
    }
    let got_magic: [u8; 4] = bytes[0..4].try_into().unwrap_or_default();
    if got_magic != magic {
        return Err(FrameError::Magic {
            got: got_magic,
            want: magic,
        });
    }
    let v = u32::from_le_bytes(bytes[4..8].try_into().unwrap_or_default());
    if v != version {
        return Err(FrameError::Version {
            got: v,
            want: version,
        });
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().unwrap_or_default());
    let crc = u32::from_le_bytes(bytes[16..20].try_into().unwrap_or_default());
    if len > max_payload {
        return Err(FrameError::TooLarge {
            len,
            max: max_payload,
        });
    }
    if (bytes.len() - HEADER) as u64 != len {
        return Err(FrameError::Length {
            header: len,
            got: (bytes.len() - HEADER) as u64,
        });
    }
    let payload = &bytes[HEADER..];
    let got = crc32fast::hash(payload);
    if got != crc {
        return Err(FrameError::Checksum { got, header: crc });
    }
    let (value, used) = bincode::serde::decode_from_slice(payload, bincode::config::standard())
        .map_err(|e| FrameError::Decode(e.to_string()))?;
    if used != payload.len() {
        return Err(FrameError::Decode(format!(
            "{} trailing payload bytes",
            payload.len() - used
        )));
    }
    Ok(value)
}

/// The files `<prefix><N><suffix>` of `dir` (checkpoints, replay chunks, ingest ledgers), by
/// number, ascending.
pub fn numbered_files(
    dir: &Path,
    prefix: &str,
    suffix: &str,
) -> std::io::Result<Vec<(u64, PathBuf)>> {
    let mut v: Vec<(u64, PathBuf)> = fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            let n = p
                .file_name()?
                .to_str()?
                .strip_prefix(prefix)?
                .strip_suffix(suffix)?
                .parse()
                .ok()?;
            Some((n, p))
        })
        .collect();
    v.sort();
    Ok(v)
}

/// Serializes `value` and writes it atomically to `path`.
pub fn write<T: Serialize>(
    path: &Path,
    magic: [u8; 4],
    version: u32,
    value: &T,
) -> Result<(), StoreError> {
    let bytes = encode(magic, version, value).map_err(|why| StoreError::Encode {
        file: name(path),
        why,
    })?;
    write_atomic(path, &bytes).map_err(|source| StoreError::Io {
        file: name(path),
        source,
    })
}

/// The format version in the header of the file at `path`, when it starts with `magic`; lets a
/// reader choose the layout of an older version before it decodes.
pub fn version_of(path: &Path, magic: [u8; 4]) -> Option<u32> {
    use std::io::Read;
    let mut head = [0u8; 8];
    fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    (head[0..4] == magic).then(|| u32::from_le_bytes([head[4], head[5], head[6], head[7]]))
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
    decode(&bytes, magic, version, MAX_PAYLOAD).map_err(|e| StoreError::Corrupt {
        file: name(path),
        why: e.to_string(),
    })
}

/// The engine's atomic file write (one implementation for models, checkpoints and replay chunks).
pub use engine::net::write_atomic;
