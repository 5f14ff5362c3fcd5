//! Faults against a real redis-server: nothing pushed is lost and nothing is trained on twice when
//! (a) a consumer dies after reading (XAUTOCLAIM takes its entries over), (b) the train worker is
//! SIGKILLed mid-run and restarted, (c) it crashed after writing the ingest ledger but before the
//! replay chunk, (d) entries are redelivered after reaching the replay store (ledger drops them
//! even when Redis's `ingested` set is gone), (e) a worker pushes the same game twice; and (f)
//! Redis itself is killed and restarted (AOF) under running workers, which reconnect.

use crate::distributed_support as support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use trainer::distributed::payload::GamePayload;
use trainer::distributed::queue::Queue;
use trainer::distributed::selfplay_worker::{self, SelfPlayWorkerOptions};
use trainer::distributed::train_worker::{self, TrainWorkerOptions, load_ledger};
use trainer::selfplay::SelfPlayConfig;
use trainer::training::replay::Replay;

fn options(url: &str, dir: &Path, consumer: &str) -> TrainWorkerOptions {
    TrainWorkerOptions {
        redis_url: url.into(),
        prefix: "fz".into(),
        consumer: consumer.into(),
        settings: support::tiny_settings(dir),
        device: tch::Device::Cpu,
        min_positions: 32,
        publish_every: 4,
        keep_models: 5,
        read_count: 4,
        block_ms: 100,
        claim_idle: Duration::from_millis(500),
        max_steps: None,
        max_games: None,
        exit_when_drained: false,
        heartbeat_ttl: Duration::from_secs(10),
        give_up_after: Duration::from_secs(30),
    }
}

/// Every id in the ledger files, with repeats (a repeat would be a game stored twice).
fn ledger_ids_with_repeats(dir: &Path) -> Vec<String> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir.join("ingest")).unwrap() {
        let p = e.unwrap().path();
        let v: Vec<String> = trainer::support::store::read(&p, *b"FZIL", 1).unwrap();
        all.extend(v);
    }
    all.sort();
    all
}

fn stored_games(dir: &Path) -> usize {
    Replay::open(&dir.join("replay"), usize::MAX, |_| {})
        .unwrap()
        .games()
        .len()
}

fn stat(q: &mut Queue, k: &str) -> u64 {
    q.stats().unwrap().get(k).copied().unwrap_or(0)
}

#[test]
fn consumer_crashes_lose_nothing_and_duplicate_nothing() {
    let _watchdog = support::watchdog(240);
    let server = support::RedisServer::tcp();
    let url = server.url.clone();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("train");
    let mut q = Queue::open(&url, "fz").unwrap();
    q.ensure_group().unwrap();
    let records = support::games(41, 11);
    let payload = |i: usize| GamePayload {
        game_id: format!("w:1:{i}"),
        worker_id: "w".into(),
        model_version: 1,
        record: records[i].clone(),
    };
    for i in 0..40 {
        q.push_game(&payload(i)).unwrap();
    }
    // (e) a worker retry pushes game 5 a second time.
    q.push_game(&payload(5)).unwrap();
    // (a) a consumer reads ten entries and dies without acknowledging them.
    let dead = q.read("dead", ">", 10, 0).unwrap();
    assert_eq!(dead.len(), 10);

    // (b) a train-worker process, SIGKILLed as soon as it has ingested something.
    let mut child = Command::new(support::trainer_bin())
        .args(support::tiny_flags(&dir))
        .args(["train-worker", "--redis-url", &url, "--consumer", "c1"])
        .args([
            "--claim-idle-s",
            "0.5",
            "--min-positions",
            "32",
            "--publish-every",
            "3",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while stat(&mut q, "games_ingested") == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "train worker ingested nothing"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    eprintln!(
        "killed train-worker said: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ingested_before_kill = stat(&mut q, "games_ingested");

    // (c) a crash between ledger and chunk: a ledger naming a game not yet stored must not count.
    let next_chunk = Replay::open(&dir.join("replay"), 1, |_| {})
        .unwrap()
        .next_chunk();
    trainer::support::store::write(
        &dir.join("ingest")
            .join(format!("ingest-{next_chunk:08}.bin")),
        *b"FZIL",
        1,
        &vec!["w:1:40".to_string()],
    )
    .unwrap();
    q.push_game(&payload(40)).unwrap();

    // Restart under the same consumer name: own pending entries, then the dead one's, then new.
    let o = TrainWorkerOptions {
        exit_when_drained: true,
        ..options(&url, &dir, "c1")
    };
    let sum = train_worker::run(&o, &support::NEVER_STOP).unwrap();
    eprintln!(
        "faults: killed after {ingested_before_kill} ingested; restart ingested {}, dropped {} \
         duplicates, {} steps",
        sum.ingested, sum.duplicates, sum.steps
    );
    let want: BTreeSet<String> = (0..41).map(|i| format!("w:1:{i}")).collect();
    let ids = ledger_ids_with_repeats(&dir);
    assert_eq!(ids.len(), 41, "no game stored twice: {ids:?}");
    assert_eq!(ids.iter().cloned().collect::<BTreeSet<_>>(), want);
    assert_eq!(load_ledger(&dir).unwrap(), want);
    assert_eq!(stored_games(&dir), 41);
    assert_eq!(stat(&mut q, "games_ingested"), 41);
    assert!(
        stat(&mut q, "duplicates") >= 1,
        "the double push was dropped"
    );
    let mut con = server.con();
    let len: u64 = redis::cmd("XLEN").arg("fz:games").query(&mut con).unwrap();
    assert_eq!(len, 0, "every entry acknowledged and deleted");

    // (d) everything redelivered after it reached the replay store, with the Redis set lost too.
    for i in 0..41 {
        q.push_game(&payload(i)).unwrap();
    }
    let _: i64 = redis::cmd("DEL")
        .arg("fz:ingested")
        .query(&mut con)
        .unwrap();
    let sum = train_worker::run(&o, &support::NEVER_STOP).unwrap();
    assert_eq!(sum.ingested, 0);
    assert_eq!(sum.duplicates, 41);
    assert_eq!(stored_games(&dir), 41);
    assert!(
        sum.resumed_step.is_some(),
        "the restart resumed from a checkpoint"
    );
}

#[test]
fn workers_reconnect_when_redis_restarts() {
    let _watchdog = support::watchdog(240);
    let mut server = support::RedisServer::unix();
    let url = server.url.clone();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("train");
    const GAMES: u64 = 30;
    let o = TrainWorkerOptions {
        max_games: Some(GAMES),
        ..options(&url, &dir, "t0")
    };
    let trainer = std::thread::spawn(move || train_worker::run(&o, &support::NEVER_STOP));
    let w = SelfPlayWorkerOptions {
        redis_url: url.clone(),
        prefix: "fz".into(),
        worker_id: "w1".into(),
        selfplay: SelfPlayConfig {
            board_size: 7,
            simulations: 8,
            parallel_games: 2,
            seed: 5,
            ..SelfPlayConfig::default()
        },
        batch_games: 2,
        model_check_games: 4,
        max_games: Some(GAMES),
        device: tch::Device::Cpu,
        onnx: None,
        heartbeat_ttl: Duration::from_secs(3),
        wait_model: Duration::from_secs(60),
        give_up_after: Duration::from_secs(30),
        max_queue: 0,
    };
    let worker = std::thread::spawn(move || selfplay_worker::run(&w, &support::NEVER_STOP));

    let mut q = Queue::open(&url, "fz").unwrap();
    let t = Instant::now();
    while stat(&mut q, "games_pushed") < 4 {
        assert!(t.elapsed() < Duration::from_secs(60), "no games pushed");
        std::thread::sleep(Duration::from_millis(5));
    }
    server.kill();
    std::thread::sleep(Duration::from_millis(1500));
    server.start();

    let ws = worker
        .join()
        .unwrap()
        .expect("self-play worker survives the restart");
    let ts = trainer
        .join()
        .unwrap()
        .expect("train worker survives the restart");
    eprintln!(
        "redis restart: worker produced {} games ({} reconnects), trainer ingested {} \
         ({} duplicates dropped, {} reconnects), {} steps",
        ws.games, ws.reconnects, ts.ingested, ts.duplicates, ts.reconnects, ts.steps
    );
    assert_eq!(ws.games, GAMES);
    assert!(ws.reconnects >= 1 && ts.reconnects >= 1, "both reconnected");
    let want: BTreeSet<String> = (0..GAMES).map(|i| format!("w1:1:{i}")).collect();
    assert_eq!(
        load_ledger(&dir).unwrap(),
        want,
        "every produced game trained on once"
    );
    assert_eq!(ledger_ids_with_repeats(&dir).len() as u64, GAMES);
    assert_eq!(stored_games(&dir) as u64, GAMES);
}
