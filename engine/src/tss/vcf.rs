//! VCF (victory by continuous fours): the attacker only plays moves that make a four, so each
//! defender reply is forced (outside caro: the five-point itself).
//!
//! Depth-first with make/undo on the incremental board, a set of positions already refuted
//! (keyed by zobrist hash), and move ordering (winning fours, then four-threes, then moves near the
//! previous attacking stone). Depends on `game` and the threat vocabulary; not on `vct`.

use std::collections::HashSet;

use super::threat::{
    distance, first_five_point, five_points, five_points_near, four_replies, legal_for_mut,
};
use super::{Limits, Strategy};
use crate::game::{Board, Color, Pattern, Pos, Rule};

/// A hasher for keys that already are zobrist hashes (uniform 64-bit): no rehashing needed.
#[derive(Default, Clone, Copy)]
pub(crate) struct ZobristHasher(u64);
impl std::hash::Hasher for ZobristHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}
pub(crate) type ZobristSet = HashSet<u64, std::hash::BuildHasherDefault<ZobristHasher>>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Res {
    Win,
    Fail,
    /// The budget ran out before an answer.
    Abort,
}

pub(crate) struct VcfSearch<'l> {
    a: Color,
    lim: &'l mut Limits,
    refuted: ZobristSet,
    /// Winning attacker move per position (attacker to move), for the verifier and the line.
    pub(crate) strategy: Strategy,
}

impl<'l> VcfSearch<'l> {
    /// A search that starts from positions already refuted for `a` (by earlier searches for the
    /// same attacker on related positions: a refutation holds whatever led to the position).
    pub(crate) fn with_refuted(a: Color, lim: &'l mut Limits, refuted: ZobristSet) -> Self {
        VcfSearch {
            a,
            lim,
            refuted,
            strategy: Strategy::new(),
        }
    }

    /// The refuted positions, to hand to the next search for the same attacker.
    pub(crate) fn into_refuted(self) -> ZobristSet {
        self.refuted
    }

    /// Searches from `b` with the attacker to move. The caller has checked the attacker has no
    /// five-point (that is a win in one, not a VCF).
    pub(crate) fn root(&mut self, b: &mut Board) -> Res {
        if !self.lim.tick() {
            return Res::Abort;
        }
        let dfives = five_points(b, self.a.opp());
        self.or_node(b, &dfives, Pos::NONE)
    }

    /// Attacker to move, with no five-point of its own; `dfives` are the defender's five-points,
    /// which the attacker's move must stop.
    fn or_node(&mut self, b: &mut Board, dfives: &[Pos], last: Pos) -> Res {
        let a = self.a;
        let key = b.hash();
        if self.refuted.contains(&key) {
            return Res::Fail;
        }
        let mut cands = self.candidates(b, dfives, last);
        // A defender five-point that the attacker cannot stop with a four ends the VCF.
        if !dfives.is_empty() && b.rule() != Rule::Caro {
            cands.retain(|&(_, m)| dfives.len() == 1 && m == dfives[0]);
        }
        let mut aborted = false;
        for (_, m) in cands {
            if !self.lim.tick() {
                return Res::Abort;
            }
            b.place_unchecked(m, a);
            if b.rule() == Rule::Caro
                && !dfives.is_empty()
                && first_five_point(b, a.opp()).is_some()
            {
                b.undo();
                continue;
            }
            let fives = five_points_near(b, m, a);
            let res = if fives.is_empty() {
                Res::Fail
            } else {
                self.and_node(b, &fives)
            };
            b.undo();
            match res {
                Res::Win => {
                    self.strategy.insert(key, m);
                    return Res::Win;
                }
                Res::Abort => aborted = true,
                Res::Fail => {}
            }
            if aborted {
                break;
            }
        }
        if aborted {
            return Res::Abort;
        }
        self.refuted.insert(key);
        Res::Fail
    }

    /// Defender to move, facing the attacker's five-points `fives` and holding none of its own.
    fn and_node(&mut self, b: &mut Board, fives: &[Pos]) -> Res {
        let (a, d) = (self.a, self.a.opp());
        let replies = four_replies(b, a, fives);
        for r in replies {
            b.place_unchecked(r, d);
            // The defender had no five-point before the reply, so any new one lies on its lines.
            let dfives = five_points_near(b, r, d);
            let res = if b.is_five_at(r) {
                Res::Fail
            } else {
                self.or_node(b, &dfives, r)
            };
            b.undo();
            if res != Res::Win {
                return res;
            }
        }
        Res::Win
    }

    /// Four-making moves, best first: winning fours, fours that also build threes, then those
    /// near the last stones. Ties break by point so the order is total and reproducible.
    fn candidates(&self, b: &mut Board, dfives: &[Pos], last: Pos) -> Vec<(i32, Pos)> {
        let a = self.a;
        let anchor = b
            .history()
            .iter()
            .rev()
            .find(|&&(_, c)| c == a)
            .map(|&(p, _)| p);
        let mut out = Vec::new();
        let only = (dfives.len() == 1 && b.rule() != Rule::Caro).then(|| dfives[0]);
        let points: Vec<Pos> = match only {
            Some(p) => vec![p],
            None => b.points_making(a, Pattern::Block4).collect(),
        };
        for p in points {
            if !b.is_empty(p) {
                continue;
            }
            let t = b.threats(p, a);
            if t.fours() == 0 || !legal_for_mut(b, p, a) {
                continue;
            }
            let mut score = 0i32;
            if t.unstoppable_four() {
                score += 10_000;
            }
            for pat in t.patterns {
                score += match pat {
                    Pattern::Flex3 => 300,
                    Pattern::Block3 => 120,
                    Pattern::Flex2 => 40,
                    Pattern::Block2 => 10,
                    _ => 0,
                };
            }
            for near in [anchor, (!last.is_none()).then_some(last)]
                .into_iter()
                .flatten()
            {
                score -= 8 * distance(p, near).min(8) as i32;
            }
            out.push((score, p));
        }
        out.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        out
    }
}
