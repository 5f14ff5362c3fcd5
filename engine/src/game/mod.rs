//! The rules core: points, colours, rules, the board with incremental line patterns, renju
//! forbidden points, win detection and zobrist hashing.
//!
//! Everything else in fivezero stands on this module; it depends on nothing but `std` and `rng`
//! (the generator of the Zobrist keys).
//! `reference` holds slow, obvious versions of the win and forbidden checks that property tests
//! compare the fast ones against.

mod board;
mod forbidden;
mod pattern;
mod pos;
pub mod reference;
mod zobrist;

pub use board::{Board, Cell, GameError};
pub use pattern::{CellThreats, Pattern};
pub(crate) use pos::CELLS;
pub use pos::{Color, DIRECTIONS, MAX_SIZE, MIN_SIZE, Pos, Rule};
