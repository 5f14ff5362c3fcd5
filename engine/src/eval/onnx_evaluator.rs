//! An `Evaluator` over ONNX models: encodes the feature planes, runs one ORT session per
//! inference thread (a small pool of sessions, each behind its own mutex, so search threads run
//! forward passes at the same time), and turns logits into a masked softmax over legal moves.
//!
//! Depends on `features`, `onnx` and `game`. Search code sees it only as `dyn Evaluator`.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::onnx::{Device, OnnxError, OnnxModel};
use super::{Evaluation, Evaluator, features, masked_softmax, masked_softmax_planes, prepare};
use crate::game::Board;
use crate::net::ModelMeta;

/// How to load a model into the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OnnxEvaluatorConfig {
    /// Sessions in the pool: one per search thread that evaluates at the same time.
    pub sessions: usize,
    /// Intra-op threads per session (0 = ORT's default).
    pub threads_intra: usize,
    pub device: Device,
    /// Batch the search should gather per call.
    pub batch: usize,
}

impl Default for OnnxEvaluatorConfig {
    fn default() -> Self {
        OnnxEvaluatorConfig {
            sessions: 1,
            threads_intra: 1,
            device: Device::Cpu,
            batch: 16,
        }
    }
}

pub struct OnnxEvaluator {
    pool: Vec<Mutex<OnnxModel>>,
    next: AtomicUsize,
    meta: ModelMeta,
    id: u64,
    file: String,
    batch: usize,
    /// Failed forward passes (the search got a uniform policy and value 0 for those positions).
    failures: AtomicUsize,
    last_error: Mutex<Option<String>>,
}

impl std::fmt::Debug for OnnxEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OnnxEvaluator")
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
    pub fn load(
        path: impl AsRef<Path>,
        config: OnnxEvaluatorConfig,
    ) -> Result<OnnxEvaluator, OnnxError> {
        let (bytes, file) = super::onnx::read_model_file(path.as_ref())?;
        Self::from_bytes_named(&bytes, file, config)
    }

    /// As `load`, from bytes in memory.
    ///
    /// # Errors
    /// As `load`.
    pub fn from_bytes(
        bytes: &[u8],
        config: OnnxEvaluatorConfig,
    ) -> Result<OnnxEvaluator, OnnxError> {
        Self::from_bytes_named(bytes, "<memory>".into(), config)
    }

    fn from_bytes_named(
        bytes: &[u8],
        file: String,
        config: OnnxEvaluatorConfig,
    ) -> Result<OnnxEvaluator, OnnxError> {
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
        Ok(OnnxEvaluator {
            pool,
            next: AtomicUsize::new(0),
            meta,
            id,
            file,
            batch: config.batch.max(1),
            failures: AtomicUsize::new(0),
            last_error: Mutex::new(None),
        })
    }

    pub fn meta(&self) -> &ModelMeta {
        &self.meta
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    /// Forward passes that failed so far.
    pub fn failures(&self) -> usize {
        self.failures.load(Ordering::Relaxed)
    }

    /// The last inference error, once (for a `MESSAGE` line).
    pub fn take_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
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

    /// Evaluates boards of one size.
    fn run_group(&self, boards: &[&Board], out: &mut [Evaluation], planes: &mut Vec<f32>) {
        let (h, w) = (boards[0].height(), boards[0].width());
        let per = features::PLANES * h * w;
        planes.clear();
        planes.resize(boards.len() * per, 0.0);
        for (b, chunk) in boards.iter().zip(planes.chunks_mut(per)) {
            features::encode(b, chunk);
        }
        match self.with_session(|m| m.run(planes, boards.len(), h, w)) {
            Ok((logits, values)) => {
                for (i, (_, e)) in boards.iter().zip(out.iter_mut()).enumerate() {
                    // The legal mask comes from the planes just encoded: no second forbidden pass.
                    masked_softmax_planes(
                        &planes[i * per..(i + 1) * per],
                        &logits[i * h * w..(i + 1) * h * w],
                        &mut e.policy,
                    );
                    e.value = values[i].clamp(-1.0, 1.0);
                }
            }
            Err(err) => {
                // The search must go on: a uniform prior and a neutral value, and the error kept
                // for the brain to report.
                self.failures.fetch_add(boards.len(), Ordering::Relaxed);
                *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(err.to_string());
                for (b, e) in boards.iter().zip(out.iter_mut()) {
                    let zero = vec![0.0; h * w];
                    masked_softmax(b, &zero, &mut e.policy);
                    e.value = 0.0;
                }
            }
        }
    }
}

impl Evaluator for OnnxEvaluator {
    fn name(&self) -> String {
        format!(
            "onnx:{}({}x{} step {})",
            self.meta.preset, self.meta.blocks, self.meta.channels, self.meta.step
        )
    }

    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        out.resize_with(boards.len(), Evaluation::default);
        if boards.is_empty() {
            return;
        }
        let mut planes = Vec::new();
        let same = boards
            .iter()
            .all(|b| b.width() == boards[0].width() && b.height() == boards[0].height());
        if same {
            for (b, e) in boards.iter().zip(out.iter_mut()) {
                prepare_one(e, b.width() * b.height());
            }
            self.run_group(boards, out, &mut planes);
            return;
        }
        // Mixed sizes (a trainer batching several board sizes): one forward per size, in order of
        // first appearance so the result does not depend on any map order.
        let mut done = vec![false; boards.len()];
        for i in 0..boards.len() {
            if done[i] {
                continue;
            }
            let dims = (boards[i].width(), boards[i].height());
            let idx: Vec<usize> = (i..boards.len())
                .filter(|&j| (boards[j].width(), boards[j].height()) == dims)
                .collect();
            let group: Vec<&Board> = idx.iter().map(|&j| boards[j]).collect();
            let mut evals = Vec::new();
            prepare(&mut evals, group.len(), dims.0 * dims.1);
            self.run_group(&group, &mut evals, &mut planes);
            for (&j, e) in idx.iter().zip(evals) {
                out[j] = e;
                done[j] = true;
            }
        }
    }

    fn preferred_batch(&self) -> usize {
        self.batch
    }

    fn model_id(&self) -> u64 {
        self.id
    }
}

fn prepare_one(e: &mut Evaluation, cells: usize) {
    if e.policy.len() != cells {
        e.policy.clear();
        e.policy.resize(cells, 0.0);
    }
}
