//! `PatternEvaluator`: the pattern network as an `Evaluator`. The trait hands over whole boards,
//! so each concurrent caller takes an accumulator from a pool, brings it to its boards by the
//! moves between them, and puts it back; last in, first out, so a search thread usually gets the
//! accumulator of its own previous leaf. Forbidden points change non-locally: they are read from
//! the board at each evaluation (with the legal moves the softmax needs anyway).

use std::sync::Mutex;

use super::{PatternNet, PatternState};
use crate::eval::{Evaluation, Evaluator, softmax_in_mask};
use crate::game::{Board, Cell, MAX_SIZE};

pub struct PatternEvaluator {
    net: PatternNet,
    pool: Mutex<Vec<PatternState>>,
}

impl std::fmt::Debug for PatternEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternEvaluator")
            .field("net", &self.net.describe())
            .finish()
    }
}

impl PatternEvaluator {
    pub fn new(net: PatternNet) -> PatternEvaluator {
        PatternEvaluator {
            net,
            pool: Mutex::new(Vec::new()),
        }
    }

    pub fn net(&self) -> &PatternNet {
        &self.net
    }

    fn take(&self) -> PatternState {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.pop().unwrap_or_default()
    }

    fn give_back(&self, state: PatternState) {
        let mut pool = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        pool.push(state);
    }

    /// One board: the legal points (into the policy, as the softmax's mask) and the forbidden
    /// ones, the network, the masked softmax.
    fn evaluate_one(&self, state: &mut PatternState, board: &Board, e: &mut Evaluation) {
        let area = board.width() * board.height();
        e.policy.resize(area, 0.0);
        board.legal_mask(&mut e.policy, 1.0);
        let mut listed;
        let forbidden: &[usize] = if board.side_has_forbidden_points() {
            // Empty points that are not legal are the forbidden ones.
            listed = [0usize; MAX_SIZE * MAX_SIZE];
            let mut f = 0;
            for (i, &m) in e.policy.iter().enumerate() {
                if m == 0.0 && board.cell(board.from_dense(i)) == Cell::Empty {
                    listed[f] = i;
                    f += 1;
                }
            }
            &listed[..f]
        } else {
            &[]
        };
        let mut logits = [0f32; MAX_SIZE * MAX_SIZE];
        let value = self
            .net
            .evaluate(state, board, forbidden, &mut logits[..area]);
        softmax_in_mask(&logits[..area], &mut e.policy);
        e.value = value.clamp(-1.0, 1.0);
    }
}

impl Evaluator for PatternEvaluator {
    fn name(&self) -> String {
        format!("native:{}", self.net.describe())
    }

    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        out.resize_with(boards.len(), Evaluation::default);
        let mut state = self.take();
        for (board, e) in boards.iter().zip(out.iter_mut()) {
            self.evaluate_one(&mut state, board, e);
        }
        self.give_back(state);
    }

    fn model_id(&self) -> u64 {
        self.net.id()
    }

    fn refuses(&self, board: &Board) -> Option<String> {
        self.net
            .refuses(board.rule(), board.width(), board.height())
    }
}
