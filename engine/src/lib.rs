//! fivezero's engine library, in dependency order (each module may use only those above it):
//!
//! - `rng`   — the seeded generator (SplitMix64; uniform, normal, gamma, Dirichlet) of the
//!   Zobrist keys, random weights, root noise and, through the trainer, self-play.
//! - `device` — where a network runs (`cpu`, `cuda:N`), with or without an inference runtime.
//! - `game`  — positions, rules, line patterns, renju forbidden points, win check, zobrist.
//! - `notation` — positions and games as text: algebraic (`h8i9`) and `x,y` points, the
//!   tournament's PGN-like records and SGF, replayed on `game` with errors that name the stone.
//! - `openings` — opening files (c-gomoku-cli offsets, absolute, algebraic), validated on `game`:
//!   the tournament manager's and the trainer's evaluation matches read the same files.
//! - `tss`   — threat-space search: VCF/VCT prover, defence search, proof verifier, suites.
//! - `net`   — the network contract (presets, weights, metadata) and the ONNX writer.
//! - `eval`  — the `Evaluator` trait and its implementations: uniform, classical patterns, the
//!   network seam (`Backend`, `NetEvaluator`) with its native and ONNX Runtime backends, and the
//!   hot-swapped `ModelSlot`.
//! - `mcts`  — PUCT tree search over an `Evaluator`: threads, virtual loss, tree reuse, tactics.
//! - `time`  — the time manager: turns protocol limits into a per-move budget.
//! - `brain` — the Engine API the pbrain binary drives: position, limits, think, callbacks.
//! - `bench` — the fixed-position bench and its signature (`pbrain-fivezero bench`).
//!
//! Search code (`game`, `tss`, `mcts`) never names an inference runtime; it sees positions and
//! the `Evaluator` trait only. The compiler holds it to that: ONNX Runtime (`eval::onnx`,
//! `eval::onnx_evaluator`, the `ort` crate) sits behind the `onnx` feature (on by default), and
//! `cargo check -p engine --no-default-features` (run by `make test`) builds everything else.

/// Serialize and deserialize a small vocabulary type as its text (`Display` / `FromStr`), so a
/// settings file spells it exactly as the command line does: one grammar per type.
#[macro_export]
macro_rules! serde_via_str {
    ($t:ty) => {
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = <String as serde::Deserialize>::deserialize(d)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

pub mod bench;
pub mod brain;
pub mod device;
pub mod eval;
pub mod game;
pub mod mcts;
pub mod net;
pub mod notation;
pub mod openings;
pub mod rng;
pub mod time;
pub mod tss;
