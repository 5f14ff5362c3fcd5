//! Self-play: `parallel_games` games at once, each with its own MCTS tree (virtual loss inside a
//! tree lets one game contribute several leaves per step). Every step gathers the leaves of all
//! games (tree work spread over `parallel_workers` threads), runs them through the network in one
//! batched forward, and applies the results. Root Dirichlet noise, a temperature schedule, and
//! resignation with a no-resign fraction (whose games measure false resignations).
//!
//! Each move gets `simulations` fresh playouts on top of the subtree reused from the previous
//! move, and ends early when the search proves the root. The stored policy target is the root's
//! visits with proven-lost moves left out, or, for a proven win, the winning moves alone (the
//! immediate fives when there are any): visits spent before a proof are no evidence about the
//! move, and training on them taught the network to ignore its own fives (issue #15).
//!
//! With `gumbel_root_moves` > 0 a full search runs its root by Gumbel sequential halving
//! (`gumbel`): no Dirichlet noise, the halving's survivor is played (no temperature), and the
//! completed-Q policy is the target. Proven wins are stored and played as above.
//!
//! Leaves go through the engine's network seam: each game encodes and finishes its own leaves
//! with `NetEvaluator`'s steps, and one backend forward serves them all (tch lives behind the
//! `Backend` trait, in `net_eval`; a failed forward stops self-play rather than train on
//! made-up priors). An evaluator of whole boards (`Leaves::Boards`: the native pattern network,
//! whose accumulators follow each game's moves) instead evaluates each game's leaves in the
//! game's own parallel task.
//!
//! A status callback sees every step (games done and running, moves, leaves: `status`), which a
//! `support::progress` reporter turns into a bar or lines without touching the games. The room
//! also holds Gumbel root search (`gumbel`), the epoch's up-front time estimate (`estimate`) and
//! the warm-start games of the classical search (`bootstrap`).
//!
//! Depends on `engine::mcts`, `engine::game`, `engine::eval::network`, `training::replay`
//! (`GameRecord`), `config` and `support::progress`.

pub mod bootstrap;
pub mod estimate;
pub mod gumbel;
pub mod status;

use std::sync::Arc;
use std::time::{Duration, Instant};

use engine::brain::Difficulty;
use engine::eval::network::{Backend, NetEvaluator, NetOutput};
use engine::eval::{Evaluation, Evaluator, UniformEvaluator};
use engine::game::{Board, Color, Pos, Rule};
use engine::mcts::{MctsConfig, Proven, RootCandidate, Search, SearchResult};
use rayon::prelude::*;

use crate::selfplay::status::SelfPlayStatus;
use crate::training::replay::GameRecord;
use engine::rng::Rng;
use gumbel::GumbelRoot;

#[derive(Clone, Debug)]
pub struct SelfPlayConfig {
    pub board_size: usize,
    pub rule: Rule,
    pub simulations: u32,
    /// Leaves one game contributes per step.
    pub batch_size_mcts: usize,
    pub parallel_games: usize,
    pub parallel_workers: usize,
    pub difficulty: Difficulty,
    /// Playout-cap randomization: share of moves searched in full and recorded (1 = all).
    pub full_search_share: f64,
    /// Fresh playouts of the other, cheap, unrecorded searches.
    pub cheap_simulations: u32,
    /// VCF nodes per leaf at difficulty medium.
    pub vcf_budget_nodes: u32,
    /// Gumbel root search: moves drawn at the root of a full search (0 = off).
    pub gumbel_root_moves: usize,
    pub dirichlet_alpha: f32,
    pub dirichlet_epsilon: f32,
    /// Plies over which the move temperature falls linearly from 1 to `temperature_final`
    /// (which it keeps afterwards).
    pub temperature_moves: usize,
    pub temperature_final: f32,
    /// Resign when the root value stays below this for two moves of the same side.
    pub resign_threshold: f32,
    /// Share of games that never resign (to measure false resignations).
    pub no_resign_fraction: f64,
    pub seed: u64,
}

impl SelfPlayConfig {
    /// The self-play settings of a training run (single-machine or distributed worker).
    pub fn from_settings(s: &crate::config::Settings) -> SelfPlayConfig {
        SelfPlayConfig {
            board_size: s.board_size,
            rule: s.rule,
            simulations: s.mcts_simulations,
            batch_size_mcts: s.batch_size_mcts,
            parallel_games: s.parallel_games,
            parallel_workers: s.parallel_workers,
            difficulty: s.difficulty,
            full_search_share: s.full_search_share,
            cheap_simulations: s.cheap_simulations,
            vcf_budget_nodes: s.vcf_budget_nodes,
            gumbel_root_moves: s.gumbel_root_moves,
            dirichlet_alpha: s.dirichlet_alpha as f32,
            dirichlet_epsilon: s.dirichlet_epsilon as f32,
            temperature_moves: s.temperature_moves,
            temperature_final: s.temperature_final as f32,
            resign_threshold: s.resign_threshold as f32,
            no_resign_fraction: s.no_resign_fraction,
            seed: s.seed,
        }
    }
}

impl Default for SelfPlayConfig {
    /// The training settings' defaults (`config::Settings`: declared once).
    fn default() -> Self {
        SelfPlayConfig::from_settings(&crate::config::Settings::default())
    }
}

/// What a batch of self-play produced and how long its parts took.
#[derive(Debug, Default)]
pub struct SelfPlayReport {
    pub games: Vec<GameRecord>,
    /// Training positions recorded (cheap searches of playout-cap randomization excluded).
    pub positions: usize,
    /// Plies of the finished games, recorded or not.
    pub finished_plies: usize,
    pub elapsed: Duration,
    pub forward_time: Duration,
    pub forwards: usize,
    pub leaves: usize,
    /// Moves played in all games.
    pub moves: usize,
    /// Games that resigned / no-resign games where the side that would have resigned won.
    pub resigned: usize,
    pub false_resigns: usize,
}

struct Slot {
    board: Board,
    search: Search,
    record: GameRecord,
    no_resign: bool,
    /// Consecutive own moves below the threshold, per colour.
    low: [u32; 2],
    /// Colour that would have resigned in a no-resign game.
    would_resign: Option<Color>,
    planes: Vec<f32>,
    /// This step's evaluations, when the leaves go to a board evaluator, and how long the
    /// evaluator took for them (its share of the step, reported as the forward's).
    evals: Vec<Evaluation>,
    eval_time: Duration,
    pending: usize,
    /// Leaves were gathered this step, so `apply` must follow.
    gathered: bool,
    /// Root visits when this move's search began (those of the reused subtree).
    start_visits: u64,
    /// Root visits before this step's gather.
    before: u64,
    /// A whole step backed up no playout (the tree is full): the search cannot go on.
    stalled: bool,
    /// Draws the played move from the target.
    rng: Rng,
    /// This move's fresh playouts: the full search, or a cheap one (playout-cap randomization).
    sims: u64,
    /// This move's search is a full one, recorded as a training target.
    full: bool,
    /// This move's Gumbel root search, once the root is expanded (full searches with
    /// `gumbel_root_moves` > 0 only).
    gumbel: Option<GumbelRoot>,
}

/// The search of one self-play game: root noise, tree reuse, tactics as the difficulty says.
pub(crate) fn mcts_config(cfg: &SelfPlayConfig, seed: u64) -> MctsConfig {
    let tactics = cfg.difficulty == Difficulty::Medium;
    MctsConfig {
        threads: 1,
        batch_size: cfg.batch_size_mcts.max(1),
        dirichlet_alpha: cfg.dirichlet_alpha,
        dirichlet_epsilon: cfg.dirichlet_epsilon,
        tactics,
        vcf_budget: if tactics { cfg.vcf_budget_nodes } else { 0 },
        final_choice: engine::mcts::FinalChoice::MaxVisits,
        seed,
        reuse_tree: true,
        max_memory: 64 << 20,
        ..MctsConfig::default()
    }
}

/// The seed of game number `game` (its search's noise and its move draws).
pub(crate) fn game_seed(cfg: &SelfPlayConfig, game: usize) -> u64 {
    cfg.seed.wrapping_mul(0x9E37_79B9).wrapping_add(game as u64)
}

/// An empty record of `cfg`'s board and rule.
pub(crate) fn new_record(cfg: &SelfPlayConfig) -> GameRecord {
    GameRecord {
        board_size: cfg.board_size as u8,
        rule: cfg.rule.to_protocol(),
        moves: Vec::new(),
        visits: Vec::new(),
        outcome: 0,
        resigned: false,
    }
}

fn new_slot(cfg: &SelfPlayConfig, start: &Board, game: usize) -> anyhow::Result<Slot> {
    let board = start.clone();
    let seed = game_seed(cfg, game);
    let mcts = mcts_config(cfg, seed);
    // The step-wise API never calls the search's own evaluator: leaves go to the batched net.
    let mut search = Search::new(mcts, Arc::new(UniformEvaluator));
    search.set_position(&board);
    let mut r = crate::seeded_rng(seed);
    let no_resign = r.unit() < cfg.no_resign_fraction;
    let mut slot = Slot {
        board,
        search,
        record: new_record(cfg),
        no_resign,
        low: [0; 2],
        would_resign: None,
        planes: Vec::new(),
        evals: Vec::new(),
        eval_time: Duration::ZERO,
        pending: 0,
        gathered: false,
        start_visits: 0,
        before: 0,
        stalled: false,
        rng: r,
        sims: 0,
        full: true,
        gumbel: None,
    };
    slot.begin_move(cfg);
    Ok(slot)
}

impl Slot {
    /// Starts a move's search: a full one, recorded, or under playout-cap randomization a cheap
    /// one, without root noise and not recorded. The share draws no number when it is 1, so
    /// self-play without it is what it always was.
    fn begin_move(&mut self, cfg: &SelfPlayConfig) {
        self.full = cfg.full_search_share >= 1.0 || self.rng.unit() < cfg.full_search_share;
        let sims = if self.full {
            cfg.simulations
        } else {
            cfg.cheap_simulations
        };
        self.sims = sims.max(1) as u64;
        self.gumbel = None;
        // The Gumbel draw is the root's exploration: no Dirichlet noise on top of it.
        if !self.full || self.uses_gumbel(cfg) {
            self.search.skip_root_noise();
        }
    }

    fn uses_gumbel(&self, cfg: &SelfPlayConfig) -> bool {
        self.full && cfg.gumbel_root_moves > 0
    }

    /// Starts the Gumbel root search once the root is expanded, and moves its halving on after
    /// each step; returns the root moves it read (None without a Gumbel search).
    fn advance_gumbel(&mut self, cfg: &SelfPlayConfig) -> Option<Vec<RootCandidate>> {
        if !self.uses_gumbel(cfg) {
            return None;
        }
        let moves = self.search.root_moves();
        if moves.is_empty() {
            return None;
        }
        let value = self.search.result().value;
        match &mut self.gumbel {
            Some(g) => g.advance(&moves, value),
            None => {
                let g = GumbelRoot::draw(&moves, cfg.gumbel_root_moves, self.sims, &mut self.rng);
                self.gumbel = Some(g);
            }
        }
        Some(moves)
    }
}

/// Plays `games` games with `net`, `cfg.parallel_games` at a time. `progress` is called after
/// every step (one move's worth of search in every game) with where the batch stands; it sees
/// the games, never changes them.
pub fn play(
    cfg: &SelfPlayConfig,
    net: &NetEvaluator<dyn Backend>,
    games: usize,
    first_game: usize,
    progress: impl FnMut(&SelfPlayStatus),
) -> anyhow::Result<SelfPlayReport> {
    play_on(cfg, Leaves::Batched(net), games, first_game, progress)
}

/// What evaluates self-play's leaves.
#[derive(Clone, Copy)]
pub enum Leaves<'a> {
    /// Every game's leaves as planes, in one batched forward per step.
    Batched(&'a NetEvaluator<dyn Backend>),
    /// Each game's leaves as boards, evaluated in that game's task (the native pattern network).
    Boards(&'a dyn Evaluator),
}

/// `play` with the leaves going to `leaves`.
pub fn play_on(
    cfg: &SelfPlayConfig,
    leaves: Leaves<'_>,
    games: usize,
    first_game: usize,
    progress: impl FnMut(&SelfPlayStatus),
) -> anyhow::Result<SelfPlayReport> {
    let n = cfg.board_size;
    let empty = Board::new(n, n, cfg.rule).map_err(|e| anyhow::anyhow!("board {n}x{n}: {e}"))?;
    run_games(cfg, leaves, &empty, games, first_game, progress)
}

/// `play` from the position `start_board` (of `cfg`'s size and rule): the records hold the
/// plies played from there, so only games from the empty board belong in the replay store.
pub fn play_from(
    cfg: &SelfPlayConfig,
    net: &NetEvaluator<dyn Backend>,
    start_board: &Board,
    games: usize,
    first_game: usize,
    progress: impl FnMut(&SelfPlayStatus),
) -> anyhow::Result<SelfPlayReport> {
    run_games(
        cfg,
        Leaves::Batched(net),
        start_board,
        games,
        first_game,
        progress,
    )
}

fn run_games(
    cfg: &SelfPlayConfig,
    net: Leaves<'_>,
    start_board: &Board,
    games: usize,
    first_game: usize,
    mut progress: impl FnMut(&SelfPlayStatus),
) -> anyhow::Result<SelfPlayReport> {
    let start = Instant::now();
    let n = cfg.board_size;
    if (
        start_board.width(),
        start_board.height(),
        start_board.rule(),
    ) != (n, n, cfg.rule)
    {
        anyhow::bail!(
            "self-play start position is not a {n}x{n} {:?} board",
            cfg.rule
        );
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.parallel_workers.max(1))
        .build()?;
    let mut report = SelfPlayReport::default();
    let mut started = 0usize;
    let mut slots: Vec<Slot> = Vec::new();
    while started < games.min(cfg.parallel_games.max(1)) {
        slots.push(new_slot(cfg, start_board, first_game + started)?);
        started += 1;
    }
    let mut batch_planes: Vec<f32> = Vec::new();
    while !slots.is_empty() {
        pool.install(|| gather(cfg, net, &mut slots));
        report.forward_time += board_evaluations_time(&mut slots, cfg.parallel_workers);
        let output = forward_all(net, &slots, &mut batch_planes, n, &mut report)?;
        pool.install(|| apply_all(cfg, net, &mut slots, &output))?;
        // Move in every game whose search is done; finish games; refill slots.
        let mut i = 0;
        while i < slots.len() {
            if !search_done(&slots[i]) {
                i += 1;
                continue;
            }
            if !make_move(cfg, &mut slots[i], &mut report)? {
                i += 1;
                continue;
            }
            let s = slots.swap_remove(i);
            report.positions += s.record.positions();
            report.finished_plies += s.record.plies();
            report.games.push(s.record);
            if started < games {
                slots.push(new_slot(cfg, start_board, first_game + started)?);
                started += 1;
            }
        }
        progress(&SelfPlayStatus {
            games_total: games,
            games_done: report.games.len(),
            games_running: slots.len(),
            moves: report.moves,
            finished_moves: report.finished_plies,
            leaves: report.leaves,
            elapsed: start.elapsed(),
        });
    }
    // Games finish in step order, which the thread schedule does not change: records are
    // deterministic for a seed.
    report.elapsed = start.elapsed();
    Ok(report)
}

/// Step 1: every game (in parallel) gathers its leaves and encodes them.
fn gather(cfg: &SelfPlayConfig, net: Leaves<'_>, slots: &mut [Slot]) {
    slots.par_iter_mut().for_each(|s| {
        s.before = s.search.root_visits();
        // A reused subtree may already be proven: move without searching.
        s.gathered = !search_done(s);
        s.planes.clear();
        if !s.gathered {
            s.pending = 0;
            return;
        }
        let fresh = s.before - s.start_visits;
        let batch = cfg.batch_size_mcts.max(1);
        let moves = s.advance_gumbel(cfg);
        s.pending = match (&s.gumbel, moves) {
            (Some(g), Some(moves)) => {
                let plan = g.plan(&moves, batch);
                s.search.gather_leaves_through(&plan).len()
            }
            _ => {
                let want = (s.sims.saturating_sub(fresh) as usize).clamp(1, batch);
                s.search.gather_leaves(want).len()
            }
        };
        match net {
            Leaves::Batched(net) => net.encode(&s.search.pending_boards(), &mut s.planes),
            Leaves::Boards(ev) => {
                let t0 = Instant::now();
                ev.evaluate(&s.search.pending_boards(), &mut s.evals);
                s.eval_time = t0.elapsed();
            }
        }
    })
}

/// Step 2: one forward for all leaves of all games (in parts at once where the backend runs
/// several forwards at a time).
fn forward_all(
    net: Leaves<'_>,
    slots: &[Slot],
    batch_planes: &mut Vec<f32>,
    n: usize,
    report: &mut SelfPlayReport,
) -> anyhow::Result<NetOutput> {
    let total: usize = slots.iter().map(|s| s.pending).sum();
    // A board evaluator answered in the gather (`board_evaluations_time` counted its time).
    let net = match net {
        Leaves::Batched(net) if total > 0 => net,
        Leaves::Boards(_) if total > 0 => {
            report.forwards += 1;
            report.leaves += total;
            return Ok(NetOutput::default());
        }
        _ => return Ok(NetOutput::default()),
    };
    batch_planes.clear();
    for s in slots {
        batch_planes.extend_from_slice(&s.planes);
    }
    let t0 = Instant::now();
    let out = net
        .forward_split(batch_planes, total, n, n)
        .map_err(|e| anyhow::anyhow!("self-play forward ({}): {e}", net.backend().name()))?;
    report.forward_time += t0.elapsed();
    report.forwards += 1;
    report.leaves += total;
    Ok(out)
}

/// The board evaluator's time in this step's gather (zero for batched leaves), taken from the
/// slots: each game's leaves were evaluated on the thread that gathered them, so the sum is
/// spread over the `threads` that ran the gather, as the wall time a forward would have taken.
fn board_evaluations_time(slots: &mut [Slot], threads: usize) -> Duration {
    let spent: Duration = slots
        .iter_mut()
        .map(|s| std::mem::take(&mut s.eval_time))
        .sum();
    spent / threads.clamp(1, slots.len().max(1)) as u32
}

/// Step 3: every game (in parallel) backs up its share of the forward.
fn apply_all(
    cfg: &SelfPlayConfig,
    net: Leaves<'_>,
    slots: &mut [Slot],
    output: &NetOutput,
) -> anyhow::Result<()> {
    let mut offsets = Vec::with_capacity(slots.len());
    let mut off = 0;
    for s in slots.iter() {
        offsets.push(off);
        off += s.pending;
    }
    let applied: Result<(), String> =
        slots
            .par_iter_mut()
            .zip(offsets.par_iter())
            .try_for_each(|(s, &o)| {
                if !s.gathered {
                    return Ok(());
                }
                let evals = match net {
                    Leaves::Batched(net) => {
                        let mut evals = vec![Evaluation::default(); s.pending];
                        net.finish(&s.planes, output, o, &mut evals);
                        evals
                    }
                    Leaves::Boards(_) => std::mem::take(&mut s.evals),
                };
                s.search.apply(&evals).map_err(|e| e.to_string())?;
                // Playouts settled in the gather (terminal, proven) count as progress: only
                // a step that backed up nothing at all is a stall.
                s.stalled = s.search.root_visits() == s.before;
                s.advance_gumbel(cfg);
                Ok(())
            });
    applied.map_err(|e| anyhow::anyhow!("search apply: {e}"))
}

/// Plays the searched move of slot `s`; returns true when the game is over.
fn make_move(
    cfg: &SelfPlayConfig,
    s: &mut Slot,
    report: &mut SelfPlayReport,
) -> anyhow::Result<bool> {
    let r = s.search.result();
    let gumbel = s.gumbel.as_ref().filter(|_| r.proven != Some(Proven::Win));
    let (target, chosen) = match gumbel {
        Some(g) => {
            let moves = s.search.root_moves();
            (
                gumbel::policy_target(&moves, r.value),
                Some(g.chosen(&moves, r.value)),
            )
        }
        None => (policy_target(&s.board, &r), None),
    };
    if resigns(cfg, s, r.value) {
        report.resigned += 1;
        return Ok(true);
    }
    let played = play_searched(
        cfg,
        &mut s.board,
        &mut s.record,
        &mut s.rng,
        &r,
        &target,
        chosen,
    )?;
    let Some(over) = played else {
        return Ok(true);
    };
    report.moves += 1;
    if !s.full {
        // A cheap search: the move is played, its target not learned from.
        if let Some(target) = s.record.visits.last_mut() {
            target.clear();
        }
    }
    if over {
        if let Some(c) = s.would_resign {
            let lost = if c == Color::Black { -1 } else { 1 };
            if s.record.outcome != lost {
                report.false_resigns += 1;
            }
        }
        return Ok(true);
    }
    s.search.set_position(&s.board);
    s.start_visits = s.search.root_visits();
    s.stalled = false;
    s.begin_move(cfg);
    Ok(false)
}

/// Plays the move a finished search chose on `board` and appends it, with its policy `target`, to
/// `record`: the first winning move of a proven win, else the move a Gumbel root search `chosen`,
/// else a draw from the target at the ply's temperature (drawn with `rng`). Returns None when
/// there was no move to play (full board, or a result proven before any child was searched: the
/// outcome is set), else whether the game is now over.
pub(crate) fn play_searched(
    cfg: &SelfPlayConfig,
    board: &mut Board,
    record: &mut GameRecord,
    rng: &mut Rng,
    r: &SearchResult,
    target: &[RootCandidate],
    chosen: Option<Pos>,
) -> anyhow::Result<Option<bool>> {
    let mv = if r.proven == Some(Proven::Win) {
        target.first().map_or(r.best, |c| c.mv)
    } else if let Some(mv) = chosen.filter(|&p| p != Pos::NONE) {
        mv
    } else {
        let t = temperature(cfg, record.moves.len());
        let from_target = SearchResult {
            root_children: target.to_vec(),
            ..r.clone()
        };
        engine::mcts::sample(&from_target, t, rng.unit())
    };
    let visits: Vec<(u16, u32)> = target
        .iter()
        .map(|c| (board.dense_index(c.mv) as u16, c.visits))
        .collect();
    if mv == Pos::NONE || visits.is_empty() {
        // Nothing to play: a full board, or a root the tactics proved before expanding it. A
        // proven result is the game's result (labelled a draw, a proven loss taught the value
        // head that a lost position is even).
        let me = if board.side_to_move() == Color::Black {
            1
        } else {
            -1
        };
        record.outcome = match r.proven {
            Some(Proven::Win) => me,
            Some(Proven::Loss) => -me,
            _ => outcome(board),
        };
        return Ok(None);
    }
    board
        .play(mv)
        .map_err(|e| anyhow::anyhow!("self-play chose an illegal move: {e}"))?;
    record.moves.push(board.dense_index(mv) as u16);
    record.visits.push(visits);
    let over = board.winner().is_some() || board.is_full() || board.legal_moves().is_empty();
    if over {
        record.outcome = outcome(board);
    }
    Ok(Some(over))
}

/// Resignation: the side to move is hopeless (root `value` below the threshold) for two of its
/// moves in a row. A no-resign game only notes who would have resigned; true when the game ends.
fn resigns(cfg: &SelfPlayConfig, s: &mut Slot, value: f32) -> bool {
    let me = s.board.side_to_move();
    if value < cfg.resign_threshold {
        s.low[me.index()] += 1;
    } else {
        s.low[me.index()] = 0;
    }
    if s.low[me.index()] < 2 {
        return false;
    }
    if s.no_resign {
        s.would_resign.get_or_insert(me);
        return false;
    }
    s.record.outcome = if me == Color::Black { -1 } else { 1 };
    s.record.resigned = true;
    true
}

/// This move's search is over: its fresh playouts are spent (a Gumbel root search: its halving
/// has chosen), the root is proven, or it stalled.
fn search_done(s: &Slot) -> bool {
    let fresh = s.search.root_visits() - s.start_visits;
    let spent = match &s.gumbel {
        // Sequential halving gives every survivor at least one visit a phase, which can pass
        // the budget by a few; twice the budget is a guard, not a schedule.
        Some(g) => g.done() || fresh >= 2 * s.sims,
        None => fresh >= s.sims,
    };
    s.stalled || spent || s.search.result().proven.is_some()
}

/// The move temperature at `ply`: 1 at the first ply, falling linearly to `temperature_final`
/// over `temperature_moves` plies. (A flat 1 for 8 plies of 11-23-ply 9x9 games replaced a
/// move with half the visits by one with under a fifth in 207 of 256 games: the outcomes that
/// label the values were mostly decided by those draws.)
fn temperature(cfg: &SelfPlayConfig, ply: usize) -> f32 {
    if ply >= cfg.temperature_moves {
        return cfg.temperature_final;
    }
    let f = ply as f32 / cfg.temperature_moves as f32;
    1.0 + (cfg.temperature_final - 1.0) * f
}

/// The policy target of a searched position, as root candidates whose `visits` are the weights.
/// A proven win: its immediate fives, else every move proven to win, weight 1 each. Otherwise
/// the root's visits, all of them (the reused subtree's too: they are visits of the same PUCT
/// over the same position, and counting only this move's share would favour what the earlier
/// search neglected), without the moves proven lost while any other remains. A root the
/// tactics proved lost before expanding it: their defence.
pub fn policy_target(board: &Board, r: &SearchResult) -> Vec<RootCandidate> {
    let me = board.side_to_move();
    if r.proven == Some(Proven::Win) {
        let wins = || {
            r.root_children
                .iter()
                .filter(|c| c.proven == Some(Proven::Win))
        };
        let fives: Vec<&RootCandidate> = wins().filter(|c| board.makes_five(c.mv, me)).collect();
        let chosen: Vec<Pos> = if !fives.is_empty() {
            fives.iter().map(|c| c.mv).collect()
        } else if wins().next().is_some() {
            wins().map(|c| c.mv).collect()
        } else {
            // Proven by tactics before any child was searched: the search's choice.
            vec![r.best]
        };
        return chosen
            .into_iter()
            .filter(|&p| p != Pos::NONE)
            .map(|mv| RootCandidate {
                mv,
                visits: 1,
                prior: 0.0,
                value: 1.0,
                proven: Some(Proven::Win),
                pv: Vec::new(),
            })
            .collect();
    }
    let alive: Vec<RootCandidate> = r
        .root_children
        .iter()
        .filter(|c| c.proven != Some(Proven::Loss))
        .cloned()
        .collect();
    if !alive.is_empty() {
        alive
    } else if r.root_children.is_empty() && r.best != Pos::NONE {
        // Proven lost by the tactics before any child was searched: their defence (the move
        // that delays the loss), so the game goes on and records the winner's forcing line.
        vec![RootCandidate {
            mv: r.best,
            visits: 1,
            prior: 0.0,
            value: -1.0,
            proven: r.proven,
            pv: Vec::new(),
        }]
    } else {
        r.root_children.clone()
    }
}

fn outcome(b: &Board) -> i8 {
    match b.winner() {
        Some(Color::Black) => 1,
        Some(Color::White) => -1,
        None => 0,
    }
}
