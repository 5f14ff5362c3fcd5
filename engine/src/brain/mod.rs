//! The Engine API: the position, the limits and the move choice, independent of any front end.
//! `pbrain-fivezero` maps protocol commands onto it; tests and tools drive it directly.
//!
//! It knows nothing of stdin/stdout: messages for the user go out through a callback.

mod lookahead;
mod swap2;

pub use swap2::Swap2Choice;

use crate::game::{Board, Color, GameError, Pos, Rule};
use crate::time::TimeLimits;
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

/// Engine settings that do not change during a game.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub difficulty: Difficulty,
    /// Memory the whole engine may use, in bytes (0 = unlimited); `INFO max_memory` overrides it.
    pub max_memory_bytes: u64,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig { difficulty: Difficulty::Medium, max_memory_bytes: 350 * 1024 * 1024 }
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

pub type MessageSink = Box<dyn Fn(&str) + Send + Sync>;

pub struct Engine {
    config: EngineConfig,
    board: Option<Board>,
    size: (usize, usize),
    rule: Rule,
    pub limits: TimeLimits,
    max_memory_bytes: u64,
    on_message: MessageSink,
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
            on_message: Box::new(|_| {}),
        }
    }

    /// Where user-facing messages (`MESSAGE` lines) go.
    pub fn set_message_sink(&mut self, sink: MessageSink) {
        self.on_message = sink;
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
    ///
    /// # Errors
    /// No game, no legal move, or the game already decided.
    pub fn think(&mut self, stop: &Arc<AtomicBool>) -> Result<MoveInfo, EngineError> {
        let started = Instant::now();
        let board = self.board.as_ref().ok_or(EngineError::NotStarted)?;
        if board.winner().is_some() {
            return Err(EngineError::GameOver);
        }
        let budget = self.limits.budget(board.move_count(), board.width() * board.height());
        let result = lookahead::choose(board, started + budget.soft, started + budget.hard, stop)
            .ok_or(EngineError::NoLegalMove)?;
        let info = MoveInfo {
            best: result.best,
            value: result.value,
            depth: result.depth,
            nodes: result.nodes,
            elapsed: started.elapsed(),
        };
        self.board_mut()?.play(info.best)?;
        Ok(info)
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
