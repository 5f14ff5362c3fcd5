//! End to end against a real redis-server on loopback: a train worker (in this process) and two
//! self-play worker processes (the `trainer selfplay-worker` binary) on the tiny 7x7 setup. The
//! workers start on the train worker's first model, the train worker ingests every game once,
//! publishes newer models, and the workers pick them up between batches. `monitor --once` sees it.

use crate::distributed_support as support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use trainer::distributed::queue::Queue;
use trainer::distributed::train_worker::{self, TrainWorkerOptions};

const PER_WORKER: u64 = 24;

#[test]
fn two_workers_feed_a_trainer_and_pick_up_its_models() {
    let _watchdog = support::watchdog(240);
    let server = support::RedisServer::tcp();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url.clone();
    let tdir = dir.path().join("train");
    let o = TrainWorkerOptions {
        redis_url: url.clone(),
        prefix: "fz".into(),
        consumer: "t0".into(),
        settings: support::tiny_settings(&tdir),
        device: tch::Device::Cpu,
        min_positions: 32,
        publish_every: 2,
        keep_models: 5,
        read_count: 8,
        block_ms: 200,
        claim_idle: Duration::from_secs(30),
        max_steps: None,
        exit_when_drained: false,
        max_games: Some(2 * PER_WORKER),
        heartbeat_ttl: Duration::from_secs(10),
        give_up_after: Duration::from_secs(20),
    };
    let t0 = Instant::now();
    let trainer = std::thread::spawn(move || train_worker::run(&o, &support::NEVER_STOP));

    let workers: Vec<_> = ["w1", "w2"]
        .iter()
        .map(|id| {
            let wdir = dir.path().join(id);
            Command::new(support::trainer_bin())
                // Slow enough (128 simulations, 2 games a batch) that models arrive mid-run:
                // at 32 the workers on ONNX Runtime played all 24 games in 1.2-2.1 s, before the
                // trainer's second model, on a 2-core machine.
                .args(support::flags(&wdir, 128, 2))
                .args(["selfplay-worker", "--redis-url", &url, "--worker-id", id])
                .args(["--model-check-games", "2", "--max-games"])
                .arg(PER_WORKER.to_string())
                .args(["--heartbeat-ttl-s", "5", "--wait-model-s", "60"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn trainer selfplay-worker")
        })
        .collect();

    // While they run, the monitor sees live workers.
    let mut saw_workers = 0;
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(60) {
        let out = Command::new(support::trainer_bin())
            .args(["monitor", "--redis-url", &url, "--once"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(text.contains("queue depth"), "{text}");
        saw_workers = text.matches("selfplay").count();
        if saw_workers == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(saw_workers, 2, "monitor never showed both workers");

    let mut swaps_seen = 0;
    let mut queue_ms = Vec::new();
    for w in workers {
        let out = w.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "worker failed: {err}");
        // A CPU worker searches with each version's ONNX file on ONNX Runtime (the default
        // `--selfplay-backend auto`); model swaps load the new file.
        assert!(err.contains("self-play on ONNX Runtime"), "{err}");
        // "… model vN (K swaps), play … s, queue X ms/game, …"
        let swaps: u64 = err
            .split(" swaps)")
            .next()
            .and_then(|s| s.rsplit('(').next())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("no summary in {err}"));
        swaps_seen += swaps;
        if let Some(ms) = err
            .split(" ms/game")
            .next()
            .and_then(|s| s.rsplit(' ').next())
            .and_then(|s| s.parse::<f64>().ok())
        {
            queue_ms.push(ms);
        }
        eprintln!("{}", err.trim());
    }
    let sum = trainer.join().unwrap().expect("train worker");
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "e2e: {} games in {secs:.1} s ({:.0} games/h through the queue), {} steps, models {:?}, \
         queue overhead {queue_ms:?} ms/game pushed, {:.2} ms/game ingested",
        sum.ingested,
        sum.ingested as f64 * 3600.0 / secs,
        sum.steps,
        sum.published,
        sum.ingest_seconds * 1000.0 / sum.ingested.max(1) as f64
    );
    assert_eq!(sum.ingested, 2 * PER_WORKER, "every game ingested once");
    assert_eq!(sum.duplicates, 0);
    assert_eq!(sum.rejected, 0);
    assert!(sum.steps > 0, "trained");
    assert!(sum.published.len() >= 2, "published beyond the first model");
    assert!(swaps_seen >= 1, "a worker hot-swapped to a newer model");

    let mut q = Queue::open(&url, "fz").unwrap();
    let versions = q.model_versions().unwrap();
    assert!(versions.len() <= 5, "keeps the newest five: {versions:?}");
    assert_eq!(versions.last().copied(), q.latest_model_version().unwrap());
    let latest = q.fetch_latest_model().unwrap().expect("a model");
    assert!(!latest.onnx.is_empty() && !latest.weights.is_empty());
    // The local ONNX copy is the engine's contract: it loads as a model file.
    assert!(tdir.join("models/latest.onnx").exists());
    let stats = q.stats().unwrap();
    assert_eq!(stats.get("games_pushed"), Some(&(2 * PER_WORKER)));
    assert_eq!(stats.get("games_ingested"), Some(&(2 * PER_WORKER)));
    // A replay store reopened from disk holds exactly those games.
    let replay =
        trainer::training::replay::Replay::open(&tdir.join("replay"), usize::MAX, |_| {}).unwrap();
    assert_eq!(replay.games().len() as u64, 2 * PER_WORKER);
}
