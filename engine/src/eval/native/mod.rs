//! The engine's own inference for its ResNet form (network contract v1), pure Rust: an fp32
//! network, or the int8 QDQ export computed as ONNX Runtime computes it (`quant`), with integer
//! kernels chosen at run time for the CPU (`simd`: AVX-512 VNNI, AVX2, scalar). It lets the
//! engine play its embedded networks without ONNX Runtime; models of any other form go to ONNX
//! Runtime (the `onnx` feature).
//!
//! - `load` — model bytes -> network (checks the graph is the writer's, node for node).
//! - `image` — the padded NHWC image geometry the convolutions run on.
//! - `simd` — packed int8 weights and the dot-product kernels, `FIVEZERO_SIMD`.
//! - `quant` — the int8 network; `float` — the fp32 network and the value head.
//! - `pattern` — the pattern network (`net::pattern`), a form of its own: int16 table rows
//!   summed into accumulators updated move by move, and its `Evaluator`. Its files are not
//!   `NativeNet`s (which refuses them as `Unsupported`); `AnyNative` reads either form.
//!
//! Depends on `net` (the contract, the writer for the structure check, the protobuf types) and
//! the network seam (`network::Backend`); names no inference runtime.

mod float;
mod image;
mod load;
pub mod pattern;
mod quant;
pub mod simd;

use std::path::Path;

use image::Geometry;
use load::Form;
pub use simd::Simd;

use super::network::{Backend, BackendError, NetEvaluator, NetOutput};
use crate::net::{FEATURE_VERSION, ModelMeta};

/// Why the native runtime does not run a model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read model: {0}")]
    Read(String),
    #[error("not a loadable ONNX model: {0}")]
    NotOnnx(String),
    #[error("not a fivezero network: {0}")]
    Contract(String),
    #[error(
        "model has feature version {0}, this engine reads version {FEATURE_VERSION} only (re-export the model for this engine)"
    )]
    FeatureVersion(u32),
    /// A valid model of another form than the engine's own ResNet (ONNX Runtime may run it).
    #[error("not the engine's own network form (native inference): {0}")]
    Unsupported(String),
}

/// A network loaded for the native runtime.
#[derive(Clone, Debug)]
pub struct NativeNet {
    form: Form,
    meta: ModelMeta,
    id: u64,
    simd: Simd,
}

impl NativeNet {
    /// Loads a model from its bytes, with the kernels `Simd::chosen` picks.
    ///
    /// # Errors
    /// Bytes that are not a fivezero model of the engine's ResNet form.
    pub fn from_bytes(bytes: &[u8]) -> Result<NativeNet, LoadError> {
        let (form, meta) = load::parse(bytes)?;
        Ok(NativeNet {
            form,
            meta,
            id: super::network::model_id(bytes),
            simd: Simd::chosen(),
        })
    }

    /// Loads a model file (at most `network::MAX_MODEL_BYTES`).
    ///
    /// # Errors
    /// As `from_bytes`, or the file cannot be read.
    pub fn load(path: &Path) -> Result<NativeNet, LoadError> {
        let bytes = super::network::read_model_file(path)
            .map_err(|e| LoadError::Read(format!("{}: {e}", path.display())))?;
        NativeNet::from_bytes(&bytes)
    }

    /// The same network on other kernels (tests, measurements).
    ///
    /// # Panics
    /// If this CPU lacks `simd`.
    pub fn with_simd(mut self, simd: Simd) -> NativeNet {
        assert!(simd.supported(), "this CPU lacks {simd}");
        self.simd = simd;
        self
    }

    pub fn simd(&self) -> Simd {
        self.simd
    }

    pub fn meta(&self) -> &ModelMeta {
        &self.meta
    }

    /// FNV-1a of the model bytes, as ONNX Runtime's evaluator reports.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// "cpu32(4x32 step 7) avx512vnni" (an fp32 network says `fp32`).
    pub fn describe(&self) -> String {
        let m = &self.meta;
        let kernels = match self.form {
            Form::Quant(_) => self.simd.to_string(),
            Form::Float(_) => "fp32".into(),
        };
        format!(
            "{}({}x{} step {}) {kernels}",
            m.preset, m.blocks, m.channels, m.step
        )
    }

    /// Runs `n` positions of `h` x `w` (`planes`: `[n, 11, h, w]`). Returns the policy logits
    /// (`n*h*w`) and the values (`n`).
    ///
    /// # Errors
    /// A board outside the model's range, input of the wrong length, a non-finite output.
    pub fn run(
        &self,
        planes: &[f32],
        n: usize,
        h: usize,
        w: usize,
    ) -> Result<(Vec<f32>, Vec<f32>), String> {
        let m = &self.meta;
        if h < m.min_board || w < m.min_board || h > m.max_board || w > m.max_board {
            return Err(format!(
                "board {h}x{w} is outside the model's range {}..={}",
                m.min_board, m.max_board
            ));
        }
        let per = m.input_planes * h * w;
        if n == 0 || n.checked_mul(per) != Some(planes.len()) {
            return Err(format!(
                "{} values for n={n} x {} planes x {h}x{w}",
                planes.len(),
                m.input_planes
            ));
        }
        let geo = Geometry::new(h, w);
        let mut logits = vec![0f32; n * h * w];
        let mut values = Vec::with_capacity(n);
        for (x, l) in planes.chunks_exact(per).zip(logits.chunks_exact_mut(h * w)) {
            values.push(match &self.form {
                Form::Quant(q) => q.forward_one(self.simd, x, &geo, l),
                Form::Float(f) => f.forward_one(x, &geo, l),
            });
        }
        if let Some(i) = logits.iter().chain(&values).position(|v| !v.is_finite()) {
            return Err(format!("a non-finite output (at {i})"));
        }
        Ok((logits, values))
    }
}

/// A model file's network in whichever of its forms the native runtime runs.
#[derive(Clone, Debug)]
pub enum AnyNative {
    ResNet(NativeNet),
    Pattern(Box<pattern::PatternNet>),
}

impl AnyNative {
    /// The pattern network when the file says it is one, else the ResNet.
    ///
    /// # Errors
    /// `Unsupported` for a model of neither form (ONNX Runtime may run it); otherwise as
    /// `NativeNet::from_bytes` and `PatternNet::from_bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<AnyNative, LoadError> {
        match pattern::PatternNet::from_bytes(bytes) {
            Ok(net) => Ok(AnyNative::Pattern(Box::new(net))),
            Err(LoadError::Unsupported(_)) => NativeNet::from_bytes(bytes).map(AnyNative::ResNet),
            Err(e) => Err(e),
        }
    }

    pub fn meta(&self) -> &ModelMeta {
        match self {
            AnyNative::ResNet(net) => net.meta(),
            AnyNative::Pattern(net) => net.meta(),
        }
    }
}

/// The native network as a backend of the network seam.
#[derive(Debug)]
pub struct NativeBackend {
    net: NativeNet,
    batch: usize,
    threads: usize,
}

impl Backend for NativeBackend {
    fn name(&self) -> String {
        format!("native:{}", self.net.describe())
    }

    fn forward(
        &self,
        planes: &[f32],
        n: usize,
        h: usize,
        w: usize,
    ) -> Result<NetOutput, BackendError> {
        let (logits, values) = self.net.run(planes, n, h, w)?;
        Ok(NetOutput { logits, values })
    }

    fn preferred_batch(&self) -> usize {
        self.batch
    }

    /// Every search thread may run its own forward: nothing is shared but the weights.
    fn concurrent_forwards(&self) -> usize {
        self.threads
    }

    fn model_id(&self) -> u64 {
        self.net.id
    }

    fn refuses(&self, rule: crate::game::Rule, w: usize, h: usize) -> Option<String> {
        self.net.meta.refuses(rule, w, h)
    }
}

/// The evaluator over a native network.
pub type NativeEvaluator = NetEvaluator<NativeBackend>;

impl NativeEvaluator {
    /// `net` for `threads` search threads gathering `batch` positions a call, remembering
    /// `cache_entries` positions (0: none).
    pub fn native(net: NativeNet, threads: usize, batch: usize, cache_entries: usize) -> Self {
        NetEvaluator::new(NativeBackend {
            net,
            batch: batch.max(1),
            threads: threads.max(1),
        })
        .with_cache(cache_entries)
    }

    pub fn net(&self) -> &NativeNet {
        &self.backend().net
    }
}
