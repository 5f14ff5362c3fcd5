//! Swap2 opening decisions. With no stones: propose three stones (a balanced, slightly
//! black-favoured shape). With three or five: swap when the side we would get is worse by the
//! classical evaluation, else play on.

use super::{EngineError, SetupStone};
use crate::eval::classical::{position_value, scored_moves};
use crate::game::{Board, Color, Pos, Rule};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Swap2Choice {
    /// Take the other colour.
    Swap,
    /// Place these stones (3 to open; 1 to play on; 2 to hand the choice back).
    Place(Vec<Pos>),
}

/// Below this (from the side to move's view) we prefer the other colour.
const SWAP_THRESHOLD: f32 = -0.05;

pub fn choose(width: usize, height: usize, rule: Rule, stones: &[SetupStone]) -> Result<Swap2Choice, EngineError> {
    let mut board = Board::new(width, height, rule)?;
    let (cx, cy) = (width / 2, height / 2);
    if stones.is_empty() {
        // A mild, common opening: black centre, white diagonal, black a knight's move away.
        return Ok(Swap2Choice::Place(vec![
            Pos::new(cx, cy),
            Pos::new(cx + 1, cy.saturating_sub(1)),
            Pos::new(cx.saturating_sub(1), cy.saturating_sub(2)),
        ]));
    }
    // Swap2 stones alternate black, white, black, ...: listed order is move order.
    for (i, s) in stones.iter().enumerate() {
        let p = board.pos(s.pos.0, s.pos.1)?;
        board.place(p, if i % 2 == 0 { Color::Black } else { Color::White })?;
    }
    match stones.len() {
        3 | 5 => {
            // It is the other side's turn: its value is ours if we keep playing it.
            if position_value(&board) < SWAP_THRESHOLD {
                Ok(Swap2Choice::Swap)
            } else {
                let best = scored_moves(&board).first().map(|m| m.pos).ok_or(EngineError::NoLegalMove)?;
                Ok(Swap2Choice::Place(vec![best]))
            }
        }
        n => Err(EngineError::BadPosition(format!("swap2 expects 0, 3 or 5 stones, got {n}"))),
    }
}
