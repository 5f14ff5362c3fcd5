//! `trainer-eval` end to end: a tiny network trained for two epochs, exported to ONNX, then the
//! real binary plays it in the engine against uniform and classical and writes the summary.

use std::path::Path;
use std::process::{Command, Output};

use trainer::config::Settings;
use trainer::run::run;

/// trainer-eval on `model` with `args`, one game at a time, its summary written to `json`.
fn eval_with_summary(model: &Path, json: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_trainer-eval"))
        .args(args)
        .args(["--workers", "1"])
        .arg("--model")
        .arg(model)
        .arg("--json")
        .arg(json)
        .output()
        .unwrap()
}

/// The JSON summary trainer-eval wrote.
fn summary(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn evaluates_an_exported_network_against_both_baselines() {
    let dir = tempfile::tempdir().unwrap();
    let s = Settings {
        model_preset: engine::net::Preset::Tiny,
        board_size: 7,
        mcts_simulations: 12,
        parallel_games: 4,
        batch_size_mcts: 2,
        selfplay_games: 4,
        batch_size: 32,
        train_steps: 2,
        epochs: 1,
        eval_frequency: 0,
        device: trainer::support::device::DeviceArg::Cpu,
        threads: 1,
        checkpoint_dir: dir.path().to_path_buf(),
        ..Settings::default()
    };
    run(&s).unwrap();
    let json = dir.path().join("proof.json");
    let model = dir.path().join("models").join("latest.onnx");
    let out = eval_with_summary(
        &model,
        &json,
        &["--board-size", "7", "--pairs", "2", "--simulations", "8"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["uniform", "classical"] {
        assert!(
            stdout.contains(&format!("vs {name}")) && stdout.contains("over 4 games"),
            "{stdout}"
        );
    }
    let doc = summary(&json);
    for name in ["uniform", "classical"] {
        let r = &doc["results"][name];
        let games = r["wins"].as_u64().unwrap()
            + r["draws"].as_u64().unwrap()
            + r["losses"].as_u64().unwrap();
        assert_eq!(games, 4, "{doc}");
    }
    // Head to head with another network's file: the model against itself, one pair (its two
    // colours from one opening): both games are played and scored.
    let other = model.to_str().unwrap();
    let one_pair = ["--board-size", "7", "--pairs", "1", "--simulations", "8"];
    let out = eval_with_summary(
        &model,
        &json,
        &[&one_pair[..], &["--against", other]].concat(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = summary(&json);
    let r = &doc["results"][model.to_str().unwrap()];
    let games = ["wins", "draws", "losses"].map(|k| r[k].as_u64().unwrap());
    assert_eq!(games.iter().sum::<u64>(), 2, "{doc}");
    // --tactics puts the threat search on both sides, and the summary says it was on.
    let out = eval_with_summary(
        &model,
        &json,
        &[&one_pair[..], &["--against", "uniform", "--tactics"]].concat(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("tactics on"),
        "{stdout}"
    );
    let doc = summary(&json);
    assert_eq!(doc["tactics"], true, "{doc}");
    // A model named by --model without --json writes no summary: the profile's run folder
    // (relative, so under the working folder here) keeps whatever proof.json it has.
    let cwd = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_trainer-eval"))
        .current_dir(cwd.path())
        .arg("--model")
        .arg(&model)
        .args(["--board-size", "7", "--pairs", "1", "--simulations", "4"])
        .args(["--workers", "1", "--against", "uniform"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("no summary file written"),
        "{stdout}"
    );
    let written: Vec<_> = std::fs::read_dir(cwd.path()).unwrap().collect();
    assert!(written.is_empty(), "{written:?}");
    // An opponent that is neither a baseline nor a model file is refused by name.
    let out = Command::new(env!("CARGO_BIN_EXE_trainer-eval"))
        .arg("--model")
        .arg(&model)
        .args(["--against", "stockfish", "--pairs", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("`stockfish`"));
    // A missing model is a clean error naming the file, not a panic.
    let out = Command::new(env!("CARGO_BIN_EXE_trainer-eval"))
        .args(["--model", "/nonexistent/model.onnx", "--pairs", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/nonexistent/model.onnx") && !stderr.contains("panicked"),
        "{stderr}"
    );
    // Openings from a file: three pairs from two openings (the third is the first one turned),
    // named in the summary; more pairs than 8 orientations of them give, or an opening off the
    // board, are clean errors naming the file.
    let openings = dir.path().join("openings.txt");
    std::fs::write(&openings, "# two\n0,0, 1,0, 0,1\n0,0, -1,1, 1,1\n").unwrap();
    let with_openings = |pairs: &str, file: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_trainer-eval"))
            .arg("--model")
            .arg(&model)
            .args(["--board-size", "7", "--pairs", pairs, "--simulations", "4"])
            .args(["--workers", "1", "--against", "classical"])
            .arg("--openings")
            .arg(file)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap()
    };
    let out = with_openings("3", &openings);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("6 games per opponent from openings of"),
        "{stdout}"
    );
    let doc = summary(&json);
    assert_eq!(doc["openings"], openings.display().to_string(), "{doc}");
    let pairs = doc["results"]["classical"]["pairs_by_points"]
        .as_array()
        .unwrap();
    let counted: u64 = pairs.iter().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(counted, 3, "{doc}");
    let out = with_openings("17", &openings);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("at most 16"),
        "{stderr}"
    );
    let off_board = dir.path().join("off-board.txt");
    std::fs::write(&off_board, "0,0, 5,5\n").unwrap();
    let out = with_openings("1", &off_board);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("off-board.txt") && stderr.contains("line 1"),
        "{stderr}"
    );
    // Without --openings, the profile's eval_openings file is the one played.
    let config = dir.path().join("profiles.toml");
    let profile = format!(
        "[seven]\nboard_size = 7\neval_openings = \"{}\"\n",
        openings.display()
    );
    std::fs::write(&config, profile).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_trainer-eval"))
        .arg("--config")
        .arg(&config)
        .args(["--profile", "seven", "--model"])
        .arg(&model)
        .args(["--pairs", "2", "--simulations", "4", "--workers", "1"])
        .args(["--against", "uniform", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("4 games per opponent from openings of"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
