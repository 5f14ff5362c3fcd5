//! End to end on the tiny preset, 7x7: self-play, training, evaluation, checkpoints and ONNX
//! export (and `trainer export` of a kept checkpoint), then `--resume auto` continues (and falls back past a corrupt newest checkpoint).

use engine::game::Rule;
use trainer::config::Settings;
use trainer::network::checkpoint;
use trainer::run::run;

fn settings(dir: &std::path::Path, epochs: u64) -> Settings {
    Settings {
        model_preset: engine::net::Preset::Tiny,
        board_size: 7,
        mcts_simulations: 12,
        parallel_games: 4,
        batch_size_mcts: 4,
        selfplay_games: 4,
        batch_size: 32,
        train_steps: 3,
        epochs,
        eval_frequency: 2,
        eval_pairs: 1,
        eval_simulations: 8,
        eval_vs_classical: true,
        device: trainer::support::device::DeviceArg::Cpu,
        threads: 1,
        checkpoint_dir: dir.to_path_buf(),
        seed: 9,
        ..Settings::default()
    }
}

#[test]
fn trains_checkpoints_exports_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let s = settings(dir.path(), 2);
    let sum = run(&s).unwrap();
    assert_eq!(sum.last_epoch, 2);
    assert_eq!(sum.games, 8);
    assert!(sum.last_policy_loss.is_finite() && sum.last_policy_loss > 0.0);
    assert!(sum.last_vs_uniform.is_some(), "evaluation ran at epoch 2");
    let models = dir.path().join("models");
    assert!(models.join("latest.onnx").is_file());
    let png =
        std::fs::read(dir.path().join("training.png")).expect("training.png drawn every epoch");
    assert_eq!(&png[..4], b"\x89PNG");
    assert!(
        models.join("model-000001.onnx").is_file() && models.join("model-000002.onnx").is_file()
    );
    assert_eq!(checkpoint::list(dir.path()).len(), 2);
    // `trainer export` gives a kept checkpoint the very file its epoch exported; a file that is
    // not a checkpoint is a clear error.
    let exported = trainer::training::export_checkpoint(
        &checkpoint::path_for(dir.path(), 2),
        s.rule,
        s.board_size,
        &mut |m| panic!("a checkpoint that records its rule and size: {m}"),
    )
    .unwrap();
    assert!(
        exported == std::fs::read(models.join("model-000002.onnx")).unwrap(),
        "the export of ckpt-000002.bin differs from model-000002.onnx"
    );
    let err =
        trainer::training::export_checkpoint(&models.join("latest.onnx"), s.rule, 7, &mut |_| {})
            .unwrap_err();
    assert!(format!("{err:#}").contains("latest.onnx"), "{err:#}");
    // The checkpoint records what it was trained on, so a profile of another rule or board size
    // cannot make the file claim it.
    let ck2 = checkpoint::path_for(dir.path(), 2);
    let err = trainer::training::export_checkpoint(&ck2, Rule::Renju, s.board_size, &mut |_| {})
        .unwrap_err();
    assert!(
        format!("{err:#}").contains("trained on freestyle, not renju"),
        "{err:#}"
    );
    let err = trainer::training::export_checkpoint(&ck2, s.rule, 15, &mut |_| {}).unwrap_err();
    assert!(format!("{err:#}").contains("trained on 7x7"), "{err:#}");
    let metrics = std::fs::read_to_string(dir.path().join("metrics.jsonl")).unwrap();
    // The process says what it ran with, and from where.
    let starts: Vec<serde_json::Value> = metrics
        .lines()
        .filter(|l| l.contains("\"kind\":\"start\""))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!starts.is_empty(), "no start record: {metrics}");
    assert_eq!(starts[0]["resumed_from"], serde_json::Value::Null);
    assert_eq!(starts[0]["epoch"], 0);
    assert_eq!(
        starts[0]["settings"]["parallel_workers"].as_u64(),
        Some(s.parallel_workers as u64)
    );
    assert_eq!(starts[0]["device"], "cpu (1 threads)");
    for kind in [
        "\"kind\":\"step\"",
        "\"kind\":\"epoch\"",
        "\"kind\":\"selfplay\"",
        "\"kind\":\"eval\"",
    ] {
        assert!(metrics.contains(kind), "{kind} missing from metrics");
    }
    // The targets' entropy is the floor of the policy cross-entropy on the same batches (the
    // difference is the KL to the targets); a target that is not a distribution breaks it.
    for line in metrics.lines().filter(|l| l.contains("\"kind\":\"epoch\"")) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let (h, p) = (
            v["policy_target_entropy"].as_f64().unwrap(),
            v["policy_loss"].as_f64().unwrap(),
        );
        assert!(h > 0.0 && h <= p + 1e-4, "entropy {h}, loss {p}: {line}");
    }
    let selfplay_line = metrics
        .lines()
        .find(|l| l.contains("\"kind\":\"selfplay\""))
        .unwrap();
    let selfplay: serde_json::Value = serde_json::from_str(selfplay_line).unwrap();
    let outcomes: u64 = ["black_wins", "draws", "white_wins"]
        .map(|k| selfplay[k].as_u64().unwrap())
        .iter()
        .sum();
    assert_eq!(
        outcomes, 4,
        "every game of the epoch has one outcome: {selfplay}"
    );
    let eval_line = metrics
        .lines()
        .find(|l| l.contains("\"kind\":\"eval\""))
        .unwrap();
    let eval: serde_json::Value = serde_json::from_str(eval_line).unwrap();
    assert_eq!(
        eval["backend"], selfplay["backend"],
        "the evaluation plays on self-play's backend: {eval}"
    );
    let classical = &eval["vs_classical"];
    let games = ["wins", "draws", "losses"].map(|k| classical[k].as_u64().unwrap());
    assert_eq!(
        games.iter().sum::<u64>(),
        2,
        "one pair against the classical evaluator: {eval}"
    );
    // The exported model loads in the engine's runtime.
    engine::eval::onnx::OnnxModel::load(
        models.join("latest.onnx"),
        1,
        engine::eval::onnx::Device::Cpu,
    )
    .unwrap();

    // Corrupt the newest checkpoint: resume falls back to epoch 1 and redoes epoch 2, then 3.
    let newest = checkpoint::path_for(dir.path(), 2);
    let mut bytes = std::fs::read(&newest).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&newest, &bytes).unwrap();
    let sum = run(&Settings {
        epochs: 3,
        ..settings(dir.path(), 3)
    })
    .unwrap();
    assert_eq!(
        sum.resumed_from.as_deref(),
        Some(checkpoint::path_for(dir.path(), 1).as_path())
    );
    assert_eq!(sum.last_epoch, 3);
    assert_eq!(
        sum.games, 12,
        "4 games per epoch over epochs 1 (restored), 2 (redone) and 3"
    );
    let ck = checkpoint::load(&checkpoint::path_for(dir.path(), 3)).unwrap();
    assert_eq!(ck.step, 9);
    assert_eq!(ck.epoch, 3);
    // A clean resume with nothing left to do changes nothing.
    let sum = run(&settings(dir.path(), 3)).unwrap();
    assert_eq!(
        sum.resumed_from.as_deref(),
        Some(checkpoint::path_for(dir.path(), 3).as_path())
    );
    assert_eq!(sum.step, 9);
    // A run on another rule refuses to resume it, and leaves its checkpoints as they were.
    let err = run(&Settings {
        rule: Rule::Standard,
        ..settings(dir.path(), 4)
    })
    .unwrap_err();
    assert!(
        format!("{err:#}").contains("trained on freestyle, not standard"),
        "{err:#}"
    );
    assert_eq!(
        checkpoint::load(&checkpoint::path_for(dir.path(), 3)).unwrap(),
        ck
    );
    assert!(!checkpoint::path_for(dir.path(), 4).exists());

    // Keeping two: two more epochs leave the checkpoints and exports of epochs 4 and 5 (and
    // latest.onnx), and the run still resumes from the newest.
    let keep = |epochs| Settings {
        keep_checkpoints: 2,
        ..settings(dir.path(), epochs)
    };
    run(&keep(5)).unwrap();
    let epochs: Vec<u64> = checkpoint::list(dir.path())
        .into_iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(epochs, [5, 4]);
    let mut exports: Vec<String> = std::fs::read_dir(&models)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    exports.sort();
    assert_eq!(
        exports,
        ["latest.onnx", "model-000004.onnx", "model-000005.onnx"]
    );
    let sum = run(&keep(6)).unwrap();
    assert_eq!(
        sum.resumed_from.as_deref(),
        Some(checkpoint::path_for(dir.path(), 5).as_path())
    );
    assert_eq!(checkpoint::list(dir.path()).len(), 2);

    // The auxiliary opponent-reply head turned on resumes the checkpoint saved without it (the
    // head starts fresh), logs its loss, is saved in the checkpoint and left out of the export;
    // turned off again, the run resumes the checkpoint that has it.
    let aux = |epochs| Settings {
        aux_policy_weight: 0.15,
        ..keep(epochs)
    };
    let sum = run(&aux(7)).unwrap();
    assert_eq!(
        sum.resumed_from.as_deref(),
        Some(checkpoint::path_for(dir.path(), 6).as_path())
    );
    let ck = checkpoint::load(&checkpoint::path_for(dir.path(), 7)).unwrap();
    assert!(ck.weights.iter().any(|w| w.name.starts_with("aux_")));
    assert!(ck.optimizer.iter().any(|(name, _)| name.contains("aux_")));
    let metrics = std::fs::read_to_string(dir.path().join("metrics.jsonl")).unwrap();
    let last_epoch: serde_json::Value = serde_json::from_str(
        metrics
            .lines()
            .rfind(|l| l.contains("\"kind\":\"epoch\""))
            .unwrap(),
    )
    .unwrap();
    let aux_loss = last_epoch["opponent_policy_loss"].as_f64().unwrap();
    assert!(aux_loss.is_finite() && aux_loss > 0.0, "{last_epoch}");
    let size = |epoch: u64| {
        std::fs::metadata(models.join(format!("model-{epoch:06}.onnx")))
            .unwrap()
            .len()
    };
    assert_eq!(size(7), size(6), "the export has no auxiliary head");
    // Resumed without the flag, the run says that it drops the head (not silently).
    let mut said = Vec::new();
    let mut t =
        trainer::training::Trainer::new(&keep(8), tch::Device::Cpu, 100, true, |_| {}).unwrap();
    t.resume(&trainer::config::Resume::Auto, dir.path(), |m| said.push(m))
        .unwrap();
    assert!(
        said.iter()
            .any(|m| m.contains("aux_") && m.contains("--aux-policy-weight")),
        "{said:?}"
    );
    drop(t);
    let sum = run(&keep(8)).unwrap();
    assert_eq!(
        sum.resumed_from.as_deref(),
        Some(checkpoint::path_for(dir.path(), 7).as_path())
    );
    assert_eq!(sum.last_epoch, 8);
}

/// The learning rate of each epoch record in the run folder's metrics.jsonl, by epoch.
fn epoch_lrs(dir: &std::path::Path) -> Vec<(u64, f64)> {
    std::fs::read_to_string(dir.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "epoch")
        .map(|v| (v["epoch"].as_u64().unwrap(), v["lr"].as_f64().unwrap()))
        .collect()
}

#[test]
fn stop_after_epoch_keeps_the_schedule_of_the_whole_run() {
    let settings = |dir: &std::path::Path, epochs, stop_after_epoch| Settings {
        train_steps: 20,
        eval_frequency: 0,
        stop_after_epoch,
        ..settings(dir, epochs)
    };
    let whole = tempfile::tempdir().unwrap();
    run(&settings(whole.path(), 4, 0)).unwrap();
    let whole_lrs = epoch_lrs(whole.path());
    assert_eq!(whole_lrs.len(), 4);

    // Stopped after epoch 2 of 4, then resumed to stop after epoch 3: the same learning rates
    // as the whole run's epochs 1-3, and no epoch 4.
    let stopped = tempfile::tempdir().unwrap();
    let sum = run(&settings(stopped.path(), 4, 2)).unwrap();
    assert_eq!(sum.last_epoch, 2);
    assert!(!checkpoint::path_for(stopped.path(), 3).exists());
    let sum = run(&settings(stopped.path(), 4, 3)).unwrap();
    assert_eq!(sum.last_epoch, 3);
    assert_eq!(epoch_lrs(stopped.path()), whole_lrs[..3]);
    // Already there: nothing to train, nothing changes.
    let sum = run(&settings(stopped.path(), 4, 3)).unwrap();
    assert_eq!((sum.last_epoch, sum.step), (3, 60));
    assert!(!checkpoint::path_for(stopped.path(), 4).exists());

    // What `--epochs 2` would have done instead: another schedule.
    let short = tempfile::tempdir().unwrap();
    run(&settings(short.path(), 2, 0)).unwrap();
    let short_lrs = epoch_lrs(short.path());
    assert_ne!(
        short_lrs[1], whole_lrs[1],
        "epochs is the schedule's horizon"
    );
}

/// The evaluation matches play on the backend self-play runs on, whichever is chosen, and say so
/// in their record: libtorch, or the exports on ONNX Runtime in fp32 and int8.
#[test]
fn evaluation_plays_on_the_self_play_backend() {
    use trainer::config::SelfplayBackend;
    for backend in [
        SelfplayBackend::Tch,
        SelfplayBackend::Onnx,
        SelfplayBackend::OnnxInt8,
    ] {
        let dir = tempfile::tempdir().unwrap();
        // Evaluations after epoch 2 only: epoch 3's self-play reuses the sessions epoch 2's
        // evaluation loaded, epoch 2's has to load the weights epoch 1 trained.
        run(&Settings {
            selfplay_backend: backend,
            ..settings(dir.path(), 3)
        })
        .unwrap();
        let metrics = std::fs::read_to_string(dir.path().join("metrics.jsonl")).unwrap();
        let record = |kind: &str| -> serde_json::Value {
            let line = metrics
                .lines()
                .find(|l| l.contains(&format!("\"kind\":\"{kind}\"")))
                .unwrap_or_else(|| panic!("no {kind} record: {metrics}"));
            serde_json::from_str(line).unwrap()
        };
        let eval = record("eval");
        assert_eq!(eval["backend"], backend.to_string(), "{eval}");
        assert_eq!(eval["backend"], record("selfplay")["backend"]);
        for opponent in ["vs_best", "vs_classical"] {
            let games: u64 = ["wins", "draws", "losses"]
                .map(|k| eval[opponent][k].as_u64().unwrap())
                .iter()
                .sum();
            assert_eq!(games, 2, "one pair against {opponent} on {backend}: {eval}");
        }
        // Startup loads epoch 1's weights; an evaluation leaves its sessions to the next epoch.
        let reused: Vec<bool> = metrics
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["kind"] == "selfplay")
            .map(|r| r["weights_reused"].as_bool().unwrap())
            .collect();
        let on_onnx = backend != SelfplayBackend::Tch;
        assert_eq!(reused, [on_onnx, false, on_onnx], "{backend}");
    }
}

/// The in-run evaluation plays the openings of `eval_openings`: from one that fills the 7x7 board
/// but one point, with no five anywhere, black's only move fills it and every game is a draw
/// whatever the networks (whose weights depend on the order tests share torch's global seed),
/// which random openings never give. A missing file or more pairs than its openings give are
/// refused before any work: no checkpoint appears.
#[test]
fn evaluation_plays_the_openings_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let openings = dir.path().join("full.txt");
    // Offsets from the centre of 7x7, black first: 24 stones each, (2,3) left empty.
    let full = "-3,-3, 0,-3, -2,-3, 1,-3, -1,-3, 3,-3, 2,-3, -3,-2, -1,-2, -2,-2, 2,-2, 0,-2, \
                3,-2, 1,-2, -3,-1, -2,-1, -1,-1, 0,-1, 1,-1, 2,-1, -2,0, 3,-1, -1,0, -3,0, 0,0, \
                1,0, 2,0, -3,1, 3,0, -1,1, -2,1, 1,1, 0,1, 3,1, 2,1, -2,2, -3,2, -1,2, 0,2, 2,2, \
                1,2, 3,2, -3,3, -1,3, -2,3, 1,3, 0,3, 3,3";
    std::fs::write(&openings, format!("# all but one point\n{full}\n")).unwrap();
    let run_dir = dir.path().join("run");
    let s = Settings {
        eval_frequency: 1,
        eval_pairs: 2,
        eval_openings: Some(openings.clone()),
        ..settings(&run_dir, 1)
    };
    run(&s).unwrap();
    let metrics = std::fs::read_to_string(run_dir.join("metrics.jsonl")).unwrap();
    let eval: serde_json::Value = metrics
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["kind"] == "eval")
        .unwrap_or_else(|| panic!("no eval record: {metrics}"));
    for opponent in ["vs_best", "vs_classical"] {
        let r = &eval[opponent];
        assert_eq!(
            (r["wins"].as_u64(), r["draws"].as_u64()),
            (Some(0), Some(4)),
            "{opponent}: {eval}"
        );
        assert_eq!(r["pairs_by_points"], serde_json::json!([0, 0, 2, 0, 0]));
    }
    for (file, pairs, expect) in [
        (dir.path().join("missing.txt"), 2, "missing.txt"),
        (openings, 9, "at most 8"),
    ] {
        let refused = tempfile::tempdir().unwrap();
        let bad = Settings {
            eval_pairs: pairs,
            eval_openings: Some(file),
            ..settings(refused.path(), 1)
        };
        let err = format!("{:#}", run(&bad).unwrap_err());
        assert!(err.contains(expect), "{err}");
        assert!(checkpoint::list(refused.path()).is_empty(), "{err}");
    }
}
