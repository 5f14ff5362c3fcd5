//! `fivezero-tools tournament`: plays Gomocup engines against each other (round-robin or
//! gauntlet) with referee-grade time, memory and legality enforcement, and reports results,
//! Elo, SPRT, a game record file and a JSON summary.
//!
//! Layout: `spec` (engine command lines), `process` + `memory` +
//! `log` (child processes), `game` (one game, adjudication), `report` (tallies and output),
//! `interrupt` (Ctrl-C); this file holds the CLI arguments and the run: the plan (engines,
//! clocks, schedule), the worker threads (each with its own engine processes kept alive between
//! games) and the referee loop that tallies and reports each game. Depends on `engine::game`,
//! `engine::openings` (opening files, shared with the trainer's evaluation matches),
//! `engine::net::write_atomic`, `protocol`, `stats`.

pub mod game;
pub mod interrupt;
pub mod log;
pub mod memory;
pub mod process;
pub mod report;
pub mod spec;

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError};

use engine::game::{Board, Rule};

use engine::openings::{self, Opening, OpeningFormat};
use game::{Clock, GameConfig, GameRecord, play_game};
use log::Logger;
use process::{EngineProcess, Exit};
use report::{EngineTotals, PairTotals, Summary, Tally};
use spec::{EngineSpec, SPEC_HELP};
use stats::SprtParams;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Every engine against every other.
    RoundRobin,
    /// The first engine against each of the others.
    Gauntlet,
}

/// `tournament --help` after the options: the engine spec (`spec::SPEC_HELP`), then this.
const AFTER_HELP: &str = "\
OPENINGS (--openings FILE, one opening per line, black first; '#' comments)
  offset     c-gomoku-cli style, x,y relative to the centre:   0,0, 1,0, -1,1
  absolute   0-based protocol coordinates x,y:                 7,7 8,7 6,8
  algebraic  column letter + row counted from the bottom:      h8 i8 g7   (h8 = centre of 15x15)
  --openings-format auto picks: letters -> algebraic; a negative number or ', ' -> offset;
  else absolute. Stones are replayed on the rules core: off-board, duplicate, renju-forbidden
  stones or a finished five are errors. Game g of a pair uses opening g (with --repeat: g/2,
  colours swapped on the second game); the list wraps around.

TIME AND FORFEITS
  Per move the deadline is min(turn limit, time left) + tolerance after the command is sent.
  Losses by forfeit (counted per reason): spawn, start (no OK to START / ERROR), timeout,
  crash, occupied, off-board, forbidden (renju foul), pass, garbled (a line that is no move and
  no MESSAGE/DEBUG/ERROR/UNKNOWN), memory (private memory of the process tree over
  --max-memory, checked after each move). After spawn/start/timeout/crash/garbled/memory the
  engine is killed and restarted for its next game. At the end engines get END and are killed
  if still running after --end-grace-ms.

WHAT ENGINES SAY
  The first MESSAGE an engine sends before its OK to START (pbrain-fivezero names the model or
  evaluator it plays on there) is printed once, with the report and as `start_message` in the
  JSON summary: check it before reading a match's result.

STOPPING EARLY
  The --json summary is rewritten after every game. The first Ctrl-C (or SIGTERM) starts no
  new game, lets the games in flight finish, prints the report and exits with status 130
  (`\"interrupted\": true` in the summary); a second one quits at once.";

#[derive(Debug, clap::Args)]
#[command(after_help = format!("{SPEC_HELP}\n\n{AFTER_HELP}"), args_override_self = true)]
pub struct Args {
    /// An engine to play (at least two; see ENGINE SPEC below).
    #[arg(long = "engine", value_name = "SPEC", required = true)]
    pub engines: Vec<String>,
    #[arg(long, value_enum, default_value = "round-robin")]
    pub mode: Mode,
    /// Games per pair of engines.
    #[arg(long, default_value_t = 2)]
    pub games: u64,
    /// Games played at the same time (each worker keeps its own engine processes).
    #[arg(long, default_value_t = 1)]
    pub concurrency: usize,
    /// Play each opening twice with colours swapped.
    #[arg(long)]
    pub repeat: bool,
    /// freestyle, standard, renju, caro, or the Gomocup rule number 0, 1, 4, 8 (2: renju, as
    /// Yixin-Board sends it); parsed by `Rule`'s one grammar.
    #[arg(long, default_value = "freestyle")]
    pub rule: Rule,
    /// Board size: N (square) or WxH.
    #[arg(long, default_value = "15", value_parser = parse_size)]
    pub size: (usize, usize),
    #[arg(long, value_name = "FILE")]
    pub openings: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "auto")]
    pub openings_format: OpeningFormat,
    /// Time per move in ms (INFO timeout_turn); must be at least 1.
    #[arg(long = "turn-ms", alias = "timeout-turn", default_value_t = 5000)]
    pub turn_ms: u64,
    /// Time per game and engine in ms (INFO timeout_match); omit for no match clock.
    #[arg(long = "match-ms", alias = "timeout-match")]
    pub match_ms: Option<u64>,
    /// Grace added to every deadline, ms (Piskvork and GomocupJudge use 1000).
    #[arg(long = "tolerance-ms", default_value_t = 1000)]
    pub tolerance_ms: u64,
    /// Time for the OK to START, ms [default: max(5000, longest turn + tolerance)].
    #[arg(long = "start-timeout-ms")]
    pub start_timeout_ms: Option<u64>,
    /// Memory limit per engine (private memory of its process tree), e.g. 367001600, 350M, 1G.
    #[arg(long, value_parser = parse_bytes)]
    pub max_memory: Option<u64>,
    /// Draw when this many stones are on the board [default: 200 for renju 15x15, else 0 = full board].
    #[arg(long)]
    pub draw_after: Option<usize>,
    /// Send YXSTOP at turn limit + tolerance/2, as c-gomoku-cli does.
    #[arg(long)]
    pub yxstop: bool,
    /// Stop (SIGSTOP) engines while it is not their turn, as GomocupJudge does.
    #[arg(long)]
    pub suspend: bool,
    /// How long an engine may take to exit after END before it is killed, ms.
    #[arg(long = "end-grace-ms", default_value_t = 1000)]
    pub end_grace_ms: u64,
    /// End lines sent to engines with CRLF (Piskvork) instead of LF (c-gomoku-cli).
    #[arg(long)]
    pub crlf: bool,
    /// Sequential test of the first pair, e.g. elo0=0,elo1=5,alpha=0.05,beta=0.05; stops early.
    #[arg(long, value_parser = SprtParams::parse)]
    pub sprt: Option<SprtParams>,
    /// Game record file (PGN-like: tags, moves in algebraic notation, result and reason).
    #[arg(long, value_name = "FILE")]
    pub pgn: Option<PathBuf>,
    /// JSON summary for scripts, rewritten after every game.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Log every line exchanged with the engines.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// No progress line.
    #[arg(long)]
    pub quiet: bool,
}

fn parse_size(s: &str) -> Result<(usize, usize), String> {
    let num = |t: &str| {
        t.trim()
            .parse::<usize>()
            .map_err(|_| format!("bad board size `{s}`"))
    };
    match s.split_once(['x', 'X', ',']) {
        Some((w, h)) => Ok((num(w)?, num(h)?)),
        None => num(s).map(|n| (n, n)),
    }
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("bad memory size `{s}`"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("bad memory unit in `{s}` (K, M, G)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("memory size `{s}` too large"))
}

/// One scheduled game.
#[derive(Debug, Clone, Copy)]
struct Job {
    black: usize,
    white: usize,
    opening: Option<usize>,
}

/// Everything a worker needs, shared read-only.
struct Shared {
    specs: Vec<EngineSpec>,
    /// Each engine's time control: `--turn-ms` / `--match-ms` unless its spec gives its own.
    clocks: Vec<Clock>,
    cfg: GameConfig,
    openings: Vec<Opening>,
    queue: Mutex<VecDeque<Job>>,
    stop: AtomicBool,
    log: Logger,
    crlf: bool,
    end_grace: Duration,
}

enum WorkerMsg {
    /// A finished game, and where to say it has been tallied: its worker waits for that before
    /// it takes another job, so a decision reached on this game (SPRT) starts no further game
    /// however far the tally lags behind the games (it writes the JSON summary each game).
    Game(Job, Box<GameRecord>, crossbeam_channel::Sender<()>),
    Done {
        restarts: Vec<u64>,
        end_kills: Vec<u64>,
    },
}

/// Validates the arguments, plays the tournament, prints and writes the reports.
pub fn run(args: Args) -> Result<Summary, String> {
    let plan = Plan::new(&args)?;
    let mut tally = Tally::new(plan.empty_summary(&args), args.sprt);
    let mut out = Outputs::open(&args, &tally.summary)?;
    let workers = args.concurrency.clamp(1, plan.jobs.len().max(1));
    let shared = Arc::new(plan.into_shared(&args, out.log.clone()));
    let (handles, rx) = start_workers(&shared, workers)?;
    interrupt::install();
    referee(&shared, &rx, &mut tally, &mut out);
    for h in handles {
        let _ = h.join();
    }
    out.finish(&tally)?;
    Ok(tally.summary)
}

/// What the arguments ask for, checked: the engines, their clocks, the game rules, the openings
/// and the schedule of games.
struct Plan {
    specs: Vec<EngineSpec>,
    clocks: Vec<Clock>,
    cfg: GameConfig,
    openings: Vec<Opening>,
    pairs: Vec<(usize, usize)>,
    jobs: VecDeque<Job>,
}

impl Plan {
    fn new(args: &Args) -> Result<Plan, String> {
        check_limits(args)?;
        let specs = engine_specs(args)?;
        let openings = read_openings(args)?;
        let clocks: Vec<Clock> = specs
            .iter()
            .map(|s| Clock {
                turn_ms: s.turn_ms.unwrap_or(args.turn_ms),
                match_ms: s.match_ms.or(args.match_ms),
                max_node: s.max_node,
            })
            .collect();
        let cfg = game_config(args, &clocks);
        let pairs: Vec<(usize, usize)> = match args.mode {
            Mode::RoundRobin => (0..specs.len())
                .flat_map(|a| (a + 1..specs.len()).map(move |b| (a, b)))
                .collect(),
            Mode::Gauntlet => (1..specs.len()).map(|b| (0, b)).collect(),
        };
        let jobs = schedule(args, &pairs, openings.len());
        Ok(Plan {
            specs,
            clocks,
            cfg,
            openings,
            pairs,
            jobs,
        })
    }

    /// The summary before any game: engines, pairs and the planned game count.
    fn empty_summary(&self, args: &Args) -> Summary {
        let (width, height) = args.size;
        Summary {
            rule: args.rule.to_string(),
            width,
            height,
            games_planned: self.jobs.len() as u64,
            games_played: 0,
            engines: self
                .specs
                .iter()
                .zip(&self.clocks)
                .map(|(s, c)| EngineTotals {
                    name: s.name.clone(),
                    turn_ms: c.turn_ms,
                    match_ms: c.match_ms,
                    max_node: c.max_node,
                    ..Default::default()
                })
                .collect(),
            pairs: self
                .pairs
                .iter()
                .map(|&(a, b)| PairTotals {
                    first: self.specs[a].name.clone(),
                    second: self.specs[b].name.clone(),
                    wins: 0,
                    draws: 0,
                    losses: 0,
                    score: None,
                    elo: None,
                    elo_error95: None,
                    los: None,
                    a,
                    b,
                })
                .collect(),
            sprt: None,
            manager_overhead_mean_us: 0.0,
            manager_overhead_max_us: 0.0,
            games: Vec::new(),
            interrupted: false,
        }
    }

    fn into_shared(self, args: &Args, log: Logger) -> Shared {
        Shared {
            specs: self.specs,
            clocks: self.clocks,
            cfg: self.cfg,
            openings: self.openings,
            queue: Mutex::new(self.jobs),
            stop: AtomicBool::new(false),
            log,
            crlf: args.crlf,
            end_grace: Duration::from_millis(args.end_grace_ms),
        }
    }
}

/// The board, time and game-count arguments a tournament can be played with.
fn check_limits(args: &Args) -> Result<(), String> {
    let (width, height) = args.size;
    Board::new(width, height, args.rule).map_err(|e| format!("--size: {e}"))?;
    if args.turn_ms == 0 {
        return Err("--turn-ms must be at least 1 ms (0 leaves only the tolerance to move)".into());
    }
    if args.match_ms == Some(0) {
        return Err("--match-ms must be at least 1 ms; omit it for no match clock".into());
    }
    if args.games == 0 {
        return Err("--games must be at least 1".into());
    }
    Ok(())
}

/// The `--engine` specs parsed and resolved, their names made unique.
fn engine_specs(args: &Args) -> Result<Vec<EngineSpec>, String> {
    let mut specs = args
        .engines
        .iter()
        .map(|s| EngineSpec::parse(s).and_then(EngineSpec::resolve))
        .collect::<Result<Vec<_>, _>>()?;
    if specs.len() < 2 {
        return Err("a tournament needs at least two --engine".into());
    }
    spec::uniquify_names(&mut specs);
    if args.sprt.is_some() && specs.len() != 2 {
        return Err("--sprt needs exactly two engines".into());
    }
    Ok(specs)
}

/// The `--openings` file's openings, replayed on the rules core; none without the option.
fn read_openings(args: &Args) -> Result<Vec<Opening>, String> {
    let Some(p) = &args.openings else {
        return Ok(Vec::new());
    };
    let (width, height) = args.size;
    let text =
        std::fs::read_to_string(p).map_err(|e| format!("openings file `{}`: {e}", p.display()))?;
    let o = openings::parse_openings(&text, args.openings_format, width, height, args.rule)?;
    if o.is_empty() {
        return Err(format!("openings file `{}` has no openings", p.display()));
    }
    Ok(o)
}

/// The rules of every game: board, tolerance, start timeout, memory limit, draw length.
fn game_config(args: &Args, clocks: &[Clock]) -> GameConfig {
    let (width, height) = args.size;
    let draw_after = match args.draw_after {
        Some(0) => None,
        Some(n) => Some(n),
        None if args.rule == Rule::Renju && (width, height) == (15, 15) => Some(200),
        None => None,
    };
    let longest_turn_ms = clocks
        .iter()
        .map(|c| c.turn_ms)
        .max()
        .unwrap_or(args.turn_ms);
    GameConfig {
        width,
        height,
        rule: args.rule,
        tolerance_ms: args.tolerance_ms,
        start_timeout_ms: args
            .start_timeout_ms
            .unwrap_or((longest_turn_ms + args.tolerance_ms).max(5000)),
        max_memory: args.max_memory,
        draw_after,
        yxstop: args.yxstop,
        suspend: args.suspend,
    }
}

/// Every game to play, round-major so every pair progresses evenly (matters for SPRT and early
/// stops); colours alternate, and game g uses opening g (g/2 with `--repeat`).
fn schedule(args: &Args, pairs: &[(usize, usize)], openings: usize) -> VecDeque<Job> {
    let mut jobs = VecDeque::new();
    for g in 0..args.games {
        for &(a, b) in pairs {
            let (black, white) = if g % 2 == 0 { (a, b) } else { (b, a) };
            let idx = if args.repeat { g / 2 } else { g };
            let opening = (openings > 0).then(|| idx as usize % openings);
            jobs.push_back(Job {
                black,
                white,
                opening,
            });
        }
    }
    jobs
}

/// Starts `workers` threads playing jobs from the queue; their messages arrive on the receiver.
fn start_workers(
    shared: &Arc<Shared>,
    workers: usize,
) -> Result<(Vec<JoinHandle<()>>, Receiver<WorkerMsg>), String> {
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut handles = Vec::new();
    for w in 0..workers {
        let (sh, tx) = (shared.clone(), tx.clone());
        let h = std::thread::Builder::new()
            .name(format!("worker-{w}"))
            .spawn(move || worker(&sh, &tx))
            .map_err(|e| format!("cannot start worker thread: {e}"))?;
        handles.push(h);
    }
    Ok((handles, rx))
}

/// Where the tournament reports as it goes: the exchange log, the game record file, the JSON
/// summary and the progress line on stderr.
struct Outputs {
    log: Logger,
    pgn: Option<std::io::BufWriter<std::fs::File>>,
    json: Option<PathBuf>,
    quiet: bool,
    tty: bool,
    rule: String,
    size: (usize, usize),
}

impl Outputs {
    /// Opens the files; the JSON summary is written once before any engine starts, so a path
    /// that cannot be written is an error now, not after hours of games.
    fn open(args: &Args, summary: &Summary) -> Result<Outputs, String> {
        let log = match &args.log {
            Some(p) => Logger::to_file(p)?,
            None => Logger::disabled(),
        };
        let pgn = match &args.pgn {
            Some(p) => Some(std::io::BufWriter::new(
                std::fs::File::create(p)
                    .map_err(|e| format!("record file `{}`: {e}", p.display()))?,
            )),
            None => None,
        };
        if let Some(p) = &args.json {
            write_json(p, summary)?;
        }
        Ok(Outputs {
            log,
            pgn,
            json: args.json.clone(),
            quiet: args.quiet,
            tty: std::io::stderr().is_terminal(),
            rule: args.rule.to_string(),
            size: args.size,
        })
    }

    /// What a line said between progress updates starts with: on a terminal it first clears the
    /// progress line.
    fn clear_line(&self) -> &'static str {
        if self.tty { "\r\x1b[K" } else { "" }
    }

    /// Says that the tournament stops after the games in flight.
    fn say_interrupted(&self) {
        eprintln!(
            "{}interrupted: no new games; the games in flight finish first (Ctrl-C again \
             quits now{})",
            self.clear_line(),
            if self.json.is_some() {
                "; the --json summary holds every finished game"
            } else {
                ""
            }
        );
    }

    /// Reports one tallied game: what its engines said at START (once), its record, the JSON
    /// summary (every game, so a killed tournament keeps what it finished) and the progress line.
    fn game(&mut self, sh: &Shared, tally: &Tally, job: Job, heard: &[usize], rec: &GameRecord) {
        let clear_line = self.clear_line();
        for &e in heard {
            // Said once, as soon as it is known: which model an engine plays on decides how to
            // read the whole match.
            if let Some(m) = &tally.summary.engines[e].start_message
                && !self.quiet
            {
                eprintln!("{clear_line}{} said at START: {m}", sh.specs[e].name);
            }
        }
        if let Some(w) = self.pgn.as_mut() {
            let text = report::record_text(
                tally.summary.games_played,
                &sh.specs[job.black].name,
                &sh.specs[job.white].name,
                &self.rule,
                self.size,
                job.opening.map(|i| sh.openings[i].text.as_str()),
                rec,
            );
            let _ = w.write_all(text.as_bytes()).and_then(|_| w.flush());
        }
        if let Some(p) = &self.json
            && let Err(e) = write_json(p, &tally.summary)
        {
            // A failure here is said, and the final write says it again as an error.
            eprintln!("{clear_line}warning: {e}");
        }
        if !self.quiet {
            let line = tally.progress_line();
            if self.tty {
                eprint!("\r{line}\x1b[K");
            } else {
                eprintln!("{line}");
            }
        }
    }

    /// After the last game: the final report on stdout, the final JSON summary.
    fn finish(&self, tally: &Tally) -> Result<(), String> {
        if !self.quiet && self.tty {
            eprintln!();
        }
        self.log.flush();
        print!("{}", tally.final_report());
        if let Some(p) = &self.json {
            write_json(p, &tally.summary)?;
        }
        Ok(())
    }
}

/// The referee's loop: tallies and reports each finished game until every worker is done, stops
/// new games on Ctrl-C or an SPRT decision.
fn referee(sh: &Shared, rx: &Receiver<WorkerMsg>, tally: &mut Tally, out: &mut Outputs) {
    loop {
        if !tally.summary.interrupted && interrupt::requested() {
            tally.summary.interrupted = true;
            sh.stop.store(true, Ordering::Relaxed);
            out.say_interrupted();
        }
        let msg = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        match msg {
            WorkerMsg::Game(job, rec, tallied) => {
                let opening = job.opening.map(|i| sh.openings[i].text.clone());
                let heard = tally.add(job.black, job.white, opening, &rec);
                out.game(sh, tally, job, &heard, &rec);
                if tally.sprt_decision().is_some() {
                    sh.stop.store(true, Ordering::Relaxed);
                }
                let _ = tallied.send(());
            }
            WorkerMsg::Done {
                restarts,
                end_kills,
            } => tally.add_process_counts(&restarts, &end_kills),
        }
    }
}

/// Writes the summary so a reader (or a kill in the middle) sees the previous one or this one.
fn write_json(path: &std::path::Path, summary: &Summary) -> Result<(), String> {
    let text = serde_json::to_string_pretty(summary).map_err(|e| format!("json: {e}"))?;
    engine::net::write_atomic(path, (text + "\n").as_bytes())
        .map_err(|e| format!("json file `{}`: {e}", path.display()))
}

/// Plays jobs from the queue until it is empty or the tournament stops; keeps one process per
/// engine alive across games and restarts those that died or were killed.
fn worker(sh: &Shared, tx: &crossbeam_channel::Sender<WorkerMsg>) {
    let n = sh.specs.len();
    let mut procs: Vec<Option<EngineProcess>> = (0..n).map(|_| None).collect();
    let mut started = vec![0u64; n];
    let (tallied, tally_done) = crossbeam_channel::bounded(1);
    loop {
        if sh.stop.load(Ordering::Relaxed) {
            break;
        }
        let Some(job) = sh.queue.lock().ok().and_then(|mut q| q.pop_front()) else {
            break;
        };
        let mut taken: [Result<EngineProcess, String>; 2] = [job.black, job.white].map(|e| {
            if let Some(p) = procs[e].as_mut()
                && !p.is_alive()
            {
                procs[e] = None;
            }
            match procs[e].take() {
                Some(p) => Ok(p),
                None => {
                    started[e] += 1;
                    EngineProcess::spawn(&sh.specs[e], sh.log.clone(), sh.crlf)
                }
            }
        });
        let opening = job.opening.map(|i| &sh.openings[i]);
        let [b, w] = &mut taken;
        let rec = play_game(
            &sh.cfg,
            [sh.clocks[job.black], sh.clocks[job.white]],
            opening,
            [
                b.as_mut().map_err(|e| e.clone()),
                w.as_mut().map_err(|e| e.clone()),
            ],
        );
        let [b, w] = taken;
        for (e, p) in [(job.black, b), (job.white, w)] {
            if let Ok(p) = p {
                procs[e] = Some(p);
            }
        }
        if tx
            .send(WorkerMsg::Game(job, Box::new(rec), tallied.clone()))
            .is_err()
            || tally_done.recv().is_err()
        {
            break;
        }
    }
    let mut end_kills = vec![0u64; n];
    for (e, p) in procs.into_iter().enumerate() {
        if let Some(p) = p
            && p.quit(sh.end_grace) == Exit::Killed
        {
            end_kills[e] += 1;
        }
    }
    let restarts = started.iter().map(|&s| s.saturating_sub(1)).collect();
    let _ = tx.send(WorkerMsg::Done {
        restarts,
        end_kills,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes_rules_bytes() {
        assert_eq!(parse_size("15").unwrap(), (15, 15));
        assert_eq!(parse_size("20x15").unwrap(), (20, 15));
        assert!(parse_size("x").is_err());
        assert_eq!("4".parse::<Rule>().unwrap(), Rule::Renju);
        assert!("gomoku".parse::<Rule>().is_err());
        assert_eq!(parse_bytes("350M").unwrap(), 350 << 20);
        assert_eq!(parse_bytes("367001600").unwrap(), 367001600);
        assert!(parse_bytes("12Q").is_err());
    }
}
