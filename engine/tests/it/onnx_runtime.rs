//! ONNX writer + ONNX Runtime against the pure-Rust reference forward pass, and the model checks
//! that must refuse bad files. Needs the runtime from scripts/fetch-runtime.sh (`make test` runs
//! it); the tests fail, not skip, without it, since ONNX inference is part of the engine.

use engine::eval::Evaluator;
use engine::eval::network::LoadConfig;
use engine::eval::onnx::{Device, OnnxError, OnnxModel, OnnxRuntime};
use engine::eval::onnx_evaluator::OnnxEvaluator;
use engine::game::{Board, Rule};
use engine::net::{
    ModelMeta, NetConfig, NetWeights, Preset, onnx_bytes, reference_forward, write_model_file,
};

const TOL: f32 = 1e-4;

fn runtime() {
    if let Err(e) = OnnxRuntime::init() {
        panic!("ONNX Runtime unavailable: {e}");
    }
}

/// The value `evaluator` gives `board`, evaluated alone.
fn value_on(evaluator: &dyn Evaluator, board: &Board) -> f32 {
    let mut out = Vec::new();
    evaluator.evaluate(&[board], &mut out);
    out[0].value
}

/// Deterministic pseudo-positions: sparse stones on planes 0/1, ones on plane 5, one rule plane.
fn planes(n: usize, h: usize, w: usize, seed: u64) -> Vec<f32> {
    let hw = h * w;
    let mut v = vec![0f32; n * 11 * hw];
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for b in 0..n {
        let base = b * 11 * hw;
        for i in 0..hw {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            match s % 7 {
                0 => v[base + i] = 1.0,
                1 => v[base + hw + i] = 1.0,
                _ => {}
            }
            v[base + 5 * hw + i] = 1.0;
            v[base + (6 + b % 4) * hw + i] = 1.0;
            v[base + 10 * hw + i] = (b % 2) as f32;
        }
        v[base + 3 * hw + (s as usize % hw)] = 1.0;
    }
    v
}

fn tiny(seed: u64) -> (NetWeights, Vec<u8>) {
    let w = NetWeights::random(Preset::Tiny.config(), seed).unwrap();
    let bytes = onnx_bytes(&w, &ModelMeta::for_config(&w.config, 42)).unwrap();
    (w, bytes)
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn onnx_matches_reference_forward() {
    runtime();
    let (weights, _) = tiny(1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.onnx");
    write_model_file(&path, &weights, &ModelMeta::for_config(&weights.config, 42)).unwrap();
    let mut model = OnnxModel::load(&path, 1, Device::Cpu).unwrap();
    assert_eq!(model.meta().preset, "tiny");
    assert_eq!(model.meta().step, 42);
    assert_eq!(model.meta().feature_version, 1);
    assert_eq!((model.meta().min_board, model.meta().max_board), (5, 22));

    for (h, w) in [(15, 15), (20, 20), (7, 9), (9, 7)] {
        for n in [1, 5] {
            let x = planes(n, h, w, (h * 100 + w * 10 + n) as u64);
            let (p, v) = model.run(&x, n, h, w).unwrap();
            let (rp, rv) = reference_forward(&weights, &x, n, h, w).unwrap();
            let (dp, dv) = (max_diff(&p, &rp), max_diff(&v, &rv));
            eprintln!("{h}x{w} n={n}: max |ort - reference| policy {dp:.2e}, value {dv:.2e}");
            assert!(
                dp < TOL && dv < TOL,
                "{h}x{w} n={n}: policy diff {dp}, value diff {dv}"
            );
            // Guard against a degenerate network making the comparison vacuous.
            let spread = rp.iter().cloned().fold(f32::MIN, f32::max)
                - rp.iter().cloned().fold(f32::MAX, f32::min);
            assert!(spread > 1e-2, "{h}x{w}: degenerate policy");
            assert!(
                rv.iter().all(|v| v.abs() < 0.999),
                "{h}x{w}: saturated value {rv:?}"
            );
        }
    }
}

#[test]
fn batch_entries_are_independent() {
    runtime();
    let (_, bytes) = tiny(2);
    let mut model = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).unwrap();
    let (h, w) = (11, 13);
    let x = planes(5, h, w, 9);
    let (p, v) = model.run(&x, 5, h, w).unwrap();
    let one = 11 * h * w;
    for b in 0..5 {
        let (pb, vb) = model.run(&x[b * one..(b + 1) * one], 1, h, w).unwrap();
        assert!(max_diff(&pb, &p[b * h * w..(b + 1) * h * w]) < TOL);
        assert!((vb[0] - v[b]).abs() < TOL);
    }
}

#[test]
fn model_id_is_the_bytes_identity() {
    runtime();
    let (_, a) = tiny(3);
    let (_, b) = tiny(4);
    let ma = OnnxModel::from_bytes(&a, 1, Device::Cpu).unwrap();
    let ma2 = OnnxModel::from_bytes(&a, 1, Device::Cpu).unwrap();
    let mb = OnnxModel::from_bytes(&b, 1, Device::Cpu).unwrap();
    assert_eq!(ma.id(), ma2.id());
    assert_ne!(ma.id(), mb.id());
    assert_eq!(ma.file(), "<memory>");
}

#[test]
fn refuses_non_onnx_bytes() {
    runtime();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage.onnx");
    std::fs::write(&path, b"this is not a protobuf model at all\n").unwrap();
    let err = OnnxModel::load(&path, 1, Device::Cpu).unwrap_err();
    eprintln!("{err}");
    assert!(matches!(err, OnnxError::NotOnnx { .. }), "{err}");
    assert!(
        err.to_string().contains("garbage.onnx"),
        "error must name the file: {err}"
    );
    assert!(OnnxModel::from_bytes(&[], 1, Device::Cpu).is_err());
}

#[test]
fn refuses_truncated_file() {
    runtime();
    let (_, bytes) = tiny(5);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("truncated.onnx");
    std::fs::write(&path, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let err = OnnxModel::load(&path, 1, Device::Cpu).unwrap_err();
    assert!(err.to_string().contains("truncated.onnx"), "{err}");
    assert!(matches!(err, OnnxError::NotOnnx { .. }), "{err}");
}

#[test]
fn refuses_missing_file() {
    runtime();
    let err = OnnxModel::load("/nonexistent/dir/model.onnx", 1, Device::Cpu).unwrap_err();
    assert!(matches!(err, OnnxError::Read { .. }), "{err}");
    assert!(err.to_string().contains("/nonexistent/dir/model.onnx"));
}

#[test]
fn refuses_wrong_input_planes() {
    runtime();
    let config = NetConfig {
        input_planes: 7,
        ..Preset::Tiny.config()
    };
    let w = NetWeights::random(config, 6).unwrap();
    let bytes = onnx_bytes(&w, &ModelMeta::for_config(&config, 0)).unwrap();
    let err = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).unwrap_err();
    assert!(matches!(err, OnnxError::Contract { .. }), "{err}");
    assert!(err.to_string().contains("7 channels"), "{err}");
}

#[test]
fn refuses_other_feature_version() {
    runtime();
    let w = NetWeights::random(Preset::Tiny.config(), 7).unwrap();
    let mut meta = ModelMeta::for_config(&w.config, 0);
    meta.feature_version = 2;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.onnx");
    write_model_file(&path, &w, &meta).unwrap();
    let err = OnnxModel::load(&path, 1, Device::Cpu).unwrap_err();
    match &err {
        OnnxError::FeatureVersion {
            found,
            expected,
            file,
        } => {
            assert_eq!(found, "2");
            assert_eq!(*expected, 1);
            assert!(file.ends_with("v2.onnx"));
        }
        other => panic!("expected a feature-version error, got {other}"),
    }
    assert!(err.to_string().contains("feature version 2"), "{err}");
}

#[test]
fn run_rejects_bad_shapes_and_board_sizes() {
    runtime();
    let (_, bytes) = tiny(8);
    let mut model = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).unwrap();
    let x = planes(1, 15, 15, 1);
    assert!(matches!(
        model.run(&x, 2, 15, 15),
        Err(OnnxError::Input { .. })
    ));
    assert!(matches!(
        model.run(&x[..10], 1, 15, 15),
        Err(OnnxError::Input { .. })
    ));
    assert!(matches!(
        model.run(&[], 0, 15, 15),
        Err(OnnxError::Input { .. })
    ));
    let small = planes(1, 4, 4, 1);
    assert!(matches!(
        model.run(&small, 1, 4, 4),
        Err(OnnxError::BoardSize { .. })
    ));
    let big = planes(1, 23, 15, 1);
    assert!(matches!(
        model.run(&big, 1, 23, 15),
        Err(OnnxError::BoardSize { .. })
    ));
    // The session stays usable after refused inputs.
    assert!(model.run(&x, 1, 15, 15).is_ok());
}

#[test]
fn rejects_non_finite_outputs() {
    runtime();
    let mut w = NetWeights::random(Preset::Tiny.config(), 9).unwrap();
    // Huge but finite weights: the policy logits overflow to inf inside the runtime.
    for x in &mut w.policy_out.weight {
        *x = 3.0e38;
    }
    let bytes = onnx_bytes(&w, &ModelMeta::for_config(&w.config, 0)).unwrap();
    let mut model = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).unwrap();
    let err = model.run(&planes(1, 9, 9, 2), 1, 9, 9).unwrap_err();
    assert!(
        matches!(
            err,
            OnnxError::NonFinite {
                output: "policy",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn cuda_request_fails_cleanly_without_gpu_build() {
    runtime();
    let (_, bytes) = tiny(10);
    match OnnxModel::from_bytes(&bytes, 1, Device::Cuda(0)) {
        // A CUDA-enabled runtime on a GPU machine may legitimately succeed.
        Ok(model) => assert_eq!(model.device(), Device::Cuda(0)),
        Err(err) => {
            eprintln!("cuda refused as expected: {err}");
            assert!(matches!(err, OnnxError::Cuda { device: 0, .. }), "{err}");
            assert!(err.to_string().contains("CUDA"), "{err}");
        }
    }
}

#[test]
fn runtime_init_is_idempotent() {
    runtime();
    OnnxRuntime::init().unwrap();
    OnnxRuntime::init().unwrap();
    assert!(OnnxRuntime::resolve().unwrap().is_some_and(|p| p.is_file()));
}

/// The engine's evaluator over ORT: one call with boards of several sizes gives what each board
/// gives alone (one forward per size, none failed), with policies on exactly the legal points.
#[test]
fn onnx_evaluator_runs_mixed_board_sizes_one_size_at_a_time() {
    runtime();
    let (_, bytes) = tiny(3);
    let ev = OnnxEvaluator::from_bytes(&bytes, LoadConfig::default()).unwrap();
    let mut boards = Vec::new();
    for (w, h, rule) in [
        (15, 15, Rule::Freestyle),
        (9, 9, Rule::Renju),
        (15, 15, Rule::Renju),
        (7, 11, Rule::Caro),
        (9, 9, Rule::Freestyle),
    ] {
        let mut b = Board::new(w, h, rule).unwrap();
        for i in 0..7 {
            let legal = b.legal_moves();
            b.play(legal[(i * 11 + 5) % legal.len()]).unwrap();
        }
        boards.push(b);
    }
    let refs: Vec<&Board> = boards.iter().collect();
    let mut together = Vec::new();
    ev.evaluate(&refs, &mut together);
    assert_eq!((ev.failures(), ev.take_error()), (0, None));
    assert_eq!(together.len(), boards.len());
    for (b, e) in boards.iter().zip(&together) {
        let mut alone = Vec::new();
        ev.evaluate(&[b], &mut alone);
        assert!(
            max_diff(&e.policy, &alone[0].policy) < TOL && (e.value - alone[0].value).abs() < TOL
        );
        for p in b.points() {
            assert_eq!(e.policy[b.dense_index(p)] > 0.0, b.is_legal(p), "{p:?}");
        }
    }
}

/// Thread CPU seconds (ORT with one intra-op thread computes on the calling thread): a figure
/// that stays honest when other processes share the cores, unlike wall time.
fn thread_cpu_seconds() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes the struct we pass.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

/// `cargo test --release -p engine --test it -- --ignored --nocapture onnx_throughput`
#[test]
#[ignore = "timing figure, not a check"]
fn onnx_throughput_small_15x15_b16_t1() {
    runtime();
    let w = NetWeights::random(Preset::Small.config(), 1).unwrap();
    let bytes = onnx_bytes(&w, &ModelMeta::for_config(&w.config, 0)).unwrap();
    let mut model = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).unwrap();
    let (n, side, rounds) = (16, 15, 20);
    let x = planes(n, side, side, 1);
    model.run(&x, n, side, side).unwrap(); // warm-up: allocations, kernel selection
    let (wall0, cpu0) = (std::time::Instant::now(), thread_cpu_seconds());
    for _ in 0..rounds {
        std::hint::black_box(model.run(&x, n, side, side).unwrap());
    }
    let (wall, cpu) = (wall0.elapsed().as_secs_f64(), thread_cpu_seconds() - cpu0);
    let positions = (n * rounds) as f64;
    eprintln!(
        "small ({} params) 15x15 batch {n}, 1 thread: {:.0} positions/s wall, {:.0} positions/s per CPU-second",
        w.param_count(),
        positions / wall,
        positions / cpu
    );
}

/// The int8 (QDQ) export runs in ONNX Runtime and stays close to the fp32 reference: logits
/// within a few quantization steps of their spread, values within 0.05; it says it is int8; and
/// it cannot be quantized again (its fp32 weights are gone), which is said by name.
#[test]
fn int8_export_runs_close_to_the_fp32_reference() {
    use engine::net::quant::WeightBits;
    runtime();
    let (w, fp32) = tiny(11);
    let (h, wd) = (9, 9);
    let hw = h * wd;
    let calibration: Vec<Vec<f32>> = planes(32, h, wd, 5)
        .chunks(11 * hw)
        .map(|c| c.to_vec())
        .collect();
    let int8 =
        engine::net::quant::quantize_model_bytes(&fp32, &calibration, h, wd, WeightBits::default())
            .unwrap();
    let mut m = OnnxModel::from_bytes(&int8, 1, Device::Cpu).unwrap();
    let x = planes(8, h, wd, 9);
    let (p, v) = m.run(&x, 8, h, wd).unwrap();
    let (rp, rv) = reference_forward(&w, &x, 8, h, wd).unwrap();
    let spread = rp.iter().fold(0f32, |a, &b| a.max(b.abs())).max(1e-3);
    let dp = max_diff(&p, &rp);
    let dv = max_diff(&v, &rv);
    eprintln!("int8 vs reference: logits max diff {dp:.4} of spread {spread:.3}, values {dv:.4}");
    assert!(dp < 0.1 * spread, "logits differ by {dp} (spread {spread})");
    assert!(dv < 0.05, "values differ by {dv}");
    let proto = <engine::net::onnx_pb::ModelProto as prost::Message>::decode(&int8[..]).unwrap();
    let quant = proto
        .metadata_props
        .iter()
        .find(|p| p.key.as_deref() == Some(engine::net::QUANTIZATION_KEY));
    assert_eq!(quant.and_then(|p| p.value.as_deref()), Some("int8-qdq-w7"));
    // Full 8-bit weights on request: another file, which runs and says so (how close it stays
    // depends on the CPU: ONNX Runtime's integer convolution can saturate without VNNI).
    let eight =
        engine::net::quant::quantize_model_bytes(&fp32, &calibration, h, wd, WeightBits::Eight)
            .unwrap();
    assert_ne!(eight, int8);
    OnnxModel::from_bytes(&eight, 1, Device::Cpu)
        .unwrap()
        .run(&x, 8, h, wd)
        .unwrap();
    let proto = <engine::net::onnx_pb::ModelProto as prost::Message>::decode(&eight[..]).unwrap();
    let quant = proto
        .metadata_props
        .iter()
        .find(|p| p.key.as_deref() == Some(engine::net::QUANTIZATION_KEY));
    assert_eq!(quant.and_then(|p| p.value.as_deref()), Some("int8-qdq"));
    let again =
        engine::net::quant::quantize_model_bytes(&int8, &calibration, h, wd, WeightBits::default())
            .unwrap_err();
    assert!(again.to_string().contains("not an fp32"), "{again}");
    let garbage = engine::net::quant::quantize_model_bytes(
        b"not onnx",
        &calibration,
        h,
        wd,
        WeightBits::default(),
    )
    .unwrap_err();
    assert!(
        garbage.to_string().contains("not an ONNX model"),
        "{garbage}"
    );
}

/// The embedded defaults: every rule they claim goes to its own network (the values differ),
/// freestyle 20x20 to its own file rather than the 15x15 default, a game none claims is
/// refused, and the networks share one cache, so the memory the engine sets aside for one cache
/// holds when a session plays several rules.
#[test]
fn embedded_defaults_play_their_rules_through_one_cache() {
    runtime();
    let config = LoadConfig {
        cache_entries: 64,
        ..LoadConfig::default()
    };
    let (set, plays) =
        engine::eval::slot::load_embedded(config).expect("the embedded defaults load");
    for rule in [
        "freestyle on 15x15;",
        "freestyle on 20x20",
        "standard on 15x15, 20x20",
        "renju on 15x15, 20x20",
        "caro on 15x15, 20x20",
    ] {
        assert!(plays.contains(rule), "{plays}");
    }
    let position = |rule, size| {
        let mut b = Board::new(size, size, rule).unwrap();
        for (x, y) in [(7, 7), (8, 7), (7, 8), (8, 8)] {
            b.play(engine::game::Pos::new(x, y)).unwrap();
        }
        b
    };
    let mut values = Vec::new();
    for rule in [Rule::Freestyle, Rule::Standard, Rule::Renju, Rule::Caro] {
        let b = position(rule, 15);
        assert!(set.refuses(&b).is_none(), "{rule}");
        let value = value_on(&*set, &b);
        assert_eq!(
            value_on(&*set, &b),
            value,
            "{rule}: the cache hit gives the miss's value"
        );
        values.push(value);
    }
    assert_eq!(
        set.cache_stats(),
        Some((8, 4)),
        "one cache: 4 rules x (a miss, then a hit)"
    );
    assert!(
        values.windows(2).all(|v| v[0] != v[1]),
        "one network per rule: {values:?}"
    );
    for rule in [Rule::Freestyle, Rule::Standard, Rule::Renju, Rule::Caro] {
        assert!(set.refuses(&position(rule, 20)).is_none(), "{rule} 20x20");
    }
    // Freestyle 20x20 goes to its own file (the previous default), not to default.onnx, which
    // claims 15x15 only: the set's value is that file's, exactly.
    let empty_20 = Board::new(20, 20, Rule::Freestyle).unwrap();
    // The set runs them natively, so the file is run natively too, for the very same value.
    let file_value = |bytes: &[u8]| {
        let net = engine::eval::native::NativeNet::from_bytes(bytes).unwrap();
        let file = engine::eval::native::NativeEvaluator::native(net, 1, 16, 0);
        value_on(&file, &empty_20)
    };
    let models = engine::eval::embedded::DEFAULT_MODELS;
    let (file, bytes) = models[models.len() - 1];
    assert_eq!(file, "models/default-freestyle-20x20.onnx");
    let set_value = value_on(&*set, &empty_20);
    assert_eq!(set_value, file_value(bytes));
    assert_ne!(set_value, file_value(models[0].1), "not default.onnx's");
    assert!(set.refuses(&position(Rule::Freestyle, 19)).is_some());
}
