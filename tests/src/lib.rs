//! Shared harness for the black-box tests: where the built binaries are, and how to drive them.
pub mod referee;
pub mod pipe;
