//! Manager → brain: every command, odd spacing/case/terminators, and the block rules of
//! `CommandReader`.

use protocol::{
    BoardStone, BrainLine, Command, CommandError, CommandReader, Coord, Info, MAX_BLOCK_STONES,
    StoneOwner,
};

fn c(x: u32, y: u32) -> Coord {
    Coord::new(x, y)
}

fn single(line: &str) -> Result<Command, CommandError> {
    Command::parse_single(line)
}

fn is_invalid(r: &Result<Command, CommandError>, command: &str) -> bool {
    matches!(r, Err(CommandError::Invalid { command: c, .. }) if c == command)
}

/// Feeds every line and collects all results, draining the queue as the docs ask.
fn run(lines: &[&str]) -> Vec<Result<Command, CommandError>> {
    let mut r = CommandReader::new();
    let mut out = Vec::new();
    for l in lines {
        out.extend(r.feed_all(l));
    }
    out
}

#[test]
fn start_and_rectstart() {
    assert_eq!(single("START 15"), Ok(Command::Start { size: 15 }));
    assert_eq!(single("  start   20 \r\n"), Ok(Command::Start { size: 20 }));
    assert_eq!(single("Start\t7"), Ok(Command::Start { size: 7 }));
    assert_eq!(
        single("RECTSTART 20,15"),
        Ok(Command::RectStart {
            width: 20,
            height: 15
        })
    );
    assert_eq!(
        single("rectstart 20 , 15\r"),
        Ok(Command::RectStart {
            width: 20,
            height: 15
        })
    );
    assert!(is_invalid(&single("START"), "START"));
    assert!(is_invalid(&single("START abc"), "START"));
    assert!(is_invalid(&single("START 15 16 17"), "START"));
    assert!(is_invalid(&single("START 15 x"), "START"));
    assert!(is_invalid(&single("START -15"), "START"));
    assert!(is_invalid(
        &single("START 99999999999999999999999999999999999999999999"),
        "START"
    ));
    assert!(is_invalid(&single("START 4294967296"), "START"));
    assert_eq!(
        single("START 4294967295"),
        Ok(Command::Start { size: u32::MAX })
    );
    assert!(is_invalid(&single("RECTSTART 20"), "RECTSTART"));
    assert!(is_invalid(&single("RECTSTART 20,-1"), "RECTSTART"));
}

#[test]
fn argumentless_commands_ignore_trailing_text() {
    for (text, want) in [
        ("RESTART", Command::Restart),
        ("begin", Command::Begin),
        ("BEGIN extra", Command::Begin),
        ("END", Command::End),
        ("end now\r\n", Command::End),
        ("About", Command::About),
        ("YXSHOWFORBID", Command::YxShowForbid),
        ("yxhashclear", Command::YxHashClear),
        ("yxshowinfo", Command::YxShowInfo),
        ("start 15 15", Command::Start { size: 15 }),
        (
            "START 20 15",
            Command::RectStart {
                width: 20,
                height: 15,
            },
        ),
        ("STOP", Command::Stop),
        ("YXSTOP", Command::Stop),
        ("  yxstop  ", Command::Stop),
    ] {
        assert_eq!(single(text), Ok(want), "{text:?}");
    }
}

#[test]
fn coordinate_commands() {
    assert_eq!(single("TURN 7,7"), Ok(Command::Turn(c(7, 7))));
    assert_eq!(single("turn 10 ,\t3\r\n"), Ok(Command::Turn(c(10, 3))));
    assert_eq!(single("TAKEBACK 0,0"), Ok(Command::Takeback(c(0, 0))));
    assert_eq!(single("play 14, 14"), Ok(Command::Play(c(14, 14))));
    for bad in [
        "TURN",
        "TURN 7",
        "TURN 7,",
        "TURN ,7",
        "TURN -1,5",
        "TURN 5,-1",
        "TURN -1,-1",
        "TURN 7,7,1",
        "TURN a,b",
        "TURN 7;7",
    ] {
        assert!(
            is_invalid(&single(bad), "TURN"),
            "{bad:?} -> {:?}",
            single(bad)
        );
    }
    assert!(is_invalid(&single("TURN 4294967296,1"), "TURN"));
    assert!(is_invalid(&single("TAKEBACK -3,2"), "TAKEBACK"));
    assert!(is_invalid(&single("PLAY"), "PLAY"));
}

#[test]
fn yx_commands() {
    assert_eq!(single("YXNBEST 3"), Ok(Command::YxNBest(3)));
    assert_eq!(single("yxnbest   10"), Ok(Command::YxNBest(10)));
    assert!(is_invalid(&single("YXNBEST"), "YXNBEST"));
    assert!(is_invalid(&single("YXNBEST -2"), "YXNBEST"));
}

#[test]
fn info_keys() {
    let info = |s: &str| match single(s) {
        Ok(Command::Info(i)) => Ok(i),
        Ok(other) => panic!("not INFO: {other:?}"),
        Err(e) => Err(e),
    };
    assert_eq!(info("INFO timeout_turn 5000"), Ok(Info::TimeoutTurn(5000)));
    assert_eq!(
        info("INFO timeout_match 180000"),
        Ok(Info::TimeoutMatch(180000))
    );
    assert_eq!(info("INFO time_left -250"), Ok(Info::TimeLeft(-250)));
    assert_eq!(
        info("INFO TIME_LEFT 2147483647"),
        Ok(Info::TimeLeft(2147483647))
    );
    assert_eq!(
        info("info max_memory 367001600"),
        Ok(Info::MaxMemory(367001600))
    );
    assert_eq!(info("INFO game_type 2"), Ok(Info::GameType(2)));
    assert_eq!(info("INFO rule 4"), Ok(Info::Rule(4)));
    assert_eq!(info("INFO evaluate 7, 8"), Ok(Info::Evaluate(c(7, 8))));
    assert_eq!(
        info("INFO folder C:\\My Files\\x \r\n"),
        Ok(Info::Folder("C:\\My Files\\x".into()))
    );
    assert_eq!(info("INFO max_depth 30"), Ok(Info::MaxDepth(30)));
    assert_eq!(info("INFO max_node 1000000"), Ok(Info::MaxNode(1000000)));
    assert_eq!(info("INFO max_node -1"), Ok(Info::MaxNode(u64::MAX)));
    assert!(info("INFO max_node -2").is_err());
    assert_eq!(info("INFO thread_num 2"), Ok(Info::ThreadNum(2)));
    assert_eq!(info("INFO hash_size 65536"), Ok(Info::HashSize(65536)));
    assert_eq!(info("INFO pondering 1"), Ok(Info::Pondering(true)));
    assert_eq!(info("INFO pondering 0"), Ok(Info::Pondering(false)));
    assert_eq!(info("INFO show_detail 3"), Ok(Info::ShowDetail(3)));
    assert_eq!(
        info("INFO time_increment 1000"),
        Ok(Info::TimeIncrement(1000))
    );
    assert_eq!(
        info("INFO caution_factor 4"),
        Ok(Info::Other {
            key: "caution_factor".into(),
            value: "4".into()
        })
    );
    assert_eq!(
        info("INFO Strange"),
        Ok(Info::Other {
            key: "Strange".into(),
            value: String::new()
        })
    );
    for bad in [
        "INFO",
        "INFO timeout_turn",
        "INFO timeout_turn fast",
        "INFO max_memory -1",
        "INFO time_left 99999999999999999999",
        "INFO pondering 2",
        "INFO evaluate -1,3",
        "INFO folder",
        "INFO rule 4 5",
    ] {
        assert!(
            is_invalid(&single(bad), "INFO"),
            "{bad:?} -> {:?}",
            single(bad)
        );
    }
}

#[test]
fn unknown_lines() {
    for text in [
        "HELLO", "7,7", "7,7,1", "", "   ", "=x", "TURN7,7", "ÄÖÜ 1", "\u{0}",
    ] {
        assert!(
            matches!(single(text), Err(CommandError::Unknown(_))),
            "{text:?}"
        );
    }
    assert_eq!(
        single("  hello world \r\n"),
        Err(CommandError::Unknown("hello world".into()))
    );
    let long = "X".repeat(100_000);
    match single(&long) {
        Err(CommandError::Unknown(t)) => assert!(t.chars().count() < 300),
        other => panic!("{other:?}"),
    }
}

#[test]
fn block_headers_are_not_single_commands() {
    assert!(is_invalid(&single("BOARD"), "BOARD"));
    assert!(is_invalid(&single("DONE"), "DONE"));
}

#[test]
fn board_blocks() {
    let own = |x, y| BoardStone::new(x, y, StoneOwner::Own);
    let opp = |x, y| BoardStone::new(x, y, StoneOwner::Opponent);
    let mark = |x, y| BoardStone::new(x, y, StoneOwner::Marker);
    assert_eq!(
        run(&["BOARD\r\n", "7,7,1\r\n", " 8 , 8 , 2 ", "9,9,3", "done"]),
        vec![Ok(Command::Board(vec![own(7, 7), opp(8, 8), mark(9, 9)]))]
    );
    assert_eq!(
        run(&["yxboard", "", "1,2,2", "DONE"]),
        vec![Ok(Command::YxBoard(vec![opp(1, 2)]))]
    );
    assert_eq!(
        run(&["SWAP2BOARD", "DONE"]),
        vec![Ok(Command::Swap2Board(vec![]))]
    );
    // What GomocupJudge sends: plain x,y lines in placement order.
    assert_eq!(
        run(&["SWAP2BOARD", "7,7", " 7 , 8 ", "8,8", "DONE"]),
        vec![Ok(Command::Swap2Board(vec![c(7, 7), c(7, 8), c(8, 8)]))]
    );
    // x,y,f lines: the larger owner group is black, whichever view f takes.
    assert_eq!(
        run(&["Swap2Board", "7,7,1", "7,8,2", "8,8,1", "Done\r"]),
        vec![Ok(Command::Swap2Board(vec![c(7, 7), c(7, 8), c(8, 8)]))]
    );
    assert_eq!(
        run(&[
            "SWAP2BOARD",
            "7,8,1",
            "7,7,2",
            "8,8,2",
            "9,9,1",
            "1,1,2",
            "DONE"
        ]),
        vec![Ok(Command::Swap2Board(vec![
            c(7, 7),
            c(7, 8),
            c(8, 8),
            c(9, 9),
            c(1, 1)
        ]))]
    );
    assert_eq!(
        Command::parse("BOARD\n7,7,1\n8,8,2\nDONE"),
        Ok(Command::Board(vec![own(7, 7), opp(8, 8)]))
    );
    assert_eq!(
        Command::parse("BOARD\r\n7,7,1\r\nDONE\r\n"),
        Ok(Command::Board(vec![own(7, 7)]))
    );
}

#[test]
fn reader_tracks_block_state() {
    let mut r = CommandReader::new();
    assert!(!r.in_block());
    assert_eq!(r.feed("BOARD"), None);
    assert!(r.in_block());
    assert_eq!(r.feed("7,7,1"), None);
    assert!(r.feed("DONE").is_some());
    assert!(!r.in_block());
    assert_eq!(r.feed("DONE").map(|x| is_invalid(&x, "DONE")), Some(true));
}

#[test]
fn bad_stone_line_poisons_block_until_done() {
    for bad in [
        "7,7,4",
        "7,7,0",
        "-1,7,1",
        "7,7",
        "7,7,1,1",
        "99999999999,1,1",
        "7;7;1",
        "hello",
    ] {
        let out = run(&["BOARD", "1,1,1", bad, "2,2,2", "DONE", "BEGIN"]);
        assert_eq!(out.len(), 2, "{bad:?}: {out:?}");
        assert!(is_invalid(&out[0], "BOARD"), "{bad:?}: {out:?}");
        assert_eq!(out[1], Ok(Command::Begin));
    }
}

#[test]
fn bad_swap2_blocks_get_one_error_naming_the_fault() {
    for (lines, why) in [
        (&["7,7", "8,8,2", "9,9"][..], "mixes"),
        (&["7,7,1", "8,8", "9,9,1"][..], "mixes"),
        (&["7,7"][..], "0, 3 or 5"),
        (&["7,7", "8,8"][..], "0, 3 or 5"),
        (&["7,7", "8,8", "9,9", "6,6"][..], "0, 3 or 5"),
        (&["1,1", "2,2", "3,3", "4,4", "5,5", "6,6"][..], "0, 3 or 5"),
        (&["7,7", "8,8", "7,7"][..], "two stones on 7,7"),
        (&["7,7,1", "8,8,1", "9,9,1"][..], "one black stone more"),
        (&["7,7,3", "8,8,2", "9,9,3"][..], "marker"),
        (&["7,7", "-8,8", "9,9"][..], "negative"),
        (&["7,7", "8;8", "9,9"][..], "not an x,y or x,y,f"),
        (&["7,7", "8,8\u{FFFD}", "9,9"][..], "not an x,y or x,y,f"), // invalid UTF-8, decoded lossily
    ] {
        let mut all = vec!["SWAP2BOARD"];
        all.extend(lines);
        all.extend(["DONE", "BEGIN"]);
        let out = run(&all);
        assert_eq!(out.len(), 2, "{lines:?}: {out:?}");
        match &out[0] {
            Err(CommandError::Invalid { command, reason }) => {
                assert_eq!(command, "SWAP2BOARD");
                assert!(reason.contains(why), "{lines:?}: {reason}");
            }
            other => panic!("{lines:?}: {other:?}"),
        }
        assert_eq!(out[1], Ok(Command::Begin));
    }
}

#[test]
fn end_inside_block_is_never_swallowed() {
    let out = run(&["BOARD", "7,7,1", "END"]);
    assert_eq!(out.len(), 2);
    assert!(is_invalid(&out[0], "BOARD"));
    assert_eq!(out[1], Ok(Command::End));

    // Through plain `feed`: the END waits in the queue.
    let mut r = CommandReader::new();
    r.feed("BOARD");
    assert!(is_invalid(
        &r.feed("end").unwrap_or(Ok(Command::Begin)),
        "BOARD"
    ));
    assert_eq!(r.next_pending(), Some(Ok(Command::End)));
    assert_eq!(r.next_pending(), None);
    assert!(!r.in_block());
}

#[test]
fn command_inside_block_interrupts_it() {
    // A new header abandons the old block and opens a new one.
    let out = run(&["BOARD", "7,7,1", "BOARD", "8,8,2", "DONE"]);
    assert_eq!(out.len(), 2);
    assert!(is_invalid(&out[0], "BOARD"));
    assert_eq!(
        out[1],
        Ok(Command::Board(vec![BoardStone::new(
            8,
            8,
            StoneOwner::Opponent
        )]))
    );
    // A known command with bad arguments: block error, then that command's error.
    let out = run(&["YXBOARD", "TURN -1,2"]);
    assert!(is_invalid(&out[0], "YXBOARD"));
    assert!(is_invalid(&out[1], "TURN"));
    // Unterminated at end of input.
    let mut r = CommandReader::new();
    r.feed("BOARD");
    assert!(is_invalid(
        &r.finish().unwrap_or(Ok(Command::Begin)),
        "BOARD"
    ));
    assert!(!r.in_block());
}

#[test]
fn too_many_stones_is_invalid_not_unbounded() {
    let mut r = CommandReader::new();
    r.feed("BOARD");
    for i in 0..(MAX_BLOCK_STONES as u32 + 10) {
        assert_eq!(r.feed(&format!("{},{},1", i % 64, i / 64)), None);
    }
    assert!(is_invalid(
        &r.feed("DONE").unwrap_or(Ok(Command::Begin)),
        "BOARD"
    ));
}

#[test]
fn errors_give_the_right_reply() {
    let unknown = single("FOO bar").unwrap_err();
    assert_eq!(unknown.reply(), BrainLine::Unknown("FOO bar".into()));
    assert_eq!(unknown.reply().to_string(), "UNKNOWN FOO bar");
    let invalid = single("TURN -1,2").unwrap_err();
    let reply = invalid.reply().to_string();
    assert!(
        reply.starts_with("ERROR TURN: x must not be negative"),
        "{reply}"
    );
}

#[test]
fn printing() {
    let cases: Vec<(Command, &str)> = vec![
        (Command::Start { size: 15 }, "START 15"),
        (
            Command::RectStart {
                width: 20,
                height: 15,
            },
            "RECTSTART 20,15",
        ),
        (Command::Restart, "RESTART"),
        (Command::Begin, "BEGIN"),
        (Command::Turn(c(7, 8)), "TURN 7,8"),
        (
            Command::Board(vec![
                BoardStone::new(7, 7, StoneOwner::Own),
                BoardStone::new(8, 8, StoneOwner::Opponent),
            ]),
            "BOARD\n7,7,1\n8,8,2\nDONE",
        ),
        (
            Command::YxBoard(vec![BoardStone::new(1, 2, StoneOwner::Marker)]),
            "YXBOARD\n1,2,3\nDONE",
        ),
        (Command::Swap2Board(vec![]), "SWAP2BOARD\nDONE"),
        (
            Command::Swap2Board(vec![c(7, 7), c(8, 8), c(7, 9)]),
            "SWAP2BOARD\n7,7\n8,8\n7,9\nDONE",
        ),
        (Command::Takeback(c(3, 4)), "TAKEBACK 3,4"),
        (Command::Play(c(0, 0)), "PLAY 0,0"),
        (Command::Info(Info::TimeLeft(-5)), "INFO time_left -5"),
        (Command::Info(Info::Pondering(true)), "INFO pondering 1"),
        (Command::Info(Info::Evaluate(c(1, 2))), "INFO evaluate 1,2"),
        (
            Command::Info(Info::Folder("a\nb".into())),
            "INFO folder a b",
        ),
        (
            Command::Info(Info::Other {
                key: "k".into(),
                value: String::new(),
            }),
            "INFO k",
        ),
        (Command::End, "END"),
        (Command::About, "ABOUT"),
        (Command::YxShowForbid, "YXSHOWFORBID"),
        (Command::YxNBest(5), "YXNBEST 5"),
        (Command::YxHashClear, "YXHASHCLEAR"),
        (Command::YxShowInfo, "YXSHOWINFO"),
        (Command::Stop, "YXSTOP"),
    ];
    for (cmd, text) in cases {
        assert_eq!(cmd.to_string(), text);
        if !text.contains("a b") {
            assert_eq!(Command::parse(text), Ok(cmd), "{text:?}");
        }
    }
}

#[test]
fn parse_rejects_zero_or_several_commands() {
    assert!(Command::parse("").is_err());
    assert!(Command::parse("BEGIN\nEND").is_err());
    assert!(Command::parse("BOARD\n7,7,1").is_err());
}
