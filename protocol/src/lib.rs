//! The Gomocup ("pbrain") protocol as data, both directions.
//!
//! [`Command`] is what a manager sends to a brain, [`BrainLine`] what a brain sends back. Both are
//! parsed with nom (`parse`) and printed with `Display` (`print`), so the engine (brain side) and
//! `fivezero-tools` (manager side) share one definition. [`LineSplitter`] / [`read_lines`] cut a
//! byte stream into lines (CRLF, LF or CR; bounded length) and [`CommandReader`] assembles the
//! multi-line `BOARD` / `YXBOARD` / `SWAP2BOARD` blocks.
//!
//! Parsing never panics: an unknown command is [`CommandError::Unknown`] (the brain answers
//! `UNKNOWN`), a known command with bad arguments [`CommandError::Invalid`] (the brain answers
//! `ERROR`); both carry the text for the reply ([`CommandError::reply`]).
//!
//! Brain side:
//! ```
//! use protocol::{read_lines, BrainLine, Command, CommandReader, Coord};
//! let input = b"START 15\r\nBOARD\r\n7,7,2\r\nDONE\r\nTURN 8, 8\r\nEND\r\n";
//! let mut reader = CommandReader::new();
//! let mut seen = Vec::new();
//! for line in read_lines(&input[..]).flatten() {
//!     for result in reader.feed_all(&line) {
//!         match result {
//!             Ok(command) => seen.push(command),
//!             Err(e) => println!("{}", e.reply()), // UNKNOWN … / ERROR …
//!         }
//!     }
//! }
//! assert_eq!(seen.len(), 4);
//! assert_eq!(seen[2], Command::Turn(Coord::new(8, 8)));
//! assert_eq!(BrainLine::Move(Coord::new(7, 8)).to_string(), "7,8");
//! ```
//!
//! Module order: `types` ← `parse`, `print` ← `reader`. Depends on nothing of the workspace.

#![warn(missing_docs)]

mod parse;
mod print;
mod reader;
mod types;

pub use parse::{
    BlockKind, CommandLine, about_field, parse_about, parse_command_line, parse_info,
    parse_stone_line, parse_swap2_line, swap2_placement_order,
};
pub use reader::{
    CommandReader, DEFAULT_MAX_LINE, LineError, LineSplitter, LineTooLong, MAX_BLOCK_STONES,
    ReadLines, read_lines, split_lines, split_lines_with_max,
};
pub use types::*;
