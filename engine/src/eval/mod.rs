//! Evaluators of positions: for a batch of positions, a prior over moves and a value for the side
//! to move. The search sees only the `Evaluator` trait defined here.
//!
//! - `features` — the one definition of the network's input planes (engine, trainer, exporter).
//! - `classical` — the pattern evaluator: the no-network fallback and a cheap MCTS prior.
//! - `onnx` — ONNX Runtime; the only module that names an inference runtime.

pub mod classical;
pub mod features;
pub mod onnx;
pub mod cache;
pub mod onnx_evaluator;
pub mod slot;

use crate::game::Board;

/// One evaluated position.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evaluation {
    /// Move probabilities indexed by `Board::dense_index` (row-major `y * width + x`): zero on
    /// occupied and forbidden points, summing to 1 over the rest.
    pub policy: Vec<f32>,
    /// Expected outcome for the side to move, in [-1, 1].
    pub value: f32,
}

/// Anything that scores positions: uniform, classical, ONNX, tch (in the trainer), and wrappers
/// (cache, batching queue). Implementations must be callable from several search threads.
pub trait Evaluator: Send + Sync {
    /// A short name for logs and `MESSAGE` lines.
    fn name(&self) -> String;

    /// Evaluates every board of the batch; `out` is resized to `boards.len()` and its policy
    /// buffers are reused when they already have the right length.
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>);

    /// The batch size this evaluator is most efficient at (1 for the cheap ones).
    fn preferred_batch(&self) -> usize {
        1
    }

    /// Identifies the model behind the evaluator, so caches keyed by position hash stay valid
    /// across model swaps.
    fn model_id(&self) -> u64 {
        0
    }
}

/// Resizes `out` to `n` entries with policy buffers of `cells` zeros.
pub fn prepare(out: &mut Vec<Evaluation>, n: usize, cells: usize) {
    out.resize_with(n, Evaluation::default);
    for e in out.iter_mut() {
        e.policy.clear();
        e.policy.resize(cells, 0.0);
        e.value = 0.0;
    }
}

/// Every legal move equally likely, value 0: the null evaluator (tree-speed benches, tests).
#[derive(Debug, Default, Clone, Copy)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn name(&self) -> String {
        "uniform".into()
    }
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        out.resize_with(boards.len(), Evaluation::default);
        for (board, e) in boards.iter().zip(out.iter_mut()) {
            e.policy.clear();
            e.policy.resize(board.width() * board.height(), 0.0);
            let legal = board.legal_moves();
            let share = 1.0 / legal.len().max(1) as f32;
            for p in legal {
                e.policy[board.dense_index(p)] = share;
            }
            e.value = 0.0;
        }
    }
}

/// Softmax of `logits` over the legal points of `board`, written into `policy` (zero elsewhere).
pub fn masked_softmax(board: &Board, logits: &[f32], policy: &mut [f32]) {
    policy.iter_mut().for_each(|v| *v = 0.0);
    let legal = board.legal_moves();
    let max = legal.iter().map(|&p| logits[board.dense_index(p)]).fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for &p in &legal {
        let i = board.dense_index(p);
        let v = (logits[i] - max).exp();
        policy[i] = v;
        sum += v;
    }
    if sum > 0.0 && sum.is_finite() {
        policy.iter_mut().for_each(|v| *v /= sum);
    } else {
        let share = 1.0 / legal.len().max(1) as f32;
        for &p in &legal {
            policy[board.dense_index(p)] = share;
        }
    }
}
