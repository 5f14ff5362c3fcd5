//! Networks measured by playing: evaluation matches at equal visits (`arena`), a run's saved
//! networks against the classical evaluator at equal time per move in the tournament manager
//! (`equal_time`), and the learning curve across runs (`curve`).
//!
//! Depends on `support`, `config` and the `stats` crate; never on tch.

pub mod arena;
pub mod curve;
pub mod equal_time;
