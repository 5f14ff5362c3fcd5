//! `trainer train-worker`: consumes games from the queue into its replay store, trains on the
//! window, and every `publish_every` steps writes a local checkpoint and publishes the network
//! (weights + ONNX) as a new model version.
//!
//! Delivery loses nothing and counts nothing twice:
//! 1. entries are read through the consumer group (first this consumer's own pending ones, then
//!    entries idle in dead consumers via XAUTOCLAIM, then new ones);
//! 2. each game id is checked against the local ingest ledger and the Redis `ingested` set;
//! 3. the ids go to `ingest/ingest-N.bin`, then the games to replay chunk N (both atomic files);
//!    a ledger without its chunk (crash between the two) is deleted at start;
//! 4. only then SADD the ids and XACK + XDEL the entries. A crash anywhere before 4 redelivers
//!    the entries, and step 2 drops the ones that already made it to disk.
//!
//! Depends on `queue`, `payload`, `replay`, `config` and `training::Trainer` (the step, the
//! checkpoint and the export it shares with the single-machine run).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tch::Device;

use super::payload::{self, ModelPayload};
use super::queue::{Entry, Queue};
use super::{DistError, now_s};
use crate::config::{Resume, Settings};
use crate::support::store;
use crate::training::replay::GameRecord;
use crate::training::{Trainer, prune_models, publish_model_files};

const LEDGER_MAGIC: [u8; 4] = *b"FZIL";
const LEDGER_VERSION: u32 = 1;

/// A train worker: the training settings (network, board, optimizer, batch, replay window,
/// sample reuse, seed, run folder) and the distributed ones.
#[derive(Clone, Debug)]
pub struct TrainWorkerOptions {
    pub settings: Settings,
    pub redis_url: String,
    pub prefix: String,
    /// Consumer name in the group; reuse it after a restart to take back its own pending entries.
    pub consumer: String,
    pub device: Device,
    /// Train only once the window holds this many positions.
    pub min_positions: usize,
    pub publish_every: u64,
    pub keep_models: usize,
    pub read_count: usize,
    pub block_ms: u64,
    /// Entries idle this long in another consumer are reclaimed.
    pub claim_idle: Duration,
    pub max_steps: Option<u64>,
    /// Stop once this many games were ingested (across restarts).
    pub max_games: Option<u64>,
    /// Stop when the stream has nothing more for this consumer (scripts, tests).
    pub exit_when_drained: bool,
    pub heartbeat_ttl: Duration,
    pub give_up_after: Duration,
}

impl TrainWorkerOptions {
    fn dir(&self) -> &Path {
        &self.settings.checkpoint_dir
    }
}

#[derive(Clone, Debug, Default)]
pub struct TrainSummary {
    pub ingested: u64,
    pub duplicates: u64,
    pub rejected: u64,
    pub steps: u64,
    pub published: Vec<u64>,
    pub reconnects: u64,
    pub resumed_step: Option<u64>,
    pub ingest_seconds: f64,
    /// Stopped by a signal while Redis did not answer: its last error.
    pub stopped_unanswered: Option<String>,
    /// Then: the step checkpointed but not published (a restarted worker publishes it first).
    pub unpublished_step: Option<u64>,
}

fn ledger_path(dir: &Path, n: u64) -> PathBuf {
    dir.join("ingest").join(format!("ingest-{n:08}.bin"))
}

fn chunk_path(dir: &Path, n: u64) -> PathBuf {
    dir.join("replay").join(format!("chunk-{n:08}.bin"))
}

/// Game ids already in the replay store; ledgers whose chunk never landed are removed, and so
/// are the temporary files of ledger writes a kill interrupted.
pub fn load_ledger(dir: &Path) -> Result<BTreeSet<String>, DistError> {
    let mut ids = BTreeSet::new();
    let folder = dir.join("ingest");
    // `store::write` goes through `.ingest-N.bin.tmp.<pid>.<k>` and a rename; a SIGKILL in
    // between leaves a complete-looking ledger that was never committed. Nothing reads it, but
    // each crash would leave one behind (and anyone auditing the folder would count its ids
    // twice), so the one train worker of this folder removes them.
    let Ok(rd) = std::fs::read_dir(&folder) else {
        return Ok(ids);
    };
    for e in rd.filter_map(|e| e.ok()) {
        let interrupted = e
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(".ingest-") && n.contains(".bin.tmp."));
        if interrupted {
            let _ = std::fs::remove_file(e.path());
        }
    }
    let files = store::numbered_files(&folder, "ingest-", ".bin")
        .map_err(|e| DistError::Other(format!("{}: {e}", folder.display())))?;
    for (n, p) in files {
        if !chunk_path(dir, n).exists() {
            std::fs::remove_file(&p)
                .map_err(|e| DistError::Other(format!("{}: {e}", p.display())))?;
            continue;
        }
        let v: Vec<String> = store::read(&p, LEDGER_MAGIC, LEDGER_VERSION)
            .map_err(|e| DistError::Other(e.to_string()))?;
        ids.extend(v);
    }
    Ok(ids)
}

/// Any trainer error as the distributed layer's.
fn other(e: impl std::fmt::Display) -> DistError {
    DistError::Other(format!("{e:#}"))
}

/// The worker's state between reads: the trainer, the queue and where the loop stands.
struct Worker<'a> {
    o: &'a TrainWorkerOptions,
    q: Queue,
    t: Trainer,
    ledger: BTreeSet<String>,
    summary: TrainSummary,
    /// Training steps the ingested positions have paid for and not yet been taken.
    owed: f64,
    last_publish_step: u64,
    /// The step of the last model Redis took.
    published_step: Option<u64>,
    last_claim: Instant,
    last_beat: Instant,
    own_pending_done: bool,
    claimed_once: bool,
    reconnects_seen: u64,
    started: u64,
}

fn warn(m: String) {
    eprintln!("train-worker: warning: {m}");
}

/// Ingests, trains and publishes until `stop` is set or a `max_*` limit is reached; the steps
/// since the last publish are then checkpointed and published. A stop while Redis does not
/// answer still writes that checkpoint (a restarted worker publishes it first); the summary says
/// it was not published.
pub fn run(o: &TrainWorkerOptions, stop: &'static AtomicBool) -> Result<TrainSummary, DistError> {
    let mut w = Worker::open(o, stop)?;
    match w.work(stop) {
        Err(DistError::Stopped { last }) => w.summary.stopped_unanswered = Some(last),
        r => r?,
    }
    if w.t.step > w.last_publish_step {
        match w.publish() {
            Err(DistError::Stopped { last }) => w.summary.stopped_unanswered = Some(last),
            r => r?,
        }
    }
    if w.summary.stopped_unanswered.is_some() {
        w.summary.unpublished_step = (w.published_step != Some(w.t.step)).then_some(w.t.step);
    }
    let _ =
        w.q.redis
            .run::<i64>(redis::cmd("DEL").arg(w.q.keys.worker(&o.consumer)));
    w.summary.reconnects = w.q.redis.reconnects;
    Ok(w.summary)
}

impl<'a> Worker<'a> {
    /// The queue, and the trainer resumed from the run folder's newest valid checkpoint.
    fn open(o: &'a TrainWorkerOptions, stop: &'static AtomicBool) -> Result<Worker<'a>, DistError> {
        let ingest_dir = o.dir().join("ingest");
        std::fs::create_dir_all(&ingest_dir)
            .map_err(|e| other(format!("{}: {e}", ingest_dir.display())))?;
        let mut q = Queue::open(&o.redis_url, &o.prefix)?;
        q.redis.backoff.give_up_after = o.give_up_after;
        q.redis.stop_on(stop);
        q.ensure_group()?;
        // Open-ended: a long cosine horizon, the schedule barely decays in a session.
        let mut t = Trainer::new(&o.settings, o.device, 1_000_000, false, warn).map_err(other)?;
        let ledger = load_ledger(o.dir())?;
        let mut summary = TrainSummary::default();
        if let Some(path) = t.resume(&Resume::Auto, o.dir(), warn).map_err(other)? {
            summary.resumed_step = Some(t.step);
            eprintln!(
                "train-worker: resumed from {} (step {})",
                path.display(),
                t.step
            );
        }
        // The ledger, not the checkpoint, knows every game that reached the replay store.
        t.games = ledger.len() as u64;
        let reconnects_seen = q.redis.reconnects;
        Ok(Worker {
            o,
            q,
            last_publish_step: t.step,
            published_step: None,
            t,
            ledger,
            summary,
            owed: 0.0,
            last_claim: Instant::now() - o.claim_idle,
            last_beat: Instant::now() - o.heartbeat_ttl,
            own_pending_done: false,
            claimed_once: false,
            reconnects_seen,
            started: now_s(),
        })
    }

    /// The main loop: publish the current model (workers need one to start), then ingest and
    /// train until stopped or a limit is reached.
    fn work(&mut self, stop: &AtomicBool) -> Result<(), DistError> {
        let o = self.o;
        self.publish()?;
        loop {
            let t = &self.t;
            if stop.load(Ordering::Relaxed)
                || o.max_steps.is_some_and(|m| t.step >= m)
                || o.max_games.is_some_and(|m| t.games >= m)
            {
                return Ok(());
            }
            self.heartbeat()?;
            let entries = self.next_entries()?;
            if o.exit_when_drained
                && entries.is_empty()
                && self.own_pending_done
                && self.claimed_once
                && (self.owed < 1.0 || self.t.replay.len() < o.min_positions)
            {
                // Drained means nobody holds unacknowledged entries either (a dead consumer's
                // are reclaimed once they have been idle for claim_idle).
                if self.q.pending_count()? == 0 {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            let ti = Instant::now();
            let new_positions = ingest(self, &entries)?;
            self.summary.ingest_seconds += ti.elapsed().as_secs_f64();
            let s = &o.settings;
            self.owed += new_positions as f64 * s.sample_reuse / s.batch_size.max(1) as f64;
            self.train_owed(stop)?;
        }
    }

    fn heartbeat(&mut self) -> Result<(), DistError> {
        let o = self.o;
        if self.last_beat.elapsed() < o.heartbeat_ttl / 3 {
            return Ok(());
        }
        self.last_beat = Instant::now();
        let model = self.summary.published.last().copied().unwrap_or(0);
        let fields = [
            ("role", "train".to_string()),
            ("games", self.t.games.to_string()),
            ("steps", self.t.step.to_string()),
            ("model", model.to_string()),
            ("device", format!("{:?}", o.device)),
            ("started", self.started.to_string()),
            ("seen", now_s().to_string()),
        ];
        self.q
            .heartbeat(&o.consumer, &fields, o.heartbeat_ttl.as_secs().max(1))
    }

    /// Step 1 of the module doc: own pending entries first, then dead consumers', then new.
    fn next_entries(&mut self) -> Result<Vec<Entry>, DistError> {
        let o = self.o;
        // A read that died with the connection left its entries in our pending list: after a
        // reconnect, take those back first.
        if self.q.redis.reconnects != self.reconnects_seen {
            self.reconnects_seen = self.q.redis.reconnects;
            self.own_pending_done = false;
        }
        if !self.own_pending_done {
            let e = self.q.read(&o.consumer, "0", o.read_count, 0)?;
            if e.is_empty() {
                self.own_pending_done = true;
            } else {
                eprintln!(
                    "train-worker: {} entries pending from before, re-reading",
                    e.len()
                );
            }
            return Ok(e);
        }
        if self.last_claim.elapsed() >= o.claim_idle / 2 {
            self.last_claim = Instant::now();
            self.claimed_once = true;
            let idle_ms = o.claim_idle.as_millis() as u64;
            let e = self.q.autoclaim(&o.consumer, idle_ms, o.read_count)?;
            if !e.is_empty() {
                eprintln!("train-worker: reclaimed {} idle entries", e.len());
                return Ok(e);
            }
            return self.q.read(&o.consumer, ">", o.read_count, o.block_ms);
        }
        // Block briefly when there is training to do, long when idle.
        let block = if self.owed >= 1.0 { 1 } else { o.block_ms };
        self.q.read(&o.consumer, ">", o.read_count, block)
    }

    /// Trains what the new positions paid for, publishing on schedule.
    fn train_owed(&mut self, stop: &AtomicBool) -> Result<(), DistError> {
        let o = self.o;
        while self.owed >= 1.0 && self.t.replay.len() >= o.min_positions {
            if o.max_steps.is_some_and(|m| self.t.step >= m) || stop.load(Ordering::Relaxed) {
                break;
            }
            if self.t.train_step(warn).map_err(other)?.is_none() {
                break;
            }
            self.owed -= 1.0;
            self.summary.steps += 1;
            if self.t.step - self.last_publish_step >= o.publish_every.max(1) {
                self.last_publish_step = self.t.step;
                self.publish()?;
            }
            // Keep ingesting while training a long backlog (one step at a time is enough).
            if self.owed >= 1.0 && self.t.step.is_multiple_of(16) {
                break;
            }
        }
        Ok(())
    }

    /// A checkpoint (the newest five kept), then the model to Redis and to `models/`.
    fn publish(&mut self) -> Result<(), DistError> {
        let o = self.o;
        self.t.epoch += 1;
        self.t.save_checkpoint(o.dir(), Some(5)).map_err(other)?;
        let onnx = self.t.onnx().map_err(other)?;
        let m = ModelPayload {
            version: 0,
            step: self.t.step,
            preset: self.t.preset.name().into(),
            weights: self.t.weights(),
            onnx: onnx.clone(),
        };
        let v = self.q.publish_model(m, o.keep_models)?;
        publish_model_files(o.dir(), &format!("model-v{v:06}"), &onnx).map_err(other)?;
        prune_models(o.dir(), "model-v", o.keep_models);
        self.summary.published.push(v);
        self.published_step = Some(self.t.step);
        eprintln!(
            "train-worker: published model v{v} at step {} ({} games ingested)",
            self.t.step, self.t.games
        );
        Ok(())
    }
}

/// Steps 2–4 of the module doc for one batch of entries. Returns the new positions.
fn ingest(w: &mut Worker, entries: &[Entry]) -> Result<usize, DistError> {
    if entries.is_empty() {
        return Ok(0);
    }
    let (q, t, ledger, summary) = (&mut w.q, &mut w.t, &mut w.ledger, &mut w.summary);
    let dir = w.o.dir();
    let mut ack: Vec<String> = Vec::with_capacity(entries.len());
    let mut fresh: Vec<(String, GameRecord)> = Vec::new();
    let mut rejected = std::collections::BTreeMap::<&'static str, u64>::new();
    let mut dups = 0u64;
    let mut decoded = Vec::new();
    for e in entries {
        ack.push(e.id.clone());
        let Some(bytes) = &e.data else {
            continue; // deleted after delivery: already handled by someone
        };
        match payload::decode_game(bytes) {
            Ok(g) => decoded.push(g),
            Err(err) => {
                eprintln!("train-worker: rejected entry {}: {err}", e.id);
                *rejected.entry(err.kind()).or_default() += 1;
            }
        }
    }
    let ids: Vec<String> = decoded.iter().map(|g| g.game_id.clone()).collect();
    let in_redis = q.already_ingested(&ids)?;
    let mut batch_ids = BTreeSet::new();
    for (g, seen) in decoded.into_iter().zip(in_redis) {
        if seen || ledger.contains(&g.game_id) || !batch_ids.insert(g.game_id.clone()) {
            dups += 1;
            continue;
        }
        if g.record.board_size as usize != w.o.settings.board_size {
            *rejected.entry("board_size").or_default() += 1;
            continue;
        }
        fresh.push((g.game_id, g.record));
    }
    let mut positions = 0;
    let new_ids: Vec<String> = fresh.iter().map(|(id, _)| id.clone()).collect();
    if !fresh.is_empty() {
        let n = t.replay.next_chunk();
        store::write(&ledger_path(dir, n), LEDGER_MAGIC, LEDGER_VERSION, &new_ids)
            .map_err(|e| DistError::Other(e.to_string()))?;
        let games: Vec<GameRecord> = fresh.into_iter().map(|(_, r)| r).collect();
        positions = games.iter().map(GameRecord::positions).sum();
        let path = t
            .replay
            .add_chunk(games)
            .map_err(|e| DistError::Other(e.to_string()))?;
        if path != chunk_path(dir, n) {
            return Err(DistError::Other(format!(
                "replay wrote {} but the ledger names chunk {n}",
                path.display()
            )));
        }
        ledger.extend(new_ids.iter().cloned());
        t.games += new_ids.len() as u64;
    }
    q.mark_ingested(&new_ids)?;
    for (kind, n) in &rejected {
        q.count(&format!("rejected_{kind}"), *n)?;
        summary.rejected += n;
    }
    q.count("duplicates", dups)?;
    q.ack(&ack)?;
    summary.ingested += new_ids.len() as u64;
    summary.duplicates += dups;
    Ok(positions)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ledger write killed between its fsync and its rename leaves a complete temporary file:
    /// it must not count, and it must not stay (the process fault run found them piling up).
    #[test]
    fn interrupted_ledger_writes_are_removed_and_not_counted() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("ingest")).unwrap();
        std::fs::create_dir_all(dir.join("replay")).unwrap();
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        store::write(
            &ledger_path(dir, 0),
            LEDGER_MAGIC,
            LEDGER_VERSION,
            &ids(&["w:1:0"]),
        )
        .unwrap();
        std::fs::write(chunk_path(dir, 0), b"chunk").unwrap();
        let stray = dir.join("ingest").join(".ingest-00000001.bin.tmp.4242.7");
        store::write(&stray, LEDGER_MAGIC, LEDGER_VERSION, &ids(&["w:1:1"])).unwrap();
        // A ledger whose chunk never landed goes too.
        store::write(
            &ledger_path(dir, 2),
            LEDGER_MAGIC,
            LEDGER_VERSION,
            &ids(&["w:1:2"]),
        )
        .unwrap();

        let got = load_ledger(dir).unwrap();
        assert_eq!(got, BTreeSet::from(["w:1:0".to_string()]));
        assert!(!stray.exists(), "the temporary file is removed");
        assert!(!ledger_path(dir, 2).exists());
        assert!(ledger_path(dir, 0).exists());
    }
}
