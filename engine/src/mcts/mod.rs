//! Monte-Carlo tree search with priors (PUCT): first-play urgency, virtual loss so each thread
//! evaluates a batch of leaves at once, several threads over one tree, tree reuse between moves,
//! visit/node/time/memory limits, an MCTS-solver for game-theoretic values (fives, forced blocks,
//! and VCF through `tactics`), LCB or max-visits final choice, and root Dirichlet noise plus
//! temperature sampling for self-play. A step-wise API (`gather_leaves` / `apply`) lets one driver
//! batch the leaves of many games into one forward pass. For analysis: the root's moves as
//! `RootCandidate`s ranked like the final choice, each with its PV (`candidates`), and a
//! rate-limited `ProgressHook` called while a run goes on.
//!
//! Files: `tree` (arenas, PUCT, backup, solver), `worker` (a thread's gather/evaluate/apply),
//! `tactics` (settling leaves without the network); root noise from `crate::rng`.
//!
//! Depends on `game`, the `eval::Evaluator` trait and (through `tactics`) `tss`. Never names an
//! inference runtime.

mod tactics;
mod tree;
mod worker;

pub use tree::Proven;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::eval::{Evaluation, Evaluator};
use crate::game::{Board, Pos};
use crate::rng::Rng;
use tree::{NO_NODE, Puct, State, Tree};
use worker::{Ctx, Worker};

/// How the move is chosen from the root's children when the search ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FinalChoice {
    /// The most visited child.
    MaxVisits,
    /// The child with the best lower confidence bound on its value among well-visited children.
    #[default]
    Lcb,
}

#[derive(Clone, Debug)]
pub struct MctsConfig {
    /// Search threads sharing the tree.
    pub threads: usize,
    /// Leaves one thread gathers per evaluator call; 0 = the evaluator's preferred batch.
    pub batch_size: usize,
    /// Exploration: c(N) = c_init + ln((N + c_base + 1) / c_base).
    pub c_puct_init: f32,
    pub c_puct_base: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this times
    /// the square root of the prior mass already visited.
    pub fpu_reduction: f32,
    pub fpu_reduction_root: f32,
    /// Value counted as lost per selection in flight.
    pub virtual_loss: f32,
    /// Settle fives, forced blocks and (with `tss`) VCFs at the root and new leaves.
    pub tactics: bool,
    /// Node budget for the VCF search at each leaf (0 = none).
    pub vcf_budget: u32,
    /// Bytes the tree may hold; when spent, the search stops growing and returns.
    pub max_memory: usize,
    pub final_choice: FinalChoice,
    /// Root Dirichlet noise for self-play: alpha (0 = off) and mixing weight.
    pub dirichlet_alpha: f32,
    pub dirichlet_epsilon: f32,
    /// Seed of the noise and move sampling.
    pub seed: u64,
    /// Keep the subtree of the new position when it extends the previous one.
    pub reuse_tree: bool,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            threads: 1,
            batch_size: 0,
            c_puct_init: 1.25,
            c_puct_base: 19652.0,
            fpu_reduction: 0.25,
            fpu_reduction_root: 0.0,
            virtual_loss: 1.0,
            tactics: false,
            vcf_budget: 0,
            max_memory: 256 << 20,
            final_choice: FinalChoice::Lcb,
            dirichlet_alpha: 0.0,
            dirichlet_epsilon: 0.25,
            seed: 0,
            reuse_tree: true,
        }
    }
}

impl MctsConfig {
    /// The tree's share of a whole-engine memory limit (e.g. the protocol's `max_memory`): what
    /// is left after the boards, the evaluator and the process itself (a fixed 64 MiB reserve).
    pub fn tree_bytes_for_engine_limit(engine_bytes: usize) -> usize {
        engine_bytes.saturating_sub(64 << 20).max(8 << 20)
    }
}

/// When to stop. All limits apply together; the first one reached ends the search.
#[derive(Clone, Debug)]
pub struct SearchLimits {
    /// Playouts this run may add (u64::MAX = no limit).
    pub max_visits: u64,
    /// Tree nodes the search may hold (usize::MAX = only the memory budget).
    pub max_nodes: usize,
    pub deadline: Option<Instant>,
    /// Set from another thread to stop at the next batch.
    pub stop: Arc<AtomicBool>,
    /// Called with the search's state every so often while it runs (analysis front ends).
    pub progress: Option<ProgressHook>,
}

/// The search's state in the middle of a run, for realtime analysis output.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressReport {
    /// Since the run started.
    pub elapsed: Duration,
    /// Playouts added by this run so far.
    pub playouts: u64,
    pub nodes: usize,
    /// What the final choice would be now (`Pos::NONE` before the root is expanded).
    pub best: Pos,
    /// Its value for the side to move at the root.
    pub value: f32,
    pub pv: Vec<Pos>,
    /// Root moves proven to lose.
    pub losing: Vec<Pos>,
    /// The `ProgressHook::candidates` best root moves, ranked as `Search::candidates` ranks them.
    pub candidates: Vec<RootCandidate>,
}

/// A progress callback and how often to call it. It runs on a search thread (outside the tree
/// lock), so it must be quick: format and send, nothing more.
#[derive(Clone)]
pub struct ProgressHook {
    pub every: Duration,
    /// How many ranked root moves each report carries (0: none; a live analysis board wants a
    /// few, a protocol line only the best).
    pub candidates: usize,
    pub report: Arc<dyn Fn(&ProgressReport) + Send + Sync>,
}

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ProgressHook(every {:?})", self.every)
    }
}

impl Default for SearchLimits {
    fn default() -> Self {
        SearchLimits {
            max_visits: u64::MAX,
            max_nodes: usize::MAX,
            deadline: None,
            stop: Arc::new(AtomicBool::new(false)),
            progress: None,
        }
    }
}

impl SearchLimits {
    pub fn visits(n: u64) -> SearchLimits {
        SearchLimits {
            max_visits: n,
            ..Default::default()
        }
    }
    pub fn time(d: Duration) -> SearchLimits {
        SearchLimits {
            deadline: Some(Instant::now() + d),
            ..Default::default()
        }
    }
}

/// One move of the root as the search sees it (the side to move at the root plays it).
#[derive(Clone, Debug, PartialEq)]
pub struct RootCandidate {
    pub mv: Pos,
    pub visits: u32,
    /// The evaluator's prior for the move.
    pub prior: f32,
    /// Mean backed-up value for the side to move at the root, in [-1, 1] (0 when unvisited).
    pub value: f32,
    /// The game-theoretic result of playing it, when the tree has proven one.
    pub proven: Option<Proven>,
    /// The expected line, this move first: below it, a winning child when one is proven, else
    /// the most visited. Filled only by `Search::candidates`.
    pub pv: Vec<Pos>,
}

impl RootCandidate {
    /// The value, or the proven result's value when there is one.
    pub fn score(&self) -> f32 {
        self.proven.map_or(self.value, Proven::value)
    }
}

/// The chance of winning that a value in [-1, 1] stands for (a draw counted as half).
pub fn win_rate(value: f32) -> f32 {
    ((value + 1.0) * 0.5).clamp(0.0, 1.0)
}

/// The longest principal variation reported (moves).
const MAX_PV: usize = 64;

#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The chosen move (`Pos::NONE` when the game is over at the root).
    pub best: Pos,
    /// Visits of the root (including reused ones).
    pub visits: u64,
    /// Playouts added by this run.
    pub playouts: u64,
    /// Expected outcome for the side to move, in [-1, 1].
    pub value: f32,
    pub pv: Vec<Pos>,
    /// Every visited root move (without PVs), most visited first, ties by board order.
    pub root_children: Vec<RootCandidate>,
    /// Nodes in the tree.
    pub nodes: usize,
    pub proven: Option<Proven>,
    pub elapsed: Duration,
}

/// A leaf waiting for an evaluation in the step-wise API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafRequest {
    /// Position in `pending_boards()` and in the slice `apply` expects.
    pub index: usize,
    /// Zobrist hash of the leaf position.
    pub hash: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MctsError {
    #[error("apply got {got} evaluations for {expected} pending leaves")]
    EvalCount { expected: usize, got: usize },
    #[error("evaluation {index} has a policy of {got} entries, the board has {expected} points")]
    PolicyLen {
        index: usize,
        expected: usize,
        got: usize,
    },
}

/// What the threads share under the lock.
struct Shared {
    tree: Tree,
    /// Playouts started in the current run.
    started: u64,
    stopped: bool,
    noise_done: bool,
    /// Root moves the current position's search is to be restricted to, until the root is
    /// expanded and restricted (`maybe_restrict_root`).
    pending_restriction: Option<Vec<Pos>>,
    rng: Rng,
    /// When the current run started, and when its next progress report is due.
    run_started: Instant,
    report_due: Instant,
}

pub struct Search {
    config: MctsConfig,
    evaluator: Arc<dyn Evaluator>,
    shared: Mutex<Shared>,
    root: Board,
    stepper: Option<Worker>,
    /// Wall time of recent evaluation batches (ns, moving average; 0 = none seen yet with this
    /// evaluator). A batch is not started when it would end past the deadline: with a slow
    /// network (a `medium` model on one CPU core takes hundreds of ms per batch) starting one
    /// just before the deadline is what makes an engine late.
    eval_ns: AtomicU64,
    /// PUCT exploration factors for small visit counts, from the configuration.
    explore_small: Box<[f32]>,
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panicking search thread must not wedge the engine: the tree stays usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Search {
    /// A search at the empty 15x15 freestyle board; call `set_position` before `run`.
    pub fn new(config: MctsConfig, evaluator: Arc<dyn Evaluator>) -> Search {
        let root = match Board::new(15, 15, crate::game::Rule::Freestyle) {
            Ok(b) => b,
            Err(e) => unreachable!("15x15 is a supported size: {e}"),
        };
        let shared = Shared {
            tree: Tree::new(config.max_memory),
            started: 0,
            stopped: false,
            noise_done: false,
            pending_restriction: None,
            rng: Rng::new(config.seed),
            run_started: Instant::now(),
            report_due: Instant::now(),
        };
        let explore_small = tree::explore_table(config.c_puct_init, config.c_puct_base);
        Search {
            config,
            evaluator,
            shared: Mutex::new(shared),
            root,
            stepper: None,
            eval_ns: AtomicU64::new(0),
            explore_small,
        }
    }

    pub fn config(&self) -> &MctsConfig {
        &self.config
    }

    /// Replaces the evaluator (a model swap between moves). The tree is dropped: its priors and
    /// values came from the old one.
    pub fn set_evaluator(&mut self, evaluator: Arc<dyn Evaluator>) {
        if evaluator.model_id() != self.evaluator.model_id()
            || evaluator.name() != self.evaluator.name()
        {
            self.cancel_pending();
            let s = self.shared.get_mut().unwrap_or_else(|e| e.into_inner());
            s.tree.reset();
            s.noise_done = false;
            self.eval_ns.store(0, Ordering::Relaxed);
        }
        self.evaluator = evaluator;
    }

    pub fn evaluator(&self) -> &Arc<dyn Evaluator> {
        &self.evaluator
    }

    pub fn root_board(&self) -> &Board {
        &self.root
    }

    /// Sets the position to search. When it extends the previous one (same board and rule, the
    /// old moves first) and tree reuse is on, the subtree already searched is kept.
    /// Leaves the current position's search without root noise (self-play's cheap searches of
    /// playout-cap randomization); the next `set_position` turns noise back on.
    pub fn skip_root_noise(&mut self) {
        lock(&self.shared).noise_done = true;
    }

    /// Restricts the current position's search to `moves` (the engine's forced defences: the
    /// only moves its threat search does not prove lost), from the moment the root has its
    /// edges: the others are never searched, chosen or reported, and what they had from a reused
    /// tree is taken out of the root's value. Root moves not among `moves` stay out for as long
    /// as this root is searched, a repeated `set_position` of the same position included; a new
    /// position starts unrestricted. Ignored when no root move is among `moves`.
    pub fn restrict_root(&mut self, moves: &[Pos]) {
        let s = self.shared.get_mut().unwrap_or_else(|e| e.into_inner());
        s.pending_restriction = Some(moves.to_vec());
        maybe_restrict_root(s);
    }

    pub fn set_position(&mut self, board: &Board) {
        self.cancel_pending();
        let reused = self.config.reuse_tree && self.try_reuse(board);
        let s = self.shared.get_mut().unwrap_or_else(|e| e.into_inner());
        s.pending_restriction = None;
        if !reused {
            s.tree.reset();
            s.noise_done = false;
        }
        let root = &mut s.tree.nodes[0];
        if root.state == State::Expanded
            && root.n_edges == 0
            && board.winner().is_none()
            && !board.is_full()
        {
            // Settled by tactics as a child (no moves kept); as the root it needs its moves.
            root.state = State::Fresh;
            root.proven = None;
        }
        self.root = board.clone();
    }

    fn try_reuse(&mut self, board: &Board) -> bool {
        let old = &self.root;
        if old.width() != board.width()
            || old.height() != board.height()
            || old.rule() != board.rule()
        {
            return false;
        }
        let (old_h, new_h) = (old.history(), board.history());
        if new_h.len() < old_h.len() || new_h[..old_h.len()] != *old_h {
            return false;
        }
        let s = self.shared.get_mut().unwrap_or_else(|e| e.into_inner());
        let tree = &mut s.tree;
        let mut node = 0u32;
        let mut side = old.side_to_move();
        for &(p, c) in &new_h[old_h.len()..] {
            // The tree alternates colours; a set-up stone out of turn cannot be followed.
            if c != side || tree.nodes[node as usize].state != State::Expanded {
                return false;
            }
            let Some(e) = tree.edges_of(node).iter().find(|e| e.mv == p) else {
                return false;
            };
            if e.child == NO_NODE {
                return false;
            }
            node = e.child;
            side = side.opp();
        }
        if node != 0 {
            tree.rebase(node);
            s.noise_done = false;
        }
        true
    }

    fn batch_size(&self) -> usize {
        let b = if self.config.batch_size == 0 {
            self.evaluator.preferred_batch()
        } else {
            self.config.batch_size
        };
        b.clamp(1, 4096)
    }

    /// Searches until a limit is reached, then reports.
    pub fn run(&mut self, limits: &SearchLimits) -> SearchResult {
        let start = Instant::now();
        self.cancel_pending();
        {
            let s = self.shared.get_mut().unwrap_or_else(|e| e.into_inner());
            s.started = 0;
            s.stopped = false;
            s.run_started = start;
            s.report_due = start + limits.progress.as_ref().map_or(Duration::ZERO, |h| h.every);
        }
        let threads = self.config.threads.max(1);
        let batch = self.batch_size();
        let ctx = ctx_of(&self.config, &self.explore_small);
        loop {
            let this = &*self;
            if threads == 1 {
                let mut w = Worker::new(&this.root);
                this.work(&mut w, limits, batch, &ctx, false);
            } else {
                std::thread::scope(|scope| {
                    for _ in 0..threads {
                        scope.spawn(|| {
                            let mut w = Worker::new(&this.root);
                            this.work(&mut w, limits, batch, &ctx, true);
                        });
                    }
                });
            }
            // A full tree is no reason to stop while time and visits remain: with every thread
            // back (nothing in flight), fold up the least visited part and go on.
            let next_batch = Duration::from_nanos(self.eval_ns.load(Ordering::Relaxed));
            let s = self.shared.get_mut().unwrap_or_else(|e| e.into_inner());
            if !s.tree.full || Self::limit_reached(s, limits, next_batch) || !s.tree.prune() {
                break;
            }
            s.stopped = false;
        }
        let mut r = self.result();
        r.playouts = lock(&self.shared).started;
        r.elapsed = start.elapsed();
        r
    }

    fn should_stop(s: &Shared, limits: &SearchLimits, next_batch: Duration) -> bool {
        s.stopped || s.tree.full || Self::limit_reached(s, limits, next_batch)
    }

    /// A limit of the run (not the tree's memory) is reached.
    fn limit_reached(s: &Shared, limits: &SearchLimits, next_batch: Duration) -> bool {
        let root = s.tree.root();
        s.started >= limits.max_visits
            || s.tree.nodes.len() >= limits.max_nodes
            || (root.is_proven() && root.state == State::Expanded)
            || limits.stop.load(Ordering::Relaxed)
            || limits
                .deadline
                .is_some_and(|d| Instant::now() + next_batch >= d)
    }

    fn work(
        &self,
        w: &mut Worker,
        limits: &SearchLimits,
        batch: usize,
        ctx: &Ctx,
        shared_tree: bool,
    ) {
        loop {
            let (gathered, report) = {
                let mut s = lock(&self.shared);
                let next_batch = Duration::from_nanos(self.eval_ns.load(Ordering::Relaxed));
                if Self::should_stop(&s, limits, next_batch) {
                    s.stopped = true;
                    break;
                }
                let report = limits
                    .progress
                    .as_ref()
                    .and_then(|h| progress_due(&mut s, h, &self.config));
                maybe_restrict_root(&mut s);
                maybe_noise(&self.config, &mut s);
                let n = (batch as u64).min(limits.max_visits - s.started) as usize;
                let g = w.gather(&mut s.tree, n, ctx);
                s.started += (g.leaves + g.finished) as u64;
                (g, report)
            };
            if let (Some(r), Some(h)) = (report, &limits.progress) {
                (h.report)(&r);
            }
            if gathered.leaves == 0 {
                if gathered.finished == 0 && shared_tree {
                    // Every selection met another thread's pending leaf: let it finish.
                    std::thread::sleep(Duration::from_micros(50));
                }
                continue;
            }
            w.prepare(ctx);
            // Batch times matter only against a deadline (and reading the clock twice per
            // playout is a measurable share of a cheap evaluator's search).
            let t = limits.deadline.map(|_| Instant::now());
            w.evaluate(self.evaluator.as_ref());
            if let Some(t) = t {
                self.note_eval_time(t.elapsed());
            }
            let mut s = lock(&self.shared);
            w.apply(&mut s.tree);
        }
    }

    /// Folds one batch's evaluation time into the moving average (3/4 old, 1/4 new).
    fn note_eval_time(&self, took: Duration) {
        let new = took.as_nanos().min(u64::MAX as u128) as u64;
        let old = self.eval_ns.load(Ordering::Relaxed);
        let avg = if old == 0 {
            new
        } else {
            (old / 4) * 3 + new / 4
        };
        self.eval_ns.store(avg.max(1), Ordering::Relaxed);
    }

    // ---- step-wise API: one driver batches the leaves of many searches -------------------

    /// Selects up to `n` playouts and returns the leaves that need an evaluation (their boards
    /// are `pending_boards()`, same order). Leaves settled without the network (terminal,
    /// proven, tactics) are resolved in `apply`, which must follow every call, even when the
    /// returned list is empty.
    pub fn gather_leaves(&mut self, n: usize) -> Vec<LeafRequest> {
        self.gather_with(|w, tree, ctx| {
            w.gather(tree, n, ctx);
        })
    }

    /// `gather_leaves` with the root's choices made by the caller: `plan` lists root moves and
    /// how many playouts to start through each; PUCT selects below them. This is how a Gumbel
    /// root search (sequential halving, run by self-play) spends its simulations. A root not
    /// expanded yet gets its own evaluation instead, and a move that is not one of the root's
    /// edges is skipped. `apply` must follow, as after `gather_leaves`.
    pub fn gather_leaves_through(&mut self, plan: &[(Pos, usize)]) -> Vec<LeafRequest> {
        self.gather_with(|w, tree, ctx| {
            if tree.root().state != State::Expanded {
                w.gather(tree, 1, ctx);
                return;
            }
            let first = tree.root().first_edge as usize;
            for &(mv, n) in plan {
                if let Some(i) = tree.edges_of(0).iter().position(|e| e.mv == mv) {
                    w.gather_more(tree, n, ctx, Some(first + i));
                }
            }
        })
    }

    /// Runs `gather` on the step-wise worker (unless leaves are still pending) and lists the
    /// leaves for the evaluator.
    fn gather_with(
        &mut self,
        gather: impl FnOnce(&mut Worker, &mut Tree, &Ctx),
    ) -> Vec<LeafRequest> {
        let ctx = ctx_of(&self.config, &self.explore_small);
        let mut w = match self.stepper.take() {
            Some(w) => w,
            None => Worker::new(&self.root),
        };
        if w.pending() == 0 {
            let s = self.shared.get_mut().unwrap_or_else(|e| e.into_inner());
            maybe_restrict_root(s);
            maybe_noise(&self.config, s);
            gather(&mut w, &mut s.tree, &ctx);
            w.prepare(&ctx);
        }
        let reqs = w
            .eval_hashes()
            .into_iter()
            .enumerate()
            .map(|(index, hash)| LeafRequest { index, hash })
            .collect();
        self.stepper = Some(w);
        reqs
    }

    /// The boards of the leaves returned by the last `gather_leaves`, in request order.
    pub fn pending_boards(&self) -> Vec<&Board> {
        self.stepper
            .as_ref()
            .map(|w| w.eval_boards())
            .unwrap_or_default()
    }

    /// Expands and backs up the gathered leaves with `evals` (one per request, in order).
    ///
    /// # Errors
    /// A count or policy-length mismatch; the leaves stay pending then.
    pub fn apply(&mut self, evals: &[Evaluation]) -> Result<(), MctsError> {
        let Some(mut w) = self.stepper.take() else {
            return if evals.is_empty() {
                Ok(())
            } else {
                Err(MctsError::EvalCount {
                    expected: 0,
                    got: evals.len(),
                })
            };
        };
        let boards = w.eval_boards();
        let result = if boards.len() != evals.len() {
            Err(MctsError::EvalCount {
                expected: boards.len(),
                got: evals.len(),
            })
        } else if let Some((index, (b, e))) = boards
            .iter()
            .zip(evals)
            .enumerate()
            .find(|(_, (b, e))| e.policy.len() != b.width() * b.height())
        {
            Err(MctsError::PolicyLen {
                index,
                expected: b.width() * b.height(),
                got: e.policy.len(),
            })
        } else {
            Ok(())
        };
        drop(boards);
        if result.is_ok() {
            w.set_evals(evals);
            let s = self.shared.get_mut().unwrap_or_else(|e| e.into_inner());
            w.apply(&mut s.tree);
        }
        self.stepper = Some(w);
        result
    }

    /// Releases leaves gathered but never applied.
    fn cancel_pending(&mut self) {
        if let Some(mut w) = self.stepper.take() {
            let s = self.shared.get_mut().unwrap_or_else(|e| e.into_inner());
            w.cancel(&mut s.tree);
        }
    }

    // ---- results ----------------------------------------------------------------------

    /// Every root move with its prior, visits, value (the mover's view) and proven result, in
    /// edge order (prior descending), without principal variations: cheap enough to read after
    /// every step. Empty before the root is expanded.
    pub fn root_moves(&self) -> Vec<RootCandidate> {
        root_candidates(&lock(&self.shared).tree)
    }

    /// Root visits so far.
    pub fn root_visits(&self) -> u64 {
        lock(&self.shared).tree.root().visits as u64
    }

    /// Nodes in the tree.
    pub fn nodes(&self) -> usize {
        lock(&self.shared).tree.nodes.len()
    }

    /// Bytes the tree holds (capacity).
    pub fn tree_bytes(&self) -> usize {
        lock(&self.shared).tree.bytes()
    }

    /// The search's current answer.
    pub fn result(&self) -> SearchResult {
        let s = lock(&self.shared);
        let tree = &s.tree;
        let root = tree.root();
        let children = root_candidates(tree);
        let best = choose(&children, self.config.final_choice);
        let pv = best.map_or_else(Vec::new, |b| principal_variation(tree, b, children[b].mv));
        let mut root_children: Vec<RootCandidate> =
            children.iter().filter(|c| c.visits > 0).cloned().collect();
        root_children.sort_by(|a, b| b.visits.cmp(&a.visits).then(a.mv.cmp(&b.mv)));
        let proven = root.proven.map(Proven::flip);
        let value = proven.map_or(-root.q() as f32, Proven::value);
        SearchResult {
            best: best.map_or(Pos::NONE, |b| children[b].mv),
            visits: root.visits as u64,
            playouts: s.started,
            value,
            pv,
            root_children,
            nodes: tree.nodes.len(),
            proven,
            elapsed: Duration::ZERO,
        }
    }

    /// The root's moves in the order the final choice ranks them, each with its PV: the move
    /// `result().best` names first, then proven wins, then the others by visits (ties by prior,
    /// then board order), proven losses last. At most `n`.
    pub fn candidates(&self, n: usize) -> Vec<RootCandidate> {
        ranked_candidates(&lock(&self.shared).tree, self.config.final_choice, n)
    }

    /// Samples a root move with probability proportional to visits^(1/temperature) (self-play);
    /// temperature 0 (or no visits) gives the final choice.
    pub fn sample_move(&mut self, temperature: f32) -> Pos {
        let r = self.result();
        let s = self.shared.get_mut().unwrap_or_else(|e| e.into_inner());
        sample(&r, temperature, s.rng.unit())
    }
}

/// The worker's view of the configuration (a free function: borrowing two fields, not the whole
/// search, leaves the step-wise API free to take its stepper and tree).
fn ctx_of<'a>(config: &MctsConfig, explore_small: &'a [f32]) -> Ctx<'a> {
    Ctx {
        puct: Puct {
            c_init: config.c_puct_init,
            c_base: config.c_puct_base,
            fpu_reduction: config.fpu_reduction,
            fpu_reduction_root: config.fpu_reduction_root,
            virtual_loss: config.virtual_loss,
            explore_small,
        },
        tactics: config.tactics,
        vcf_budget: config.vcf_budget,
    }
}

/// The progress report when one is due (and the next one scheduled), read under the lock.
fn progress_due(
    s: &mut Shared,
    hook: &ProgressHook,
    config: &MctsConfig,
) -> Option<ProgressReport> {
    let now = Instant::now();
    if now < s.report_due {
        return None;
    }
    s.report_due = now + hook.every;
    let tree = &s.tree;
    let children = root_candidates(tree);
    let best = choose(&children, config.final_choice);
    Some(ProgressReport {
        elapsed: now - s.run_started,
        playouts: s.started,
        nodes: tree.nodes.len(),
        best: best.map_or(Pos::NONE, |b| children[b].mv),
        value: best.map_or(0.0, |b| children[b].score()),
        pv: best.map_or_else(Vec::new, |b| principal_variation(tree, b, children[b].mv)),
        losing: children
            .iter()
            .filter(|c| c.proven == Some(Proven::Loss))
            .map(|c| c.mv)
            .collect(),
        candidates: ranked_candidates(tree, config.final_choice, hook.candidates),
    })
}

/// The `n` best root moves with their lines: the final choice first, then proven wins, then
/// the rest by visits, proven losses last.
fn ranked_candidates(tree: &Tree, how: FinalChoice, n: usize) -> Vec<RootCandidate> {
    if n == 0 {
        return Vec::new();
    }
    let children = root_candidates(tree);
    let chosen = choose(&children, how);
    let rank = |i: usize| {
        let c = &children[i];
        let class = match (Some(i) == chosen, c.proven) {
            (true, _) => 0,
            (false, Some(Proven::Win)) => 1,
            (false, Some(Proven::Loss)) => 3,
            _ => 2,
        };
        (class, std::cmp::Reverse(c.visits))
    };
    let mut order: Vec<usize> = (0..children.len()).collect();
    // Edges are in (prior descending, board order) order, so a stable sort keeps those ties.
    order.sort_by_key(|&i| rank(i));
    order
        .into_iter()
        .take(n)
        .map(|i| RootCandidate {
            pv: principal_variation(tree, i, children[i].mv),
            ..children[i].clone()
        })
        .collect()
}

/// Applies a pending root restriction once the root has its edges and nothing is in flight
/// through them (every gather calls this first, under the lock, so the first gather after the
/// root's expansion finds it so).
fn maybe_restrict_root(s: &mut Shared) {
    let ready = s.tree.root().state == State::Expanded && s.tree.root().in_flight == 0;
    if let Some(moves) = s.pending_restriction.take_if(|_| ready) {
        s.tree.restrict_root(&moves);
    }
}

/// Mixes Dirichlet noise into the root priors once per position, as soon as it has them.
fn maybe_noise(config: &MctsConfig, s: &mut Shared) {
    if config.dirichlet_alpha <= 0.0 || s.noise_done || s.tree.root().state != State::Expanded {
        return;
    }
    s.noise_done = true;
    let n = s.tree.root().n_edges as usize;
    if n == 0 {
        return;
    }
    let noise = s.rng.dirichlet(config.dirichlet_alpha as f64, n);
    let eps = config.dirichlet_epsilon.clamp(0.0, 1.0);
    let first = s.tree.root().first_edge as usize;
    for (e, x) in s.tree.edges[first..first + n].iter_mut().zip(noise) {
        let p = (1.0 - eps) * e.prior() + eps * x as f32;
        e.prior = tree::quantize_prior(p);
    }
    tree::sort_edges(&mut s.tree.edges[first..first + n]);
    s.tree.root_reordered = true;
}

/// Every move of an expanded root (none otherwise), in edge order (no PVs).
fn root_candidates(tree: &Tree) -> Vec<RootCandidate> {
    if tree.root().state != State::Expanded {
        return Vec::new();
    }
    tree.edges_of(0)
        .iter()
        .map(|e| {
            let (visits, value, proven) = if e.child == NO_NODE {
                (0, 0.0, None)
            } else {
                let c = &tree.nodes[e.child as usize];
                (c.visits, c.q() as f32, c.proven)
            };
            RootCandidate {
                mv: e.mv,
                visits,
                prior: e.prior(),
                value,
                proven,
                pv: Vec::new(),
            }
        })
        .collect()
}

/// The line from root edge `edge` (move `mv`) down the tree: at each node a child proven to win
/// for its mover, else the most visited (the first on ties).
fn principal_variation(tree: &Tree, edge: usize, mv: Pos) -> Vec<Pos> {
    let mut pv = vec![mv];
    let mut node = tree.edges_of(0)[edge].child;
    while node != NO_NODE && tree.nodes[node as usize].state == State::Expanded && pv.len() < MAX_PV
    {
        let mut next: Option<(u32, Pos, u32)> = None;
        for e in tree.edges_of(node) {
            if e.child == NO_NODE {
                continue;
            }
            let c = &tree.nodes[e.child as usize];
            let key = if c.proven == Some(Proven::Win) {
                u32::MAX
            } else {
                c.visits
            };
            if key > 0 && next.is_none_or(|(k, _, _)| key > k) {
                next = Some((key, e.mv, e.child));
            }
        }
        let Some((_, mv, child)) = next else { break };
        pv.push(mv);
        node = child;
    }
    pv
}

/// Final choice among the root's candidates (edge order): a proven win first, never a proven
/// loss while something else remains, then max visits or LCB; ties by edge order.
fn choose(children: &[RootCandidate], how: FinalChoice) -> Option<usize> {
    if children.is_empty() {
        return None;
    }
    if let Some(i) = children.iter().position(|c| c.proven == Some(Proven::Win)) {
        return Some(i);
    }
    let alive: Vec<usize> = (0..children.len())
        .filter(|&i| children[i].proven != Some(Proven::Loss))
        .collect();
    let pool: Vec<usize> = if alive.is_empty() {
        (0..children.len()).collect()
    } else {
        alive
    };
    let max_visits = pool.iter().map(|&i| children[i].visits).max().unwrap_or(0);
    if max_visits == 0 {
        // Nothing searched: the prior decides.
        return pool.iter().copied().reduce(|a, b| {
            if children[b].prior > children[a].prior {
                b
            } else {
                a
            }
        });
    }
    let by_visits = pool.iter().copied().reduce(|a, b| {
        if children[b].visits > children[a].visits {
            b
        } else {
            a
        }
    });
    if how == FinalChoice::MaxVisits {
        return by_visits;
    }
    // LCB with a fixed value spread (0.5) and z = 1.96, among children with at least a tenth of
    // the top visits: a rarely visited child with a lucky mean does not win.
    let floor = (max_visits / 10).max(1);
    let lcb = |i: usize| children[i].value - 1.96 * 0.5 / (children[i].visits as f32).sqrt();
    pool.iter()
        .copied()
        .filter(|&i| children[i].visits >= floor)
        .reduce(|a, b| {
            let (la, lb) = (lcb(a), lcb(b));
            if lb > la || (lb == la && children[b].visits > children[a].visits) {
                b
            } else {
                a
            }
        })
}

/// A move drawn from the visit distribution of `r` at `temperature`, using `u` in [0, 1).
pub fn sample(r: &SearchResult, temperature: f32, u: f64) -> Pos {
    if temperature <= 1e-3 || r.root_children.is_empty() || r.proven == Some(Proven::Win) {
        return r.best;
    }
    let inv = 1.0 / temperature as f64;
    let max = r
        .root_children
        .iter()
        .map(|c| c.visits)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let weights: Vec<f64> = r
        .root_children
        .iter()
        .map(|c| (c.visits as f64 / max).powf(inv))
        .collect();
    let total: f64 = weights.iter().sum();
    let mut x = u * total;
    for (c, w) in r.root_children.iter().zip(&weights) {
        if x < *w {
            return c.mv;
        }
        x -= w;
    }
    r.root_children.last().map_or(r.best, |c| c.mv)
}
