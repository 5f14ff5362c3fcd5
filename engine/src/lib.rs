//! fivezero's engine library, in dependency order (each module may use only those above it):
//!
//! - `game`  — positions, rules, line patterns, renju forbidden points, win check, zobrist.
//! - `eval`  — evaluators of positions: the classical pattern evaluator (the no-network fallback).
//! - `time`  — the time manager: turns protocol limits into a per-move budget.
//! - `brain` — the Engine API the pbrain binary drives: position, limits, think, callbacks.
//!
//! Search code (`game`, `eval::classical`, later `tss` and `mcts`) never names an inference
//! runtime; it sees positions and the `Evaluator` trait only.

pub mod game;
pub mod tss;
pub mod net;
pub mod eval;
pub mod mcts;
pub mod time;
pub mod brain;
pub mod bench;
