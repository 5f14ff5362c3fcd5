//! Defence search: which moves of the side to move hold against the opponent's forced win.
//!
//! Depends on `game`, `threat`, `verify` and the provers. Every legal move is judged: it `loses`
//! when the opponent has a verified forced win after it (the old proof replayed with the move on
//! the board, else a fresh search), it `holds` when a complete search finds none, and it stays
//! `unknown` when the budget ran out first. Direct blocks, counter-fours that gain tempo and moves
//! that spoil a threat's second stage all come out of the same fresh search: nothing is assumed.

use super::threat::{five_on_board, legal_for};
use super::vct::VctTables;
use super::verify::{Check, Strategy, verify_shifted};
use super::{Limits, Proof, Sliced, Solve, Stats, WinKind, solve_with};
use crate::game::{Board, Color, Pos};

/// The legal moves of one side sorted by what they do against the opponent's forced win, each
/// list in board order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// After these the opponent has no forced win: the searches ended (a VCF exhaustively, a VCT
    /// within its depth cap) without finding one.
    pub holds: Vec<Pos>,
    /// After these the opponent has a forced win that the verifier accepted.
    pub loses: Vec<Pos>,
    /// The budget ran out before these were settled.
    pub unknown: Vec<Pos>,
}

impl Judged {
    /// The moves not proven to lose (holding or unsettled), in board order.
    pub fn not_lost(&self) -> Vec<Pos> {
        let mut moves: Vec<Pos> = self.holds.iter().chain(&self.unknown).copied().collect();
        moves.sort_unstable();
        moves
    }
}

/// Judges every legal move of `side` (moving next) against `proof`, the opponent's verified
/// win: the proof replayed after the move first (cheap, settles most moves as lost), then a fresh
/// search of `kind` (a VCT also covers every VCF) for the rest, in rounds of growing slices. The
/// VCT searches share `tables` (the opponent's, as attacker): the lines after one defence
/// transpose into another's.
pub(crate) fn judge(
    b: &mut Board,
    side: Color,
    proof: &Proof,
    kind: WinKind,
    lim: &mut Limits,
    stats: &mut Stats,
    tables: &mut VctTables,
) -> Judged {
    let opp = side.opp();
    let before = b.hash();
    let moves: Vec<Pos> = b.points().filter(|&p| legal_for(b, p, side)).collect();
    let mut out = Judged::default();
    let mut survivors = Vec::new();
    for m in moves {
        if !lim.check_now() || !lim.tick() {
            out.unknown.push(m);
            continue;
        }
        b.place_unchecked(m, side);
        let check = if b.is_five_at(m) {
            Check::Refuted
        } else {
            verify_shifted(b, opp, &proof.strategy, b.hash() ^ before, lim.clock())
        };
        b.undo();
        match check {
            Check::Verified => out.loses.push(m),
            Check::Refuted => survivors.push(m),
            Check::OutOfTime => out.unknown.push(m),
        }
    }
    // The rest in rounds, each search resuming where it stopped: the first rounds spread thin
    // so that the easy verdicts come in first, the later ones leave all that is left to the hard
    // ones (an equal split up front left the time of the quickly settled moves unused). A win
    // found after one move is replayed after the others before they search: neighbouring
    // defences often lose to the same attack.
    let mut pending: Vec<Pending> = survivors
        .into_iter()
        .map(|m| Pending {
            m,
            search: Sliced::new(opp, kind),
            replayed: 0,
        })
        .collect();
    let mut wins: Vec<(u64, Strategy)> = Vec::new();
    for round in 0.. {
        if pending.is_empty() || !lim.check_now() {
            break;
        }
        let spread: u64 = 1 << 3u32.saturating_sub(round);
        let n = pending.len() as u64;
        let mut still = Vec::new();
        for (i, mut p) in pending.into_iter().enumerate() {
            b.place_unchecked(p.m, side);
            let key = b.hash();
            let lost_to_a_known_win = !b.is_five_at(p.m)
                && wins[p.replayed..].iter().any(|(at, strategy)| {
                    verify_shifted(b, opp, strategy, key ^ at, lim.clock()) == Check::Verified
                });
            p.replayed = wins.len();
            let verdict = if b.is_five_at(p.m) {
                Solve::NoWin
            } else if lost_to_a_known_win {
                b.undo();
                out.loses.push(p.m);
                continue;
            } else {
                p.search
                    .resume_sharing(tables, b, lim, (1, spread * (n - i as u64)), stats)
            };
            b.undo();
            match verdict {
                Solve::Win(proof) => {
                    out.loses.push(p.m);
                    wins.push((key, proof.strategy));
                }
                Solve::NoWin => out.holds.push(p.m),
                Solve::Unknown => still.push(p),
            }
        }
        pending = still;
    }
    out.unknown.extend(pending.into_iter().map(|p| p.m));
    // Settled in rounds, so in no particular order until sorted.
    out.holds.sort_unstable();
    out.unknown.sort_unstable();
    out.loses.sort_unstable();
    out
}

/// A defence `judge` has not settled yet, with its search and how many of the wins found after
/// other defences were already replayed on it.
struct Pending {
    m: Pos,
    search: Sliced,
    replayed: usize,
}

/// The opponent's threat, as far as the budget let `defences` see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threat {
    /// A five is already on the board, or the side to move has no legal move: nothing to defend.
    GameOver,
    /// The opponent has no forced win now: no VCF (exhaustive search) and no VCT within its depth
    /// cap. The move lists are empty: no move needs judging.
    None,
    /// The opponent has a verified forced win of this kind (a VCT may be all fours): the lists
    /// say which moves hold.
    Win(WinKind),
    /// The budget ran out before the opponent's threat was known; the lists are empty.
    Unknown,
}

/// `defences`' answer: the opponent's threat and every legal move judged against it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defences {
    pub threat: Threat,
    pub moves: Judged,
}

/// The moves of `side` (moving next) after which the opponent has no VCF and no VCT, within
/// `budget`. First the opponent's win is searched for (VCF, then VCT); when there is one, every
/// legal move is judged (see `Judged`); moves the budget did not reach are reported `unknown`,
/// never as holding. A renju black whose every defence is forbidden gets an empty `holds`.
pub fn defences(board: &Board, side: Color, budget: super::Budget) -> Defences {
    let mut lim = Limits::new(budget);
    let mut stats = Stats::default();
    let mut b = board.clone();
    let answer = |threat, moves| Defences { threat, moves };
    if five_on_board(&b).is_some() || !b.points().any(|p| legal_for(&b, p, side)) {
        return answer(Threat::GameOver, Judged::default());
    }
    let opp = side.opp();
    let mut found = None;
    let mut no_vcf = false;
    for (kind, num, den) in [(WinKind::Vcf, 1, 4), (WinKind::Vct, 1, 2)] {
        let mut share = lim.share(num, den);
        let r = solve_with(&mut b, opp, kind, &mut share, &mut stats);
        lim.absorb(&share);
        match r {
            Solve::Win(p) => {
                found = Some(p);
                break;
            }
            Solve::NoWin if kind == WinKind::Vcf => no_vcf = true,
            Solve::NoWin if no_vcf => return answer(Threat::None, Judged::default()),
            _ => {}
        }
    }
    let Some(proof) = found else {
        return answer(Threat::Unknown, Judged::default());
    };
    let moves = judge(
        &mut b,
        side,
        &proof,
        WinKind::Vct,
        &mut lim,
        &mut stats,
        &mut VctTables::default(),
    );
    answer(Threat::Win(proof.kind), moves)
}
