//! Evaluators of positions (priors + value). The search sees only the `Evaluator` trait defined here;
//! `onnx` is the only module that names the inference runtime.

pub mod onnx;
