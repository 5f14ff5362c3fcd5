//! fivezero-tools as a library: the manager side of fivezero. Each subcommand of the
//! `fivezero-tools` binary is one module here with an `Args` (clap) and a `run`.
//!
//! - `tournament` — engine matches over the Gomocup protocol, with Elo and SPRT.
//! - `elo`        — the `elo` subcommand: the `stats` crate on counts given on the command line.
//! - `tactics`    — the `tactics` subcommand: tactics suites through `engine::tss`.
//! - `mine`       — the `mine-tactics` subcommand: a verified tactics suite mined from games of
//!   the classical move ranking, each position settled by `engine::tss`.
//! - `model`      — the `model` subcommand: inspect, write, quantize, compare, claim and bench
//!   model files.
//! - `measure`    — the `bench` subcommand: the engine's start-up, model reload, analysis
//!   throughput and realtime-line cost, measured on the built binaries and printed.
//! - `judge`      — the `judge` subcommand: positions from game records labelled by Rapfi (an
//!   external program) into a tactics suite, and the threat search measured against them.
//!
//! Depends on `stats` (match statistics), `protocol` and the engine library: `engine::game` and
//! `engine::openings` for the tournament's adjudication, `engine::tss` and the classical
//! evaluator for tactics, `engine::net`, `engine::eval` and (for `model bench`) `engine::mcts`
//! for model files. A tournament plays the engines as separate processes; it never runs a
//! search itself.

pub mod elo;
pub mod judge;
pub mod measure;
pub mod mine;
pub mod model;
pub mod tactics;
pub mod tournament;
