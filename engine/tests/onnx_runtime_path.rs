//! How the engine finds `libonnxruntime.so` when started from anywhere (a Gomocup manager does not
//! use cargo's environment): a missing library is a clean error, never a panic; an explicit
//! `ORT_DYLIB_PATH` is honoured and may be relative to the executable; a failed attempt can be
//! retried. Where a system ONNX Runtime exists, the checks it makes impossible are reported as
//! skipped (`fivezero_tests::skip`), the others still run. Its own test binary (own process): it
//! changes the environment and the runtime can be loaded only once per process, so the steps run
//! in order inside one test, in a child process started without the folders of
//! `LD_LIBRARY_PATH` that hold the runtime (cargo puts `target/release` there, where `make build`
//! ships it, and the dynamic loader would find it by name before the engine's own lookup).

use std::path::{Component, Path, PathBuf};
use std::process::Command;

use engine::eval::onnx::{Device, OnnxError, OnnxModel, OnnxRuntime};
use engine::net::{ModelMeta, NetWeights, Preset, onnx_bytes};
use fivezero_tests::skip::skip;

/// `to` written relative to `from` (both absolute): up to the root, then down.
fn relative_to(from: &Path, to: &Path) -> PathBuf {
    let mut p = PathBuf::new();
    for c in from.components() {
        if matches!(c, Component::Normal(_)) {
            p.push("..");
        }
    }
    for c in to.components() {
        if let Component::Normal(s) = c {
            p.push(s);
        }
    }
    p
}

/// Set in the child process that runs the checks.
const CHILD: &str = "FIVEZERO_ORT_PATH_CHILD";

/// Runs this test again in a child whose `LD_LIBRARY_PATH` holds no ONNX Runtime (the loader
/// reads the variable once, at start, so the parent cannot drop it for itself).
fn rerun_without_runtime_on_library_path() {
    let path = std::env::var_os("LD_LIBRARY_PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| !dir.join("libonnxruntime.so").exists())
        .collect();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "onnx_runtime_resolution_order_and_errors",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .env("LD_LIBRARY_PATH", std::env::join_paths(kept).unwrap())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A filter that matches no test also exits 0: the child must report this test as run.
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the checks failed or did not run in the child ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

#[test]
fn onnx_runtime_resolution_order_and_errors() {
    if std::env::var_os(CHILD).is_none() {
        return rerun_without_runtime_on_library_path();
    }
    let repo_lib =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../third_party/onnxruntime/libonnxruntime.so");
    let repo_lib = repo_lib
        .canonicalize()
        .expect("run scripts/fetch-runtime.sh first");
    let exe_dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();

    // SAFETY: this binary holds a single test, so no other thread reads the environment.
    unsafe { std::env::remove_var("ORT_DYLIB_PATH") };
    let cands = OnnxRuntime::candidates();
    assert_eq!(cands[0], exe_dir.join("libonnxruntime.so"));
    assert_eq!(
        cands[1],
        exe_dir.join("../../third_party/onnxruntime/libonnxruntime.so")
    );

    // 1. An explicit setting that points nowhere is an error naming it (no silent fallback). It
    // fails before anything is loaded, so it runs first, whatever the system has.
    let bogus = exe_dir.join("no-such-dir/libonnxruntime.so");
    unsafe { std::env::set_var("ORT_DYLIB_PATH", &bogus) };
    let err = OnnxRuntime::init().unwrap_err();
    assert!(matches!(err, OnnxError::RuntimeNotFound { .. }), "{err}");
    assert!(err.to_string().contains("no-such-dir"), "{err}");
    // Model loading reports the same error instead of panicking inside ort.
    let w = NetWeights::random(Preset::Tiny.config(), 1).unwrap();
    let bytes = onnx_bytes(&w, &ModelMeta::for_config(&w.config, 0)).unwrap();
    assert!(matches!(
        OnnxModel::from_bytes(&bytes, 1, Device::Cpu),
        Err(OnnxError::RuntimeNotFound { .. })
    ));

    // 2. No setting and (under a target dir) no copy next to the test executable: an error naming
    // where it looked and how to fetch the library. A library on the system search path loads
    // instead, and the runtime loads only once per process: then this and the relative path's
    // load below cannot be checked here.
    unsafe { std::env::remove_var("ORT_DYLIB_PATH") };
    let mut system_runtime = false;
    if OnnxRuntime::resolve().unwrap().is_none() {
        match OnnxRuntime::init() {
            Err(e @ OnnxError::RuntimeNotFound { .. }) => {
                let msg = e.to_string();
                assert!(msg.contains("fetch-runtime.sh"), "{msg}");
                assert!(
                    msg.contains(&exe_dir.join("libonnxruntime.so").display().to_string()),
                    "{msg}"
                );
            }
            Err(other) => panic!("expected RuntimeNotFound, got {other}"),
            Ok(()) => system_runtime = true,
        }
    }

    // 3. A path relative to the executable's folder works, and the earlier failures don't stick.
    let rel = relative_to(&exe_dir, &repo_lib);
    assert!(rel.is_relative());
    unsafe { std::env::set_var("ORT_DYLIB_PATH", &rel) };
    assert_eq!(OnnxRuntime::resolve().unwrap().unwrap(), exe_dir.join(&rel));
    OnnxRuntime::init().unwrap();
    let mut model = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).unwrap();
    let (p, v) = model.run(&vec![0.0; 11 * 5 * 5], 1, 5, 5).unwrap();
    assert_eq!((p.len(), v.len()), (25, 1));
    if system_runtime {
        skip(
            "engine onnx_runtime_path: the missing-library error and loading through a relative \
             ORT_DYLIB_PATH",
            "a system libonnxruntime.so loaded first (the runtime loads once per process)",
        );
    }
}
