//! Byte stream → lines: every terminator, chunk boundaries, the length cap, lossy UTF-8.

use protocol::{
    LineError, LineSplitter, LineTooLong, read_lines, split_lines, split_lines_with_max,
};

fn lines(bytes: &[u8]) -> Vec<Result<String, LineTooLong>> {
    split_lines(bytes).collect()
}

fn ok(v: &[&str]) -> Vec<Result<String, LineTooLong>> {
    v.iter().map(|s| Ok(s.to_string())).collect()
}

#[test]
fn terminators() {
    assert_eq!(lines(b"a\r\nb\nc\rd"), ok(&["a", "b", "c", "d"]));
    assert_eq!(lines(b"a\r\n"), ok(&["a"]));
    assert_eq!(lines(b"a\r\r\nb"), ok(&["a", "", "b"]));
    assert_eq!(lines(b"\n\n"), ok(&["", ""]));
    assert_eq!(lines(b""), ok(&[]));
    assert_eq!(lines(b"no terminator"), ok(&["no terminator"]));
}

#[test]
fn crlf_split_across_pushes_is_one_terminator() {
    let mut s = LineSplitter::new();
    s.push(b"START 15\r");
    assert_eq!(s.next_line(), Some(Ok("START 15".into())));
    s.push(b"\nBEGIN\r");
    s.push(b"\n");
    s.finish();
    assert_eq!(s.collect::<Vec<_>>(), ok(&["BEGIN"]));
}

#[test]
fn byte_at_a_time_equals_all_at_once() {
    let input = b"BOARD\r\n7,7,1\n8,8,2\rDONE\r\n\r\nEND";
    let mut s = LineSplitter::new();
    let mut got = Vec::new();
    for b in input {
        s.push(std::slice::from_ref(b));
        got.extend(&mut s);
    }
    s.finish();
    got.extend(s);
    assert_eq!(got, lines(input));
}

#[test]
fn long_lines_become_markers_and_do_not_grow_memory() {
    let mut input = vec![b'x'; 1_000_000];
    input.extend_from_slice(b"\nOK\n");
    let got: Vec<_> = split_lines_with_max(&input, 1024).collect();
    assert_eq!(
        got,
        vec![
            Err(LineTooLong {
                len: 1_000_000,
                max: 1024
            }),
            Ok("OK".to_string())
        ]
    );
    // Exactly at the cap is still a line.
    let got: Vec<_> = split_lines_with_max(b"abcd\nabcde\n", 4).collect();
    assert_eq!(
        got,
        vec![Ok("abcd".to_string()), Err(LineTooLong { len: 5, max: 4 })]
    );
}

#[test]
fn invalid_utf8_is_replaced() {
    assert_eq!(
        lines(b"MESSAGE \xff\xfe ok\n"),
        ok(&["MESSAGE \u{fffd}\u{fffd} ok"])
    );
}

#[test]
fn read_lines_over_a_reader() {
    let got: Vec<String> = read_lines(&b"START 15\r\nINFO timeout_turn 5000\r\nEND"[..])
        .map(|l| l.unwrap_or_default())
        .collect();
    assert_eq!(got, vec!["START 15", "INFO timeout_turn 5000", "END"]);

    struct Failing(bool);
    impl std::io::Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if std::mem::replace(&mut self.0, true) {
                return Err(std::io::Error::other("pipe broke"));
            }
            let data = b"OK\npart";
            let n = data.len().min(buf.len());
            buf[..n].copy_from_slice(&data[..n]);
            Ok(n)
        }
    }
    let got: Vec<_> = read_lines(Failing(false)).collect();
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[0].as_ref().ok().map(String::as_str), Some("OK"));
    assert!(matches!(got[1], Err(LineError::Io(_))));
    assert_eq!(got[2].as_ref().ok().map(String::as_str), Some("part"));
}
