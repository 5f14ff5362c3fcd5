//! `fivezero-tools model` over the real binary: a random model is written and inspected; a
//! missing, garbage, truncated, other-feature-version or non-finite file is a clear error with a
//! non-zero exit and no panic; `bench` prints a line for every preset; `compare` measures agreement.

use std::path::{Path, PathBuf};
use std::process::Command;

use engine::net::{ModelMeta, NetWeights, Preset, write_model_file};

fn tools(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fivezero-tools"))
        .args(args)
        .output()
        .expect("fivezero-tools runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fivezero-model-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn refused(path: &Path, why: &str) {
    let (code, text) = tools(&["model", "info", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{why}: {text}");
    assert!(
        text.contains("error") && !text.contains("panicked"),
        "{why}: {text}"
    );
}

#[test]
fn random_model_is_written_and_inspected() {
    let path = scratch("tiny.onnx");
    let (code, text) = tools(&[
        "model",
        "random",
        "--preset",
        "tiny",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = tools(&["model", "info", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    let params = Preset::Tiny.config().param_count().to_string();
    for want in [
        "preset          tiny",
        params.as_str(),
        "feature version 1",
        "weights         fp32",
        "outputs finite",
    ] {
        assert!(text.contains(want), "missing `{want}` in:\n{text}");
    }
    let (code, text) = tools(&[
        "model",
        "random",
        "--preset",
        "huge",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert_ne!(code, 0, "{text}");
}

#[test]
fn bad_model_files_are_clear_errors() {
    refused(&scratch("missing.onnx"), "missing file");
    let garbage = scratch("garbage.onnx");
    std::fs::write(&garbage, b"this is not a network at all").unwrap();
    refused(&garbage, "garbage");
    let w = NetWeights::random(Preset::Tiny.config(), 3).unwrap();
    let good = engine::net::onnx_bytes(&w, &ModelMeta::for_config(&w.config, 0)).unwrap();
    let truncated = scratch("truncated.onnx");
    std::fs::write(&truncated, &good[..good.len() / 2]).unwrap();
    refused(&truncated, "truncated");
    let mut meta = ModelMeta::for_config(&w.config, 0);
    meta.feature_version = 2;
    let other = scratch("v2.onnx");
    write_model_file(&other, &w, &meta).unwrap();
    refused(&other, "other feature version");
    // Huge finite weights (the writer refuses NaN ones): the probe's logits overflow.
    let mut huge = w.clone();
    huge.policy_out.weight.iter_mut().for_each(|x| *x = 3.0e38);
    let overflow = scratch("overflow.onnx");
    write_model_file(&overflow, &huge, &ModelMeta::for_config(&huge.config, 0)).unwrap();
    refused(&overflow, "non-finite probe");
}

#[test]
fn bench_lists_every_preset() {
    let (code, text) = tools(&["model", "bench", "--search-ms", "20", "--ort-ms", "10"]);
    assert_eq!(code, 0, "{text}");
    for p in Preset::RESNETS {
        let params = p.config().param_count().to_string();
        assert!(
            text.lines()
                .any(|l| l.starts_with(p.name()) && l.contains(&params)),
            "no line for {p} with {params} parameters:\n{text}"
        );
    }
}

#[test]
fn quantize_writes_an_int8_model_that_loads_and_refuses_to_quantize_twice() {
    let fp32 = scratch("q-tiny.onnx");
    let int8 = scratch("q-tiny.int8.onnx");
    let (code, text) = tools(&[
        "model",
        "random",
        "--preset",
        "tiny",
        "--out",
        fp32.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = tools(&[
        "model",
        "quantize",
        fp32.to_str().unwrap(),
        "--out",
        int8.to_str().unwrap(),
        "--positions",
        "16",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("int8 QDQ") && text.contains("same best move"),
        "{text}"
    );
    let (code, text) = tools(&["model", "info", int8.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("outputs finite") && text.contains("weights         int8-qdq-w7"),
        "{text}"
    );
    // Weights in 8 bits on request; no other width is accepted, and nothing is written then.
    let eight = scratch("q-tiny.int8-w8.onnx");
    let (code, text) = tools(&[
        "model",
        "quantize",
        fp32.to_str().unwrap(),
        "--out",
        eight.to_str().unwrap(),
        "--positions",
        "16",
        "--weight-bits",
        "8",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("int8 QDQ (int8-qdq)"), "{text}");
    let (code, text) = tools(&[
        "model",
        "quantize",
        fp32.to_str().unwrap(),
        "--out",
        scratch("q-w6.onnx").to_str().unwrap(),
        "--weight-bits",
        "6",
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("`6`: 7 or 8"), "{text}");
    assert!(!scratch("q-w6.onnx").exists());
    let again = scratch("q-again.onnx");
    let (code, text) = tools(&[
        "model",
        "quantize",
        int8.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("not an fp32") && !text.contains("panicked"),
        "{text}"
    );
    assert!(!again.exists());
}

/// `model claim` sets what the network claims (the engine plays it only there) and keeps the
/// rest; a rule or size it does not know, or a file that is not a model, is an error that
/// writes nothing.
#[test]
fn claim_sets_the_rules_and_sizes_a_model_plays() {
    let path = scratch("claim-src.onnx");
    let (code, text) = tools(&[
        "model",
        "random",
        "--preset",
        "tiny",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    let (_, text) = tools(&["model", "info", path.to_str().unwrap()]);
    assert!(
        text.contains("plays           any rule on any size"),
        "{text}"
    );
    let out = scratch("claimed.onnx");
    let (code, text) = tools(&[
        "model",
        "claim",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--rules",
        "freestyle",
        "--sizes",
        "15,20",
    ]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = tools(&["model", "info", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("plays           freestyle on 15x15, 20x20")
            && text.contains("preset          tiny"),
        "{text}"
    );
    for (args, why) in [
        (vec!["--rules", "gomoku"], "gomoku"),
        (vec!["--sizes", "3"], "board size `3`"),
        (vec!["--sizes", "x"], "board size `x`"),
    ] {
        let bad = scratch("bad-claim.onnx");
        let mut all = vec![
            "model",
            "claim",
            path.to_str().unwrap(),
            "--out",
            bad.to_str().unwrap(),
        ];
        all.extend(args);
        let (code, text) = tools(&all);
        assert_eq!(code, 2, "{text}");
        assert!(text.contains(why) && !text.contains("panicked"), "{text}");
        assert!(!bad.exists());
    }
    let garbage = scratch("garbage-claim.onnx");
    std::fs::write(&garbage, b"not a model").unwrap();
    let bad = scratch("bad-claim2.onnx");
    let (code, text) = tools(&[
        "model",
        "claim",
        garbage.to_str().unwrap(),
        "--out",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(!bad.exists() && !text.contains("panicked"), "{text}");
}

/// `model compare`: a model agrees fully with itself, a network of other weights does not, and a
/// file that is not a model is a clear error.
#[test]
fn compare_measures_how_closely_one_model_follows_another() {
    let (a, b) = (scratch("cmp-a.onnx"), scratch("cmp-b.onnx"));
    for (path, seed) in [(&a, "1"), (&b, "2")] {
        let (code, text) = tools(&[
            "model",
            "random",
            "--preset",
            "tiny",
            "--seed",
            seed,
            "--out",
            path.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{text}");
    }
    let compare = |x: &Path, y: &Path| {
        tools(&[
            "model",
            "compare",
            x.to_str().unwrap(),
            y.to_str().unwrap(),
            "--positions",
            "24",
        ])
    };
    let (code, text) = compare(&a, &a);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(
            "on 24 freestyle 15x15 positions: same best move 100.0%, mean |value difference| 0.0000"
        ),
        "{text}"
    );
    let (code, text) = compare(&a, &b);
    assert_eq!(code, 0, "{text}");
    assert!(
        !text.contains("100.0%") && !text.contains("0.0000"),
        "{text}"
    );
    let garbage = scratch("cmp-garbage.onnx");
    std::fs::write(&garbage, b"not a network").unwrap();
    let (code, text) = compare(&a, &garbage);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("cmp-garbage.onnx") && !text.contains("panicked"),
        "{text}"
    );
}
