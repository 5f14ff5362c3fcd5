//! Shared harness for the black-box tests: where the built binaries are, and how to drive them.
pub mod pipe;
pub mod referee;
