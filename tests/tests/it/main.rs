//! The black-box tests as one test binary, each module a former test file of its own (one link
//! instead of nine): the release binaries driven over pipes and files (`cargo build --release
//! --workspace --bins` first). One module alone, with its printed lines:
//! `cargo test --release -p fivezero-tests --test it -- swap2_games --nocapture`.

mod board_browser;
mod board_server;
mod engine_analysis;
mod engine_protocol;
mod hot_reload;
mod model_refusal;
mod pattern_model;
mod release_packages;
mod swap2_games;
mod tournament_basic;
mod tournament_errors;
mod tournament_forfeits;
mod workspace_deps;
