//! Models under play, through the real binary: 100 checkpoints land in `--model DIR` while
//! pbrain-fivezero plays game after game (80 valid, 20 corrupt / truncated / wrong feature version /
//! NaN outputs); every swap is answered by a `MESSAGE` (loaded or refused), no move is illegal or
//! late, no game is lost to a swap. A second test starts the engine on a `medium` model and checks
//! a game's replies and peak RSS against the 350 MiB limit. The times (a file landing to the
//! `loaded` message and to the first move with the new model; START → OK) are measured by
//! `fivezero-tools bench reload` and `fivezero-tools bench startup`, whose model files and
//! opponent these tests share.
//!
//! Fails, not skips, when the ONNX Runtime library has not been fetched (scripts/fetch-runtime.sh;
//! `make test` runs it).

use std::time::{Duration, Instant};

use engine::eval::onnx::OnnxRuntime;
use engine::game::{Board, Pos, Rule};
use engine::net::Preset;
use fivezero_tests::pipe::{Brain, HUNG, parse_move};
use fivezero_tests::referee::bin;
use tools::measure::{checkpoint, land, opponent_move, random_model};

const TURN_MS: u64 = 150;

fn runtime() {
    if let Err(e) = OnnxRuntime::init() {
        panic!(
            "ONNX Runtime unavailable: {e} (scripts/fetch-runtime.sh fetches it; make test runs it)"
        );
    }
}

/// A game in progress against the engine, restarted (RESTART) whenever one ends.
struct Games {
    board: Board,
    finished: u32,
    moves: u32,
    seed: u64,
}

impl Games {
    fn start(brain: &mut Brain) -> Games {
        brain.send("START 15");
        assert_eq!(brain.reply(HUNG), "OK");
        brain.send(&format!("INFO timeout_turn {TURN_MS}"));
        brain.send("INFO timeout_match 100000000");
        brain.send("INFO max_memory 367001600");
        let mut g = Games {
            board: Board::new(15, 15, Rule::Freestyle).unwrap(),
            finished: 0,
            moves: 0,
            seed: 0x9E37_79B9_7F4A_7C15,
        };
        g.engine_reply(brain, "BEGIN");
        g
    }

    /// Sends `command`, reads the engine's move, checks it and plays it.
    fn engine_reply(&mut self, brain: &mut Brain, command: &str) -> Instant {
        brain.send(command);
        let r = brain.reply(HUNG);
        let at = Instant::now();
        let (x, y) =
            parse_move(&r).unwrap_or_else(|| panic!("{command}: expected a move, got {r:?}"));
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
                brain.reply(HUNG),
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

#[test]
fn hundred_checkpoint_swaps_during_play() {
    runtime();
    let dir = tempfile::tempdir().unwrap();
    land(
        dir.path(),
        "ckpt-0000.onnx",
        &random_model(Preset::Tiny, 0, 0),
    )
    .unwrap();
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

    let (mut loaded, mut refused) = (0, 0);
    for i in 1..=100u64 {
        let name = format!("ckpt-{i:04}.onnx");
        let (kind, bytes) = checkpoint(i);
        let seen_before = brain.messages.len();
        let landed = land(dir.path(), &name, &bytes).unwrap();
        // Play on until the engine has said what it did with the file.
        let deadline = landed + Duration::from_secs(20);
        let verdict = loop {
            assert!(
                Instant::now() < deadline,
                "{name} ({kind}): no MESSAGE in 20 s: {:?}",
                &brain.messages[seen_before..]
            );
            games.step(&mut brain);
            let found = brain.messages[seen_before..]
                .iter()
                .find(|m| m.contains(&name))
                .cloned();
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
            // The next move starts after the swap, so it is the first one made with the new model.
            games.step(&mut brain);
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
    assert!(brain.exits_within(HUNG), "engine must exit on END");
    assert_eq!((loaded, refused), (80, 20));
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
    std::fs::write(&file, random_model(Preset::Medium, 7, 1)).unwrap();
    let mut brain = Brain::spawn(
        &bin("pbrain-fivezero"),
        &["--model", file.to_str().unwrap()],
    );
    brain.send("START 15");
    assert_eq!(brain.reply(Duration::from_secs(30)), "OK");
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
        let r = brain.reply(HUNG);
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
    assert!(brain.exits_within(HUNG));
    let rss_mib = rss.map_or(f64::NAN, |b| b as f64 / (1 << 20) as f64);
    if let Some(rss) = rss {
        assert!(
            rss < 350 << 20,
            "peak RSS {rss_mib:.1} MiB over the 350 MiB limit"
        );
    }
    // A cap for a hang, not the referee's 1 s + 1 s tolerance: a loaded machine may be slower
    // (the time manager itself is unit-tested in engine::time).
    assert!(
        slowest < Duration::from_millis(4000),
        "slowest reply {slowest:?} for a 1 s turn"
    );
}
