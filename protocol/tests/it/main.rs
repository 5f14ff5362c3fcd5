//! The protocol's integration tests as one test binary, each module a former test file of its own
//! (one link instead of four). One module alone: `cargo test --release -p protocol --test it -- props::`.

mod brain_lines;
mod commands;
mod lines;
mod props;
