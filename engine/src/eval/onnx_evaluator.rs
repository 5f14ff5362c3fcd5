//! The ONNX Runtime backend: a small pool of ORT sessions, each behind its own mutex, so search
//! threads run forward passes at the same time. `OnnxEvaluator` is the network seam's
//! `NetEvaluator` over it (encode, forward, legal mask live there).
//!
//! Depends on `onnx`, `network` and `net`. Search code sees it only as `dyn Evaluator`.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::network::{Backend, BackendError, LoadConfig, NetEvaluator, NetOutput};
use super::onnx::{OnnxError, OnnxModel};
use crate::net::ModelMeta;

/// The evaluator the engine plays with when a model is loaded.
pub type OnnxEvaluator = NetEvaluator<OnnxSessions>;

/// One model loaded into `sessions` ORT sessions.
pub struct OnnxSessions {
    pool: Vec<Mutex<OnnxModel>>,
    next: AtomicUsize,
    meta: ModelMeta,
    id: u64,
    file: String,
    batch: usize,
}

impl std::fmt::Debug for OnnxSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnnxSessions")
            .field("file", &self.file)
            .field("sessions", &self.pool.len())
            .field("meta", &self.meta)
            .finish()
    }
}

impl OnnxEvaluator {
    /// Loads `path` once per session and checks it against the network contract.
    ///
    /// # Errors
    /// Whatever `OnnxModel::load` refuses (missing runtime, unreadable, not a fivezero model,
    /// wrong feature version, device unavailable).
    pub fn load(path: impl AsRef<Path>, config: LoadConfig) -> Result<OnnxEvaluator, OnnxError> {
        let (bytes, file) = super::onnx::read_model_file(path.as_ref())?;
        Ok(
            NetEvaluator::new(OnnxSessions::from_bytes_named(&bytes, file, config)?)
                .with_cache(config.cache_entries),
        )
    }

    /// As `load`, from bytes in memory.
    ///
    /// # Errors
    /// As `load`.
    pub fn from_bytes(bytes: &[u8], config: LoadConfig) -> Result<OnnxEvaluator, OnnxError> {
        Ok(NetEvaluator::new(OnnxSessions::from_bytes_named(
            bytes,
            "<memory>".into(),
            config,
        )?)
        .with_cache(config.cache_entries))
    }

    pub fn meta(&self) -> &ModelMeta {
        &self.backend().meta
    }

    pub fn file(&self) -> &str {
        &self.backend().file
    }
}

impl OnnxSessions {
    fn from_bytes_named(
        bytes: &[u8],
        file: String,
        config: LoadConfig,
    ) -> Result<OnnxSessions, OnnxError> {
        let mut pool = Vec::new();
        for _ in 0..config.sessions.max(1) {
            pool.push(Mutex::new(OnnxModel::from_bytes(
                bytes,
                config.threads_intra,
                config.device,
            )?));
        }
        let first = pool[0].lock().unwrap_or_else(|e| e.into_inner());
        let (meta, id) = (first.meta().clone(), first.id());
        drop(first);
        Ok(OnnxSessions {
            pool,
            next: AtomicUsize::new(0),
            meta,
            id,
            file,
            batch: config.batch.max(1),
        })
    }

    /// A free session, or (all busy) the next one in turn to wait for.
    fn with_session<R>(&self, f: impl FnOnce(&mut OnnxModel) -> R) -> R {
        for m in &self.pool {
            if let Ok(mut g) = m.try_lock() {
                return f(&mut g);
            }
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.pool.len();
        let mut g = self.pool[i].lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g)
    }
}

impl Backend for OnnxSessions {
    fn name(&self) -> String {
        format!(
            "onnx:{}({}x{} step {})",
            self.meta.preset, self.meta.blocks, self.meta.channels, self.meta.step
        )
    }

    fn forward(
        &self,
        planes: &[f32],
        n: usize,
        h: usize,
        w: usize,
    ) -> Result<NetOutput, BackendError> {
        let (logits, values) = self.with_session(|m| m.run(planes, n, h, w))?;
        Ok(NetOutput { logits, values })
    }

    fn preferred_batch(&self) -> usize {
        self.batch
    }

    fn concurrent_forwards(&self) -> usize {
        self.pool.len()
    }

    fn model_id(&self) -> u64 {
        self.id
    }

    fn refuses(&self, rule: crate::game::Rule, w: usize, h: usize) -> Option<String> {
        self.meta.refuses(rule, w, h)
    }
}
