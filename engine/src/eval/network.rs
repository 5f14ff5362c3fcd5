//! The network seam: a `Backend` turns encoded input planes into policy logits and values (ONNX
//! Runtime sessions, the trainer's libtorch network, the uniform `UniformBackend`), and
//! `NetEvaluator`, the one `Evaluator` over any backend, does encode → forward → masked softmax,
//! answering repeated positions from an optional `cache::EvalCache` (fixed weights only).
//!
//! `NetEvaluator` also exposes those three steps (`encode`, `forward`, `finish`) so a caller
//! batching many searches (trainer self-play) can encode and finish on its own threads and run
//! one forward for all of them. Boards of several sizes in one `evaluate` call are run one size
//! at a time.
//!
//! Depends on `features`, `masked_softmax_planes` and `game`; names no inference runtime.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::cache::{self, EvalCache};
use super::{Evaluation, Evaluator, features, masked_softmax_planes};
use crate::game::Board;

/// Why a forward pass failed (the backend's own error, boxed).
pub type BackendError = Box<dyn std::error::Error + Send + Sync>;

/// What a network says about `n` positions of one size.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetOutput {
    /// Policy logits, `[n, h*w]` row-major (index `y*w + x` per position).
    pub logits: Vec<f32>,
    /// Values for the side to move, `[n]`.
    pub values: Vec<f32>,
}

impl NetOutput {
    /// Flat logits and value 0 for `n` positions of `cells` points: uniform priors once masked.
    pub fn zeros(n: usize, cells: usize) -> NetOutput {
        NetOutput {
            logits: vec![0.0; n * cells],
            values: vec![0.0; n],
        }
    }
}

/// A network: encoded planes in, logits and values out. Must be callable from several search
/// threads.
pub trait Backend: Send + Sync {
    /// A short name for logs and `MESSAGE` lines.
    fn name(&self) -> String;

    /// Identifies the weights (see `Evaluator::model_id`).
    fn model_id(&self) -> u64 {
        0
    }

    /// The batch size this backend is most efficient at.
    fn preferred_batch(&self) -> usize {
        1
    }

    /// How many forwards it runs at the same time (its sessions): `NetEvaluator::forward_split`
    /// cuts one large batch into this many parts.
    fn concurrent_forwards(&self) -> usize {
        1
    }

    /// Why the network should not play a `rule` game on a `w` x `h` board (see
    /// `Evaluator::refuses`).
    fn refuses(&self, _rule: crate::game::Rule, _w: usize, _h: usize) -> Option<String> {
        None
    }

    /// Runs `n` positions of `h` x `w`; `planes` is `[n, features::PLANES, h, w]` row-major.
    ///
    /// # Errors
    /// Whatever the backend refuses (bad input, runtime failure, non-finite outputs).
    fn forward(
        &self,
        planes: &[f32],
        n: usize,
        h: usize,
        w: usize,
    ) -> Result<NetOutput, BackendError>;
}

/// How the engine loads a network, whichever runtime runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadConfig {
    /// Sessions in the pool (ONNX Runtime), forwards at the same time (native): one per search
    /// thread that evaluates at the same time.
    pub sessions: usize,
    /// Intra-op threads per ONNX Runtime session (0 = its default).
    pub threads_intra: usize,
    pub device: crate::device::Device,
    /// Batch the search should gather per call.
    pub batch: usize,
    /// Positions whose answers are remembered (`EvalCache`; 0 = none).
    pub cache_entries: usize,
}

impl Default for LoadConfig {
    fn default() -> Self {
        LoadConfig {
            sessions: 1,
            threads_intra: 1,
            device: crate::device::Device::Cpu,
            batch: 16,
            cache_entries: 0,
        }
    }
}

/// Model files larger than this are refused before reading (the `large` preset is ~19 MB): a
/// wrong path pointing at a huge file must not exhaust the engine's memory.
pub const MAX_MODEL_BYTES: u64 = 512 << 20;

/// Why a model file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0} bytes, more than the {MAX_MODEL_BYTES}-byte limit for a model")]
    TooLarge(u64),
}

/// Reads a model file, refusing one over `MAX_MODEL_BYTES` before reading it; each runtime names
/// the file in its own error.
///
/// # Errors
/// The file cannot be read, or is too large.
pub fn read_model_file(path: &std::path::Path) -> Result<Vec<u8>, ModelFileError> {
    let len = std::fs::metadata(path)?.len();
    if len > MAX_MODEL_BYTES {
        return Err(ModelFileError::TooLarge(len));
    }
    Ok(std::fs::read(path)?)
}

/// FNV-1a over a model file's bytes: a cheap, stable identity of a model for evaluation caches
/// (whichever runtime runs it).
pub fn model_id(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The null network: flat logits, value 0 (a baseline, and a way to time the tree alone).
#[derive(Debug, Default, Clone, Copy)]
pub struct UniformBackend;

impl Backend for UniformBackend {
    fn name(&self) -> String {
        "uniform".into()
    }
    fn forward(
        &self,
        _planes: &[f32],
        n: usize,
        h: usize,
        w: usize,
    ) -> Result<NetOutput, BackendError> {
        Ok(NetOutput::zeros(n, h * w))
    }
}

/// The `Evaluator` over a network backend. A failed forward does not stop a search: its
/// positions get uniform priors and value 0, are counted in `failures`, and the error is kept
/// for `take_error` (the model loader refuses a model whose probe forward failed).
pub struct NetEvaluator<B: ?Sized> {
    failures: AtomicUsize,
    last_error: Mutex<Option<String>>,
    /// Answers for recent positions (`with_cache`); none by default, since a backend whose
    /// weights change in place (the trainer's) must not be cached.
    cache: Option<Arc<EvalCache>>,
    // Last, so `&NetEvaluator<SomeBackend>` coerces to `&NetEvaluator<dyn Backend>`.
    backend: B,
}

impl<B: Backend + ?Sized> std::fmt::Debug for NetEvaluator<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetEvaluator")
            .field("backend", &self.backend.name())
            .field("failures", &self.failures())
            .finish()
    }
}

impl<B: Backend> NetEvaluator<B> {
    pub fn new(backend: B) -> NetEvaluator<B> {
        NetEvaluator {
            failures: AtomicUsize::new(0),
            last_error: Mutex::new(None),
            cache: None,
            backend,
        }
    }

    /// The same evaluator, remembering the last `entries` or so positions (0: none). Only for
    /// fixed weights.
    pub fn with_cache(self, entries: usize) -> NetEvaluator<B> {
        self.with_shared_cache((entries > 0).then(|| Arc::new(EvalCache::new(entries))))
    }

    /// The same evaluator answering from `cache` (None: no cache), which other evaluators may
    /// share: only where no position's key can reach two of them with different weights (the
    /// embedded defaults: a key holds the position's rule, and the rule picks the network).
    pub fn with_shared_cache(mut self, cache: Option<Arc<EvalCache>>) -> NetEvaluator<B> {
        self.cache = cache;
        self
    }
}

impl<B: Backend + ?Sized> NetEvaluator<B> {
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// Positions whose forward pass failed so far (they got uniform priors and value 0).
    pub fn failures(&self) -> usize {
        self.failures.load(Ordering::Relaxed)
    }

    /// The last forward error, once (for a `MESSAGE` line).
    pub fn take_error(&self) -> Option<String> {
        self.last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Step 1: appends the planes of `boards` to `planes`.
    ///
    /// # Panics
    /// If the boards are not all of one size (a caller bug: `evaluate` groups them).
    pub fn encode(&self, boards: &[&Board], planes: &mut Vec<f32>) {
        let Some(first) = boards.first() else {
            return;
        };
        let per = features::input_len(first);
        let start = planes.len();
        planes.resize(start + boards.len() * per, 0.0);
        for (b, chunk) in boards.iter().zip(planes[start..].chunks_mut(per)) {
            features::encode(b, chunk);
        }
    }

    /// Step 2: the backend's forward pass on `n` encoded positions of `h` x `w`, its output
    /// checked for shape so a misbehaving backend is an error here, not a panic in `finish`.
    ///
    /// # Errors
    /// The backend's error, or an output of the wrong length.
    pub fn forward(
        &self,
        planes: &[f32],
        n: usize,
        h: usize,
        w: usize,
    ) -> Result<NetOutput, BackendError> {
        let output = self.backend.forward(planes, n, h, w)?;
        if output.logits.len() != n * h * w || output.values.len() != n {
            return Err(format!(
                "{}: {} logits and {} values for {n} positions of {h}x{w}",
                self.backend.name(),
                output.logits.len(),
                output.values.len()
            )
            .into());
        }
        Ok(output)
    }

    /// `forward` for a large batch (trainer self-play): cut into one part per concurrent forward
    /// of the backend, the parts run at the same time on their own threads, the outputs joined
    /// in order. One part (the backend runs one forward at a time, or the batch is small) is
    /// `forward` itself.
    ///
    /// # Errors
    /// As `forward`, the first part's error first.
    pub fn forward_split(
        &self,
        planes: &[f32],
        n: usize,
        h: usize,
        w: usize,
    ) -> Result<NetOutput, BackendError> {
        // Parts of at least 8 positions: smaller ones cost more in threads than they save.
        let parts = self.backend.concurrent_forwards().min(n / 8).max(1);
        if parts == 1 {
            return self.forward(planes, n, h, w);
        }
        let per = planes.len() / n.max(1);
        let sizes: Vec<usize> = (0..parts)
            .map(|i| n / parts + usize::from(i < n % parts))
            .collect();
        let outputs: Vec<Result<NetOutput, BackendError>> = std::thread::scope(|scope| {
            let mut first = 0;
            let handles: Vec<_> = sizes
                .iter()
                .map(|&k| {
                    let part = &planes[first * per..(first + k) * per];
                    first += k;
                    scope.spawn(move || self.forward(part, k, h, w))
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .unwrap_or_else(|_| Err("a forward thread panicked".into()))
                })
                .collect()
        });
        let mut joined = NetOutput {
            logits: Vec::with_capacity(n * h * w),
            values: Vec::with_capacity(n),
        };
        for output in outputs {
            let output = output?;
            joined.logits.extend_from_slice(&output.logits);
            joined.values.extend_from_slice(&output.values);
        }
        Ok(joined)
    }

    /// Step 3: the evaluations of the positions whose `planes` (as `encode` wrote them) are
    /// entries `first..` of `output`: the softmax of their logits over the legal points read
    /// from the planes, and their values clamped to [-1, 1]. `out` has one entry per position.
    ///
    /// # Panics
    /// If `output` holds fewer positions than `first + out.len()` (a caller bug).
    pub fn finish(&self, planes: &[f32], output: &NetOutput, first: usize, out: &mut [Evaluation]) {
        if out.is_empty() {
            return;
        }
        let per = planes.len() / out.len();
        let cells = per / features::PLANES;
        for (k, (e, position)) in out.iter_mut().zip(planes.chunks(per)).enumerate() {
            let i = first + k;
            e.policy.resize(cells, 0.0);
            masked_softmax_planes(
                position,
                &output.logits[i * cells..(i + 1) * cells],
                &mut e.policy,
            );
            e.value = output.values[i].clamp(-1.0, 1.0);
        }
    }

    /// `Evaluator::evaluate` without the fallback: the first failed forward is returned and
    /// nothing is counted (for callers that must not go on with made-up priors).
    ///
    /// # Errors
    /// The backend's error.
    pub fn try_evaluate(
        &self,
        boards: &[&Board],
        out: &mut Vec<Evaluation>,
    ) -> Result<(), BackendError> {
        self.by_board_size(boards, out, |planes, n, h, w| self.forward(planes, n, h, w))
    }

    /// Runs the boards one size at a time (in order of first appearance, so the result does not
    /// depend on any map order): encode, `forward`, finish.
    fn by_board_size<E>(
        &self,
        boards: &[&Board],
        out: &mut Vec<Evaluation>,
        mut forward: impl FnMut(&[f32], usize, usize, usize) -> Result<NetOutput, E>,
    ) -> Result<(), E> {
        out.resize_with(boards.len(), Evaluation::default);
        let Some(first) = boards.first() else {
            return Ok(());
        };
        let dims = |b: &Board| (b.height(), b.width());
        let mut planes = Vec::new();
        if boards.iter().all(|b| dims(b) == dims(first)) {
            let (h, w) = dims(first);
            self.encode(boards, &mut planes);
            let output = forward(&planes, boards.len(), h, w)?;
            self.finish(&planes, &output, 0, out);
            return Ok(());
        }
        let mut done = vec![false; boards.len()];
        for i in 0..boards.len() {
            if done[i] {
                continue;
            }
            let (h, w) = dims(boards[i]);
            let idx: Vec<usize> = (i..boards.len())
                .filter(|&j| dims(boards[j]) == (h, w))
                .collect();
            let group: Vec<&Board> = idx.iter().map(|&j| boards[j]).collect();
            planes.clear();
            self.encode(&group, &mut planes);
            let output = forward(&planes, group.len(), h, w)?;
            let mut evals = vec![Evaluation::default(); group.len()];
            self.finish(&planes, &output, 0, &mut evals);
            for (&j, e) in idx.iter().zip(evals) {
                out[j] = e;
                done[j] = true;
            }
        }
        Ok(())
    }
}

impl<B: Backend + ?Sized> Evaluator for NetEvaluator<B> {
    fn name(&self) -> String {
        self.backend.name()
    }

    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        let Some(cache) = &self.cache else {
            return self.evaluate_uncached(boards, out);
        };
        out.resize_with(boards.len(), Evaluation::default);
        let keys: Vec<u64> = boards.iter().map(|b| cache::key_of(b)).collect();
        let missing = cache.lookup(&keys, out);
        if missing.is_empty() {
            return;
        }
        let boards: Vec<&Board> = missing.iter().map(|&i| boards[i]).collect();
        let keys: Vec<u64> = missing.iter().map(|&i| keys[i]).collect();
        let failures = self.failures();
        let mut evals = Vec::new();
        self.evaluate_uncached(&boards, &mut evals);
        // A failed forward's stand-in (uniform, value 0) is not the network's answer.
        if self.failures() == failures {
            cache.store(&keys, &evals);
        }
        for (&i, e) in missing.iter().zip(evals) {
            out[i] = e;
        }
    }

    fn preferred_batch(&self) -> usize {
        self.backend.preferred_batch()
    }

    fn model_id(&self) -> u64 {
        self.backend.model_id()
    }

    fn refuses(&self, board: &Board) -> Option<String> {
        self.backend
            .refuses(board.rule(), board.width(), board.height())
    }

    fn cache_stats(&self) -> Option<(u64, u64)> {
        self.cache.as_ref().map(|c| c.stats())
    }
}

impl<B: Backend + ?Sized> NetEvaluator<B> {
    /// `Evaluator::evaluate` without the cache.
    fn evaluate_uncached(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        let Ok(()) = self.by_board_size(boards, out, |planes, n, h, w| {
            Ok::<_, std::convert::Infallible>(self.forward(planes, n, h, w).unwrap_or_else(|err| {
                // The search must go on: uniform priors and a neutral value, the error kept.
                self.failures.fetch_add(n, Ordering::Relaxed);
                *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(err.to_string());
                NetOutput::zeros(n, h * w)
            }))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::UniformEvaluator;
    use crate::game::{Pos, Rule};

    /// Fails every forward: the fallback must still give a legal, uniform policy.
    struct Broken;

    impl Backend for Broken {
        fn name(&self) -> String {
            "broken".into()
        }
        fn forward(
            &self,
            _: &[f32],
            _: usize,
            _: usize,
            _: usize,
        ) -> Result<NetOutput, BackendError> {
            Err("no network here".into())
        }
    }

    fn boards() -> Vec<Board> {
        let mut out = Vec::new();
        for (w, h, rule) in [
            (9, 9, Rule::Freestyle),
            (15, 15, Rule::Renju),
            (9, 9, Rule::Caro),
            (7, 11, Rule::Renju),
        ] {
            let mut b = Board::new(w, h, rule).unwrap();
            for i in 0..9 {
                let legal = b.legal_moves();
                b.play(legal[(i * 5 + 2) % legal.len()]).unwrap();
            }
            out.push(b);
        }
        out
    }

    #[test]
    fn model_id_is_fnv1a() {
        assert_eq!(model_id(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(model_id(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn uniform_backend_agrees_with_the_uniform_evaluator_over_mixed_sizes() {
        let boards = boards();
        let refs: Vec<&Board> = boards.iter().collect();
        let (mut want, mut got) = (Vec::new(), Vec::new());
        UniformEvaluator.evaluate(&refs, &mut want);
        NetEvaluator::new(UniformBackend).evaluate(&refs, &mut got);
        assert_eq!(want.len(), got.len());
        for (a, b) in want.iter().zip(&got) {
            assert_eq!(a.value, b.value);
            for (x, y) in a.policy.iter().zip(&b.policy) {
                assert!((x - y).abs() < 1e-6, "{x} vs {y}");
            }
        }
    }

    #[test]
    fn a_failed_forward_gives_uniform_priors_and_is_counted() {
        let boards = boards();
        let refs: Vec<&Board> = boards.iter().collect();
        let ev = NetEvaluator::new(Broken);
        let mut out = Vec::new();
        ev.evaluate(&refs, &mut out);
        assert_eq!(ev.failures(), boards.len());
        assert_eq!(ev.take_error().as_deref(), Some("no network here"));
        assert_eq!(ev.take_error(), None, "the error is reported once");
        for (b, e) in boards.iter().zip(&out) {
            let legal = b.legal_moves();
            assert_eq!(e.value, 0.0);
            for p in b.points() {
                let want = if legal.contains(&p) {
                    1.0 / legal.len() as f32
                } else {
                    0.0
                };
                assert!((e.policy[b.dense_index(p)] - want).abs() < 1e-6, "{p:?}");
            }
        }
        assert!(ev.try_evaluate(&refs, &mut out).is_err());
        assert_eq!(ev.failures(), boards.len(), "try_evaluate counts nothing");
    }

    #[test]
    fn an_output_of_the_wrong_shape_is_a_failure_not_a_panic() {
        /// One value short.
        struct Short;
        impl Backend for Short {
            fn name(&self) -> String {
                "short".into()
            }
            fn forward(
                &self,
                _: &[f32],
                n: usize,
                h: usize,
                w: usize,
            ) -> Result<NetOutput, BackendError> {
                Ok(NetOutput {
                    logits: vec![0.0; n * h * w],
                    values: vec![0.0; n - 1],
                })
            }
        }
        let boards = boards();
        let refs: Vec<&Board> = boards.iter().collect();
        let ev = NetEvaluator::new(Short);
        let mut out = Vec::new();
        ev.evaluate(&refs, &mut out);
        assert_eq!(ev.failures(), boards.len());
        assert!(
            ev.take_error()
                .is_some_and(|e| e.contains("0 values for 1 positions"))
        );
        assert_eq!(out.len(), boards.len());
    }

    #[test]
    fn steps_split_over_callers_match_one_evaluate() {
        /// Logits that differ per point and per position, so offsets matter.
        struct Ramp;
        impl Backend for Ramp {
            fn name(&self) -> String {
                "ramp".into()
            }
            fn forward(
                &self,
                planes: &[f32],
                n: usize,
                h: usize,
                w: usize,
            ) -> Result<NetOutput, BackendError> {
                let cells = h * w;
                let per = features::PLANES * cells;
                let logits = (0..n * cells)
                    .map(|i| ((i * 7) % 13) as f32 * 0.2 + planes[(i / cells) * per + i % cells])
                    .collect();
                Ok(NetOutput {
                    logits,
                    values: (0..n).map(|k| k as f32 * 0.7 - 1.5).collect(),
                })
            }
        }
        let ev = NetEvaluator::new(Ramp);
        let mut boards = Vec::new();
        let mut b = Board::new(9, 9, Rule::Freestyle).unwrap();
        for i in 0..6 {
            b.play(Pos::new(i, (i * 3) % 9)).unwrap();
            boards.push(b.clone());
        }
        let refs: Vec<&Board> = boards.iter().collect();
        let mut whole = Vec::new();
        ev.evaluate(&refs, &mut whole);
        // Two callers: boards 0..2 and 2..6 encoded apart, one forward, finished apart.
        let (mut a, mut c) = (Vec::new(), Vec::new());
        ev.encode(&refs[..2], &mut a);
        ev.encode(&refs[2..], &mut c);
        let joined: Vec<f32> = a.iter().chain(&c).copied().collect();
        let output = ev.forward(&joined, 6, 9, 9).unwrap();
        let mut parts = vec![Evaluation::default(); 6];
        let (first, second) = parts.split_at_mut(2);
        ev.finish(&a, &output, 0, first);
        ev.finish(&c, &output, 2, second);
        assert_eq!(parts, whole);
        assert!(whole.iter().any(|e| e.value == 1.0), "values are clamped");
    }

    #[test]
    fn a_split_forward_runs_parts_at_once_and_joins_them_in_order() {
        /// Three forwards at a time; answers that depend on each position's planes (so a part
        /// joined out of order shows); the sizes of the parts it ran; a part of `fail` fails.
        struct Sessions {
            sizes: Mutex<Vec<usize>>,
            fail: usize,
        }
        impl Backend for Sessions {
            fn name(&self) -> String {
                "sessions".into()
            }
            fn concurrent_forwards(&self) -> usize {
                3
            }
            fn forward(
                &self,
                planes: &[f32],
                n: usize,
                h: usize,
                w: usize,
            ) -> Result<NetOutput, BackendError> {
                self.sizes.lock().unwrap().push(n);
                if n == self.fail {
                    return Err("this part fails".into());
                }
                let per = planes.len() / n;
                let logits = (0..n * h * w)
                    .map(|i| planes[(i / (h * w)) * per + i % (h * w)])
                    .collect();
                Ok(NetOutput {
                    logits,
                    values: (0..n).map(|k| planes[k * per + 1]).collect(),
                })
            }
        }
        let (h, w) = (5, 5);
        let per = features::PLANES * h * w;
        let planes: Vec<f32> = (0..50 * per)
            .map(|i| (i % 97) as f32 + (i / per) as f32)
            .collect();
        let ev = NetEvaluator::new(Sessions {
            sizes: Mutex::new(Vec::new()),
            fail: 0,
        });
        let split = ev.forward_split(&planes, 50, h, w).unwrap();
        assert_eq!(split, ev.forward(&planes, 50, h, w).unwrap());
        let mut sizes = ev.backend().sizes.lock().unwrap().clone();
        sizes.sort();
        assert_eq!(
            sizes,
            [16, 17, 17, 50],
            "three parts at once, then the whole batch"
        );
        // Too few positions for parts of 8: one forward.
        ev.backend().sizes.lock().unwrap().clear();
        ev.forward_split(&planes[..10 * per], 10, h, w).unwrap();
        assert_eq!(*ev.backend().sizes.lock().unwrap(), [10]);
        // A failing part fails the whole forward.
        let failing = NetEvaluator::new(Sessions {
            sizes: Mutex::new(Vec::new()),
            fail: 16,
        });
        let e = failing.forward_split(&planes, 50, h, w).unwrap_err();
        assert!(e.to_string().contains("this part fails"), "{e}");
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;
    use crate::game::{Pos, Rule};
    use std::sync::atomic::AtomicUsize;

    /// A network whose answer depends on every input plane (so a wrong cache hit shows) and
    /// that counts the positions it ran; it fails while `fail` is set.
    #[derive(Default)]
    struct Counted {
        ran: AtomicUsize,
        fail: std::sync::atomic::AtomicBool,
    }

    impl Backend for Counted {
        fn name(&self) -> String {
            "counted".into()
        }
        fn forward(
            &self,
            planes: &[f32],
            n: usize,
            h: usize,
            w: usize,
        ) -> Result<NetOutput, BackendError> {
            if self.fail.load(Ordering::Relaxed) {
                return Err("down".into());
            }
            self.ran.fetch_add(n, Ordering::Relaxed);
            let cells = h * w;
            let per = features::PLANES * cells;
            let mut out = NetOutput::zeros(n, cells);
            for k in 0..n {
                let p = &planes[k * per..(k + 1) * per];
                for (i, l) in out.logits[k * cells..(k + 1) * cells]
                    .iter_mut()
                    .enumerate()
                {
                    *l = (0..features::PLANES)
                        .map(|c| p[c * cells + i] * (c as f32 + 1.0))
                        .sum();
                }
                out.values[k] = p
                    .iter()
                    .enumerate()
                    .map(|(i, v)| v * (i % 17) as f32)
                    .sum::<f32>()
                    / 1e4;
            }
            Ok(out)
        }
    }

    fn play(moves: &[(usize, usize)], rule: Rule, size: usize) -> Board {
        let mut b = Board::new(size, size, rule).unwrap();
        for &(x, y) in moves {
            b.play(Pos::new(x, y)).unwrap();
        }
        b
    }

    #[test]
    fn the_key_covers_everything_the_planes_are_made_of() {
        let line = [(7, 7), (8, 8), (6, 6), (9, 9), (5, 5)];
        let a = play(&line, Rule::Freestyle, 15);
        assert_eq!(
            cache::key_of(&a),
            cache::key_of(&play(&line, Rule::Freestyle, 15))
        );
        // The same stones, other last moves: other planes 3 and 4.
        let swapped = [(5, 5), (8, 8), (6, 6), (9, 9), (7, 7)];
        assert_eq!(a.hash(), play(&swapped, Rule::Freestyle, 15).hash());
        assert_ne!(
            cache::key_of(&a),
            cache::key_of(&play(&swapped, Rule::Freestyle, 15))
        );
        // The same stones and last two moves: the same planes, so one entry (a transposition).
        let transposed = [(6, 6), (8, 8), (7, 7), (9, 9), (5, 5)];
        assert_eq!(
            cache::key_of(&a),
            cache::key_of(&play(&transposed, Rule::Freestyle, 15))
        );
        assert_ne!(
            cache::key_of(&a),
            cache::key_of(&play(&line, Rule::Renju, 15))
        );
        assert_ne!(
            cache::key_of(&a),
            cache::key_of(&play(&line, Rule::Freestyle, 16))
        );
    }

    #[test]
    fn cached_answers_are_the_networks_and_save_its_forwards() {
        let plain = NetEvaluator::new(Counted::default());
        let cached = NetEvaluator::new(Counted::default()).with_cache(64);
        let positions = [
            play(&[(7, 7), (8, 8), (6, 6), (9, 9), (5, 5)], Rule::Renju, 15),
            play(&[(6, 6), (8, 8), (7, 7), (9, 9), (5, 5)], Rule::Renju, 15),
            play(&[(5, 5), (8, 8), (6, 6), (9, 9), (7, 7)], Rule::Renju, 15),
            play(&[(7, 7), (8, 8)], Rule::Freestyle, 20),
        ];
        let refs: Vec<&Board> = positions.iter().collect();
        let (mut want, mut got) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            plain.evaluate(&refs, &mut want);
            cached.evaluate(&refs, &mut got);
            assert_eq!(want, got);
        }
        assert_eq!(plain.backend().ran.load(Ordering::Relaxed), 12);
        // Positions 0 and 1 are one transposition: three forwards, then none.
        assert_eq!(
            cached.backend().ran.load(Ordering::Relaxed),
            4,
            "within the first batch the two still both run"
        );
        assert_eq!(cached.cache_stats(), Some((12, 8)));
    }

    #[test]
    fn a_failed_forward_is_not_remembered() {
        let ev = NetEvaluator::new(Counted::default()).with_cache(16);
        let b = play(&[(7, 7), (8, 8), (6, 6)], Rule::Freestyle, 15);
        let mut out = Vec::new();
        ev.backend().fail.store(true, Ordering::Relaxed);
        ev.evaluate(&[&b], &mut out);
        assert_eq!(ev.failures(), 1);
        let stand_in = out[0].clone();
        ev.backend().fail.store(false, Ordering::Relaxed);
        ev.evaluate(&[&b], &mut out);
        assert_ne!(
            out[0], stand_in,
            "the network's answer, not the uniform stand-in"
        );
        assert_eq!(ev.backend().ran.load(Ordering::Relaxed), 1);
    }
}
