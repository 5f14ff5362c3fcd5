//! Turning a byte stream into commands: [`LineSplitter`] / [`ReadLines`] cut bytes into lines
//! (CRLF, LF or CR, lossy UTF-8, bounded line length), and [`CommandReader`] assembles the
//! multi-line board blocks into whole [`Command`]s.
//!
//! Used by both sides (the engine reads its stdin, a manager reads a brain's stdout). Depends on
//! `types` and `parse`, never on I/O beyond `std::io::Read`.

use std::collections::VecDeque;
use std::io::{self, Read};

use thiserror::Error;

use crate::parse::{
    BlockKind, CommandLine, excerpt, parse_command_line, parse_stone_line, parse_swap2_line,
};
use crate::types::{Command, CommandError, Coord, StoneOwner};

/// Default cap on one line, in bytes. Real protocol lines are below 100 bytes; the cap only
/// exists so that a runaway peer cannot make us buffer without bound.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024;

/// Cap on the stones of one board block: more than a 64×64 board holds. A block past it ends in
/// [`CommandError::Invalid`] rather than growing memory without bound.
pub const MAX_BLOCK_STONES: usize = 4096;

/// The marker a splitter yields instead of a line longer than its cap. The line's bytes were
/// dropped as they arrived; `len` is how many there were (saturating).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("line of {len} bytes exceeds the {max}-byte limit")]
pub struct LineTooLong {
    /// Bytes the line had (saturating).
    pub len: usize,
    /// The cap it exceeded.
    pub max: usize,
}

/// Incremental line splitter: push bytes as they arrive, iterate complete lines.
///
/// A line ends at LF, CR or CRLF (also when CR and LF arrive in different pushes). Lines are
/// decoded as UTF-8 lossily and carry no terminator. A line longer than the cap yields
/// [`LineTooLong`] once its end arrives, having held at most `max` bytes meanwhile. Memory is
/// bounded by the cap plus the lines of the pushes not yet iterated, so push read-buffer-sized
/// chunks and drain between pushes.
#[derive(Debug, Clone)]
pub struct LineSplitter {
    buf: Vec<u8>,
    /// Bytes of the current line seen so far, including those dropped past the cap.
    len: usize,
    max: usize,
    /// The last byte pushed was CR: an LF right after it belongs to the same terminator.
    after_cr: bool,
    ready: VecDeque<Result<String, LineTooLong>>,
}

impl Default for LineSplitter {
    fn default() -> Self {
        Self::new()
    }
}

impl LineSplitter {
    /// A splitter with the [`DEFAULT_MAX_LINE`] cap.
    pub fn new() -> Self {
        Self::with_max_len(DEFAULT_MAX_LINE)
    }

    /// A splitter capping lines at `max` bytes (at least 1).
    pub fn with_max_len(max: usize) -> Self {
        Self {
            buf: Vec::new(),
            len: 0,
            max: max.max(1),
            after_cr: false,
            ready: VecDeque::new(),
        }
    }

    /// Appends bytes; complete lines become available through the iterator.
    pub fn push(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some((&first, tail)) = rest.split_first() {
            if self.after_cr && first == b'\n' {
                self.after_cr = false;
                rest = tail;
                continue;
            }
            self.after_cr = false;
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(i) => {
                    let (line, term) = rest.split_at(i);
                    self.take(line);
                    self.end_line();
                    self.after_cr = term.first() == Some(&b'\r');
                    rest = term.get(1..).unwrap_or_default();
                }
                None => {
                    self.take(rest);
                    break;
                }
            }
        }
    }

    /// End of input: an unterminated last line becomes available too.
    pub fn finish(&mut self) {
        if self.len > 0 {
            self.end_line();
        }
        self.after_cr = false;
    }

    /// The next complete line, if any (same as `Iterator::next`).
    pub fn next_line(&mut self) -> Option<Result<String, LineTooLong>> {
        self.ready.pop_front()
    }

    fn take(&mut self, bytes: &[u8]) {
        self.len = self.len.saturating_add(bytes.len());
        let room = self.max.saturating_sub(self.buf.len());
        self.buf
            .extend_from_slice(bytes.get(..room).unwrap_or(bytes));
    }

    fn end_line(&mut self) {
        let line = if self.len > self.max {
            Err(LineTooLong {
                len: self.len,
                max: self.max,
            })
        } else {
            Ok(String::from_utf8_lossy(&self.buf).into_owned())
        };
        self.ready.push_back(line);
        self.buf.clear();
        self.len = 0;
    }
}

impl Iterator for LineSplitter {
    type Item = Result<String, LineTooLong>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_line()
    }
}

/// Splits a complete byte buffer into lines (the last one may be unterminated), with the
/// [`DEFAULT_MAX_LINE`] cap.
pub fn split_lines(bytes: &[u8]) -> LineSplitter {
    split_lines_with_max(bytes, DEFAULT_MAX_LINE)
}

/// [`split_lines`] with an explicit cap.
pub fn split_lines_with_max(bytes: &[u8], max: usize) -> LineSplitter {
    let mut s = LineSplitter::with_max_len(max);
    s.push(bytes);
    s.finish();
    s
}

/// What [`ReadLines`] yields instead of a line.
#[derive(Debug, Error)]
pub enum LineError {
    /// A line over the cap (the reader goes on with the next line).
    #[error(transparent)]
    TooLong(#[from] LineTooLong),
    /// Reading failed; the iterator ends after any partial line.
    #[error("read failed: {0}")]
    Io(#[from] io::Error),
}

/// Blocking line iterator over any reader (a brain's stdin, a manager's pipe from a brain).
/// Returns each line as soon as its terminator arrives, without waiting for a full buffer.
#[derive(Debug)]
pub struct ReadLines<R> {
    reader: R,
    splitter: LineSplitter,
    chunk: Vec<u8>,
    done: bool,
}

/// Lines of `reader` with the [`DEFAULT_MAX_LINE`] cap.
pub fn read_lines<R: Read>(reader: R) -> ReadLines<R> {
    ReadLines::with_max_len(reader, DEFAULT_MAX_LINE)
}

impl<R: Read> ReadLines<R> {
    /// Lines of `reader`, each capped at `max` bytes.
    pub fn with_max_len(reader: R, max: usize) -> Self {
        Self {
            reader,
            splitter: LineSplitter::with_max_len(max),
            chunk: vec![0; 4096],
            done: false,
        }
    }
}

impl<R: Read> Iterator for ReadLines<R> {
    type Item = Result<String, LineError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(line) = self.splitter.next_line() {
                return Some(line.map_err(LineError::from));
            }
            if self.done {
                return None;
            }
            match self.reader.read(&mut self.chunk) {
                Ok(0) => {
                    self.done = true;
                    self.splitter.finish();
                }
                Ok(n) => {
                    let got = self.chunk.get(..n).unwrap_or(&self.chunk);
                    self.splitter.push(got);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.done = true;
                    self.splitter.finish();
                    return Some(Err(LineError::Io(e)));
                }
            }
        }
    }
}

/// Brain-side line assembler: feed it manager lines, get whole commands.
///
/// Single-line commands come out of the [`feed`](Self::feed) call of their line. A `BOARD`,
/// `YXBOARD` or `SWAP2BOARD` header opens a block; its stone lines are collected and the command
/// comes out at `DONE`. Blank lines are ignored everywhere. `BOARD`/`YXBOARD` take `x,y,f` lines;
/// `SWAP2BOARD` takes `x,y` or `x,y,f` lines (not both) and checks the opening at `DONE`
/// ([`swap2_placement_order`](crate::swap2_placement_order)).
///
/// Errors inside a block, chosen so the brain answers exactly once per command and keeps working:
/// - A bad line (a malformed or out-of-range `x,y,f`, an unknown word, more than
///   [`MAX_BLOCK_STONES`] stones) poisons the block: the reader keeps collecting until `DONE`, then
///   yields one [`CommandError::Invalid`] naming the first bad line. Stopping at the bad line
///   instead would make every following stone line an `UNKNOWN` reply.
/// - A known command keyword (`END`, `START`, another `BOARD`, …) means the manager abandoned the
///   block: the reader yields an `Invalid` for the unterminated block and *then* the new command
///   (or its error; a new header opens a new block). `END` is therefore never swallowed.
///
/// When one line yields two results, `feed` returns the first and queues the second: call
/// [`next_pending`](Self::next_pending) until `None` after every `feed`, or use
/// [`feed_all`](Self::feed_all), which does it for you.
#[derive(Debug, Default, Clone)]
pub struct CommandReader {
    block: Option<OpenBlock>,
    queue: VecDeque<Result<Command, CommandError>>,
}

#[derive(Debug, Clone)]
struct OpenBlock {
    kind: BlockKind,
    /// Each stone line's point and `f` field (`None`: a plain `x,y` line, `SWAP2BOARD` only).
    stones: Vec<(Coord, Option<StoneOwner>)>,
    /// Reason of the first bad line; once set, later lines are only skipped until `DONE`.
    error: Option<String>,
}

impl OpenBlock {
    fn new(kind: BlockKind) -> Self {
        Self {
            kind,
            stones: Vec::new(),
            error: None,
        }
    }

    fn poison(&mut self, reason: impl FnOnce() -> String) {
        if self.error.is_none() {
            self.error = Some(reason());
        }
    }

    fn finish(self) -> Result<Command, CommandError> {
        let kind = self.kind;
        let result = match self.error {
            None => kind.into_command(self.stones),
            Some(reason) => Err(reason),
        };
        result.map_err(|reason| CommandError::Invalid {
            command: kind.keyword().to_string(),
            reason,
        })
    }

    fn unterminated(self, by: &str) -> CommandError {
        CommandError::Invalid {
            command: self.kind.keyword().to_string(),
            reason: format!("block not terminated by DONE (interrupted by {by})"),
        }
    }
}

impl CommandReader {
    /// A reader outside any block.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one line (with or without its CR/LF) and returns the first result it completes.
    /// See the type's documentation for when a line completes two results.
    pub fn feed(&mut self, line: &str) -> Option<Result<Command, CommandError>> {
        self.process(line);
        self.queue.pop_front()
    }

    /// Feeds one line and returns every result it completes, in order (also any left queued).
    pub fn feed_all(
        &mut self,
        line: &str,
    ) -> impl Iterator<Item = Result<Command, CommandError>> + '_ {
        self.process(line);
        self.queue.drain(..)
    }

    /// A result completed by an earlier `feed` but not yet returned.
    pub fn next_pending(&mut self) -> Option<Result<Command, CommandError>> {
        self.queue.pop_front()
    }

    /// Whether a board block is open (a header was read, `DONE` not yet).
    pub fn in_block(&self) -> bool {
        self.block.is_some()
    }

    /// End of input: an open block becomes an `Invalid` error. Returns the next result, like `feed`.
    pub fn finish(&mut self) -> Option<Result<Command, CommandError>> {
        if let Some(block) = self.block.take() {
            self.queue
                .push_back(Err(block.unterminated("end of input")));
        }
        self.queue.pop_front()
    }

    fn process(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let Some(mut block) = self.block.take() else {
            self.outside_block(parse_command_line(line));
            return;
        };
        // Stone lines start with a digit (or '-' for a bad negative one); anything else is
        // checked for a keyword.
        if line.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') {
            if block.error.is_none() {
                let stone = match block.kind {
                    BlockKind::Swap2Board => parse_swap2_line(line),
                    BlockKind::Board | BlockKind::YxBoard => {
                        parse_stone_line(line).map(|s| (s.at, Some(s.owner)))
                    }
                };
                match stone {
                    Ok(_) if block.stones.len() >= MAX_BLOCK_STONES => {
                        block.poison(|| format!("more than {MAX_BLOCK_STONES} stones"));
                    }
                    Ok(stone) => block.stones.push(stone),
                    Err(reason) => block.poison(|| reason),
                }
            }
            self.block = Some(block);
            return;
        }
        match parse_command_line(line) {
            Ok(CommandLine::Done) => self.queue.push_back(block.finish()),
            Err(CommandError::Unknown(_)) => {
                block.poison(|| format!("unexpected line in block: {:?}", excerpt(line)));
                self.block = Some(block);
            }
            other => {
                let by = line.split_whitespace().next().unwrap_or(line);
                self.queue.push_back(Err(block.unterminated(&excerpt(by))));
                self.outside_block(other);
            }
        }
    }

    fn outside_block(&mut self, parsed: Result<CommandLine, CommandError>) {
        let result = match parsed {
            Ok(CommandLine::Command(c)) => Ok(c),
            Ok(CommandLine::BlockStart(kind)) => {
                self.block = Some(OpenBlock::new(kind));
                return;
            }
            Ok(CommandLine::Done) => Err(CommandError::Invalid {
                command: "DONE".into(),
                reason: "outside a BOARD/YXBOARD/SWAP2BOARD block".into(),
            }),
            Err(e) => Err(e),
        };
        self.queue.push_back(result);
    }
}

impl Command {
    /// Parses the complete text of one command, single- or multi-line (lines separated by CRLF,
    /// LF or CR), as `Display` prints it: `Command::parse(&c.to_string()) == Ok(c)`.
    ///
    /// # Errors
    /// The command's own error, or [`CommandError::Invalid`] if the text holds no command, more
    /// than one, or an unterminated block.
    pub fn parse(text: &str) -> Result<Command, CommandError> {
        let mut reader = CommandReader::new();
        let mut results = Vec::new();
        for line in text.split(['\n', '\r']) {
            results.extend(reader.feed_all(line));
            if results.len() > 1 {
                break;
            }
        }
        results.extend(reader.finish());
        results.extend(std::iter::from_fn(|| reader.next_pending()));
        let mut results = results.into_iter();
        match (results.next(), results.next()) {
            (Some(one), None) => one,
            (None, _) => Err(CommandError::Invalid {
                command: String::new(),
                reason: "no command in text".into(),
            }),
            (Some(_), Some(_)) => Err(CommandError::Invalid {
                command: String::new(),
                reason: "more than one command in text".into(),
            }),
        }
    }
}
