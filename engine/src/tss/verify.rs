//! The proof checker: replays a claimed win against every defence the rules allow and accepts it
//! only if every line ends in the attacker's five.
//!
//! Depends on `game` and the threat vocabulary only, never on the searches: a bug in a search must
//! show up here as a rejected proof, not be repeated. The attacker's moves come from a strategy
//! (position hash -> move) that the searches record; where the strategy is silent the checker only
//! takes a five or a winning four it can see on the board. Rule facts it relies on, outside caro:
//! a five-point stays a five-point whatever the defender plays elsewhere, so a defender facing one
//! five-point must occupy it and one facing two cannot stop both.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::threat::{
    first_five_point, five_points, five_points_near, is_winning_four, legal_for, legal_for_mut,
    winning_fours,
};
use crate::game::{Board, Color, Pos, Rule};

/// Attacker moves keyed by zobrist hash of the position (attacker to move) they are played from.
pub type Strategy = BTreeMap<u64, Pos>;

/// Upper bound on positions the checker visits, so a huge or bogus proof cannot hang it.
const MAX_CHECKS: u64 = 4_000_000;

/// When a check must give up: a deadline and a stop flag (the search's own), read every 1024
/// positions. A check that gives up has verified nothing.
#[derive(Clone, Default)]
pub(crate) struct Clock {
    pub(crate) deadline: Option<Instant>,
    pub(crate) stop: Option<Arc<AtomicBool>>,
}

impl Clock {
    fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
            || self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// The outcome of a check under a clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    Verified,
    Refuted,
    /// The clock ran out first: neither verified nor refuted.
    OutOfTime,
}

struct Checker<'s> {
    attacker: Color,
    strategy: &'s Strategy,
    /// XORed into the board hash before each lookup: lets a strategy recorded on one position be
    /// replayed after an extra stone (defence search: "does the same win still work?").
    key_xor: u64,
    visited: u64,
    clock: Clock,
    out_of_time: bool,
    /// The strategy's entries the check followed (keyed by the board's own hash), when asked for.
    used: Option<Strategy>,
}

/// Is `strategy` a forced win for `attacker`, who moves next on `board` (whatever the stone
/// counts say)? `board` is restored before returning.
pub fn verify_strategy(board: &mut Board, attacker: Color, strategy: &Strategy) -> bool {
    verify_shifted(board, attacker, strategy, 0, Clock::default()) == Check::Verified
}

pub(crate) fn verify_shifted(
    board: &mut Board,
    attacker: Color,
    strategy: &Strategy,
    key_xor: u64,
    clock: Clock,
) -> Check {
    check(board, attacker, strategy, key_xor, clock, None).0
}

/// `verify_shifted` without a shift that also returns the part of `strategy` the check followed:
/// the whole proof, however large the table it was drawn from (searches that share tables across
/// roots and moves hold far more than one proof).
pub(crate) fn verify_extract(
    board: &mut Board,
    attacker: Color,
    strategy: &Strategy,
    clock: Clock,
) -> (Check, Strategy) {
    let (verdict, used) = check(board, attacker, strategy, 0, clock, Some(Strategy::new()));
    (verdict, used.unwrap_or_default())
}

fn check(
    board: &mut Board,
    attacker: Color,
    strategy: &Strategy,
    key_xor: u64,
    clock: Clock,
    used: Option<Strategy>,
) -> (Check, Option<Strategy>) {
    if board.is_full() {
        return (Check::Refuted, used);
    }
    let mut c = Checker {
        attacker,
        strategy,
        key_xor,
        visited: 0,
        clock,
        out_of_time: false,
        used,
    };
    let verdict = match c.attacker_to_move(board, 0) {
        Some(true) => Check::Verified,
        _ if c.out_of_time => Check::OutOfTime,
        _ => Check::Refuted,
    };
    (verdict, c.used)
}

impl Checker<'_> {
    /// Counts a visited position; false when the check budget or the clock has run out.
    fn visit(&mut self, depth: usize) -> bool {
        self.visited += 1;
        if self.visited > MAX_CHECKS || depth > 400 {
            return false;
        }
        if self.visited.is_multiple_of(1024) && self.clock.expired() {
            self.out_of_time = true;
        }
        !self.out_of_time
    }

    /// `None` when the check budget ran out (treated as "not verified").
    fn attacker_to_move(&mut self, b: &mut Board, depth: usize) -> Option<bool> {
        if !self.visit(depth) {
            return None;
        }
        let a = self.attacker;
        if first_five_point(b, a).is_some() {
            return Some(true);
        }
        let mv = match self.strategy.get(&(b.hash() ^ self.key_xor)) {
            Some(&m) => {
                if let Some(used) = &mut self.used {
                    used.insert(b.hash(), m);
                }
                m
            }
            // No recorded move: only a winning four visible on the board is accepted.
            None if first_five_point(b, a.opp()).is_none() => match winning_fours(b, a).first() {
                Some(&m) => m,
                None => return Some(false),
            },
            None => return Some(false),
        };
        if !legal_for_mut(b, mv, a) {
            return Some(false);
        }
        b.place_unchecked(mv, a);
        let r = self.defender_to_move(b, depth + 1);
        b.undo();
        r
    }

    fn defender_to_move(&mut self, b: &mut Board, depth: usize) -> Option<bool> {
        let (a, d) = (self.attacker, self.attacker.opp());
        if b.is_five_at(b.last_move().unwrap_or_default()) {
            return Some(true);
        }
        if first_five_point(b, d).is_some() {
            return Some(false);
        }
        let fives = five_points(b, a);
        let replies: Vec<Pos> = if b.rule() != Rule::Caro && !fives.is_empty() {
            // Every other reply leaves a five-point for the attacker to complete next move.
            match fives.as_slice() {
                [f] if legal_for_mut(b, *f, d) => vec![*f],
                _ => return Some(true),
            }
        } else {
            let mut moves: Vec<Pos> = b.points().collect();
            moves.retain(|&m| legal_for_mut(b, m, d));
            moves
        };
        if replies.is_empty() {
            // The defender cannot move at all: with no five on the board the game is drawn.
            return Some(!fives.is_empty());
        }
        // Facing no five-point, the defender may play anywhere, and most replies are far from the
        // threat: the attacker's winning fours standing now are tried again after each reply
        // before the whole board is scanned for one.
        let quiet = fives.is_empty();
        let standing = if quiet {
            winning_fours(b, a)
        } else {
            Vec::new()
        };
        for m in replies {
            b.place_unchecked(m, d);
            let r = if b.is_five_at(m) {
                Some(false)
            } else if quiet {
                self.attacker_after_quiet_reply(b, m, &standing, depth + 1)
            } else {
                self.attacker_to_move(b, depth + 1)
            };
            b.undo();
            if r != Some(true) {
                return r;
            }
        }
        Some(true)
    }

    /// `attacker_to_move` after the defender's reply `m` in a position where neither side had a
    /// five-point, with `standing` the attacker's winning fours from before `m`. The attacker
    /// still has no five-point (a defender stone makes none), and the defender's new ones can
    /// only lie on `m`'s lines. With no strategy move here and none of those, the attacker plays
    /// a winning four: one of `standing` that still is one, else the first the board scan finds
    /// (a defender stone can also create one, e.g. by making black's block forbidden in renju).
    /// Which winning four is played does not matter: the check goes on after it as after any
    /// other move, so a wrong pick can only reject a proof, never accept one.
    fn attacker_after_quiet_reply(
        &mut self,
        b: &mut Board,
        m: Pos,
        standing: &[Pos],
        depth: usize,
    ) -> Option<bool> {
        let (a, d) = (self.attacker, self.attacker.opp());
        if self.strategy.contains_key(&(b.hash() ^ self.key_xor))
            || !five_points_near(b, m, d).is_empty()
        {
            return self.attacker_to_move(b, depth);
        }
        if !self.visit(depth) {
            return None;
        }
        let mv = match standing
            .iter()
            .copied()
            .find(|&w| w != m && is_winning_four(b, w, a))
        {
            Some(w) => w,
            None => match winning_fours(b, a).first() {
                Some(&w) => w,
                None => return Some(false),
            },
        };
        b.place_unchecked(mv, a);
        let r = self.defender_to_move(b, depth + 1);
        b.undo();
        r
    }
}

/// Replays `line` (attacker first, moves alternating) and checks that it is a legal game ending in
/// the attacker's five. Catches a malformed line; `verify_strategy` is what proves it forced.
pub fn line_reaches_five(board: &Board, attacker: Color, line: &[Pos]) -> bool {
    let mut b = board.clone();
    let mut c = attacker;
    for (i, &m) in line.iter().enumerate() {
        if !legal_for(&b, m, c) {
            return false;
        }
        b.place_unchecked(m, c);
        if b.is_five_at(m) {
            return c == attacker && i + 1 == line.len();
        }
        c = c.opp();
    }
    false
}
