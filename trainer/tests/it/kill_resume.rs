//! `kill -9` the real trainer binary ten times — during self-play, during training and while a
//! checkpoint is being written — and restart it with `--resume auto` each time. Every restart must
//! resume from the newest valid checkpoint on disk (or start fresh when there is none), no
//! completed self-play position may disappear from the replay store, and the run must finish its
//! epochs with a loadable `latest.onnx`. Prints the figure: kills per phase, epochs redone, and
//! positions lost (completed self-play: must be 0; games in progress at the kill are not saved by
//! design and are reported as such). And SIGTERM, which the trainer answers by saving the epoch
//! in progress before it exits.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use trainer::network::checkpoint;
use trainer::training::replay::Replay;

use crate::common::ONE_CPU_THREAD;

const EPOCHS: u64 = 12;

fn trainer(dir: &Path) -> (Child, Arc<Mutex<Vec<String>>>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_trainer"));
    command
        .env("FIVEZERO_PROGRESS_SECS", "0")
        .args([
            "--model-preset",
            "tiny",
            "--board-size",
            "7",
            "--mcts-simulations",
            "24",
        ])
        .args([
            "--parallel-games",
            "8",
            "--batch-size-mcts",
            "4",
            "--selfplay-games",
            "8",
        ])
        .args([
            "--batch-size",
            "64",
            "--train-steps",
            "40",
            "--eval-frequency",
            "0",
        ])
        .args(ONE_CPU_THREAD)
        .args(["--seed", "5"])
        .args(["--epochs", &EPOCHS.to_string(), "--resume", "auto"])
        .arg("--checkpoint-dir")
        .arg(dir);
    spawn_reading_stderr(&mut command)
}

/// Starts `command` with its stderr lines collected as they come.
fn spawn_reading_stderr(command: &mut Command) -> (Child, Arc<Mutex<Vec<String>>>) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the trainer binary");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    (child, lines)
}

/// Kinds of the records in metrics.jsonl, in order (a half-written last line is ignored).
fn metric_kinds(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
        .collect()
}

/// Positions of all completed self-play phases, as logged.
fn logged_selfplay_positions(dir: &Path) -> u64 {
    let text = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("kind").and_then(|k| k.as_str()) == Some("selfplay"))
        .filter_map(|v| v.get("positions").and_then(|p| p.as_u64()))
        .sum()
}

/// Positions in every replay chunk on disk (corrupt chunks would be reported and skipped).
fn positions_on_disk(dir: &Path) -> u64 {
    let mut warnings = Vec::new();
    let replay = Replay::open(&dir.join("replay"), usize::MAX, |w| warnings.push(w)).unwrap();
    assert!(
        warnings.is_empty(),
        "replay chunks damaged by a kill: {warnings:?}"
    );
    replay.games().iter().map(|g| g.positions() as u64).sum()
}

/// The phase the trainer is in, from the last metrics record.
fn phase(dir: &Path) -> &'static str {
    match metric_kinds(dir).last().map(String::as_str) {
        None | Some("start") | Some("epoch") => "self-play",
        Some("selfplay") | Some("step") => "training",
        _ => "checkpoint",
    }
}

/// A checkpoint being written by process `pid` (the atomic writer's `.ckpt-N.bin.tmp.<pid>.<n>`;
/// temporaries left by earlier killed runs carry other pids).
fn checkpoint_temp_file(dir: &Path, pid: u32) -> Option<PathBuf> {
    let tag = format!(".tmp.{pid}.");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with(".ckpt-") && n.contains(&tag)
            })
        })
}

fn wait_until(deadline: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < deadline {
        if ready() {
            return true;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    false
}

#[test]
fn ten_kills_at_random_moments_lose_no_completed_work() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // Kill plan: 4 during self-play, 3 during training, 3 while a checkpoint is written.
    let plan = [
        "self-play",
        "training",
        "checkpoint",
        "self-play",
        "training",
        "checkpoint",
        "self-play",
        "training",
        "checkpoint",
        "self-play",
    ];
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut jitter_ms = |max: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % max.max(1)
    };
    let mut hit = std::collections::BTreeMap::<&str, u32>::new();
    let (mut resumes_checked, mut fresh_starts) = (0, 0);
    for (i, want) in plan.iter().enumerate() {
        let expect = checkpoint::latest_valid(dir, |_| {}).map(|(_, c)| c.epoch);
        let disk_before = positions_on_disk(dir);
        let kinds_before = metric_kinds(dir).len();
        let (mut child, lines) = trainer(dir);
        // After the first kill, each run first completes an epoch of its own (so restarts resume
        // from ever newer checkpoints); then the wanted phase is waited for and hit at a random
        // moment.
        if i > 0 {
            let epoch_done = wait_until(Duration::from_secs(120), || {
                metric_kinds(dir)
                    .iter()
                    .skip(kinds_before)
                    .any(|k| k == "epoch")
            });
            assert!(
                epoch_done,
                "kill {i}: no epoch completed: {:?}",
                lines.lock().unwrap()
            );
        }
        let since = metric_kinds(dir).len();
        let reached = match *want {
            "checkpoint" => {
                let pid = child.id();
                wait_until(Duration::from_secs(120), || {
                    checkpoint_temp_file(dir, pid).is_some()
                })
            }
            "training" => wait_until(Duration::from_secs(120), || {
                metric_kinds(dir).len() > since && phase(dir) == "training"
            }),
            // Self-play starts as soon as the run is set up, and again right after each epoch.
            _ => wait_until(Duration::from_secs(120), || {
                let started = if expect.is_some() {
                    "resumed from"
                } else {
                    "trainer: device"
                };
                i > 0 || lines.lock().unwrap().iter().any(|l| l.contains(started))
            }),
        };
        assert!(
            reached,
            "kill {i}: the trainer never reached {want}: {:?}",
            lines.lock().unwrap()
        );
        if *want != "checkpoint" {
            std::thread::sleep(Duration::from_millis(jitter_ms(100)));
        }
        let during = if *want == "checkpoint" {
            "checkpoint"
        } else {
            phase(dir)
        };
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        if child_finished_already(&lines) {
            panic!("kill {i}: the run finished before the kill; make the epochs longer");
        }
        *hit.entry(during).or_default() += 1;

        // What the next start must see.
        let stderr = lines.lock().unwrap().clone();
        if expect.is_none() {
            fresh_starts += 1;
        }
        if let Some(e) = expect {
            let resumed = stderr.iter().find(|l| l.contains("resumed from"));
            let resumed = resumed.unwrap_or_else(|| panic!("kill {i}: no resume line: {stderr:?}"));
            assert!(
                resumed.contains(&format!("(epoch {e},")),
                "kill {i}: resumed from the wrong checkpoint: {resumed} (newest valid: epoch {e})"
            );
            resumes_checked += 1;
        }
        let disk = positions_on_disk(dir);
        assert!(
            disk >= disk_before,
            "kill {i}: replay positions went from {disk_before} to {disk}"
        );
        let logged_positions = logged_selfplay_positions(dir);
        assert!(
            disk >= logged_positions,
            "kill {i} ({during}): {} completed self-play positions lost",
            logged_positions - disk
        );
    }

    // The last start runs to the end.
    let expect = checkpoint::latest_valid(dir, |_| {}).map(|(_, c)| c.epoch);
    let (mut child, lines) = trainer(dir);
    let status = wait_for_exit(&mut child, Duration::from_secs(600));
    let stderr = lines.lock().unwrap().clone();
    assert!(
        status.is_some_and(|s| s.success()),
        "final run failed: {stderr:?}"
    );
    if let Some(e) = expect {
        assert!(
            stderr.iter().any(|l| l.contains(&format!("(epoch {e},"))),
            "{stderr:?}"
        );
        resumes_checked += 1;
    }
    let last = checkpoint::latest_valid(dir, |_| {}).unwrap().1;
    assert_eq!(last.epoch, EPOCHS);
    let onnx = dir.join("models").join("latest.onnx");
    assert!(onnx.is_file(), "latest.onnx exported");
    let disk = positions_on_disk(dir);
    let logged = logged_selfplay_positions(dir);
    assert!(disk >= logged);
    // Every self-play phase beyond one per epoch was work redone after a kill.
    let selfplay_phases = metric_kinds(dir)
        .iter()
        .filter(|k| *k == "selfplay")
        .count() as u64;
    let epochs_redone = selfplay_phases - EPOCHS;
    println!(
        "kill -9 x10 (self-play {}, training {}, checkpoint writing {}): {resumes_checked} starts resumed from the newest \
         valid checkpoint (the other {} found none yet and started fresh), {} epochs completed, {epochs_redone} epochs redone after a kill (their self-play kept in the replay store), completed self-play \
         positions lost 0 (on disk {disk}, logged {logged}); games in progress at a kill are discarded by design",
        hit.get("self-play").unwrap_or(&0),
        hit.get("training").unwrap_or(&0),
        hit.get("checkpoint").unwrap_or(&0),
        fresh_starts,
        last.epoch
    );
    assert_eq!(hit.values().sum::<u32>(), 10);
    assert!(hit.len() == 3, "every phase was hit: {hit:?}");
}

fn child_finished_already(lines: &Arc<Mutex<Vec<String>>>) -> bool {
    lines
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains("trainer: done"))
}

fn wait_for_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

/// SIGTERM (what `timeout` and batch systems send) during the first epoch's self-play: the
/// trainer finishes that epoch, saves it, says so and exits with 143 (128 + SIGTERM), and a
/// restart with `--resume auto` continues from it. A second signal while a stop is pending stops
/// the process at once, and what was saved stays.
#[test]
fn a_stop_signal_saves_the_epoch_in_progress() {
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let term = |child: &Child| {
        // SAFETY: kill(2) on the child's pid, which has not been waited for yet.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    };
    let (mut child, lines) = trainer(dir);
    // Self-play's progress lines come only while an epoch's games are played.
    let in_selfplay = wait_until(Duration::from_secs(120), || {
        let selfplay = lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.starts_with("self-play: "));
        selfplay && metric_kinds(dir) == ["start"]
    });
    assert!(in_selfplay, "{:?}", lines.lock().unwrap());
    term(&child);
    let status = wait_for_exit(&mut child, Duration::from_secs(300));
    let stderr = lines.lock().unwrap().clone();
    assert_eq!(status.and_then(|s| s.code()), Some(143), "{stderr:?}");
    assert!(
        stderr.iter().any(|l| l.contains("stop requested"))
            && stderr
                .iter()
                .any(|l| l.contains("stopped on SIGTERM after epoch 1 (saved")),
        "{stderr:?}"
    );
    let kinds = metric_kinds(dir);
    assert_eq!(
        kinds.iter().filter(|k| *k == "epoch").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("stopped"),
        "{kinds:?}"
    );
    assert_eq!(checkpoint::latest_valid(dir, |_| {}).unwrap().1.epoch, 1);
    let saved = positions_on_disk(dir);
    assert_eq!(saved, logged_selfplay_positions(dir));

    // Restarted, it resumes from epoch 1; a second signal after the first stops it at once.
    let (mut child, lines) = trainer(dir);
    let resumed = wait_until(Duration::from_secs(120), || {
        lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("resumed from"))
    });
    assert!(resumed, "{:?}", lines.lock().unwrap());
    assert!(
        lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("(epoch 1,")),
        "{:?}",
        lines.lock().unwrap()
    );
    term(&child);
    let noticed = wait_until(Duration::from_secs(60), || {
        lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("stop requested"))
    });
    assert!(noticed, "{:?}", lines.lock().unwrap());
    term(&child);
    let status = wait_for_exit(&mut child, Duration::from_secs(60));
    assert_eq!(
        status.and_then(|s| s.signal()),
        Some(libc::SIGTERM),
        "{:?}",
        lines.lock().unwrap()
    );
    assert!(checkpoint::latest_valid(dir, |_| {}).unwrap().1.epoch >= 1);
    assert!(positions_on_disk(dir) >= saved);
}

/// SIGTERM during `trainer bootstrap`: the chunk of games in progress is written, the command
/// says how many of the asked games it kept, logs them (with `"stopped"`) and exits with 143.
#[test]
fn a_stop_signal_during_bootstrap_keeps_every_finished_chunk() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (mut child, lines) = spawn_reading_stderr(
        Command::new(env!("CARGO_BIN_EXE_trainer"))
            .env("FIVEZERO_PROGRESS_SECS", "0")
            .args(["--model-preset", "tiny", "--board-size", "7"])
            .args(ONE_CPU_THREAD)
            .arg("--checkpoint-dir")
            .arg(dir)
            .args(["bootstrap", "--games", "100000", "--visits", "32"]),
    );
    let chunk_written = wait_until(Duration::from_secs(120), || {
        dir.join("replay/chunk-00000000.bin").is_file()
    });
    assert!(chunk_written, "{:?}", lines.lock().unwrap());
    // SAFETY: kill(2) on the child's pid, which has not been waited for yet.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = wait_for_exit(&mut child, Duration::from_secs(120));
    let stderr = lines.lock().unwrap().clone();
    assert_eq!(status.and_then(|s| s.code()), Some(143), "{stderr:?}");

    let replay = Replay::open(&dir.join("replay"), usize::MAX, |w| panic!("{w}")).unwrap();
    let games = replay.games().len();
    let chunk = trainer::selfplay::bootstrap::GAMES_PER_CHUNK;
    assert!(
        games >= chunk && games.is_multiple_of(chunk) && games < 100_000,
        "{games} games on disk"
    );
    let said = format!("stopped on SIGTERM after {games} of 100000 games (all saved)");
    assert!(stderr.iter().any(|l| l.contains(&said)), "{stderr:?}");
    let text = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    let record: serde_json::Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["kind"] == "bootstrap")
        .expect("a bootstrap record");
    assert_eq!(record["games"], games as u64, "{record}");
    assert_eq!(record["stopped"], "SIGTERM", "{record}");
}
