//! Backpressure against a real redis-server: a self-play worker that finds the games stream at
//! its `max_queue` limit pushes nothing while it stays there (its heartbeat stays alive and says
//! it is waiting, the monitor shows it, a Redis restart meanwhile is ridden out), resumes once the
//! stream is drained and counts the time it waited; a stop while waiting returns at once; and
//! `max_queue = 0` means no limit. The model is published by the test itself (tiny net, 7x7).

use crate::distributed_support as support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use engine::net::{ModelMeta, Preset, onnx_bytes};
use tch::nn;
use trainer::distributed::monitor;
use trainer::distributed::payload::{GamePayload, ModelPayload};
use trainer::distributed::queue::Queue;
use trainer::distributed::selfplay_worker::{self, SelfPlayWorkerOptions};
use trainer::network::checkpoint;
use trainer::network::model::Net;
use trainer::selfplay::SelfPlayConfig;

/// A freshly initialised tiny network, published the way the train worker publishes one.
fn publish_tiny_model(q: &mut Queue) -> u64 {
    let config = Preset::Tiny.config();
    let vs = nn::VarStore::new(tch::Device::Cpu);
    let net = Net::new(&vs.root(), config);
    let weights = net.export().expect("export");
    let onnx = onnx_bytes(&weights, &ModelMeta::for_config(&config, 0)).expect("onnx");
    let m = ModelPayload {
        version: 0,
        step: 0,
        preset: Preset::Tiny.name().into(),
        weights: checkpoint::capture(&vs),
        onnx,
    };
    q.publish_model(m, 5).expect("publish")
}

/// Fills the stream with `n` real games (ids `filler:i`).
fn fill(q: &mut Queue, n: usize) {
    for (i, record) in support::games(n, 3).into_iter().enumerate() {
        q.push_game(&GamePayload {
            game_id: format!("filler:{i}"),
            worker_id: "filler".into(),
            model_version: 1,
            record,
        })
        .expect("push");
    }
}

fn worker(url: &str, id: &str, max_queue: u64, max_games: u64) -> SelfPlayWorkerOptions {
    SelfPlayWorkerOptions {
        redis_url: url.into(),
        prefix: "fz".into(),
        worker_id: id.into(),
        selfplay: SelfPlayConfig {
            board_size: 7,
            simulations: 8,
            parallel_games: 2,
            seed: 9,
            ..SelfPlayConfig::default()
        },
        batch_games: 2,
        model_check_games: 4,
        max_games: Some(max_games),
        device: tch::Device::Cpu,
        onnx: None,
        heartbeat_ttl: Duration::from_secs(2),
        wait_model: Duration::from_secs(60),
        give_up_after: Duration::from_secs(30),
        max_queue,
    }
}

fn xlen(con: &mut redis::Connection) -> u64 {
    redis::cmd("XLEN").arg("fz:games").query(con).unwrap()
}

fn pushed(q: &mut Queue) -> u64 {
    q.stats().unwrap().get("games_pushed").copied().unwrap_or(0)
}

/// The worker's heartbeat field `waiting` ("" when the heartbeat is absent).
fn waiting_field(con: &mut redis::Connection, id: &str) -> String {
    let v: Option<String> = redis::cmd("HGET")
        .arg(format!("fz:worker:{id}"))
        .arg("waiting")
        .query(con)
        .unwrap();
    v.unwrap_or_default()
}

/// Until the heartbeat says the worker is waiting (it beats every ttl/3, ~0.7 s here).
fn until_waiting(con: &mut redis::Connection, id: &str) {
    let t = Instant::now();
    while waiting_field(con, id) != "1" {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the worker never reported waiting for the trainer"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A fresh redis-server with a tiny model published and `games` games queued: the server (kept
/// alive by the caller), its URL and a queue on it.
fn server_with_queue(games: usize) -> (support::RedisServer, String, Queue) {
    let _watchdog = support::watchdog(240);
    let server = support::RedisServer::tcp();
    let url = server.url.clone();
    let mut q = Queue::open(&url, "fz").unwrap();
    publish_tiny_model(&mut q);
    fill(&mut q, games);
    (server, url, q)
}

#[test]
fn worker_holds_back_while_the_queue_is_full_and_resumes_when_drained() {
    const LIMIT: u64 = 6;
    let (mut server, url, mut q) = server_with_queue(LIMIT as usize);
    let mut con = server.con();
    assert_eq!(xlen(&mut con), LIMIT);

    let o = worker(&url, "bp", LIMIT, 4);
    let handle = std::thread::spawn(move || selfplay_worker::run(&o, &support::NEVER_STOP));
    until_waiting(&mut con, "bp");

    // Held back for 3 s: nothing pushed, heartbeat alive, the monitor sees it waiting.
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(3) {
        assert_eq!(
            xlen(&mut con),
            LIMIT,
            "no game pushed while the queue is full"
        );
        assert_eq!(pushed(&mut q), LIMIT);
        std::thread::sleep(Duration::from_millis(100));
    }
    let exists: bool = redis::cmd("EXISTS")
        .arg("fz:worker:bp")
        .query(&mut con)
        .unwrap();
    assert!(
        exists,
        "the heartbeat keeps the worker visible while it waits"
    );
    let snap = monitor::snapshot(&mut q).unwrap();
    assert_eq!(snap.queue_depth, LIMIT);
    let view = monitor::render(&snap, None);
    assert!(
        view.contains("waiting: queue full"),
        "monitor view:\n{view}"
    );

    // Redis dies and comes back (AOF) while the worker polls: it reconnects and keeps waiting.
    server.kill();
    std::thread::sleep(Duration::from_millis(1000));
    server.start();
    let mut con = server.con();
    assert_eq!(xlen(&mut con), LIMIT, "the stream survived the restart");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        xlen(&mut con),
        LIMIT,
        "still nothing pushed after the restart"
    );
    assert!(!handle.is_finished(), "the worker is still waiting");

    // The trainer catches up: the worker plays and pushes its games.
    let drained_at = Instant::now();
    let _: u64 = redis::cmd("XTRIM")
        .arg("fz:games")
        .arg("MAXLEN")
        .arg(0)
        .query(&mut con)
        .unwrap();
    let sum = handle
        .join()
        .unwrap()
        .expect("the worker survives the wait and the restart");
    eprintln!(
        "backpressure: waited {:.2} s ({} waits), then {} games in {:.2} s after the drain, \
         {} reconnects",
        sum.queue_wait_seconds,
        sum.queue_waits,
        sum.games,
        drained_at.elapsed().as_secs_f64(),
        sum.reconnects
    );
    assert_eq!(sum.games, 4);
    assert_eq!(xlen(&mut con), 4, "exactly the worker's games are queued");
    let mut q = Queue::open(&url, "fz").unwrap();
    assert_eq!(pushed(&mut q), LIMIT + 4);
    assert!(
        sum.queue_wait_seconds >= 2.0,
        "waited {:.2} s",
        sum.queue_wait_seconds
    );
    assert_eq!(sum.queue_waits, 1, "one wait, the restart did not end it");
    assert!(
        sum.reconnects >= 1,
        "the poll went through the reconnect path"
    );
}

#[test]
fn stop_while_waiting_returns_promptly_with_no_games() {
    let (server, url, mut q) = server_with_queue(4);
    let mut con = server.con();
    static STOP: AtomicBool = AtomicBool::new(false);
    let stop = &STOP;
    let o = worker(&url, "bp-stop", 4, 4);
    std::thread::scope(|sc| {
        let handle = sc.spawn(|| selfplay_worker::run(&o, stop));
        until_waiting(&mut con, "bp-stop");
        std::thread::sleep(Duration::from_millis(500));
        let t = Instant::now();
        stop.store(true, Ordering::Relaxed);
        let sum = handle.join().unwrap().expect("a stop is a clean exit");
        let took = t.elapsed();
        eprintln!(
            "backpressure: stop while waiting returned in {:.3} s after waiting {:.2} s",
            took.as_secs_f64(),
            sum.queue_wait_seconds
        );
        // A responsiveness contract (Ctrl-C while the queue is full), not a speed target: the
        // bound only tells "polls the flag" from "sleeps out its wait".
        assert!(took < Duration::from_secs(5), "returned after {took:?}");
        assert_eq!(sum.games, 0);
        assert!(sum.queue_wait_seconds > 0.0);
    });
    assert_eq!(xlen(&mut con), 4);
    assert_eq!(pushed(&mut q), 4);
}

#[test]
fn zero_means_no_limit() {
    let (server, url, _) = server_with_queue(4);
    let sum =
        selfplay_worker::run(&worker(&url, "bp-free", 0, 2), &support::NEVER_STOP).expect("worker");
    assert_eq!(sum.games, 2);
    assert_eq!(sum.queue_waits, 0);
    assert_eq!(sum.queue_wait_seconds, 0.0);
    let mut con = server.con();
    assert_eq!(xlen(&mut con), 6);
}
