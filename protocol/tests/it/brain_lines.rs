//! Brain → manager: every reply form, odd spacing/case, the ABOUT helper.

use protocol::{BrainLine, BrainLineError, Coord, about_field, parse_about};

fn c(x: u32, y: u32) -> Coord {
    Coord::new(x, y)
}

fn p(s: &str) -> Result<BrainLine, BrainLineError> {
    BrainLine::parse(s)
}

fn is_invalid(r: &Result<BrainLine, BrainLineError>) -> bool {
    matches!(r, Err(BrainLineError::Invalid { .. }))
}

#[test]
fn ok_swap_and_moves() {
    assert_eq!(p("OK"), Ok(BrainLine::Ok));
    assert_eq!(p(" ok \r\n"), Ok(BrainLine::Ok));
    assert_eq!(p("SWAP"), Ok(BrainLine::Swap));
    assert_eq!(p("swap\r"), Ok(BrainLine::Swap));
    assert!(is_invalid(&p("OK then")));
    assert_eq!(p("7,7"), Ok(BrainLine::Move(c(7, 7))));
    assert_eq!(p(" 10 , 3 \r\n"), Ok(BrainLine::Move(c(10, 3))));
    assert_eq!(p("-1,-1"), Ok(BrainLine::Pass));
    assert_eq!(p("-1 , -1"), Ok(BrainLine::Pass));
    assert_eq!(p("7,7 8,8"), Ok(BrainLine::Moves(vec![c(7, 7), c(8, 8)])));
    assert_eq!(
        p("7,7  8 ,8\t9, 9"),
        Ok(BrainLine::Moves(vec![c(7, 7), c(8, 8), c(9, 9)]))
    );
    for bad in [
        "-1,5",
        "5,-1",
        "-2,-2",
        "-1,-1 7,7",
        "4294967296,0",
        "7,",
        "7,7,",
        "7,7 x",
        "7 7",
        "-",
    ] {
        assert!(is_invalid(&p(bad)), "{bad:?} -> {:?}", p(bad));
    }
}

#[test]
fn text_lines() {
    assert_eq!(
        p("MESSAGE hello world"),
        Ok(BrainLine::Message("hello world".into()))
    );
    assert_eq!(
        p("message   spaced  out  \r\n"),
        Ok(BrainLine::Message("spaced  out".into()))
    );
    assert_eq!(p("MESSAGE"), Ok(BrainLine::Message(String::new())));
    assert_eq!(
        p("DEBUG depth 12 nodes 3000"),
        Ok(BrainLine::Debug("depth 12 nodes 3000".into()))
    );
    assert_eq!(
        p("ERROR unsupported size"),
        Ok(BrainLine::Error("unsupported size".into()))
    );
    assert_eq!(p("UNKNOWN FOO"), Ok(BrainLine::Unknown("FOO".into())));
    assert_eq!(p("Error x=1"), Ok(BrainLine::Error("x=1".into())));
}

#[test]
fn forbid_and_suggest() {
    assert_eq!(
        p("FORBID 07050806."),
        Ok(BrainLine::Forbid(vec![c(7, 5), c(8, 6)]))
    );
    assert_eq!(p("FORBID ."), Ok(BrainLine::Forbid(vec![])));
    assert_eq!(p("FORBID"), Ok(BrainLine::Forbid(vec![])));
    assert_eq!(p("forbid 1412"), Ok(BrainLine::Forbid(vec![c(14, 12)])));
    assert!(is_invalid(&p("FORBID 070."),));
    assert!(is_invalid(&p("FORBID 07a5.")));
    assert_eq!(p("SUGGEST 3, 4"), Ok(BrainLine::Suggest(c(3, 4))));
    assert!(is_invalid(&p("SUGGEST -3,4")));
    assert!(is_invalid(&p("SUGGEST")));
}

#[test]
fn about_lines() {
    let want = vec![
        ("name".to_string(), "fivezero".to_string()),
        ("version".to_string(), "0.1.0".to_string()),
        ("author".to_string(), "A, B and C".to_string()),
        ("country".to_string(), "".to_string()),
    ];
    let line = r#"name="fivezero", version="0.1.0", author="A, B and C", country="""#;
    assert_eq!(p(line), Ok(BrainLine::About(want.clone())));
    assert_eq!(BrainLine::About(want.clone()).to_string(), line);
    // Sloppy forms real brains write: no commas, bare words, spaces around '=', trailing comma.
    assert_eq!(
        parse_about(r#"name = "x y"  version=1.2 www="http://a.b/c","#),
        Ok(vec![
            ("name".into(), "x y".into()),
            ("version".into(), "1.2".into()),
            ("www".into(), "http://a.b/c".into())
        ])
    );
    let pairs = parse_about(line).unwrap_or_default();
    assert_eq!(about_field(&pairs, "NAME"), Some("fivezero"));
    assert_eq!(about_field(&pairs, "email"), None);
    assert_eq!(parse_about(""), Err(BrainLineError::Empty));
    assert!(matches!(
        parse_about("just a name"),
        Err(BrainLineError::Unrecognized(_))
    ));
    assert!(matches!(
        parse_about(r#"name="unterminated"#),
        Err(BrainLineError::Unrecognized(_))
    ));
    assert!(matches!(
        p(r#"name="unterminated"#),
        Err(BrainLineError::Unrecognized(_))
    ));
}

#[test]
fn unrecognized_and_empty() {
    assert_eq!(p(""), Err(BrainLineError::Empty));
    assert_eq!(p(" \r\n"), Err(BrainLineError::Empty));
    for bad in ["hello", "MESSAGE:x", "TURN 7,7", "ÄÖ", "\u{0}"] {
        assert!(
            matches!(p(bad), Err(BrainLineError::Unrecognized(_))),
            "{bad:?} -> {:?}",
            p(bad)
        );
    }
}

#[test]
fn printing() {
    let cases = vec![
        (BrainLine::Ok, "OK"),
        (BrainLine::Move(c(7, 8)), "7,8"),
        (BrainLine::Pass, "-1,-1"),
        (
            BrainLine::Moves(vec![c(1, 2), c(3, 4), c(5, 6)]),
            "1,2 3,4 5,6",
        ),
        (BrainLine::Swap, "SWAP"),
        (
            BrainLine::About(vec![("name".into(), "fz".into())]),
            r#"name="fz""#,
        ),
        (BrainLine::Message("hi".into()), "MESSAGE hi"),
        (BrainLine::Debug("d".into()), "DEBUG d"),
        (BrainLine::Error("e".into()), "ERROR e"),
        (BrainLine::Unknown("u".into()), "UNKNOWN u"),
        (
            BrainLine::Forbid(vec![c(7, 5), c(10, 11)]),
            "FORBID 07051011.",
        ),
        (BrainLine::Forbid(vec![]), "FORBID ."),
        (BrainLine::Suggest(c(2, 3)), "SUGGEST 2,3"),
    ];
    for (line, text) in cases {
        assert_eq!(line.to_string(), text);
        assert_eq!(p(text), Ok(line));
    }
    // Free text can never break the line protocol.
    assert_eq!(
        BrainLine::Message("a\r\nb\nc".into()).to_string(),
        "MESSAGE a  b c"
    );
    assert_eq!(BrainLine::Message(String::new()).to_string(), "MESSAGE");
    assert_eq!(
        BrainLine::About(vec![("k".into(), "a\"b\nc".into())]).to_string(),
        r#"k="ab c""#
    );
}
