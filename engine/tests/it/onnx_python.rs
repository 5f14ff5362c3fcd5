//! Independent check of the ONNX writer with the Python tools of the venv that
//! scripts/fetch-runtime.sh makes (`third_party/py`): `onnx.checker.check_model(full_check=True)`
//! must accept our files, and Python's `onnxruntime.InferenceSession` must reproduce what the
//! Rust side (ORT through `ort`, and the pure-Rust reference) computes.
//!
//! Without the venv it fails, not skips (`make test` fetches it first).

use std::path::{Path, PathBuf};
use std::process::Command;

use engine::eval::onnx::{Device, OnnxModel};
use engine::net::{ModelMeta, NetWeights, Preset, reference_forward, write_model_file};

const CHECK: &str = r#"
import sys
import numpy as np
import onnx
import onnxruntime as ort

path, tol = sys.argv[1], float(sys.argv[2])
model = onnx.load(path)
onnx.checker.check_model(model, full_check=True)
assert model.ir_version == 8, model.ir_version
assert [(o.domain, o.version) for o in model.opset_import] == [("", 17)], model.opset_import
meta = {p.key: p.value for p in model.metadata_props}
assert meta["fivezero.feature_version"] == "1", meta
assert meta["fivezero.preset"] == "tiny", meta
assert meta["fivezero.input_planes"] == "11", meta
ops = sorted({n.op_type for n in model.graph.node})
assert ops == sorted(["Conv", "Relu", "Add", "GlobalAveragePool", "GlobalMaxPool", "Concat", "Flatten", "Gemm", "Tanh"]), ops

sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
assert [i.name for i in sess.get_inputs()] == ["planes"]
assert [o.name for o in sess.get_outputs()] == ["policy", "value"]
worst = 0.0
for case in sys.argv[3:]:
    prefix, n, h, w = case.split(":")
    n, h, w = int(n), int(h), int(w)
    x = np.fromfile(prefix + ".planes", dtype="<f4").reshape(n, 11, h, w)
    want_p = np.fromfile(prefix + ".policy", dtype="<f4").reshape(n, h * w)
    want_v = np.fromfile(prefix + ".value", dtype="<f4").reshape(n, 1)
    got_p, got_v = sess.run(["policy", "value"], {"planes": x})
    assert got_p.shape == (n, h * w), got_p.shape
    assert got_v.shape == (n, 1), got_v.shape
    dp = float(np.abs(got_p - want_p).max())
    dv = float(np.abs(got_v - want_v).max())
    print(f"python onnxruntime {ort.__version__} {h}x{w} n={n}: policy diff {dp:.2e}, value diff {dv:.2e}")
    worst = max(worst, dp, dv)
if worst > tol:
    print(f"MISMATCH: {worst} > {tol}")
    sys.exit(1)
print("python check ok")
"#;

fn venv_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../third_party/py/bin/python")
}

fn write_f32(path: &Path, v: &[f32]) {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, bytes).unwrap();
}

fn planes(n: usize, h: usize, w: usize, seed: u64) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n * 11 * h * w)
        .map(|i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let plane = (i / (h * w)) % 11;
            match plane {
                0 | 1 | 3 | 4 => s.is_multiple_of(5) as u8 as f32,
                5 | 7 => 1.0,
                _ => 0.0,
            }
        })
        .collect()
}

#[test]
fn onnx_python_checker_and_runtime_agree() {
    let python = venv_python();
    assert!(
        python.exists(),
        "{} missing: run scripts/fetch-runtime.sh (make test does)",
        python.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let weights = NetWeights::random(Preset::Tiny.config(), 2024).unwrap();
    let model_path = dir.path().join("tiny.onnx");
    write_model_file(
        &model_path,
        &weights,
        &ModelMeta::for_config(&weights.config, 7),
    )
    .unwrap();
    let mut model = OnnxModel::load(&model_path, 1, Device::Cpu).unwrap();

    let mut cases = Vec::new();
    for (i, (n, h, w)) in [(3, 15, 15), (2, 7, 9), (1, 22, 20)]
        .into_iter()
        .enumerate()
    {
        let x = planes(n, h, w, 77 + i as u64);
        let (rp, rv) = reference_forward(&weights, &x, n, h, w).unwrap();
        let (op, ov) = model.run(&x, n, h, w).unwrap();
        let prefix = dir.path().join(format!("case{i}"));
        // Python compares against ORT-via-Rust; ORT-via-Rust is itself held to the reference here.
        let d = rp
            .iter()
            .zip(&op)
            .chain(rv.iter().zip(&ov))
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(d < 1e-4, "rust ort vs reference: {d}");
        write_f32(&prefix.with_extension("planes"), &x);
        write_f32(&prefix.with_extension("policy"), &op);
        write_f32(&prefix.with_extension("value"), &ov);
        cases.push(format!("{}:{n}:{h}:{w}", prefix.display()));
    }

    let out = Command::new(&python)
        .arg("-c")
        .arg(CHECK)
        .arg(&model_path)
        .arg("1e-4")
        .args(&cases)
        .output()
        .expect("run the venv's python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(
        out.status.success(),
        "python check failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("python check ok"));
}
