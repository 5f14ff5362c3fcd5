//! Bad input to `fivezero-tools tournament` gives a clear error (exit code 2) quickly, never a
//! hang: a missing engine, a bad engine spec, bad openings, a zero time control (the tournament's
//! or an engine's own).

use std::time::Duration;

use fivezero_tests::referee::{Run, args, bin, faulty, tournament};

fn fails_with(extra: &[&str], engines: &[String], needle: &str) -> Run {
    let mut a = Vec::new();
    for e in engines {
        a.push("--engine".to_string());
        a.push(e.clone());
    }
    a.extend(args(extra));
    let run = tournament(&a, Duration::from_secs(10));
    assert_eq!(
        run.code,
        Some(2),
        "stdout: {}\nstderr: {}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stderr.contains(needle),
        "expected `{needle}` in: {}",
        run.stderr
    );
    run
}

fn two() -> Vec<String> {
    vec![
        faulty("a", "random-legal", &[]),
        faulty("b", "random-legal", &[]),
    ]
}

#[test]
fn missing_engine_binary() {
    let engines = vec![
        faulty("a", "random-legal", &[]),
        "cmd=/nonexistent/pbrain-nothing,name=ghost".to_string(),
    ];
    fails_with(&[], &engines, "not found");
}

#[test]
fn bad_engine_spec_and_single_engine() {
    fails_with(
        &[],
        &[format!("{},bogus=1", faulty("a", "random-legal", &[]))],
        "unknown key",
    );
    fails_with(&[], &[faulty("a", "random-legal", &[])], "at least two");
}

#[test]
fn zero_time_control() {
    fails_with(&["--turn-ms", "0"], &two(), "--turn-ms");
    fails_with(&["--match-ms", "0"], &two(), "--match-ms");
    // An engine's own time (time odds) is checked the same way.
    for bad in ["turn_ms=0", "match_ms=0", "turn_ms=1.5s"] {
        let engines = vec![
            format!("{},{bad}", faulty("a", "random-legal", &[])),
            faulty("b", "random-legal", &[]),
        ];
        fails_with(&[], &engines, "whole number of milliseconds");
    }
}

#[test]
fn openings_with_bad_stones() {
    let dir = tempfile::tempdir().unwrap();
    for (text, needle) in [
        ("0,0, 1,1\n0,0, 0,0\n", "line 2"),
        ("0,0, 8,0\n", "off the 15x15"),
        ("h8 p3\n", "off the 15x15"),
        ("7,7 8\n", "not x,y"),
        ("", "no openings"),
    ] {
        let path = dir.path().join("o.txt");
        std::fs::write(&path, text).unwrap();
        fails_with(&["--openings", path.to_str().unwrap()], &two(), needle);
    }
    // A forbidden black stone only matters under renju.
    let path = dir.path().join("renju.txt");
    std::fs::write(&path, "5,7 0,0 6,7 14,0 7,5 0,14 7,6 14,14 7,7\n").unwrap();
    fails_with(
        &["--rule", "renju", "--openings", path.to_str().unwrap()],
        &two(),
        "forbidden",
    );
}

#[test]
fn bad_sprt_and_size() {
    fails_with(&["--sprt", "elo0=5,elo1=0"], &two(), "elo1 > elo0");
    fails_with(&["--size", "40"], &two(), "--size");
}

#[test]
fn json_path_that_cannot_be_written_fails_before_any_engine_starts() {
    let dir = tempfile::tempdir().unwrap();
    let wire = dir.path().join("wire.log");
    let json = dir.path().join("no-such-dir/summary.json");
    let mut a = args(&["tournament", "--log", wire.to_str().unwrap()]);
    for e in two() {
        a.extend(["--engine".to_string(), e]);
    }
    a.extend(["--json".to_string(), json.display().to_string()]);
    let out = std::process::Command::new(bin("fivezero-tools"))
        .args(&a)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("json file `"), "{stderr}");
    let log = std::fs::read_to_string(&wire).unwrap_or_default();
    assert!(log.is_empty(), "no engine started:\n{log}");
}
