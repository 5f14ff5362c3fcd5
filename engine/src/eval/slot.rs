//! `ModelSlot`: the live evaluator behind an `ArcSwap`, with a fallback (the classical evaluator)
//! while no model is loaded, and a watcher thread on `--model PATH` (a file, or a directory whose
//! newest valid `*.onnx` wins) that swaps a new checkpoint in without dropping a game.
//!
//! The brain takes `slot.current()` at the start of each move, so a swap lands between moves; a
//! search in progress keeps the `Arc` it started with. A truncated, corrupt or incompatible file
//! is refused with a message and the old model stays; a file whose size or mtime is still
//! changing is left until two polls agree. Polling (every ~250 ms) needs no notify crate.
//!
//! Depends on the `Evaluator` trait, the native runtime (`native`: the embedded networks and
//! model files of the engine's own forms, the ResNet and the pattern network) and `onnx_evaluator` through `onnx_loader` (with the
//! `onnx` feature, for any other model; without it such files are refused, saying why).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;

use super::Evaluator;
use super::native::pattern::PatternEvaluator;
use super::native::{AnyNative, LoadError, NativeEvaluator};
use super::network::LoadConfig;
#[cfg(feature = "onnx")]
use super::onnx_evaluator::OnnxEvaluator;
use crate::device::Device;
use crate::game::{Board, Pos, Rule};
use crate::net::ModelMeta;

/// Loads a model file into an evaluator, or says why not.
pub type Loader = Arc<dyn Fn(&Path) -> Result<Loaded, String> + Send + Sync>;

/// A model a `Loader` made ready, and what its user should be told about how it runs (say, on
/// ONNX Runtime because the native runtime does not know its form).
pub struct Loaded {
    pub evaluator: Arc<dyn Evaluator>,
    pub note: Option<String>,
}

impl Loaded {
    fn plain(evaluator: Arc<dyn Evaluator>) -> Loaded {
        Loaded {
            evaluator,
            note: None,
        }
    }
}

/// Receives the slot's messages (loaded, refused, ...); the brain prints them as `MESSAGE`.
pub type MessageSink = Arc<dyn Fn(String) + Send + Sync>;

/// Whether networks of the engine's own forms run natively (`native`) with `config`: on the
/// CPU, unless `FIVEZERO_INFERENCE=onnx` asks for ONNX Runtime (a build with it; for
/// comparisons).
pub fn runs_natively(config: &LoadConfig) -> bool {
    let forced_onnx = cfg!(feature = "onnx")
        && std::env::var("FIVEZERO_INFERENCE").is_ok_and(|v| v.trim().eq_ignore_ascii_case("onnx"));
    config.device == Device::Cpu && !forced_onnx
}

/// The loader the engine uses: a network of one of the engine's own forms (the ResNet, the
/// pattern network) runs natively on the CPU; any other model goes to ONNX Runtime (with the
/// `onnx` feature, and a note saying why; without it such a file is refused, saying why). A
/// file the native runtime knows but finds broken (wrong shapes, a short table, NaN) is
/// refused outright. The network must answer one probe position with finite outputs (a model
/// with NaN weights is refused here, before it can replace a working one).
pub fn network_loader(config: LoadConfig) -> Loader {
    Arc::new(move |path: &Path| {
        if !runs_natively(&config) {
            return onnx_or_refuse(config, path, None);
        }
        let bytes = super::network::read_model_file(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        match AnyNative::from_bytes(&bytes) {
            Ok(net) => {
                let cache = |ev: NativeEvaluator| ev.with_cache(config.cache_entries);
                native_evaluator(net, config, cache).map(Loaded::plain)
            }
            Err(LoadError::Unsupported(why)) => onnx_or_refuse(config, path, Some(why)),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    })
}

/// ONNX Runtime's evaluator of `path` for a model the native runtime does not run (`why`; None:
/// the configuration asks for ONNX Runtime), or, in a build without it, the refusal saying so.
#[cfg_attr(not(feature = "onnx"), allow(unused_variables))]
fn onnx_or_refuse(config: LoadConfig, path: &Path, why: Option<String>) -> Result<Loaded, String> {
    #[cfg(feature = "onnx")]
    {
        let loaded = onnx_loader(config)(path)?;
        let note = why.map(|why| {
            format!(
                "{} runs on ONNX Runtime: the native runtime does not know it ({why})",
                path.display()
            )
        });
        Ok(Loaded { note, ..loaded })
    }
    #[cfg(not(feature = "onnx"))]
    match why {
        Some(why) => Err(format!(
            "{}: {why}; this engine was built without ONNX Runtime (cargo feature `onnx`), which could run it",
            path.display()
        )),
        None => Err(
            "this engine was built without ONNX Runtime, so it runs networks on the CPU only"
                .into(),
        ),
    }
}

/// The ONNX Runtime loader: the file must load, pass the network contract, and answer the probe.
#[cfg(feature = "onnx")]
pub fn onnx_loader(config: LoadConfig) -> Loader {
    Arc::new(move |path: &Path| {
        let ev = OnnxEvaluator::load(path, config).map_err(|e| e.to_string())?;
        probe(&ev, ev.meta(), || ev.take_error())?;
        Ok(Loaded::plain(Arc::new(ev)))
    })
}

/// The networks compiled into the engine (`embedded::DEFAULT_MODELS`), each loaded and probed
/// like a file, as one evaluator that gives every game to the network claiming it; also returns
/// what each plays ("native:... for freestyle on 15x15, 20x20; native:... for renju on 15x15").
/// They run natively unless `runs_natively` says otherwise.
pub fn load_embedded(config: LoadConfig) -> Result<(Arc<dyn Evaluator>, String), String> {
    use super::by_claim::{ByClaim, Member};
    // One cache for all of them, so the memory the engine sets aside for one holds whatever
    // rules a session plays: a position's key holds its rule, and the rule picks the network.
    let cache = (config.cache_entries > 0)
        .then(|| Arc::new(super::cache::EvalCache::new(config.cache_entries)));
    let mut members = Vec::new();
    for (file, bytes) in super::embedded::DEFAULT_MODELS {
        let (evaluator, claim) = embedded_member(bytes, config, cache.clone())
            .map_err(|e| format!("the embedded {file}: {e}"))?;
        members.push(Member { evaluator, claim });
    }
    let set = ByClaim::new(members);
    let described = set.describe();
    Ok((Arc::new(set), described))
}

/// One embedded network, probed before the shared cache joins: the probe position is the same
/// for every network, and a cached answer would spare the later ones their forward.
fn embedded_member(
    bytes: &[u8],
    config: LoadConfig,
    cache: Option<Arc<super::cache::EvalCache>>,
) -> Result<(Arc<dyn Evaluator>, String), String> {
    if !runs_natively(&config) {
        #[cfg(feature = "onnx")]
        {
            let uncached = LoadConfig {
                cache_entries: 0,
                ..config
            };
            let ev = OnnxEvaluator::from_bytes(bytes, uncached).map_err(|e| e.to_string())?;
            probe(&ev, ev.meta(), || ev.take_error())?;
            let claim = ev.meta().claim();
            return Ok((Arc::new(ev.with_shared_cache(cache)), claim));
        }
    }
    let net = AnyNative::from_bytes(bytes).map_err(|e| e.to_string())?;
    let claim = net.meta().claim();
    let ev = native_evaluator(net, config, |ev| ev.with_shared_cache(cache))?;
    Ok((ev, claim))
}

/// `net` as the evaluator the search calls, probed; `cache` gives a ResNet its position cache
/// after the probe. The pattern network has none: a position costs it about what a cache miss
/// costs the ResNet's lookup and encoding, and its accumulators follow the search path anyway.
fn native_evaluator(
    net: AnyNative,
    config: LoadConfig,
    cache: impl FnOnce(NativeEvaluator) -> NativeEvaluator,
) -> Result<Arc<dyn Evaluator>, String> {
    match net {
        AnyNative::ResNet(net) => {
            let ev = NativeEvaluator::native(net, config.sessions, config.batch, 0);
            probe(&ev, ev.net().meta(), || ev.take_error())?;
            Ok(Arc::new(cache(ev)))
        }
        AnyNative::Pattern(net) => {
            let ev = PatternEvaluator::new(*net);
            probe(&ev, ev.net().meta(), || None)?;
            Ok(Arc::new(ev))
        }
    }
}

/// One evaluation of a small opening inside the model's supported board range; `error` tells
/// what went wrong in it, where the evaluator keeps such a thing.
fn probe(
    ev: &dyn Evaluator,
    meta: &ModelMeta,
    error: impl FnOnce() -> Option<String>,
) -> Result<(), String> {
    let side = 15.clamp(meta.min_board, meta.max_board);
    let mut board =
        Board::new(side, side, Rule::Freestyle).map_err(|e| format!("probe board: {e}"))?;
    let centre = Pos::new(side / 2, side / 2);
    board
        .play(centre)
        .map_err(|e| format!("probe board: {e}"))?;
    let mut out = Vec::new();
    ev.evaluate(&[&board], &mut out);
    if let Some(e) = error() {
        return Err(format!("probe forward failed: {e}"));
    }
    match out.first() {
        Some(e) if e.value.is_finite() && e.policy.iter().all(|p| p.is_finite()) => Ok(()),
        _ => Err("probe forward gave no finite evaluation".into()),
    }
}

/// What is live now.
pub struct Live {
    pub evaluator: Arc<dyn Evaluator>,
    /// The file it came from; `None` for the fallback.
    pub source: Option<PathBuf>,
}

/// Size and modification time: a file is taken only when two polls see the same.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Stamp {
    path: PathBuf,
    len: u64,
    modified: Option<SystemTime>,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let md = std::fs::metadata(path).ok()?;
    md.is_file().then(|| Stamp {
        path: path.to_path_buf(),
        len: md.len(),
        modified: md.modified().ok(),
    })
}

#[derive(Default)]
struct WatchState {
    /// The stamp of the file live now (so an unchanged file is not reloaded).
    loaded: Option<Stamp>,
    /// Files refused, by stamp: not retried until they change.
    refused: Vec<Stamp>,
    /// The candidate seen at the previous poll (must be seen unchanged once more).
    seen: Option<Stamp>,
}

pub struct ModelSlot {
    live: ArcSwap<Live>,
    fallback: Arc<dyn Evaluator>,
    state: Mutex<WatchState>,
}

impl ModelSlot {
    /// A slot serving `fallback` until a model loads.
    pub fn new(fallback: Arc<dyn Evaluator>) -> Arc<ModelSlot> {
        Arc::new(ModelSlot {
            live: ArcSwap::from_pointee(Live {
                evaluator: fallback.clone(),
                source: None,
            }),
            fallback,
            state: Mutex::new(WatchState::default()),
        })
    }

    /// The evaluator to use for the next move.
    pub fn current(&self) -> Arc<dyn Evaluator> {
        self.live.load().evaluator.clone()
    }

    /// The evaluator and where it came from.
    pub fn live(&self) -> Arc<Live> {
        self.live.load_full()
    }

    pub fn fallback(&self) -> &Arc<dyn Evaluator> {
        &self.fallback
    }

    /// Loads `path` (a file, or the newest loadable `*.onnx` of a directory) now.
    ///
    /// # Errors
    /// A message naming each file refused; the live evaluator is unchanged then.
    pub fn load_now(&self, path: &Path, loader: &Loader) -> Result<String, String> {
        let mut errors = Vec::new();
        for cand in candidates(path) {
            let Some(st) = stamp(&cand) else { continue };
            match loader(&cand) {
                Ok(loaded) => return Ok(self.install(loaded, st)),
                Err(e) => {
                    errors.push(format!("refused {}: {e}", cand.display()));
                    self.lock_state().refused.push(st);
                }
            }
        }
        if errors.is_empty() {
            errors.push(format!("no model at {}", path.display()));
        }
        Err(errors.join("; "))
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, WatchState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Serves `ev`, a network that comes from no watched file (the embedded default), until the
    /// next load or `clear`. The files seen so far stay known (a file just refused is not tried
    /// again until it changes).
    pub fn install_unwatched(&self, ev: Arc<dyn Evaluator>) {
        self.live.store(Arc::new(Live {
            evaluator: ev,
            source: None,
        }));
    }

    /// Back to the fallback evaluator, every file forgotten.
    pub fn clear(&self) {
        self.install_unwatched(self.fallback.clone());
        self.forget_files();
    }

    /// Forgets the files loaded, refused and seen (a new source is about to be loaded); what is
    /// live stays live.
    pub fn forget_files(&self) {
        *self.lock_state() = WatchState::default();
    }

    /// What is live, in words: the file it came from, the fallback, or the embedded default.
    pub fn describe_live(&self) -> String {
        let live = self.live();
        match &live.source {
            Some(path) => path.display().to_string(),
            None if Arc::ptr_eq(&live.evaluator, &self.fallback) => {
                format!("the fallback {}", self.fallback.name())
            }
            None => format!("the embedded default {}", live.evaluator.name()),
        }
    }

    fn install(&self, loaded: Loaded, st: Stamp) -> String {
        let ev = loaded.evaluator;
        let mut msg = format!("model {} loaded ({})", st.path.display(), ev.name());
        if let Some(note) = loaded.note {
            msg = format!("{msg}; {note}");
        }
        self.live.store(Arc::new(Live {
            evaluator: ev,
            source: Some(st.path.clone()),
        }));
        let mut s = self.lock_state();
        s.loaded = Some(st);
        s.seen = None;
        msg
    }

    /// One watcher step: looks at `path`, swaps in a new stable, loadable model. Returns the
    /// messages it produced (also what the thread sends to its sink).
    pub fn poll(&self, path: &Path, loader: &Loader) -> Vec<String> {
        let mut messages = Vec::new();
        for cand in candidates(path) {
            let Some(st) = stamp(&cand) else { continue };
            let (is_loaded, is_refused, seen_same) = {
                let s = self.lock_state();
                (
                    s.loaded.as_ref() == Some(&st),
                    s.refused.contains(&st),
                    s.seen.as_ref() == Some(&st),
                )
            };
            if is_loaded {
                // The newest usable file is the live one: nothing to do.
                break;
            }
            if is_refused {
                // Known bad in this exact state: try an older file instead.
                continue;
            }
            if !seen_same {
                // New or still being written: wait until two polls agree on size and mtime.
                self.lock_state().seen = Some(st);
                break;
            }
            match loader(&cand) {
                Ok(loaded) => messages.push(self.install(loaded, st)),
                Err(e) => {
                    messages.push(format!(
                        "refused model {}: {e}; keeping {}",
                        cand.display(),
                        self.describe_live()
                    ));
                    let mut s = self.lock_state();
                    s.refused.push(st);
                    s.seen = None;
                    // Bounded: a directory rewritten forever must not grow this without end.
                    if s.refused.len() > 64 {
                        s.refused.remove(0);
                    }
                    continue;
                }
            }
            break;
        }
        messages
    }

    /// Starts the watcher thread on `path`, polling every `interval` (the engine uses 250 ms).
    /// Dropping the handle stops it.
    pub fn watch(
        self: &Arc<Self>,
        path: PathBuf,
        loader: Loader,
        sink: MessageSink,
        interval: Duration,
    ) -> WatchHandle {
        let stop = Arc::new(AtomicBool::new(false));
        let slot = Arc::clone(self);
        let flag = stop.clone();
        let report = sink.clone();
        let thread = std::thread::Builder::new()
            .name("model-watch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    for m in slot.poll(&path, &loader) {
                        sink(m);
                    }
                    // Sleep in short steps so a drop stops the thread promptly.
                    let mut left = interval;
                    while !left.is_zero() && !flag.load(Ordering::Relaxed) {
                        let step = left.min(Duration::from_millis(25));
                        std::thread::sleep(step);
                        left -= step;
                    }
                }
            });
        match thread {
            Ok(t) => WatchHandle {
                stop,
                thread: Some(t),
            },
            Err(e) => {
                // No thread, no hot reload; the engine still plays with what it has.
                report(format!("model watcher not started: {e}"));
                WatchHandle { stop, thread: None }
            }
        }
    }
}

/// The model files to consider, best first: the file itself, or a directory's `*.onnx` files by
/// modification time, newest first (ties by name, descending, so the order never depends on the
/// directory listing order).
fn candidates(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    let Ok(rd) = std::fs::read_dir(path) else {
        return Vec::new();
    };
    let mut files: Vec<(Option<SystemTime>, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "onnx") && p.is_file())
        .map(|p| (std::fs::metadata(&p).and_then(|m| m.modified()).ok(), p))
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    files.into_iter().map(|(_, p)| p).collect()
}

/// Keeps the watcher thread alive; dropping it stops the thread.
pub struct WatchHandle {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl WatchHandle {
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::UniformEvaluator;

    /// A loader that refuses every file, as ONNX Runtime refuses garbage.
    fn refusing() -> Loader {
        Arc::new(|_: &Path| Err("not a model".to_string()))
    }

    #[test]
    fn a_refused_file_leaves_the_live_evaluator_and_is_not_retried_until_it_changes() {
        let slot = ModelSlot::new(Arc::new(UniformEvaluator));
        assert_eq!(slot.describe_live(), "the fallback uniform");
        let network: Arc<dyn Evaluator> = Arc::new(UniformEvaluator);
        slot.install_unwatched(network.clone());
        let dir = tempfile::tempdir().unwrap();
        let garbage = dir.path().join("garbage.onnx");
        std::fs::write(&garbage, b"garbage").unwrap();
        let err = slot.load_now(&garbage, &refusing()).unwrap_err();
        assert!(
            err.contains("refused") && err.contains("not a model"),
            "{err}"
        );
        assert!(Arc::ptr_eq(&slot.current(), &network));
        assert_eq!(slot.describe_live(), "the embedded default uniform");
        // The watcher knows the file as refused: no second attempt, no second message.
        for _ in 0..3 {
            assert!(slot.poll(&garbage, &refusing()).is_empty());
        }
        slot.clear();
        assert!(Arc::ptr_eq(&slot.current(), slot.fallback()));
    }
}
