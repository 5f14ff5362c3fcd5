//! ModelSlot with real model files written by `net`'s ONNX writer: loads, swaps a newer
//! checkpoint, refuses corrupt / truncated / incompatible files and keeps the old model, waits for
//! a file still being written, and the watcher thread reports through its sink. Fails, not skips,
//! when the ONNX Runtime library has not been fetched (scripts/fetch-runtime.sh; `make test` runs it).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use engine::eval::network::LoadConfig;
use engine::eval::onnx::OnnxRuntime;
use engine::eval::slot::{Loader, ModelSlot, onnx_loader};
use engine::eval::{Evaluation, Evaluator, UniformEvaluator};
use engine::game::{Board, Rule};
use engine::net::{ModelMeta, NetWeights, Preset, onnx_bytes};

fn runtime() {
    if let Err(e) = OnnxRuntime::init() {
        panic!(
            "ONNX Runtime unavailable: {e} (scripts/fetch-runtime.sh fetches it; make test runs it)"
        );
    }
}

fn model_bytes(seed: u64, step: u64) -> Vec<u8> {
    let w = NetWeights::random(Preset::Tiny.config(), seed).unwrap();
    onnx_bytes(&w, &ModelMeta::for_config(&w.config, step)).unwrap()
}

/// A well-formed model whose value head outputs NaN: the writer refuses non-finite weights, so a
/// sentinel bias is written and its bytes patched afterwards.
fn nan_model_bytes() -> Vec<u8> {
    let mut w = NetWeights::random(Preset::Tiny.config(), 9).unwrap();
    let sentinel = 1234.5677f32;
    w.value_fc2.bias[0] = sentinel;
    let mut bytes = onnx_bytes(&w, &ModelMeta::for_config(&w.config, 500)).unwrap();
    let needle = sentinel.to_le_bytes();
    let at = bytes
        .windows(4)
        .position(|win| win == needle)
        .expect("sentinel bias in the file");
    bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    bytes
}

/// Writes `bytes` to `path` with an mtime `age_s` seconds in the past (so "newest" is explicit,
/// whatever the file system's timestamp resolution).
fn write(path: &Path, bytes: &[u8], age_s: u64) {
    std::fs::write(path, bytes).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(age_s))
        .unwrap();
}

fn loader() -> Loader {
    onnx_loader(LoadConfig {
        sessions: 1,
        threads_intra: 1,
        ..Default::default()
    })
}

fn poll_twice(slot: &ModelSlot, path: &Path, loader: &Loader) -> Vec<String> {
    let mut m = slot.poll(path, loader);
    m.extend(slot.poll(path, loader));
    m
}

fn step_of(e: &Arc<dyn Evaluator>) -> String {
    e.name()
}

#[test]
fn directory_newest_valid_model_wins_and_bad_files_are_refused() {
    runtime();
    let dir = tempfile::tempdir().unwrap();
    let loader = loader();
    let slot = ModelSlot::new(Arc::new(UniformEvaluator));
    assert_eq!(slot.current().name(), "uniform");
    assert!(
        slot.poll(dir.path(), &loader).is_empty(),
        "empty directory: nothing to do"
    );

    write(&dir.path().join("a.onnx"), &model_bytes(1, 100), 30);
    // First sight only records the file; the second poll with the same size and mtime loads it.
    assert!(slot.poll(dir.path(), &loader).is_empty());
    assert_eq!(slot.current().name(), "uniform");
    let m = slot.poll(dir.path(), &loader);
    assert!(m.iter().any(|m| m.contains("loaded")), "{m:?}");
    let a = slot.current();
    assert!(step_of(&a).contains("step 100"), "{}", a.name());

    // A newer checkpoint swaps in; the old Arc (a search in progress) keeps working.
    write(&dir.path().join("b.onnx"), &model_bytes(2, 200), 20);
    poll_twice(&slot, dir.path(), &loader);
    let b = slot.current();
    assert!(step_of(&b).contains("step 200"), "{}", b.name());
    assert_ne!(a.model_id(), b.model_id());
    let board = Board::new(15, 15, Rule::Freestyle).unwrap();
    let mut out: Vec<Evaluation> = Vec::new();
    a.evaluate(&[&board], &mut out);
    assert!((out[0].policy.iter().sum::<f32>() - 1.0).abs() < 1e-3);

    // Newer but corrupt, truncated, or of another feature version: refused, b stays.
    let good = model_bytes(3, 300);
    let mut wrong_version = ModelMeta::for_config(&Preset::Tiny.config(), 400);
    wrong_version.feature_version = 2;
    let w = NetWeights::random(Preset::Tiny.config(), 4).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("c_garbage.onnx", b"this is not a model".repeat(50)),
        ("d_truncated.onnx", good[..good.len() / 2].to_vec()),
        ("e_version.onnx", onnx_bytes(&w, &wrong_version).unwrap()),
        ("f_nan.onnx", nan_model_bytes()),
    ];
    for (i, (name, bytes)) in cases.iter().enumerate() {
        write(&dir.path().join(name), bytes, 10 - i as u64);
        let m = poll_twice(&slot, dir.path(), &loader);
        assert!(
            m.iter()
                .any(|m| m.contains("refused") && m.contains(name) && m.contains("b.onnx")),
            "{name}: {m:?}"
        );
        assert_eq!(
            slot.current().model_id(),
            b.model_id(),
            "{name}: old model kept"
        );
        // Refused once, not again while the file is unchanged.
        assert!(poll_twice(&slot, dir.path(), &loader).is_empty(), "{name}");
    }
    let version_msg = poll_twice(&slot, dir.path(), &loader);
    assert!(version_msg.is_empty());

    // Fixing the newest file (now complete) is picked up.
    write(&dir.path().join("e_version.onnx"), &good, 0);
    let m = poll_twice(&slot, dir.path(), &loader);
    assert!(
        m.iter()
            .any(|m| m.contains("loaded") && m.contains("e_version.onnx")),
        "{m:?}"
    );
    assert!(slot.current().name().contains("step 300"));
}

#[test]
fn a_file_still_being_written_is_waited_for() {
    runtime();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.onnx");
    let loader = loader();
    let slot = ModelSlot::new(Arc::new(UniformEvaluator));
    let bytes = model_bytes(5, 500);
    // Growing: every poll sees another size, so nothing is loaded and nothing is refused.
    for part in [bytes.len() / 4, bytes.len() / 2, bytes.len() * 3 / 4] {
        std::fs::write(&path, &bytes[..part]).unwrap();
        let m = slot.poll(&path, &loader);
        assert!(m.is_empty(), "{m:?}");
    }
    std::fs::write(&path, &bytes).unwrap();
    assert!(
        slot.poll(&path, &loader).is_empty(),
        "size just changed: wait once more"
    );
    let m = slot.poll(&path, &loader);
    assert!(m.iter().any(|m| m.contains("loaded")), "{m:?}");
    assert!(slot.current().name().contains("step 500"));
    assert!(
        slot.poll(&path, &loader).is_empty(),
        "unchanged file is not reloaded"
    );
}

#[test]
fn load_now_and_the_watcher_thread() {
    runtime();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("latest.onnx");
    let loader = loader();
    let slot = ModelSlot::new(Arc::new(UniformEvaluator));
    assert!(slot.load_now(&path, &loader).is_err(), "missing file");
    write(&path, &model_bytes(6, 600), 5);
    let msg = slot.load_now(&path, &loader).unwrap();
    assert!(msg.contains("loaded"), "{msg}");
    assert!(slot.current().name().contains("step 600"));

    let (tx, rx) = crossbeam_channel::unbounded::<String>();
    let sink = Arc::new(move |m: String| {
        let _ = tx.send(m);
    });
    let handle = slot.watch(
        path.clone(),
        loader.clone(),
        sink,
        Duration::from_millis(50),
    );
    assert!(handle.is_running());
    // Atomic replace, as the trainer publishes: write elsewhere, rename over.
    let tmp = dir.path().join("latest.onnx.tmp");
    write(&tmp, &model_bytes(7, 700), 0);
    std::fs::rename(&tmp, &path).unwrap();
    let m = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a message from the watcher");
    assert!(m.contains("loaded"), "{m}");
    assert!(slot.current().name().contains("step 700"));
    // A corrupt replacement is refused and reported; the model stays.
    std::fs::write(&tmp, b"garbage").unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let m = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a refusal message");
    assert!(m.contains("refused"), "{m}");
    assert!(slot.current().name().contains("step 700"));
    drop(handle);
}
