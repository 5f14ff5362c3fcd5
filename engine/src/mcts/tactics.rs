//! Tactical facts about a new leaf that settle it without the network: the side to move can make
//! five; the opponent has a five threat that must be blocked (or two that cannot both be); and,
//! through the threat-space search hook, a VCF for the side to move.
//!
//! Depends on `game` only (and on `tss` through `vcf_first_move`); never on evaluators.

use crate::game::{Board, Color, Pattern, Pos};
use crate::tss::VcfMemory;

/// What the tactics say about a leaf, for its side to move.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing forced: the network decides.
    #[default]
    Open,
    /// The side to move wins by playing any of these moves (a five, or the first move of a VCF).
    Win(Vec<Pos>),
    /// The side to move loses whatever it plays (two five threats, or the only block forbidden).
    Loss,
    /// The opponent threatens five at exactly this point and the side to move has no five: every
    /// other move loses at once, so it is the only child.
    MustBlock(Pos),
}

/// Points where `c` would make a winning five, in board order.
pub(crate) fn five_points(board: &Board, c: Color, out: &mut Vec<Pos>) {
    out.clear();
    out.extend(board.points_making(c, Pattern::Five));
}

/// The cheap verdict (fives and five threats), then the VCF hook when `vcf_budget > 0`, which
/// shares what it refutes with the search's other leaves through `memory`.
pub(crate) fn verdict(
    board: &mut Board,
    vcf_budget: u32,
    memory: &mut VcfMemory,
    scratch: &mut Vec<Pos>,
) -> Verdict {
    let me = board.side_to_move();
    five_points(board, me, scratch);
    if !scratch.is_empty() {
        return Verdict::Win(scratch.clone());
    }
    five_points(board, me.opp(), scratch);
    match scratch.len() {
        0 => {}
        1 => {
            let p = scratch[0];
            return if board.is_legal(p) {
                Verdict::MustBlock(p)
            } else {
                Verdict::Loss
            };
        }
        _ => return Verdict::Loss,
    }
    // A VCF starts with a four: with no point that makes one, it has nothing to try (most
    // leaves), and one scan of the board says so before the search sets up its tables.
    if vcf_budget > 0
        && board.points_making(me, Pattern::Block4).next().is_some()
        && let Some(p) = vcf_first_move(board, me, vcf_budget, memory)
    {
        return Verdict::Win(vec![p]);
    }
    Verdict::Open
}

/// First move of a victory by continuous fours for `attacker`, if the threat-space search finds
/// (and verifies) one within `budget` nodes. The single place where MCTS reaches `tss`.
pub(crate) fn vcf_first_move(
    board: &mut Board,
    attacker: Color,
    budget: u32,
    memory: &mut VcfMemory,
) -> Option<Pos> {
    let budget = crate::tss::Budget::nodes(budget as u64);
    crate::tss::vcf_remembering(board, attacker, budget, memory)?
        .first()
        .copied()
}
