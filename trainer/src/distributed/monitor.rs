//! `trainer monitor`: queue depth, pending (delivered, unacknowledged) entries, published models,
//! live workers (heartbeats) and the counters, as a refreshing terminal view or one snapshot
//! (`--once`, for scripts and tests). Rates come from the difference of two snapshots, or from
//! each worker's games since it started when there is only one.
//!
//! Depends on `queue`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use redis::cmd;

use super::queue::Queue;
use super::{DistError, now_s};

#[derive(Clone, Debug, Default)]
pub struct WorkerInfo {
    pub id: String,
    pub fields: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub queue_depth: u64,
    pub pending: u64,
    pub models: Vec<u64>,
    pub latest: Option<u64>,
    pub workers: Vec<WorkerInfo>,
    pub stats: BTreeMap<String, u64>,
    pub ingested_ids: u64,
}

impl Snapshot {
    pub fn stat(&self, k: &str) -> u64 {
        self.stats.get(k).copied().unwrap_or(0)
    }
}

pub fn snapshot(q: &mut Queue) -> Result<Snapshot, DistError> {
    let mut s = Snapshot {
        queue_depth: q.queue_depth()?,
        ..Snapshot::default()
    };
    s.pending = q.pending_count()?;
    s.models = q.model_versions()?;
    s.latest = q.latest_model_version()?;
    s.stats = q.stats()?;
    s.ingested_ids = q.redis.run(cmd("SCARD").arg(q.keys.ingested()))?;
    let pattern = q.keys.worker("*");
    let mut cursor = 0u64;
    let mut keys = Vec::new();
    loop {
        let (next, batch): (u64, Vec<String>) = q.redis.run(
            cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(200),
        )?;
        keys.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    keys.sort();
    keys.dedup();
    let strip = q.keys.worker("");
    for k in keys {
        let fields: BTreeMap<String, String> = q.redis.run(cmd("HGETALL").arg(&k))?;
        if !fields.is_empty() {
            s.workers.push(WorkerInfo {
                id: k.strip_prefix(&strip).unwrap_or(&k).to_string(),
                fields,
            });
        }
    }
    Ok(s)
}

/// The text view; `prev` (snapshot, seconds ago) gives queue-wide rates.
pub fn render(s: &Snapshot, prev: Option<(&Snapshot, f64)>) -> String {
    let mut out = String::new();
    let rate = |k: &str| -> String {
        match prev {
            Some((p, secs)) if secs > 0.0 => format!(
                "{:.1}/h",
                (s.stat(k).saturating_sub(p.stat(k))) as f64 * 3600.0 / secs
            ),
            _ => "-".into(),
        }
    };
    let _ = writeln!(
        out,
        "queue depth {}  pending {}  latest model {}  models [{}]",
        s.queue_depth,
        s.pending,
        s.latest.map_or("-".into(), |v| format!("v{v}")),
        s.models
            .iter()
            .map(|v| format!("v{v}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let _ = writeln!(
        out,
        "games pushed {} ({})  ingested {} ({})  duplicates {}  models published {}",
        s.stat("games_pushed"),
        rate("games_pushed"),
        s.stat("games_ingested"),
        rate("games_ingested"),
        s.stat("duplicates"),
        s.stat("models_published")
    );
    let rejected: Vec<String> = s
        .stats
        .iter()
        .filter(|(k, _)| k.starts_with("rejected_"))
        .map(|(k, v)| format!("{}={v}", &k["rejected_".len()..]))
        .collect();
    let _ = writeln!(
        out,
        "rejected payloads: {}",
        if rejected.is_empty() {
            "none".into()
        } else {
            rejected.join(" ")
        }
    );
    let _ = writeln!(out, "active workers: {}", s.workers.len());
    let now = now_s();
    for w in &s.workers {
        let get = |k: &str| w.fields.get(k).cloned().unwrap_or_default();
        let games: u64 = get("games").parse().unwrap_or(0);
        let started: u64 = get("started").parse().unwrap_or(now);
        let up = now.saturating_sub(started).max(1);
        let _ = writeln!(
            out,
            "  {:<20} {:<8} model v{:<5} games {:<7} {:>8.1} games/h  device {}{}{}",
            w.id,
            get("role"),
            get("model"),
            games,
            games as f64 * 3600.0 / up as f64,
            get("device"),
            w.fields
                .get("steps")
                .map(|s| format!("  steps {s}"))
                .unwrap_or_default(),
            if get("waiting") == "1" {
                "  waiting: queue full"
            } else {
                ""
            }
        );
    }
    out
}

/// The refreshing view (or one snapshot with `once`).
pub fn run(q: &mut Queue, once: bool, interval: Duration) -> Result<(), DistError> {
    if once {
        print!("{}", render(&snapshot(q)?, None));
        return Ok(());
    }
    let mut prev: Option<(Snapshot, Instant)> = None;
    loop {
        let s = snapshot(q)?;
        let view = render(
            &s,
            prev.as_ref().map(|(p, t)| (p, t.elapsed().as_secs_f64())),
        );
        // Clear the screen and home the cursor, then the view.
        print!("\x1b[2J\x1b[H{view}");
        use std::io::Write;
        let _ = std::io::stdout().flush();
        prev = Some((s, Instant::now()));
        std::thread::sleep(interval);
    }
}
