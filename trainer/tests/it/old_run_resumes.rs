//! A run folder from before the settings were declared once (no `settings.toml`, checkpoint and
//! replay chunks as that trainer wrote them) resumes with today's trainer, and the real binary
//! then refuses to continue it with another board size.

use std::path::Path;
use std::process::Command;

use engine::net::Preset;
use trainer::config::Settings;
use trainer::support::device::DeviceArg;

use crate::common::ONE_CPU_THREAD;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

#[test]
fn a_run_folder_from_commit_600a981_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-600a981");
    copy_dir(&fixture, &dir);
    let s = Settings {
        model_preset: Preset::Tiny,
        board_size: 9,
        mcts_simulations: 16,
        selfplay_games: 8,
        parallel_games: 8,
        epochs: 3,
        eval_frequency: 1,
        eval_pairs: 1,
        eval_simulations: 8,
        device: DeviceArg::Cpu,
        threads: 1,
        batch_size: 64,
        train_steps: 2,
        checkpoint_dir: dir.clone(),
        ..Settings::default()
    };
    let sum = trainer::run::run(&s).unwrap();
    assert_eq!(
        sum.resumed_from.as_deref(),
        Some(dir.join("ckpt-000002.bin").as_path())
    );
    assert_eq!(sum.last_epoch, 3);
    assert_eq!(
        sum.step,
        37 + 2,
        "the old checkpoint's step, then this epoch's"
    );
    assert_eq!(sum.games, 16 + 8);
    assert!(dir.join("ckpt-000003.bin").is_file());
    // The old checkpoint (format version 1) does not say what it was trained on; the new one does.
    let old = trainer::network::checkpoint::load(&dir.join("ckpt-000002.bin")).unwrap();
    assert_eq!((old.rule, old.board_size), (None, None));
    // So its export claims the profile's rule and size on trust, and says so; the new one's does
    // not need to.
    let export = |epoch: u64| {
        let mut warnings = Vec::new();
        let path = trainer::network::checkpoint::path_for(&dir, epoch);
        trainer::training::export_checkpoint(&path, s.rule, 9, &mut |m| warnings.push(m)).unwrap();
        warnings
    };
    let warnings = export(2);
    assert!(
        warnings.len() == 1 && warnings[0].contains("does not record the rule and board size"),
        "{warnings:?}"
    );
    assert_eq!(export(3), Vec::<String>::new());
    let new = trainer::network::checkpoint::load(&dir.join("ckpt-000003.bin")).unwrap();
    assert_eq!(
        (new.rule, new.board_size),
        (Some(engine::game::Rule::Freestyle), Some(9))
    );
    assert!(dir.join("replay/chunk-00000002.bin").is_file());

    // Through the binary: the folder records its settings, and a different board is refused
    // before any work, naming the key and the flag; the folder is left as it was.
    let trainer = env!("CARGO_BIN_EXE_trainer");
    let run = |extra: &[&str]| {
        Command::new(trainer)
            .args(["--model-preset", "tiny"])
            .args(ONE_CPU_THREAD)
            .args(["--checkpoint-dir"])
            .arg(&dir)
            .args(extra)
            .output()
            .unwrap()
    };
    let ok = run(&["--board-size", "9", "--epochs", "3"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(dir.join("settings.toml").is_file());
    let before = std::fs::read(dir.join("ckpt-000003.bin")).unwrap();
    let bad = run(&["--board-size", "11", "--epochs", "4"]);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(
        err.contains("`board_size`") && err.contains("--board-size") && err.contains("9"),
        "{err}"
    );
    assert!(!dir.join("ckpt-000004.bin").exists());
    assert_eq!(std::fs::read(dir.join("ckpt-000003.bin")).unwrap(), before);
}

/// The replay warnings on resuming say which case it is: a checkpoint copied alone into a new
/// folder (the documented way to go on from a shipped one) starts an empty window, as expected;
/// a folder with fewer chunks than its checkpoint saw has lost some.
#[test]
fn a_copied_checkpoint_is_told_apart_from_lost_replay_chunks() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-600a981");
    let warnings_with = |chunks: &[&str]| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        std::fs::create_dir_all(dir.join("replay")).unwrap();
        std::fs::copy(fixture.join("ckpt-000002.bin"), dir.join("ckpt-000002.bin")).unwrap();
        for c in chunks {
            std::fs::copy(fixture.join("replay").join(c), dir.join("replay").join(c)).unwrap();
        }
        let s = Settings {
            model_preset: Preset::Tiny,
            board_size: 9,
            device: DeviceArg::Cpu,
            checkpoint_dir: dir.clone(),
            ..Settings::default()
        };
        let mut warnings = Vec::new();
        let mut t =
            trainer::training::Trainer::new(&s, tch::Device::Cpu, 10, false, |m| warnings.push(m))
                .unwrap();
        let resumed = t
            .resume(&trainer::config::Resume::Auto, &dir, |m| warnings.push(m))
            .unwrap();
        assert_eq!(resumed, Some(dir.join("ckpt-000002.bin")));
        warnings
    };
    let copied = warnings_with(&[]);
    assert!(
        copied
            .iter()
            .any(|w| w.contains("the replay folder is empty")
                && w.contains("as expected for a checkpoint copied into a new run folder")),
        "{copied:?}"
    );
    let lost = warnings_with(&["chunk-00000000.bin"]);
    assert!(
        lost.iter().any(
            |w| w.contains("replay folder ends at chunk 1 but the checkpoint saw 2")
                && w.contains("some chunks are gone")
        ),
        "{lost:?}"
    );
    let whole = warnings_with(&["chunk-00000000.bin", "chunk-00000001.bin"]);
    assert!(!whole.iter().any(|w| w.contains("replay")), "{whole:?}");
}
