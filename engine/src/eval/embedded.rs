//! The network compiled into the engine: `models/default.onnx` at the repository root, the
//! trained default that `pbrain-fivezero` plays without `--model` (in the games whose rule and
//! board size its metadata claims). `models/README.md` says which command made it. Only with the
//! `onnx` feature: without ONNX Runtime nothing could run it.

/// The ONNX bytes of the default network.
pub const DEFAULT_MODEL: &[u8] = include_bytes!("../../../models/default.onnx");
