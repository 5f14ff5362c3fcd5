//! Defence search: given the opponent's verified forced win, the moves of the side to move after
//! which the opponent has no forced win of the same kind.
//!
//! Depends on `game`, `threat`, `verify` and the provers. A move is dropped only when a win is
//! proven after it (the old strategy still verifies, or a fresh search finds and verifies one), so
//! a budget that runs out leaves moves in the list rather than wrongly taking them out.

use super::threat::legal_for;
use super::verify::{Check, verify_shifted};
use super::{Limits, Proof, Solve, Stats, solve_with};
use crate::game::{Board, Color, Pos};

pub(crate) fn refutations(b: &mut Board, side: Color, proof: &Proof, lim: &mut Limits, stats: &mut Stats) -> Vec<Pos> {
    let opp = side.opp();
    let before = b.hash();
    let moves: Vec<Pos> = b.points().filter(|&p| legal_for(b, p, side)).collect();
    // Phase 1: the same winning strategy, replayed after each move, removes most moves cheaply.
    let mut survivors = Vec::new();
    for m in moves {
        if !lim.check_now() || !lim.tick() {
            survivors.push(m);
            continue;
        }
        b.place_unchecked(m, side);
        let still_wins =
            !b.is_five_at(m) && verify_shifted(b, opp, &proof.strategy, b.hash() ^ before, lim.clock()) == Check::Verified;
        b.undo();
        if !still_wins {
            survivors.push(m);
        }
    }
    // Phase 2: a fresh search for the opponent after each remaining move, budget split evenly.
    let mut keep = Vec::new();
    let n = survivors.len() as u64;
    for (i, m) in survivors.into_iter().enumerate() {
        if !lim.check_now() {
            keep.push(m);
            continue;
        }
        let mut share = lim.share(1, n - i as u64);
        b.place_unchecked(m, side);
        let lost = !b.is_five_at(m) && matches!(solve_with(b, opp, proof.kind, &mut share, stats), Solve::Win(_));
        b.undo();
        lim.absorb(&share);
        if !lost {
            keep.push(m);
        }
    }
    keep
}
