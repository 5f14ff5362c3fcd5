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
//! Depends on `queue`, `payload`, `replay`, `checkpoint`, `optim`, `run::{losses, batch_tensors}`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use engine::net::{ModelMeta, Preset, onnx_bytes};
use tch::{Device, nn};

use super::DistError;
use super::payload::{self, ModelPayload};
use super::queue::{Entry, Queue};
use crate::checkpoint::{self, Checkpoint};
use crate::model::Net;
use crate::optim::{OptimConfig, Optimizer, OptimizerKind};
use crate::replay::{GameRecord, Replay};
use crate::rng::Rng;
use crate::run::{batch_tensors, losses};
use crate::store;

const LEDGER_MAGIC: [u8; 4] = *b"FZIL";
const LEDGER_VERSION: u32 = 1;

#[derive(Clone, Debug)]
pub struct TrainWorkerOptions {
    pub redis_url: String,
    pub prefix: String,
    /// Consumer name in the group; reuse it after a restart to take back its own pending entries.
    pub consumer: String,
    pub dir: PathBuf,
    pub preset: Preset,
    pub board_size: usize,
    pub device: Device,
    pub seed: u64,
    pub batch_size: usize,
    pub optimizer: OptimizerKind,
    pub lr: f64,
    pub weight_decay: f64,
    pub replay_window: usize,
    /// Training steps owed per new position (as `--sample-reuse` / batch size in `run`).
    pub sample_reuse: f64,
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

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

struct Trainer<'a> {
    o: &'a TrainWorkerOptions,
    vs: nn::VarStore,
    net: Net,
    opt: Optimizer,
    replay: Replay,
    rng: Rng,
    step: u64,
    epoch: u64,
    games: u64,
}

impl Trainer<'_> {
    fn checkpoint(&mut self) -> Result<(), DistError> {
        let config = self.o.preset.config();
        let ck = Checkpoint {
            epoch: self.epoch,
            step: self.step,
            preset: self.o.preset.name().into(),
            blocks: config.blocks,
            channels: config.channels,
            rng: self.rng.clone(),
            next_chunk: self.replay.next_chunk(),
            games_played: self.games,
            best_epoch: 0,
            best_elo: 0.0,
            weights: checkpoint::capture(&self.vs),
            optimizer: self.opt.state(),
            best_weights: Vec::new(),
        };
        checkpoint::save(&self.o.dir, &ck).map_err(|e| DistError::Other(e.to_string()))?;
        // Keep the newest five checkpoints on disk.
        for (_, p) in checkpoint::list(&self.o.dir).into_iter().skip(5) {
            let _ = std::fs::remove_file(p);
        }
        Ok(())
    }

    fn model(&self) -> Result<ModelPayload, DistError> {
        let config = self.o.preset.config();
        let weights = self
            .net
            .export()
            .map_err(|e| DistError::Other(format!("export: {e}")))?;
        let meta = ModelMeta::for_config(&config, self.step);
        let onnx =
            onnx_bytes(&weights, &meta).map_err(|e| DistError::Other(format!("onnx: {e}")))?;
        Ok(ModelPayload {
            version: 0,
            step: self.step,
            preset: self.o.preset.name().into(),
            weights: checkpoint::capture(&self.vs),
            onnx,
        })
    }

    fn publish(&mut self, q: &mut Queue, summary: &mut TrainSummary) -> Result<(), DistError> {
        self.epoch += 1;
        self.checkpoint()?;
        let m = self.model()?;
        let onnx = m.onnx.clone();
        let v = q.publish_model(m, self.o.keep_models)?;
        let models = self.o.dir.join("models");
        std::fs::create_dir_all(&models).map_err(|e| DistError::Other(e.to_string()))?;
        store::write_atomic(&models.join(format!("model-v{v:06}.onnx")), &onnx)
            .map_err(|e| DistError::Other(e.to_string()))?;
        store::write_atomic(&models.join("latest.onnx"), &onnx)
            .map_err(|e| DistError::Other(e.to_string()))?;
        let mut files: Vec<PathBuf> = std::fs::read_dir(&models)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.path())
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("model-v"))
                    })
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        let excess = files.len().saturating_sub(self.o.keep_models.max(1));
        for p in &files[..excess] {
            let _ = std::fs::remove_file(p);
        }
        summary.published.push(v);
        eprintln!(
            "train-worker: published model v{v} at step {} ({} games ingested)",
            self.step, self.games
        );
        Ok(())
    }

    fn train_step(&mut self) -> Result<bool, DistError> {
        let mut samples = Vec::with_capacity(self.o.batch_size);
        for _ in 0..self.o.batch_size {
            match self.replay.sample(&mut self.rng) {
                Some(Ok(x)) => samples.push(x),
                Some(Err(e)) => eprintln!("train-worker: bad replay sample skipped: {e}"),
                None => break,
            }
        }
        if samples.is_empty() {
            return Ok(false);
        }
        let (x, tp, tv) = batch_tensors(&samples, self.o.board_size, self.o.device);
        let (pl, vl) = losses(&self.net, &x, &tp, &tv);
        let loss = &pl + &vl;
        self.opt.zero_grad();
        loss.backward();
        self.opt.step();
        let l = loss.double_value(&[]);
        if !l.is_finite() {
            return Err(DistError::Other(format!(
                "loss is not finite at step {}: lower --lr",
                self.step
            )));
        }
        self.step += 1;
        Ok(true)
    }
}

pub fn run(o: &TrainWorkerOptions, stop: &AtomicBool) -> Result<TrainSummary, DistError> {
    let other = |e: String| DistError::Other(e);
    let ingest_dir = o.dir.join("ingest");
    std::fs::create_dir_all(&ingest_dir)
        .map_err(|e| other(format!("{}: {e}", ingest_dir.display())))?;
    let mut q = Queue::open(&o.redis_url, &o.prefix)?;
    q.redis.backoff.give_up_after = o.give_up_after;
    q.ensure_group()?;
    let mut summary = TrainSummary::default();

    let warn = |m: String| eprintln!("train-worker: warning: {m}");
    let config = o.preset.config();
    let vs = nn::VarStore::new(o.device);
    let net = Net::new(&vs.root(), config);
    let opt = Optimizer::new(
        &vs,
        OptimConfig {
            kind: o.optimizer,
            lr: o.lr,
            weight_decay: o.weight_decay,
            // Open-ended: a long cosine horizon, the schedule barely decays in a session.
            total_steps: 1_000_000,
            ..OptimConfig::default()
        },
    );
    let replay = Replay::open(&o.dir.join("replay"), o.replay_window, warn)
        .map_err(|e| other(e.to_string()))?;
    let mut t = Trainer {
        o,
        vs,
        net,
        opt,
        replay,
        rng: Rng::new(o.seed),
        step: 0,
        epoch: 0,
        games: 0,
    };
    let mut ledger = load_ledger(&o.dir)?;
    t.games = ledger.len() as u64;
    if let Some((path, ck)) = checkpoint::latest_valid(&o.dir, warn) {
        if ck.blocks != config.blocks || ck.channels != config.channels {
            return Err(other(format!(
                "{}: checkpoint is {}, asked for {}",
                path.display(),
                ck.preset,
                o.preset
            )));
        }
        checkpoint::restore(&t.vs, &ck.weights).map_err(other)?;
        t.opt.load_state(&ck.optimizer, ck.step).map_err(other)?;
        t.step = ck.step;
        t.epoch = ck.epoch;
        t.rng = ck.rng.clone();
        summary.resumed_step = Some(ck.step);
        eprintln!(
            "train-worker: resumed from {} (step {})",
            path.display(),
            ck.step
        );
    }
    // Workers need a model to start: publish the current one (fresh or resumed).
    t.publish(&mut q, &mut summary)?;

    let mut owed = 0.0f64;
    let mut last_publish_step = t.step;
    let mut last_claim = Instant::now() - o.claim_idle;
    let mut last_beat = Instant::now() - o.heartbeat_ttl;
    let mut own_pending_done = false;
    let mut claimed_once = false;
    let mut reconnects_seen = q.redis.reconnects;
    let started = now_s();
    loop {
        if stop.load(Ordering::Relaxed)
            || o.max_steps.is_some_and(|m| t.step >= m)
            || o.max_games.is_some_and(|m| t.games >= m)
        {
            break;
        }
        if last_beat.elapsed() >= o.heartbeat_ttl / 3 {
            last_beat = Instant::now();
            let fields = [
                ("role", "train".to_string()),
                ("games", t.games.to_string()),
                ("steps", t.step.to_string()),
                (
                    "model",
                    summary.published.last().copied().unwrap_or(0).to_string(),
                ),
                ("device", format!("{:?}", o.device)),
                ("started", started.to_string()),
                ("seen", now_s().to_string()),
            ];
            q.heartbeat(&o.consumer, &fields, o.heartbeat_ttl.as_secs().max(1))?;
        }
        // A read that died with the connection left its entries in our pending list: after a
        // reconnect, take those back first.
        if q.redis.reconnects != reconnects_seen {
            reconnects_seen = q.redis.reconnects;
            own_pending_done = false;
        }
        // 1. entries: own pending first (after a restart), then dead consumers', then new.
        let entries: Vec<Entry> = if !own_pending_done {
            let e = q.read(&o.consumer, "0", o.read_count, 0)?;
            if e.is_empty() {
                own_pending_done = true;
            } else {
                eprintln!(
                    "train-worker: {} entries pending from before, re-reading",
                    e.len()
                );
            }
            e
        } else if last_claim.elapsed() >= o.claim_idle / 2 {
            last_claim = Instant::now();
            claimed_once = true;
            let e = q.autoclaim(&o.consumer, o.claim_idle.as_millis() as u64, o.read_count)?;
            if e.is_empty() {
                q.read(&o.consumer, ">", o.read_count, o.block_ms)?
            } else {
                eprintln!("train-worker: reclaimed {} idle entries", e.len());
                e
            }
        } else {
            // Block briefly when there is training to do, long when idle.
            let block = if owed >= 1.0 { 1 } else { o.block_ms };
            q.read(&o.consumer, ">", o.read_count, block)?
        };
        if o.exit_when_drained
            && entries.is_empty()
            && own_pending_done
            && claimed_once
            && (owed < 1.0 || t.replay.len() < o.min_positions)
        {
            // Drained means nobody holds unacknowledged entries either (a dead consumer's are
            // reclaimed once they have been idle for claim_idle).
            if q.pending_count()? == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        let ti = Instant::now();
        let new_positions = ingest(&mut q, &mut t, &mut ledger, &entries, &mut summary)?;
        summary.ingest_seconds += ti.elapsed().as_secs_f64();
        owed += new_positions as f64 * o.sample_reuse / o.batch_size.max(1) as f64;

        // 2. train what the new positions paid for, then publish on schedule.
        while owed >= 1.0 && t.replay.len() >= o.min_positions {
            if o.max_steps.is_some_and(|m| t.step >= m) || stop.load(Ordering::Relaxed) {
                break;
            }
            if !t.train_step()? {
                break;
            }
            owed -= 1.0;
            summary.steps += 1;
            if t.step - last_publish_step >= o.publish_every.max(1) {
                last_publish_step = t.step;
                t.publish(&mut q, &mut summary)?;
            }
            // Keep ingesting while training a long backlog (one step at a time is enough).
            if owed >= 1.0 && t.step.is_multiple_of(16) {
                break;
            }
        }
    }
    if t.step > last_publish_step {
        t.publish(&mut q, &mut summary)?;
    }
    let _ = q
        .redis
        .run::<i64>(redis::cmd("DEL").arg(q.keys.worker(&o.consumer)));
    summary.reconnects = q.redis.reconnects;
    Ok(summary)
}

/// Steps 2–4 of the module doc for one batch of entries. Returns the new positions.
fn ingest(
    q: &mut Queue,
    t: &mut Trainer,
    ledger: &mut BTreeSet<String>,
    entries: &[Entry],
    summary: &mut TrainSummary,
) -> Result<usize, DistError> {
    if entries.is_empty() {
        return Ok(0);
    }
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
        if g.record.board_size as usize != t.o.board_size {
            *rejected.entry("board_size").or_default() += 1;
            continue;
        }
        fresh.push((g.game_id, g.record));
    }
    let mut positions = 0;
    let new_ids: Vec<String> = fresh.iter().map(|(id, _)| id.clone()).collect();
    if !fresh.is_empty() {
        let n = t.replay.next_chunk();
        store::write(
            &ledger_path(&t.o.dir, n),
            LEDGER_MAGIC,
            LEDGER_VERSION,
            &new_ids,
        )
        .map_err(|e| DistError::Other(e.to_string()))?;
        let games: Vec<GameRecord> = fresh.into_iter().map(|(_, r)| r).collect();
        positions = games.iter().map(GameRecord::positions).sum();
        let path = t
            .replay
            .add_chunk(games)
            .map_err(|e| DistError::Other(e.to_string()))?;
        if path != chunk_path(&t.o.dir, n) {
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
