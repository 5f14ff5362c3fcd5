//! Models under play, through the real binary: 100 checkpoints land in `--model DIR` while
//! pbrain-fivezero plays game after game (80 valid, 20 corrupt / truncated / wrong feature version /
//! NaN outputs); every swap is answered by a `MESSAGE` (loaded or refused), no move is illegal or
//! late, no game is lost to a swap, and the figures are printed: time from a file landing to the
//! `loaded` message and to the first move made with the new model. A second test starts the engine
//! on a `medium` model and reports START → OK and the peak RSS of a game against the 350 MiB limit.
//!
//! Fails, not skips, when the ONNX Runtime library has not been fetched (scripts/fetch-runtime.sh;
//! `make test` runs it).

use std::path::Path;
use std::time::{Duration, Instant};

use engine::eval::onnx::OnnxRuntime;
use engine::game::{Board, Pos, Rule};
use engine::net::{ModelMeta, NetWeights, Preset, onnx_bytes};
use fivezero_tests::pipe::{Brain, parse_move};
use fivezero_tests::referee::bin;

const TURN_MS: u64 = 150;
const REPLY: Duration = Duration::from_secs(5);

fn runtime() {
    if let Err(e) = OnnxRuntime::init() {
        panic!(
            "ONNX Runtime unavailable: {e} (scripts/fetch-runtime.sh fetches it; make test runs it)"
        );
    }
}

fn model(preset: Preset, seed: u64, step: u64) -> Vec<u8> {
    let w = NetWeights::random(preset.config(), seed).unwrap();
    onnx_bytes(&w, &ModelMeta::for_config(&w.config, step)).unwrap()
}

/// A well-formed model whose value head outputs NaN (the writer refuses non-finite weights, so a
/// sentinel bias is patched in the bytes).
fn nan_model(seed: u64) -> Vec<u8> {
    let mut w = NetWeights::random(Preset::Tiny.config(), seed).unwrap();
    let sentinel = 4321.1235f32;
    w.value_fc2.bias[0] = sentinel;
    let mut bytes = onnx_bytes(&w, &ModelMeta::for_config(&w.config, 1)).unwrap();
    let at = bytes
        .windows(4)
        .position(|x| x == sentinel.to_le_bytes())
        .unwrap();
    bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    bytes
}

/// The `n`-th bad file: garbage, a truncated model, another feature version, NaN outputs.
fn bad_model(n: u64) -> (&'static str, Vec<u8>) {
    match n % 4 {
        0 => (
            "garbage",
            b"not an onnx model at all ".repeat(40 + n as usize),
        ),
        1 => {
            let good = model(Preset::Tiny, 1000 + n, n);
            ("truncated", good[..good.len() * 2 / 3].to_vec())
        }
        2 => {
            let w = NetWeights::random(Preset::Tiny.config(), 2000 + n).unwrap();
            let mut meta = ModelMeta::for_config(&w.config, n);
            meta.feature_version += 1;
            ("feature-version", onnx_bytes(&w, &meta).unwrap())
        }
        _ => ("nan", nan_model(3000 + n)),
    }
}

/// Lands a file the way the trainer does: written under a name the watcher ignores, then renamed.
fn land(dir: &Path, name: &str, bytes: &[u8]) -> Instant {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, dir.join(name)).unwrap();
    Instant::now()
}

/// Deterministic opponent: a legal point near the last stones (xorshift choice).
fn opponent_move(board: &Board, seed: &mut u64) -> Pos {
    let moves = board.candidates(2);
    let legal: Vec<Pos> = moves.into_iter().filter(|&p| board.is_legal(p)).collect();
    let pool = if legal.is_empty() {
        board.legal_moves()
    } else {
        legal
    };
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    pool[(*seed % pool.len() as u64) as usize]
}

/// A game in progress against the engine, restarted (RESTART) whenever one ends.
struct Games {
    board: Board,
    finished: u32,
    moves: u32,
    slowest_ms: u128,
    seed: u64,
}

impl Games {
    fn start(brain: &mut Brain) -> Games {
        brain.send("START 15");
        assert_eq!(brain.reply(REPLY), "OK");
        brain.send(&format!("INFO timeout_turn {TURN_MS}"));
        brain.send("INFO timeout_match 100000000");
        brain.send("INFO max_memory 367001600");
        let mut g = Games {
            board: Board::new(15, 15, Rule::Freestyle).unwrap(),
            finished: 0,
            moves: 0,
            slowest_ms: 0,
            seed: 0x9E37_79B9_7F4A_7C15,
        };
        g.engine_reply(brain, "BEGIN");
        g
    }

    /// Sends `command`, reads the engine's move, checks it and plays it.
    fn engine_reply(&mut self, brain: &mut Brain, command: &str) -> Instant {
        let t = Instant::now();
        brain.send(command);
        let r = brain.reply(REPLY);
        let at = Instant::now();
        let (x, y) =
            parse_move(&r).unwrap_or_else(|| panic!("{command}: expected a move, got {r:?}"));
        self.slowest_ms = self.slowest_ms.max(t.elapsed().as_millis());
        self.board
            .play(Pos::new(x as usize, y as usize))
            .unwrap_or_else(|e| panic!("{command}: illegal engine move {x},{y}: {e}"));
        self.moves += 1;
        at
    }

    /// One exchange (our move, the engine's reply), or a restart when the game is over. Returns when
    /// the engine's move arrived.
    fn step(&mut self, brain: &mut Brain) -> Instant {
        if self.board.winner().is_some() || self.board.legal_moves().is_empty() {
            self.finished += 1;
            brain.send("RESTART");
            assert_eq!(
                brain.reply(REPLY),
                "OK",
                "RESTART after game {}",
                self.finished
            );
            self.board = Board::new(15, 15, Rule::Freestyle).unwrap();
            return self.engine_reply(brain, "BEGIN");
        }
        let p = opponent_move(&self.board, &mut self.seed);
        self.board.play(p).unwrap();
        if self.board.winner().is_some() {
            return self.step(brain);
        }
        self.engine_reply(brain, &format!("TURN {},{}", p.x(), p.y()))
    }
}

fn percentile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * q).round() as usize]
}

#[test]
fn hundred_checkpoint_swaps_during_play() {
    runtime();
    let dir = tempfile::tempdir().unwrap();
    land(dir.path(), "ckpt-0000.onnx", &model(Preset::Tiny, 0, 0));
    let model_dir = dir.path().to_str().unwrap().to_string();
    let mut brain = Brain::spawn(
        &bin("pbrain-fivezero"),
        &["--model", &model_dir, "--threads", "1"],
    );
    let mut games = Games::start(&mut brain);
    assert!(
        brain
            .messages
            .iter()
            .any(|m| m.contains("ckpt-0000.onnx") && m.contains("loaded")),
        "initial model: {:?}",
        brain.messages
    );

    let (mut to_message, mut to_move) = (Vec::new(), Vec::new());
    let (mut loaded, mut refused) = (0, 0);
    for i in 1..=100u64 {
        let name = format!("ckpt-{i:04}.onnx");
        let (kind, bytes) = if i % 5 == 0 {
            bad_model(i / 5)
        } else {
            ("valid", model(Preset::Tiny, i, i))
        };
        let seen_before = brain.messages.len();
        let landed = land(dir.path(), &name, &bytes);
        // Play on until the engine has said what it did with the file.
        let deadline = landed + Duration::from_secs(20);
        let (verdict, said_at) = loop {
            assert!(
                Instant::now() < deadline,
                "{name} ({kind}): no MESSAGE in 20 s: {:?}",
                &brain.messages[seen_before..]
            );
            games.step(&mut brain);
            let found = brain.messages[seen_before..]
                .iter()
                .zip(&brain.message_times[seen_before..])
                .find(|(m, _)| m.contains(&name))
                .map(|(m, t)| (m.clone(), *t));
            if let Some(f) = found {
                break f;
            }
        };
        if kind == "valid" {
            assert!(
                verdict.contains("loaded") && verdict.contains(&format!("step {i})")),
                "{name}: {verdict}"
            );
            loaded += 1;
            to_message.push(said_at.duration_since(landed).as_secs_f64() * 1e3);
            // The next move starts after the swap, so it is the first one made with the new model.
            let moved = games.step(&mut brain);
            to_move.push(moved.duration_since(landed).as_secs_f64() * 1e3);
        } else {
            assert!(
                verdict.contains("refused"),
                "{name} ({kind}) must be refused: {verdict}"
            );
            let kept = format!("ckpt-{:04}.onnx", i - 1);
            assert!(
                verdict.contains(&kept),
                "{name} ({kind}): the previous model stays: {verdict}"
            );
            refused += 1;
        }
    }
    // Still alive and playing on the last valid model.
    games.step(&mut brain);
    brain.send("END");
    assert!(
        brain.exits_within(Duration::from_secs(5)),
        "engine must exit on END"
    );
    assert_eq!((loaded, refused), (80, 20));
    let (m50, m95, mmax) = (
        percentile(&mut to_message, 0.5),
        percentile(&mut to_message, 0.95),
        percentile(&mut to_message, 1.0),
    );
    let (v50, v95, vmax) = (
        percentile(&mut to_move, 0.5),
        percentile(&mut to_move, 0.95),
        percentile(&mut to_move, 1.0),
    );
    println!(
        "hot reload: 100 files landed (80 loaded, 20 refused) during {} finished games + 1 in progress, {} engine \
         moves, 0 illegal, 0 crashes, slowest reply {} ms of {TURN_MS} ms; landing -> loaded MESSAGE median {m50:.0} \
         ms, p95 {m95:.0} ms, max {mmax:.0} ms; landing -> first move with the new model median {v50:.0} ms, p95 \
         {v95:.0} ms, max {vmax:.0} ms (watcher polls every 250 ms and waits for two equal polls)",
        games.finished, games.moves, games.slowest_ms
    );
    assert!(
        games.finished >= 3,
        "several games were completed across the swaps"
    );
}

/// Peak resident memory of a process (VmHWM), in bytes.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn start_up_and_memory_with_the_medium_model() {
    runtime();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("medium.onnx");
    std::fs::write(&file, model(Preset::Medium, 7, 1)).unwrap();
    let spawned = Instant::now();
    let mut brain = Brain::spawn(
        &bin("pbrain-fivezero"),
        &["--model", file.to_str().unwrap()],
    );
    brain.send("START 15");
    assert_eq!(brain.reply(Duration::from_secs(30)), "OK");
    let start_ok = spawned.elapsed();
    assert!(
        brain
            .messages
            .iter()
            .any(|m| m.contains("medium.onnx") && m.contains("loaded")),
        "{:?}",
        brain.messages
    );
    brain.send("INFO timeout_turn 1000");
    brain.send("INFO timeout_match 100000000");
    brain.send("INFO max_memory 367001600");
    let mut board = Board::new(15, 15, Rule::Freestyle).unwrap();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut command = "BEGIN".to_string();
    let mut slowest = Duration::ZERO;
    for _ in 0..15 {
        let t = Instant::now();
        brain.send(&command);
        let r = brain.reply(REPLY);
        slowest = slowest.max(t.elapsed());
        let (x, y) = parse_move(&r).unwrap_or_else(|| panic!("expected a move, got {r:?}"));
        board
            .play(Pos::new(x as usize, y as usize))
            .expect("legal engine move");
        if board.winner().is_some() {
            break;
        }
        let p = opponent_move(&board, &mut seed);
        board.play(p).unwrap();
        if board.winner().is_some() {
            break;
        }
        command = format!("TURN {},{}", p.x(), p.y());
    }
    let rss = peak_rss(brain.pid());
    brain.send("END");
    assert!(brain.exits_within(Duration::from_secs(5)));
    let rss_mib = rss.map_or(f64::NAN, |b| b as f64 / (1 << 20) as f64);
    println!(
        "medium model ({} params): spawn -> START -> OK {} ms, {} moves at 1 s/move, slowest reply {} ms, peak RSS \
         {rss_mib:.1} MiB of the 350 MiB limit",
        Preset::Medium.config().param_count(),
        start_ok.as_millis(),
        board.move_count(),
        slowest.as_millis()
    );
    if let Some(rss) = rss {
        assert!(
            rss < 350 << 20,
            "peak RSS {rss_mib:.1} MiB over the 350 MiB limit"
        );
    }
    assert!(
        slowest < Duration::from_millis(2000),
        "slowest reply {slowest:?} for a 1 s turn"
    );
}
