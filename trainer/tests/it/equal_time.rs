//! `trainer equal-time` end to end: a run folder's exports played by the real engine binary
//! against its classical evaluator under the real tournament manager, the result appended to
//! `equal-time.jsonl`, a second call skipping it; a model the run's game is not claimed by and a
//! file that is not a model are refused with a clear error and nothing saved is lost.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use engine::game::Rule;
use engine::net::{ModelMeta, NetWeights, Preset, write_model_file};
use trainer::config::Settings;

/// A run folder of 9x9 freestyle with no exports yet.
fn run_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let s = Settings {
        board_size: 9,
        rule: Rule::Freestyle,
        checkpoint_dir: dir.path().to_path_buf(),
        ..Settings::default()
    };
    std::fs::write(
        dir.path().join("settings.toml"),
        toml::to_string(&s).unwrap(),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("models")).unwrap();
    dir
}

/// A random tiny network claiming `rules` on 9x9, as the export of `epoch`.
fn export(dir: &Path, epoch: u64, rules: &[Rule]) -> PathBuf {
    let w = NetWeights::random(Preset::Tiny.config(), epoch).unwrap();
    let mut meta = ModelMeta::for_config(&w.config, epoch);
    meta.rules = rules.to_vec();
    meta.board_sizes = vec![9];
    let path = dir.join(format!("models/model-{epoch:06}.onnx"));
    write_model_file(&path, &w, &meta).unwrap();
    path
}

fn equal_time(dir: &Path, epochs: &str) -> Output {
    let openings =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/openings/balanced-3stone.txt");
    Command::new(env!("CARGO_BIN_EXE_trainer"))
        .arg("equal-time")
        .arg(dir)
        .args(["--epochs", epochs, "--games", "2", "--turn-ms", "100"])
        .args(["--concurrency", "1", "--openings"])
        .arg(openings)
        .output()
        .unwrap()
}

/// What `equal-time` said when it refused `epochs`.
fn refused(dir: &Path, epochs: &str) -> String {
    let out = equal_time(dir, epochs);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{err}");
    err
}

fn records(dir: &Path) -> Vec<trainer::matches::equal_time::Record> {
    trainer::matches::equal_time::read(dir)
}

#[test]
fn plays_an_export_at_equal_time_once_and_refuses_what_it_cannot_measure() {
    let run = run_folder();
    let dir = run.path();
    export(dir, 1, &[Rule::Freestyle]);
    let out = equal_time(dir, "1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let r = records(dir);
    assert_eq!(r.len(), 1, "{err}");
    assert_eq!((r[0].epoch, r[0].turn_ms, r[0].match_ms), (1, 100, 6000));
    assert_eq!(r[0].wins + r[0].draws + r[0].losses, 2);
    assert_eq!(r[0].forfeits, 0, "{err}");
    assert!(
        err.contains("equal-time: ") && err.contains("epoch 1: "),
        "{err}"
    );
    assert!(!dir.join("equal-time.partial.json").exists());

    // Already there at this clock: nothing is played again.
    let out = equal_time(dir, "1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("already played"), "{err}");
    assert_eq!(records(dir).len(), 1);

    // A network that claims renju only would be played by the classical evaluator here.
    export(dir, 2, &[Rule::Renju]);
    let err = refused(dir, "2");
    assert!(
        err.contains("model-000002.onnx") && err.contains("renju"),
        "{err}"
    );

    // A file that is not a model, and an epoch with no export.
    std::fs::write(dir.join("models/model-000003.onnx"), b"not a model").unwrap();
    let err = refused(dir, "3");
    assert!(
        err.contains("model-000003.onnx") && err.contains("not an ONNX model"),
        "{err}"
    );
    let err = refused(dir, "4");
    assert!(err.contains("no export of epoch 4"), "{err}");

    // What was saved before is all still there.
    assert_eq!(records(dir).len(), 1);
}
