//! SIGTERM to the real distributed workers (issue #15's "nothing already saved is lost", for the
//! signal `timeout`, systemd and batch systems send): a real redis-server, one `trainer
//! train-worker` that publishes only at start (so every later step exists only in its memory)
//! and one `trainer selfplay-worker` on the tiny 7x7 setup.
//!
//! The self-play worker, signalled while it plays a batch, pushes that batch and exits with 143;
//! the count it reports is Redis's. The train worker, signalled after training, checkpoints and
//! publishes the steps it trained since its start (model version 2 at its last step), removes its
//! heartbeat and exits with 143. A self-play worker signalled while it still waits for the first
//! model exits with 143 and no games, not with an error. With Redis killed, both leave their
//! reconnect backoff at the signal (not after `--give-up-after-s`): the train worker checkpoints
//! its steps, which a restarted train worker publishes first, and the self-play worker says how
//! many games it could not push.
//!
//! Depends on the `trainer` binary, `redis-server`, and the public `distributed::queue` and
//! `checkpoint` APIs only.

use crate::distributed_support as support;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use trainer::distributed::queue::Queue;

const BATCH: usize = 4;

fn spawn(log: &Path, args: &[String]) -> Child {
    Command::new(support::trainer_bin())
        .env("FIVEZERO_PROGRESS_SECS", "0")
        .args(args)
        .stdout(Stdio::null())
        .stderr(File::create(log).expect("log file"))
        .spawn()
        .expect("spawn trainer")
}

fn train_worker_args(dir: &Path, url: &str) -> Vec<String> {
    let mut args = support::tiny_flags(dir);
    args.extend(
        [
            "train-worker",
            "--redis-url",
            url,
            "--consumer",
            "t0",
            "--min-positions",
            "16",
            "--publish-every",
            "1000000",
            "--heartbeat-ttl-s",
            "3",
            "--give-up-after-s",
            "600",
        ]
        .map(String::from),
    );
    args
}

fn selfplay_worker_args(dir: &Path, url: &str) -> Vec<String> {
    let mut args = support::flags(dir, 16, BATCH);
    args.extend(
        [
            "selfplay-worker",
            "--redis-url",
            url,
            "--worker-id",
            "w1",
            "--model-check-games",
            "4",
            "--wait-model-s",
            "60",
            "--give-up-after-s",
            "600",
        ]
        .map(String::from),
    );
    args
}

/// A train worker and a self-play worker on `url`, their logs and run folders under `tmp`.
struct Workers {
    train: Child,
    worker: Child,
    train_log: PathBuf,
    worker_log: PathBuf,
    /// The train worker's run folder and its command line (to restart it).
    tdir: PathBuf,
    train_args: Vec<String>,
}

impl Workers {
    fn start(url: &str, tmp: &Path) -> Workers {
        let (train_log, worker_log) = (tmp.join("train.log"), tmp.join("w1.log"));
        let tdir = tmp.join("train");
        let train_args = train_worker_args(&tdir, url);
        Workers {
            train: spawn(&train_log, &train_args),
            worker: spawn(&worker_log, &selfplay_worker_args(&tmp.join("w1"), url)),
            train_log,
            worker_log,
            tdir,
            train_args,
        }
    }
}

fn term(child: &Child) {
    // SAFETY: kill(2) on the child's pid, which has not been waited for yet.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
}

fn wait_exit(child: &mut Child, secs: u64) -> Option<ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(secs) {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

fn wait_until(what: &str, secs: u64, logs: &[&Path], mut done: impl FnMut() -> bool) {
    let t = Instant::now();
    while !done() {
        if t.elapsed() > Duration::from_secs(secs) {
            let text: Vec<String> = logs
                .iter()
                .map(|l| std::fs::read_to_string(l).unwrap_or_default())
                .collect();
            panic!("timed out waiting for {what}:\n{}", text.join("\n---\n"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn heartbeat_field(con: &mut redis::Connection, id: &str, field: &str) -> Option<u64> {
    redis::cmd("HGET")
        .arg(format!("fz:worker:{id}"))
        .arg(field)
        .query::<Option<String>>(con)
        .ok()
        .flatten()
        .and_then(|s| s.parse().ok())
}

fn games_pushed(q: &mut Queue) -> u64 {
    q.stats().unwrap().get("games_pushed").copied().unwrap_or(0)
}

#[test]
fn stopped_workers_push_their_batch_and_publish_their_steps() {
    let _watchdog = support::watchdog(300);
    let server = support::RedisServer::tcp();
    let url = server.url.clone();
    let mut con = server.con();
    let tmp = tempfile::tempdir().unwrap();
    let mut q = Queue::open(&url, "fz").unwrap();
    let mut w = Workers::start(&url, tmp.path());
    let logs = [w.train_log.as_path(), w.worker_log.as_path()];

    // The train worker has trained on pushed games (its heartbeat counts steps) and the
    // self-play worker has just finished a batch, so the signal lands inside the next one.
    wait_until("trained steps", 120, &logs, || {
        heartbeat_field(&mut con, "t0", "steps").is_some_and(|s| s > 0)
    });
    let before = games_pushed(&mut q);
    wait_until("the next batch", 60, &logs, || {
        games_pushed(&mut q) > before
    });
    let at_signal = games_pushed(&mut q);
    term(&w.worker);
    let status = wait_exit(&mut w.worker, 120);
    let text = std::fs::read_to_string(&w.worker_log).unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(143), "{text}");
    let pushed = games_pushed(&mut q);
    assert!(
        pushed > at_signal && pushed.is_multiple_of(BATCH as u64),
        "{at_signal} games pushed at the signal, {pushed} after:\n{text}"
    );
    assert!(
        text.contains(&format!("selfplay-worker w1: {pushed} games")),
        "{text}"
    );

    // The train worker: its steps since the start are only in memory until the signal.
    let steps = heartbeat_field(&mut con, "t0", "steps").unwrap();
    assert_eq!(q.latest_model_version().unwrap(), Some(1));
    term(&w.train);
    let status = wait_exit(&mut w.train, 120);
    let text = std::fs::read_to_string(&w.train_log).unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(143), "{text}");
    let (_, saved) =
        trainer::network::checkpoint::latest_valid(&w.tdir, |_| {}).expect("a checkpoint");
    assert!(saved.step >= steps && saved.step > 0, "{text}");
    let model = q.fetch_latest_model().unwrap().expect("a model");
    assert_eq!((model.version, model.step), (2, saved.step), "{text}");
    assert_eq!(heartbeat_field(&mut con, "t0", "steps"), None, "{text}");
    eprintln!(
        "stop run: self-play worker signalled at {at_signal} games pushed, exited with {pushed}; \
         train worker published v2 at step {} (heartbeat said {steps})",
        saved.step
    );
}

#[test]
fn a_worker_stopped_before_any_model_exits_with_no_games() {
    let _watchdog = support::watchdog(120);
    let server = support::RedisServer::tcp();
    let mut con = server.con();
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("w0.log");
    let mut args = support::tiny_flags(&tmp.path().join("w0"));
    args.extend(
        [
            "selfplay-worker",
            "--redis-url",
            &server.url,
            "--worker-id",
            "w0",
            "--wait-model-s",
            "600",
        ]
        .map(String::from),
    );
    let mut worker = spawn(&log, &args);
    // Its heartbeat starts before it looks for a model, and no model is ever published.
    wait_until("the heartbeat", 60, &[log.as_path()], || {
        heartbeat_field(&mut con, "w0", "started").is_some()
    });
    term(&worker);
    let status = wait_exit(&mut worker, 60);
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(143), "{text}");
    assert!(text.contains("selfplay-worker w0: 0 games"), "{text}");
}

#[test]
fn workers_stopped_while_redis_is_down_exit_at_once_and_keep_the_steps() {
    let _watchdog = support::watchdog(300);
    let mut server = support::RedisServer::tcp();
    let url = server.url.clone();
    let mut con = server.con();
    let tmp = tempfile::tempdir().unwrap();
    let mut w = Workers::start(&url, tmp.path());
    let logs = [w.train_log.as_path(), w.worker_log.as_path()];
    wait_until("trained steps", 120, &logs, || {
        heartbeat_field(&mut con, "t0", "steps").is_some_and(|s| s > 0)
    });
    let steps = heartbeat_field(&mut con, "t0", "steps").unwrap();
    drop(con);
    server.kill();
    // Both meet the dead server (the train worker within its 1 s read block, the self-play
    // worker at its next push) and wait in the backoff, which gives up only after 600 s.
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    term(&w.train);
    term(&w.worker);
    let train_status = wait_exit(&mut w.train, 60);
    let worker_status = wait_exit(&mut w.worker, 60);
    let took = t.elapsed();
    let train_text = std::fs::read_to_string(&w.train_log).unwrap();
    let worker_text = std::fs::read_to_string(&w.worker_log).unwrap();
    assert_eq!(
        train_status.and_then(|s| s.code()),
        Some(143),
        "{train_text}"
    );
    assert_eq!(
        worker_status.and_then(|s| s.code()),
        Some(143),
        "{worker_text}"
    );
    assert!(
        worker_text.contains("stopped while Redis did not answer")
            && worker_text.contains("played and not pushed"),
        "{worker_text}"
    );
    let (_, saved) =
        trainer::network::checkpoint::latest_valid(&w.tdir, |_| {}).expect("a checkpoint");
    assert!(saved.step >= steps, "{train_text}");
    assert!(
        train_text.contains(&format!("step {} is checkpointed", saved.step))
            && train_text.contains("not published"),
        "{train_text}"
    );

    // Redis back (its AOF kept model v1): a restarted train worker publishes that step first.
    server.start();
    let mut again = w.train_args.clone();
    again.extend(["--max-steps".to_string(), saved.step.to_string()]);
    let restart_log = tmp.path().join("train2.log");
    let mut restarted = spawn(&restart_log, &again);
    let status = wait_exit(&mut restarted, 120);
    let text = std::fs::read_to_string(&restart_log).unwrap();
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{text}");
    let mut q = Queue::open(&url, "fz").unwrap();
    let model = q.fetch_latest_model().unwrap().expect("a model");
    assert_eq!((model.version, model.step), (2, saved.step), "{text}");
    eprintln!(
        "stop with Redis down: both workers exited 143 {:.2} s after the signal; step {} \
         checkpointed (heartbeat said {steps}), published as v2 on restart",
        took.as_secs_f64(),
        saved.step
    );
}
