//! `trainer selfplay-worker`: plays self-play games with the newest published model and pushes
//! every finished game to the queue. The model is checked every `model_check_games` games and
//! swapped between batches (never inside one), a heartbeat thread keeps `{p}:worker:{id}` alive,
//! and a lost Redis is waited for (conn's backoff) rather than fatal.
//!
//! Backpressure: before each batch the worker reads the queue depth and, while it is at
//! `max_queue` or more, waits for the trainer instead of playing. Old entries are never trimmed
//! (games already produced are kept), so this wait is what keeps Redis's memory bounded. The
//! check comes before a batch, so the queue can overshoot the limit by at most one batch per
//! worker.
//!
//! Depends on `queue`, `payload`, `selfplay`, `progress` (its status lines), `net_eval`, `checkpoint`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use engine::net::Preset;
use tch::Device;

use super::payload::{GamePayload, ModelPayload};
use super::queue::Queue;
use super::{DistError, now_s};
use crate::network::checkpoint;
use crate::network::form::Form;
use crate::network::net_eval::{OnnxSelfplay, SelfplayNet, TchNet};
use crate::selfplay::status::expected_plies;
use crate::selfplay::{self, SelfPlayConfig};
use crate::support::progress::Progress;

#[derive(Clone, Debug)]
pub struct SelfPlayWorkerOptions {
    pub redis_url: String,
    pub prefix: String,
    pub worker_id: String,
    pub selfplay: SelfPlayConfig,
    /// Games per `selfplay::play` call (pushed as each call finishes).
    pub batch_games: usize,
    /// Look for a newer model after this many games.
    pub model_check_games: usize,
    /// Stop after this many games (None: run until stopped).
    pub max_games: Option<u64>,
    pub device: Device,
    /// Self-play on ONNX Runtime sessions over each version's ONNX file instead of the tch
    /// network on `device` (`net_eval::onnx_selfplay`).
    pub onnx: Option<OnnxSelfplay>,
    pub heartbeat_ttl: Duration,
    /// How long to wait for the first published model.
    pub wait_model: Duration,
    pub give_up_after: Duration,
    /// Hold back while the games stream holds this many games or more (0: no limit).
    pub max_queue: u64,
}

/// How often a waiting worker reads the queue depth again.
const QUEUE_POLL: Duration = Duration::from_millis(500);

#[derive(Clone, Debug, Default)]
pub struct WorkerSummary {
    pub games: u64,
    pub positions: u64,
    pub model_swaps: u64,
    pub last_model: u64,
    pub reconnects: u64,
    pub push_seconds: f64,
    pub play_seconds: f64,
    /// Time spent waiting for the trainer to drain a full queue.
    pub queue_wait_seconds: f64,
    /// How many times the worker found the queue full and waited.
    pub queue_waits: u64,
    /// Stopped by a signal while Redis did not answer: its last error, and the games played
    /// but never pushed (they lived only in this process).
    pub stopped_unanswered: Option<String>,
    pub games_not_pushed: u64,
}

struct Loaded {
    version: u64,
    net: SelfplayNet,
}

/// Version `m` as the network self-play searches with: its ONNX file in ONNX Runtime sessions
/// when `onnx` says so, else its weights in a tch network on `device`.
fn load(
    m: &ModelPayload,
    device: Device,
    onnx: Option<&OnnxSelfplay>,
    id: u64,
) -> Result<Loaded, DistError> {
    let bad = |e: String| DistError::Other(format!("model v{}: {e}", m.version));
    let net = match onnx {
        Some(o) => o.evaluator(&m.onnx).map_err(|e| bad(format!("{e:#}")))?,
        None => {
            let preset: Preset = m.preset.parse().map_err(|e| bad(format!("preset: {e}")))?;
            let net = TchNet::evaluator(Form::of(preset), device, &format!("v{}", m.version), id);
            net.backend()
                .with(|vs, _| checkpoint::restore(vs, &m.weights))
                .map_err(|e| bad(e.to_string()))?;
            SelfplayNet::Batched(Box::new(net))
        }
    };
    Ok(Loaded {
        version: m.version,
        net,
    })
}

/// Blocks while the queue holds `max_queue` games or more and `stop` is not set, polling every
/// `QUEUE_POLL` in short sleeps so a stop is seen within ~50 ms. Returns whether it waited. A
/// Redis failure while polling goes through conn's reconnect and backoff like any other call.
fn wait_for_room(
    q: &mut Queue,
    o: &SelfPlayWorkerOptions,
    stop: &AtomicBool,
    waiting: &AtomicBool,
    summary: &mut WorkerSummary,
) -> Result<bool, DistError> {
    if o.max_queue == 0 {
        return Ok(false);
    }
    let mut depth = q.queue_depth()?;
    if depth < o.max_queue || stop.load(Ordering::Relaxed) {
        return Ok(false);
    }
    eprintln!(
        "selfplay-worker {}: queue at {depth} games (limit {}): waiting for the trainer",
        o.worker_id, o.max_queue
    );
    waiting.store(true, Ordering::Relaxed);
    summary.queue_waits += 1;
    let t = Instant::now();
    let result = (|| {
        while depth >= o.max_queue && !stop.load(Ordering::Relaxed) {
            let tick = Instant::now();
            while tick.elapsed() < QUEUE_POLL && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
            if stop.load(Ordering::Relaxed) {
                break;
            }
            depth = q.queue_depth()?;
        }
        Ok(true)
    })();
    summary.queue_wait_seconds += t.elapsed().as_secs_f64();
    waiting.store(false, Ordering::Relaxed);
    result
}

/// What the heartbeat thread reports, shared with the playing loop.
#[derive(Default)]
struct Shared {
    games_done: AtomicU64,
    model_now: AtomicU64,
    /// Held back by a full queue (the monitor shows such a worker as waiting).
    waiting: AtomicBool,
    stop: AtomicBool,
}

/// Heartbeats from their own connection, so a long batch never looks like a dead worker.
fn spawn_heartbeat(
    o: &SelfPlayWorkerOptions,
    boot: u64,
    shared: Arc<Shared>,
    stop: &'static AtomicBool,
) -> std::thread::JoinHandle<Result<(), DistError>> {
    let (url, prefix, id) = (o.redis_url.clone(), o.prefix.clone(), o.worker_id.clone());
    let ttl = o.heartbeat_ttl;
    let device = format!("{:?}", o.device);
    let started = now_s();
    std::thread::spawn(move || -> Result<(), DistError> {
        let mut hq = Queue::open(&url, &prefix)?;
        hq.redis.backoff.give_up_after = Duration::from_secs(5);
        hq.redis.stop_on(stop);
        let period = (ttl / 3).max(Duration::from_millis(100));
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed).to_string();
        while !shared.stop.load(Ordering::Relaxed) {
            let fields = [
                ("role", "selfplay".to_string()),
                ("games", load(&shared.games_done)),
                ("model", load(&shared.model_now)),
                ("device", device.clone()),
                ("boot", boot.to_string()),
                ("started", started.to_string()),
                ("seen", now_s().to_string()),
                (
                    "waiting",
                    u8::from(shared.waiting.load(Ordering::Relaxed)).to_string(),
                ),
            ];
            // A missed beat is not fatal: the next one (or the reconnect) catches up.
            let _ = hq.heartbeat(&id, &fields, ttl.as_secs().max(1));
            let t = Instant::now();
            while t.elapsed() < period && !shared.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        let _ = hq
            .redis
            .run::<i64>(redis::cmd("DEL").arg(hq.keys.worker(&id)));
        Ok(())
    })
}

/// Plays and pushes games until `stop` is set (the batch in progress is pushed first) or
/// `max_games` are pushed. A stop while Redis does not answer ends at once: the summary names
/// the games that could not be pushed.
pub fn run(
    o: &SelfPlayWorkerOptions,
    stop: &'static AtomicBool,
) -> Result<WorkerSummary, DistError> {
    let mut q = Queue::open(&o.redis_url, &o.prefix)?;
    q.redis.backoff.give_up_after = o.give_up_after;
    q.redis.stop_on(stop);
    let boot = match q.boot(&o.worker_id) {
        Err(DistError::Stopped { last }) => return Ok(stopped_unanswered(last)),
        b => b?,
    };
    let shared = Arc::new(Shared::default());
    let hb = spawn_heartbeat(o, boot, shared.clone(), stop);
    let result = first_model(&mut q, o, stop).and_then(|first| {
        let Some(current) = first else {
            // Stopped before there was a model to play with: nothing to push.
            return Ok(WorkerSummary::default());
        };
        let mut w = Worker {
            o,
            q,
            boot,
            shared: &shared,
            current,
            summary: WorkerSummary::default(),
            since_check: 0,
            seq: 0,
        };
        match w.play(stop) {
            Err(DistError::Stopped { last }) => w.summary.stopped_unanswered = Some(last),
            r => r?,
        }
        w.summary.last_model = w.current.version;
        w.summary.reconnects = w.q.redis.reconnects;
        Ok(w.summary)
    });
    shared.stop.store(true, Ordering::Relaxed);
    let _ = hb.join();
    match result {
        Err(DistError::Stopped { last }) => Ok(stopped_unanswered(last)),
        r => r,
    }
}

fn stopped_unanswered(last: String) -> WorkerSummary {
    WorkerSummary {
        stopped_unanswered: Some(last),
        ..WorkerSummary::default()
    }
}

/// Waits (up to `wait_model`) for the train worker's first model; None when `stop` is set first.
fn first_model(
    q: &mut Queue,
    o: &SelfPlayWorkerOptions,
    stop: &AtomicBool,
) -> Result<Option<Loaded>, DistError> {
    let t0 = Instant::now();
    loop {
        if let Some(m) = q.fetch_latest_model()? {
            return load(&m, o.device, o.onnx.as_ref(), 1).map(Some);
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        if t0.elapsed() > o.wait_model {
            return Err(DistError::Other(format!(
                "no model published after {:.0} s",
                t0.elapsed().as_secs_f64()
            )));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The playing loop's state.
struct Worker<'a> {
    o: &'a SelfPlayWorkerOptions,
    q: Queue,
    boot: u64,
    shared: &'a Shared,
    current: Loaded,
    summary: WorkerSummary,
    /// Games since the model was last checked.
    since_check: usize,
    /// Games pushed this boot (game ids are `<worker>:<boot>:<seq>`).
    seq: u64,
}

impl Worker<'_> {
    fn play(&mut self, stop: &AtomicBool) -> Result<(), DistError> {
        let o = self.o;
        self.shared
            .model_now
            .store(self.current.version, Ordering::Relaxed);
        while !stop.load(Ordering::Relaxed) && o.max_games.is_none_or(|m| self.summary.games < m) {
            if wait_for_room(
                &mut self.q,
                o,
                stop,
                &self.shared.waiting,
                &mut self.summary,
            )? {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                // The trainer has been training meanwhile: a newer model is likely, so look now.
                self.since_check = self.since_check.max(o.model_check_games.max(1));
            }
            if self.since_check >= o.model_check_games.max(1) {
                self.since_check = 0;
                self.swap_model()?;
            }
            self.play_batch()?;
        }
        Ok(())
    }

    /// Loads a newer published model, if there is one (a refused one is reported and skipped).
    fn swap_model(&mut self) -> Result<(), DistError> {
        let version = self.current.version;
        if self.q.latest_model_version()?.is_none_or(|v| v <= version) {
            return Ok(());
        }
        match self.q.fetch_latest_model() {
            Ok(Some(m)) if m.version > version => {
                let id = 1 + self.summary.model_swaps;
                self.current = load(&m, self.o.device, self.o.onnx.as_ref(), id)?;
                self.summary.model_swaps += 1;
                self.shared
                    .model_now
                    .store(self.current.version, Ordering::Relaxed);
            }
            Ok(_) => {}
            // A bad frame is counted by the queue; keep playing the current model.
            Err(DistError::Payload(e)) => {
                eprintln!(
                    "selfplay-worker {}: newer model refused: {e}",
                    self.o.worker_id
                )
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// One `selfplay::play` call, its games pushed as it ends.
    fn play_batch(&mut self) -> Result<(), DistError> {
        let (o, boot, seq) = (self.o, self.boot, self.seq);
        let left = o
            .max_games
            .map_or(usize::MAX, |m| (m - self.summary.games) as usize);
        let n = o.batch_games.max(1).min(left);
        // Seeds differ by worker, boot and batch, so restarted workers do not replay games.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in o.worker_id.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        let sp = SelfPlayConfig {
            seed: o.selfplay.seed ^ h ^ boot.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seq,
            ..o.selfplay.clone()
        };
        let t = Instant::now();
        let mut pb = Progress::new(&format!("selfplay-worker {}", o.worker_id), n as u64);
        let plies = expected_plies(sp.board_size);
        let report = selfplay::play_on(&sp, self.current.net.leaves(), n, seq as usize, |st| {
            pb.update(st.games_done as u64, || st.line(plies))
        })
        .map_err(|e| DistError::Other(format!("self-play: {e:#}")))?;
        pb.finish();
        self.summary.play_seconds += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let played = report.games.len() as u64;
        for (i, record) in (0..).zip(report.games) {
            let g = GamePayload {
                game_id: format!("{}:{boot}:{}", o.worker_id, self.seq),
                worker_id: o.worker_id.clone(),
                model_version: self.current.version,
                record,
            };
            self.seq += 1;
            if let Err(e) = self.q.push_game(&g) {
                if matches!(e, DistError::Stopped { .. }) {
                    self.summary.games_not_pushed = played - i;
                }
                return Err(e);
            }
            self.summary.games += 1;
            self.summary.positions += g.record.positions() as u64;
            self.since_check += 1;
            self.shared
                .games_done
                .store(self.summary.games, Ordering::Relaxed);
        }
        self.summary.push_seconds += t.elapsed().as_secs_f64();
        Ok(())
    }
}
