//! The network in tch: the two forms (`model`: the ResNet, `pattern`: the pattern network) behind
//! one type (`form`), their optimizers and learning-rate schedule (`optim`), checkpoints
//! (`checkpoint`), and the backends that let the engine's search evaluate positions with them,
//! on libtorch or on their export (`net_eval`).
//!
//! Depends on `support`, `config` and `selfplay` (how self-play takes its leaves).

pub mod checkpoint;
pub mod form;
pub mod model;
pub mod net_eval;
pub mod optim;
pub mod pattern;
