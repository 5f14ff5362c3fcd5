//! The engine binary plays a pattern network file natively (`--model FILE`, `MESSAGE model ...
//! loaded (native:pattern(...))`), and a broken pattern file given while it plays (a NaN in the
//! table, a truncated file) is refused with a `MESSAGE` naming what is wrong while the pattern
//! network goes on playing. The files are written here from seeded random weights (25 MB each at
//! D = 32, never committed).

use std::path::Path;
use std::time::Duration;

use engine::net::pattern::PatternWeights;
use engine::net::pattern_onnx_bytes;
use fivezero_tests::pipe::{Brain, parse_move};
use fivezero_tests::referee::bin;

/// A generous cap: a hang is the failure, not a slow machine.
const REPLY: Duration = Duration::from_secs(30);
/// The step written into the good model, so its name (`step 7474`) is recognisable.
const STEP: u64 = 7474;

fn write(path: &Path, w: &PatternWeights) {
    std::fs::write(path, pattern_onnx_bytes(w, &w.meta(STEP)).unwrap()).unwrap();
}

fn said<'a>(b: &'a Brain, what: &str) -> Option<&'a String> {
    b.messages.iter().find(|m| m.contains(what))
}

fn move_after(b: &mut Brain, command: &str) {
    b.send(command);
    let reply = b.reply(REPLY);
    assert!(
        parse_move(&reply).is_some(),
        "{command}: {reply} {:?}",
        b.messages
    );
}

#[test]
fn the_engine_plays_a_pattern_network_and_keeps_it_when_a_broken_one_comes() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("pattern.onnx");
    let weights = PatternWeights::random(32, 5).unwrap();
    write(&good, &weights);
    let mut nan = weights.clone();
    nan.table[1000] = f32::NAN;
    let bad = dir.path().join("nan.onnx");
    write(&bad, &nan);
    let truncated = dir.path().join("truncated.onnx");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    let text = |p: &Path| p.to_str().unwrap().to_string();
    let (good, bad, truncated) = (text(&good), text(&bad), text(&truncated));

    let mut b = Brain::spawn(
        &bin("pbrain-fivezero"),
        &["--model", &good, "--threads", "1"],
    );
    b.send("START 15");
    assert_eq!(b.reply(REPLY), "OK", "{:?}", b.messages);
    let loaded = said(&b, &format!("model {good} loaded"))
        .unwrap_or_else(|| panic!("no load MESSAGE: {:?}", b.messages));
    assert!(
        loaded.contains(&format!("(native:pattern(D=32 step {STEP})")),
        "{loaded}"
    );
    b.send("INFO timeout_turn 300");
    move_after(&mut b, "BEGIN");

    for (file, why, turn) in [
        (&bad, "pattern.table` holds NaN", 3),
        (&truncated, "decode", 4),
    ] {
        b.send(&format!("INFO model {file}"));
        move_after(&mut b, &format!("TURN {turn},{turn}"));
        let refusal = said(&b, &format!("refused {file}"))
            .unwrap_or_else(|| panic!("no refusal MESSAGE: {:?}", b.messages));
        assert!(
            refusal.contains(why) && refusal.contains(&format!("keeping {good}")),
            "{refusal}"
        );
        b.send(&format!("INFO model {good}"));
    }
    // Still the pattern network, and the engine goes on.
    move_after(&mut b, "TURN 5,5");
    assert!(said(&b, "classical").is_none(), "{:?}", b.messages);
    b.send("END");
    assert!(b.exits_within(REPLY), "engine must exit on END");
}
