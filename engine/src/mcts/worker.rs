//! One search thread's half of a playout batch: select leaves under the tree lock (virtual loss
//! keeps them apart), settle tactics and evaluate outside it, then expand and back up under the
//! lock again. Boards are made and unmade down each path; a pool of `batch` boards stays at the
//! root between batches, so nothing is cloned per playout.
//!
//! Depends on `game`, the `Evaluator` trait and the tree; never on a concrete evaluator.

use super::tactics::{self, Verdict};
use super::tree::{Edge, NO_NODE, Puct, State, Tree, UNPROVEN, quantize_prior};
use crate::eval::{Evaluation, Evaluator};
use crate::game::{Board, Pos};

/// What the worker needs to know besides the tree.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ctx {
    pub puct: Puct,
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
    /// `boards[i]` is at leaf `i` between gather and apply, at the root otherwise.
    boards: Vec<Board>,
    paths: Vec<Vec<u32>>,
    verdicts: Vec<Verdict>,
    leaves: usize,
    /// Leaves (indices) that go to the evaluator, in leaf order.
    need: Vec<usize>,
    evals: Vec<Evaluation>,
    collided: Vec<u32>,
    collided_len: Vec<usize>,
    scratch: Vec<Pos>,
    kept: Vec<(Pos, f32)>,
}

impl Worker {
    pub fn new(root: &Board) -> Worker {
        Worker {
            root: root.clone(),
            boards: Vec::new(),
            paths: Vec::new(),
            verdicts: Vec::new(),
            leaves: 0,
            need: Vec::new(),
            evals: Vec::new(),
            collided: Vec::new(),
            collided_len: Vec::new(),
            scratch: Vec::new(),
            kept: Vec::new(),
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
        let mut g = Gathered::default();
        self.collided.clear();
        self.collided_len.clear();
        while self.leaves + g.finished < n && g.collisions < n.max(1) && !tree.full {
            let slot = self.leaves;
            if self.boards.len() <= slot {
                self.boards.push(self.root.clone());
                self.paths.push(Vec::new());
                self.verdicts.push(Verdict::Open);
            }
            let board = &mut self.boards[slot];
            let path = &mut self.paths[slot];
            path.clear();
            let mut node = 0u32;
            tree.nodes[0].in_flight += 1;
            path.push(0);
            let outcome = loop {
                let nd = tree.nodes[node as usize];
                if node != 0 && nd.is_proven() {
                    break Outcome::Proven(nd.proven);
                }
                match nd.state {
                    State::Fresh => {
                        // Game over here? The five (or the full board) settles the node for good.
                        if board.move_count() > 0 && board.winner().is_some() {
                            let n = &mut tree.nodes[node as usize];
                            n.proven = 1;
                            n.state = State::Expanded;
                            break Outcome::Proven(1);
                        }
                        if board.is_full() {
                            let n = &mut tree.nodes[node as usize];
                            n.proven = 0;
                            n.state = State::Expanded;
                            break Outcome::Proven(0);
                        }
                        tree.nodes[node as usize].state = State::Pending;
                        break Outcome::Leaf;
                    }
                    State::Pending => break Outcome::Collision,
                    State::Expanded => {
                        if nd.n_edges == 0 {
                            // Only a root can be here unproven (nothing to play): score it a draw.
                            break Outcome::Proven(if nd.is_proven() { nd.proven } else { 0 });
                        }
                        let e = tree.select(node, node == 0, &ctx.puct);
                        let mv = tree.edges[e].mv;
                        let Some(child) = tree.child(e) else {
                            break Outcome::Full;
                        };
                        board.play_unchecked(mv);
                        tree.nodes[child as usize].in_flight += 1;
                        path.push(child);
                        node = child;
                    }
                }
            };
            match outcome {
                Outcome::Leaf => {
                    self.leaves += 1;
                    continue;
                }
                Outcome::Proven(v) => {
                    tree.backup(path, v as f64);
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
            for _ in 1..path.len() {
                board.undo();
            }
        }
        tree.revert(&self.collided);
        g.leaves = self.leaves;
        g
    }

    /// Settles the pending leaves by tactics where possible and lists the rest for the
    /// evaluator. Needs no lock: it reads only the worker's own boards.
    pub fn prepare(&mut self, ctx: &Ctx) {
        self.need.clear();
        for i in 0..self.leaves {
            let verdict = if ctx.tactics {
                tactics::verdict(&mut self.boards[i], ctx.vcf_budget, &mut self.scratch)
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
    /// return to the root.
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
            self.kept.clear();
            let (value, proven) = match &verdict {
                Verdict::Win(moves) => {
                    let share = 1.0 / moves.len() as f32;
                    self.kept.extend(moves.iter().map(|&p| (p, share)));
                    (-1.0, -1)
                }
                Verdict::Loss => {
                    if let Some(e) = eval {
                        policy_moves(board, &e.policy, &mut self.kept);
                    }
                    (1.0, 1)
                }
                Verdict::MustBlock(p) => {
                    self.kept.push((*p, 1.0));
                    (
                        -eval.map_or(0.0, |e| e.value.clamp(-1.0, 1.0)) as f64,
                        UNPROVEN,
                    )
                }
                Verdict::Open => {
                    if let Some(e) = eval {
                        policy_moves(board, &e.policy, &mut self.kept);
                    }
                    (
                        -eval.map_or(0.0, |e| e.value.clamp(-1.0, 1.0)) as f64,
                        UNPROVEN,
                    )
                }
            };
            let mut proven = proven;
            if self.kept.is_empty() && proven == UNPROVEN {
                // The evaluator offered nothing playable: fall back to the legal moves, if any.
                let legal = board.legal_moves();
                if legal.is_empty() {
                    proven = 0;
                } else {
                    let share = 1.0 / legal.len() as f32;
                    self.kept.extend(legal.into_iter().map(|p| (p, share)));
                }
            }
            let value = if proven == UNPROVEN {
                value
            } else {
                proven as f64
            };
            expand(tree, node, &self.kept, proven);
            tree.backup(&self.paths[i], value);
            let board = &mut self.boards[i];
            for _ in 1..self.paths[i].len() {
                board.undo();
            }
        }
        self.leaves = 0;
        self.need.clear();
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
            for _ in 1..path.len() {
                self.boards[i].undo();
            }
        }
        self.leaves = 0;
        self.need.clear();
    }
}

enum Outcome {
    Leaf,
    Proven(i8),
    Collision,
    Full,
}

/// The playable moves of a policy, renormalised, in board order. Occupied points and (renju)
/// black's forbidden points are dropped whatever the evaluator said.
fn policy_moves(board: &mut Board, policy: &[f32], out: &mut Vec<(Pos, f32)>) {
    out.clear();
    let (w, h) = (board.width(), board.height());
    let filter = tactics::filters_forbidden(board);
    if filter {
        // Rows and columns by counters: no division per point.
        for (y, row) in policy.chunks(w).take(h).enumerate() {
            for (x, &p) in row.iter().enumerate() {
                // `p > 0` is false for NaN too: a broken evaluator cannot smuggle a NaN prior in.
                if p > 0.0 {
                    let pos = Pos::new(x, y);
                    if board.is_empty(pos) && !board.is_forbidden_mut(pos) {
                        out.push((pos, p));
                    }
                }
            }
        }
    } else {
        // No forbidden points: every point is written and kept by moving the end, so stones
        // scattered over the board cost no mispredicted branch.
        out.resize(policy.len().min(w * h), (Pos::NONE, 0.0));
        let mut n = 0;
        for (y, row) in policy.chunks(w).take(h).enumerate() {
            for (x, &p) in row.iter().enumerate() {
                let pos = Pos::new(x, y);
                let keep = (p > 0.0) & board.is_empty(pos);
                out[n] = (pos, p);
                n += keep as usize;
            }
        }
        out.truncate(n);
    }
    // Eight partial sums, not one chain of ~200 dependent additions.
    let mut lanes = [0.0f32; 8];
    for chunk in out.chunks(8) {
        for (l, &(_, p)) in lanes.iter_mut().zip(chunk) {
            *l += p;
        }
    }
    let sum: f32 = lanes.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        out.iter_mut().for_each(|(_, p)| *p /= sum);
    } else {
        out.clear();
    }
}

/// Gives `node` its edges (unless the budget refuses: it then stays unexpanded and only its
/// value counts) and its proven value.
fn expand(tree: &mut Tree, node: u32, moves: &[(Pos, f32)], proven: i8) {
    let n = &mut tree.nodes[node as usize];
    if proven != UNPROVEN {
        n.proven = proven;
    }
    if n.state == State::Expanded {
        return;
    }
    if !tree.reserve(0, moves.len()) {
        tree.nodes[node as usize].state = State::Fresh;
        return;
    }
    let first = tree.edges.len() as u32;
    tree.edges.extend(moves.iter().map(|&(mv, p)| Edge {
        mv,
        prior: quantize_prior(p),
        child: NO_NODE,
    }));
    sort_edges(&mut tree.edges[first as usize..]);
    let n = &mut tree.nodes[node as usize];
    n.first_edge = first;
    n.n_edges = moves.len() as u16;
    n.state = State::Expanded;
}

/// Orders edges by prior, largest first, ties by board index: the order selection relies on.
pub(crate) fn sort_edges(edges: &mut [Edge]) {
    // Already ordered (equal priors come in board order) is common: one pass to see it.
    if !edges.is_sorted_by_key(|e| (u16::MAX - e.prior, e.mv)) {
        edges.sort_by_key(|e| (u16::MAX - e.prior, e.mv));
    }
}
