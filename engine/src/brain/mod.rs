//! The Engine API: the position, the limits and the move choice, independent of any front end.
//! `pbrain-fivezero` maps protocol commands onto it; tests and tools drive it directly.
//!
//! It knows nothing of stdin/stdout: messages for the user go out through a callback. `analyse`
//! reports the n best moves without playing (`think` plays the first); `script` is the JSON
//! scripting interface over the same API.

mod lookahead;
pub mod script;
mod swap2;

pub use swap2::{Swap2Choice, Swap2Decision};

use crate::device::Device;
use crate::eval::Evaluator;
use crate::eval::classical::{ClassicalEvaluator, scored_moves};
use crate::eval::network::LoadConfig;
use crate::eval::slot::{self, ModelSlot, WatchHandle};
use crate::game::{Board, Color, GameError, Pattern, Pos, Rule};
use crate::mcts::{MctsConfig, ProgressHook, Proven, RootCandidate, Search, SearchLimits};
use crate::time::TimeLimits;
use crate::tss::{self, RootTactics, WinKind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// VCF nodes per search leaf in play. Far below the trainer's default (`vcf_budget_nodes`, 2000):
/// a played move has a fixed time, and the root's threat search has already spent its share on
/// the deep proofs, so each leaf only looks for the short ones.
pub const PLAY_LEAF_VCF_NODES: u32 = 64;

/// How hard the engine plays: `Easy` = no threat-space search, `Medium` = threat search at the
/// root and at search leaves (the "endgame solver" switch).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
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

/// Which evaluator the engine plays with.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ModelSource {
    /// The classical pattern evaluator, no network (`--model none`).
    #[default]
    Classical,
    /// The networks compiled into the binary (`models/default*.onnx`, one per rule), each in the
    /// games whose rule and board size it claims (the classical evaluator elsewhere): what
    /// `pbrain-fivezero` plays without `--model`.
    Embedded,
    /// An ONNX file, or a directory whose newest valid `*.onnx` is used; watched for new
    /// checkpoints.
    File(PathBuf),
}

impl std::str::FromStr for ModelSource {
    type Err = String;
    /// `none` (or `classical`), `default` (or `embedded`), or a path.
    fn from_str(s: &str) -> Result<ModelSource, String> {
        match s.trim() {
            "" => Err("empty model (none, default, or a path)".into()),
            "none" | "classical" => Ok(ModelSource::Classical),
            "default" | "embedded" => Ok(ModelSource::Embedded),
            path => Ok(ModelSource::File(PathBuf::from(path))),
        }
    }
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
    /// The evaluator: classical (the library's default), the embedded network, or a file.
    pub model: ModelSource,
    pub device: Device,
    /// Positions whose network answers are remembered (`eval::cache`; 0 = none). Their memory
    /// comes out of the tree's share of `max_memory_bytes`.
    pub eval_cache_entries: usize,
    /// The MCTS exploration constant `c_init` (`MctsConfig::c_puct_init`).
    pub c_puct: f32,
    /// The MCTS first-play urgency below the root (`MctsConfig::fpu_reduction`).
    pub fpu_reduction: f32,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            difficulty: Difficulty::Medium,
            search: SearchKind::Mcts,
            threads: 1,
            max_memory_bytes: 350 * 1024 * 1024,
            model: ModelSource::Classical,
            device: Device::Cpu,
            eval_cache_entries: DEFAULT_EVAL_CACHE_ENTRIES,
            c_puct: MctsConfig::default().c_puct_init,
            fpu_reduction: MctsConfig::default().fpu_reduction,
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

impl SetupStone {
    /// The stones of `board` in the order they were placed, `own` those of colour `own`.
    pub fn all_of(board: &Board, own: Color) -> Vec<SetupStone> {
        board
            .history()
            .iter()
            .map(|&(p, c)| SetupStone {
                pos: (p.x() as i64, p.y() as i64),
                own: c == own,
            })
            .collect()
    }
}

/// What the engine reports about a finished move choice.
#[derive(Debug, Clone)]
pub struct MoveInfo {
    pub best: Pos,
    /// Expected outcome for the side to move, in [-1, 1] (the proven result's when proven).
    pub value: f32,
    pub depth: u32,
    /// Search visits (MCTS, reused ones included) or nodes (lookahead) behind the choice.
    pub nodes: u64,
    /// Visits or nodes this search added.
    pub playouts: u64,
    pub elapsed: Duration,
    /// The expected line, `best` first.
    pub pv: Vec<Pos>,
    /// A result proven by the threat search or the tree, for the side to move.
    pub proven: Option<Proven>,
    /// The best moves by search, `best` first (as many as asked for, fewer when the search
    /// knows fewer).
    pub candidates: Vec<RootCandidate>,
    /// Share of this search's network evaluations answered by the evaluator's cache of recent
    /// positions (None: no network, or no cache).
    pub cache_hits: Option<f64>,
}

impl MoveInfo {
    /// Visits (or nodes) this search added per second.
    pub fn speed(&self) -> f64 {
        self.playouts as f64 / self.elapsed.as_secs_f64().max(1e-6)
    }
}

pub type MessageSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Threat-search nodes per tree-search visit when the search is limited by visits (the threat
/// search runs ~100k-500k nodes/s, the tree search ~80k visits/s without a network).
pub const TSS_NODES_PER_VISIT: u64 = 64;
const TSS_MIN_NODES: u64 = 4096;

/// Positions whose network answers the engine remembers by default: about two 1 s moves of
/// searching with a CPU-sized network, 29 MiB on 15x15 (52 MiB on 20x20).
pub const DEFAULT_EVAL_CACHE_ENTRIES: usize = 1 << 15;

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
    /// What the root threat searches have proven so far this game, kept for the next moves.
    tss_memory: tss::Memory,
    _watch: Option<WatchHandle>,
    /// Playouts one search may add (None = only time and memory limit it).
    max_visits: Option<u64>,
    /// Called while the tree search runs (realtime analysis output).
    progress: Option<ProgressHook>,
    /// Why the live network sits out the current game, said once a game in a message.
    refusal_said: Option<String>,
    /// Whether `load_model` has run: before that a refused file gives way to the embedded
    /// network, after it to whatever plays.
    model_loaded: bool,
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
            tss_memory: tss::Memory::default(),
            _watch: None,
            max_visits: None,
            progress: None,
            refusal_said: None,
            model_loaded: false,
        }
    }

    /// Where user-facing messages (`MESSAGE` lines) go.
    pub fn set_message_sink(&mut self, sink: MessageSink) {
        self.on_message = sink;
    }

    /// Loads the configured model (if any) now and watches it for new checkpoints. A refused
    /// model leaves what was playing in place (at the first load, when nothing has played yet,
    /// the embedded network) and a message says what was refused and what plays; the source is
    /// still watched, so a valid checkpoint landing there later is swapped in.
    pub fn load_model(&mut self) {
        let first_load = !std::mem::replace(&mut self.model_loaded, true);
        self._watch = None;
        self.slot.forget_files();
        let path = match self.config.model.clone() {
            ModelSource::Classical => return self.slot.clear(),
            ModelSource::Embedded => return self.load_embedded(),
            ModelSource::File(path) => path,
        };
        let loader = self.model_loader();
        match self.slot.load_now(&path, &loader) {
            Ok(m) => self.message(&m),
            Err(e) if first_load => {
                self.message(&format!("model: {e}; playing the embedded network instead"));
                self.load_embedded();
            }
            Err(e) => self.refused(&e),
        }
        let sink = self.on_message.clone();
        self._watch = Some(self.slot.watch(
            path,
            loader,
            Arc::new(move |m: String| sink(&m)),
            Duration::from_millis(250),
        ));
    }

    /// Plays with `source` from the next move on (`INFO model`): the tree and any watcher of the
    /// previous source are dropped.
    pub fn set_model(&mut self, source: ModelSource) {
        if source != self.config.model {
            self.config.model = source;
            self.load_model();
        }
    }

    fn load_embedded(&mut self) {
        match slot::load_embedded(self.load_config()) {
            Ok((ev, plays)) => {
                self.slot.install_unwatched(ev);
                self.message(&format!(
                    "model: the embedded defaults: {plays} (the classical evaluator elsewhere)"
                ));
            }
            Err(e) => self.refused(&e),
        }
    }

    /// Says why a model was refused and what plays on.
    fn refused(&self, why: &str) {
        self.message(&format!(
            "model: {why}; keeping {}",
            self.slot.describe_live()
        ));
    }

    fn load_config(&self) -> LoadConfig {
        LoadConfig {
            sessions: self.config.threads.max(1),
            device: self.config.device,
            cache_entries: self.config.eval_cache_entries,
            ..LoadConfig::default()
        }
    }

    /// The native runtime for networks of the engine's own form, ONNX Runtime (one session per
    /// search thread) for other models.
    fn model_loader(&self) -> slot::Loader {
        slot::network_loader(self.load_config())
    }

    /// The evaluator the next move will use: the live one, or the classical one when the live
    /// network does not claim this game's rule and board size.
    pub fn evaluator(&self) -> Arc<dyn Evaluator> {
        self.evaluator_for_game().0
    }

    /// The evaluator for the current game (of a set of networks, the one claiming it), and why
    /// the live network sits it out (if it does).
    fn evaluator_for_game(&self) -> (Arc<dyn Evaluator>, Option<String>) {
        let live = self.slot.current();
        let Some(board) = self.board.as_ref() else {
            return (live, None);
        };
        match live.refuses(board) {
            Some(why) => (self.slot.fallback().clone(), Some(why)),
            None => (live.member_for(board).unwrap_or(live), None),
        }
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
    /// Caps the playouts of each tree search (None = no cap).
    pub fn set_max_visits(&mut self, visits: Option<u64>) {
        self.max_visits = visits;
    }
    /// Reports the tree search's progress through `hook` (None = silent).
    pub fn set_progress(&mut self, hook: Option<ProgressHook>) {
        self.progress = hook;
    }
    /// The memory the engine may use (the protocol's `max_memory`; 0 = its default). The tree
    /// is sized when it is made, so a new limit during a game makes the next move build it again
    /// (this once without the reused subtree) instead of keeping the old size until the next game.
    pub fn set_max_memory(&mut self, bytes: u64) {
        if bytes != self.max_memory_bytes {
            self.mcts = None;
        }
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
        self.tss_memory.clear();
        // A new game says again which evaluator sits it out.
        self.refusal_said = None;
        Ok(())
    }

    /// A new game of the same size.
    pub fn restart(&mut self) -> Result<(), EngineError> {
        self.start(self.size.0, self.size.1)
    }

    /// Sets the rule; an empty board switches at once, a game in progress from the next game on.
    pub fn set_rule(&mut self, rule: Rule) {
        self.rule = rule;
        if let Some(b) = &self.board
            && b.move_count() == 0
            && b.rule() != rule
        {
            self.board = Board::new(b.width(), b.height(), rule).ok();
        }
    }

    fn board_mut(&mut self) -> Result<&mut Board, EngineError> {
        self.board.as_mut().ok_or(EngineError::NotStarted)
    }

    /// The point (x, y) on the current board.
    pub fn pos(&self, x: i64, y: i64) -> Result<Pos, EngineError> {
        Ok(self
            .board
            .as_ref()
            .ok_or(EngineError::NotStarted)?
            .pos(x, y)?)
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
    /// Refused before `start`.
    pub fn set_position(&mut self, stones: &[SetupStone]) -> Result<(), EngineError> {
        // No board was announced yet: a position on it would be a guess at its size.
        self.board.as_ref().ok_or(EngineError::NotStarted)?;
        let (w, h) = self.size;
        let mut board = Board::new(w, h, self.rule)?;
        let own = stones.iter().filter(|s| s.own).count();
        let theirs = stones.len() - own;
        let me = if own == theirs {
            Color::Black
        } else if theirs == own + 1 {
            Color::White
        } else {
            return Err(EngineError::BadPosition(format!(
                "{own} own stones against {theirs} of the opponent"
            )));
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
            Some(b) if b.rule() == Rule::Renju => {
                b.points().filter(|&p| b.is_forbidden(p)).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Chooses a move for the side to move within the time limits, plays it and returns it.
    /// `started` is when the request arrived (the clock runs from there).
    ///
    /// # Errors
    /// No game, no legal move, or the game already decided.
    pub fn think(
        &mut self,
        started: Instant,
        stop: &Arc<AtomicBool>,
    ) -> Result<MoveInfo, EngineError> {
        let info = self.analyse(started, stop, 1)?;
        self.board_mut()?.play(info.best)?;
        Ok(info)
    }

    /// Searches the position like `think` and reports the `n` best moves, without playing any:
    /// the position is unchanged.
    ///
    /// # Errors
    /// No game, no legal move, or the game already decided.
    pub fn analyse(
        &mut self,
        started: Instant,
        stop: &Arc<AtomicBool>,
        n: usize,
    ) -> Result<MoveInfo, EngineError> {
        let n = n.max(1);
        let board = self.board.as_ref().ok_or(EngineError::NotStarted)?;
        if board.winner().is_some() {
            return Err(EngineError::GameOver);
        }
        let budget = self
            .limits
            .budget(board.move_count(), board.width() * board.height());
        let (soft, hard) = (started + budget.soft, started + budget.hard);
        // An obvious move is answered at once when the time saved can be spent later: when the
        // match clock, not the turn limit, sets this move's share (and always for a five, which
        // ends the game). Under a turn limit alone a second saved is a second lost, while the
        // search of a forced move is a search of the position after it, which the next move
        // reuses (answering at once cost renju strength when it was unconditional).
        let clock_bound = budget.soft < budget.hard && self.max_visits.is_none() && n == 1;
        if let Some((best, why)) = obvious_move(board) {
            if why == Obvious::Five {
                return Ok(proven_win(started, vec![best]));
            }
            if clock_bound {
                self.message(&format!("{}: {best}, answered at once", why.describe()));
                return Ok(unsearched(started, best));
            }
        }

        // Threat-space search first: a proven win is played at once, a forced defence restricts
        // the moves the main search may try.
        let mut allowed: Option<Vec<Pos>> = None;
        if self.config.difficulty == Difficulty::Medium {
            let tss_budget = match self.max_visits {
                // A search sized in visits gets a threat search sized in nodes: as reproducible
                // as the tree search, and in proportion to it.
                Some(v) => tss::Budget::nodes_and_time(
                    v.saturating_mul(TSS_NODES_PER_VISIT).max(TSS_MIN_NODES),
                    budget.soft / 4,
                ),
                None => tss::Budget::time(budget.soft / 4),
            }
            .with_stop(stop.clone());
            match tss::analyse_with(
                board,
                board.side_to_move(),
                tss_budget,
                &mut self.tss_memory,
            )
            .tactics
            {
                RootTactics::WinNow(p) => return Ok(proven_win(started, vec![p])),
                RootTactics::ForcedWin { line, kind } => {
                    let kind = match kind {
                        WinKind::Vcf => "VCF",
                        WinKind::Vct => "VCT",
                    };
                    let text: Vec<String> = line.iter().map(|p| p.to_string()).collect();
                    self.message(&format!("{kind} win: {}", text.join(" ")));
                    return Ok(proven_win(started, line));
                }
                RootTactics::MustBlock(moves) if moves.len() == 1 && clock_bound => {
                    self.message(&format!(
                        "{}: {}, answered at once",
                        Obvious::OnlyDefence.describe(),
                        moves[0]
                    ));
                    return Ok(unsearched(started, moves[0]));
                }
                RootTactics::MustBlock(moves) if !moves.is_empty() => allowed = Some(moves),
                RootTactics::MustBlock(_) | RootTactics::Lost => {
                    self.message("lost by force; resisting")
                }
                RootTactics::GameOver { .. } => return Err(EngineError::GameOver),
                RootTactics::NoMoves => return Err(EngineError::NoLegalMove),
                RootTactics::Unknown => {}
            }
        }

        match self.config.search {
            SearchKind::Lookahead => {
                let board = self.board.as_ref().ok_or(EngineError::NotStarted)?;
                let r = lookahead::choose(board, soft, hard, stop, allowed.as_deref())
                    .ok_or(EngineError::NoLegalMove)?;
                let only = RootCandidate {
                    mv: r.best,
                    visits: 0,
                    prior: 0.0,
                    value: r.value,
                    proven: None,
                    pv: vec![r.best],
                };
                Ok(MoveInfo {
                    best: r.best,
                    value: r.value,
                    depth: r.depth,
                    nodes: r.nodes,
                    playouts: r.nodes,
                    elapsed: started.elapsed(),
                    pv: vec![r.best],
                    proven: None,
                    candidates: vec![only],
                    cache_hits: None,
                })
            }
            SearchKind::Mcts => self.think_mcts(started, (soft, hard), stop, allowed, n),
        }
    }

    /// The MCTS search over the live evaluator, made on first use and kept for tree reuse.
    fn search(&mut self) -> &mut Search {
        let (evaluator, refusal) = self.evaluator_for_game();
        if let Some(why) = refusal.as_ref().filter(|_| refusal != self.refusal_said) {
            self.message(&format!(
                "{why}: this game is played with the classical evaluator"
            ));
        }
        self.refusal_said = refusal;
        // The network's cache may fill whatever evaluator plays: its memory is set aside.
        let cells = self.board.as_ref().map_or(0, |b| b.width() * b.height());
        let cache_bytes = crate::eval::cache::bytes_for(self.config.eval_cache_entries, cells);
        let search = self.mcts.get_or_insert_with(|| {
            Search::new(
                MctsConfig {
                    threads: self.config.threads,
                    tactics: self.config.difficulty == Difficulty::Medium,
                    vcf_budget: if self.config.difficulty == Difficulty::Medium {
                        PLAY_LEAF_VCF_NODES
                    } else {
                        0
                    },
                    max_memory: MctsConfig::tree_bytes_for_engine_limit(
                        if self.max_memory_bytes == 0 {
                            1 << 30
                        } else {
                            self.max_memory_bytes as usize
                        },
                    )
                    .saturating_sub(cache_bytes)
                    .max(8 << 20),
                    c_puct_init: self.config.c_puct,
                    fpu_reduction: self.config.fpu_reduction,
                    ..MctsConfig::default()
                },
                evaluator.clone(),
            )
        });
        if !Arc::ptr_eq(search.evaluator(), &evaluator) {
            search.set_evaluator(evaluator);
        }
        search
    }

    /// The tree search until `soft`; when the choice is still unsettled there (see
    /// `unsettled`) and the move may take longer, once more until halfway to `hard`.
    fn think_mcts(
        &mut self,
        started: Instant,
        (soft, hard): (Instant, Instant),
        stop: &Arc<AtomicBool>,
        allowed: Option<Vec<Pos>>,
        n: usize,
    ) -> Result<MoveInfo, EngineError> {
        let board = self.board.clone().ok_or(EngineError::NotStarted)?;
        let max_visits = self.max_visits.unwrap_or(u64::MAX);
        let progress = self.progress.clone();
        let search = self.search();
        search.set_position(&board);
        // Only these moves avoid a forced loss: the tree searches nothing else, so its whole
        // time goes to choosing among them.
        if let Some(allowed) = &allowed {
            search.restrict_root(allowed);
        }
        let cache_before = search.evaluator().cache_stats();
        let mut limits = SearchLimits {
            deadline: Some(soft),
            stop: stop.clone(),
            max_visits,
            progress,
            ..SearchLimits::default()
        };
        let mut result = search.run(&limits);
        // Only a search limited by time is extended: one limited by visits must stay reproducible.
        let halfway = soft + hard.saturating_duration_since(soft) / 2;
        if max_visits == u64::MAX && hard > soft && unsettled(&result) && Instant::now() < halfway {
            limits.deadline = Some(halfway);
            let before = result.playouts;
            result = search.run(&limits);
            result.playouts += before;
        }
        // With a forced defence, every ranked move is needed to put the defences first.
        let mut candidates = search.candidates(if allowed.is_some() { usize::MAX } else { n });
        let mut best = result.best;
        if let Some(allowed) = &allowed
            && !allowed.contains(&best)
        {
            // The root had none of them as a move (its restriction was ignored): the search's
            // own favourite among them (its final-choice ranking, so never one the tree proved
            // lost while another is left), or the classical favourite.
            best = candidates
                .iter()
                .find(|c| allowed.contains(&c.mv) && c.proven != Some(Proven::Loss))
                .map(|c| c.mv)
                .or_else(|| {
                    scored_moves(&board)
                        .into_iter()
                        .map(|m| m.pos)
                        .find(|p| allowed.contains(p))
                })
                .unwrap_or(allowed[0]);
        }
        if best.is_none() || !board.is_legal(best) {
            best = scored_moves(&board)
                .first()
                .map(|m| m.pos)
                .ok_or(EngineError::NoLegalMove)?;
        }
        // The move played first, then the forced defences, then the rest in the search's order.
        let refuted = |p: &Pos| allowed.as_ref().is_some_and(|a| !a.contains(p));
        candidates.sort_by_key(|c| (c.mv != best, refuted(&c.mv)));
        if candidates.first().is_none_or(|c| c.mv != best) {
            candidates.insert(
                0,
                RootCandidate {
                    mv: best,
                    visits: 0,
                    prior: 0.0,
                    value: result.value,
                    proven: None,
                    pv: vec![best],
                },
            );
        }
        candidates.truncate(n);
        let pv = candidates[0].pv.clone();
        Ok(MoveInfo {
            best,
            value: result.value,
            depth: pv.len() as u32,
            nodes: result.visits,
            playouts: result.playouts,
            elapsed: started.elapsed(),
            pv,
            proven: result.proven,
            candidates,
            cache_hits: match (cache_before, search.evaluator().cache_stats()) {
                (Some((l0, h0)), Some((l1, h1))) if l1 > l0 => {
                    Some((h1 - h0) as f64 / (l1 - l0) as f64)
                }
                _ => None,
            },
        })
    }

    /// Answers a swap2 opening: `opening` holds the stones placed so far (0, 3 or 5), in
    /// placement order (black, white, black, …). The decision is searched within the move's time
    /// budget from `started`. Afterwards the position is the opening plus the stones placed, so a
    /// following `TURN` continues it; on an error the position is unchanged.
    ///
    /// # Errors
    /// No game, a stone off the board or on another, or a count other than 0, 3 or 5.
    pub fn swap2(
        &mut self,
        opening: &[(i64, i64)],
        started: Instant,
        stop: &Arc<AtomicBool>,
    ) -> Result<Swap2Decision, EngineError> {
        let current = self.board.as_ref().ok_or(EngineError::NotStarted)?;
        let mut board = Board::new(current.width(), current.height(), self.rule)?;
        for &(x, y) in opening {
            let p = board.pos(x, y)?;
            let colour = board.side_to_move();
            board.place(p, colour)?;
        }
        let budget = self
            .limits
            .budget(board.move_count(), board.width() * board.height());
        let decision = swap2::choose(self.search(), &board, started + budget.soft, stop)?;
        if let Swap2Choice::Place(stones) = &decision.choice {
            for &p in stones {
                board.play(p)?;
            }
        }
        self.board = Some(board);
        Ok(decision)
    }
}

/// Is the search's choice still open at its soft limit: not proven, and either not the most
/// visited move (the final choice's LCB rule disagrees with the visits) or the runner-up has at
/// least 70% of its visits? Then more time is likely to change the move, so it is spent.
fn unsettled(r: &crate::mcts::SearchResult) -> bool {
    if r.proven.is_some() {
        return false;
    }
    match r.root_children.as_slice() {
        [first, second, ..] => r.best != first.mv || second.visits * 10 >= first.visits * 7,
        _ => false,
    }
}

/// Why a move needs no search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Obvious {
    Centre,
    Five,
    OnlyLegal,
    OnlyBlock,
    /// The only move the threat analysis does not prove lost.
    OnlyDefence,
}

impl Obvious {
    fn describe(self) -> &'static str {
        match self {
            Obvious::Centre => "the centre of an empty board",
            Obvious::Five => "a five",
            Obvious::OnlyLegal => "the only legal move",
            Obvious::OnlyBlock => "the only block",
            Obvious::OnlyDefence => "the only defence",
        }
    }
}

/// A move that needs no search, and why: on the empty board the centre, a five to make, the
/// only legal move, or the only point that stops the opponent's single five.
fn obvious_move(board: &Board) -> Option<(Pos, Obvious)> {
    if board.move_count() == 0 {
        return Some((
            Pos::new(board.width() / 2, board.height() / 2),
            Obvious::Centre,
        ));
    }
    let (me, opp) = (board.side_to_move(), board.side_to_move().opp());
    if let Some(p) = board
        .points_making(me, Pattern::Five)
        .find(|&p| board.is_legal(p))
    {
        return Some((p, Obvious::Five));
    }
    if let [only] = board.legal_moves()[..] {
        return Some((only, Obvious::OnlyLegal));
    }
    let mut fives = board.points_making(opp, Pattern::Five);
    match (fives.next(), fives.next()) {
        (Some(p), None) if board.is_legal(p) => Some((p, Obvious::OnlyBlock)),
        _ => None,
    }
}

/// The report of a move played without a search.
fn unsearched(started: Instant, best: Pos) -> MoveInfo {
    let only = RootCandidate {
        mv: best,
        visits: 0,
        prior: 0.0,
        value: 0.0,
        proven: None,
        pv: vec![best],
    };
    MoveInfo {
        best,
        value: 0.0,
        depth: 1,
        nodes: 0,
        playouts: 0,
        elapsed: started.elapsed(),
        pv: vec![best],
        proven: None,
        candidates: vec![only],
        cache_hits: None,
    }
}

/// The report of a win the threat search proved: `line` from the move to play on.
fn proven_win(started: Instant, line: Vec<Pos>) -> MoveInfo {
    let mut info = unsearched(started, line[0]);
    info.candidates[0] = RootCandidate {
        value: 1.0,
        proven: Some(Proven::Win),
        pv: line.clone(),
        ..info.candidates[0].clone()
    };
    MoveInfo {
        value: 1.0,
        depth: line.len() as u32,
        pv: line,
        proven: Some(Proven::Win),
        ..info
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcts::SearchResult;

    fn result(
        best: (usize, usize),
        visits: &[((usize, usize), u32)],
        proven: Option<Proven>,
    ) -> SearchResult {
        let child = |&((x, y), visits): &((usize, usize), u32)| RootCandidate {
            mv: Pos::new(x, y),
            visits,
            prior: 0.0,
            value: 0.0,
            proven: None,
            pv: Vec::new(),
        };
        SearchResult {
            best: Pos::new(best.0, best.1),
            visits: visits.iter().map(|c| u64::from(c.1)).sum(),
            playouts: 0,
            value: 0.0,
            pv: Vec::new(),
            root_children: visits.iter().map(child).collect(),
            nodes: 0,
            proven,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn a_close_or_contested_choice_is_unsettled() {
        // Clear favourite: settled.
        assert!(!unsettled(&result(
            (7, 7),
            &[((7, 7), 1000), ((8, 8), 600)],
            None
        )));
        // Runner-up at 70% of the visits: unsettled.
        assert!(unsettled(&result(
            (7, 7),
            &[((7, 7), 1000), ((8, 8), 700)],
            None
        )));
        // The final choice is not the most visited move: unsettled.
        assert!(unsettled(&result(
            (8, 8),
            &[((7, 7), 1000), ((8, 8), 100)],
            None
        )));
        // Proven, or only one move searched: nothing to gain.
        assert!(!unsettled(&result(
            (7, 7),
            &[((7, 7), 1000), ((8, 8), 990)],
            Some(Proven::Win)
        )));
        assert!(!unsettled(&result((7, 7), &[((7, 7), 1000)], None)));
    }

    /// An engine on a 15x15 freestyle board with these stones, the engine to move.
    fn engine_with(own: &[(i64, i64)], theirs: &[(i64, i64)], limits: TimeLimits) -> Engine {
        let mut e = Engine::new(EngineConfig::default());
        e.start(15, 15).unwrap();
        let stones: Vec<SetupStone> = own
            .iter()
            .map(|&pos| SetupStone { pos, own: true })
            .chain(theirs.iter().map(|&pos| SetupStone { pos, own: false }))
            .collect();
        e.set_position(&stones).unwrap();
        e.limits = limits;
        e
    }

    /// Obvious moves are answered without a search when the match clock sets the move's time
    /// (what is saved is spent later), and searched when only the turn limit does (the search
    /// of the position after the move is reused); a five always at once.
    #[test]
    fn obvious_moves_are_answered_at_once_when_the_clock_is_short() {
        let stop = Arc::new(AtomicBool::new(false));
        // 3 s left of the match: a share of it is less than the turn allows.
        let clock = TimeLimits {
            timeout_turn_ms: Some(5_000),
            timeout_match_ms: Some(100_000),
            time_left_ms: Some(3_000),
        };
        let turn = TimeLimits {
            timeout_turn_ms: Some(1_000),
            timeout_match_ms: Some(0),
            time_left_ms: None,
        };
        let five = (
            &[(3, 3), (4, 3), (5, 3), (6, 3)][..],
            &[(3, 9), (4, 9), (5, 9), (6, 9), (0, 14)][..],
            Pos::new(2, 3),
        );
        // The opponent's four has one empty end: only that point stops it.
        let block = (
            &[(2, 5), (10, 10), (12, 1)][..],
            &[(3, 5), (4, 5), (5, 5), (6, 5)][..],
            Pos::new(7, 5),
        );
        let centre = (&[][..], &[][..], Pos::new(7, 7));
        for (own, theirs, want) in [five, block, centre] {
            let info = engine_with(own, theirs, clock)
                .think(Instant::now(), &stop)
                .unwrap();
            assert_eq!(
                (info.best, info.playouts),
                (want, 0),
                "{want} under a short clock"
            );
        }
        let info = engine_with(five.0, five.1, turn)
            .think(Instant::now(), &stop)
            .unwrap();
        assert_eq!(
            (info.best, info.playouts),
            (five.2, 0),
            "a five at once whatever the clock"
        );
        for (own, theirs, want) in [block, centre] {
            let info = engine_with(own, theirs, turn)
                .think(Instant::now(), &stop)
                .unwrap();
            assert!(info.playouts > 0, "{want} searched under a turn limit");
            if want == block.2 {
                assert_eq!(info.best, want);
            }
        }
    }

    /// `INFO max_memory` in the middle of a game sizes the tree of the next move, not only of
    /// the next game; the same limit sent again keeps the tree.
    #[test]
    fn a_new_memory_limit_resizes_the_tree_of_the_next_move() {
        let stop = Arc::new(AtomicBool::new(false));
        let mut e = engine_with(&[(7, 7)], &[(8, 8)], TimeLimits::default());
        e.set_max_visits(Some(50));
        e.set_max_memory(400 << 20);
        e.think(Instant::now(), &stop).unwrap();
        let tree_cap = |e: &Engine| e.mcts.as_ref().map(|s| s.config().max_memory);
        let big = tree_cap(&e).unwrap();
        e.set_max_memory(400 << 20);
        assert_eq!(tree_cap(&e), Some(big), "the same limit keeps the tree");
        e.set_max_memory(80 << 20);
        e.think(Instant::now(), &stop).unwrap();
        let small = tree_cap(&e).unwrap();
        assert!(
            small < big / 2,
            "the tree is sized for the new limit: {small} of the old {big}"
        );
    }

    /// The threat analysis's single defence (one move of 391 does not lose to the opponent's VCF)
    /// is answered at once under a short clock.
    #[test]
    fn the_only_defence_is_answered_at_once_when_the_clock_is_short() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/tactics-mined/mined.txt"
        );
        let suite = crate::tss::suite::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        let pos = suite
            .into_iter()
            .find(|p| p.name == "mined-freestyle-20-9-9")
            .unwrap();
        let mut e = Engine::new(EngineConfig::default());
        e.start(20, 20).unwrap();
        e.set_position(&SetupStone::all_of(&pos.board, pos.to_move))
            .unwrap();
        // 100 s left: a share of 2.5 s, less than the turn allows; the analysis gets a quarter
        // of it, twenty times what it needs on an idle machine (~30 ms), so load does not matter.
        e.limits = TimeLimits {
            timeout_turn_ms: Some(60_000),
            timeout_match_ms: Some(200_000),
            time_left_ms: Some(100_000),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let info = e.think(Instant::now(), &stop).unwrap();
        assert_eq!((info.best, info.playouts), (Pos::new(7, 11), 0));
    }
}
