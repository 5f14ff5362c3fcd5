//! `fivezero-tools tournament` on well-behaved brains: openings in all three notations with
//! colour-swapped repeats, round-robin and gauntlet pairings with concurrency, the move-limit
//! draw, SPRT early stop, the record/JSON outputs agreeing with each other, and Ctrl-C: the games
//! in flight finish and the summary keeps every finished game.

use std::time::Duration;

use fivezero_tests::referee::{Run, args, bin, faulty, tournament, tournament_signalled};

const CAP: Duration = Duration::from_secs(30);

fn good(name: &str, seed: u32) -> String {
    faulty(name, "random-legal", &["--seed", &seed.to_string()])
}

fn run_ok(list: Vec<String>) -> Run {
    let run = tournament(&list, CAP);
    assert_eq!(
        run.code,
        Some(0),
        "stderr: {}\nstdout: {}",
        run.stderr,
        run.stdout
    );
    run
}

fn totals_consistent(run: &Run) {
    let played = run.json["games_played"].as_u64().unwrap();
    assert_eq!(run.json["games"].as_array().unwrap().len() as u64, played);
    assert_eq!(
        run.records.matches("[Result ").count() as u64,
        played,
        "{}",
        run.records
    );
    let engines = run.json["engines"].as_array().unwrap();
    let sum = |k: &str| engines.iter().map(|e| e[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("games"), 2 * played);
    assert_eq!(sum("wins"), sum("losses"));
    for e in engines {
        let g = e["games"].as_u64().unwrap();
        assert_eq!(
            e["wins"].as_u64().unwrap()
                + e["draws"].as_u64().unwrap()
                + e["losses"].as_u64().unwrap(),
            g
        );
        assert!(e["forfeits"].as_object().unwrap().is_empty(), "{e}");
    }
}

#[test]
fn openings_in_all_notations_with_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("offset.txt", "0,0, 1,1, -1,1\n0,0, 0,1\n"),
        ("absolute.txt", "# comment\n7,7 8,8 6,8\n7,7 7,8\n"),
        ("algebraic.txt", "h8 i7 g7\nh8 h7\n"),
    ];
    let mut records = Vec::new();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let mut a = args(&["--engine", &good("a", 1), "--engine", &good("b", 2)]);
        a.extend(args(&[
            "--games",
            "4",
            "--repeat",
            "--turn-ms",
            "1000",
            "--openings",
            path.to_str().unwrap(),
        ]));
        let run = run_ok(a);
        assert_eq!(run.json["games_played"], 4);
        totals_consistent(&run);
        let games = run.json["games"].as_array().unwrap();
        // Games 1-2 share opening 1 with colours swapped; games 3-4 opening 2.
        assert_eq!(games[0]["opening"], games[1]["opening"]);
        assert_eq!(games[0]["black"], games[1]["white"]);
        assert_ne!(games[1]["opening"], games[2]["opening"]);
        // The black engine of the 3-stone opening moves as white (BOARD then TURN).
        assert!(run.wire.contains("BOARD"), "{}", run.wire);
        records.push(run.records.replace(name, ""));
    }
    // The same openings written three ways give the same record.
    let moves = |r: &str| {
        r.lines()
            .filter(|l| l.starts_with("1. "))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(moves(&records[0]), moves(&records[1]));
    assert_eq!(moves(&records[0]), moves(&records[2]));
    assert!(records[0].contains("1. h8 i7 2. g7"), "{}", records[0]);
}

#[test]
fn round_robin_with_concurrency() {
    let mut a = args(&[
        "--engine",
        &good("a", 1),
        "--engine",
        &good("b", 2),
        "--engine",
        &good("c", 3),
    ]);
    a.extend(args(&[
        "--games",
        "2",
        "--concurrency",
        "2",
        "--turn-ms",
        "1000",
    ]));
    let run = run_ok(a);
    assert_eq!(run.json["pairs"].as_array().unwrap().len(), 3);
    assert_eq!(run.json["games_played"], 6);
    totals_consistent(&run);
    for e in run.json["engines"].as_array().unwrap() {
        assert_eq!(e["games"], 4);
        assert!(e["moves"].as_u64().unwrap() > 0);
        assert!(e["peak_memory_bytes"].as_u64().unwrap() > 0, "{e}");
    }
    assert!(run.json["manager_overhead_mean_us"].as_f64().unwrap() > 0.0);
    assert!(
        run.stdout.contains("Manager overhead per move"),
        "{}",
        run.stdout
    );
}

#[test]
fn gauntlet_pairs_the_first_engine_with_each_other() {
    let mut a = args(&[
        "--engine",
        &good("hero", 1),
        "--engine",
        &good("x", 2),
        "--engine",
        &good("y", 3),
    ]);
    a.extend(args(&[
        "--mode",
        "gauntlet",
        "--games",
        "2",
        "--turn-ms",
        "1000",
    ]));
    let run = run_ok(a);
    let pairs = run.json["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 2);
    assert!(pairs.iter().all(|p| p["first"] == "hero"));
    assert_eq!(run.engine("hero")["games"], 4);
    totals_consistent(&run);
}

#[test]
fn move_limit_draw_and_rectangular_board() {
    // Eight stones cannot hold a five: every game is a draw by the move limit.
    let mut a = args(&["--engine", &good("a", 1), "--engine", &good("b", 2)]);
    a.extend(args(&[
        "--games",
        "2",
        "--draw-after",
        "8",
        "--size",
        "20x15",
        "--turn-ms",
        "1000",
    ]));
    let run = run_ok(a);
    for g in run.json["games"].as_array().unwrap() {
        assert_eq!(g["result"], "1/2-1/2", "{g}");
        assert_eq!(g["moves"], 8);
        assert!(g["reason"].as_str().unwrap().contains("move limit"));
    }
    assert!(run.wire.contains("RECTSTART 20,15"), "{}", run.wire);
    assert!(run.records.contains("[Size \"20x15\"]"));
}

#[test]
fn sprt_stops_early_when_one_side_loses_every_game() {
    let mut a = args(&[
        "--engine",
        &good("good", 1),
        "--engine",
        &faulty("bad", "off-board", &[]),
    ]);
    a.extend(args(&[
        "--games",
        "200",
        "--turn-ms",
        "1000",
        "--sprt",
        "elo0=0,elo1=200,alpha=0.05,beta=0.05",
    ]));
    let run = tournament(&a, CAP);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // Five straight wins reach H1 at these bounds (LLR 3.9 against 2.94; four give 2.8). The one
    // worker waits for each game's tally before the next, so no game starts after the decision
    // however slowly the manager tallies (under load it once played all 200 fast forfeits first).
    let played = run.json["games_played"].as_u64().unwrap();
    assert_eq!(
        played, 5,
        "SPRT did not stop at its decision: {}",
        run.json["sprt"]
    );
    assert_eq!(run.json["sprt"]["result"], "H1", "{}", run.json["sprt"]);
    assert!(
        run.json["sprt"]["llr"].as_f64().unwrap()
            >= run.json["sprt"]["upper_bound"].as_f64().unwrap()
    );
    assert!(run.stdout.contains("SPRT"), "{}", run.stdout);
}

/// Two legal brains that take 25 ms a move (a game lasts well over the 50 ms between the test's
/// signals), so a 200-game match lasts long enough to interrupt.
fn slow_match() -> Vec<String> {
    let slow = |name: &str, seed: &str| faulty(name, "slow", &["--delay", "25", "--seed", seed]);
    let mut a = args(&["--engine", &slow("a", "1"), "--engine", &slow("b", "2")]);
    a.extend(args(&[
        "--games",
        "200",
        "--concurrency",
        "2",
        "--turn-ms",
        "1000",
    ]));
    a
}

#[test]
fn ctrl_c_lets_the_games_in_flight_finish_and_reports_them() {
    let run = tournament_signalled(&slow_match(), CAP, &[libc::SIGINT]);
    assert_eq!(run.code, Some(130), "stderr: {}", run.stderr);
    assert!(
        run.stderr.contains("interrupted: no new games"),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains("planned (interrupted)"),
        "{}",
        run.stdout
    );
    assert_eq!(run.json["interrupted"], true);
    let played = run.json["games_played"].as_u64().unwrap();
    assert!((2..200).contains(&played), "played {played}");
    // The games in flight were finished, not cut: no forfeit, and every game is in the record.
    totals_consistent(&run);
    // Each engine process was ended with END, as after a full match.
    let ends = run.wire.lines().filter(|l| l.ends_with(" END")).count();
    assert_eq!(ends, 4, "two workers, two engines each:\n{}", run.wire);
}

#[test]
fn a_second_signal_quits_at_once_and_the_summary_keeps_the_finished_games() {
    let run = tournament_signalled(&slow_match(), CAP, &[libc::SIGINT, libc::SIGTERM]);
    assert_eq!(
        run.code, None,
        "killed by the second signal; stderr: {}",
        run.stderr
    );
    let played = run.json["games_played"].as_u64().unwrap();
    assert!((2..200).contains(&played), "played {played}");
    assert_eq!(run.json["games"].as_array().unwrap().len() as u64, played);
    assert!(run.records.matches("[Result ").count() as u64 >= played);
}

#[test]
fn a_node_limit_in_the_spec_reaches_the_engine_and_bounds_its_search() {
    // The real engine on the classical evaluator, one side limited to 40 nodes a move, the other
    // on its clock alone; 30 stones a game keep it short.
    let fz = bin("pbrain-fivezero");
    let spec = |name: &str, extra: &str| {
        format!(
            "cmd={},name={name},arg=--model,arg=none{extra}",
            fz.display()
        )
    };
    let run = run_ok(args(&[
        "--engine",
        &spec("fixed", ",max_node=40"),
        "--engine",
        &spec("clocked", ""),
        "--games",
        "2",
        "--turn-ms",
        "300",
        "--draw-after",
        "30",
    ]));
    assert_eq!(run.json["games_played"], 2);
    assert_eq!(run.engine("fixed")["max_node"], 40);
    assert_eq!(run.engine("clocked")["max_node"], serde_json::Value::Null);
    assert!(run.stdout.contains("40 nodes/move"), "{}", run.stdout);
    let sent = |name: &str| {
        run.wire
            .lines()
            .filter(|l| l.contains(&format!(" {name} < INFO max_node")))
            .count()
    };
    assert_eq!(sent("fixed"), 2, "once per game:\n{}", run.wire);
    assert_eq!(sent("clocked"), 0, "{}", run.wire);
    // Every search the limited engine reports stops near its limit: the count includes the
    // visits a reused subtree carries over (up to about twice the limit seen), where the clocked
    // engine reports thousands.
    let nodes: Vec<u64> = run
        .wire
        .lines()
        .filter(|l| l.contains(" fixed > MESSAGE depth"))
        .filter_map(|l| {
            let after = l.split(" nodes ").nth(1)?;
            after.split_whitespace().next()?.parse().ok()
        })
        .collect();
    assert!(nodes.len() >= 10, "{}", run.wire);
    assert!(nodes.iter().all(|&n| n <= 200), "{nodes:?}");
}
