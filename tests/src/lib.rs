//! Shared harness for the black-box tests: where the built binaries are, and how to drive them, and
//! how a test that cannot run here says so (`skip`).
pub mod pipe;
pub mod referee;
pub mod skip;
