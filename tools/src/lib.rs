//! fivezero-tools as a library: the manager side of fivezero. Each subcommand of the
//! `fivezero-tools` binary is one module here with an `Args` (clap) and a `run`.
//!
//! - `stats`      — Elo, error bars, LOS, SPRT (pure math).
//! - `tournament` — engine matches over the Gomocup protocol.
//! - `elo`        — the `elo` subcommand: `stats` on counts given on the command line.
//! - `tactics`    — the `tactics` subcommand: tactics suites through `engine::tss`.
//! - `model`      — the `model` subcommand: inspect a model file, write a random one.
//!
//! Depends on `protocol` and `engine::game` (rules for adjudication); never on the engine's search.

pub mod elo;
pub mod measure;
pub mod mine;
pub mod model;
pub mod stats;
pub mod tactics;
pub mod tournament;
