//! The Gomocup ("pbrain") protocol as data, both directions.
//!
//! `Command` is what a manager sends to a brain, `BrainLine` what a brain sends back. Both are
//! parsed with nom and printed with `Display`, so the engine (brain side) and `fivezero-tools`
//! (manager side) share one definition. Parsing is line-oriented and never panics: an unknown
//! command is a typed value the brain answers with `UNKNOWN`, a known command with bad arguments a
//! typed error the brain answers with `ERROR`.
//!
//! Depends on nothing of the workspace.

mod types;
pub use types::*;
