//! The value teacher (`Settings::value_teacher`): a trained network, loaded as the engine loads
//! it, whose value of each sampled position moves the value target part of the way from the
//! game's outcome: distillation, for a small network that would otherwise learn its value from
//! a few thousand outcomes.
//!
//! Depends on `engine::eval`, `selfplay::bootstrap` (the loader) and `replay` (the samples).

use std::path::Path;
use std::sync::Arc;

use engine::eval::Evaluator;
use engine::game::{Board, Rule};

use crate::training::replay::Sample;

/// Positions the teacher evaluates at once.
const BATCH: usize = 16;

/// A network whose value is mixed into the value targets, with its share of them.
pub struct ValueTeacher {
    net: Arc<dyn Evaluator>,
    weight: f32,
}

impl ValueTeacher {
    /// The network file `path` as the teacher of a run of `rule` on `size` x `size`, with share
    /// `weight` (0..=1).
    ///
    /// # Errors
    /// The file cannot be loaded, it does not claim the run's rule and board (its value there
    /// would be made up), or `weight` is outside 0..=1.
    pub fn load(path: &Path, weight: f32, rule: Rule, size: usize) -> anyhow::Result<ValueTeacher> {
        if !(0.0..=1.0).contains(&weight) {
            anyhow::bail!("value_teacher_weight {weight} is outside 0..=1");
        }
        let net = crate::selfplay::bootstrap::teacher_network(path, BATCH)?;
        let board = Board::new(size, size, rule)?;
        if let Some(why) = net.refuses(&board) {
            anyhow::bail!(
                "the value teacher {} cannot judge {rule} games on {size}x{size}: {why}",
                path.display()
            );
        }
        Ok(ValueTeacher { net, weight })
    }

    /// Each sample's value target moved `weight` of the way to the teacher's value of its board
    /// (`boards[i]` is the board `samples[i]` encodes; both from the side to move's view).
    pub fn mix(&self, samples: &mut [Sample], boards: &[Board]) {
        assert_eq!(samples.len(), boards.len(), "a board per sample");
        let mut out = Vec::new();
        for (samples, boards) in samples.chunks_mut(BATCH).zip(boards.chunks(BATCH)) {
            let boards: Vec<&Board> = boards.iter().collect();
            self.net.evaluate(&boards, &mut out);
            for (x, e) in samples.iter_mut().zip(&out) {
                x.value += self.weight * (e.value - x.value);
            }
        }
    }
}
