//! pbrain-fivezero over real pipes: full protocol sessions, every command of PROTOCOL.md, and
//! bad input of every kind. Each bad line must get ERROR/UNKNOWN (or silence where the protocol
//! says so), leave the position unchanged, and keep the engine working.
//!
//! The few wall-clock checks here are caps that catch an engine ignoring its time limit or a
//! command (a hang, a search that runs its full turn), set seconds above the managers' own
//! deadlines (PROTOCOL.md: the move's time plus a 1000 ms tolerance) so a loaded machine does not
//! fail them: how the engine splits its time is unit-tested in `engine::time`, and its speed is
//! measured by `pbrain-fivezero bench`.

use engine::game::{Board, Color, Pos, Rule};
use fivezero_tests::pipe::{Brain, HUNG, parse_move};
use fivezero_tests::referee::bin;
use std::time::{Duration, Instant};

/// GomocupJudge's and Piskvork's tolerance past the move's time before a time forfeit.
const TOLERANCE: Duration = Duration::from_millis(1000);
/// Scheduling delay a loaded machine may add on top of a deadline; not the engine's doing.
const LOADED_MACHINE: Duration = Duration::from_secs(2);

fn engine() -> Brain {
    Brain::spawn(&bin("pbrain-fivezero"), &[])
}

/// A started engine with a short move time.
fn started(size: u32, rule: u32) -> Brain {
    let mut b = engine();
    b.send(&format!("START {size}"));
    assert_eq!(b.reply(HUNG), "OK");
    b.send("INFO timeout_turn 300");
    b.send("INFO timeout_match 100000");
    b.send(&format!("INFO rule {rule}"));
    b
}

fn expect_move(b: &mut Brain) -> (u32, u32) {
    let r = b.reply(HUNG);
    parse_move(&r).unwrap_or_else(|| panic!("expected a move, got {r:?}"))
}

/// START (and the process start, and loading the network) counts against the first move's time
/// under GomocupJudge, so it must never eat the tolerance. START takes about a tenth of a second
/// (`fivezero-tools bench startup`); the cap catches one that blocks for seconds.
#[test]
fn start_is_answered_within_the_tolerance() {
    let mut b = engine();
    let t = Instant::now();
    b.send("START 15");
    assert_eq!(b.reply(HUNG), "OK");
    assert!(
        t.elapsed() < TOLERANCE + LOADED_MACHINE,
        "START took {:?}",
        t.elapsed()
    );
}

#[test]
fn full_session_plays_legal_moves_in_time() {
    let mut b = started(15, 0);
    let mut board = Board::new(15, 15, Rule::Freestyle).unwrap();
    b.send("BEGIN");
    let (x, y) = expect_move(&mut b);
    board.play(Pos::new(x as usize, y as usize)).unwrap();
    for _ in 0..10 {
        // Opponent: the first empty point scanning from the corner (a weak but legal player).
        let p = board.points().find(|&p| board.is_empty(p)).unwrap();
        board.play(p).unwrap();
        let t = Instant::now();
        b.send(&format!("TURN {},{}", p.x(), p.y()));
        let (x, y) = expect_move(&mut b);
        // The 300 ms turn, the managers' tolerance and a loaded machine's delay: over that, the
        // engine ignored its time limit.
        assert!(
            t.elapsed() < Duration::from_millis(300) + TOLERANCE + LOADED_MACHINE,
            "reply took {:?}",
            t.elapsed()
        );
        board
            .play(Pos::new(x as usize, y as usize))
            .expect("engine move must be legal");
        if board.winner().is_some() {
            break;
        }
    }
    b.send("END");
    assert!(b.exits_within(HUNG));
}

#[test]
fn bad_lines_get_error_or_unknown_and_change_nothing() {
    let mut b = engine();
    b.send("TURN 7,7");
    assert!(b.reply(HUNG).starts_with("ERROR"), "TURN before START");
    b.send("BEGIN");
    assert!(b.reply(HUNG).starts_with("ERROR"), "BEGIN before START");
    b.send("START 4");
    assert!(b.reply(HUNG).starts_with("ERROR"));
    b.send("START 23");
    assert!(b.reply(HUNG).starts_with("ERROR"));
    b.send("START abc");
    assert!(b.reply(HUNG).starts_with("ERROR"));
    b.send("RECTSTART 20,15");
    assert_eq!(b.reply(HUNG), "OK");
    b.send("START 15");
    assert_eq!(b.reply(HUNG), "OK");
    b.send("INFO timeout_turn 300");
    b.send("FLY me to the moon");
    assert!(b.reply(HUNG).starts_with("UNKNOWN"));
    b.send("INFO timeout_turn banana"); // INFO never gets a reply, even a bad one
    b.send("INFO some_future_key 17");
    assert!(b.silent_for(Duration::from_millis(200)));
    b.send("TURN 15,3");
    assert!(b.reply(HUNG).starts_with("ERROR"), "off-board");
    b.send("TURN -1,3");
    assert!(b.reply(HUNG).starts_with("ERROR"), "negative");
    b.send("TURN 7,7");
    let first = expect_move(&mut b);
    b.send("TURN 7,7");
    assert!(b.reply(HUNG).starts_with("ERROR"), "occupied");
    b.send(&format!("TURN {},{}", first.0, first.1));
    assert!(
        b.reply(HUNG).starts_with("ERROR"),
        "occupied by the engine's own stone"
    );
    // Still the same game: a fresh legal TURN gets a move that is not on either stone.
    b.send("TURN 0,0");
    let m = expect_move(&mut b);
    assert!(m != (7, 7) && m != first && m != (0, 0));
}

#[test]
fn huge_lines_and_binary_garbage_do_not_kill_it() {
    let mut b = started(15, 0);
    let mut huge = vec![b'A'; 1 << 20];
    huge.extend_from_slice(b"\r\n");
    b.send_raw(&huge);
    assert!(b.reply(HUNG).starts_with("ERROR"));
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .filter(|&c| c != b'\n' && c != b'\r')
        .collect();
    b.send_raw(&garbage);
    b.send_raw(b"\n");
    let r = b.reply(HUNG);
    assert!(r.starts_with("UNKNOWN") || r.starts_with("ERROR"), "{r:?}");
    b.send("BEGIN");
    expect_move(&mut b);
}

#[test]
fn bad_board_blocks_are_refused_and_the_old_position_kept() {
    let mut b = started(15, 0);
    b.send("BEGIN");
    let first = expect_move(&mut b);
    for block in [
        "BOARD\r\n7,7,1\r\n7,7,2\r\nDONE",  // overlapping stones
        "BOARD\r\n7,7,1\r\n15,2,2\r\nDONE", // off-board
        "BOARD\r\n1,1,1\r\n2,2,1\r\n3,3,1\r\n4,4,2\r\nDONE", // impossible stone counts
        "BOARD\r\n7,7,9\r\nDONE",           // unknown owner
    ] {
        for line in block.split("\r\n") {
            b.send(line);
        }
        let r = b.reply(HUNG);
        assert!(r.starts_with("ERROR"), "{block:?} -> {r:?}");
    }
    // The game continues from the old position: the engine's first stone is still there.
    b.send(&format!("TURN {},{}", first.0, first.1));
    assert!(b.reply(HUNG).starts_with("ERROR"));
}

#[test]
fn board_takeback_play_about_restart() {
    let mut b = started(15, 0);
    for line in ["BOARD", "7,7,2", "8,8,1", "6,6,2", "DONE"] {
        b.send(line);
    }
    let m = expect_move(&mut b);
    assert!(![(7, 7), (8, 8), (6, 6)].contains(&m));
    b.send(&format!("TAKEBACK {},{}", m.0, m.1));
    assert_eq!(b.reply(HUNG), "OK");
    b.send(&format!("PLAY {},{}", m.0, m.1));
    assert_eq!(b.reply(HUNG), format!("{},{}", m.0, m.1));
    b.send("TAKEBACK 14,14");
    assert!(
        b.reply(HUNG).starts_with("ERROR"),
        "nothing to take back there"
    );
    b.send("ABOUT");
    let about = b.reply(HUNG);
    assert!(about.contains("name=\"fivezero\""), "{about}");
    b.send("RESTART");
    assert_eq!(b.reply(HUNG), "OK");
    b.send("BEGIN");
    expect_move(&mut b);
}

#[test]
fn wins_at_once_and_blocks_a_five() {
    // Own four with an open end: the engine must complete five.
    let mut b = started(15, 0);
    for line in [
        "BOARD", "3,7,1", "4,7,1", "5,7,1", "6,7,1", "2,7,2", "0,0,2", "0,14,2", "14,0,2", "DONE",
    ] {
        b.send(line);
    }
    assert_eq!(expect_move(&mut b), (7, 7));
    // Opponent four: the engine must block it.
    let mut b = started(15, 1);
    for line in [
        "BOARD", "3,7,2", "4,7,2", "5,7,2", "6,7,2", "2,7,1", "0,0,1", "14,14,1", "DONE",
    ] {
        b.send(line);
    }
    assert_eq!(expect_move(&mut b), (7, 7));
}

#[test]
fn renju_black_never_plays_forbidden_and_reports_them() {
    // Black (the engine: equal stone counts) has a double-three at (7,7); the point must appear in
    // YXSHOWFORBID and never be played.
    let mut b = started(15, 4);
    let stones = [
        "5,7,1", "6,7,1", "7,5,1", "7,6,1", "0,0,2", "14,14,2", "0,14,2", "14,0,2",
    ];
    b.send("YXBOARD");
    for s in stones {
        b.send(s);
    }
    b.send("DONE");
    b.send("YXSHOWFORBID");
    let forbid = b.reply(HUNG);
    assert!(
        forbid.starts_with("FORBID") && forbid.contains("0707"),
        "{forbid}"
    );
    b.send("BOARD");
    for s in stones {
        b.send(s);
    }
    b.send("DONE");
    let m = expect_move(&mut b);
    let mut board = Board::new(15, 15, Rule::Renju).unwrap();
    for (i, s) in stones.iter().enumerate() {
        let v: Vec<usize> = s.split(',').map(|n| n.parse().unwrap()).collect();
        board
            .place(
                Pos::new(v[0], v[1]),
                if i < 4 { Color::Black } else { Color::White },
            )
            .unwrap();
    }
    assert!(
        !board.is_forbidden(Pos::new(m.0 as usize, m.1 as usize)),
        "played forbidden {m:?}"
    );
    assert_ne!(m, (7, 7));
}

#[test]
fn stop_and_end_are_seen_while_thinking() {
    let mut b = engine();
    b.send("START 20");
    assert_eq!(b.reply(HUNG), "OK");
    b.send("INFO timeout_turn 30000");
    b.send("INFO timeout_match 0");
    b.send("BOARD");
    for s in ["10,10,2", "11,11,1", "9,11,2", "12,9,1", "8,12,2"] {
        b.send(s);
    }
    b.send("DONE");
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    b.send("YXSTOP");
    expect_move(&mut b);
    // Far below the 30 s turn the search would otherwise take; seconds above a prompt answer.
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "YXSTOP answered after {:?}",
        t.elapsed()
    );
    b.send("TURN 0,0");
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    b.send("END");
    assert!(b.exits_within(HUNG), "END while thinking");
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn exits_on_eof() {
    let mut b = started(15, 0);
    b.close_stdin();
    assert!(b.exits_within(HUNG));
}

#[test]
fn swap2_answers_at_zero_three_and_five_stones() {
    // Plain x,y lines, as GomocupJudge sends them, and x,y,f lines, as some tools do.
    let mut b = started(15, 0);
    b.send("SWAP2BOARD");
    b.send("DONE");
    let r = b.reply(HUNG);
    assert_eq!(r.split_whitespace().count(), 3, "three stones: {r}");
    for stones in [
        vec!["7,7", "8,8", "7,9"],
        vec!["7,7", "8,8", "7,9", "9,9", "6,8"],
        vec!["7,7,2", "8,8,1", "7,9,2"],
        vec!["7,7,1", "8,8,2", "7,9,1", "9,9,2", "6,8,1"],
    ] {
        b.send("SWAP2BOARD");
        for s in &stones {
            b.send(s);
        }
        b.send("DONE");
        let r = b.reply(HUNG);
        let answers = r.split_whitespace().count();
        let two_ok = stones.len() == 3 && answers == 2;
        assert!(
            r == "SWAP" || parse_move(&r).is_some() || two_ok,
            "{stones:?} -> {r}"
        );
    }
}

#[test]
fn position_blocks_before_start_and_bad_swap2_blocks_are_refused() {
    // No board announced yet: ERROR and no move, like TURN and BEGIN.
    let mut b = engine();
    for block in [
        "BOARD\r\nDONE",
        "BOARD\r\n7,7,2\r\nDONE",
        "YXBOARD\r\n7,7,2\r\nDONE",
        "SWAP2BOARD\r\nDONE",
    ] {
        for line in block.split("\r\n") {
            b.send(line);
        }
        let r = b.reply(HUNG);
        assert!(r.starts_with("ERROR"), "{block:?} before START -> {r:?}");
    }
    b.send("START 15");
    assert_eq!(b.reply(HUNG), "OK");
    b.send("INFO timeout_turn 300");
    // The YXBOARD before START left nothing behind: 7,7 is free.
    b.send("TURN 7,7");
    let first = expect_move(&mut b);
    let bad: [&[u8]; 9] = [
        b"SWAP2BOARD\r\n7,7\r\nDONE\r\n",                      // 1 stone
        b"SWAP2BOARD\r\n7,7\r\n8,8\r\nDONE\r\n",               // 2 stones
        b"SWAP2BOARD\r\n1,1\r\n2,2\r\n3,3\r\n4,4\r\nDONE\r\n", // 4 stones
        b"SWAP2BOARD\r\n1,1\r\n2,2\r\n3,3\r\n4,4\r\n5,5\r\n6,6\r\nDONE\r\n", // 6 stones
        b"SWAP2BOARD\r\n7,7\r\n8,8,2\r\n9,9\r\nDONE\r\n",      // mixed forms
        b"SWAP2BOARD\r\n7,7\r\n15,8\r\n9,9\r\nDONE\r\n",       // off the board
        b"SWAP2BOARD\r\n7,7\r\n8,8\r\n7,7\r\nDONE\r\n",        // two stones on one point
        b"SWAP2BOARD\r\n7,7\r\n8,8 8\r\n9,9\r\nDONE\r\n",      // malformed line
        b"SWAP2BOARD\r\n7,7\r\n8,\xff8\r\n9,9\r\nDONE\r\n",    // invalid UTF-8
    ];
    for block in bad {
        b.send_raw(block);
        let r = b.reply(HUNG);
        assert!(
            r.starts_with("ERROR SWAP2BOARD"),
            "{} -> {r:?}",
            String::from_utf8_lossy(block)
        );
    }
    // The game goes on from the old position: both stones are still there.
    b.send(&format!("TURN {},{}", first.0, first.1));
    assert!(b.reply(HUNG).starts_with("ERROR"));
    b.send("TURN 7,7");
    assert!(b.reply(HUNG).starts_with("ERROR"));
    b.send("TURN 0,0");
    let m = expect_move(&mut b);
    assert!(m != (7, 7) && m != first && m != (0, 0));
}

#[test]
fn time_limits_are_honoured_under_a_match_clock() {
    let mut b = engine();
    b.send("START 15");
    assert_eq!(b.reply(HUNG), "OK");
    b.send("INFO timeout_turn 5000");
    b.send("INFO timeout_match 10000");
    b.send("INFO time_left 900");
    let t = Instant::now();
    b.send("BOARD");
    for s in ["7,7,2", "8,8,1", "6,8,2", "8,6,1", "9,7,2"] {
        b.send(s);
    }
    b.send("DONE");
    expect_move(&mut b);
    // 900 ms left in the match: the engine plans a third at most (unit-tested in engine::time);
    // here it must at least never run the match clock out. The cap leaves room for a loaded
    // machine's delay and stays below the 5 s turn an engine ignoring the match clock would take.
    assert!(
        t.elapsed() < Duration::from_millis(900) + LOADED_MACHINE,
        "took {:?} with 900 ms left",
        t.elapsed()
    );
}

#[test]
fn yxnbest_answers_without_playing_the_move() {
    // An analysis request: the engine names its best move but the position stays as it was, so
    // the opponent may then play on that very point.
    let mut b = started(15, 0);
    b.send("YXBOARD");
    b.send("7,7,2");
    b.send("DONE");
    b.send("YXNBEST 1");
    let (x, y) = expect_move(&mut b);
    b.send(&format!("TURN {x},{y}"));
    let r = b.reply(HUNG);
    let (x2, y2) = parse_move(&r)
        .unwrap_or_else(|| panic!("TURN on the analysed point must be legal, got {r:?}"));
    assert_ne!((x2, y2), (x, y));
    assert_ne!((x2, y2), (7, 7));
}

/// The networks built into the engine play what they claim: each rule on 15x15 and 20x20; another
/// game (freestyle and standard on 19x19) is played with the classical evaluator and a MESSAGE
/// says why. `--model none` and `INFO model none` choose the classical evaluator; a bad `INFO
/// model` value or a missing file is a MESSAGE, and the engine plays on.
#[test]
fn the_embedded_network_plays_what_it_claims_and_the_classical_evaluator_the_rest() {
    let said = |b: &Brain, what: &str| b.messages.iter().any(|m| m.contains(what));
    for (size, rule) in [
        (15, 0),
        (20, 0),
        (15, 1),
        (20, 1),
        (15, 4),
        (20, 4),
        (15, 8),
        (20, 8),
    ] {
        let mut b = started(size, rule);
        b.send("BEGIN");
        expect_move(&mut b);
        assert!(
            said(&b, "embedded default"),
            "{size} rule {rule}: {:?}",
            b.messages
        );
        assert!(
            !said(&b, "played with the classical evaluator"),
            "{size} rule {rule}: {:?}",
            b.messages
        );
        b.send("END");
    }

    for (size, rule) in [(19, 1), (19, 0)] {
        let mut b = started(size, rule);
        b.send("TURN 8,8");
        expect_move(&mut b);
        assert!(
            said(&b, "this game is played with the classical evaluator"),
            "{size} rule {rule}: {:?}",
            b.messages
        );
        b.send("END");
    }

    let mut b = Brain::spawn(&bin("pbrain-fivezero"), &["--model", "none"]);
    b.send("START 15");
    assert_eq!(b.reply(HUNG), "OK");
    assert!(!said(&b, "embedded default"), "{:?}", b.messages);
    for bad in ["INFO model", "INFO model /no/such/model.onnx"] {
        b.send(bad);
    }
    b.send("INFO timeout_turn 300");
    b.send("TURN 8,8");
    expect_move(&mut b);
    assert!(said(&b, "INFO model: empty model"), "{:?}", b.messages);
    assert!(
        said(&b, "no model at /no/such/model.onnx"),
        "{:?}",
        b.messages
    );
    b.send("INFO model default");
    b.send("TURN 8,9");
    expect_move(&mut b);
    assert!(said(&b, "embedded default"), "{:?}", b.messages);
    b.send("END");
}
