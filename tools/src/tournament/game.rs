//! One game between two running engines: the manager side of the protocol (START/RECTSTART,
//! INFO, BEGIN / BOARD / TURN), time and memory enforcement as the Gomocup referees do it, and
//! adjudication by the rules core (five, renju foul, illegal move, draw by move limit).
//!
//! Does not spawn or schedule engines (the worker in `mod.rs` does); depends on `process`,
//! `engine::openings`, `engine::game` and `protocol`.

use std::time::{Duration, Instant};

use engine::game::{Board, Color, Pos, Rule};
use protocol::{BoardStone, BrainLine, Command, Coord, Info, StoneOwner};

use super::process::{EngineProcess, Recv};
use engine::openings::Opening;

/// One side's time control, and its node limit when it plays at fixed work per move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub turn_ms: u64,
    /// `None`: no match clock (sent as `timeout_match 0`, `time_left 2147483647`).
    pub match_ms: Option<u64>,
    /// Sent as `INFO max_node`; `None`: nothing sent (the engine's own default, no limit).
    pub max_node: Option<u64>,
}

/// Limits and rules shared by every game of a tournament. The time control is each side's own
/// (`play_game`'s `clocks`): the same for both unless an engine spec gives time odds.
#[derive(Debug, Clone)]
pub struct GameConfig {
    pub width: usize,
    pub height: usize,
    pub rule: Rule,
    pub tolerance_ms: u64,
    pub start_timeout_ms: u64,
    /// Bytes; `None`: unlimited.
    pub max_memory: Option<u64>,
    /// Draw once this many stones are on the board (opening included); `None`: full board.
    pub draw_after: Option<usize>,
    /// Send `YXSTOP` at the turn limit plus half the tolerance (c-gomoku-cli).
    pub yxstop: bool,
    /// SIGSTOP an engine while it is not its turn (GomocupJudge).
    pub suspend: bool,
}

/// Why a side lost without a five. `key()` names it in JSON and records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Forfeit {
    /// The program could not be started.
    Spawn,
    /// No `OK` to START within the start timeout, or `ERROR`.
    Start,
    Timeout,
    /// Exited or closed stdout mid-game.
    Crash,
    /// A move on an occupied point.
    Occupied,
    OffBoard,
    /// A renju forbidden point played by black: a foul.
    Forbidden,
    /// `-1,-1` in a game that has no passes.
    Pass,
    /// A line that is neither a move nor MESSAGE/DEBUG/ERROR/UNKNOWN.
    Garbled,
    Memory,
}

impl Forfeit {
    pub fn key(self) -> &'static str {
        match self {
            Forfeit::Spawn => "spawn",
            Forfeit::Start => "start",
            Forfeit::Timeout => "timeout",
            Forfeit::Crash => "crash",
            Forfeit::Occupied => "occupied",
            Forfeit::OffBoard => "off-board",
            Forfeit::Forbidden => "forbidden",
            Forfeit::Pass => "pass",
            Forfeit::Garbled => "garbled",
            Forfeit::Memory => "memory",
        }
    }

    /// After these the engine's state is unknown: it is killed and restarted for the next game.
    pub fn needs_restart(self) -> bool {
        matches!(
            self,
            Forfeit::Spawn
                | Forfeit::Start
                | Forfeit::Timeout
                | Forfeit::Crash
                | Forfeit::Garbled
                | Forfeit::Memory
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    BlackWins,
    WhiteWins,
    Draw,
}

impl Outcome {
    pub fn result_text(self) -> &'static str {
        match self {
            Outcome::BlackWins => "1-0",
            Outcome::WhiteWins => "0-1",
            Outcome::Draw => "1/2-1/2",
        }
    }
}

/// Timing and memory of one side in one game.
#[derive(Debug, Clone, Default)]
pub struct SideStats {
    pub moves: u64,
    pub think_ms_total: f64,
    /// The slowest reply and the budget (turn or time left, without tolerance) it had.
    pub slowest_ms: f64,
    pub slowest_budget_ms: u64,
    /// Manager time between receiving the opponent's move and sending this side its TURN.
    pub overhead_us_total: f64,
    pub overhead_us_max: f64,
    pub overhead_count: u64,
    pub peak_memory: u64,
    pub peak_rss: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct GameRecord {
    pub outcome: Outcome,
    /// Human-readable termination: "five", "draw by move limit", "white forfeits: timeout ...".
    pub reason: String,
    /// The side that forfeited and why.
    pub forfeit: Option<(Color, Forfeit)>,
    /// All stones in order, opening first.
    pub moves: Vec<(u32, u32)>,
    pub opening_len: usize,
    /// Index 0 black, 1 white.
    pub stats: [SideStats; 2],
    /// The first `MESSAGE` each side sent before its `OK` to START (an engine says there which
    /// model or evaluator it plays on), black first.
    pub start_messages: [Option<String>; 2],
}

/// Engines for one game, black first; `None` where spawning failed (message in the `Err`).
pub type Seat<'a> = Result<&'a mut EngineProcess, String>;

enum MoveReply {
    Move(Coord, Instant),
    Lost(Forfeit, String),
}

/// Plays one game, black on `clocks[0]` and white on `clocks[1]`. Engines stay alive afterwards
/// unless a forfeit needs a restart (the caller checks `GameRecord::forfeit`).
pub fn play_game(
    cfg: &GameConfig,
    clocks: [Clock; 2],
    opening: Option<&Opening>,
    mut seats: [Seat<'_>; 2],
) -> GameRecord {
    let opening_stones: Vec<(u32, u32)> = opening.map(|o| o.stones.clone()).unwrap_or_default();
    let mut g = Game {
        board: match Board::new(cfg.width, cfg.height, cfg.rule) {
            Ok(b) => b,
            Err(e) => unreachable_board(e),
        },
        stats: [SideStats::default(), SideStats::default()],
        start_messages: [None, None],
        moves: Vec::new(),
        opening_len: opening_stones.len(),
    };
    for &(x, y) in &opening_stones {
        // Openings were validated against this size and rule at load time.
        let _ = g.board.play(Pos::new(x as usize, y as usize));
        g.moves.push((x, y));
    }
    // Start both engines; a failure there forfeits that side before any move.
    for (i, seat) in seats.iter_mut().enumerate() {
        let color = if i == 0 { Color::Black } else { Color::White };
        let res = match seat {
            Err(msg) => Err((Forfeit::Spawn, msg.clone())),
            Ok(eng) => start_engine(cfg, clocks[i], eng),
        };
        match res {
            Ok(message) => g.start_messages[i] = message,
            Err((f, msg)) => return g.forfeit(color, f, msg, &mut seats),
        }
    }
    let mut time_left: [Option<i64>; 2] = clocks.map(|c| c.match_ms.map(|m| m as i64));
    let mut synced = [false, false];
    let mut last_recv: Option<Instant> = None;
    loop {
        let color = g.board.side_to_move();
        let i = color.index();
        let eng = match seats[i].as_deref_mut() {
            Ok(e) => e,
            Err(e) => {
                let msg = e.clone();
                return g.forfeit(color, Forfeit::Spawn, msg, &mut seats);
            }
        };
        eng.resume();
        let position_cmd = if synced[i] {
            let (x, y) = *g.moves.last().expect("synced implies a move was played");
            Command::Turn(Coord::new(x, y))
        } else if g.moves.is_empty() {
            Command::Begin
        } else if g.moves.len() == 1 && g.opening_len == 0 {
            // White's first reply after BEGIN: a plain TURN, as Piskvork sends it.
            let (x, y) = g.moves[0];
            Command::Turn(Coord::new(x, y))
        } else {
            Command::Board(board_stones(&g.board, color))
        };
        let tl = time_left[i].unwrap_or(i32::MAX as i64);
        let text = format!("{}\n{}", Command::Info(Info::TimeLeft(tl)), position_cmd);
        let sent = match eng.send(&text) {
            Ok(t) => t,
            Err(e) => {
                let status = eng.exit_status().unwrap_or_default();
                return g.forfeit(color, Forfeit::Crash, format!("{e} {status}"), &mut seats);
            }
        };
        if let Some(r) = last_recv {
            let us = sent.saturating_duration_since(r).as_secs_f64() * 1e6;
            let s = &mut g.stats[i];
            s.overhead_us_total += us;
            s.overhead_us_max = s.overhead_us_max.max(us);
            s.overhead_count += 1;
        }
        synced[i] = true;
        let turn_ms = clocks[i].turn_ms;
        let budget_ms = time_left[i].map_or(turn_ms, |t| (t.max(0) as u64).min(turn_ms));
        let (at, recv_at) = match await_move(cfg, eng, sent, budget_ms) {
            MoveReply::Move(c, t) => (c, t),
            MoveReply::Lost(f, msg) => return g.forfeit(color, f, msg, &mut seats),
        };
        last_recv = Some(recv_at);
        let elapsed_ms = recv_at.saturating_duration_since(sent).as_secs_f64() * 1000.0;
        if let Some(t) = time_left[i].as_mut() {
            *t -= elapsed_ms.round() as i64;
        }
        let s = &mut g.stats[i];
        s.moves += 1;
        s.think_ms_total += elapsed_ms;
        if elapsed_ms > s.slowest_ms {
            s.slowest_ms = elapsed_ms;
            s.slowest_budget_ms = budget_ms;
        }
        if cfg.suspend {
            eng.suspend();
        }
        if let Some(limit) = cfg.max_memory {
            let now = eng.memory_now();
            if now > limit {
                let msg = format!("{now} bytes of private memory, limit {limit}");
                return g.forfeit(color, Forfeit::Memory, msg, &mut seats);
            }
        }
        // Adjudication by the rules core.
        let (x, y) = (at.x as i64, at.y as i64);
        if !g.board.contains(x, y) {
            let msg = format!("move {x},{y} is off the {}x{} board", cfg.width, cfg.height);
            return g.forfeit(color, Forfeit::OffBoard, msg, &mut seats);
        }
        let pos = Pos::new(x as usize, y as usize);
        if !g.board.is_empty(pos) {
            let msg = format!("move {x},{y} is on an occupied point");
            return g.forfeit(color, Forfeit::Occupied, msg, &mut seats);
        }
        if color == Color::Black && g.board.is_forbidden(pos) {
            let msg = format!("move {x},{y} is a forbidden point (renju foul)");
            g.moves.push((at.x, at.y));
            return g.forfeit(color, Forfeit::Forbidden, msg, &mut seats);
        }
        if let Err(e) = g.board.play(pos) {
            return g.forfeit(color, Forfeit::Occupied, e.to_string(), &mut seats);
        }
        g.moves.push((at.x, at.y));
        if g.board.winner() == Some(color) {
            let outcome = if color == Color::Black {
                Outcome::BlackWins
            } else {
                Outcome::WhiteWins
            };
            return g.finish(outcome, "five".into(), None, &mut seats);
        }
        let limit = cfg.draw_after.unwrap_or(usize::MAX);
        if g.board.move_count() >= limit {
            let reason = format!("draw by move limit ({limit})");
            return g.finish(Outcome::Draw, reason, None, &mut seats);
        }
        if g.board.is_full() {
            return g.finish(Outcome::Draw, "draw: board full".into(), None, &mut seats);
        }
    }
}

#[cold]
fn unreachable_board(e: engine::game::GameError) -> ! {
    // Board size and rule are validated before any game is scheduled.
    panic!("board rejected after validation: {e}")
}

struct Game {
    board: Board,
    stats: [SideStats; 2],
    start_messages: [Option<String>; 2],
    moves: Vec<(u32, u32)>,
    opening_len: usize,
}

impl Game {
    fn forfeit(
        self,
        loser: Color,
        f: Forfeit,
        msg: String,
        seats: &mut [Seat<'_>; 2],
    ) -> GameRecord {
        if f.needs_restart()
            && let Ok(eng) = seats[loser.index()].as_deref_mut()
        {
            eng.kill();
        }
        let outcome = if loser == Color::Black {
            Outcome::WhiteWins
        } else {
            Outcome::BlackWins
        };
        let side = if loser == Color::Black {
            "black"
        } else {
            "white"
        };
        let reason = format!("{side} forfeits: {}: {msg}", f.key());
        self.finish(outcome, reason, Some((loser, f)), seats)
    }

    fn finish(
        mut self,
        outcome: Outcome,
        reason: String,
        forfeit: Option<(Color, Forfeit)>,
        seats: &mut [Seat<'_>; 2],
    ) -> GameRecord {
        for (i, seat) in seats.iter_mut().enumerate() {
            if let Ok(eng) = seat.as_deref_mut() {
                eng.resume();
                self.stats[i].peak_memory = eng.peak_memory();
                self.stats[i].peak_rss = eng.peak_rss();
            }
        }
        GameRecord {
            outcome,
            reason,
            forfeit,
            moves: self.moves,
            opening_len: self.opening_len,
            stats: self.stats,
            start_messages: self.start_messages,
        }
    }
}

/// START (or RECTSTART), wait for OK, then the INFO settings. Gives the first MESSAGE the engine
/// sent before its OK.
fn start_engine(
    cfg: &GameConfig,
    clock: Clock,
    eng: &mut EngineProcess,
) -> Result<Option<String>, (Forfeit, String)> {
    eng.drain();
    let start = if cfg.width == cfg.height {
        Command::Start {
            size: cfg.width as u32,
        }
    } else {
        Command::RectStart {
            width: cfg.width as u32,
            height: cfg.height as u32,
        }
    };
    let crash = |eng: &mut EngineProcess, e: String| {
        let st = eng.exit_status().unwrap_or_default();
        (Forfeit::Crash, format!("{e} {st}").trim().to_string())
    };
    let sent = eng.send(&start.to_string()).map_err(|e| crash(eng, e))?;
    let deadline = sent + Duration::from_millis(cfg.start_timeout_ms);
    let mut message = None;
    loop {
        match eng.recv(deadline) {
            Recv::Line(l, _) => match BrainLine::parse(&l) {
                Ok(BrainLine::Ok) => break,
                Ok(BrainLine::Error(m)) => {
                    return Err((Forfeit::Start, format!("START refused: {m}")));
                }
                Ok(BrainLine::Message(m)) => {
                    message.get_or_insert(m);
                }
                Ok(BrainLine::Debug(_) | BrainLine::Unknown(_)) => {}
                _ => return Err((Forfeit::Garbled, format!("unexpected reply to START: {l}"))),
            },
            Recv::Eof => return Err(crash(eng, "exited during START".into())),
            Recv::Timeout => {
                let msg = format!("no OK to START within {} ms", cfg.start_timeout_ms);
                return Err((Forfeit::Start, msg));
            }
        }
    }
    let infos = [
        Some(Info::TimeoutTurn(clock.turn_ms as i64)),
        Some(Info::TimeoutMatch(clock.match_ms.unwrap_or(0) as i64)),
        Some(Info::MaxMemory(cfg.max_memory.unwrap_or(0))),
        Some(Info::GameType(1)),
        Some(Info::Rule(cfg.rule.to_protocol())),
        clock.max_node.map(Info::MaxNode),
    ];
    let text: Vec<String> = infos
        .into_iter()
        .flatten()
        .map(|i| Command::Info(i).to_string())
        .collect();
    eng.send(&text.join("\n"))
        .map(|_| message)
        .map_err(|e| crash(eng, e))
}

/// Stones in move order, owner relative to the engine that will move as `me`.
fn board_stones(board: &Board, me: Color) -> Vec<BoardStone> {
    board
        .history()
        .iter()
        .map(|&(p, c)| {
            let owner = if c == me {
                StoneOwner::Own
            } else {
                StoneOwner::Opponent
            };
            BoardStone::new(p.x() as u32, p.y() as u32, owner)
        })
        .collect()
}

/// Waits for a move until budget + tolerance after `sent`; logs chatter, answers SUGGEST.
fn await_move(
    cfg: &GameConfig,
    eng: &mut EngineProcess,
    sent: Instant,
    budget_ms: u64,
) -> MoveReply {
    let deadline = sent + Duration::from_millis(budget_ms + cfg.tolerance_ms);
    let mut stop_at = cfg
        .yxstop
        .then(|| sent + Duration::from_millis(budget_ms + cfg.tolerance_ms / 2));
    loop {
        let wait_until = stop_at.map_or(deadline, |s| s.min(deadline));
        match eng.recv(wait_until) {
            Recv::Line(l, t) => match BrainLine::parse(&l) {
                Ok(BrainLine::Move(c)) => return MoveReply::Move(c, t),
                Ok(
                    BrainLine::Message(_)
                    | BrainLine::Debug(_)
                    | BrainLine::Error(_)
                    | BrainLine::Unknown(_)
                    | BrainLine::Ok,
                ) => {}
                Ok(BrainLine::Suggest(c)) => {
                    if let Err(e) = eng.send(&Command::Play(c).to_string()) {
                        return MoveReply::Lost(Forfeit::Crash, e);
                    }
                }
                Ok(BrainLine::Pass) => {
                    return MoveReply::Lost(Forfeit::Pass, "passed (-1,-1)".into());
                }
                Ok(_) | Err(_) => {
                    return MoveReply::Lost(
                        Forfeit::Garbled,
                        format!("garbled reply `{}`", clip(&l)),
                    );
                }
            },
            Recv::Eof => {
                let st = eng.exit_status().unwrap_or_else(|| "stdout closed".into());
                return MoveReply::Lost(Forfeit::Crash, format!("engine exited mid-game ({st})"));
            }
            Recv::Timeout if stop_at.is_some() && Instant::now() < deadline => {
                stop_at = None;
                if eng.send(&Command::Stop.to_string()).is_err() {
                    return MoveReply::Lost(Forfeit::Crash, "stdin closed".into());
                }
            }
            Recv::Timeout => {
                let msg = format!(
                    "no move within {} ms + {} ms tolerance",
                    budget_ms, cfg.tolerance_ms
                );
                return MoveReply::Lost(Forfeit::Timeout, msg);
            }
        }
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() > 80 {
        format!("{}...", s.chars().take(80).collect::<String>())
    } else {
        s.to_string()
    }
}
