//! `Display` for the protocol types: each prints exactly what goes on the wire, without the line
//! terminator. Multi-line commands put `'\n'` between their lines.
//!
//! Free text (messages, INFO values, ABOUT values) has CR/LF replaced by spaces so that one value
//! can never break the line protocol. Depends only on `types`.

use std::fmt::{self, Display, Formatter};

use crate::types::{BoardStone, BrainLine, Command, Coord, Info};

impl Display for Coord {
    /// `x,y`.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.x, self.y)
    }
}

impl Display for BoardStone {
    /// `x,y,f`.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.at, self.owner.code())
    }
}

/// Writes `text` with CR and LF turned into spaces.
fn one_line(f: &mut Formatter<'_>, text: &str) -> fmt::Result {
    for part in text.split(['\r', '\n']).enumerate() {
        match part {
            (0, s) => f.write_str(s)?,
            (_, s) => {
                f.write_str(" ")?;
                f.write_str(s)?;
            }
        }
    }
    Ok(())
}

/// `KEYWORD text`, or just `KEYWORD` when the text is empty (no trailing space).
fn keyword_text(f: &mut Formatter<'_>, keyword: &str, text: &str) -> fmt::Result {
    f.write_str(keyword)?;
    if !text.is_empty() {
        f.write_str(" ")?;
        one_line(f, text)?;
    }
    Ok(())
}

impl Display for Info {
    /// `key value`, the part after `INFO `.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Info::TimeoutTurn(v) => write!(f, "timeout_turn {v}"),
            Info::TimeoutMatch(v) => write!(f, "timeout_match {v}"),
            Info::TimeLeft(v) => write!(f, "time_left {v}"),
            Info::MaxMemory(v) => write!(f, "max_memory {v}"),
            Info::GameType(v) => write!(f, "game_type {v}"),
            Info::Rule(v) => write!(f, "rule {v}"),
            Info::Evaluate(c) => write!(f, "evaluate {c}"),
            Info::Folder(dir) => keyword_text(f, "folder", dir),
            Info::MaxDepth(v) => write!(f, "max_depth {v}"),
            Info::MaxNode(v) => write!(f, "max_node {v}"),
            Info::ThreadNum(v) => write!(f, "thread_num {v}"),
            Info::HashSize(v) => write!(f, "hash_size {v}"),
            Info::Pondering(on) => write!(f, "pondering {}", u8::from(*on)),
            Info::ShowDetail(v) => write!(f, "show_detail {v}"),
            Info::TimeIncrement(v) => write!(f, "time_increment {v}"),
            Info::Other { key, value } => keyword_text(f, key, value),
        }
    }
}

/// `HEADER\nx,y,f\n…\nDONE` (or `x,y` lines, for `SWAP2BOARD`).
fn block<T: Display>(f: &mut Formatter<'_>, header: &str, stones: &[T]) -> fmt::Result {
    f.write_str(header)?;
    for s in stones {
        write!(f, "\n{s}")?;
    }
    f.write_str("\nDONE")
}

impl Display for Command {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Command::Start { size } => write!(f, "START {size}"),
            Command::RectStart { width, height } => write!(f, "RECTSTART {width},{height}"),
            Command::Restart => f.write_str("RESTART"),
            Command::Begin => f.write_str("BEGIN"),
            Command::Turn(c) => write!(f, "TURN {c}"),
            Command::Board(s) => block(f, "BOARD", s),
            Command::YxBoard(s) => block(f, "YXBOARD", s),
            Command::Swap2Board(s) => block(f, "SWAP2BOARD", s),
            Command::Takeback(c) => write!(f, "TAKEBACK {c}"),
            Command::Play(c) => write!(f, "PLAY {c}"),
            Command::Info(info) => write!(f, "INFO {info}"),
            Command::End => f.write_str("END"),
            Command::About => f.write_str("ABOUT"),
            Command::YxShowForbid => f.write_str("YXSHOWFORBID"),
            Command::YxNBest(n) => write!(f, "YXNBEST {n}"),
            Command::YxHashClear => f.write_str("YXHASHCLEAR"),
            Command::YxShowInfo => f.write_str("YXSHOWINFO"),
            Command::Stop => f.write_str("YXSTOP"),
        }
    }
}

impl Display for BrainLine {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            BrainLine::Ok => f.write_str("OK"),
            BrainLine::Move(c) => write!(f, "{c}"),
            BrainLine::Pass => f.write_str("-1,-1"),
            BrainLine::Moves(moves) => {
                for (i, c) in moves.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    write!(f, "{c}")?;
                }
                Ok(())
            }
            BrainLine::Swap => f.write_str("SWAP"),
            BrainLine::About(pairs) => {
                for (i, (key, value)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    // A '"' inside a value cannot be quoted in this format; drop it rather than
                    // emit a line no manager can read.
                    one_line(f, key)?;
                    f.write_str("=\"")?;
                    one_line(f, &value.replace('"', ""))?;
                    f.write_str("\"")?;
                }
                Ok(())
            }
            BrainLine::Message(t) => keyword_text(f, "MESSAGE", t),
            BrainLine::Debug(t) => keyword_text(f, "DEBUG", t),
            BrainLine::Error(t) => keyword_text(f, "ERROR", t),
            BrainLine::Unknown(t) => keyword_text(f, "UNKNOWN", t),
            BrainLine::Forbid(points) => {
                f.write_str("FORBID ")?;
                for c in points {
                    write!(f, "{:02}{:02}", c.x, c.y)?;
                }
                f.write_str(".")
            }
            BrainLine::Suggest(c) => write!(f, "SUGGEST {c}"),
        }
    }
}
