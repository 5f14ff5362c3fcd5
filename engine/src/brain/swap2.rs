//! Swap2 opening decisions, made by the engine's own search (MCTS over the live evaluator, with
//! its threat search at the leaves) within the move's time budget.
//!
//! Every question is one of two kinds. "Which colour?" (3 or 5 stones, white to move): search the
//! position; keep white and play the best move when white's value is not negative, else `SWAP`.
//! "Which balanced position to offer?" (0 stones: three to place; 3 stones too close to call: two
//! more): search candidate positions by successive halving — all briefly, the half nearest to a
//! value of 0 again with twice the time, … — and offer the one nearest to 0, since the opponent
//! then takes whichever colour is better.
//!
//! Depends on `game`, `mcts` and the classical evaluator's move ranking; knows nothing of the
//! protocol.

use super::EngineError;
use crate::eval::classical::{position_value, scored_moves};
use crate::game::{Board, Pos};
use crate::mcts::{Proven, Search, SearchLimits};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Swap2Choice {
    /// Take the other colour.
    Swap,
    /// Place these stones (3 to open; 1 to play on; 2 to hand the choice back).
    Place(Vec<Pos>),
}

/// A decision and what it rests on.
#[derive(Debug, Clone)]
pub struct Swap2Decision {
    pub choice: Swap2Choice,
    /// The searched value the choice rests on, for the side to move of the position it names
    /// (white, in every swap2 position), in [-1, 1].
    pub value: f32,
    /// Playouts spent on the decision.
    pub visits: u64,
}

/// Below this distance from 0 the colours are too close to call at three stones: the engine
/// hands the choice back with two more stones instead of betting on noise.
const TOO_CLOSE_TO_CALL: f32 = 0.05;
/// Candidate openings searched at all (the statically nearest to balance).
const OPENING_CANDIDATES: usize = 24;
/// Candidate white and black stones for the "two more stones" offer (best ranked of each).
const BALANCE_MOVES: usize = 5;

/// Answers a swap2 position. `opening` holds the stones placed so far, in placement order; the
/// search uses `search` (its tree is replaced) and must finish by `deadline` or when `stop` rises.
///
/// # Errors
/// `BadPosition` for a stone count other than 0, 3 or 5; `NoLegalMove` on a full board.
pub(super) fn choose(
    search: &mut Search,
    opening: &Board,
    deadline: Instant,
    stop: &Arc<AtomicBool>,
) -> Result<Swap2Decision, EngineError> {
    let mut probe = Probe {
        search,
        stop,
        visits: 0,
    };
    match opening.move_count() {
        0 => {
            let (stones, value) = probe.most_balanced(opening_candidates(opening), deadline)?;
            Ok(Swap2Decision {
                choice: Swap2Choice::Place(stones),
                value,
                visits: probe.visits,
            })
        }
        3 => {
            let now = Instant::now();
            // Most of the time for the colour question; the rest builds the offer when it is close.
            let colour_by = now + deadline.saturating_duration_since(now).mul_f32(0.4);
            let (value, best) = probe.value(opening, colour_by)?;
            if value.abs() < TOO_CLOSE_TO_CALL {
                let offers = two_more_candidates(opening);
                if !offers.is_empty() {
                    let (stones, value) = probe.most_balanced(offers, deadline)?;
                    return Ok(Swap2Decision {
                        choice: Swap2Choice::Place(stones),
                        value,
                        visits: probe.visits,
                    });
                }
            }
            Ok(probe.colour(value, best))
        }
        5 => {
            let (value, best) = probe.value(opening, deadline)?;
            Ok(probe.colour(value, best))
        }
        n => Err(EngineError::BadPosition(format!(
            "swap2 expects 0, 3 or 5 stones, got {n}"
        ))),
    }
}

/// The search, used for one position at a time.
struct Probe<'a> {
    search: &'a mut Search,
    stop: &'a Arc<AtomicBool>,
    visits: u64,
}

impl Probe<'_> {
    /// The searched value of `board` for its side to move, and the best move there.
    fn value(&mut self, board: &Board, deadline: Instant) -> Result<(f32, Pos), EngineError> {
        self.search.set_position(board);
        let limits = SearchLimits {
            deadline: Some(deadline),
            stop: self.stop.clone(),
            ..SearchLimits::default()
        };
        let r = self.search.run(&limits);
        self.visits += r.playouts;
        let value = match r.proven {
            Some(Proven::Win) => 1.0,
            Some(Proven::Loss) => -1.0,
            Some(Proven::Draw) => 0.0,
            // No playout at all (deadline already gone): the classical judgement.
            None if r.visits == 0 => position_value(board),
            None => r.value,
        };
        let best = if !r.best.is_none() && board.is_legal(r.best) {
            r.best
        } else {
            scored_moves(board)
                .first()
                .map(|m| m.pos)
                .ok_or(EngineError::NoLegalMove)?
        };
        Ok((value, best))
    }

    /// Keep the colour to move (play `best`) unless its value is negative.
    fn colour(&self, value: f32, best: Pos) -> Swap2Decision {
        let choice = if value < 0.0 {
            Swap2Choice::Swap
        } else {
            Swap2Choice::Place(vec![best])
        };
        Swap2Decision {
            choice,
            value,
            visits: self.visits,
        }
    }

    /// Of `candidates` (stones to add, and the position they make), the one whose searched value
    /// is nearest to 0, by successive halving until `deadline`; its stones and value.
    fn most_balanced(
        &mut self,
        mut candidates: Vec<(Vec<Pos>, Board)>,
        deadline: Instant,
    ) -> Result<(Vec<Pos>, f32), EngineError> {
        if candidates.is_empty() {
            return Err(EngineError::NoLegalMove);
        }
        // (distance from balance, candidate, value) of the last round.
        let mut scored: Vec<(f32, usize, f32)> = Vec::new();
        let mut alive: Vec<usize> = (0..candidates.len()).collect();
        let rounds = usize::BITS - (alive.len().max(1) - 1).leading_zeros() + 1;
        for round in 0..rounds {
            let now = Instant::now();
            let rounds_left = rounds - round;
            // Each round gets an equal share of what is left; its candidates split it equally.
            let slice = deadline.saturating_duration_since(now) / rounds_left / alive.len() as u32;
            scored.clear();
            for &i in &alive {
                let by = (Instant::now() + slice).min(deadline);
                let (value, _) = self.value(&candidates[i].1, by)?;
                scored.push((value.abs(), i, value));
            }
            // Nearest to balance first; ties by candidate order, so the choice is reproducible.
            scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            if alive.len() == 1 || self.stop.load(Ordering::Relaxed) {
                break;
            }
            alive = scored
                .iter()
                .take(alive.len().div_ceil(2))
                .map(|&(_, i, _)| i)
                .collect();
        }
        let &(_, best, value) = scored.first().ok_or(EngineError::NoLegalMove)?;
        Ok((candidates.swap_remove(best).0, value))
    }
}

/// Three-stone openings (black, white, black) in the centre, the statically most balanced first:
/// black in the middle, white on one of five points up to two away (the others are mirror
/// images), black's second stone anywhere within two of the middle.
fn opening_candidates(empty: &Board) -> Vec<(Vec<Pos>, Board)> {
    let (w, h) = (empty.width() as i64, empty.height() as i64);
    let (cx, cy) = (w / 2, h / 2);
    let mut all = Vec::new();
    for (wx, wy) in [(1, 0), (1, 1), (2, 0), (2, 1), (2, 2)] {
        for dy in -2..=2 {
            for dx in -2..=2 {
                let points = [(cx, cy), (cx + wx, cy + wy), (cx + dx, cy + dy)];
                if let Some((stones, board)) = placed(empty, &points) {
                    all.push((position_value(&board).abs(), stones, board));
                }
            }
        }
    }
    all.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    all.into_iter()
        .take(OPENING_CANDIDATES)
        .map(|(_, s, b)| (s, b))
        .collect()
}

/// Two more stones (white, then black) on a three-stone opening: the best ranked few of each.
fn two_more_candidates(opening: &Board) -> Vec<(Vec<Pos>, Board)> {
    let mut all = Vec::new();
    for white in scored_moves(opening).into_iter().take(BALANCE_MOVES) {
        let mut four = opening.clone();
        if four.play(white.pos).is_err() {
            continue;
        }
        for black in scored_moves(&four).into_iter().take(BALANCE_MOVES) {
            let mut five = four.clone();
            if five.play(black.pos).is_ok() && five.winner().is_none() {
                all.push((vec![white.pos, black.pos], five));
            }
        }
    }
    all
}

/// `base` with stones played at `points` in turn; `None` when one is off the board or illegal.
fn placed(base: &Board, points: &[(i64, i64)]) -> Option<(Vec<Pos>, Board)> {
    let mut board = base.clone();
    let mut stones = Vec::with_capacity(points.len());
    for &(x, y) in points {
        let p = board.pos(x, y).ok()?;
        board.play(p).ok()?;
        stones.push(p);
    }
    Some((stones, board))
}
