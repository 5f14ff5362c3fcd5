//! The queue's payload codec: good frames round-trip; truncated, foreign, wrong-version,
//! oversized, padded, bit-flipped and nonsensical payloads are refused with a typed reason
//! (never decoded blindly); and, against a real redis-server, a train worker counts such stream
//! entries as rejected and acknowledges them without ingesting anything from them.

use crate::distributed_support as support;

use std::time::Duration;

use trainer::distributed::payload::{
    self, GAME_MAGIC, GAME_MAX_BYTES, GAME_VERSION, GamePayload, PayloadError,
};
use trainer::distributed::queue::Queue;
use trainer::distributed::train_worker::{self, TrainWorkerOptions};
use trainer::support::store::{self, FrameError};

fn game(id: &str) -> GamePayload {
    GamePayload {
        game_id: id.into(),
        worker_id: "w".into(),
        model_version: 3,
        record: support::games(1, 7).remove(0),
    }
}

#[test]
fn round_trip() {
    let g = game("w:1:0");
    let bytes = payload::encode_game(&g).unwrap();
    assert_eq!(payload::decode_game(&bytes).unwrap(), g);
}

#[test]
fn malformed_payloads_are_refused_by_kind() {
    let good = payload::encode_game(&game("w:1:0")).unwrap();
    let kind = |b: &[u8]| payload::decode_game(b).unwrap_err().kind();

    assert_eq!(kind(&good[..10]), "truncated");
    assert_eq!(kind(&[]), "truncated");
    assert_eq!(kind(&good[..good.len() - 1]), "length");
    let mut padded = good.clone();
    padded.push(0);
    assert_eq!(kind(&padded), "length");

    let mut magic = good.clone();
    magic[0] ^= 0xff;
    assert_eq!(kind(&magic), "magic");

    let mut version = good.clone();
    version[4..8].copy_from_slice(&(GAME_VERSION + 1).to_le_bytes());
    assert!(matches!(
        payload::decode_game(&version),
        Err(PayloadError::Frame(FrameError::Version { got, .. })) if got == GAME_VERSION + 1
    ));

    // A header claiming a huge payload is refused before anything is read or allocated.
    let mut huge = good.clone();
    huge[8..16].copy_from_slice(&(GAME_MAX_BYTES + 1).to_le_bytes());
    assert_eq!(kind(&huge), "oversized");

    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x01;
    assert_eq!(kind(&flipped), "checksum");

    // A valid frame around bytes that are not a game: the checksum passes, decoding refuses.
    let junk = store::encode(GAME_MAGIC, GAME_VERSION, &vec![0xffu8; 40]).unwrap();
    assert_eq!(kind(&junk), "decode");

    // A well-formed frame of a game that makes no sense is refused after decoding.
    let mut off = game("w:1:1");
    off.record.moves[0] = 49;
    let bytes = store::encode(GAME_MAGIC, GAME_VERSION, &off).unwrap();
    assert_eq!(kind(&bytes), "invalid");
    let mut outcome = game("w:1:2");
    outcome.record.outcome = 5;
    assert!(
        payload::encode_game(&outcome).is_err(),
        "encoder checks too"
    );
    let mut no_id = game("");
    no_id.game_id.clear();
    let bytes = store::encode(GAME_MAGIC, GAME_VERSION, &no_id).unwrap();
    assert_eq!(kind(&bytes), "invalid");
}

#[test]
fn train_worker_counts_and_acks_rejected_entries() {
    let _watchdog = support::watchdog(120);
    let server = support::RedisServer::tcp();
    let dir = tempfile::tempdir().unwrap();
    let mut q = Queue::open(&server.url, "fz").unwrap();
    let good = payload::encode_game(&game("w:1:0")).unwrap();
    let mut bad_crc = good.clone();
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 1;
    let mut con = server.con();
    for bytes in [b"not a frame".to_vec(), bad_crc, good] {
        let _: String = redis::cmd("XADD")
            .arg("fz:games")
            .arg("*")
            .arg("g")
            .arg(bytes)
            .query(&mut con)
            .unwrap();
    }
    let o = TrainWorkerOptions {
        redis_url: server.url.clone(),
        prefix: "fz".into(),
        consumer: "t0".into(),
        settings: trainer::config::Settings {
            batch_size: 8,
            replay_window: 10_000,
            sample_reuse: 1.0,
            ..support::tiny_settings(dir.path())
        },
        device: tch::Device::Cpu,
        min_positions: 1_000_000,
        publish_every: 1_000,
        keep_models: 5,
        read_count: 16,
        block_ms: 100,
        claim_idle: Duration::from_secs(60),
        max_steps: None,
        exit_when_drained: false,
        max_games: Some(1),
        heartbeat_ttl: Duration::from_secs(10),
        give_up_after: Duration::from_secs(10),
    };
    let sum = train_worker::run(&o, &support::NEVER_STOP).unwrap();
    assert_eq!(sum.ingested, 1);
    assert_eq!(sum.rejected, 2);
    let stats = q.stats().unwrap();
    assert_eq!(stats.get("rejected_truncated"), Some(&1), "{stats:?}");
    assert_eq!(stats.get("rejected_checksum"), Some(&1), "{stats:?}");
    assert_eq!(stats.get("games_ingested"), Some(&1), "{stats:?}");
    // Everything was acknowledged and deleted: nothing pending, nothing left in the stream.
    let len: u64 = redis::cmd("XLEN").arg("fz:games").query(&mut con).unwrap();
    assert_eq!(len, 0);
}
