//! `fivezero-tools bench`: the figures the documents quote about the engine under a manager,
//! measured over pipes against the built `pbrain-fivezero` and printed.
//!
//! - `startup`: spawn → `START` → `OK` with a model of a given preset, then a game at a given move
//!   time: the slowest reply and the peak resident memory.
//! - `reload`: checkpoint files land in `--model DIR` while the engine plays game after game (every
//!   fifth one bad: garbage, truncated, another feature version, NaN outputs): the time from a file
//!   landing to the `loaded` message and to the first move made with the new model.
//! - `analyse`: positions/s of `pbrain-fivezero analyse` on seeded random openings, per difficulty.
//! - `realtime`: visits/s of the same search with the realtime lines (`INFO show_detail 1`) and
//!   without, interleaved.
//! - `network`: positions/s of one forward pass of `models/default.onnx` in this process, one
//!   thread, at several batch sizes: the native runtime on each kernel family this CPU has, and
//!   ONNX Runtime; and the pattern network (`eval::native::pattern`, random weights) along a
//!   search-like walk of leaves, natively (incremental) and on ONNX Runtime.
//!
//! The black-box tests check the same behaviour (`tests/tests/it/hot_reload.rs`: every file is
//! loaded or refused, the old model stays, no move is illegal) without timing it; they use the
//! model files and the opponent written here. The manager's own overhead per move is printed by
//! `fivezero-tools tournament` itself. Depends on `engine::net` and `engine::game` and on
//! `tournament::process` for the engine's pipes.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use engine::brain::script::Response;
use engine::game::{Board, Pos, Rule};
use engine::net::{ModelMeta, NetWeights, Preset, onnx_bytes};
use engine::rng::Rng;
use protocol::BrainLine;

use crate::tournament::log::Logger;
use crate::tournament::process::{EngineProcess, Recv};
use crate::tournament::spec::EngineSpec;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    figure: Figure,
}

#[derive(Debug, clap::Subcommand)]
enum Figure {
    /// Spawn → START → OK with a model of `--preset`, then a game at `--turn-ms`: slowest reply
    /// and peak RSS.
    Startup {
        #[command(flatten)]
        engine: EngineArg,
        /// tiny, cpu32, cpu48, small, medium, large or pattern (random weights: time does not depend on them).
        #[arg(long, default_value = "medium")]
        preset: Preset,
        #[arg(long, default_value_t = 1000)]
        turn_ms: u64,
        /// Engine moves of the game after START.
        #[arg(long, default_value_t = 15)]
        moves: u32,
    },
    /// Checkpoints landing in `--model DIR` during play: landing → `loaded` message and landing →
    /// first move with the new model (median, p95, max).
    Reload {
        #[command(flatten)]
        engine: EngineArg,
        /// Files landed; every fifth is a bad one the engine must refuse.
        #[arg(long, default_value_t = 100)]
        files: u64,
        #[arg(long, default_value_t = 150)]
        turn_ms: u64,
    },
    /// `pbrain-fivezero analyse` on `--positions` seeded random openings (2 to 20 stones, 15x15
    /// freestyle) at `--visits` each, for `--difficulty medium` and `easy`: positions/s.
    Analyse {
        #[command(flatten)]
        engine: EngineArg,
        #[arg(long, default_value_t = 1000)]
        positions: u64,
        #[arg(long, default_value_t = 100)]
        visits: u64,
    },
    /// Visits/s of one search with the realtime lines on and off (`INFO show_detail`), `--rounds`
    /// of each interleaved, `--turn-ms` per search.
    Realtime {
        #[command(flatten)]
        engine: EngineArg,
        #[arg(long, default_value_t = 4)]
        rounds: u32,
        #[arg(long, default_value_t = 2000)]
        turn_ms: u64,
    },
    /// Positions/s of the embedded `models/default.onnx` on 15x15 positions, one thread, at
    /// batch 1, 8, 16, 32: native (each kernel family) and ONNX Runtime; then the pattern
    /// network's evaluations/s along a search-like walk, native and on ONNX Runtime.
    Network {
        /// Seconds measured per cell of the table.
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        /// Only these native kernels (avx512vnni, avx2, scalar; default: all this CPU has) and no
        /// ONNX Runtime row when given.
        #[arg(long, value_delimiter = ',')]
        kernels: Vec<String>,
        /// The pattern network's width (a multiple of 8: 32 the `pattern` preset, 64
        /// `pattern64`).
        #[arg(long, default_value_t = engine::net::pattern::DEFAULT_DIM, value_parser = pattern_width)]
        pattern_dim: usize,
        /// Leaves of the pattern network's walk (64 at least), each a separate board, walked
        /// again and again: a search's few boards stay in cache, a long walk measures the
        /// boards' cache misses.
        #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(64..=65536))]
        walk_leaves: u32,
    },
}

#[derive(Debug, clap::Args)]
struct EngineArg {
    /// The engine binary (default: pbrain-fivezero next to this program).
    #[arg(long)]
    engine: Option<PathBuf>,
}

/// No answer within this is a hang, not a slow reply.
const REPLY_CAP: Duration = Duration::from_secs(30);
const MAX_MEMORY: &str = "INFO max_memory 367001600";

pub fn run(args: Args) -> Result<(), String> {
    match args.figure {
        Figure::Startup {
            engine,
            preset,
            turn_ms,
            moves,
        } => startup(&engine.path()?, preset, turn_ms, moves),
        Figure::Reload {
            engine,
            files,
            turn_ms,
        } => reload(&engine.path()?, files, turn_ms),
        Figure::Analyse {
            engine,
            positions,
            visits,
        } => analyse(&engine.path()?, positions, visits),
        Figure::Realtime {
            engine,
            rounds,
            turn_ms,
        } => realtime(&engine.path()?, rounds, turn_ms),
        Figure::Network {
            seconds,
            kernels,
            pattern_dim,
            walk_leaves,
        } => network(seconds, &kernels, (pattern_dim, walk_leaves as usize)),
    }
}

impl EngineArg {
    fn path(&self) -> Result<PathBuf, String> {
        match &self.engine {
            Some(p) => Ok(p.clone()),
            None => std::env::current_exe()
                .map_err(|e| format!("cannot locate this program: {e}"))
                .map(|exe| exe.with_file_name("pbrain-fivezero")),
        }
    }
}

/// A randomly initialised network of `preset` as ONNX bytes (deterministic for a seed).
pub fn random_model(preset: Preset, seed: u64, step: u64) -> Vec<u8> {
    if preset.is_pattern() {
        let w = engine::net::PatternWeights::random(preset.dims().1, seed)
            .expect("the pattern preset's width is valid");
        return engine::net::pattern_onnx_bytes(&w, &w.meta(step))
            .expect("random weights are finite");
    }
    let w = NetWeights::random(preset.config(), seed).expect("presets are valid shapes");
    onnx_bytes(&w, &ModelMeta::for_config(&w.config, step)).expect("random weights are finite")
}

/// A well-formed model whose value head outputs NaN (the writer refuses non-finite weights, so a
/// sentinel bias is patched in the bytes).
fn nan_model(seed: u64) -> Vec<u8> {
    let mut w = NetWeights::random(Preset::Tiny.config(), seed).expect("tiny is a valid shape");
    let sentinel = 4321.1235f32;
    w.value_fc2.bias[0] = sentinel;
    let mut bytes =
        onnx_bytes(&w, &ModelMeta::for_config(&w.config, 1)).expect("random weights are finite");
    let at = bytes
        .windows(4)
        .position(|x| x == sentinel.to_le_bytes())
        .expect("the sentinel bias is stored as written");
    bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    bytes
}

/// The `n`-th bad file, named by its kind: garbage, a truncated model, another feature version,
/// NaN outputs.
pub fn bad_model(n: u64) -> (&'static str, Vec<u8>) {
    match n % 4 {
        0 => (
            "garbage",
            b"not an onnx model at all ".repeat(40 + n as usize),
        ),
        1 => {
            let good = random_model(Preset::Tiny, 1000 + n, n);
            ("truncated", good[..good.len() * 2 / 3].to_vec())
        }
        2 => {
            let w = NetWeights::random(Preset::Tiny.config(), 2000 + n).expect("valid shape");
            let mut meta = ModelMeta::for_config(&w.config, n);
            meta.feature_version += 1;
            let bytes = onnx_bytes(&w, &meta).expect("random weights are finite");
            ("feature-version", bytes)
        }
        _ => ("nan", nan_model(3000 + n)),
    }
}

/// The `i`-th checkpoint of a reload run: every fifth one bad, the others valid tiny models whose
/// step is `i` (the engine's `loaded` message names it).
pub fn checkpoint(i: u64) -> (&'static str, Vec<u8>) {
    if i.is_multiple_of(5) {
        bad_model(i / 5)
    } else {
        ("valid", random_model(Preset::Tiny, i, i))
    }
}

/// Lands a file the way the trainer does: written under a name the watcher ignores, then renamed.
/// Returns when it landed.
pub fn land(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<Instant> {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, dir.join(name))?;
    Ok(Instant::now())
}

/// A deterministic opponent: a legal point near the stones (xorshift choice).
pub fn opponent_move(board: &Board, seed: &mut u64) -> Pos {
    let near: Vec<Pos> = board
        .candidates(2)
        .into_iter()
        .filter(|&p| board.is_legal(p))
        .collect();
    let pool = if near.is_empty() {
        board.legal_moves()
    } else {
        near
    };
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    pool[(*seed % pool.len() as u64) as usize]
}

/// The engine over pipes, with the `MESSAGE` lines it said and when each arrived.
struct Brain {
    process: EngineProcess,
    messages: Vec<(String, Instant)>,
}

impl Brain {
    fn spawn(engine: &Path, args: &[&str]) -> Result<Brain, String> {
        let mut spec = EngineSpec::parse(&format!("cmd={},name=engine", engine.display()))?;
        spec.args = args.iter().map(|a| a.to_string()).collect();
        let process = EngineProcess::spawn(&spec.resolve()?, Logger::disabled(), true)?;
        Ok(Brain {
            process,
            messages: Vec::new(),
        })
    }

    fn send(&mut self, line: &str) -> Result<Instant, String> {
        self.process.send(line)
    }

    /// The next reply that is not MESSAGE/DEBUG, and when it arrived.
    fn reply(&mut self) -> Result<(String, Instant), String> {
        let deadline = Instant::now() + REPLY_CAP;
        loop {
            match self.process.recv(deadline) {
                Recv::Line(line, at) => {
                    let upper = line.to_ascii_uppercase();
                    if upper.starts_with("MESSAGE") {
                        self.messages.push((line, at));
                    } else if !upper.starts_with("DEBUG") {
                        return Ok((line.trim().to_string(), at));
                    }
                }
                Recv::Eof => return Err("the engine exited".into()),
                Recv::Timeout => return Err(format!("no reply within {REPLY_CAP:?}")),
            }
        }
    }

    fn expect_ok(&mut self, after: &str) -> Result<Instant, String> {
        match self.reply()? {
            (ok, at) if ok == "OK" => Ok(at),
            (other, _) => Err(format!("{after}: expected OK, got {other:?}")),
        }
    }

    /// The first message since `from` that contains `needle`, and when it arrived.
    fn message_since(&self, from: usize, needle: &str) -> Option<(String, Instant)> {
        self.messages[from..]
            .iter()
            .find(|(m, _)| m.contains(needle))
            .cloned()
    }
}

/// Games against the engine on 15x15 freestyle, one after another (RESTART when one ends).
struct Games {
    board: Board,
    finished: u32,
    moves: u32,
    slowest: Duration,
    seed: u64,
}

impl Games {
    /// Sets the time limits of a started engine and asks for its first move.
    fn begin(brain: &mut Brain, turn_ms: u64) -> Result<Games, String> {
        brain.send(&format!("INFO timeout_turn {turn_ms}"))?;
        brain.send("INFO timeout_match 100000000")?;
        brain.send(MAX_MEMORY)?;
        let mut games = Games {
            board: Board::new(15, 15, Rule::Freestyle).map_err(|e| e.to_string())?,
            finished: 0,
            moves: 0,
            slowest: Duration::ZERO,
            seed: 0x9E37_79B9_7F4A_7C15,
        };
        games.engine_reply(brain, "BEGIN")?;
        Ok(games)
    }

    fn over(&self) -> bool {
        self.board.winner().is_some() || self.board.legal_moves().is_empty()
    }

    /// Sends `command`, reads the engine's move and plays it; returns when the move arrived.
    fn engine_reply(&mut self, brain: &mut Brain, command: &str) -> Result<Instant, String> {
        let sent = brain.send(command)?;
        let (reply, at) = brain.reply()?;
        self.slowest = self.slowest.max(at.duration_since(sent));
        let coord = match BrainLine::parse(&reply) {
            Ok(BrainLine::Move(c)) => c,
            _ => return Err(format!("{command}: expected a move, got {reply:?}")),
        };
        self.board
            .play(Pos::new(coord.x as usize, coord.y as usize))
            .map_err(|e| format!("{command}: illegal engine move {reply}: {e}"))?;
        self.moves += 1;
        Ok(at)
    }

    /// One exchange (our move, the engine's reply), or a new game when this one is over.
    fn step(&mut self, brain: &mut Brain) -> Result<Instant, String> {
        if self.over() {
            self.finished += 1;
            brain.send("RESTART")?;
            brain.expect_ok("RESTART")?;
            self.board = Board::new(15, 15, Rule::Freestyle).map_err(|e| e.to_string())?;
            return self.engine_reply(brain, "BEGIN");
        }
        let p = opponent_move(&self.board, &mut self.seed);
        self.board.play(p).map_err(|e| e.to_string())?;
        if self.board.winner().is_some() {
            return self.step(brain);
        }
        self.engine_reply(brain, &format!("TURN {},{}", p.x(), p.y()))
    }
}

/// A scratch folder under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Result<Scratch, String> {
        let dir = std::env::temp_dir().join(format!("fivezero-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("unknown".into(), |b| {
        format!("{:.1} MiB", b as f64 / (1 << 20) as f64)
    })
}

fn startup(engine: &Path, preset: Preset, turn_ms: u64, moves: u32) -> Result<(), String> {
    let scratch = Scratch::new("startup")?;
    let file = scratch.0.join(format!("{preset}.onnx"));
    std::fs::write(&file, random_model(preset, 7, 1)).map_err(|e| e.to_string())?;
    let spawned = Instant::now();
    let mut brain = Brain::spawn(engine, &["--model", &file.display().to_string()])?;
    brain.send("START 15")?;
    let start_ok = brain.expect_ok("START 15")?.duration_since(spawned);
    if brain.message_since(0, "loaded").is_none() {
        return Err(format!("the model was not loaded: {:?}", brain.messages));
    }
    let mut games = Games::begin(&mut brain, turn_ms)?;
    while games.moves < moves && !games.over() {
        games.step(&mut brain)?;
    }
    let rss = brain.process.peak_rss();
    brain.process.quit(Duration::from_secs(5));
    println!(
        "start-up: {preset} model ({} parameters): spawn -> START -> OK {} ms; {} engine moves at \
         {turn_ms} ms/move: slowest reply {} ms; peak RSS {}",
        preset.param_count(),
        start_ok.as_millis(),
        games.moves,
        games.slowest.as_millis(),
        mib(rss)
    );
    Ok(())
}

/// What a reload run saw.
#[derive(Default)]
struct Reloads {
    loaded: u32,
    refused: u32,
    to_message_ms: Vec<f64>,
    to_move_ms: Vec<f64>,
}

fn reload(engine: &Path, files: u64, turn_ms: u64) -> Result<(), String> {
    let scratch = Scratch::new("reload")?;
    let dir = &scratch.0;
    let io = |e: std::io::Error| e.to_string();
    land(dir, "ckpt-0000.onnx", &random_model(Preset::Tiny, 0, 0)).map_err(io)?;
    let dir_arg = dir.display().to_string();
    let mut brain = Brain::spawn(engine, &["--model", &dir_arg, "--threads", "1"])?;
    brain.send("START 15")?;
    brain.expect_ok("START 15")?;
    let mut games = Games::begin(&mut brain, turn_ms)?;
    let mut seen = Reloads::default();
    for i in 1..=files {
        let name = format!("ckpt-{i:04}.onnx");
        let (kind, bytes) = checkpoint(i);
        let from = brain.messages.len();
        let landed = land(dir, &name, &bytes).map_err(io)?;
        let (verdict, said_at) = loop {
            if landed.elapsed() > REPLY_CAP {
                return Err(format!("{name} ({kind}): no MESSAGE in {REPLY_CAP:?}"));
            }
            games.step(&mut brain)?;
            if let Some(found) = brain.message_since(from, &name) {
                break found;
            }
        };
        if !verdict.contains("loaded") {
            seen.refused += 1;
            continue;
        }
        seen.loaded += 1;
        seen.to_message_ms.push(ms(said_at.duration_since(landed)));
        // The next move starts after the swap: the first one made with the new model.
        let moved = games.step(&mut brain)?;
        seen.to_move_ms.push(ms(moved.duration_since(landed)));
    }
    brain.process.quit(Duration::from_secs(5));
    print_reloads(&mut seen, &games, files, turn_ms);
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median, 95th percentile and maximum, as text.
fn spread(v: &mut [f64]) -> String {
    if v.is_empty() {
        return "none".into();
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    format!(
        "median {:.0} ms, p95 {:.0} ms, max {:.0} ms",
        at(0.5),
        at(0.95),
        at(1.0)
    )
}

fn print_reloads(seen: &mut Reloads, games: &Games, files: u64, turn_ms: u64) {
    println!(
        "reload: {files} files landed ({} loaded, {} refused) during {} finished games, {} engine \
         moves at {turn_ms} ms/move, slowest reply {} ms",
        seen.loaded,
        seen.refused,
        games.finished,
        games.moves,
        games.slowest.as_millis()
    );
    println!(
        "reload: landing -> loaded MESSAGE {}; landing -> first move with the new model {} \
         (the watcher polls every 250 ms and waits for two equal polls)",
        spread(&mut seen.to_message_ms),
        spread(&mut seen.to_move_ms)
    );
}

/// A seeded random opening of `stones` stones near the centre of a 15x15 freestyle board, with no
/// five on it, as `[x, y]` pairs.
pub fn random_opening(rng: &mut Rng, stones: usize) -> Vec<[i64; 2]> {
    loop {
        let mut board = Board::new(15, 15, Rule::Freestyle).expect("15x15 is a valid board");
        let mut moves = Vec::new();
        while moves.len() < stones && board.winner().is_none() {
            let (x, y) = (4 + rng.next_u64() % 7, 4 + rng.next_u64() % 7);
            let p = board.pos(x as i64, y as i64).expect("on the board");
            if board.is_legal(p) && board.play(p).is_ok() {
                moves.push([x as i64, y as i64]);
            }
        }
        if board.winner().is_none() {
            return moves;
        }
    }
}

fn analyse(engine: &Path, positions: u64, visits: u64) -> Result<(), String> {
    let mut rng = Rng::new(12);
    let input: String = (0..positions)
        .map(|i| {
            let stones = 2 + (rng.next_u64() % 19) as usize;
            let moves = random_opening(&mut rng, stones);
            serde_json::json!({"id": i, "moves": moves, "visits": visits}).to_string() + "\n"
        })
        .collect();
    for difficulty in ["medium", "easy"] {
        let mut child = Command::new(engine)
            .args(["--difficulty", difficulty, "analyse"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", engine.display()))?;
        let (mut stdin, stdout) = (child.stdin.take(), child.stdout.take());
        let started = Instant::now();
        let text = input.clone();
        let writer =
            std::thread::spawn(move || stdin.as_mut().map(|s| s.write_all(text.as_bytes())));
        let (mut replies, mut errors) = (0u64, 0u64);
        for line in BufReader::new(stdout.ok_or("no stdout pipe")?).lines() {
            let line = line.map_err(|e| e.to_string())?;
            match serde_json::from_str::<Response>(&line) {
                Ok(Response::Reply(_)) => replies += 1,
                _ => errors += 1,
            }
        }
        let took = started.elapsed().as_secs_f64();
        let _ = writer.join();
        let _ = child.wait();
        println!(
            "analyse --difficulty {difficulty}: {positions} positions x {visits} visits in {took:.2} s \
             = {:.0} positions/s; {replies} replies, {errors} errors",
            positions as f64 / took
        );
    }
    Ok(())
}

/// The `N visits/s` figure of the search summary among `messages`.
fn visits_per_second(messages: &[(String, Instant)]) -> Option<f64> {
    let summary = messages.iter().find(|(m, _)| m.contains(" visits/s"))?;
    summary
        .0
        .split(" visits/s")
        .next()?
        .rsplit(' ')
        .next()?
        .parse()
        .ok()
}

fn realtime(engine: &Path, rounds: u32, turn_ms: u64) -> Result<(), String> {
    let mut brain = Brain::spawn(engine, &[])?;
    let mut speeds = [Vec::new(), Vec::new()];
    let mut lines = [0usize, 0];
    for round in 0..2 * rounds {
        let detail = (round % 2) as usize;
        brain.send("START 15")?;
        brain.expect_ok("START 15")?;
        brain.messages.clear();
        for line in [
            format!("INFO show_detail {detail}"),
            format!("INFO timeout_turn {turn_ms}"),
            "INFO timeout_match 0".into(),
            "YXBOARD\n7,7,2\n8,8,1\n7,8,2\n6,6,1\nDONE".into(),
            "YXNBEST 1".into(),
        ] {
            brain.send(&line)?;
        }
        brain.reply()?;
        let speed = visits_per_second(&brain.messages)
            .ok_or_else(|| format!("no visits/s in the search's messages: {:?}", brain.messages))?;
        speeds[detail].push(speed);
        lines[detail] += brain
            .messages
            .iter()
            .filter(|(m, _)| m.contains("REALTIME"))
            .count();
    }
    brain.process.quit(Duration::from_secs(5));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (on, off) = (mean(&speeds[1]), mean(&speeds[0]));
    println!(
        "realtime lines on / off: {on:.0} / {off:.0} visits/s = {:.3} ({rounds} searches of {turn_ms} ms \
         each, interleaved; {} realtime lines with them on, {} off)",
        on / off,
        lines[1],
        lines[0]
    );
    Ok(())
}

/// `n` encoded 15x15 freestyle positions from seeded random openings.
fn network_positions(n: usize) -> Vec<f32> {
    let mut rng = Rng::new(11);
    let mut planes = Vec::new();
    for _ in 0..n {
        let mut board = Board::new(15, 15, Rule::Freestyle).expect("15x15 is a board");
        let stones = 2 + rng.below(30);
        for [x, y] in random_opening(&mut rng, stones) {
            let _ = board.play(Pos::new(x as usize, y as usize));
        }
        let start = planes.len();
        planes.resize(start + engine::eval::features::input_len(&board), 0.0);
        engine::eval::features::encode(&board, &mut planes[start..]);
    }
    planes
}

/// Positions/s of `forward` on batches of `batch` positions for about `seconds`.
fn positions_per_second(
    seconds: f64,
    batch: usize,
    planes: &[f32],
    mut forward: impl FnMut(&[f32]) -> Result<(), String>,
) -> Result<f64, String> {
    let per = planes.len() / 64;
    let (mut done, start) = (0usize, Instant::now());
    let mut i = 0;
    while start.elapsed().as_secs_f64() < seconds || done == 0 {
        let first = i % (64 - batch + 1);
        forward(&planes[first * per..(first + batch) * per])?;
        done += batch;
        i += batch;
    }
    Ok(done as f64 / start.elapsed().as_secs_f64())
}

/// `pattern`: the pattern network's width and its walk's leaves.
fn network(seconds: f64, only: &[String], pattern: (usize, usize)) -> Result<(), String> {
    use engine::eval::native::{NativeNet, Simd};
    let (file, bytes) = engine::eval::embedded::DEFAULT_MODELS[0];
    let planes = network_positions(64);
    let batches = [1usize, 8, 16, 32];
    println!("{file}, 15x15, one thread: positions/s");
    println!(
        "{:<22}{}",
        "runtime",
        batches
            .map(|b| format!("{:>10}", format!("batch {b}")))
            .join("")
    );
    let net = NativeNet::from_bytes(bytes).map_err(|e| e.to_string())?;
    let kernels = match only {
        [] => Simd::available(),
        names => names
            .iter()
            .map(|k| Simd::from_env(k))
            .collect::<Result<Vec<_>, _>>()?,
    };
    for &simd in &kernels {
        let net = net.clone().with_simd(simd);
        let mut row = format!("{:<22}", format!("native {simd}"));
        for b in batches {
            let rate =
                positions_per_second(seconds, b, &planes, |x| net.run(x, b, 15, 15).map(|_| ()))?;
            row += &format!("{rate:>10.0}");
        }
        println!("{row}");
    }
    if !only.is_empty() {
        return pattern_network(seconds, &kernels, false, pattern);
    }
    network_onnx(seconds, bytes, &planes, &batches)?;
    pattern_network(seconds, &kernels, true, pattern)
}

/// `n` 15x15 freestyle boards along a search-like walk from a 30-stone middle game: each leaf
/// is the last one with 0 to 3 moves taken back and 1 to 3 played (never above the root).
///
/// A search evaluates the few boards of its slots, each kept in cache; a board is 25 KB, so
/// `bench network` keeps the walk short (256 leaves) and runs it again and again: 4,096
/// separate boards made every evaluation read a board from memory, a cost of the bench and not
/// of the network.
fn pattern_walk(n: usize) -> Vec<Board> {
    let root = engine::bench::position(Rule::Freestyle, 30);
    let (mut rng, mut board) = (Rng::new(74), root.clone());
    let mut boards = Vec::with_capacity(n);
    while boards.len() < n {
        for _ in 0..rng.below(4) {
            if board.move_count() > root.move_count() {
                board.undo();
            }
        }
        for _ in 0..1 + rng.below(3) {
            let legal = board.legal_moves();
            if board.winner().is_some() || legal.is_empty() {
                board = root.clone();
                break;
            }
            let _ = board.play(legal[rng.below(legal.len())]);
        }
        boards.push(board.clone());
    }
    boards
}

/// Seconds of CPU this thread has used: under a loaded machine, a rate per CPU-second is the
/// rate per core the figure is about.
fn thread_cpu_seconds() -> f64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage only writes the struct we pass.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(ru.ru_utime) + t(ru.ru_stime)
}

/// (per wall second, per CPU-second) of `f`, which does `per_call` evaluations, for about
/// `seconds` of wall time.
fn rates(seconds: f64, per_call: usize, mut f: impl FnMut()) -> (f64, f64) {
    f(); // warm-up
    let (start, cpu) = (Instant::now(), thread_cpu_seconds());
    let mut done = 0usize;
    while start.elapsed().as_secs_f64() < seconds || done == 0 {
        f();
        done += per_call;
    }
    let (wall, cpu) = (start.elapsed().as_secs_f64(), thread_cpu_seconds() - cpu);
    (done as f64 / wall, done as f64 / cpu.max(1e-9))
}

/// `--pattern-dim`: a width the pattern contract allows, refused before anything is measured.
fn pattern_width(text: &str) -> Result<usize, String> {
    let dim = text.parse::<usize>().map_err(|e| e.to_string())?;
    engine::net::pattern::check_dim(dim).map_err(|e| e.to_string())?;
    Ok(dim)
}

/// "  33157 /s  61000 /CPU-s" for a cell of the pattern table.
fn cell((wall, cpu): (f64, f64)) -> String {
    format!("{wall:>9.0} {cpu:>9.0}")
}

/// The pattern network (random weights, `dim` wide) along a search-like walk, one thread: native
/// on each kernel path (the `Evaluator` with its legal-move softmax, and the network alone),
/// and with `onnx`, the same file on ONNX Runtime on the walk's encoded positions.
fn pattern_network(
    seconds: f64,
    kernels: &[engine::eval::native::Simd],
    onnx: bool,
    (dim, leaves): (usize, usize),
) -> Result<(), String> {
    use engine::eval::Evaluator;
    use engine::eval::native::pattern::{PatternEvaluator, PatternNet, PatternState};
    use engine::net::PatternWeights;
    let w = PatternWeights::random(dim, 1).map_err(|e| e.to_string())?;
    let bytes = engine::net::pattern_onnx_bytes(&w, &w.meta(0)).map_err(|e| e.to_string())?;
    let net = PatternNet::from_bytes(&bytes).map_err(|e| e.to_string())?;
    let boards = pattern_walk(leaves);
    println!();
    println!(
        "pattern network (D={dim}, random weights), 15x15, one thread, a search-like walk of {} \
         leaves: evaluations per wall second and per CPU-second",
        boards.len()
    );
    println!(
        "{:<22}{:>19}{:>19}{:>19}",
        "", "evaluator", "network alone", "accumulator alone"
    );
    for &simd in kernels {
        let ev = PatternEvaluator::new(net.clone().with_simd(simd));
        let mut out = Vec::new();
        let full = rates(seconds, boards.len(), || {
            boards.iter().for_each(|b| ev.evaluate(&[b], &mut out))
        });
        let net = net.clone().with_simd(simd);
        let (mut state, mut logits) = (PatternState::default(), vec![0f32; 225]);
        let alone = rates(seconds, boards.len(), || {
            for b in &boards {
                net.evaluate(&mut state, b, &[], &mut logits);
            }
        });
        // The incremental updates without the layers after them: what the head costs is the
        // difference.
        let updates = rates(seconds, boards.len(), || {
            for b in &boards {
                net.sync(&mut state, b);
            }
        });
        let name = format!("native {simd}");
        println!("{name:<22}{} {} {}", cell(full), cell(alone), cell(updates));
    }
    let planes = encoded(&boards[..64]);
    let cpu32 = engine::eval::embedded::DEFAULT_MODELS[0].1;
    cpu32_rows(seconds, kernels, cpu32, &planes)?;
    if onnx {
        pattern_onnx(seconds, &bytes, &planes, "pattern onnx runtime")?;
        pattern_onnx(seconds, cpu32, &planes, "cpu32 onnx runtime")?;
    }
    Ok(())
}

/// The `cpu32` ResNet (`file`) natively on each kernel path, one position a call, on the walk's
/// encoded positions (`planes`, 64 of them): the rows beside the pattern network's.
fn cpu32_rows(
    seconds: f64,
    kernels: &[engine::eval::native::Simd],
    file: &[u8],
    planes: &[f32],
) -> Result<(), String> {
    let resnet = engine::eval::native::NativeNet::from_bytes(file).map_err(|e| e.to_string())?;
    for &simd in kernels {
        let net = resnet.clone().with_simd(simd);
        let mut i = 0;
        let r = rates(seconds, 1, || {
            let x = &planes[(i % 64) * 11 * 225..][..11 * 225];
            i += 1;
            let _ = net.run(x, 1, 15, 15);
        });
        println!(
            "{:<22}{} (positions, planes given)",
            format!("cpu32 native {simd} b1"),
            cell(r)
        );
    }
    Ok(())
}

/// The input planes of `boards`.
fn encoded(boards: &[Board]) -> Vec<f32> {
    boards
        .iter()
        .flat_map(|b| {
            let mut x = vec![0f32; engine::eval::features::input_len(b)];
            engine::eval::features::encode(b, &mut x);
            x
        })
        .collect()
}

/// A model on ONNX Runtime, one intra-op thread, at batch 1 and 32 of 64 encoded 15x15 positions.
fn pattern_onnx(seconds: f64, bytes: &[u8], planes: &[f32], name: &str) -> Result<(), String> {
    use engine::eval::onnx::{Device, OnnxModel};
    let mut model = OnnxModel::from_bytes(bytes, 1, Device::Cpu).map_err(|e| e.to_string())?;
    let per = 11 * 225;
    for batch in [1usize, 32] {
        let mut i = 0;
        let r = rates(seconds, batch, || {
            let first = i % (64 - batch + 1);
            i += batch;
            let _ = model.run(&planes[first * per..(first + batch) * per], batch, 15, 15);
        });
        println!(
            "{:<22}{} (positions, planes given)",
            format!("{name} b{batch}"),
            cell(r)
        );
    }
    Ok(())
}

fn network_onnx(
    seconds: f64,
    bytes: &[u8],
    planes: &[f32],
    batches: &[usize],
) -> Result<(), String> {
    use engine::eval::onnx::{Device, OnnxModel};
    let mut model = match OnnxModel::from_bytes(bytes, 1, Device::Cpu) {
        Ok(m) => m,
        Err(e) => {
            println!("{:<22}not measured: {e}", "onnx runtime");
            return Ok(());
        }
    };
    let mut row = format!("{:<22}", "onnx runtime");
    for &b in batches {
        let rate = positions_per_second(seconds, b, planes, |x| {
            model
                .run(x, b, 15, 15)
                .map(|_| ())
                .map_err(|e| e.to_string())
        })?;
        row += &format!("{rate:>10.0}");
    }
    println!("{row}");
    Ok(())
}
