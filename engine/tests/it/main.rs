//! The engine's integration tests as one test binary, each module a former test file of its own
//! (one link instead of a dozen). `onnx_runtime_path` stays a binary apart: it changes the
//! environment and loads ONNX Runtime, which loads once per process. One module alone:
//! `cargo test --release -p engine --test it -- tss_api::`.

mod brain_play;
mod game_rules;
mod mcts_bench;
mod mcts_search;
mod mcts_speed;
mod native_inference;
mod pattern_net;
// The tests that run models need ONNX Runtime.
#[cfg(feature = "onnx")]
mod onnx_python;
#[cfg(feature = "onnx")]
mod onnx_runtime;
#[cfg(feature = "onnx")]
mod slot_watch;
mod tss_api;
mod tss_budget_regression;
mod tss_generate;
mod tss_suite;
