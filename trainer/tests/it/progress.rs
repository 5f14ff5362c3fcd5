//! The real `trainer` binary with stderr piped (not a terminal) shows its progress in plain
//! lines: self-play lines with rates, games done and an ETA from the first step on (before any
//! game ends), training lines with steps, samples/s and losses; and the up-front epoch estimate,
//! a WARNING for a configuration that takes hours per epoch and none for a tiny one. Lines are
//! counted with `FIVEZERO_PROGRESS_SECS=0` (a line per update), never timed.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::common::ONE_CPU_THREAD;

fn trainer(args: &[&str], dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trainer"));
    c.args(args)
        .args(ONE_CPU_THREAD)
        .args([
            "--eval-frequency",
            "0",
            "--resume",
            "none",
            "--checkpoint-dir",
        ])
        .arg(dir)
        .env("FIVEZERO_PROGRESS_SECS", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

#[test]
fn plain_progress_lines_come_before_the_first_game_ends() {
    let dir = tempfile::tempdir().unwrap();
    let out = trainer(
        &[
            "--model-preset",
            "tiny",
            "--board-size",
            "7",
            "--mcts-simulations",
            "16",
            "--batch-size-mcts",
            "4",
            "--parallel-games",
            "4",
            "--selfplay-games",
            "4",
            "--batch-size",
            "32",
            "--train-steps",
            "5",
            "--epochs",
            "1",
        ],
        dir.path(),
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let selfplay: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("self-play: "))
        .collect();
    for l in &selfplay {
        assert!(
            l.contains("moves/s") && l.contains("positions/s") && l.contains("ETA"),
            "{l}"
        );
    }
    let before_any_end = selfplay
        .iter()
        .filter(|l| l.contains(" 0/4 games done, 4 playing"))
        .count();
    assert!(
        before_any_end >= 3,
        "want several lines before the first game ends:\n{err}"
    );
    assert!(
        selfplay
            .iter()
            .any(|l| l.contains(" 4/4 games done, 0 playing")),
        "{err}"
    );
    let train: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("train: step "))
        .collect();
    assert_eq!(train.len(), 5, "one line per step at interval 0:\n{err}");
    assert!(
        train[4].starts_with("train: step 5/5,") && train[4].contains("samples/s"),
        "{err}"
    );
    assert!(err.contains("self-play of one epoch estimated at"), "{err}");
    assert!(!err.contains("WARNING"), "a tiny run is not slow:\n{err}");
}

#[test]
fn hours_per_epoch_are_announced_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = trainer(
        &[
            "--model-preset",
            "medium",
            "--board-size",
            "15",
            "--mcts-simulations",
            "800",
            "--parallel-games",
            "64",
            "--selfplay-games",
            "1000",
            "--epochs",
            "1",
        ],
        dir.path(),
    )
    .spawn()
    .unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        let done = line.contains("WARNING") || line.contains("self-play of one epoch estimated");
        seen.push(line);
        if done || seen.len() > 20 {
            break;
        }
    }
    child.kill().ok();
    child.wait().ok();
    let text = seen.join("\n");
    let warning = seen
        .iter()
        .find(|l| l.contains("WARNING"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        warning.contains("--profile train-fast") && warning.contains('h'),
        "{text}"
    );
}
