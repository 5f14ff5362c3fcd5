//! The Engine API: the position, the limits and the move choice, independent of any front end.
//! `pbrain-fivezero` maps protocol commands onto it; tests and tools drive it directly.
//!
//! It knows nothing of stdin/stdout: messages for the user go out through a callback.

mod lookahead;
mod swap2;

pub use swap2::Swap2Choice;

use crate::eval::Evaluator;
use crate::eval::classical::{ClassicalEvaluator, scored_moves};
use crate::eval::onnx::Device;
use crate::eval::onnx_evaluator::OnnxEvaluatorConfig;
use crate::eval::slot::{self, ModelSlot, WatchHandle};
use crate::game::{Board, Color, GameError, Pos, Rule};
use crate::mcts::{MctsConfig, Search, SearchLimits};
use crate::time::TimeLimits;
use crate::tss::{self, RootTactics, WinKind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How hard the engine plays: `Easy` = no threat-space search, `Medium` = threat search at the
/// root and at search leaves (the "endgame solver" switch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Difficulty {
    Easy,
    #[default]
    Medium,
}

impl std::str::FromStr for Difficulty {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "easy" | "0" => Ok(Difficulty::Easy),
            "medium" | "1" => Ok(Difficulty::Medium),
            other => Err(format!("unknown difficulty '{other}' (easy, medium)")),
        }
    }
}

/// Which search chooses the move after the threat-space check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SearchKind {
    /// The foundation search: classical move ranking + iterative-deepening alpha-beta.
    Lookahead,
    /// PUCT MCTS over the live evaluator (the ONNX model, or the classical evaluator without one).
    #[default]
    Mcts,
}

/// Engine settings that do not change during a game.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub difficulty: Difficulty,
    pub search: SearchKind,
    /// MCTS search threads (`INFO thread_num` overrides it).
    pub threads: usize,
    /// Memory the whole engine may use, in bytes (0 = unlimited); `INFO max_memory` overrides it.
    pub max_memory_bytes: u64,
    /// An ONNX model file, or a directory whose newest valid `*.onnx` is used; watched for new
    /// checkpoints.
    pub model: Option<PathBuf>,
    pub device: Device,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            difficulty: Difficulty::Medium,
            search: SearchKind::Mcts,
            threads: 1,
            max_memory_bytes: 350 * 1024 * 1024,
            model: None,
            device: Device::Cpu,
        }
    }
}

/// Why the engine refused a request; the board is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    #[error("no game started (send START first)")]
    NotStarted,
    #[error(transparent)]
    Game(#[from] GameError),
    #[error("inconsistent position: {0}")]
    BadPosition(String),
    #[error("no legal move")]
    NoLegalMove,
    #[error("the game is already over")]
    GameOver,
}

/// A stone of a position set-up: whose it is from the engine's point of view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetupStone {
    pub pos: (i64, i64),
    pub own: bool,
}

/// What the engine reports about a finished move choice.
#[derive(Debug, Clone)]
pub struct MoveInfo {
    pub best: Pos,
    pub value: f32,
    pub depth: u32,
    pub nodes: u64,
    pub elapsed: Duration,
}

pub type MessageSink = Arc<dyn Fn(&str) + Send + Sync>;

pub struct Engine {
    config: EngineConfig,
    board: Option<Board>,
    size: (usize, usize),
    rule: Rule,
    pub limits: TimeLimits,
    max_memory_bytes: u64,
    on_message: MessageSink,
    /// The live evaluator: the classical one until a model loads.
    slot: Arc<ModelSlot>,
    /// The MCTS tree, kept between moves of a game for reuse.
    mcts: Option<Search>,
    _watch: Option<WatchHandle>,
    /// The leaked clone of the front end's stop flag, keyed by the flag's address.
    static_stop: Option<(usize, &'static AtomicBool)>,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Engine {
        // Build the pattern tables now, off the clock of the first move.
        std::thread::spawn(Board::warm_up);
        let max_memory_bytes = config.max_memory_bytes;
        Engine {
            config,
            board: None,
            size: (15, 15),
            rule: Rule::Freestyle,
            limits: TimeLimits::default(),
            max_memory_bytes,
            on_message: Arc::new(|_| {}),
            slot: ModelSlot::new(Arc::new(ClassicalEvaluator)),
            mcts: None,
            _watch: None,
            static_stop: None,
        }
    }

    /// Where user-facing messages (`MESSAGE` lines) go.
    pub fn set_message_sink(&mut self, sink: MessageSink) {
        self.on_message = sink;
    }

    /// Loads the configured model (if any) now and watches it for new checkpoints. Refusals are
    /// reported as messages; the engine then plays on the classical evaluator.
    pub fn load_model(&mut self) {
        let Some(path) = self.config.model.clone() else { return };
        let loader = slot::onnx_loader(OnnxEvaluatorConfig {
            sessions: self.config.threads.max(1),
            device: self.config.device,
            ..OnnxEvaluatorConfig::default()
        });
        match self.slot.load_now(&path, &loader) {
            Ok(m) => self.message(&m),
            Err(e) => self.message(&format!("model: {e}; playing with the classical evaluator")),
        }
        let sink = self.on_message.clone();
        self._watch = Some(self.slot.watch(path, loader, Arc::new(move |m: String| sink(&m)), Duration::from_millis(250)));
    }

    /// The evaluator the next move will use.
    pub fn evaluator(&self) -> Arc<dyn Evaluator> {
        self.slot.current()
    }
    pub fn set_threads(&mut self, threads: usize) {
        self.config.threads = threads.clamp(1, 64);
        self.mcts = None;
    }

    fn message(&self, text: &str) {
        (self.on_message)(text);
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }
    pub fn set_difficulty(&mut self, d: Difficulty) {
        self.config.difficulty = d;
    }
    pub fn set_max_memory(&mut self, bytes: u64) {
        self.max_memory_bytes = bytes;
    }
    pub fn max_memory(&self) -> u64 {
        self.max_memory_bytes
    }
    pub fn board(&self) -> Option<&Board> {
        self.board.as_ref()
    }
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// A new game on a `width` x `height` board with the current rule.
    ///
    /// # Errors
    /// An unsupported size; the previous game (if any) is kept.
    pub fn start(&mut self, width: usize, height: usize) -> Result<(), EngineError> {
        let board = Board::new(width, height, self.rule)?;
        self.size = (width, height);
        self.board = Some(board);
        self.mcts = None;
        Ok(())
    }

    /// A new game of the same size.
    pub fn restart(&mut self) -> Result<(), EngineError> {
        self.start(self.size.0, self.size.1)
    }

    /// Sets the rule; an empty board switches at once, a game in progress from the next game on.
    pub fn set_rule(&mut self, rule: Rule) {
        self.rule = rule;
        if let Some(b) = &self.board {
            if b.move_count() == 0 && b.rule() != rule {
                self.board = Board::new(b.width(), b.height(), rule).ok();
            }
        }
    }

    fn board_mut(&mut self) -> Result<&mut Board, EngineError> {
        self.board.as_mut().ok_or(EngineError::NotStarted)
    }

    /// The point (x, y) on the current board.
    pub fn pos(&self, x: i64, y: i64) -> Result<Pos, EngineError> {
        Ok(self.board.as_ref().ok_or(EngineError::NotStarted)?.pos(x, y)?)
    }

    /// The opponent played (x, y). Refused (board unchanged) when off-board or occupied.
    /// Under renju a forbidden black move is accepted (the manager judges fouls).
    pub fn opponent_move(&mut self, x: i64, y: i64) -> Result<(), EngineError> {
        let p = self.pos(x, y)?;
        let board = self.board_mut()?;
        let c = board.side_to_move();
        board.place(p, c)?;
        Ok(())
    }

    /// Replaces the position by `stones` (in move order where the rule needs it). The side to
    /// move is the engine; stone counts must fit that (equal counts: the engine is black).
    pub fn set_position(&mut self, stones: &[SetupStone]) -> Result<(), EngineError> {
        let (w, h) = self.size;
        let mut board = Board::new(w, h, self.rule)?;
        let own = stones.iter().filter(|s| s.own).count();
        let theirs = stones.len() - own;
        let me = if own == theirs {
            Color::Black
        } else if theirs == own + 1 {
            Color::White
        } else {
            return Err(EngineError::BadPosition(format!("{own} own stones against {theirs} of the opponent")));
        };
        for s in stones {
            let p = board.pos(s.pos.0, s.pos.1)?;
            board.place(p, if s.own { me } else { me.opp() })?;
        }
        self.board = Some(board);
        Ok(())
    }

    /// Removes the stone on (x, y).
    pub fn takeback(&mut self, x: i64, y: i64) -> Result<(), EngineError> {
        let p = self.pos(x, y)?;
        self.board_mut()?.remove(p)?;
        Ok(())
    }

    /// Plays (x, y) as the engine's own move (the protocol's `PLAY`).
    pub fn play_own(&mut self, x: i64, y: i64) -> Result<Pos, EngineError> {
        let p = self.pos(x, y)?;
        self.board_mut()?.play(p)?;
        Ok(p)
    }

    /// Points forbidden to black in the current position (renju), for `YXSHOWFORBID`.
    pub fn forbidden_points(&self) -> Vec<Pos> {
        match &self.board {
            Some(b) if b.rule() == Rule::Renju => b.points().filter(|&p| b.is_forbidden(p)).collect(),
            _ => Vec::new(),
        }
    }

    /// Chooses a move for the side to move within the time limits, plays it and returns it.
    /// `started` is when the request arrived (the clock runs from there).
    ///
    /// # Errors
    /// No game, no legal move, or the game already decided.
    pub fn think(&mut self, started: Instant, stop: &Arc<AtomicBool>) -> Result<MoveInfo, EngineError> {
        let static_stop = self.static_stop(stop);
        let board = self.board.as_ref().ok_or(EngineError::NotStarted)?;
        if board.winner().is_some() {
            return Err(EngineError::GameOver);
        }
        let budget = self.limits.budget(board.move_count(), board.width() * board.height());
        let (soft, hard) = (started + budget.soft, started + budget.hard);

        // Threat-space search first: a proven win is played at once, a forced defence narrows
        // the moves the main search may choose.
        let mut allowed: Option<Vec<Pos>> = None;
        if self.config.difficulty == Difficulty::Medium {
            let tss_budget = tss::Budget::time(budget.soft / 4).with_stop(static_stop);
            match tss::analyse_root(board, tss_budget) {
                RootTactics::WinNow(p) => return self.finish(started, p, 1.0, 0, 0),
                RootTactics::ForcedWin { line, kind } => {
                    let kind = match kind {
                        WinKind::Vcf => "VCF",
                        WinKind::Vct => "VCT",
                    };
                    let text: Vec<String> = line.iter().map(|p| p.to_string()).collect();
                    self.message(&format!("{kind} win: {}", text.join(" ")));
                    return self.finish(started, line[0], 1.0, line.len() as u32, 0);
                }
                RootTactics::MustBlock(moves) if !moves.is_empty() => allowed = Some(moves),
                RootTactics::MustBlock(_) | RootTactics::Lost => self.message("lost by force; resisting"),
                RootTactics::GameOver { .. } => return Err(EngineError::GameOver),
                RootTactics::NoMoves => return Err(EngineError::NoLegalMove),
                RootTactics::Unknown => {}
            }
        }

        match self.config.search {
            SearchKind::Lookahead => {
                let board = self.board.as_ref().ok_or(EngineError::NotStarted)?;
                let r = lookahead::choose(board, soft, hard, stop, allowed.as_deref()).ok_or(EngineError::NoLegalMove)?;
                self.finish(started, r.best, r.value, r.depth, r.nodes)
            }
            SearchKind::Mcts => self.think_mcts(started, soft, stop, allowed),
        }
    }

    /// The stop flag with a process-long lifetime, as the threat search takes it. The flag the
    /// front end passes lives for the whole process; one clone of it is leaked, once.
    fn static_stop(&mut self, stop: &Arc<AtomicBool>) -> &'static AtomicBool {
        match self.static_stop {
            Some((addr, flag)) if addr == Arc::as_ptr(stop) as usize => flag,
            _ => {
                let flag: &'static Arc<AtomicBool> = Box::leak(Box::new(stop.clone()));
                self.static_stop = Some((Arc::as_ptr(stop) as usize, flag));
                flag
            }
        }
    }

    fn think_mcts(&mut self, started: Instant, deadline: Instant, stop: &Arc<AtomicBool>, allowed: Option<Vec<Pos>>) -> Result<MoveInfo, EngineError> {
        let evaluator = self.slot.current();
        let board = self.board.clone().ok_or(EngineError::NotStarted)?;
        let search = self.mcts.get_or_insert_with(|| {
            Search::new(
                MctsConfig {
                    threads: self.config.threads,
                    tactics: self.config.difficulty == Difficulty::Medium,
                    vcf_budget: if self.config.difficulty == Difficulty::Medium { 64 } else { 0 },
                    max_memory: MctsConfig::tree_bytes_for_engine_limit(if self.max_memory_bytes == 0 {
                        1 << 30
                    } else {
                        self.max_memory_bytes as usize
                    }),
                    ..MctsConfig::default()
                },
                evaluator.clone(),
            )
        });
        if !Arc::ptr_eq(search.evaluator(), &evaluator) {
            search.set_evaluator(evaluator);
        }
        search.set_position(&board);
        let limits = SearchLimits { deadline: Some(deadline), stop: stop.clone(), ..SearchLimits::default() };
        let result = search.run(&limits);
        let mut best = result.best;
        if let Some(allowed) = &allowed {
            if !allowed.contains(&best) {
                // Only these moves avoid a forced loss: take the most visited of them, or the
                // classical favourite when the search never tried one.
                best = result
                    .root_children
                    .iter()
                    .find(|(p, _, _)| allowed.contains(p))
                    .map(|&(p, _, _)| p)
                    .or_else(|| scored_moves(&board).into_iter().map(|m| m.pos).find(|p| allowed.contains(p)))
                    .unwrap_or(allowed[0]);
            }
        }
        if best.is_none() || !board.is_legal(best) {
            best = scored_moves(&board).first().map(|m| m.pos).ok_or(EngineError::NoLegalMove)?;
        }
        self.finish(started, best, result.value, result.pv.len() as u32, result.visits)
    }

    fn finish(&mut self, started: Instant, best: Pos, value: f32, depth: u32, nodes: u64) -> Result<MoveInfo, EngineError> {
        self.board_mut()?.play(best)?;
        Ok(MoveInfo { best, value, depth, nodes, elapsed: started.elapsed() })
    }

    /// Answers a swap2 opening position (0, 3 or 5 stones).
    pub fn swap2(&mut self, stones: &[SetupStone]) -> Result<Swap2Choice, EngineError> {
        let (w, h) = self.size;
        let choice = swap2::choose(w, h, self.rule, stones)?;
        if let Swap2Choice::Swap = choice {
            self.message("swap2: taking the other colour");
        }
        Ok(choice)
    }
}
