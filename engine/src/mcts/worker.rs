//! One search thread's half of a playout batch: select leaves under the tree lock (virtual loss
//! keeps them apart), settle tactics and evaluate outside it, then expand and back up under the
//! lock again. A pool of `batch` boards, one per leaf slot, is never cloned per playout: each
//! board stays where its last playout left it, and the next selection through that slot takes
//! back only the moves past the nodes the two paths share (playouts of one search mostly share
//! their first plies, and replaying the whole path from the root was a fifth of a fast search).
//!
//! Depends on `game`, the `Evaluator` trait and the tree; never on a concrete evaluator.

use super::tactics::{self, Verdict};
use super::tree::{Proven, Puct, State, Tree, edge_of_key, order_key, quantize_prior};
use crate::eval::{Evaluation, Evaluator};
use crate::game::{Board, Cell, Pos};
use crate::tss::VcfMemory;

/// What the worker needs to know besides the tree.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ctx<'a> {
    pub puct: Puct<'a>,
    pub tactics: bool,
    pub vcf_budget: u32,
}

/// The outcome of one gather.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Gathered {
    /// Leaves waiting for `apply`.
    pub leaves: usize,
    /// Playouts finished at once (terminal or proven nodes).
    pub finished: usize,
    /// Selections that met a leaf already pending.
    pub collisions: usize,
}

pub(crate) struct Worker {
    root: Board,
    /// `boards[i]` is at leaf `i` between gather and apply; otherwise where slot `i`'s last
    /// playout left it, on the nodes `at[i]`.
    boards: Vec<Board>,
    /// The nodes from the root (`at[i][0] == 0`) whose moves `boards[i]` has played. Node ids
    /// stay valid while the worker lives: the tree is reset, rebased or pruned only with no
    /// worker alive (`Search::run` makes its own; the step-wise one is dropped first).
    at: Vec<Vec<u32>>,
    paths: Vec<Vec<u32>>,
    /// Leaf `i`'s verdict between `prepare` and `apply`/`cancel` (`Open` otherwise). A
    /// `MustBlock` one means `boards[i]` stands one move past the leaf: the block, played for the
    /// evaluation.
    verdicts: Vec<Verdict>,
    leaves: usize,
    /// Leaves (indices) that go to the evaluator, in leaf order.
    need: Vec<usize>,
    evals: Vec<Evaluation>,
    collided: Vec<u32>,
    collided_len: Vec<usize>,
    scratch: Vec<Pos>,
    kept: Kept,
    /// The leaves' VCF refutations, shared for this search (one position, one rule).
    vcf_memory: VcfMemory,
}

impl Worker {
    pub fn new(root: &Board) -> Worker {
        Worker {
            root: root.clone(),
            boards: Vec::new(),
            at: Vec::new(),
            paths: Vec::new(),
            verdicts: Vec::new(),
            leaves: 0,
            need: Vec::new(),
            evals: Vec::new(),
            collided: Vec::new(),
            collided_len: Vec::new(),
            scratch: Vec::new(),
            kept: Kept::default(),
            vcf_memory: VcfMemory::default(),
        }
    }

    pub fn pending(&self) -> usize {
        self.leaves
    }

    /// Boards that need the evaluator, in the order `apply` expects their evaluations.
    pub fn eval_boards(&self) -> Vec<&Board> {
        self.need.iter().map(|&i| &self.boards[i]).collect()
    }

    pub fn eval_hashes(&self) -> Vec<u64> {
        self.need.iter().map(|&i| self.boards[i].hash()).collect()
    }

    /// Selects up to `n` playouts. Terminal and proven leaves are backed up at once; the others
    /// are left pending (marked, with virtual loss on their path) for `prepare`/`apply`.
    pub fn gather(&mut self, tree: &mut Tree, n: usize, ctx: &Ctx) -> Gathered {
        debug_assert_eq!(self.leaves, 0, "gather with leaves pending");
        self.gather_more(tree, n, ctx, None)
    }

    /// `gather` adding to the leaves already pending (before `prepare`). With `root_edge`
    /// (an index into `tree.edges` of a root edge) every playout goes through that edge and PUCT
    /// selects only below it: the caller runs the root (a Gumbel root search's sequential
    /// halving). The counts returned are this call's.
    pub fn gather_more(
        &mut self,
        tree: &mut Tree,
        n: usize,
        ctx: &Ctx,
        root_edge: Option<usize>,
    ) -> Gathered {
        let first = self.leaves;
        let mut g = Gathered::default();
        self.collided.clear();
        self.collided_len.clear();
        while self.leaves - first + g.finished < n && g.collisions < n.max(1) && !tree.full {
            let slot = self.leaves;
            if self.boards.len() <= slot {
                self.boards.push(self.root.clone());
                self.at.push(vec![0]);
                self.paths.push(Vec::new());
                self.verdicts.push(Verdict::Open);
            }
            let (board, at, path) = (
                &mut self.boards[slot],
                &mut self.at[slot],
                &mut self.paths[slot],
            );
            let outcome = descend(tree, board, at, path, ctx, root_edge);
            match outcome {
                Outcome::Leaf => {
                    self.leaves += 1;
                    continue;
                }
                Outcome::Proven(p) => {
                    tree.backup(path, p.value() as f64);
                    g.finished += 1;
                }
                Outcome::Collision => {
                    // Keep the virtual loss until the gather ends so the next selection looks
                    // elsewhere; then release it.
                    self.collided.extend_from_slice(path);
                    self.collided_len.push(path.len());
                    g.collisions += 1;
                }
                Outcome::Full => tree.revert(path),
            }
        }
        tree.revert(&self.collided);
        g.leaves = self.leaves - first;
        g
    }

    /// Settles the pending leaves by tactics where possible and lists the rest for the
    /// evaluator. A leaf whose side to move must block a five is evaluated after the block: the
    /// four is a tempo, and the position before its answer says little (an evaluator that sees a
    /// five point calls it lost, and the four's maker looked won on its first visit). Needs no
    /// lock: it reads only the worker's own boards.
    pub fn prepare(&mut self, ctx: &Ctx) {
        self.need.clear();
        for i in 0..self.leaves {
            let verdict = if ctx.tactics {
                tactics::verdict(
                    &mut self.boards[i],
                    ctx.vcf_budget,
                    &mut self.vcf_memory,
                    &mut self.scratch,
                )
            } else {
                Verdict::Open
            };
            let is_root = self.paths[i].len() == 1;
            let needs_net = match verdict {
                Verdict::Open | Verdict::MustBlock(_) => true,
                Verdict::Win(_) => false,
                // The root still needs moves to choose from, even lost ones.
                Verdict::Loss => is_root,
            };
            if needs_net {
                self.need.push(i);
            }
            if let Verdict::MustBlock(p) = verdict {
                self.boards[i].play_unchecked(p);
            }
            self.verdicts[i] = verdict;
        }
    }

    /// Runs the evaluator on the leaves that need it (outside the lock).
    pub fn evaluate(&mut self, evaluator: &dyn Evaluator) {
        if self.need.is_empty() {
            self.evals.clear();
            return;
        }
        let mut evals = std::mem::take(&mut self.evals);
        if let [i] = self.need[..] {
            // One leaf (the cheap evaluators' batch): no list to allocate.
            evaluator.evaluate(std::slice::from_ref(&&self.boards[i]), &mut evals);
        } else {
            evaluator.evaluate(&self.eval_boards(), &mut evals);
        }
        self.evals = evals;
    }

    /// Uses evaluations given from outside (the step-wise API) instead of `evaluate`.
    pub fn set_evals(&mut self, evals: &[Evaluation]) {
        self.evals.clear();
        self.evals.extend_from_slice(evals);
    }

    /// Expands the pending leaves with their evaluations and backs the values up; the boards
    /// stay at their leaves (less a block played past one) for the next selection.
    pub fn apply(&mut self, tree: &mut Tree) {
        let mut next_eval = 0;
        for i in 0..self.leaves {
            let node = *self.paths[i].last().unwrap_or(&0);
            let verdict = std::mem::take(&mut self.verdicts[i]);
            let eval = if self.need.get(next_eval) == Some(&i) {
                next_eval += 1;
                self.evals.get(next_eval - 1)
            } else {
                None
            };
            let board = &mut self.boards[i];
            let kept = &mut self.kept;
            let (value, proven) = match &verdict {
                Verdict::Win(moves) => {
                    kept.set_equal(moves);
                    (-1.0, Some(Proven::Loss))
                }
                Verdict::Loss => {
                    kept.set_policy(board, eval);
                    (1.0, Some(Proven::Win))
                }
                Verdict::MustBlock(p) => {
                    kept.set_equal(std::slice::from_ref(p));
                    // Evaluated after the block: its side to move is the leaf's mover.
                    (eval.map_or(0.0, |e| e.value.clamp(-1.0, 1.0)) as f64, None)
                }
                Verdict::Open => {
                    kept.set_policy(board, eval);
                    (-eval.map_or(0.0, |e| e.value.clamp(-1.0, 1.0)) as f64, None)
                }
            };
            let mut proven = proven;
            if kept.moves.is_empty() && proven.is_none() {
                // The evaluator offered nothing playable: fall back to the legal moves, if any.
                board.legal_moves_into(&mut self.scratch);
                if self.scratch.is_empty() {
                    proven = Some(Proven::Draw);
                } else {
                    kept.set_equal(&self.scratch);
                }
            }
            let value = proven.map_or(value, |p| p.value() as f64);
            expand(tree, node, &mut self.kept, proven);
            tree.backup(&self.paths[i], value);
            self.back_to_leaf(i, &verdict);
        }
        self.leaves = 0;
        self.need.clear();
    }

    /// Takes board `i` back from its leaf (and the block played past it, when its verdict was
    /// `MustBlock`) to the root: the leaf's node is `Fresh` again.
    fn return_to_root(&mut self, i: usize, verdict: &Verdict) {
        self.back_to_leaf(i, verdict);
        take_back_to(&mut self.boards[i], &mut self.at[i], 1);
    }

    /// Takes back the block a `MustBlock` verdict played past leaf `i`: `boards[i]` stands on
    /// the leaf again, as `at[i]` says.
    fn back_to_leaf(&mut self, i: usize, verdict: &Verdict) {
        if matches!(verdict, Verdict::MustBlock(_)) {
            self.boards[i].undo();
        }
    }

    /// Drops the pending leaves without backing anything up (position change, abandoned step).
    pub fn cancel(&mut self, tree: &mut Tree) {
        for i in 0..self.leaves {
            let path = &self.paths[i];
            if let Some(&leaf) = path.last()
                && tree.nodes[leaf as usize].state == State::Pending
            {
                tree.nodes[leaf as usize].state = State::Fresh;
            }
            tree.revert(path);
            let verdict = std::mem::take(&mut self.verdicts[i]);
            self.return_to_root(i, &verdict);
        }
        self.leaves = 0;
        self.need.clear();
    }
}

/// Takes `board`'s moves back until it stands on the first `depth` nodes of `at` (1: the root).
fn take_back_to(board: &mut Board, at: &mut Vec<u32>, depth: usize) {
    while at.len() > depth {
        board.undo();
        at.pop();
    }
}

/// One playout's selection: from the root down the tree by PUCT (through `root_edge` at the
/// root when given), marking the path in flight, to a new leaf (left `Pending`), a settled node
/// or a collision. `path` gets the nodes from the root; `board` follows from the nodes `at` it
/// stood on, taking back only the moves past the nodes the two paths share. A leaf's board is
/// brought exactly to it (the five and full-board checks and the evaluator read it there);
/// after any other outcome it may stand further down the last path.
fn descend(
    tree: &mut Tree,
    board: &mut Board,
    at: &mut Vec<u32>,
    path: &mut Vec<u32>,
    ctx: &Ctx,
    root_edge: Option<usize>,
) -> Outcome {
    path.clear();
    let mut node = 0u32;
    tree.nodes[0].in_flight += 1;
    path.push(0);
    loop {
        let nd = tree.nodes[node as usize];
        if let (true, Some(p)) = (node != 0, nd.proven) {
            return Outcome::Proven(p);
        }
        match nd.state {
            State::Fresh => {
                take_back_to(board, at, path.len());
                // Game over here? The five (or the full board) settles the node for good.
                let settled = if board.move_count() > 0 && board.winner().is_some() {
                    Some(Proven::Win)
                } else if board.is_full() {
                    Some(Proven::Draw)
                } else {
                    None
                };
                let n = &mut tree.nodes[node as usize];
                return match settled {
                    Some(p) => {
                        n.proven = Some(p);
                        n.state = State::Expanded;
                        Outcome::Proven(p)
                    }
                    None => {
                        n.state = State::Pending;
                        Outcome::Leaf
                    }
                };
            }
            State::Pending => return Outcome::Collision,
            State::Expanded => {
                if nd.n_edges == 0 {
                    // Only a root can be here unproven (nothing to play): score it a draw.
                    return Outcome::Proven(nd.proven.unwrap_or(Proven::Draw));
                }
                let e = match root_edge {
                    Some(e) if node == 0 => e,
                    _ => tree.select(node, node == 0, &ctx.puct),
                };
                let mv = tree.edges[e].mv;
                let Some(child) = tree.child(e) else {
                    return Outcome::Full;
                };
                // `path` is a prefix of `at`: the board has this move on already when the last
                // playout went this way too.
                if at.get(path.len()) != Some(&child) {
                    take_back_to(board, at, path.len());
                    board.play_unchecked(mv);
                    at.push(child);
                }
                tree.nodes[child as usize].in_flight += 1;
                path.push(child);
                node = child;
            }
        }
    }
}

enum Outcome {
    Leaf,
    /// A settled node: its result for the player who moved into it.
    Proven(Proven),
    Collision,
    Full,
}

/// The moves a new leaf keeps and their weights, before they become edges: structure of arrays,
/// so summing the weights and writing the edges are plain passes over contiguous numbers.
#[derive(Default)]
struct Kept {
    moves: Vec<Pos>,
    weights: Vec<f32>,
    /// What the weights sum to (`expand` divides by it).
    total: f32,
    /// `expand`'s scratch: the new edges as order keys.
    keys: Vec<u32>,
}

impl Kept {
    fn clear(&mut self) {
        self.moves.clear();
        self.weights.clear();
    }

    /// `moves`, equally likely.
    fn set_equal(&mut self, moves: &[Pos]) {
        self.clear();
        self.moves.extend_from_slice(moves);
        self.weights.resize(moves.len(), 1.0);
        self.total = moves.len() as f32;
    }

    /// The playable moves of an evaluation's policy, in board order (nothing without an
    /// evaluation, or when their probabilities do not sum to a positive number). Occupied points
    /// and (renju) black's forbidden points are dropped whatever the evaluator said.
    fn set_policy(&mut self, board: &mut Board, eval: Option<&Evaluation>) {
        self.total = 0.0;
        let Some(Evaluation { policy, .. }) = eval else {
            self.clear();
            return;
        };
        let (w, h) = (board.width(), board.height());
        let cells = policy.len().min(w * h);
        if board.side_has_forbidden_points() {
            self.clear();
            // Rows and columns by counters: no division per point.
            for (y, row) in policy[..cells].chunks(w).enumerate() {
                for (x, &p) in row.iter().enumerate() {
                    // `p > 0` is false for NaN too: a broken evaluator cannot smuggle a NaN
                    // prior in.
                    if p > 0.0 {
                        let pos = Pos::new(x, y);
                        if board.is_empty(pos) && !board.is_forbidden_mut(pos) {
                            self.moves.push(pos);
                            self.weights.push(p);
                        }
                    }
                }
            }
        } else {
            // No forbidden points: every point is written and kept by moving the end, so stones
            // scattered over the board cost no mispredicted branch. (The buffers keep their last
            // length: growing them fills only the difference.)
            self.moves.resize(cells, Pos::NONE);
            self.weights.resize(cells, 0.0);
            let (moves, weights) = (&mut self.moves[..cells], &mut self.weights[..cells]);
            let mut n = 0;
            for (y, row) in policy[..cells].chunks(w).enumerate() {
                let row_cells = board.row_cells(y);
                for (x, (&p, &c)) in row.iter().zip(row_cells).enumerate() {
                    let pos = Pos::new(x, y);
                    let keep = (p > 0.0) & (c == Cell::Empty);
                    // `n` never passes the point being read: the writes stay in bounds.
                    moves[n] = pos;
                    weights[n] = p;
                    n += keep as usize;
                }
            }
            self.moves.truncate(n);
            self.weights.truncate(n);
        }
        // Eight partial sums, not one chain of ~200 dependent additions (whole chunks apart
        // from the rest, so the eight stay in registers).
        let mut lanes = [0.0f32; 8];
        let chunks = self.weights.chunks_exact(8);
        let rest = chunks.remainder();
        for chunk in chunks {
            for (l, &p) in lanes.iter_mut().zip(chunk) {
                *l += p;
            }
        }
        for (l, &p) in lanes.iter_mut().zip(rest) {
            *l += p;
        }
        let sum: f32 = lanes.iter().sum();
        if sum > 0.0 && sum.is_finite() {
            self.total = sum;
        } else {
            self.clear();
        }
    }
}

/// Gives `node` its edges, the kept weights over their total as priors (unless the budget
/// refuses: it then stays unexpanded and only its value counts), and its proven value.
fn expand(tree: &mut Tree, node: u32, kept: &mut Kept, proven: Option<Proven>) {
    let n = &mut tree.nodes[node as usize];
    if proven.is_some() {
        n.proven = proven;
    }
    if n.state == State::Expanded {
        return;
    }
    let len = kept.moves.len();
    if !tree.reserve(0, len) {
        tree.nodes[node as usize].state = State::Fresh;
        return;
    }
    let first = tree.edges.len() as u32;
    let total = kept.total;
    // The edges in selection order, sorted as bare integers (their order keys, which hold the
    // prior and the point) and rebuilt from them: sorting ~200 eight-byte edges by a computed
    // key cost 8% of a pattern-network search, the integers sort in a fraction of that.
    let keys = &mut kept.keys;
    keys.clear();
    keys.extend(
        kept.moves
            .iter()
            .zip(&kept.weights)
            .map(|(&mv, &p)| order_key(mv, quantize_prior(p / total))),
    );
    if !keys.is_sorted() {
        keys.sort_unstable();
    }
    tree.edges.extend(keys.iter().map(|&k| edge_of_key(k)));
    let n = &mut tree.nodes[node as usize];
    n.first_edge = first;
    n.n_edges = len as u16;
    n.state = State::Expanded;
}
