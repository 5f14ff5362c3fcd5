//! The foundation move choice: the classical evaluator's move ranking plus a short, time-bounded
//! alpha-beta look-ahead over the best few moves (win now, block a five, make and answer fours and
//! threes). Stronger search (threat-space proofs, MCTS) lives in its own modules.

use crate::eval::classical::{position_value, scored_moves};
use crate::game::{Board, Pos};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

const WIN: f32 = 1.0;
/// Moves searched at each node (the rest are pruned by the classical ranking).
const WIDTH_ROOT: usize = 12;
const WIDTH_INNER: usize = 7;
const MAX_DEPTH: u32 = 10;
/// Values above this come only from a five found in the tree (heuristics stay below 0.95).
const PROVEN_WIN: f32 = 0.95;

pub struct LookaheadResult {
    pub best: Pos,
    pub value: f32,
    pub depth: u32,
    pub nodes: u64,
}

struct Ctx<'a> {
    nodes: u64,
    hard: Instant,
    stop: &'a AtomicBool,
    aborted: bool,
}

impl Ctx<'_> {
    fn out_of_time(&mut self) -> bool {
        if !self.aborted
            && self.nodes.is_multiple_of(32)
            && (Instant::now() >= self.hard || self.stop.load(Ordering::Relaxed))
        {
            self.aborted = true;
        }
        self.aborted
    }
}

/// Moves worth searching: every move if a five must be made or blocked, else the best `width`.
fn moves_to_search(board: &Board, width: usize) -> Vec<Pos> {
    let scored = scored_moves(board);
    let Some(first) = scored.first() else {
        return Vec::new();
    };
    if first.attack >= 1_000_000.0 {
        return vec![first.pos];
    }
    let blocks: Vec<Pos> = scored
        .iter()
        .filter(|m| m.defence >= 1_000_000.0)
        .map(|m| m.pos)
        .collect();
    if !blocks.is_empty() {
        return blocks;
    }
    scored.iter().take(width).map(|m| m.pos).collect()
}

fn negamax(
    board: &mut Board,
    depth: u32,
    ply: u32,
    mut alpha: f32,
    beta: f32,
    ctx: &mut Ctx,
) -> f32 {
    ctx.nodes += 1;
    if board.winner().is_some() {
        return -(WIN - 0.001 * ply as f32); // the side to move has lost; later losses are better
    }
    if board.is_full() {
        return 0.0;
    }
    if depth == 0 || ctx.out_of_time() {
        return position_value(board);
    }
    let moves = moves_to_search(board, WIDTH_INNER);
    if moves.is_empty() {
        return 0.0;
    }
    let mut best = -2.0f32;
    for p in moves {
        board.play_unchecked(p);
        let v = -negamax(board, depth - 1, ply + 1, -beta, -alpha, ctx);
        board.undo();
        if ctx.aborted {
            return best.max(v);
        }
        best = best.max(v);
        alpha = alpha.max(v);
        if alpha >= beta {
            break;
        }
    }
    best
}

/// Iterative deepening until `soft` has passed after a finished depth, `hard` is reached, or
/// `stop` is raised; only `allowed` moves at the root when given (a forced defence). Always
/// returns a legal move when one exists.
pub fn choose(
    board: &Board,
    soft: Instant,
    hard: Instant,
    stop: &AtomicBool,
    allowed: Option<&[Pos]>,
) -> Option<LookaheadResult> {
    let mut root_moves = match allowed {
        Some(allowed) => {
            let mut moves: Vec<Pos> = moves_to_search(board, usize::MAX)
                .into_iter()
                .filter(|p| allowed.contains(p))
                .collect();
            // Keep every allowed move, best-ranked first.
            let rest: Vec<Pos> = allowed
                .iter()
                .copied()
                .filter(|p| !moves.contains(p))
                .collect();
            moves.extend(rest);
            moves.truncate(WIDTH_ROOT.max(4));
            moves
        }
        None => moves_to_search(board, WIDTH_ROOT),
    };
    let mut result = LookaheadResult {
        best: *root_moves.first()?,
        value: 0.0,
        depth: 0,
        nodes: 0,
    };
    if root_moves.len() == 1 {
        return Some(result);
    }
    let mut scratch = board.clone();
    let mut ctx = Ctx {
        nodes: 0,
        hard,
        stop,
        aborted: false,
    };
    for depth in 1..=MAX_DEPTH {
        let mut best_value = -2.0f32;
        let mut best_move = root_moves[0];
        let mut values = Vec::with_capacity(root_moves.len());
        for &p in &root_moves {
            scratch.play_unchecked(p);
            let v = -negamax(
                &mut scratch,
                depth - 1,
                1,
                -2.0,
                -best_value.max(-2.0),
                &mut ctx,
            );
            scratch.undo();
            if ctx.aborted {
                break;
            }
            values.push((p, v));
            if v > best_value {
                best_value = v;
                best_move = p;
            }
        }
        if ctx.aborted {
            break;
        }
        result = LookaheadResult {
            best: best_move,
            value: best_value,
            depth,
            nodes: ctx.nodes,
        };
        if best_value >= PROVEN_WIN || Instant::now() >= soft {
            break;
        }
        // Search the best move first next time (stable: ties keep the classical order).
        values.sort_by(|a, b| b.1.total_cmp(&a.1));
        root_moves = values.into_iter().map(|(p, _)| p).collect();
    }
    result.nodes = ctx.nodes;
    Some(result)
}
