//! Renju forbidden points for black: overline, double four, double three, with "five takes
//! precedence" and the recursive rule that a three only counts if it can become a straight four
//! by a move that is not itself forbidden.
//!
//! The line patterns answer almost every point at once; only points with two candidate threes
//! need the recursive check, which plays stones on a scratch copy of the board.

use super::board::Board;
use super::pattern::Pattern;
use super::pos::{Color, DIRECTIONS, Pos};

/// What the line patterns alone say about a point.
enum Verdict {
    Forbidden,
    Allowed,
    /// Two or more candidate threes: decide by checking which are real.
    CheckThrees([bool; 4]),
}

/// Patterns that can make a point anything but plainly allowed: without one of these on any line
/// (the common case by far) the point is allowed, decided by one mask test.
const NOTABLE: u16 = (1 << Pattern::Overline as u16)
    | (1 << Pattern::Flex3 as u16)
    | (1 << Pattern::Block4 as u16)
    | (1 << Pattern::Flex4 as u16)
    | (1 << Pattern::DoubleFour as u16)
    | (1 << Pattern::Five as u16);

/// Does any line through `p` hold a `NOTABLE` pattern for black? When not, `p` is allowed.
#[inline]
fn notable(board: &Board, p: Pos) -> bool {
    let patterns = board.threats(p, Color::Black).patterns;
    patterns.iter().fold(0u16, |m, &q| m | (1 << q as u16)) & NOTABLE != 0
}

/// The verdict from patterns alone (callers have already seen a `notable` pattern).
fn quick_verdict(board: &Board, p: Pos) -> Verdict {
    let patterns = board.threats(p, Color::Black).patterns;
    if patterns.contains(&Pattern::Five) {
        return Verdict::Allowed;
    }
    if patterns.contains(&Pattern::Overline) {
        return Verdict::Forbidden;
    }
    let fours: u8 = patterns.iter().map(|q| q.four_count()).sum();
    if fours >= 2 {
        return Verdict::Forbidden;
    }
    let threes = patterns.map(|q| q == Pattern::Flex3);
    if threes.iter().filter(|&&t| t).count() < 2 {
        return Verdict::Allowed;
    }
    Verdict::CheckThrees(threes)
}

/// Is the empty point `p` forbidden for black? (The caller checks rule and emptiness.)
///
/// Inlined mask test first: legality scans ask this of every empty point, and almost all are
/// plainly allowed.
#[inline]
pub(crate) fn is_forbidden(board: &Board, p: Pos) -> bool {
    notable(board, p) && is_forbidden_slow(board, p)
}

/// `is_forbidden` on a board the caller lets us play on and take back (no scratch copy).
#[inline]
pub(crate) fn is_forbidden_mut(board: &mut Board, p: Pos) -> bool {
    notable(board, p) && is_forbidden_in_place(board, p)
}

#[inline(never)]
fn is_forbidden_slow(board: &Board, p: Pos) -> bool {
    match quick_verdict(board, p) {
        Verdict::Forbidden => true,
        Verdict::Allowed => false,
        Verdict::CheckThrees(threes) => {
            let mut scratch = board.clone();
            real_threes_at_least_two(&mut scratch, p, threes)
        }
    }
}

fn is_forbidden_in_place(board: &mut Board, p: Pos) -> bool {
    match quick_verdict(board, p) {
        Verdict::Forbidden => true,
        Verdict::Allowed => false,
        Verdict::CheckThrees(threes) => real_threes_at_least_two(board, p, threes),
    }
}

fn real_threes_at_least_two(board: &mut Board, p: Pos, candidates: [bool; 4]) -> bool {
    board.place_unchecked(p, Color::Black);
    let mut real = 0;
    for (d, &step) in DIRECTIONS.iter().enumerate() {
        if candidates[d] && is_real_three(board, p, step, d) {
            real += 1;
            if real >= 2 {
                break;
            }
        }
    }
    board.undo();
    real >= 2
}

/// With black on `p`: is there a point on line `d` that makes a straight four through `p` and is
/// not itself forbidden? Only the first empty point past the black run on each side can be one.
fn is_real_three(board: &mut Board, p: Pos, step: isize, d: usize) -> bool {
    for sign in [-1isize, 1] {
        let mut q = p.offset(sign * step);
        for _ in 0..4 {
            if board.cell(q).color() != Some(Color::Black) {
                break;
            }
            q = q.offset(sign * step);
        }
        if board.is_empty(q)
            && board.pattern(q, Color::Black, d) == Pattern::Flex4
            && !is_forbidden_in_place(board, q)
        {
            return true;
        }
    }
    false
}
