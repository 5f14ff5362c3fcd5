//! What a network makes of positions its self-play met: the prior it puts on an available five
//! of its own (the mover can win at once). A network that learns from its searches must put
//! more and more there; the train-proof run prints it every epoch (issue #15: the network of
//! the broken target put 0.03 there after 40 epochs).
//!
//! Depends on `engine::game`, `engine::eval::network` and `replay`.

use engine::eval::network::{Backend, NetEvaluator};
use engine::game::{Board, Pos};

use crate::training::replay::{GameRecord, board_at};

/// Positions where the side to move has a five, with those fives.
pub struct FivePositions {
    positions: Vec<(Board, Vec<Pos>)>,
}

/// The network's prior on the fives of `FivePositions`.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct FivePrior {
    pub positions: usize,
    /// Mean over positions of the prior summed over the mover's fives.
    pub mean_prior: f64,
    /// Share of positions whose most likely move is a five.
    pub top_share: f64,
}

impl FivePositions {
    /// Up to `limit` positions of `games` (in game order) where the mover can make five.
    pub fn collect(games: &[GameRecord], limit: usize) -> FivePositions {
        let mut positions = Vec::new();
        'games: for g in games {
            for ply in 0..g.plies() {
                if positions.len() >= limit {
                    break 'games;
                }
                let Ok(board) = board_at(g, ply, 0) else {
                    continue 'games;
                };
                let me = board.side_to_move();
                let fives: Vec<Pos> = board
                    .legal_moves()
                    .into_iter()
                    .filter(|&p| board.makes_five(p, me))
                    .collect();
                if !fives.is_empty() {
                    positions.push((board, fives));
                }
            }
        }
        FivePositions { positions }
    }

    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Runs `net` on every position (batches of 256).
    ///
    /// # Errors
    /// A failed forward (the figure would be about made-up priors).
    pub fn measure(&self, net: &NetEvaluator<dyn Backend>) -> anyhow::Result<FivePrior> {
        if self.positions.is_empty() {
            return Ok(FivePrior::default());
        }
        let (mut sum, mut top) = (0.0f64, 0usize);
        let mut evals = Vec::new();
        for chunk in self.positions.chunks(256) {
            let boards: Vec<&Board> = chunk.iter().map(|(b, _)| b).collect();
            net.try_evaluate(&boards, &mut evals)
                .map_err(|e| anyhow::anyhow!("five-prior probe ({}): {e}", net.backend().name()))?;
            for ((b, fives), e) in chunk.iter().zip(&evals) {
                let policy = &e.policy;
                sum += fives
                    .iter()
                    .map(|&p| policy[b.dense_index(p)] as f64)
                    .sum::<f64>();
                let best =
                    (0..policy.len()).fold(0, |a, i| if policy[i] > policy[a] { i } else { a });
                top += fives.iter().any(|&p| b.dense_index(p) == best) as usize;
            }
        }
        let n = self.positions.len() as f64;
        Ok(FivePrior {
            positions: self.positions.len(),
            mean_prior: sum / n,
            top_share: top as f64 / n,
        })
    }
}
