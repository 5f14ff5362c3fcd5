//! Queue payloads: a game (with its id, worker and the model version that played it) and a
//! published model (weights for tch self-play plus the ONNX file for the engine). Both travel as
//! `store::encode` frames (magic, schema version, length, crc32, bincode) with a size cap, and a
//! decoded game is checked for sense before anyone uses it. Nothing is deserialised unchecked.
//!
//! Depends on `store`, `replay::GameRecord`, `checkpoint::NamedTensor`; never on Redis or tch.

use serde::{Deserialize, Serialize};

use crate::network::checkpoint::NamedTensor;
use crate::support::store::{self, FrameError};
use crate::training::replay::GameRecord;

pub const GAME_MAGIC: [u8; 4] = *b"FZGQ";
pub const GAME_VERSION: u32 = 1;
/// A 32x32 game with full visit lists stays far below this; anything bigger is garbage.
pub const GAME_MAX_BYTES: u64 = 4 << 20;
pub const MODEL_MAGIC: [u8; 4] = *b"FZMQ";
pub const MODEL_VERSION: u32 = 1;
/// The large preset is ~19 MB of f32 weights plus its ONNX copy; Redis caps strings at 512 MB.
pub const MODEL_MAX_BYTES: u64 = 256 << 20;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GamePayload {
    /// `worker:boot:seq`, unique across worker restarts (boot comes from a Redis counter).
    pub game_id: String,
    pub worker_id: String,
    pub model_version: u64,
    pub record: GameRecord,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelPayload {
    pub version: u64,
    pub step: u64,
    pub preset: String,
    pub weights: Vec<NamedTensor>,
    /// The same network as an ONNX file (engine::net contract).
    pub onnx: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    #[error("{0}")]
    Frame(#[from] FrameError),
    #[error("invalid game: {0}")]
    Invalid(String),
    #[error("encoding: {0}")]
    Encode(String),
}

impl PayloadError {
    /// Counter name for the monitor (`rejected_<kind>`).
    pub fn kind(&self) -> &'static str {
        match self {
            PayloadError::Frame(FrameError::Truncated(_)) => "truncated",
            PayloadError::Frame(FrameError::Magic { .. }) => "magic",
            PayloadError::Frame(FrameError::Version { .. }) => "version",
            PayloadError::Frame(FrameError::TooLarge { .. }) => "oversized",
            PayloadError::Frame(FrameError::Length { .. }) => "length",
            PayloadError::Frame(FrameError::Checksum { .. }) => "checksum",
            PayloadError::Frame(FrameError::Decode(_)) => "decode",
            PayloadError::Invalid(_) => "invalid",
            PayloadError::Encode(_) => "encode",
        }
    }
}

pub fn encode_game(g: &GamePayload) -> Result<Vec<u8>, PayloadError> {
    check_game(g)?;
    let bytes = store::encode(GAME_MAGIC, GAME_VERSION, g).map_err(PayloadError::Encode)?;
    if bytes.len() as u64 > GAME_MAX_BYTES {
        return Err(PayloadError::Invalid(format!(
            "{} bytes is over the cap",
            bytes.len()
        )));
    }
    Ok(bytes)
}

pub fn decode_game(bytes: &[u8]) -> Result<GamePayload, PayloadError> {
    let g: GamePayload = store::decode(bytes, GAME_MAGIC, GAME_VERSION, GAME_MAX_BYTES)?;
    check_game(&g)?;
    Ok(g)
}

/// A decoded game must make sense before it reaches the replay store: ids present, moves on the
/// board, one visit list per recorded position, a known outcome.
pub fn check_game(g: &GamePayload) -> Result<(), PayloadError> {
    let bad = |why: String| Err(PayloadError::Invalid(why));
    if g.game_id.is_empty() || g.game_id.len() > 256 || g.worker_id.len() > 128 {
        return bad("game id empty or too long".into());
    }
    let r = &g.record;
    if !(5..=32).contains(&r.board_size) {
        return bad(format!("board size {}", r.board_size));
    }
    let cells = r.board_size as usize * r.board_size as usize;
    if r.moves.len() > cells || r.visits.len() > r.moves.len() {
        return bad(format!(
            "{} moves, {} visit lists on {cells} cells",
            r.moves.len(),
            r.visits.len()
        ));
    }
    if r.moves.iter().any(|&m| m as usize >= cells)
        || r.visits.iter().flatten().any(|&(m, _)| m as usize >= cells)
    {
        return bad("move off the board".into());
    }
    if !(-1..=1).contains(&r.outcome) {
        return bad(format!("outcome {}", r.outcome));
    }
    Ok(())
}

pub fn encode_model(m: &ModelPayload) -> Result<Vec<u8>, PayloadError> {
    store::encode(MODEL_MAGIC, MODEL_VERSION, m).map_err(PayloadError::Encode)
}

pub fn decode_model(bytes: &[u8]) -> Result<ModelPayload, PayloadError> {
    Ok(store::decode(
        bytes,
        MODEL_MAGIC,
        MODEL_VERSION,
        MODEL_MAX_BYTES,
    )?)
}
