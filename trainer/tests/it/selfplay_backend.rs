//! The real `trainer` binary's self-play backends (`--selfplay-backend`): the epoch's export on
//! ONNX Runtime (two sessions, each step's batch cut in two) plays the very games the tch network
//! plays from the same weights and seed; `onnx` without a loadable runtime is a clear error before
//! any game, and `auto` then says so and plays on libtorch; `onnx-int8` plays on the quantized
//! export, and `auto` chooses it where the CPU has VNNI (read from /proc/cpuinfo here).

use std::path::Path;
use std::process::{Command, Output};

/// One epoch of a tiny 9x9 run (8 games at once, 4 leaves each: steps of up to 32 positions,
/// enough for two parts of 8 or more) with `backend`.
fn epoch(dir: &Path, backend: &str, ort: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trainer"));
    c.args(["--model-preset", "tiny", "--board-size", "9"])
        .args(["--mcts-simulations", "16", "--batch-size-mcts", "4"])
        .args(["--parallel-games", "8", "--selfplay-games", "8"])
        .args([
            "--parallel-workers",
            "2",
            "--threads",
            "2",
            "--device",
            "cpu",
        ])
        .args(["--batch-size", "32", "--train-steps", "2", "--epochs", "1"])
        .args(["--eval-frequency", "0", "--resume", "none", "--seed", "5"])
        .args(["--selfplay-backend", backend, "--checkpoint-dir"])
        .arg(dir);
    if let Some(path) = ort {
        c.env("ORT_DYLIB_PATH", path);
    }
    c.output().expect("the trainer starts")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The epoch's `selfplay` record.
fn selfplay_record(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("metrics.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["kind"] == "selfplay")
        .expect("a selfplay record")
}

#[test]
fn onnx_runtime_plays_the_games_the_tch_network_plays() {
    let (tch, onnx) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = epoch(tch.path(), "tch", None);
    assert!(a.status.success(), "{}", stderr(&a));
    let b = epoch(onnx.path(), "onnx", None);
    assert!(b.status.success(), "{}", stderr(&b));
    assert!(
        stderr(&b).contains("self-play on ONNX Runtime: 2 session(s) of 1 thread(s)"),
        "{}",
        stderr(&b)
    );
    let (a, b) = (selfplay_record(tch.path()), selfplay_record(onnx.path()));
    assert_eq!(
        (a["backend"].as_str(), b["backend"].as_str()),
        (Some("tch"), Some("onnx"))
    );
    // The same weights on two runtimes: the same searches, so the same games (a float
    // difference large enough to change a move would be a defect of the export).
    for key in [
        "positions",
        "black_wins",
        "draws",
        "white_wins",
        "mean_batch",
    ] {
        assert_eq!(a[key], b[key], "{key}: tch {a} onnx {b}");
    }
    assert!(
        b["mean_batch"].as_f64().unwrap() >= 16.0,
        "steps big enough to split: {b}"
    );
}

#[test]
fn onnx_without_a_runtime_is_refused_and_auto_falls_back_to_libtorch() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-libonnxruntime.so");
    let missing = missing.to_str().unwrap();
    let refused = epoch(&dir.path().join("onnx"), "onnx", Some(missing));
    assert!(!refused.status.success());
    let e = stderr(&refused);
    assert!(
        e.contains("--selfplay-backend tch plays on libtorch"),
        "{e}"
    );
    assert!(
        !dir.path().join("onnx/ckpt-000001.bin").exists(),
        "refused before any epoch"
    );
    let auto = epoch(&dir.path().join("auto"), "auto", Some(missing));
    let e = stderr(&auto);
    assert!(auto.status.success(), "{e}");
    assert!(
        e.contains("self-play on libtorch: ONNX Runtime cannot run the network"),
        "{e}"
    );
    assert_eq!(selfplay_record(&dir.path().join("auto"))["backend"], "tch");
}

#[test]
fn onnx_int8_plays_the_epoch_on_the_quantized_export() {
    let dir = tempfile::tempdir().unwrap();
    let o = epoch(dir.path(), "onnx-int8", None);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("self-play on ONNX Runtime (int8): 2 session(s)"),
        "{e}"
    );
    let r = selfplay_record(dir.path());
    assert_eq!(r["backend"], "onnx-int8", "{r}");
    assert!(r["positions"].as_u64().unwrap() > 0, "{r}");
    assert!(dir.path().join("ckpt-000001.bin").exists());
}

/// Whether this CPU has VNNI, read here independently of the trainer.
fn has_vnni() -> bool {
    let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    flags.lines().filter(|l| l.starts_with("flags")).any(|l| {
        l.split_whitespace()
            .any(|f| f == "avx512_vnni" || f == "avx_vnni")
    })
}

#[test]
fn auto_self_plays_int8_exactly_where_the_cpu_has_vnni() {
    let dir = tempfile::tempdir().unwrap();
    let o = epoch(dir.path(), "auto", None);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    let want = if has_vnni() { "onnx-int8" } else { "onnx" };
    assert_eq!(selfplay_record(dir.path())["backend"], want, "{e}");
    assert_eq!(
        e.contains("self-play on ONNX Runtime (int8: the CPU has integer dot products)"),
        want == "onnx-int8",
        "{e}"
    );
}
