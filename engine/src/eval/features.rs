//! The network's input planes, feature version 1: the single definition used by the engine's
//! ONNX evaluator, the trainer and the exporter. Changing it means bumping `FEATURE_VERSION`.
//!
//! Layout: `PLANES` planes of `height * width` f32 each, row-major, from the side to move's view:
//! 0 own stones, 1 opponent stones, 2 points forbidden to the side to move (renju black),
//! 3 last move, 4 the move before it, 5 ones (on-board mask), 6..=9 the rule one-hot
//! (freestyle, standard, renju, caro) as constant planes, 10 side to move is black (constant).

use crate::game::{Board, Color, Rule};

pub const FEATURE_VERSION: u32 = 1;
pub const PLANES: usize = 11;
/// Plane of the side to move's stones.
pub const OWN: usize = 0;
/// Plane of the opponent's stones.
pub const OPPONENT: usize = 1;
/// Plane of the points forbidden to the side to move.
pub const FORBIDDEN: usize = 2;

/// The constant plane that says which rule is played.
pub fn rule_plane(rule: Rule) -> usize {
    match rule {
        Rule::Freestyle => 6,
        Rule::Standard => 7,
        Rule::Renju => 8,
        Rule::Caro => 9,
    }
}

/// Number of f32 values one position occupies.
pub fn input_len(board: &Board) -> usize {
    PLANES * board.width() * board.height()
}

/// Writes the planes of `board` into `out` (length `input_len(board)`).
///
/// # Panics
/// If `out` has the wrong length (a caller bug, not an input error).
pub fn encode(board: &Board, out: &mut [f32]) {
    let area = board.width() * board.height();
    assert_eq!(out.len(), PLANES * area, "feature buffer length");
    out.iter_mut().for_each(|v| *v = 0.0);
    let me = board.side_to_move();
    let forbid = board.side_has_forbidden_points();
    for p in board.points() {
        let i = board.dense_index(p);
        match board.cell(p).color() {
            Some(c) if c == me => out[OWN * area + i] = 1.0,
            Some(_) => out[OPPONENT * area + i] = 1.0,
            None if forbid && board.is_forbidden(p) => out[FORBIDDEN * area + i] = 1.0,
            None => {}
        }
    }
    let history = board.history();
    for (plane, back) in [(3, 1), (4, 2)] {
        if history.len() >= back {
            let (p, _) = history[history.len() - back];
            out[plane * area + board.dense_index(p)] = 1.0;
        }
    }
    let rule_plane = rule_plane(board.rule());
    out[5 * area..6 * area].iter_mut().for_each(|v| *v = 1.0);
    out[rule_plane * area..(rule_plane + 1) * area]
        .iter_mut()
        .for_each(|v| *v = 1.0);
    if me == Color::Black {
        out[10 * area..11 * area].iter_mut().for_each(|v| *v = 1.0);
    }
}
