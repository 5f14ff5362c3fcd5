//! pbrain-fivezero: the Gomocup brain. Maps `protocol::Command`s onto the `engine::brain` API.
//!
//! A reader thread turns stdin into commands and raises the stop flag the moment `STOP`,
//! `YXSTOP` or `END` arrives (or stdin closes), so a search in progress returns at once; the main
//! thread runs commands in order and writes every reply flushed. Bad input gets `ERROR`/`UNKNOWN`
//! and changes nothing; a panic inside a command is caught, reported, and the engine carries on.
//! Analysis: `YXNBEST n` lists the n best moves, `INFO show_detail 1` turns on Yixin-Board's
//! realtime lines; the `analyse` subcommand serves JSON requests instead (`brain::script`).

use clap::Parser;
use engine::brain::{
    Difficulty, Engine, EngineConfig, ModelSource, MoveInfo, SearchKind, SetupStone, Swap2Choice,
    Swap2Decision,
};
use engine::device::Device;
use engine::game::{Pos, Rule};
use engine::mcts::{ProgressHook, ProgressReport, Proven, win_rate};
use protocol::{BoardStone, BrainLine, Command, CommandError, Coord, Info, StoneOwner};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// fivezero: an AlphaZero-style Gomoku/Renju engine speaking the Gomocup protocol on stdin/stdout.
#[derive(Parser, Debug)]
#[command(name = "pbrain-fivezero", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Sub>,
    /// easy = no threat-space search; medium = threat search at the root and leaves.
    /// Also settable during a game with `INFO difficulty easy|medium`.
    #[arg(long, value_enum, default_value_t = Difficulty::Medium)]
    difficulty: Difficulty,
    /// The move search: mcts (over the model, or the classical evaluator without one) or the
    /// foundation lookahead (classical ranking + alpha-beta).
    #[arg(long, value_enum, default_value_t = SearchKind::Mcts)]
    search: SearchKind,
    /// Search threads (INFO thread_num overrides it).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// The evaluator: `default` (the network built into the engine, in the games whose rule and
    /// board size it was trained for, the classical evaluator elsewhere), `none` (the classical
    /// evaluator), or an ONNX model file or a directory of checkpoints (the newest valid *.onnx
    /// wins; watched, and new checkpoints are swapped in between moves).
    /// `INFO model none|default|PATH` changes it during a game.
    #[arg(long, default_value = "default")]
    model: ModelSource,
    /// Inference device for the model: cpu, or cuda[:N] (needs the GPU build of ONNX Runtime).
    #[arg(long, default_value_t = Device::Cpu)]
    device: Device,
    /// Memory the engine may use in MiB (INFO max_memory overrides it).
    #[arg(long, default_value_t = 350)]
    max_memory_mib: u64,
    /// Positions whose network answers are remembered, so a position the search reaches again
    /// costs no forward pass (0 = off). Its memory (about 1 KiB a position on 15x15) comes out
    /// of the search tree's share of the memory limit.
    #[arg(long, default_value_t = engine::brain::DEFAULT_EVAL_CACHE_ENTRIES)]
    eval_cache: usize,
    /// The search's exploration constant (PUCT's c_init): the weight of the network's priors
    /// against the values searched so far when visits are handed out. For tuning matches.
    #[arg(long, default_value_t = engine::mcts::MctsConfig::default().c_puct_init, value_parser = non_negative)]
    c_puct: f32,
    /// First-play urgency: an unvisited move below the root counts as its parent's value minus
    /// this times the square root of the prior already visited. For tuning matches.
    #[arg(long, default_value_t = engine::mcts::MctsConfig::default().fpu_reduction, value_parser = non_negative)]
    fpu_reduction: f32,
}

/// A finite number >= 0 (a search constant).
fn non_negative(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f32>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a finite number >= 0")),
    }
}

#[derive(clap::Subcommand, Debug)]
enum Sub {
    /// Fixed positions (rules 0, 1, 4), one thread, fixed visits: prints `Nodes searched: N`,
    /// visits/s and a signature that is identical on every run of the same build.
    Bench,
    /// Scripting: reads one JSON request per line on stdin, writes one JSON reply per line
    /// (schema in docs/analysis.md and in `engine::brain::script`).
    Analyse,
}

/// Replies go through one locked writer so messages from other threads never interleave a line.
#[derive(Clone)]
struct Out(Arc<Mutex<std::io::Stdout>>);

impl Out {
    fn send(&self, line: &BrainLine) {
        let mut out = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // A closed stdout means the manager is gone; the read side will see EOF and end us.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

enum Input {
    /// A command and when its last line was read (the move clock starts there).
    Command(Result<Command, CommandError>, Instant),
    LineTooLong,
    Eof,
}

fn coord(p: Pos) -> Coord {
    Coord::new(p.x() as u32, p.y() as u32)
}

fn setup(stones: &[BoardStone]) -> Vec<SetupStone> {
    stones
        .iter()
        .filter(|s| s.owner != StoneOwner::Marker)
        .map(|s| SetupStone {
            pos: (s.at.x as i64, s.at.y as i64),
            own: s.owner == StoneOwner::Own,
        })
        .collect()
}

struct Brain {
    engine: Engine,
    /// When the command being handled arrived.
    received: Instant,
    out: Out,
    stop: Arc<AtomicBool>,
    ending: Arc<AtomicBool>,
    /// Yixin's `INFO show_detail` bits: 1 = realtime lines while thinking.
    show_detail: u32,
}

/// How often realtime lines may go out while thinking: rare enough to cost the search nothing
/// measurable, often enough for a GUI to look live.
const REALTIME_EVERY: Duration = Duration::from_millis(200);

/// Moves as `x,y x,y …`.
fn line_text(pv: &[Pos]) -> String {
    pv.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `winrate 55.2%`, or `proven win in N` (N = moves of the proven line the engine holds).
fn outcome_text(value: f32, proven: Option<Proven>, line: usize) -> String {
    match proven {
        Some(Proven::Win) => format!("proven win in {line}"),
        Some(Proven::Loss) => format!("proven loss in {line}"),
        Some(Proven::Draw) => "proven draw".into(),
        None => format!("winrate {:.1}%", 100.0 * win_rate(value)),
    }
}

/// The summary line of a finished search: the PV, the win rate or proven result, the speed.
fn summary_text(info: &MoveInfo) -> String {
    let cache = info
        .cache_hits
        .map(|h| format!(" cache {:.0}%", 100.0 * h))
        .unwrap_or_default();
    format!(
        "depth {} value {:+.3} {} nodes {} {:.0} visits/s{cache} time {} ms pv {}",
        info.depth,
        info.value,
        outcome_text(info.value, info.proven, info.pv.len()),
        info.nodes,
        info.speed(),
        info.elapsed.as_millis(),
        line_text(&info.pv)
    )
}

/// Yixin-Board's realtime lines for one progress report: the current best when it changed and
/// each root move newly proven to lose (`previous` remembers what was sent).
fn realtime_lines(r: &ProgressReport, previous: &mut (Pos, Vec<Pos>)) -> Vec<String> {
    let mut lines = Vec::new();
    if !r.best.is_none() && r.best != previous.0 {
        previous.0 = r.best;
        lines.push(format!("REALTIME BEST {}", r.best));
    }
    for &p in &r.losing {
        if !previous.1.contains(&p) {
            previous.1.push(p);
            lines.push(format!("REALTIME LOSE {p}"));
        }
    }
    lines
}

impl Brain {
    fn error(&self, text: impl std::fmt::Display) {
        self.out.send(&BrainLine::Error(text.to_string()));
    }

    /// Searches the current position for its `n` best moves, with realtime lines when asked.
    fn search(&mut self, n: usize) -> Result<MoveInfo, engine::brain::EngineError> {
        self.stop
            .store(self.ending.load(Ordering::SeqCst), Ordering::SeqCst);
        let realtime = self.show_detail & 1 != 0;
        let hook = realtime.then(|| {
            self.out
                .send(&BrainLine::Message("REALTIME REFRESH".into()));
            let out = self.out.clone();
            let sent = Mutex::new((Pos::NONE, Vec::new()));
            ProgressHook {
                every: REALTIME_EVERY,
                candidates: 0,
                report: Arc::new(move |r: &ProgressReport| {
                    let mut sent = sent.lock().unwrap_or_else(|e| e.into_inner());
                    for line in realtime_lines(r, &mut sent) {
                        out.send(&BrainLine::Message(line));
                    }
                }),
            }
        });
        self.engine.set_progress(hook);
        let result = self.engine.analyse(self.received, &self.stop, n);
        self.engine.set_progress(None);
        if let (true, Ok(info)) = (realtime, &result) {
            self.out
                .send(&BrainLine::Message(format!("REALTIME BEST {}", info.best)));
        }
        result
    }

    /// Thinks, plays and answers with a move; on failure answers ERROR.
    fn think_and_reply(&mut self) {
        let played = self.search(1).and_then(|info| {
            self.engine
                .play_own(info.best.x() as i64, info.best.y() as i64)?;
            Ok(info)
        });
        match played {
            Ok(info) => {
                self.out.send(&BrainLine::Message(summary_text(&info)));
                self.out.send(&BrainLine::Move(coord(info.best)));
            }
            Err(e) => self.error(e),
        }
    }

    /// `YXNBEST n`: the n best moves by search, best first, one `MESSAGE (i) …` line each, then
    /// the summary and the best move. The position is left as it was (the manager has not asked
    /// the engine to move).
    fn nbest_and_reply(&mut self, n: u32) {
        let Some(board) = self.engine.board() else {
            return self.error("YXNBEST before START");
        };
        let points = board.width() * board.height();
        if n == 0 || n as usize > points {
            return self.error(format!(
                "YXNBEST {n}: the count must be 1 to {points} (the board's points)"
            ));
        }
        match self.search(n as usize) {
            Ok(info) => {
                for (i, c) in info.candidates.iter().enumerate() {
                    self.out.send(&BrainLine::Message(format!(
                        "({}) {} {} value {:+.3} visits {} prior {:.3} pv {}",
                        i + 1,
                        c.mv,
                        outcome_text(c.value, c.proven, c.pv.len()),
                        c.score(),
                        c.visits,
                        c.prior,
                        line_text(&c.pv)
                    )));
                }
                self.out.send(&BrainLine::Message(summary_text(&info)));
                self.out.send(&BrainLine::Move(coord(info.best)));
            }
            Err(e) => self.error(format!("YXNBEST {n}: {e}")),
        }
    }

    fn info(&mut self, info: Info) {
        let limits = &mut self.engine.limits;
        match info {
            Info::TimeoutTurn(ms) => limits.timeout_turn_ms = Some(ms),
            Info::TimeoutMatch(ms) => limits.timeout_match_ms = Some(ms),
            Info::TimeLeft(ms) => limits.time_left_ms = Some(ms),
            Info::MaxMemory(bytes) => self.engine.set_max_memory(bytes),
            Info::Rule(bits) => self.engine.set_rule(Rule::from_protocol(bits)),
            Info::ThreadNum(n) => self.engine.set_threads(n as usize),
            Info::ShowDetail(bits) => self.show_detail = bits,
            // Yixin-Board's levels are node limits (with a 2000 s turn): the tree search's visits.
            Info::MaxNode(n) => self
                .engine
                .set_max_visits((n != 0 && n != u64::MAX).then_some(n)),
            Info::Other { key, value } if key.eq_ignore_ascii_case("difficulty") => {
                match value.parse() {
                    Ok(d) => self.engine.set_difficulty(d),
                    Err(e) => self
                        .out
                        .send(&BrainLine::Message(format!("INFO difficulty: {e}"))),
                }
            }
            // `INFO model none|default|PATH`: the evaluator from the next move on.
            Info::Other { key, value } if key.eq_ignore_ascii_case("model") => {
                match value.parse() {
                    Ok(source) => self.engine.set_model(source),
                    Err(e) => self
                        .out
                        .send(&BrainLine::Message(format!("INFO model: {e}"))),
                }
            }
            // Game type, folder, Yixin's search knobs and unknown keys need nothing from us.
            _ => {}
        }
    }

    /// Runs one command; returns false when the engine should exit.
    fn handle(&mut self, command: Command) -> bool {
        match command {
            Command::Start { size } => self.start(size as usize, size as usize),
            Command::RectStart { width, height } => self.start(width as usize, height as usize),
            Command::Restart => match self.engine.restart() {
                Ok(()) => self.out.send(&BrainLine::Ok),
                Err(e) => self.error(e),
            },
            Command::Begin => match self.engine.board() {
                None => self.error("BEGIN before START"),
                Some(b) if b.move_count() > 0 => {
                    self.error("BEGIN on a board that already has stones")
                }
                Some(_) => self.think_and_reply(),
            },
            Command::Turn(c) => match self.engine.opponent_move(c.x as i64, c.y as i64) {
                Ok(()) => self.think_and_reply(),
                Err(e) => self.error(format!("TURN {c}: {e}")),
            },
            Command::Board(stones) => match self.engine.set_position(&setup(&stones)) {
                Ok(()) => self.think_and_reply(),
                Err(e) => self.error(format!("BOARD: {e}")),
            },
            Command::YxBoard(stones) => {
                if let Err(e) = self.engine.set_position(&setup(&stones)) {
                    self.error(format!("YXBOARD: {e}"));
                }
            }
            Command::Swap2Board(opening) => self.swap2(&opening),
            Command::Takeback(c) => match self.engine.takeback(c.x as i64, c.y as i64) {
                Ok(()) => self.out.send(&BrainLine::Ok),
                Err(e) => self.error(format!("TAKEBACK {c}: {e}")),
            },
            Command::Play(c) => match self.engine.play_own(c.x as i64, c.y as i64) {
                Ok(p) => self.out.send(&BrainLine::Move(coord(p))),
                Err(e) => self.error(format!("PLAY {c}: {e}")),
            },
            Command::Info(info) => self.info(info),
            Command::End => return false,
            Command::About => self.out.send(&BrainLine::About(vec![
                ("name".into(), "fivezero".into()),
                ("version".into(), env!("CARGO_PKG_VERSION").into()),
                ("author".into(), "fivezero developers".into()),
                ("country".into(), "International".into()),
                ("www".into(), "https://crates.io".into()),
            ])),
            Command::YxShowForbid => {
                let points = self
                    .engine
                    .forbidden_points()
                    .into_iter()
                    .map(coord)
                    .collect();
                self.out.send(&BrainLine::Forbid(points));
            }
            Command::YxNBest(n) => self.nbest_and_reply(n),
            Command::YxShowInfo => {
                // Yixin-Board sizes its thread slider from this (hash size: its default stands).
                let cores = std::thread::available_parallelism()
                    .map_or(1, |n| n.get())
                    .min(64);
                self.out
                    .send(&BrainLine::Message(format!("INFO MAX_THREAD_NUM {cores}")));
            }
            Command::YxHashClear | Command::Stop => {}
        }
        true
    }

    /// `SWAP2BOARD`: the opening decision, searched like a move and answered on one line.
    fn swap2(&mut self, opening: &[Coord]) {
        self.stop
            .store(self.ending.load(Ordering::SeqCst), Ordering::SeqCst);
        let points: Vec<(i64, i64)> = opening
            .iter()
            .map(|c| (i64::from(c.x), i64::from(c.y)))
            .collect();
        match self.engine.swap2(&points, self.received, &self.stop) {
            Ok(Swap2Decision {
                choice,
                value,
                visits,
            }) => {
                let reply = match choice {
                    Swap2Choice::Swap => BrainLine::Swap,
                    Swap2Choice::Place(ps) if ps.len() == 1 => BrainLine::Move(coord(ps[0])),
                    Swap2Choice::Place(ps) => BrainLine::Moves(ps.into_iter().map(coord).collect()),
                };
                self.out.send(&BrainLine::Message(format!(
                    "swap2 {reply}: value {value:+.3} for white to move, {visits} playouts, {} ms",
                    self.received.elapsed().as_millis()
                )));
                self.out.send(&reply);
            }
            Err(e) => self.error(format!("SWAP2BOARD: {e}")),
        }
    }

    fn start(&mut self, width: usize, height: usize) {
        match self.engine.start(width, height) {
            Ok(()) => self.out.send(&BrainLine::Ok),
            Err(e) => self.error(e),
        }
    }

    /// `handle` with a panic caught: reported as ERROR, the engine state kept, and a move still
    /// made when the command owed one. Returns false when the engine should exit.
    fn handle_guarded(&mut self, command: Command) -> bool {
        let thinks = matches!(
            command,
            Command::Begin | Command::Turn(_) | Command::Board(_)
        );
        let moves_before = self.engine.board().map(|b| b.move_count());
        match catch_unwind(AssertUnwindSafe(|| self.handle(command))) {
            Ok(go_on) => go_on,
            Err(_) => {
                self.error("internal error (see stderr); engine state kept");
                let moved = self.engine.board().map(|b| b.move_count()) != moves_before;
                if thinks && !moved {
                    self.emergency_move();
                }
                true
            }
        }
    }

    /// A move when all else failed (a caught panic while thinking): never forfeit on a crash.
    fn emergency_move(&mut self) {
        let Some(board) = self.engine.board() else {
            return;
        };
        let p = board
            .candidates(1)
            .into_iter()
            .find(|&p| board.is_legal(p))
            .or_else(|| board.legal_moves().first().copied());
        if let Some(p) = p
            && self.engine.play_own(p.x() as i64, p.y() as i64).is_ok()
        {
            self.out.send(&BrainLine::Move(coord(p)));
        }
    }
}

/// On Windows, no error dialog may ever wait for a click: a manager runs the engine with its
/// window hidden, so a dialog (a fault, a DLL that fails to load, an unreadable drive) would hang
/// the game until the manager's timeout. Errors are reported on the protocol instead.
#[cfg(windows)]
fn no_error_dialogs() {
    unsafe extern "system" {
        // kernel32; takes and returns a bit set, no pointers.
        safe fn SetErrorMode(mode: u32) -> u32;
    }
    const SEM_FAILCRITICALERRORS: u32 = 0x0001;
    const SEM_NOGPFAULTERRORBOX: u32 = 0x0002;
    const SEM_NOOPENFILEERRORBOX: u32 = 0x8000;
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
}

fn main() {
    #[cfg(windows)]
    no_error_dialogs();
    let cli = Cli::parse();
    if let Some(Sub::Bench) = cli.command {
        engine::bench::run();
        return;
    }
    // Panics are caught per command and reported as ERROR; keep stderr quiet but informative.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("pbrain-fivezero internal error: {info}")
    }));
    let engine = Engine::new(EngineConfig {
        difficulty: cli.difficulty,
        search: cli.search,
        threads: cli.threads.max(1),
        max_memory_bytes: cli.max_memory_mib * 1024 * 1024,
        model: cli.model.clone(),
        device: cli.device,
        eval_cache_entries: cli.eval_cache,
        c_puct: cli.c_puct,
        fpu_reduction: cli.fpu_reduction,
    });
    match cli.command {
        Some(Sub::Analyse) => serve_script(engine, &cli),
        _ => serve_protocol(engine),
    }
}

/// `analyse`: JSON requests on stdin, JSON replies on stdout.
fn serve_script(mut engine: Engine, cli: &Cli) {
    // stdout carries only JSON replies; the engine's messages go to stderr.
    engine.set_message_sink(Arc::new(|text| eprintln!("{text}")));
    engine.load_model();
    let defaults = engine::brain::script::Defaults {
        threads: cli.threads.max(1),
        difficulty: cli.difficulty,
    };
    let _ = engine::brain::script::serve(
        &mut engine,
        std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        defaults,
    );
}

/// The Gomocup protocol: commands from the reader thread, run in order on this thread.
fn serve_protocol(mut engine: Engine) {
    let out = Out(Arc::new(Mutex::new(std::io::stdout())));
    let sink = out.clone();
    engine.set_message_sink(Arc::new(move |text| {
        sink.send(&BrainLine::Message(text.to_string()))
    }));
    engine.load_model();
    let stop = Arc::new(AtomicBool::new(false));
    let ending = Arc::new(AtomicBool::new(false));
    let rx = spawn_reader(stop.clone(), ending.clone());
    let mut brain = Brain {
        engine,
        received: Instant::now(),
        out,
        stop,
        ending,
        show_detail: 0,
    };
    for input in rx {
        match input {
            Input::Eof => break,
            Input::LineTooLong => brain.error("line too long; ignored"),
            Input::Command(Err(e), _) => match &e {
                // INFO expects no reply at all, even when its value is bad.
                CommandError::Invalid { command, .. } if command.eq_ignore_ascii_case("INFO") => {}
                _ => brain.out.send(&e.reply()),
            },
            Input::Command(Ok(command), received) => {
                brain.received = received;
                if !brain.handle_guarded(command) {
                    break;
                }
            }
        }
    }
}

/// The reader thread: turns stdin into commands, and raises `stop` the moment `STOP`, `YXSTOP` or
/// `END` arrives (`ending` too for `END` and for the end of stdin), so a search in progress
/// returns at once.
fn spawn_reader(
    stop: Arc<AtomicBool>,
    ending: Arc<AtomicBool>,
) -> crossbeam_channel::Receiver<Input> {
    let (tx, rx) = crossbeam_channel::unbounded::<Input>();
    std::thread::spawn(move || {
        let mut reader = protocol::CommandReader::new();
        let raise = |c: &Result<Command, CommandError>| match c {
            Ok(Command::Stop) => stop.store(true, Ordering::SeqCst),
            Ok(Command::End) => {
                ending.store(true, Ordering::SeqCst);
                stop.store(true, Ordering::SeqCst);
            }
            _ => {}
        };
        for line in protocol::read_lines(std::io::stdin().lock()) {
            match line {
                Ok(line) => {
                    for c in reader.feed_all(&line) {
                        raise(&c);
                        let _ = tx.send(Input::Command(c, Instant::now()));
                    }
                }
                Err(protocol::LineError::TooLong(_)) => {
                    let _ = tx.send(Input::LineTooLong);
                }
                Err(protocol::LineError::Io(_)) => break,
            }
        }
        while let Some(c) = reader.finish() {
            let _ = tx.send(Input::Command(c, Instant::now()));
        }
        ending.store(true, Ordering::SeqCst);
        stop.store(true, Ordering::SeqCst);
        let _ = tx.send(Input::Eof);
    });
    rx
}
