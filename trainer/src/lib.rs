//! fivezero's trainer: AlphaZero-style self-play, replay store and network training with tch,
//! exporting every checkpoint to ONNX through `engine::net` (the one network contract) so the
//! engine plays what the trainer learned.
//!
//! Modules, in dependency order: `symmetry`, `store` (checksummed atomic files), `replay`,
//! `device`, `optim`, `config` (the settings, declared once: flags, profiles, defaults), `model`
//! (tch network + BN-folding export), `checkpoint`, `progress` (what long work shows while it
//! runs), `gumbel` (Gumbel root search: sequential halving, completed-Q targets), `selfplay`,
//! `net_eval` (the tch backend of the engine's network seam), `probe` (the network's prior on
//! available fives), `arena` (evaluation matches), `training` (`Trainer`: step, resume,
//! checkpoint, export, evaluation), `bootstrap` (warm-start games of the classical search),
//! `metrics`, `plot` (training.png), `stop` (SIGINT/SIGTERM: stop after the epoch in progress),
//! `equal_time` (a run's saved networks against the classical evaluator at equal time per move,
//! in the tournament manager), `curve` (Elo against the classical evaluator by CPU-hours, across
//! runs), `run` (the single-machine loop) and `distributed` (Redis workers over the same
//! `Trainer`). Only `run`, `main`, `progress`, `bootstrap::run`, `equal_time` (and the tournament
//! it starts) and the distributed workers print.
//! The engine never depends on this crate.

pub mod arena;
pub mod bootstrap;
pub mod checkpoint;
pub mod config;
pub mod curve;
pub mod device;
pub mod distributed;
pub mod equal_time;
pub mod gumbel;
pub mod metrics;
pub mod model;
pub mod net_eval;
pub mod optim;
pub mod plot;
pub mod probe;
pub mod progress;
pub mod replay;
pub mod run;
pub mod selfplay;
pub mod stop;
pub mod store;
pub mod symmetry;
pub mod training;

/// The trainer's generator for `seed`: the engine's `rng::Rng` with the trainer's own constant
/// mixed into the seed, so its streams (which checkpoints and tests hold) are the ones it has
/// always drawn, and differ from the engine's search noise for the same seed.
pub fn seeded_rng(seed: u64) -> engine::rng::Rng {
    engine::rng::Rng::new(seed ^ 0x7A11_F1FE_0000_0001)
}
