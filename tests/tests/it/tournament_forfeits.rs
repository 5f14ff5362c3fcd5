//! Every forfeit path of `fivezero-tools tournament`, proven with `pbrain-faulty`: a good
//! brain (`random-legal`) plays a faulty one for two games (one per colour) and the summary must
//! show the right loss reason, with the engine restarted where needed. A hung manager fails the
//! test at the harness's cap.

use std::time::Duration;

use fivezero_tests::referee::{Run, args, faulty, tournament};

const CAP: Duration = Duration::from_secs(20);

/// good (first) vs bad, two games, fast clock; `extra` are more tournament flags.
fn match_vs(mode: &str, bad_args: &[&str], extra: &[&str]) -> Run {
    let engines = [
        faulty("good", "random-legal", &[]),
        faulty("bad", mode, bad_args),
    ];
    two_games(
        engines,
        &[&["--turn-ms", "300", "--tolerance-ms", "200"], extra].concat(),
    )
}

/// Two games (one per colour) between the two engine specs, with the tournament flags `flags`;
/// the tournament itself must finish cleanly.
fn two_games(engines: [String; 2], flags: &[&str]) -> Run {
    let mut a = Vec::new();
    for e in engines {
        a.extend(["--engine".to_string(), e]);
    }
    a.extend(args(&["--games", "2"]));
    a.extend(args(flags));
    let run = tournament(&a, CAP);
    assert_eq!(
        run.code,
        Some(0),
        "stderr: {}\nstdout: {}",
        run.stderr,
        run.stdout
    );
    run
}

fn assert_forfeits(run: &Run, reason: &str, n: u64) {
    assert_eq!(
        run.forfeits("bad", reason),
        n,
        "{reason}: {}\n{}\n{}",
        run.json,
        run.records,
        run.wire
    );
    assert_eq!(run.engine("good")["wins"], n, "{}", run.json);
    assert_eq!(run.forfeits("good", reason), 0);
    assert!(
        run.records.contains(&format!("forfeits: {reason}")),
        "{}",
        run.records
    );
}

#[test]
fn timeout_is_a_loss_and_the_engine_is_restarted() {
    let run = match_vs("timeout", &["--at", "2"], &[]);
    assert_forfeits(&run, "timeout", 2);
    assert!(
        run.engine("bad")["restarts"].as_u64().unwrap() >= 1,
        "{}",
        run.json
    );
}

#[test]
fn match_clock_runs_out() {
    // 150 ms per move against a 400 ms match clock with 100 ms tolerance: the fourth move is late.
    let run = match_vs(
        "slow",
        &["--delay", "150"],
        &[
            "--turn-ms",
            "1000",
            "--match-ms",
            "400",
            "--tolerance-ms",
            "100",
        ],
    );
    assert_forfeits(&run, "timeout", 2);
    let bad = run.engine("bad");
    assert!(bad["slowest_reply_ms"].as_f64().unwrap() >= 150.0, "{bad}");
    assert!(
        bad["slowest_reply_budget_ms"].as_u64().unwrap() <= 400,
        "{bad}"
    );
}

#[test]
fn slow_replies_within_the_budget_are_fine() {
    let run = match_vs("slow", &["--delay", "30"], &["--turn-ms", "500"]);
    assert_eq!(
        run.engine("bad")["forfeits"].as_object().map(|m| m.len()),
        Some(0),
        "{}",
        run.json
    );
    let bad = run.engine("bad");
    assert!(bad["slowest_reply_ms"].as_f64().unwrap() >= 30.0, "{bad}");
    assert_eq!(bad["slowest_reply_budget_ms"], 500);
}

#[test]
fn time_odds_give_an_engine_its_own_clock() {
    // Both brains take 250 ms a move. The one given 1000 ms a move in its spec plays on; the
    // other has --turn-ms 100 (+100 ms tolerance) and loses each game on time.
    let engines = [
        faulty("odds", "slow", &["--delay", "250"]) + ",turn_ms=1000",
        faulty("bad", "slow", &["--delay", "250"]),
    ];
    let run = two_games(engines, &["--turn-ms", "100", "--tolerance-ms", "100"]);
    assert_eq!(run.forfeits("bad", "timeout"), 2, "{}", run.json);
    let odds = run.engine("odds");
    assert_eq!(
        odds["forfeits"].as_object().map(|m| m.len()),
        Some(0),
        "{odds}"
    );
    assert_eq!(odds["turn_ms"], 1000);
    assert_eq!(odds["slowest_reply_budget_ms"], 1000);
    assert_eq!(run.engine("bad")["turn_ms"], 100);
    assert!(run.stdout.contains("1000 ms/move"), "{}", run.stdout);

    // A match clock of its own: 150 ms a move against 400 ms a game runs out by the fourth move,
    // while the opponent has no match clock at all.
    let engines = [
        faulty("good", "random-legal", &[]),
        faulty("bad", "slow", &["--delay", "150"]) + ",match_ms=400",
    ];
    let run = two_games(engines, &["--turn-ms", "1000", "--tolerance-ms", "100"]);
    assert_forfeits(&run, "timeout", 2);
    let bad = run.engine("bad");
    assert_eq!(bad["match_ms"], 400);
    assert!(
        bad["slowest_reply_budget_ms"].as_u64().unwrap() <= 400,
        "{bad}"
    );
    assert_eq!(run.engine("good")["match_ms"], serde_json::Value::Null);
}

#[test]
fn crash_mid_game_is_a_loss_and_the_engine_is_restarted() {
    let run = match_vs("crash", &["--at", "3"], &[]);
    assert_forfeits(&run, "crash", 2);
    assert_eq!(run.engine("bad")["restarts"], 1, "{}", run.json);
}

#[test]
fn move_on_an_occupied_point_loses() {
    let run = match_vs("occupied", &["--at", "2"], &[]);
    assert_forfeits(&run, "occupied", 2);
    // A responsive engine is kept alive between games.
    assert_eq!(run.engine("bad")["restarts"], 0, "{}", run.json);
}

#[test]
fn off_board_move_loses() {
    let run = match_vs("off-board", &["--at", "1"], &[]);
    assert_forfeits(&run, "off-board", 2);
}

#[test]
fn garbled_reply_loses() {
    let run = match_vs("garbage", &["--at", "2"], &[]);
    assert_forfeits(&run, "garbled", 2);
}

#[test]
fn forbidden_move_under_renju_is_a_foul() {
    // Black to move with a double three at 7,7 (threes on row 7 and column 7).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("openings.txt");
    std::fs::write(&file, "5,7 0,0 6,7 14,0 7,5 0,14 7,6 14,14\n").unwrap();
    let run = match_vs(
        "forbidden",
        &[],
        &[
            "--rule",
            "renju",
            "--repeat",
            "--openings",
            file.to_str().unwrap(),
            "--turn-ms",
            "1000",
        ],
    );
    // Only the game where the faulty brain is black ends in a foul.
    assert_eq!(
        run.forfeits("bad", "forbidden"),
        1,
        "{}\n{}",
        run.json,
        run.records
    );
    assert!(run.records.contains("renju foul"), "{}", run.records);
    let fouls: Vec<_> = run.json["games"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["forfeit"] == "forbidden")
        .collect();
    assert_eq!(fouls.len(), 1);
    assert_eq!(fouls[0]["black"], "bad");
    assert_eq!(fouls[0]["result"], "0-1");
}

#[test]
fn engine_that_ignores_end_is_killed() {
    let run = match_vs("ignore-end", &[], &["--end-grace-ms", "300"]);
    assert_eq!(run.engine("bad")["killed_after_end"], 1, "{}", run.json);
    assert_eq!(run.engine("good")["killed_after_end"], 0, "{}", run.json);
    assert_eq!(run.json["games_played"], 2);
}

#[test]
fn engine_that_never_answers_start_forfeits() {
    let run = match_vs("no-start", &[], &["--start-timeout-ms", "1000"]);
    assert_forfeits(&run, "start", 2);
}

#[test]
fn engine_that_refuses_start_forfeits() {
    let run = match_vs("error-start", &[], &[]);
    assert_forfeits(&run, "start", 2);
}

#[test]
fn slow_start_within_the_start_timeout_is_fine_and_too_slow_forfeits() {
    // The start timeout also covers process start-up (tables, models), so the good brain gets
    // a margin that holds on a loaded 2-core machine.
    let ok = match_vs(
        "slow-start",
        &["--delay", "200"],
        &["--start-timeout-ms", "2000"],
    );
    assert_eq!(
        ok.engine("bad")["forfeits"].as_object().map(|m| m.len()),
        Some(0),
        "{}",
        ok.json
    );
    let late = match_vs(
        "slow-start",
        &["--delay", "1500"],
        &["--start-timeout-ms", "700"],
    );
    assert_forfeits(&late, "start", 2);
}

#[test]
fn message_and_debug_lines_are_not_moves() {
    // The chatty brain writes `MESSAGE ... 7,7` and `DEBUG 7,7` before every move.
    let run = match_vs("chatty", &[], &[]);
    for name in ["good", "bad"] {
        assert_eq!(
            run.engine(name)["forfeits"].as_object().map(|m| m.len()),
            Some(0),
            "{}",
            run.json
        );
    }
    assert!(run.wire.contains("DEBUG 7,7"));
    // What an engine says before its OK to START is kept, once, for the reader of the match.
    let said = "chatty brain, playing random legal moves";
    assert_eq!(run.engine("bad")["start_message"], said, "{}", run.json);
    assert!(
        run.engine("good")["start_message"].is_null(),
        "{}",
        run.json
    );
    assert!(
        run.stdout.contains(&format!("said at START: {said}")),
        "{}",
        run.stdout
    );
}

#[test]
fn memory_over_the_limit_forfeits() {
    let run = match_vs(
        "memory",
        &["--mb", "64", "--at", "2"],
        &["--max-memory", "32M", "--turn-ms", "2000"],
    );
    assert_forfeits(&run, "memory", 2);
    assert!(
        run.engine("bad")["peak_memory_bytes"].as_u64().unwrap() > 32 << 20,
        "{}",
        run.json
    );
    assert!(
        run.engine("good")["peak_memory_bytes"].as_u64().unwrap() < 32 << 20,
        "{}",
        run.json
    );
}
