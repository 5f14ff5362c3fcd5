//! A refused model keeps what was playing, through the real binary: `INFO model GARBAGE` after a
//! good model leaves that model playing, and `--model GARBAGE` at start gives way to the embedded
//! network (not the classical evaluator); each refusal is a `MESSAGE` naming the file and what
//! plays. That a network plays is read from the move's summary line (only a network's evaluator
//! reports `cache N%`) and, in `analyse`, from the reply's `model`.
//!
//! Fails, not skips, when the ONNX Runtime library has not been fetched (scripts/fetch-runtime.sh;
//! `make test` runs it).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use engine::eval::onnx::OnnxRuntime;
use engine::net::Preset;
use fivezero_tests::pipe::{Brain, parse_move};
use fivezero_tests::referee::bin;
use tools::measure::random_model;

/// A generous cap: a hang is the failure, not a slow machine.
const REPLY: Duration = Duration::from_secs(30);
/// The step written into the good model, so its name (`... step 4242)`) is recognisable.
const STEP: u64 = 4242;

fn runtime() {
    if let Err(e) = OnnxRuntime::init() {
        panic!(
            "ONNX Runtime unavailable: {e} (scripts/fetch-runtime.sh fetches it; make test runs it)"
        );
    }
}

/// A good tiny model and a garbage file in `dir`.
fn files(dir: &Path) -> (String, String) {
    let good = dir.join("good.onnx");
    std::fs::write(&good, random_model(Preset::Tiny, 11, STEP)).unwrap();
    let garbage = dir.join("garbage.onnx");
    std::fs::write(&garbage, b"not an onnx model at all ".repeat(40)).unwrap();
    let text = |p: &Path| p.to_str().unwrap().to_string();
    (text(&good), text(&garbage))
}

fn said<'a>(b: &'a Brain, what: &str) -> Option<&'a String> {
    b.messages.iter().find(|m| m.contains(what))
}

/// Plays the opponent's `x,y` and returns the summary MESSAGE of the engine's reply.
fn turn(b: &mut Brain, x: u32, y: u32) -> String {
    let seen = b.messages.len();
    b.send(&format!("TURN {x},{y}"));
    let reply = b.reply(REPLY);
    assert!(parse_move(&reply).is_some(), "TURN {x},{y}: {reply}");
    b.messages[seen..]
        .iter()
        .rev()
        .find(|m| m.contains(" nodes "))
        .cloned()
        .unwrap_or_else(|| panic!("no summary line: {:?}", &b.messages[seen..]))
}

fn started(args: &[&str]) -> Brain {
    let mut b = Brain::spawn(&bin("pbrain-fivezero"), args);
    b.send("START 15");
    assert_eq!(b.reply(REPLY), "OK", "{:?}", b.messages);
    b.send("INFO timeout_turn 300");
    b
}

#[test]
fn info_model_with_a_garbage_file_keeps_the_model_that_was_playing() {
    runtime();
    let dir = tempfile::tempdir().unwrap();
    let (good, garbage) = files(dir.path());
    let mut b = started(&["--model", &good, "--threads", "1"]);
    assert!(
        said(&b, &format!("model {good} loaded"))
            .is_some_and(|m| m.contains(&format!("step {STEP})"))),
        "{:?}",
        b.messages
    );
    b.send(&format!("INFO model {garbage}"));
    let summary = turn(&mut b, 7, 7);
    let refusal = said(&b, &format!("refused {garbage}"))
        .unwrap_or_else(|| panic!("no refusal MESSAGE: {:?}", b.messages));
    assert!(refusal.contains(&format!("keeping {good}")), "{refusal}");
    assert!(
        summary.contains(" cache "),
        "a network must play: {summary}"
    );
    assert!(said(&b, "classical").is_none(), "{:?}", b.messages);
    // Another move: still the same model, and the refusal is not repeated by the watcher.
    let summary = turn(&mut b, 8, 8);
    assert!(summary.contains(" cache "), "{summary}");
    let refusals = b.messages.iter().filter(|m| m.contains("refused")).count();
    assert_eq!(refusals, 1, "{:?}", b.messages);
    b.send("END");
    assert!(b.exits_within(REPLY), "engine must exit on END");
}

#[test]
fn a_garbage_model_at_start_gives_way_to_the_embedded_network() {
    runtime();
    let dir = tempfile::tempdir().unwrap();
    let (_, garbage) = files(dir.path());
    let mut b = started(&["--model", &garbage, "--threads", "1"]);
    let refusal = said(&b, &format!("refused {garbage}"))
        .unwrap_or_else(|| panic!("no refusal MESSAGE: {:?}", b.messages));
    assert!(
        refusal.contains("playing the embedded network instead"),
        "{refusal}"
    );
    assert!(said(&b, "embedded defaults").is_some(), "{:?}", b.messages);
    let summary = turn(&mut b, 7, 7);
    assert!(
        summary.contains(" cache "),
        "a network must play: {summary}"
    );
    assert!(
        said(&b, "played with the classical evaluator").is_none(),
        "{:?}",
        b.messages
    );
    b.send("END");
    assert!(b.exits_within(REPLY), "engine must exit on END");

    // The scripting interface names the evaluator that answered: the embedded network.
    let mut child = Command::new(bin("pbrain-fivezero"))
        .args(["--model", &garbage, "analyse"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"moves\": [[7, 7]], \"visits\": 50}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let reply: serde_json::Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout} / {stderr}"));
    let model = reply["model"].as_str().unwrap_or_default();
    assert!(model.starts_with("native:"), "{reply}");
    assert!(stderr.contains(&format!("refused {garbage}")), "{stderr}");
}
