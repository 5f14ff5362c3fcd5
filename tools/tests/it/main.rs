//! fivezero-tools' integration tests as one test binary, each module a test file (the layout the
//! other crates share). One module alone: `cargo test --release -p tools --test it -- model_cli::`.

mod model_cli;
