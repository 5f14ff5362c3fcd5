//! The network in tch: the model (`model`), its optimizers and learning-rate schedule (`optim`),
//! its checkpoints (`checkpoint`), and the backends that let the engine's search evaluate
//! positions with it, on libtorch or on its ONNX export (`net_eval`).
//!
//! Depends on `support` and `config`.

pub mod checkpoint;
pub mod model;
pub mod net_eval;
pub mod optim;
