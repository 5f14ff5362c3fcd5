//! fivezero's trainer: AlphaZero-style self-play, replay store and network training with tch,
//! exporting every checkpoint to ONNX through `engine::net` (the one network contract) so the
//! engine plays what the trainer learned. The engine never depends on this crate.
//!
//! Rooms, in dependency order (each uses only those above it; a unit test may reach further, as
//! `config`'s reads the shipped profiles' openings files with `matches::arena`):
//! - `support`: checksummed atomic files, board symmetries, devices, stop signals, progress
//!   lines, the metrics file and the training plot; nothing of self-play or training;
//! - `config`: the settings, declared once (flags, profiles, defaults), and the run folder;
//! - `network`: the tch model, its optimizers, checkpoints, and its backends for the engine's
//!   search (libtorch, or its ONNX export on ONNX Runtime);
//! - `matches`: networks measured by playing (evaluation matches, equal-time matches in the
//!   tournament manager, the learning curve across runs);
//! - `training`: the replay store, the five-prior probe and `Trainer` (step, resume, checkpoint,
//!   export, evaluation);
//! - `selfplay`: self-play games (Gumbel root search included), their status and time estimate,
//!   and the warm-start games of the classical search (`bootstrap`);
//! - `run`: the single-machine loop;
//! - `distributed`: Redis workers over the same `Trainer` and self-play.
//!
//! Every program of the crate links libtorch, `trainer-eval` and the distributed self-play
//! workers included: `trainer-eval` uses only `config` and `matches` (never tch), but tch is a
//! plain dependency of this one crate, so a build without it needs a `tch` feature or a crate of
//! its own; the self-play workers search with the tch network wherever ONNX Runtime does not
//! serve (CUDA, `selfplay_backend = "tch"`), loading the weights each published model carries.
//!
//! Only `run`, `main`, `support::progress`, `selfplay::bootstrap::run`, `matches::equal_time`
//! (and the tournament it starts) and the distributed workers print.

pub mod support;

pub mod config;

pub mod network;

pub mod matches;

pub mod training;

pub mod selfplay;

pub mod run;

pub mod distributed;

/// The trainer's generator for `seed`: the engine's `rng::Rng` with the trainer's own constant
/// mixed into the seed, so its streams (which checkpoints and tests hold) are the ones it has
/// always drawn, and differ from the engine's search noise for the same seed.
pub fn seeded_rng(seed: u64) -> engine::rng::Rng {
    engine::rng::Rng::new(seed ^ 0x7A11_F1FE_0000_0001)
}
