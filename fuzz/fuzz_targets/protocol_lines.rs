//! Fuzz target: arbitrary bytes through the whole input path of both sides — the line splitter
//! (pushed in fuzzer-chosen chunk sizes), `CommandReader`, `BrainLine::parse` and `parse_about`.
//!
//! Besides "never panics", it checks properties that must hold for any input: chunking does not
//! change the split, nothing is left in an open block after `finish`, and whatever parses prints
//! back to text that parses to the same value. Depends only on `protocol`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use protocol::{BrainLine, Command, CommandReader, LineSplitter, parse_about, split_lines_with_max};

/// Small cap so the fuzzer also reaches the too-long-line path.
const MAX_LINE: usize = 256;

fuzz_target!(|data: &[u8]| {
    // First byte: the chunk size the bytes arrive in, as a pipe may cut them anywhere.
    let (chunk, bytes) = match data.split_first() {
        Some((&c, rest)) => (usize::from(c).max(1), rest),
        None => (1, data),
    };
    let mut splitter = LineSplitter::with_max_len(MAX_LINE);
    let mut lines = Vec::new();
    for piece in bytes.chunks(chunk) {
        splitter.push(piece);
        lines.extend(&mut splitter);
    }
    splitter.finish();
    lines.extend(&mut splitter);
    let whole: Vec<_> = split_lines_with_max(bytes, MAX_LINE).collect();
    assert_eq!(lines, whole, "chunking changed the split");

    let mut reader = CommandReader::new();
    let mut results = Vec::new();
    for line in lines.iter().flatten() {
        assert!(!line.contains(['\r', '\n']));
        assert!(line.len() <= MAX_LINE * 3, "lossy decoding at most triples the bytes");
        results.extend(reader.feed_all(line));

        if let Ok(reply) = BrainLine::parse(line) {
            let printed = reply.to_string();
            assert_eq!(BrainLine::parse(&printed), Ok(reply), "brain line round trip via {printed:?}");
        }
        if let Ok(pairs) = parse_about(line) {
            let printed = BrainLine::About(pairs.clone()).to_string();
            assert_eq!(parse_about(&printed), Ok(pairs), "about round trip via {printed:?}");
        }
        let _ = Command::parse_single(line);
    }
    results.extend(reader.finish());
    results.extend(std::iter::from_fn(|| reader.next_pending()));
    assert!(!reader.in_block());

    for result in results {
        match result {
            Ok(command) => {
                let printed = command.to_string();
                assert_eq!(Command::parse(&printed), Ok(command), "command round trip via {printed:?}");
            }
            Err(e) => {
                let reply = e.reply().to_string();
                assert!(!reply.contains(['\r', '\n']), "a reply must stay one line: {reply:?}");
                assert!(reply.chars().count() < 600, "error replies are excerpts");
            }
        }
    }
});
