//! One board: a game and its own `Engine`, on a thread of its own. The thread takes the tab's
//! requests in order and answers each with the new `State` (or an `Error`, the game unchanged);
//! the engine's moves and analyses run under the `Scheduler` and stream `Analysis` reports.
//!
//! The game is a *line* of moves and a *ply*, how many of them are on the board: undo, redo and
//! stepping through a loaded game move the ply; a move played before the line's end cuts the
//! line there. The engine's board follows the ply incrementally (stones taken back and played),
//! so its search tree is reused along the game.
//!
//! Any request stops a search in progress (`link`: the flag is up exactly while a request waits to
//! be taken): `stop` during an engine move plays the best move found so far, anything else drops that
//! move and serves the request. A panic while serving a request is caught: the tab gets a
//! `Fault`, and a fresh engine and game take the old ones' place.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::TryRecvError;
use std::time::{Duration, Instant};

use engine::brain::{Engine, EngineConfig, EngineError, ModelSource, MoveInfo};
use engine::game::{Board, Cell, Color, Pos, Rule};
use engine::mcts::{ProgressHook, ProgressReport, Proven, RootCandidate, win_rate};
use engine::notation::{self, RecordedGame, ReplayEnd};
use engine::time::TimeLimits;
use tokio::sync::mpsc::Sender;

use crate::link::Link;
use crate::messages::{
    Analysis, Candidate, EngineSide, GameResult, GameSummary, MAX_NBEST, MAX_TIME_MS, MAX_VISITS,
    Reply, Request, State,
};
use crate::scheduler::{Permit, Scheduler};

/// Most games read from one record file.
pub const MAX_GAMES_PER_FILE: usize = 10_000;
/// How often an analysis reports while it searches.
const REPORT_EVERY: Duration = Duration::from_millis(250);
/// The first round of an open-ended analysis; each next round is twice as long, up to the last.
const FIRST_ROUND_MS: u64 = 2_000;
const LAST_ROUND_MS: u64 = 64_000;

/// What every board of a server shares.
#[derive(Clone)]
pub struct BoardConfig {
    pub model: ModelSource,
    /// Search threads of one board's search.
    pub threads: usize,
    /// Memory one board's engine may use (bytes).
    pub memory_bytes: u64,
    pub scheduler: Arc<Scheduler>,
    /// Serve `InjectFault` (tests only).
    pub allow_fault_injection: bool,
}

/// Serves one board until the tab closes (its request channel ends).
pub fn run(config: BoardConfig, link: Link) {
    let mut board = Session::new(&config, &link);
    board.send_state();
    while let Some(request) = board.next_request(&link) {
        let served = catch_unwind(AssertUnwindSafe(|| board.serve(request, &link)));
        if let Err(panic) = served {
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown".into());
            board = Session::new(&config, &link);
            board.reply(Reply::Fault {
                text: format!(
                    "the engine failed ({why}); a fresh engine and an empty board took its place"
                ),
            });
            board.send_state();
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Busy {
    Thinking,
    Analysing,
}

struct Session {
    config: BoardConfig,
    engine: Engine,
    replies: Sender<Reply>,
    rule: Rule,
    size: (usize, usize),
    line: Vec<(i64, i64)>,
    ply: usize,
    /// The line's black stone on a forbidden point (a loaded game lost by that foul).
    foul_at: Option<usize>,
    /// Black's win rate after each ply of the line, as a search found it.
    winrates: Vec<Option<f32>>,
    side: EngineSide,
    time_ms: Option<u64>,
    visits: Option<u64>,
    nbest: usize,
    /// Whether the engine keeps analysing the position shown (until `stop`).
    analysing: bool,
    /// The analysis of the position shown ended (a proof, or the position is decided).
    analysis_done: bool,
    busy: Option<Busy>,
    games: Vec<RecordedGame>,
    /// A request that arrived during a search and ended it, served next.
    pending: Option<Request>,
}

impl Session {
    fn new(config: &BoardConfig, link: &Link) -> Session {
        let mut engine = Engine::new(EngineConfig {
            threads: config.threads,
            max_memory_bytes: config.memory_bytes,
            model: config.model.clone(),
            ..EngineConfig::default()
        });
        let replies = link.replies.clone();
        let sink = replies.clone();
        engine.set_message_sink(Arc::new(move |text: &str| {
            let _ = sink.try_send(Reply::Message {
                text: text.to_string(),
            });
        }));
        engine.load_model();
        let mut s = Session {
            config: config.clone(),
            engine,
            replies,
            rule: Rule::Freestyle,
            size: (15, 15),
            line: Vec::new(),
            ply: 0,
            foul_at: None,
            winrates: vec![None],
            side: EngineSide::White,
            time_ms: Some(1000),
            visits: None,
            nbest: 3,
            analysing: false,
            analysis_done: false,
            busy: None,
            games: Vec::new(),
            pending: None,
        };
        s.new_board().expect("15x15 is a valid board");
        s
    }

    fn reply(&self, r: Reply) {
        let _ = self.replies.blocking_send(r);
    }

    fn error(&self, text: impl Into<String>) {
        self.reply(Reply::Error { text: text.into() });
    }

    /// The next request: one that ended a search first, else the channel's (while an analysis
    /// runs, it keeps searching between requests). None when the tab has closed.
    fn next_request(&mut self, link: &Link) -> Option<Request> {
        loop {
            if let Some(r) = self.pending.take() {
                return Some(r);
            }
            if self.analysing && !self.analysis_done {
                match link.try_next() {
                    Ok(r) => return Some(r),
                    Err(TryRecvError::Disconnected) => return None,
                    Err(TryRecvError::Empty) => self.analysis_round(link),
                }
            } else {
                return link.next();
            }
        }
    }

    fn serve(&mut self, request: Request, link: &Link) {
        let served = match request {
            Request::NewGame {
                rule,
                width,
                height,
                engine,
                time_ms,
                visits,
            } => self.new_game(&rule, (width, height), engine, (time_ms, visits)),
            Request::Play { x, y } => self.person_plays(x, y),
            Request::Undo => self.step_back(),
            Request::Redo => self.step_forward(),
            Request::Goto { ply } => self.goto(ply),
            Request::Go => {
                self.analysing = false;
                self.engine_move(link, true);
                return;
            }
            Request::Settings {
                engine,
                time_ms,
                visits,
                nbest,
            } => self.settings(engine, (time_ms, visits), nbest),
            Request::Analyse { nbest } => self.start_analysis(nbest),
            // No search runs here (one that did has already ended): the analysis mode ends.
            Request::Stop => {
                self.analysing = false;
                Ok(())
            }
            Request::Load { text } => self.load(&text),
            Request::OpenGame { index } => self.open_game(index),
            Request::InjectFault if self.config.allow_fault_injection => {
                panic!("fault injected by the page (--allow-fault-injection)")
            }
            Request::InjectFault => Err("unknown request".into()),
        };
        match served {
            Ok(()) => self.send_state(),
            Err(e) => self.error(e),
        }
        // The engine's turn: after a move, a new game, a step through the line, or a refused
        // request that cut its thinking short (it thinks again).
        if self.engine_to_move() && !self.analysing {
            self.engine_move(link, false);
        }
    }

    // --- the game ---------------------------------------------------------------------------

    fn board(&self) -> &Board {
        self.engine.board().expect("a session always has a game")
    }

    /// A new empty board of the current rule and size.
    fn new_board(&mut self) -> Result<(), String> {
        self.engine.set_rule(self.rule);
        self.engine
            .start(self.size.0, self.size.1)
            .map_err(|e| e.to_string())?;
        self.line.clear();
        self.ply = 0;
        self.foul_at = None;
        self.winrates = vec![None];
        self.analysis_done = false;
        Ok(())
    }

    fn new_game(
        &mut self,
        rule: &str,
        size: (usize, usize),
        side: EngineSide,
        limit: (Option<u64>, Option<u64>),
    ) -> Result<(), String> {
        let rule: Rule = rule.parse().map_err(|e: String| e)?;
        Board::new(size.0, size.1, rule).map_err(|e| e.to_string())?;
        self.set_limit(limit)?;
        self.rule = rule;
        self.size = size;
        self.side = side;
        self.analysing = false;
        self.new_board()
    }

    fn set_limit(&mut self, (time_ms, visits): (Option<u64>, Option<u64>)) -> Result<(), String> {
        match (time_ms, visits) {
            (Some(t), None) if (1..=MAX_TIME_MS).contains(&t) => {
                (self.time_ms, self.visits) = (Some(t), None)
            }
            (None, Some(v)) if (1..=MAX_VISITS).contains(&v) => {
                (self.time_ms, self.visits) = (None, Some(v))
            }
            (None, None) => {}
            _ => {
                return Err(format!(
                    "give either time_ms (1-{MAX_TIME_MS}) or visits (1-{MAX_VISITS}) per move"
                ));
            }
        }
        Ok(())
    }

    fn settings(
        &mut self,
        side: Option<EngineSide>,
        limit: (Option<u64>, Option<u64>),
        nbest: Option<usize>,
    ) -> Result<(), String> {
        if let Some(n) = nbest
            && !(1..=MAX_NBEST).contains(&n)
        {
            return Err(format!("nbest must be 1-{MAX_NBEST}"));
        }
        self.set_limit(limit)?;
        self.side = side.unwrap_or(self.side);
        self.nbest = nbest.unwrap_or(self.nbest);
        self.analysis_done = false;
        Ok(())
    }

    /// A click on the board: refused while the engine is to move in a game where it plays.
    fn person_plays(&mut self, x: i64, y: i64) -> Result<(), String> {
        if self.engine_to_move() && !self.analysing {
            return Err("it is fivezero's move (Stop makes it play now)".into());
        }
        self.play(x, y)
    }

    /// Plays (x, y) for the side to move, cutting the line there.
    fn play(&mut self, x: i64, y: i64) -> Result<(), String> {
        if let Some(r) = self.result() {
            return Err(format!("the game is over ({})", r.reason));
        }
        let board = self.board();
        let p = board.pos(x, y).map_err(|e| e.to_string())?;
        let name = notation::algebraic(x as u32, y as u32, board.height());
        if !board.is_empty(p) {
            return Err(format!("{name} is already taken"));
        }
        if board.side_to_move() == Color::Black && board.is_forbidden(p) {
            return Err(format!("{name} is forbidden for black under renju"));
        }
        self.line.truncate(self.ply);
        self.line.push((x, y));
        self.winrates.truncate(self.ply + 1);
        self.winrates.push(None);
        self.foul_at = self.foul_at.filter(|&f| f < self.ply);
        self.ply += 1;
        self.sync_engine()
    }

    /// Back one move, or with the engine playing a side, back to the person's turn.
    fn step_back(&mut self) -> Result<(), String> {
        if self.ply == 0 {
            return Err("no move to take back".into());
        }
        self.ply -= 1;
        if self.engine_side_color() == Some(self.color_to_move()) && self.ply > 0 {
            self.ply -= 1;
        }
        self.sync_engine()
    }

    /// Forward one move of the line, or with the engine playing a side, to the person's turn.
    fn step_forward(&mut self) -> Result<(), String> {
        if self.ply == self.line.len() {
            return Err("no move to redo".into());
        }
        self.ply += 1;
        if self.engine_side_color() == Some(self.color_to_move()) && self.ply < self.line.len() {
            self.ply += 1;
        }
        self.sync_engine()
    }

    fn goto(&mut self, ply: usize) -> Result<(), String> {
        if ply > self.line.len() {
            return Err(format!("the line has {} moves", self.line.len()));
        }
        self.ply = ply;
        self.sync_engine()
    }

    fn color_to_move(&self) -> Color {
        if self.ply.is_multiple_of(2) {
            Color::Black
        } else {
            Color::White
        }
    }

    fn engine_side_color(&self) -> Option<Color> {
        match self.side {
            EngineSide::Black => Some(Color::Black),
            EngineSide::White => Some(Color::White),
            EngineSide::None => None,
        }
    }

    fn engine_to_move(&self) -> bool {
        self.engine_side_color() == Some(self.color_to_move()) && self.result().is_none()
    }

    /// Makes the engine's board the first `ply` moves of the line: stones past the common part
    /// taken back (last first), the line's next ones played.
    fn sync_engine(&mut self) -> Result<(), String> {
        self.analysis_done = false;
        let history: Vec<(i64, i64)> = self
            .board()
            .history()
            .iter()
            .map(|(p, _)| (p.x() as i64, p.y() as i64))
            .collect();
        let target = &self.line[..self.ply];
        let common = history
            .iter()
            .zip(target)
            .take_while(|(a, b)| a == b)
            .count();
        for &(x, y) in history[common..].iter().rev() {
            self.engine.takeback(x, y).map_err(|e| e.to_string())?;
        }
        for &(x, y) in &target[common..] {
            self.engine.opponent_move(x, y).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// How the game on the board ended, if it has.
    fn result(&self) -> Option<GameResult> {
        let board = self.board();
        if let Some(f) = self.foul_at.filter(|&f| f < self.ply) {
            let (x, y) = self.line[f];
            return Some(GameResult {
                winner: Some("white"),
                reason: format!(
                    "black played {}, a forbidden point",
                    notation::algebraic(x as u32, y as u32, board.height())
                ),
                five: Vec::new(),
            });
        }
        if let Some(c) = board.winner() {
            return Some(GameResult {
                winner: Some(color_name(c)),
                reason: format!("{} made five", color_name(c)),
                five: five_through(board),
            });
        }
        board.is_full().then(|| GameResult {
            winner: None,
            reason: "the board is full: a draw".into(),
            five: Vec::new(),
        })
    }

    fn state(&self) -> State {
        let board = self.board();
        let result = self.result();
        let forbidden = if result.is_none() && board.side_to_move() == Color::Black {
            self.engine
                .forbidden_points()
                .into_iter()
                .map(point)
                .collect()
        } else {
            Vec::new()
        };
        State {
            rule: self.rule.to_string(),
            width: self.size.0,
            height: self.size.1,
            line: self.line.iter().map(|&(x, y)| [x, y]).collect(),
            ply: self.ply,
            to_move: color_name(board.side_to_move()),
            forbidden,
            result,
            engine: self.side,
            time_ms: self.time_ms,
            visits: self.visits,
            nbest: self.nbest,
            // An analysis that has proven its position waits, searching nothing, for the next.
            busy: match (self.busy, self.analysing && !self.analysis_done) {
                (Some(Busy::Thinking), _) => Some("thinking"),
                (Some(Busy::Analysing), _) | (None, true) => Some("analysing"),
                (None, false) => None,
            },
            position: notation::move_string(board),
            winrates: self.winrates.clone(),
            model: self.engine.evaluator().name(),
        }
    }

    fn send_state(&self) {
        self.reply(Reply::State(Box::new(self.state())));
    }

    // --- positions and files ----------------------------------------------------------------

    fn load(&mut self, text: &str) -> Result<(), String> {
        if notation::is_record_file(text) {
            let games = notation::parse_records(text, MAX_GAMES_PER_FILE)?;
            let summaries = games
                .iter()
                .enumerate()
                .map(|(index, g)| {
                    let (width, height) = g.size.unwrap_or(self.size);
                    GameSummary {
                        index,
                        title: g.title.clone(),
                        rule: g.rule.unwrap_or(self.rule).to_string(),
                        width,
                        height,
                        moves: g.moves.len(),
                        result: g.result.clone(),
                    }
                })
                .collect();
            // The first game must open before the list replaces the last file's.
            let first = games[0].clone();
            self.open_recorded(&first)?;
            self.games = games;
            self.reply(Reply::Games { games: summaries });
            return Ok(());
        }
        let points =
            notation::parse_points(text, self.size.1).map_err(|e| format!("position: {e}"))?;
        let end = ReplayEnd {
            five: true,
            foul: false,
        };
        notation::replay(&points, self.size, self.rule, end)
            .map_err(|e| format!("position: {e}"))?;
        self.analysing = false;
        self.new_board()?;
        self.line = points;
        self.ply = self.line.len();
        self.winrates = vec![None; self.ply + 1];
        self.sync_engine()
    }

    fn open_game(&mut self, index: usize) -> Result<(), String> {
        let game = self
            .games
            .get(index)
            .cloned()
            .ok_or_else(|| format!("no game {index} in the file loaded"))?;
        self.open_recorded(&game)
    }

    /// A recorded game, at its start, with the engine watching (it plays neither side).
    fn open_recorded(&mut self, game: &RecordedGame) -> Result<(), String> {
        let rule = game.rule.unwrap_or(self.rule);
        let size = game.size.unwrap_or(self.size);
        let end = ReplayEnd {
            five: true,
            foul: true,
        };
        let replayed = notation::replay(&game.moves, size, rule, end)
            .map_err(|e| format!("{}: {e}", game.title))?;
        let last_is_foul = rule == Rule::Renju
            && replayed.winner().is_none()
            && replayed.history().last().is_some_and(|&(p, c)| {
                let mut before = replayed.clone();
                before.undo();
                c == Color::Black && before.is_forbidden(p)
            });
        self.rule = rule;
        self.size = size;
        self.side = EngineSide::None;
        self.analysing = false;
        self.new_board()?;
        self.line = game.moves.clone();
        self.foul_at = last_is_foul.then(|| self.line.len() - 1);
        self.winrates = vec![None; self.line.len() + 1];
        Ok(())
    }

    // --- searching --------------------------------------------------------------------------

    fn start_analysis(&mut self, nbest: Option<usize>) -> Result<(), String> {
        self.settings(None, (None, None), nbest)?;
        if let Some(r) = self.result() {
            return Err(format!(
                "the game is over ({}): nothing to analyse",
                r.reason
            ));
        }
        self.analysing = true;
        Ok(())
    }

    /// Waits for a search slot; None when a request came first (it is kept in `pending`).
    fn wait_for_slot(&mut self, link: &Link, preemptible: bool) -> Option<Permit> {
        let replies = self.replies.clone();
        link.rearm();
        if let Ok(r) = link.try_next() {
            self.pending = Some(r);
            return None;
        }
        let permit = self.config.scheduler.acquire(
            &link.interrupt,
            preemptible.then(|| link.interrupt.clone()),
            |ahead| {
                let _ = replies.blocking_send(Reply::Queue { ahead });
            },
        );
        if permit.is_none() {
            self.pending = link.try_next().ok();
        }
        permit
    }

    /// The engine plays the side to move, within the time or visits per move. `stop` plays the
    /// best move so far; any other request drops the move and is served instead.
    fn engine_move(&mut self, link: &Link, asked: bool) {
        if let Some(r) = self.result() {
            if asked {
                self.error(format!("the game is over ({})", r.reason));
            }
            return;
        }
        self.busy = Some(Busy::Thinking);
        self.send_state();
        let permit = self.wait_for_slot(link, false);
        if permit.is_some() {
            self.set_limits(self.time_ms, self.visits);
        } else if matches!(self.pending, Some(Request::Stop)) {
            // Stop while queued still means "play now": the network's first look, one visit,
            // which needs no slot.
            self.pending = None;
            link.rearm();
            self.set_limits(None, Some(1));
        } else {
            self.busy = None;
            return self.send_state();
        }
        let info = self.search(link, 1);
        drop(permit);
        self.busy = None;
        match info {
            Ok((info, report)) => {
                self.reply(Reply::Analysis(report));
                if link.interrupt.load(Ordering::SeqCst) {
                    match link.try_next() {
                        Ok(Request::Stop) | Err(_) => {}
                        Ok(other) => {
                            self.pending = Some(other);
                            return self.send_state();
                        }
                    }
                }
                let (x, y) = (info.best.x() as i64, info.best.y() as i64);
                if let Err(e) = self.play(x, y) {
                    self.error(format!("the engine's move {x},{y}: {e}"));
                }
                self.send_state();
            }
            Err(e) => {
                self.error(format!("the engine could not move: {e}"));
                self.send_state();
            }
        }
    }

    /// One round of the open-ended analysis: a search of the position shown until the round's
    /// time, a request, or the scheduler's call to give the CPU to another board.
    fn analysis_round(&mut self, link: &Link) {
        let Some(permit) = self.wait_for_slot(link, true) else {
            return;
        };
        self.busy = Some(Busy::Analysing);
        let mut round_ms = FIRST_ROUND_MS;
        let outcome = loop {
            self.set_limits(Some(round_ms), None);
            let searched = self.search(link, self.nbest);
            // A request that stopped the round is served next; a stop without one was the
            // scheduler's (another board's turn), and the analysis goes on after it.
            if link.interrupt.load(Ordering::SeqCst)
                && let Ok(r) = link.try_next()
            {
                self.pending = Some(r);
            }
            match searched {
                Ok((info, mut report)) => {
                    // The last report of this position's analysis: a proof, or a request.
                    report.done = info.proven.is_some() || self.pending.is_some();
                    self.analysis_done = info.proven.is_some();
                    let done = report.done;
                    self.reply(Reply::Analysis(report));
                    if done || link.interrupt.load(Ordering::SeqCst) {
                        break Ok(());
                    }
                    round_ms = (round_ms * 2).min(LAST_ROUND_MS);
                }
                Err(e) => break Err(e),
            }
        };
        drop(permit);
        self.busy = None;
        if let Err(e) = outcome {
            self.analysis_done = true;
            self.error(format!("analysis: {e}"));
        }
        if matches!(self.pending, Some(Request::Stop)) {
            self.pending = None;
            self.analysing = false;
        }
        self.send_state();
    }

    fn set_limits(&mut self, time_ms: Option<u64>, visits: Option<u64>) {
        self.engine.set_max_visits(visits);
        self.engine.limits = TimeLimits {
            timeout_turn_ms: Some(time_ms.unwrap_or(MAX_TIME_MS) as i64),
            timeout_match_ms: None,
            time_left_ms: None,
        };
    }

    /// Searches the position shown for its `n` best moves, streaming reports; returns the result
    /// and its report (black's win rate at this ply recorded), for the caller to send as the
    /// last one or not.
    fn search(&mut self, link: &Link, n: usize) -> Result<(MoveInfo, Analysis), EngineError> {
        let ply = self.ply;
        let height = self.size.1;
        let black_to_move = self.color_to_move() == Color::Black;
        let replies = self.replies.clone();
        self.engine.set_progress(Some(ProgressHook {
            every: REPORT_EVERY,
            candidates: n,
            report: Arc::new(move |r: &ProgressReport| {
                if r.candidates.is_empty() {
                    return;
                }
                let _ = replies.try_send(Reply::Analysis(progress(r, ply, height, black_to_move)));
            }),
        }));
        let started = Instant::now();
        let result = self.engine.analyse(started, &link.interrupt, n);
        self.engine.set_progress(None);
        let info = result?;
        let report = finished(&info, ply, height, black_to_move);
        if let Some(best) = report.candidates.first() {
            self.winrates[ply] = Some(best.winrate);
        }
        Ok((info, report))
    }
}

fn color_name(c: Color) -> &'static str {
    match c {
        Color::Black => "black",
        Color::White => "white",
    }
}

fn point(p: Pos) -> [i64; 2] {
    [p.x() as i64, p.y() as i64]
}

/// The stones of the five the last move made (the whole run, for an overline).
fn five_through(board: &Board) -> Vec<[i64; 2]> {
    let Some(&(p, c)) = board.history().last() else {
        return Vec::new();
    };
    let own = |x: i64, y: i64| {
        board.pos(x, y).is_ok_and(|q| {
            board.cell(q)
                == if c == Color::Black {
                    Cell::Black
                } else {
                    Cell::White
                }
        })
    };
    let (px, py) = (p.x() as i64, p.y() as i64);
    for (dx, dy) in [(1, 0), (0, 1), (1, 1), (1, -1)] {
        let mut run = vec![[px, py]];
        for sign in [-1, 1] {
            let (mut x, mut y) = (px + sign * dx, py + sign * dy);
            while own(x, y) {
                run.push([x, y]);
                (x, y) = (x + sign * dx, y + sign * dy);
            }
        }
        if run.len() >= 5 {
            run.sort();
            return run;
        }
    }
    Vec::new()
}

fn proven_name(p: Option<Proven>) -> Option<&'static str> {
    match p {
        Some(Proven::Win) => Some("win"),
        Some(Proven::Loss) => Some("loss"),
        Some(Proven::Draw) => Some("draw"),
        None => None,
    }
}

fn candidate(c: &RootCandidate, height: usize, black_to_move: bool) -> Candidate {
    let own = win_rate(c.score());
    Candidate {
        mv: point(c.mv),
        name: notation::algebraic(c.mv.x() as u32, c.mv.y() as u32, height),
        visits: c.visits,
        winrate: if black_to_move { own } else { 1.0 - own },
        prior: c.prior,
        proven: proven_name(c.proven),
        pv: c.pv.iter().map(|&p| point(p)).collect(),
    }
}

/// A report of the `ranked` root moves after `elapsed` (speed and proof from the caller).
fn analysis(
    ranked: &[RootCandidate],
    (ply, height, black): (usize, usize, bool),
    elapsed: Duration,
) -> Analysis {
    let candidates: Vec<Candidate> = ranked.iter().map(|c| candidate(c, height, black)).collect();
    Analysis {
        ply,
        done: false,
        elapsed_ms: elapsed.as_millis() as u64,
        visits: candidates.iter().map(|c| c.visits as u64).sum(),
        speed: 0.0,
        proven: proven_name(ranked.first().and_then(|c| c.proven)),
        candidates,
    }
}

fn progress(r: &ProgressReport, ply: usize, height: usize, black: bool) -> Analysis {
    Analysis {
        speed: r.playouts as f64 / r.elapsed.as_secs_f64().max(1e-3),
        ..analysis(&r.candidates, (ply, height, black), r.elapsed)
    }
}

fn finished(info: &MoveInfo, ply: usize, height: usize, black: bool) -> Analysis {
    Analysis {
        done: true,
        visits: info.nodes,
        speed: info.speed(),
        proven: proven_name(info.proven),
        ..analysis(&info.candidates, (ply, height, black), info.elapsed)
    }
}
