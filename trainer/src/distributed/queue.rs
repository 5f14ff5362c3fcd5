//! The Redis side of the protocol, key by key (all under one prefix, default `fz`):
//!
//! - `{p}:games`            stream of game frames (field `g`); group `trainers` consumes it. The
//!   consumer acknowledges an entry only after its game is durably in the replay store, then
//!   deletes it, so `XLEN` is the queue depth (waiting + delivered-but-unacknowledged).
//! - `{p}:ingested`         set of game ids already in a replay store (de-duplication).
//! - `{p}:stats`            hash of counters (games_pushed, games_ingested, duplicates,
//!   rejected_<kind>, models_published).
//! - `{p}:model:{v}`        a model frame; `{p}:models` sorted set of live versions;
//!   `{p}:model:latest` the newest version (set after its frame, so it always resolves);
//!   `{p}:model:seq` the version counter.
//! - `{p}:worker:{id}`      heartbeat hash with a TTL; `{p}:boot:{id}` restart counter.
//!
//! Depends on `conn`, `payload`.

use std::collections::BTreeMap;

use redis::{Value, cmd};

use super::DistError;
use super::conn::Redis;
use super::payload::{self, GamePayload, ModelPayload};

pub const GROUP: &str = "trainers";

#[derive(Clone, Debug)]
pub struct Keys {
    pub prefix: String,
}

impl Keys {
    pub fn new(prefix: &str) -> Keys {
        Keys {
            prefix: prefix.to_string(),
        }
    }
    pub fn games(&self) -> String {
        format!("{}:games", self.prefix)
    }
    pub fn ingested(&self) -> String {
        format!("{}:ingested", self.prefix)
    }
    pub fn stats(&self) -> String {
        format!("{}:stats", self.prefix)
    }
    pub fn model(&self, v: u64) -> String {
        format!("{}:model:{v}", self.prefix)
    }
    pub fn models(&self) -> String {
        format!("{}:models", self.prefix)
    }
    pub fn latest(&self) -> String {
        format!("{}:model:latest", self.prefix)
    }
    pub fn model_seq(&self) -> String {
        format!("{}:model:seq", self.prefix)
    }
    pub fn worker(&self, id: &str) -> String {
        format!("{}:worker:{id}", self.prefix)
    }
    pub fn boot(&self, id: &str) -> String {
        format!("{}:boot:{id}", self.prefix)
    }
}

/// One stream entry: its id and the raw `g` field (None when the entry was deleted meanwhile).
#[derive(Clone, Debug)]
pub struct Entry {
    pub id: String,
    pub data: Option<Vec<u8>>,
}

fn reply(cmd: &'static str, why: impl Into<String>) -> DistError {
    DistError::Reply {
        cmd,
        why: why.into(),
    }
}

fn as_bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b.clone()),
        Value::SimpleString(s) => Some(s.as_bytes().to_vec()),
        _ => None,
    }
}

fn as_string(v: &Value) -> Option<String> {
    as_bytes(v).and_then(|b| String::from_utf8(b).ok())
}

/// `[[id, [field, value, …]], …]` into entries.
fn parse_entries(v: &Value, cmd: &'static str) -> Result<Vec<Entry>, DistError> {
    let Value::Array(items) = v else {
        return Err(reply(cmd, "entries are not an array"));
    };
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        let Value::Array(pair) = it else {
            return Err(reply(cmd, "entry is not an array"));
        };
        let id = pair
            .first()
            .and_then(as_string)
            .ok_or_else(|| reply(cmd, "entry without id"))?;
        let mut data = None;
        if let Some(Value::Array(fields)) = pair.get(1) {
            for kv in fields.chunks(2) {
                if kv.len() == 2 && as_string(&kv[0]).as_deref() == Some("g") {
                    data = as_bytes(&kv[1]);
                }
            }
        }
        out.push(Entry { id, data });
    }
    Ok(out)
}

pub struct Queue {
    pub redis: Redis,
    pub keys: Keys,
}

impl Queue {
    pub fn open(url: &str, prefix: &str) -> Result<Queue, DistError> {
        Ok(Queue {
            redis: Redis::open(url)?,
            keys: Keys::new(prefix),
        })
    }

    /// Pushes one game (checked and framed). Returns the stream entry id.
    pub fn push_game(&mut self, g: &GamePayload) -> Result<String, DistError> {
        let bytes = payload::encode_game(g)?;
        let mut p = redis::pipe();
        p.atomic()
            .cmd("XADD")
            .arg(self.keys.games())
            .arg("*")
            .arg("g")
            .arg(bytes)
            .cmd("HINCRBY")
            .arg(self.keys.stats())
            .arg("games_pushed")
            .arg(1)
            .ignore();
        let (id,): (String,) = self.redis.pipe(&p)?;
        Ok(id)
    }

    /// Games in the stream (XLEN): waiting plus delivered-but-unacknowledged, since the consumer
    /// deletes an entry when it acknowledges it. A missing stream is 0. Self-play workers hold
    /// back on it and the monitor shows it, so both read the same number.
    pub fn queue_depth(&mut self) -> Result<u64, DistError> {
        self.redis.run(cmd("XLEN").arg(self.keys.games()))
    }

    /// Creates the consumer group (and stream) if missing; a group that exists is fine.
    pub fn ensure_group(&mut self) -> Result<(), DistError> {
        let r: Result<(), DistError> = self.redis.run(
            cmd("XGROUP")
                .arg("CREATE")
                .arg(self.keys.games())
                .arg(GROUP)
                .arg("0")
                .arg("MKSTREAM"),
        );
        match r {
            Err(DistError::Redis(e)) if e.code() == Some("BUSYGROUP") => Ok(()),
            other => other,
        }
    }

    /// XREADGROUP: `start` is `>` for new entries or `0` for this consumer's own pending ones.
    /// Recreates the group when Redis lost it (restart without persistence).
    pub fn read(
        &mut self,
        consumer: &str,
        start: &str,
        count: usize,
        block_ms: u64,
    ) -> Result<Vec<Entry>, DistError> {
        for _ in 0..2 {
            let mut c = cmd("XREADGROUP");
            c.arg("GROUP")
                .arg(GROUP)
                .arg(consumer)
                .arg("COUNT")
                .arg(count);
            if start == ">" {
                c.arg("BLOCK").arg(block_ms);
            }
            c.arg("STREAMS").arg(self.keys.games()).arg(start);
            match self.redis.run::<Value>(&c) {
                Ok(Value::Nil) => return Ok(Vec::new()),
                Ok(Value::Array(streams)) => {
                    let mut out = Vec::new();
                    for s in &streams {
                        if let Value::Array(kv) = s
                            && let Some(entries) = kv.get(1)
                        {
                            out.extend(parse_entries(entries, "XREADGROUP")?);
                        }
                    }
                    return Ok(out);
                }
                Ok(Value::Map(streams)) => {
                    let mut out = Vec::new();
                    for (_, entries) in &streams {
                        out.extend(parse_entries(entries, "XREADGROUP")?);
                    }
                    return Ok(out);
                }
                Ok(other) => return Err(reply("XREADGROUP", format!("{other:?}"))),
                Err(DistError::Redis(e)) if e.code() == Some("NOGROUP") => self.ensure_group()?,
                Err(e) => return Err(e),
            }
        }
        Err(reply("XREADGROUP", "consumer group vanished twice"))
    }

    /// XAUTOCLAIM: takes over entries another consumer left unacknowledged for `min_idle_ms`
    /// (a train worker that died between reading and acknowledging).
    pub fn autoclaim(
        &mut self,
        consumer: &str,
        min_idle_ms: u64,
        count: usize,
    ) -> Result<Vec<Entry>, DistError> {
        let mut start = "0-0".to_string();
        let mut out = Vec::new();
        loop {
            let r = self.redis.run::<Value>(
                cmd("XAUTOCLAIM")
                    .arg(self.keys.games())
                    .arg(GROUP)
                    .arg(consumer)
                    .arg(min_idle_ms)
                    .arg(&start)
                    .arg("COUNT")
                    .arg(count),
            );
            let v = match r {
                Err(DistError::Redis(e)) if e.code() == Some("NOGROUP") => {
                    self.ensure_group()?;
                    return Ok(out);
                }
                other => other?,
            };
            let Value::Array(parts) = v else {
                return Err(reply("XAUTOCLAIM", "not an array"));
            };
            let next = parts.first().and_then(as_string).unwrap_or_default();
            if let Some(entries) = parts.get(1) {
                out.extend(parse_entries(entries, "XAUTOCLAIM")?);
            }
            // Deleted entries are dropped from the PEL by Redis 7 itself (third element).
            if next == "0-0" || next.is_empty() || out.len() >= count {
                return Ok(out);
            }
            start = next;
        }
    }

    /// Entries delivered to some consumer and not yet acknowledged (XPENDING summary).
    pub fn pending_count(&mut self) -> Result<u64, DistError> {
        match self
            .redis
            .run::<Value>(cmd("XPENDING").arg(self.keys.games()).arg(GROUP))
        {
            Ok(Value::Array(v)) => Ok(match v.first() {
                Some(Value::Int(n)) => *n as u64,
                _ => 0,
            }),
            Ok(_) => Ok(0),
            Err(DistError::Redis(e)) if e.code() == Some("NOGROUP") => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// Acknowledges and deletes entries (only after their games are durable).
    pub fn ack(&mut self, ids: &[String]) -> Result<(), DistError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut p = redis::pipe();
        p.atomic()
            .cmd("XACK")
            .arg(self.keys.games())
            .arg(GROUP)
            .arg(ids)
            .ignore()
            .cmd("XDEL")
            .arg(self.keys.games())
            .arg(ids)
            .ignore();
        self.redis.pipe::<()>(&p)
    }

    /// Which of `ids` are already recorded as ingested (SMISMEMBER, order kept).
    pub fn already_ingested(&mut self, ids: &[String]) -> Result<Vec<bool>, DistError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let v: Vec<i64> = self
            .redis
            .run(cmd("SMISMEMBER").arg(self.keys.ingested()).arg(ids))?;
        Ok(v.into_iter().map(|x| x != 0).collect())
    }

    pub fn mark_ingested(&mut self, ids: &[String]) -> Result<(), DistError> {
        if ids.is_empty() {
            return Ok(());
        }
        let mut p = redis::pipe();
        p.atomic()
            .cmd("SADD")
            .arg(self.keys.ingested())
            .arg(ids)
            .ignore()
            .cmd("HINCRBY")
            .arg(self.keys.stats())
            .arg("games_ingested")
            .arg(ids.len())
            .ignore();
        self.redis.pipe::<()>(&p)
    }

    pub fn count(&mut self, counter: &str, by: u64) -> Result<(), DistError> {
        if by == 0 {
            return Ok(());
        }
        self.redis
            .run::<i64>(cmd("HINCRBY").arg(self.keys.stats()).arg(counter).arg(by))
            .map(|_| ())
    }

    pub fn stats(&mut self) -> Result<BTreeMap<String, u64>, DistError> {
        let m: BTreeMap<String, String> = self.redis.run(cmd("HGETALL").arg(self.keys.stats()))?;
        Ok(m.into_iter()
            .filter_map(|(k, v)| v.parse().ok().map(|v| (k, v)))
            .collect())
    }

    /// The next restart number of `worker_id` (makes game ids unique across restarts).
    pub fn boot(&mut self, worker_id: &str) -> Result<u64, DistError> {
        self.redis.run(cmd("INCR").arg(self.keys.boot(worker_id)))
    }

    /// Publishes a model: frame first, then the version list, then `latest`; keeps the newest
    /// `keep` versions. Returns the version given to it.
    pub fn publish_model(&mut self, mut m: ModelPayload, keep: usize) -> Result<u64, DistError> {
        let v: u64 = self.redis.run(cmd("INCR").arg(self.keys.model_seq()))?;
        m.version = v;
        let bytes = payload::encode_model(&m)?;
        let mut p = redis::pipe();
        p.atomic()
            .cmd("SET")
            .arg(self.keys.model(v))
            .arg(bytes)
            .ignore()
            .cmd("ZADD")
            .arg(self.keys.models())
            .arg(v)
            .arg(v)
            .ignore()
            .cmd("SET")
            .arg(self.keys.latest())
            .arg(v)
            .ignore()
            .cmd("HINCRBY")
            .arg(self.keys.stats())
            .arg("models_published")
            .arg(1)
            .ignore();
        self.redis.pipe::<()>(&p)?;
        let old: Vec<u64> = self.redis.run(
            cmd("ZRANGE")
                .arg(self.keys.models())
                .arg(0)
                .arg(-(keep.max(1) as i64) - 1),
        )?;
        for o in old {
            let mut p = redis::pipe();
            p.atomic()
                .cmd("DEL")
                .arg(self.keys.model(o))
                .ignore()
                .cmd("ZREM")
                .arg(self.keys.models())
                .arg(o)
                .ignore();
            self.redis.pipe::<()>(&p)?;
        }
        Ok(v)
    }

    pub fn latest_model_version(&mut self) -> Result<Option<u64>, DistError> {
        self.redis.run(cmd("GET").arg(self.keys.latest()))
    }

    pub fn model_versions(&mut self) -> Result<Vec<u64>, DistError> {
        self.redis
            .run(cmd("ZRANGE").arg(self.keys.models()).arg(0).arg(-1))
    }

    /// The newest model, checked; None when none is published. A frame that fails its checks is
    /// counted and reported as an error (the caller keeps its current model).
    pub fn fetch_latest_model(&mut self) -> Result<Option<ModelPayload>, DistError> {
        // `latest` may move (and old frames be pruned) between the two reads: retry a few times.
        for _ in 0..5 {
            let Some(v) = self.latest_model_version()? else {
                return Ok(None);
            };
            let bytes: Option<Vec<u8>> = self.redis.run(cmd("GET").arg(self.keys.model(v)))?;
            if let Some(b) = bytes {
                return match payload::decode_model(&b) {
                    Ok(m) => Ok(Some(m)),
                    Err(e) => {
                        self.count(&format!("rejected_model_{}", e.kind()), 1)?;
                        Err(e.into())
                    }
                };
            }
        }
        Ok(None)
    }

    /// Heartbeat: a hash that expires after `ttl_s` unless refreshed.
    pub fn heartbeat(
        &mut self,
        worker_id: &str,
        fields: &[(&str, String)],
        ttl_s: u64,
    ) -> Result<(), DistError> {
        let key = self.keys.worker(worker_id);
        let mut p = redis::pipe();
        p.atomic().cmd("HSET").arg(&key);
        for (k, v) in fields {
            p.arg(*k).arg(v);
        }
        p.ignore()
            .cmd("EXPIRE")
            .arg(&key)
            .arg(ttl_s.max(1))
            .ignore();
        self.redis.pipe::<()>(&p)
    }
}
