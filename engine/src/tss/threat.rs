//! Threat vocabulary shared by the searches and the verifier: five-points, legal attacking and
//! defending moves per rule, the replies a four allows, and "winning four" points.
//!
//! Depends on `game` only. Every helper takes the colour explicitly: the searches play "null
//! moves" for the side not on turn, so `Board::side_to_move` is never consulted here.

use crate::game::{Board, Color, DIRECTIONS, Pattern, Pos, Rule};

/// Can `c` put a stone on `p`? Renju black may not play a forbidden point (a five is never one).
#[inline]
pub(crate) fn legal_for(b: &Board, p: Pos, c: Color) -> bool {
    b.is_on_board(p) && b.is_empty(p) && !(c == Color::Black && b.is_forbidden(p))
}

/// `legal_for` for a caller holding the board mutably: renju's double-three check plays and takes
/// back its stones on `b` instead of on a copy of the board (the copy was most of the cost of the
/// searches' renju legality checks).
#[inline]
pub(crate) fn legal_for_mut(b: &mut Board, p: Pos, c: Color) -> bool {
    b.is_on_board(p) && b.is_empty(p) && !(c == Color::Black && b.is_forbidden_mut(p))
}

/// Every empty point where `c` would complete a winning five, in board order.
pub(crate) fn five_points(b: &Board, c: Color) -> Vec<Pos> {
    b.points_making(c, Pattern::Five).collect()
}

/// The first five-point of `c`, if any.
#[inline]
pub(crate) fn first_five_point(b: &Board, c: Color) -> Option<Pos> {
    b.points_making(c, Pattern::Five).next()
}

/// Empty points on the four lines through `p`, within 5 cells, in a fixed order (no duplicates:
/// two lines through `p` meet only at `p`).
pub(crate) fn line_cells(b: &Board, p: Pos, out: &mut Vec<Pos>) {
    if b.is_empty(p) {
        out.push(p);
    }
    for &step in &DIRECTIONS {
        for k in 1..=5isize {
            for q in [p.offset(k * step), p.offset(-k * step)] {
                if b.is_on_board(q) && b.is_empty(q) {
                    out.push(q);
                }
            }
        }
    }
}

/// Five-points of `c` on the lines through `p` (the only new ones after a stone lands on `p`),
/// in a fixed order without duplicates (two lines through `p` meet only at `p`). Walks the lines
/// in place: the VCF asks this after every move.
pub(crate) fn five_points_near(b: &Board, p: Pos, c: Color) -> Vec<Pos> {
    let mut out = Vec::new();
    if b.is_empty(p) && b.makes_five(p, c) {
        out.push(p);
    }
    for &step in &DIRECTIONS {
        for k in 1..=5isize {
            for q in [p.offset(k * step), p.offset(-k * step)] {
                if b.is_on_board(q) && b.is_empty(q) && b.makes_five(q, c) {
                    out.push(q);
                }
            }
        }
    }
    out
}

/// The moves of the defender `a.opp()` that leave the attacker `a` without any five-point, given
/// the attacker's current five-points `fives` (non-empty). Outside caro a five is stopped only by
/// occupying its point, so two five-points cannot be stopped; under caro a stone at the far end of
/// the line can also spoil a five ("blocked at both ends"), so candidates are tried on the board.
pub(crate) fn four_replies(b: &mut Board, a: Color, fives: &[Pos]) -> Vec<Pos> {
    let d = a.opp();
    if b.rule() != Rule::Caro {
        return match fives {
            [f] if legal_for_mut(b, *f, d) => vec![*f],
            _ => Vec::new(),
        };
    }
    let mut cands = Vec::new();
    for &f in fives {
        line_cells(b, f, &mut cands);
    }
    cands.sort_unstable();
    cands.dedup();
    cands.retain(|&m| legal_for_mut(b, m, d));
    let mut replies = Vec::new();
    for m in cands {
        b.place_unchecked(m, d);
        if first_five_point(b, a).is_none() {
            replies.push(m);
        }
        b.undo();
    }
    replies
}

/// Does `a` playing the empty point `p` win by force at once: a four (or fours) the defender can
/// neither stop nor answer with a five? The caller guarantees that neither side has a five-point
/// now. Covers straight fours, double fours, caro's blocked-end rule and renju's "white four whose
/// only block is forbidden for black".
pub(crate) fn is_winning_four(b: &mut Board, p: Pos, a: Color) -> bool {
    let t = b.threats(p, a);
    if t.fours() == 0 || !legal_for_mut(b, p, a) {
        return false;
    }
    let cheap = t.unstoppable_four() && b.rule() != Rule::Caro;
    if cheap {
        return true;
    }
    let worth_trying = b.rule() == Rule::Caro
        || (b.rule() == Rule::Renju && a == Color::White)
        || t.unstoppable_four();
    if !worth_trying {
        return false;
    }
    b.place_unchecked(p, a);
    let fives = five_points_near(b, p, a);
    let win = !fives.is_empty() && four_replies(b, a, &fives).is_empty();
    b.undo();
    win
}

/// Every winning-four point of `a` (see `is_winning_four`), in board order.
pub(crate) fn winning_fours(b: &mut Board, a: Color) -> Vec<Pos> {
    let cands: Vec<Pos> = b
        .points_making(a, Pattern::Block4)
        .filter(|&p| b.threats(p, a).fours() > 0)
        .collect();
    cands
        .into_iter()
        .filter(|&p| is_winning_four(b, p, a))
        .collect()
}

/// A stone of either colour standing in a winning five, if any (bad-input check at the root):
/// the first such stone in board order. Only stones can stand in a five, so it reads the
/// history, not the whole board (every leaf's VCF asks).
pub(crate) fn five_on_board(b: &Board) -> Option<Color> {
    b.history()
        .iter()
        .filter(|&&(p, _)| b.is_five_at(p))
        .min_by_key(|&&(p, _)| p.index())
        .map(|&(_, c)| c)
}

/// Chebyshev distance between two points (move ordering).
#[inline]
pub(crate) fn distance(a: Pos, b: Pos) -> usize {
    a.x().abs_diff(b.x()).max(a.y().abs_diff(b.y()))
}
