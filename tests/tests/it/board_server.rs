//! `fivezero-board` over its WebSocket, as the page speaks to it (docs/board.md): a game against
//! the engine, refused moves and bad input (the game unchanged), renju forbidden points, record
//! files, a streamed analysis, the CPU shared between boards, and the server's own defences:
//! other hosts and origins refused, boards and message sizes bounded, a failed engine replaced.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use fivezero_tests::board::{BoardServer, Page};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// A fresh board: its hello and first state read.
fn open(server: &BoardServer) -> Page {
    let mut page = server.connect();
    let hello = page.wait_for("hello", WAIT, |_| true);
    assert_eq!(hello["version"], env!("CARGO_PKG_VERSION"));
    page.wait_for("state", WAIT, |_| true);
    page
}

fn new_game(page: &mut Page, rule: &str, engine: &str) -> Value {
    page.send(
        json!({"type": "new_game", "rule": rule, "width": 15, "height": 15,
                     "engine": engine, "visits": 40}),
    );
    page.wait_for("state", WAIT, |s| s["ply"] == 0 && s["rule"] == rule)
}

fn error(page: &mut Page) -> String {
    page.wait_for("error", WAIT, |_| true)["text"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Status line and body of a plain GET with `host` as its Host header.
fn get(server: &BoardServer, path: &str, host: &str) -> (String, String) {
    let mut s = TcpStream::connect(&server.host).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

#[test]
fn serves_its_page_and_refuses_other_hosts_and_origins() {
    let server = BoardServer::start(&["--model", "none"]);
    let (status, body) = get(&server, "/", &server.host);
    assert!(status.contains("200"), "{status}");
    assert!(body.contains("id=\"board\"") && body.contains("board.js"));
    for path in ["/board.js", "/board.css"] {
        assert!(get(&server, path, &server.host).0.contains("200"), "{path}");
    }
    let port = server.host.rsplit(':').next().unwrap();
    assert!(
        get(&server, "/", &format!("localhost:{port}"))
            .0
            .contains("200")
    );
    assert!(get(&server, "/nothing", &server.host).0.contains("404"));
    // A page of another site reaching the loopback server by DNS rebinding names another host.
    let (status, _) = get(&server, "/", &format!("evil.example:{port}"));
    assert!(status.contains("403"), "{status}");
    // A page of another site opening the socket sends its own origin.
    match server.connect_from("http://evil.example") {
        Err(tungstenite::Error::Http(r)) => assert_eq!(r.status(), 403),
        Err(e) => panic!("refused, but not by status: {e}"),
        Ok(_) => panic!("a WebSocket from another origin was accepted"),
    }
}

#[test]
fn plays_against_the_engine_and_refuses_bad_moves() {
    let server = BoardServer::start(&["--model", "none"]);
    let mut page = open(&server);
    new_game(&mut page, "freestyle", "white");
    page.send(json!({"type": "play", "x": 7, "y": 7}));
    let answered = page.wait_for("state", WAIT, |s| s["ply"] == 2 && s["busy"].is_null());
    assert_eq!(answered["line"][0], json!([7, 7]));
    assert_eq!(answered["to_move"], "black");
    assert!(answered["winrates"][1].is_number(), "{answered}");
    let reply = answered["line"][1].clone();

    page.send(json!({"type": "play", "x": reply[0], "y": reply[1]}));
    assert!(error(&mut page).contains("already taken"));
    page.send(json!({"type": "play", "x": 15, "y": 0}));
    assert!(error(&mut page).contains("off the 15x15 board"));
    page.send(
        json!({"type": "new_game", "rule": "gomoku", "width": 15, "height": 15, "engine": "none"}),
    );
    assert!(error(&mut page).contains("unknown rule"));
    page.send(
        json!({"type": "new_game", "rule": "renju", "width": 23, "height": 15, "engine": "none"}),
    );
    assert!(error(&mut page).contains("23x15"));
    page.send(json!({"type": "new_game", "rule": "renju", "width": 15, "height": 15, "engine": "none", "time_ms": 0}));
    assert!(error(&mut page).contains("time_ms"));
    page.socket
        .send(tungstenite::Message::text("{\"type\": \"play\", \"x\": 1"))
        .unwrap();
    assert!(error(&mut page).contains("bad request"));
    page.send(json!({"type": "inject_fault"}));
    assert!(error(&mut page).contains("unknown request"));
    page.send(json!({"type": "load", "text": "h8 zz"}));
    assert!(error(&mut page).contains("position"));

    // None of it touched the game; undo goes back to the person's turn, redo forward again.
    page.send(json!({"type": "undo"}));
    let back = page.wait_for("state", WAIT, |_| true);
    assert_eq!(
        (back["ply"].clone(), back["line"].as_array().unwrap().len()),
        (json!(0), 2)
    );
    page.send(json!({"type": "redo"}));
    page.wait_for("state", WAIT, |s| s["ply"] == 2);

    // A five ends the game and says whose and where.
    page.send(json!({"type": "new_game", "rule": "freestyle", "width": 15, "height": 15, "engine": "none"}));
    page.wait_for("state", WAIT, |s| s["ply"] == 0 && s["engine"] == "none");
    page.send(json!({"type": "load", "text": "h8a1i8a2j8a3k8a5"}));
    page.wait_for("state", WAIT, |s| s["ply"] == 8);
    page.send(json!({"type": "play", "x": 11, "y": 7}));
    let won = page.wait_for("state", WAIT, |s| !s["result"].is_null());
    assert_eq!(won["result"]["winner"], "black");
    assert_eq!(won["result"]["five"].as_array().unwrap().len(), 5);
    page.send(json!({"type": "play", "x": 0, "y": 0}));
    assert!(error(&mut page).contains("game is over"));
}

#[test]
fn renju_forbidden_points_and_record_files() {
    let server = BoardServer::start(&["--model", "none"]);
    let mut page = open(&server);
    new_game(&mut page, "renju", "none");
    // Black to move; h8 would make two open threes (g8-i8 and h7-h9).
    page.send(json!({"type": "load", "text": "g8a1i8a3h7a5h9a7"}));
    let s = page.wait_for("state", WAIT, |s| s["ply"] == 8);
    assert!(
        s["forbidden"].as_array().unwrap().contains(&json!([7, 7])),
        "{s}"
    );
    page.send(json!({"type": "play", "x": 7, "y": 7}));
    assert!(error(&mut page).contains("forbidden"));

    let pgn = "[Event \"fivezero-tools tournament\"]\n[Black \"a\"]\n[White \"b\"]\n[Rule \"freestyle\"]\n\
               [Size \"20x20\"]\n[Result \"1-0\"]\n\n1. k10 l11 2. k11 l12 3. k12 l13 4. k13 l14 5. k14 1-0\n\n\
               [Black \"b\"]\n[White \"a\"]\n[Rule \"renju\"]\n[Size \"15x15\"]\n[Result \"*\"]\n\n1. h8 i9 *\n";
    page.send(json!({"type": "load", "text": pgn}));
    let games = page.wait_for("games", WAIT, |_| true);
    assert_eq!(games["games"].as_array().unwrap().len(), 2);
    assert_eq!(games["games"][0]["title"], "a - b (1-0)");
    let opened = page.wait_for("state", WAIT, |s| s["width"] == 20);
    assert_eq!(
        (
            opened["ply"].clone(),
            opened["line"].as_array().unwrap().len()
        ),
        (json!(0), 9)
    );
    assert_eq!(opened["engine"], "none");
    page.send(json!({"type": "goto", "ply": 9}));
    let end = page.wait_for("state", WAIT, |s| s["ply"] == 9);
    assert_eq!(end["result"]["winner"], "black");
    page.send(json!({"type": "open_game", "index": 1}));
    page.wait_for("state", WAIT, |s| {
        s["rule"] == "renju" && s["line"].as_array().unwrap().len() == 2
    });
    page.send(json!({"type": "goto", "ply": 3}));
    assert!(error(&mut page).contains("2 moves"));
    page.send(json!({"type": "load", "text": "[Size \"15x15\"]\n\n1. h8 zz\n"}));
    assert!(error(&mut page).contains("line 3"));
    page.send(json!({"type": "load", "text": "(;SZ[15];B[hh];B[ii])"}));
    assert!(error(&mut page).contains("W was to play"));
    page.send(json!({"type": "open_game", "index": 5}));
    assert!(error(&mut page).contains("no game 5"));
}

#[test]
fn analysis_streams_ranked_moves_until_stopped() {
    let server = BoardServer::start(&["--model", "none"]);
    let mut page = open(&server);
    new_game(&mut page, "freestyle", "none");
    page.send(json!({"type": "load", "text": "h8i9h9h10g8"}));
    page.wait_for("state", WAIT, |s| s["ply"] == 5);
    page.send(json!({"type": "analyse", "nbest": 3}));
    let a = page.wait_for("analysis", WAIT, |a| {
        a["final"] == false && a["candidates"].as_array().unwrap().len() >= 2
    });
    assert_eq!(a["ply"], 5);
    for c in a["candidates"].as_array().unwrap() {
        let w = c["winrate"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&w) && c["pv"][0] == c["move"], "{c}");
    }
    page.send(json!({"type": "stop"}));
    page.wait_for("state", WAIT, |s| s["busy"].is_null());

    // A proven win ends the analysis by itself, marked on the move and the position.
    page.send(json!({"type": "load", "text": "h8a1i8a2j8a3g8a5"}));
    page.wait_for("state", WAIT, |s| s["ply"] == 8);
    page.send(json!({"type": "analyse", "nbest": 3}));
    let proof = page.wait_for("analysis", WAIT, |a| a["final"] == true);
    assert_eq!(proof["proven"], "win", "{proof}");
    assert_eq!(proof["candidates"][0]["proven"], "win", "{proof}");
    assert!([json!([10, 7]), json!([5, 7])].contains(&proof["candidates"][0]["move"]));
    page.wait_for("state", WAIT, |s| {
        s["busy"].is_null() && s["winrates"][8] == 1.0
    });
}

#[test]
fn boards_share_one_search_slot_in_turns() {
    let server = BoardServer::start(&["--model", "none", "--searches", "1"]);
    let (mut a, mut b) = (open(&server), open(&server));
    for page in [&mut a, &mut b] {
        new_game(page, "freestyle", "none");
        page.send(json!({"type": "load", "text": "h8i9h9"}));
        page.wait_for("state", WAIT, |s| s["ply"] == 3);
    }
    a.send(json!({"type": "analyse", "nbest": 2}));
    a.wait_for("analysis", WAIT, |_| true);
    b.send(json!({"type": "analyse", "nbest": 2}));
    // B waits behind A, says so, and gets the CPU once A's slice is over; then A waits.
    b.wait_for("queue", WAIT, |q| q["ahead"] == 1);
    b.wait_for("analysis", WAIT, |_| true);
    a.wait_for("queue", WAIT, |q| q["ahead"].as_u64() >= Some(1));
    // A closed tab frees its turn: B searches on without waiting again.
    drop(a);
    b.wait_for("analysis", WAIT, |_| true);
}

#[test]
fn stop_plays_at_once_even_while_the_engine_waits_for_the_cpu() {
    let server = BoardServer::start(&["--model", "none", "--searches", "1"]);
    let (mut a, mut b) = (open(&server), open(&server));
    for page in [&mut a, &mut b] {
        page.send(
            json!({"type": "new_game", "rule": "freestyle", "width": 15, "height": 15,
                         "engine": "white", "time_ms": 600_000}),
        );
        page.wait_for("state", WAIT, |s| s["ply"] == 0 && s["time_ms"] == 600_000);
    }
    // A's move holds the only slot (an engine move is not preempted); B's waits behind it.
    a.send(json!({"type": "play", "x": 7, "y": 7}));
    a.wait_for("state", WAIT, |s| s["busy"] == "thinking");
    b.send(json!({"type": "play", "x": 7, "y": 7}));
    b.wait_for("queue", WAIT, |q| q["ahead"] == 1);
    b.send(json!({"type": "stop"}));
    let moved = b.wait_for("state", WAIT, |s| s["ply"] == 2 && s["busy"].is_null());
    assert_ne!(moved["line"][1], moved["line"][0]);
    a.send(json!({"type": "stop"}));
    a.wait_for("state", WAIT, |s| s["ply"] == 2 && s["busy"].is_null());
}

#[test]
fn boards_and_messages_are_bounded_and_a_failed_engine_is_replaced() {
    let mut server = BoardServer::start(&[
        "--model",
        "none",
        "--max-boards",
        "1",
        "--allow-fault-injection",
    ]);
    let mut first = open(&server);
    let mut second = server.connect();
    assert!(error(&mut second).contains("boards are open"));
    // A message over the size cap closes that socket and nothing else.
    let huge = format!(
        "{{\"type\":\"load\",\"text\":\"{}\"}}",
        "h8".repeat(3 << 20)
    );
    let _ = first.socket.send(tungstenite::Message::text(huge));
    assert!(first.next(WAIT).is_none_or(|m| m["type"] != "state"));
    drop(first);
    assert!(server.is_running());
    let mut page = (0..50)
        .find_map(|_| {
            std::thread::sleep(Duration::from_millis(100));
            let mut p = server.connect();
            (p.next(WAIT)?["type"] == "hello").then_some(p)
        })
        .expect("the closed board's place is free again");
    page.wait_for("state", WAIT, |_| true);
    page.send(json!({"type": "inject_fault"}));
    assert!(
        page.wait_for("fault", WAIT, |_| true)["text"]
            .as_str()
            .unwrap()
            .contains("fresh engine")
    );
    new_game(&mut page, "freestyle", "white");
    page.send(json!({"type": "play", "x": 7, "y": 7}));
    page.wait_for("state", WAIT, |s| s["ply"] == 2);
}

#[test]
fn a_watched_model_folder_brings_new_checkpoints_into_play() {
    let models = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../models");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(models.join("default.onnx"), dir.path().join("a.onnx")).unwrap();
    let server = BoardServer::start(&["--model", dir.path().to_str().unwrap()]);
    let mut page = open(&server);
    page.send(
        json!({"type": "new_game", "rule": "freestyle", "width": 20, "height": 20,
                     "engine": "none", "visits": 40}),
    );
    // The folder's model claims freestyle 15x15 only: a 20x20 game is the classical evaluator's.
    let s = page.wait_for("state", WAIT, |s| s["width"] == 20);
    assert!(s["model"].as_str().unwrap().contains("classical"), "{s}");
    // A trainer writes a newer checkpoint, one that claims 20x20: it plays from then on.
    std::thread::sleep(Duration::from_millis(1100));
    let part = dir.path().join("b.onnx.part");
    std::fs::copy(models.join("default-freestyle-20x20.onnx"), &part).unwrap();
    std::fs::rename(&part, dir.path().join("b.onnx")).unwrap();
    let m = page.wait_for("message", WAIT, |m| {
        m["text"].as_str().unwrap().contains("b.onnx")
    });
    assert!(m["text"].as_str().unwrap().contains("loaded"), "{m}");
    page.send(json!({"type": "play", "x": 10, "y": 10}));
    let s = page.wait_for("state", WAIT, |s| s["ply"] == 1);
    assert!(s["model"].as_str().unwrap().contains("native"), "{s}");
}

/// The engine thinks far longer than the test waits, so the click always lands during its
/// thinking; stop then makes it play, whether it is searching or still waiting for the CPU.
#[test]
fn a_click_while_the_engine_thinks_is_refused_and_its_move_still_comes() {
    let server = BoardServer::start(&["--model", "none"]);
    let mut page = open(&server);
    page.send(
        json!({"type": "new_game", "rule": "freestyle", "width": 15, "height": 15,
                     "engine": "white", "time_ms": 600_000}),
    );
    page.wait_for("state", WAIT, |s| s["ply"] == 0 && s["time_ms"] == 600_000);
    page.send(json!({"type": "play", "x": 7, "y": 7}));
    page.wait_for("state", WAIT, |s| s["busy"] == "thinking");
    page.send(json!({"type": "play", "x": 0, "y": 0}));
    assert!(error(&mut page).contains("fivezero's move"));
    page.send(json!({"type": "stop"}));
    let answered = page.wait_for("state", WAIT, |s| s["ply"] == 2 && s["busy"].is_null());
    assert_eq!(answered["line"][0], json!([7, 7]));
    assert_ne!(answered["line"][1], json!([0, 0]));
}
