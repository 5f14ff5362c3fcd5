//! fivezero's trainer: AlphaZero-style self-play, replay store and network training with tch,
//! exporting every checkpoint to ONNX through `engine::net` (the one network contract) so the
//! engine plays what the trainer learned.
//!
//! Modules, in dependency order: `rng`, `symmetry`, `store` (checksummed atomic files), `replay`,
//! `device`, `model` (tch network + BN-folding export), `optim`, `checkpoint`, `progress` (what long work shows while it runs), `selfplay`,
//! `net_eval` (tch evaluator), `probe` (the network's prior on available fives), `elo`, `arena` (evaluation matches), `config`, `metrics`, `plot` (training.png), `run`.
//! Only `run`, `main` and `progress` print. The engine never depends on this crate.

pub mod arena;
pub mod checkpoint;
pub mod config;
pub mod device;
pub mod distributed;
pub mod elo;
pub mod metrics;
pub mod model;
pub mod net_eval;
pub mod optim;
pub mod plot;
pub mod probe;
pub mod progress;
pub mod replay;
pub mod rng;
pub mod run;
pub mod selfplay;
pub mod store;
pub mod symmetry;

use engine::game::Rule;

/// A rule by `Rule`'s one grammar (engine::game): its name or the protocol's number.
pub fn parse_rule(s: &str) -> Option<Rule> {
    s.parse().ok()
}
