//! ONNX Runtime backend: finds and loads the native runtime, loads a network-contract model file,
//! validates it (inputs, outputs, feature version, board range) and runs batches of input planes.
//!
//! The only module of the engine that names `ort`. Depends on `net` (names, metadata) and nothing
//! of the search; search code reaches it through the `Evaluator` trait only.
//!
//! Finding the runtime library (`RUNTIME_LIB`: `libonnxruntime.so`, on Windows `onnxruntime.dll`;
//! a Gomocup manager may start the engine from any folder):
//! 1. `ORT_DYLIB_PATH` (absolute, or relative to the executable's folder, else to the cwd);
//! 2. the library next to the executable;
//! 3. `<exe dir>/../../third_party/onnxruntime/` (the repo layout, run from `target/release`);
//! 4. the system library search path (`LD_LIBRARY_PATH`, ldconfig; on Windows `PATH`).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::{TensorElementType, TensorRef, ValueType};

pub use crate::device::Device;
use crate::net::{self, FEATURE_VERSION, INPUT_NAME, ModelMeta, POLICY_NAME, VALUE_NAME};

/// File name of the runtime library on this platform.
#[cfg(not(windows))]
pub const RUNTIME_LIB: &str = "libonnxruntime.so";
#[cfg(windows)]
pub const RUNTIME_LIB: &str = "onnxruntime.dll";
/// What the user does when the library is missing.
#[cfg(not(windows))]
const RUNTIME_HINT: &str = "run scripts/fetch-runtime.sh or set ORT_DYLIB_PATH";
#[cfg(windows)]
const RUNTIME_HINT: &str =
    "put onnxruntime.dll (and the MSVC runtime DLLs it needs) next to pbrain-fivezero.exe";

/// Errors of the ONNX backend. Each names the model file (or `<memory>`) it is about.
#[derive(Debug, thiserror::Error)]
pub enum OnnxError {
    #[error("ONNX Runtime library not found (tried: {tried}); {RUNTIME_HINT}")]
    RuntimeNotFound { tried: String },
    #[error("ONNX Runtime library {path} could not be loaded: {message}")]
    RuntimeLoad { path: String, message: String },
    #[error("ONNX Runtime environment: {0}")]
    Environment(String),
    #[error("{file}: cannot read model: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}: not a loadable ONNX model: {message}")]
    NotOnnx { file: String, message: String },
    #[error("{file}: not a fivezero network: {message}")]
    Contract { file: String, message: String },
    #[error(
        "{file}: model has feature version {found}, this engine reads version {expected} only (re-export the model for this engine)"
    )]
    FeatureVersion {
        file: String,
        found: String,
        expected: u32,
    },
    #[error(
        "{file}: CUDA device {device} unavailable: {message} (needs the onnxruntime-gpu build and CUDA 13 + cuDNN 9 libraries)"
    )]
    Cuda {
        file: String,
        device: i32,
        message: String,
    },
    #[error("{file}: session setup failed: {message}")]
    Session { file: String, message: String },
    #[error("{file}: bad input: {message}")]
    Input { file: String, message: String },
    #[error("{file}: board {h}x{w} is outside the model's range {min}..={max}")]
    BoardSize {
        file: String,
        h: usize,
        w: usize,
        min: usize,
        max: usize,
    },
    #[error("{file}: inference failed: {message}")]
    Run { file: String, message: String },
    #[error("{file}: output `{output}` has a non-finite value ({value}) at index {index}")]
    NonFinite {
        file: String,
        output: &'static str,
        index: usize,
        value: f32,
    },
}

/// The process-wide ONNX Runtime: the loaded library and one environment.
pub struct OnnxRuntime;

static ENV: OnceLock<Environment> = OnceLock::new();
static INIT_LOCK: Mutex<()> = Mutex::new(());

impl OnnxRuntime {
    /// Candidate library paths, in resolution order (see the module docs).
    pub fn candidates() -> Vec<PathBuf> {
        let exe_dir = std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf));
        let mut v = Vec::new();
        if let Some(p) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
            let p = PathBuf::from(p);
            if p.is_absolute() {
                v.push(p);
            } else {
                if let Some(d) = &exe_dir {
                    v.push(d.join(&p));
                }
                v.push(p);
            }
            // An explicit setting is the user's choice: no silent fallback to another copy.
            return v;
        }
        if let Some(d) = &exe_dir {
            v.push(d.join(RUNTIME_LIB));
            v.push(d.join("../../third_party/onnxruntime").join(RUNTIME_LIB));
        }
        v
    }

    /// The library file that [`OnnxRuntime::init`] would load; `None` means "system search path".
    pub fn resolve() -> Result<Option<PathBuf>, OnnxError> {
        let explicit = std::env::var_os("ORT_DYLIB_PATH").is_some_and(|p| !p.is_empty());
        let cands = Self::candidates();
        if let Some(p) = cands.iter().find(|p| p.is_file()) {
            return Ok(Some(p.clone()));
        }
        if explicit {
            let tried = cands
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            return Err(OnnxError::RuntimeNotFound { tried });
        }
        Ok(None)
    }

    /// Loads the runtime library and creates the environment. Idempotent and thread-safe; after
    /// a failure a later call tries again (e.g. once the library has been fetched).
    pub fn init() -> Result<(), OnnxError> {
        if ENV.get().is_some() {
            return Ok(());
        }
        let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        if ENV.get().is_some() {
            return Ok(());
        }
        let path = Self::resolve()?;
        let (shown, target) = match &path {
            Some(p) => (p.display().to_string(), p.clone()),
            None => (
                format!("{RUNTIME_LIB} (system search path)"),
                PathBuf::from(RUNTIME_LIB),
            ),
        };
        let builder = ort::init_from(&target).map_err(|e| {
            if path.is_none() {
                let tried = Self::candidates()
                    .iter()
                    .map(|p| p.display().to_string())
                    .chain([shown.clone()])
                    .collect::<Vec<_>>()
                    .join(", ");
                OnnxError::RuntimeNotFound {
                    tried: format!("{tried}; {e}"),
                }
            } else {
                OnnxError::RuntimeLoad {
                    path: shown.clone(),
                    message: e.to_string(),
                }
            }
        })?;
        let env = builder
            .with_name("fivezero")
            .with_telemetry(false)
            .build()
            .map_err(|e| OnnxError::Environment(e.to_string()))?;
        let _ = ENV.set(env);
        Ok(())
    }

    fn env() -> Result<&'static Environment, OnnxError> {
        Self::init()?;
        ENV.get()
            .ok_or_else(|| OnnxError::Environment("not initialised".into()))
    }
}

/// A loaded, validated network-contract model: one ORT session. `run` takes `&mut self`: use one
/// model per inference thread and batch positions across searches.
pub struct OnnxModel {
    session: Session,
    meta: ModelMeta,
    id: u64,
    file: String,
    device: Device,
}

impl fmt::Debug for OnnxModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OnnxModel")
            .field("file", &self.file)
            .field("id", &format_args!("{:016x}", self.id))
            .field("device", &self.device)
            .field("meta", &self.meta)
            .finish()
    }
}

pub use super::network::MAX_MODEL_BYTES;
use super::network::ModelFileError;

/// Reads a model file (size-capped); returns its bytes and its display name for messages.
pub(crate) fn read_model_file(path: &Path) -> Result<(Vec<u8>, String), OnnxError> {
    let file = path.display().to_string();
    match super::network::read_model_file(path) {
        Ok(bytes) => Ok((bytes, file)),
        Err(ModelFileError::Io(source)) => Err(OnnxError::Read { file, source }),
        Err(e @ ModelFileError::TooLarge(_)) => Err(OnnxError::NotOnnx {
            file,
            message: e.to_string(),
        }),
    }
}

impl OnnxModel {
    /// Loads and validates the model file at `path`, with `threads_intra` intra-op threads
    /// (0 = ORT's default) on `device`.
    pub fn load(
        path: impl AsRef<Path>,
        threads_intra: usize,
        device: Device,
    ) -> Result<OnnxModel, OnnxError> {
        let (bytes, file) = read_model_file(path.as_ref())?;
        Self::from_bytes_named(&bytes, file, threads_intra, device)
    }

    /// Loads and validates a model held in memory.
    pub fn from_bytes(
        bytes: &[u8],
        threads_intra: usize,
        device: Device,
    ) -> Result<OnnxModel, OnnxError> {
        Self::from_bytes_named(bytes, "<memory>".to_string(), threads_intra, device)
    }

    fn from_bytes_named(
        bytes: &[u8],
        file: String,
        threads: usize,
        device: Device,
    ) -> Result<OnnxModel, OnnxError> {
        let env = OnnxRuntime::env()?;
        let id = super::network::model_id(bytes);
        let setup = |e: &dyn fmt::Display| OnnxError::Session {
            file: file.clone(),
            message: e.to_string(),
        };
        let mut builder = Session::builder(env)
            .map_err(|e| setup(&e))?
            .with_optimization_level(GraphOptimizationLevel::Level3)
            .map_err(|e| setup(&e))?
            .with_inter_threads(1)
            .map_err(|e| setup(&e))?;
        if threads > 0 {
            builder = builder.with_intra_threads(threads).map_err(|e| setup(&e))?;
        }
        if let Device::Cuda(ordinal) = device {
            let ep = ort::ep::CUDA::default()
                .with_device_id(ordinal)
                .build()
                .error_on_failure();
            builder = builder
                .with_execution_providers([ep])
                .map_err(|e| OnnxError::Cuda {
                    file: file.clone(),
                    device: ordinal,
                    message: e.to_string(),
                })?;
        }
        let session = builder.commit_from_memory(bytes).map_err(|e| {
            let message = e.to_string();
            if let (Device::Cuda(ordinal), true) =
                (device, message.to_ascii_lowercase().contains("cuda"))
            {
                OnnxError::Cuda {
                    file: file.clone(),
                    device: ordinal,
                    message,
                }
            } else {
                OnnxError::NotOnnx {
                    file: file.clone(),
                    message,
                }
            }
        })?;
        let meta = validate(&session, &file)?;
        Ok(OnnxModel {
            session,
            meta,
            id,
            file,
            device,
        })
    }

    pub fn meta(&self) -> &ModelMeta {
        &self.meta
    }

    /// Stable identity of the model bytes (FNV-1a 64): cache keys must include it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The file the model came from (`<memory>` for [`OnnxModel::from_bytes`]).
    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn device(&self) -> Device {
        self.device
    }

    /// Runs `n` positions of `h` x `w` (`planes` is `[n, 11, h, w]` row-major). Returns the policy
    /// logits (`n*h*w`, index `y*w + x` per position) and the values (`n`, side to move's view).
    pub fn run(
        &mut self,
        planes: &[f32],
        n: usize,
        h: usize,
        w: usize,
    ) -> Result<(Vec<f32>, Vec<f32>), OnnxError> {
        let c = self.meta.input_planes;
        let input_err = |message: String| OnnxError::Input {
            file: self.file.clone(),
            message,
        };
        if n == 0 {
            return Err(input_err("empty batch".into()));
        }
        if h < self.meta.min_board
            || w < self.meta.min_board
            || h > self.meta.max_board
            || w > self.meta.max_board
        {
            return Err(OnnxError::BoardSize {
                file: self.file.clone(),
                h,
                w,
                min: self.meta.min_board,
                max: self.meta.max_board,
            });
        }
        let expected = n.checked_mul(c * h * w);
        if expected != Some(planes.len()) {
            return Err(input_err(format!(
                "{} values for n={n} x {c} planes x {h}x{w}",
                planes.len()
            )));
        }
        let tensor = TensorRef::from_array_view(([n, c, h, w], planes))
            .map_err(|e| input_err(e.to_string()))?;
        let file = &self.file;
        let run_err = |e: ort::Error| OnnxError::Run {
            file: file.clone(),
            message: e.to_string(),
        };
        let outputs = self
            .session
            .run(ort::inputs![INPUT_NAME => tensor])
            .map_err(run_err)?;
        let extract = |name: &'static str, len: usize| -> Result<Vec<f32>, OnnxError> {
            let value = outputs.get(name).ok_or_else(|| OnnxError::Run {
                file: file.clone(),
                message: format!("no output `{name}`"),
            })?;
            let (_, data) = value.try_extract_tensor::<f32>().map_err(run_err)?;
            if data.len() != len {
                return Err(OnnxError::Run {
                    file: file.clone(),
                    message: format!("output `{name}` has {} values, expected {len}", data.len()),
                });
            }
            if let Some(index) = data.iter().position(|x| !x.is_finite()) {
                return Err(OnnxError::NonFinite {
                    file: file.clone(),
                    output: name,
                    index,
                    value: data[index],
                });
            }
            Ok(data.to_vec())
        };
        let policy = extract(POLICY_NAME, n * h * w)?;
        let value = extract(VALUE_NAME, n)?;
        Ok((policy, value))
    }
}

/// Checks the session against the network contract and reads the metadata.
fn validate(session: &Session, file: &str) -> Result<ModelMeta, OnnxError> {
    let contract = |message: String| OnnxError::Contract {
        file: file.to_string(),
        message,
    };
    let inputs = session.inputs();
    if inputs.len() != 1 || inputs[0].name() != INPUT_NAME {
        let names: Vec<_> = inputs.iter().map(|i| i.name()).collect();
        return Err(contract(format!(
            "inputs are {names:?}, expected exactly [\"{INPUT_NAME}\"]"
        )));
    }
    match inputs[0].dtype() {
        ValueType::Tensor {
            ty: TensorElementType::Float32,
            shape,
            ..
        } => {
            if shape.len() != 4 {
                return Err(contract(format!(
                    "input `{INPUT_NAME}` has rank {}, expected 4 (N, C, H, W)",
                    shape.len()
                )));
            }
            if shape[1] != net::INPUT_PLANES as i64 {
                return Err(contract(format!(
                    "input `{INPUT_NAME}` has {} channels, feature version {FEATURE_VERSION} has {}",
                    shape[1],
                    net::INPUT_PLANES
                )));
            }
        }
        other => {
            return Err(contract(format!(
                "input `{INPUT_NAME}` is {other:?}, expected a float32 tensor"
            )));
        }
    }
    for name in [POLICY_NAME, VALUE_NAME] {
        match session
            .outputs()
            .iter()
            .find(|o| o.name() == name)
            .map(|o| o.dtype())
        {
            Some(ValueType::Tensor {
                ty: TensorElementType::Float32,
                ..
            }) => {}
            Some(other) => {
                return Err(contract(format!(
                    "output `{name}` is {other:?}, expected a float32 tensor"
                )));
            }
            None => return Err(contract(format!("no output named `{name}`"))),
        }
    }
    let md = session
        .metadata()
        .map_err(|e| contract(format!("cannot read metadata: {e}")))?;
    let get = |k: &str| md.custom(k);
    let version = get(net::meta_keys::FEATURE_VERSION);
    if version.as_deref().map(str::trim) != Some(FEATURE_VERSION.to_string().as_str()) {
        return Err(OnnxError::FeatureVersion {
            file: file.to_string(),
            found: version.unwrap_or_else(|| "none".into()),
            expected: FEATURE_VERSION,
        });
    }
    let meta = ModelMeta::from_props(get).map_err(contract)?;
    if meta.input_planes != net::INPUT_PLANES {
        return Err(contract(format!(
            "metadata says {} input planes, expected {}",
            meta.input_planes,
            net::INPUT_PLANES
        )));
    }
    if meta.min_board < 1 || meta.min_board > meta.max_board || meta.max_board > 64 {
        return Err(contract(format!(
            "board range {}..={} is not valid",
            meta.min_board, meta.max_board
        )));
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_can_move_between_threads() {
        // Pools hold models behind mutexes and hand them to search threads.
        fn send<T: Send>() {}
        send::<OnnxModel>();
        send::<OnnxError>();
    }
}
