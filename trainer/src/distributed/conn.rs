//! One Redis connection that survives Redis restarts: a command that fails for a connection
//! reason (refused, dropped, timed out, `LOADING` while Redis replays its AOF) drops the socket
//! and is retried with exponential backoff until `give_up_after`. AUTH and TLS come from the URL
//! (`redis://:password@host:port/db`, `rediss://…`, `redis+unix:///path`).
//!
//! A process stopping on SIGINT/SIGTERM (`stop_on`) leaves the backoff within 50 ms with
//! `DistError::Stopped`, so a worker whose Redis is down still saves what it can and exits,
//! instead of waiting out `give_up_after`; a Redis that answers still gets every command.
//!
//! A retried write may have reached Redis before the connection died, so callers make every write
//! idempotent or tolerate a duplicate (games carry ids and the consumer de-duplicates).
//!
//! Depends on the redis crate only.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use redis::{Client, Cmd, Connection, FromRedisValue, Pipeline, RedisError};

use super::DistError;

#[derive(Clone, Debug)]
pub struct Backoff {
    pub initial: Duration,
    pub max: Duration,
    /// Give up (with `DistError::Unreachable`) after this long without a successful command.
    pub give_up_after: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(50),
            max: Duration::from_secs(2),
            give_up_after: Duration::from_secs(300),
        }
    }
}

pub struct Redis {
    client: Client,
    con: Option<Connection>,
    pub backoff: Backoff,
    /// Successful reconnections after a lost connection (the monitor and tests read it).
    pub reconnects: u64,
    ever_connected: bool,
    /// Set by a stop signal: the backoff gives up at once (see the module doc).
    stop: Option<&'static AtomicBool>,
}

/// Failures worth a reconnect and retry; everything else (wrong type, syntax) is a bug to report.
pub fn is_transient(e: &RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || matches!(
            e.code(),
            Some("LOADING") | Some("MASTERDOWN") | Some("TRYAGAIN")
        )
}

impl Redis {
    /// Parses the URL (no connection yet: the first command connects).
    pub fn open(url: &str) -> Result<Redis, DistError> {
        // rediss:// needs a process-wide rustls provider; a second install is refused, harmlessly.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Ok(Redis {
            client: Client::open(url)?,
            con: None,
            backoff: Backoff::default(),
            reconnects: 0,
            ever_connected: false,
            stop: None,
        })
    }

    /// Leave the backoff with `DistError::Stopped` once `flag` is set.
    pub fn stop_on(&mut self, flag: &'static AtomicBool) {
        self.stop = Some(flag);
    }

    fn stopping(&self) -> bool {
        self.stop.is_some_and(|f| f.load(Ordering::Relaxed))
    }

    fn connection(&mut self) -> Result<&mut Connection, RedisError> {
        if self.con.is_none() {
            let con = self
                .client
                .get_connection_with_timeout(Duration::from_secs(3))?;
            // Blocking reads use BLOCK <= 2 s; a reply slower than this means a dead server.
            con.set_read_timeout(Some(Duration::from_secs(15)))?;
            con.set_write_timeout(Some(Duration::from_secs(15)))?;
            // A plain command first: an AUTH failure surfaces here as a typed error (redis-rs
            // 1.8 underflows when MULTI itself is refused, as it is with NOAUTH).
            let mut con = con;
            redis::cmd("PING").query::<String>(&mut con)?;
            if self.ever_connected {
                self.reconnects += 1;
            }
            self.ever_connected = true;
            self.con = Some(con);
        }
        // Just set above when it was None.
        self.con
            .as_mut()
            .ok_or_else(|| RedisError::from(std::io::Error::other("no connection")))
    }

    fn retry<T>(
        &mut self,
        mut op: impl FnMut(&mut Connection) -> Result<T, RedisError>,
    ) -> Result<T, DistError> {
        let start = Instant::now();
        let mut wait = self.backoff.initial;
        loop {
            let result = self.connection().and_then(&mut op);
            match result {
                Ok(v) => return Ok(v),
                Err(e) if is_transient(&e) => {
                    self.con = None;
                    if start.elapsed() >= self.backoff.give_up_after {
                        return Err(DistError::Unreachable {
                            secs: start.elapsed().as_secs_f64(),
                            last: e.to_string(),
                        });
                    }
                    let slept = Instant::now();
                    while slept.elapsed() < wait && !self.stopping() {
                        std::thread::sleep(wait.min(Duration::from_millis(50)));
                    }
                    if self.stopping() {
                        return Err(DistError::Stopped {
                            last: e.to_string(),
                        });
                    }
                    wait = (wait * 2).min(self.backoff.max);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    pub fn run<T: FromRedisValue>(&mut self, cmd: &Cmd) -> Result<T, DistError> {
        self.retry(|c| cmd.query(c))
    }

    /// A MULTI/EXEC pipeline (atomic on the server), retried as a whole.
    pub fn pipe<T: FromRedisValue>(&mut self, p: &Pipeline) -> Result<T, DistError> {
        self.retry(|c| p.query(c))
    }
}
