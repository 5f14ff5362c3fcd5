//! Shared harness for the black-box tests: where the built binaries are, and how to drive them, and
//! how a test that cannot run here says so (`skip`); the board's server and a headless browser
//! (`board`, `browser`).
pub mod board;
pub mod browser;
pub mod pipe;
pub mod referee;
pub mod skip;
