//! fivezero's engine library, in dependency order (each module may use only those above it):
//!
//! - `game`  — positions, rules, line patterns, renju forbidden points, win check, zobrist.
//! - `tss`   — threat-space search: VCF/VCT prover, defence search, proof verifier, suites.
//! - `net`   — the network contract (presets, weights, metadata) and the ONNX writer.
//! - `eval`  — the `Evaluator` trait and its implementations: uniform, classical patterns, the
//!   network seam (`Backend`, `NetEvaluator`) with its ONNX Runtime backend, and the hot-swapped
//!   `ModelSlot`.
//! - `mcts`  — PUCT tree search over an `Evaluator`: threads, virtual loss, tree reuse, tactics.
//! - `time`  — the time manager: turns protocol limits into a per-move budget.
//! - `brain` — the Engine API the pbrain binary drives: position, limits, think, callbacks.
//! - `bench` — the fixed-position bench and its signature (`pbrain-fivezero bench`).
//!
//! Search code (`game`, `tss`, `mcts`) never names an inference runtime; it sees positions and
//! the `Evaluator` trait only.

pub mod game;
pub mod tss;
pub mod net;
pub mod eval;
pub mod mcts;
pub mod time;
pub mod brain;
pub mod bench;
