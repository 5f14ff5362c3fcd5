//! Threat-space search: VCF and VCT provers, the defence search, and the proof checker.
//!
//! Sits directly on `game` and must not depend on `eval`, `mcts` or any inference runtime: it sees
//! boards only. Layout by concern:
//!
//! - `threat`  — five-points, legal moves per rule, replies to a four, winning fours.
//! - `vcf`     — continuous fours, depth-first with a refutation table.
//! - `vct`     — fours and threes, proof-number search with a solved-position table.
//! - `verify`  — replays a claimed win against every defence; nothing is announced unverified.
//! - `defend`  — every move judged against an opponent's forced win: holds, loses, or unknown.
//! - `suite`   — the tactics suite file format (positions with expected verdicts).
//!
//! # Use from the brain
//!
//! ```no_run
//! use engine::game::{Board, Rule};
//! use engine::tss::{analyse_root, Budget, RootTactics};
//! let board = Board::new(15, 15, Rule::Renju).unwrap();
//! match analyse_root(&board, Budget::time(std::time::Duration::from_millis(50))) {
//!     RootTactics::WinNow(p) => { /* play p: it makes five */ }
//!     RootTactics::ForcedWin { line, .. } => { /* play line[0]; the win is verified */ }
//!     RootTactics::MustBlock(moves) => { /* restrict the search to `moves` */ }
//!     RootTactics::Lost => { /* every move loses by force: play anything (best effort) */ }
//!     RootTactics::GameOver { .. } | RootTactics::NoMoves => { /* nothing to play */ }
//!     RootTactics::Unknown => { /* no tactical verdict: search normally */ }
//! }
//! ```
//!
//! To restrict the root to real defences use `defences(board, side, budget)`: every legal move
//! judged against the opponent's forced win as `holds` (no VCF/VCT after it), `loses` (a verified
//! win after it) or `unknown` (the budget ran out), with `Threat::None` when there is nothing to
//! defend and `Threat::Unknown` when the budget did not even find out.
//!
//! At MCTS leaves use `vcf(board, colour, Budget::nodes(n))`: on a position where `colour` has no
//! four to make it returns `None` after one scan of the board (well under a microsecond per cell).
//!
//! Every search takes an explicit attacker colour and treats the attacker as moving next, whatever
//! the stone counts say; `analyse_root` uses the side to move (`analyse` takes it explicitly).

mod defend;
pub mod suite;
mod threat;
mod vcf;
mod vct;
mod verify;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::game::{Board, Color, Pattern, Pos, Rule};
pub use defend::{Defences, Judged, Threat, defences};
use threat::{
    first_five_point, five_on_board, five_points, four_replies, legal_for, line_cells,
    winning_fours,
};
pub use verify::{Strategy, line_reaches_five, verify_strategy};

/// How much a search may spend: a node count, a wall-clock deadline and a stop flag raised from
/// another thread (the protocol's STOP/END), whichever ends it first.
#[derive(Debug, Clone)]
pub struct Budget {
    pub max_nodes: u64,
    pub deadline: Option<Instant>,
    /// Checked with the clock (every 256 nodes): the front end's STOP/END flag.
    pub stop: Option<Arc<AtomicBool>>,
}

impl Budget {
    /// At most `n` nodes, no time limit.
    pub fn nodes(n: u64) -> Budget {
        Budget {
            max_nodes: n,
            deadline: None,
            stop: None,
        }
    }
    /// At most `d` of wall-clock time from now, no node limit.
    pub fn time(d: Duration) -> Budget {
        Budget {
            max_nodes: u64::MAX,
            deadline: Instant::now().checked_add(d),
            stop: None,
        }
    }
    /// Both limits.
    pub fn nodes_and_time(n: u64, d: Duration) -> Budget {
        Budget {
            max_nodes: n,
            deadline: Instant::now().checked_add(d),
            stop: None,
        }
    }
    /// Also ends when `stop` is raised.
    pub fn with_stop(self, stop: Arc<AtomicBool>) -> Budget {
        Budget {
            stop: Some(stop),
            ..self
        }
    }
}

/// The node and time accounting every search shares.
pub(crate) struct Limits {
    used: u64,
    max: u64,
    deadline: Option<Instant>,
    stop: Option<Arc<AtomicBool>>,
    stopped: bool,
}

impl Limits {
    pub(crate) fn new(b: Budget) -> Limits {
        Limits {
            used: 0,
            max: b.max_nodes,
            deadline: b.deadline,
            stop: b.stop,
            stopped: b.max_nodes == 0,
        }
    }
    /// Counts one node; false once the budget is spent (and from then on).
    #[inline]
    pub(crate) fn tick(&mut self) -> bool {
        self.charge(1)
    }
    #[inline]
    pub(crate) fn charge(&mut self, n: u64) -> bool {
        if self.stopped {
            return false;
        }
        let before = self.used;
        self.used = self.used.saturating_add(n);
        if self.used > self.max {
            self.stopped = true;
        } else if before >> 8 != self.used >> 8 || before == 0 {
            // Reading the clock and the flag every 256 nodes keeps them off the profile.
            if self.deadline.is_some_and(|d| Instant::now() >= d)
                || self
                    .stop
                    .as_ref()
                    .is_some_and(|s| s.load(Ordering::Relaxed))
            {
                self.stopped = true;
            }
        }
        !self.stopped
    }
    pub(crate) fn stopped(&self) -> bool {
        self.stopped
    }
    /// The deadline and stop flag, for the proof checker.
    pub(crate) fn clock(&self) -> verify::Clock {
        verify::Clock {
            deadline: self.deadline,
            stop: self.stop.clone(),
        }
    }
    /// Reads the clock and the stop flag now, whatever the node count: for loops whose single
    /// step is expensive (a strategy replay, a sub-search) and that tick too rarely to reach the
    /// every-256-nodes check.
    pub(crate) fn check_now(&mut self) -> bool {
        if !self.stopped
            && (self.deadline.is_some_and(|d| Instant::now() >= d)
                || self
                    .stop
                    .as_ref()
                    .is_some_and(|s| s.load(Ordering::Relaxed)))
        {
            self.stopped = true;
        }
        !self.stopped
    }
    /// A share of what is left: `num/den` of the nodes and of the time.
    pub(crate) fn share(&self, num: u64, den: u64) -> Limits {
        let left = self.max.saturating_sub(self.used);
        let max = if left == u64::MAX {
            left
        } else {
            (left as u128 * num as u128 / den as u128) as u64
        };
        let deadline = self.deadline.map(|d| {
            let now = Instant::now();
            now + d
                .saturating_duration_since(now)
                .mul_f64(num as f64 / den as f64)
        });
        Limits {
            used: 0,
            max,
            deadline,
            stop: self.stop.clone(),
            stopped: self.stopped || max == 0,
        }
    }
    /// At most `n` of the nodes left, with the same deadline and stop flag: a bounded probe
    /// (a VCF inside the VCT) whose running out says nothing about the caller's budget.
    pub(crate) fn capped(&self, n: u64) -> Limits {
        let max = n.min(self.max.saturating_sub(self.used));
        Limits {
            used: 0,
            max,
            deadline: self.deadline,
            stop: self.stop.clone(),
            stopped: self.stopped || max == 0,
        }
    }
    /// Adds what a share spent to this budget.
    pub(crate) fn absorb(&mut self, child: &Limits) {
        self.used = self.used.saturating_add(child.used);
        if self.used >= self.max {
            self.stopped = true;
        }
        // The share may have stopped on the deadline or the stop flag, which are this budget's too.
        self.check_now();
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WinKind {
    Vcf,
    Vct,
}

/// A verified forced win.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    pub attacker: Color,
    pub kind: WinKind,
    /// The main line, attacker first, alternating, ending in the attacker's five.
    pub line: Vec<Pos>,
    /// The attacker's move in every position of the proof tree that needs one.
    pub strategy: Strategy,
}

/// What one prover said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Solve {
    /// A forced win, already checked by the verifier.
    Win(Proof),
    /// None exists (VCF: exhaustive; VCT: none within the search's depth cap), or the game is
    /// already over / the board is full.
    NoWin,
    /// The budget ran out first.
    Unknown,
}

/// Work done, for reports and benches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// All nodes, including defence searches.
    pub nodes: u64,
    pub vcf_nodes: u64,
    pub vcf_time: Duration,
    pub vct_nodes: u64,
    pub vct_time: Duration,
    /// Wins a search claimed that the verifier rejected (never announced; should stay 0).
    pub rejected: u64,
}

/// The tactical verdict at the root, for the side to move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootTactics {
    /// This move makes a five.
    WinNow(Pos),
    /// A verified forced win; play `line[0]`.
    ForcedWin { line: Vec<Pos>, kind: WinKind },
    /// The opponent threatens a five or has a forced win (VCF, or a VCT found within budget): only
    /// these moves may avoid losing. The list drops only moves proven to lose; a non-empty list
    /// may still contain losing moves whose refutation the budget did not reach.
    MustBlock(Vec<Pos>),
    /// Every legal move loses by force (proven).
    Lost,
    /// A five is already on the board: the game is over.
    GameOver { winner: Color },
    /// The side to move has no legal move (full board, or only renju-forbidden points left).
    NoMoves,
    /// No verdict within the budget.
    Unknown,
}

/// Root analysis for the side to move. See `analyse`.
pub fn analyse_root(board: &Board, budget: Budget) -> RootTactics {
    analyse(board, board.side_to_move(), budget).tactics
}

/// What the threat searches of one game have learnt, kept for the analyses of its later moves: the
/// VCT tables (solved positions, winning moves, VCF refutations) of each attacker colour. A
/// position's verdict belongs to its stones and its mover, so what one move proved still holds
/// two plies later, where the game has usually walked into the same lines: a win found last move
/// is found again at once instead of searched anew. Any position of any game may be looked up in
/// it, as long as the rule and the board size stay those it was learnt on (it forgets everything
/// when they change); a new game may clear it to free the memory.
#[derive(Default)]
pub struct Memory {
    vct: [vct::VctTables; 2],
    /// The rule and board size (width, height) the tables were learnt on.
    learnt_on: Option<(Rule, usize, usize)>,
}

impl Memory {
    /// Entries kept between moves, all tables together (about 10 MB): an analysis that leaves
    /// more clears the memory, so that the tree search after it has the memory the engine set
    /// aside for it (a long analysis may learn millions of positions while it runs, as before).
    pub const MAX_ENTRIES: usize = 1 << 18;

    /// Entries held, all tables together.
    pub fn entries(&self) -> usize {
        self.vct.iter().map(vct::VctTables::len).sum()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        *self = Memory::default();
    }
}

/// `analyse` with `memory`, the same game's earlier analyses: searched positions are looked up
/// there and what this analysis learns is added (and all of it dropped when that makes more than
/// `Memory::MAX_ENTRIES`). The verdict is the same kind of verdict; proofs found through the
/// memory are verified like any other.
pub fn analyse_with(board: &Board, side: Color, budget: Budget, memory: &mut Memory) -> Analysis {
    let game = Some((board.rule(), board.width(), board.height()));
    if memory.learnt_on != game {
        memory.clear();
        memory.learnt_on = game;
    }
    let analysis = analyse_in(board, side, budget, memory);
    if memory.entries() > Memory::MAX_ENTRIES {
        memory.clear();
        memory.learnt_on = game;
    }
    analysis
}

/// `analyse`'s full answer: the verdict, the work done, and the proof behind a `ForcedWin`.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub tactics: RootTactics,
    pub stats: Stats,
    pub proof: Option<Proof>,
}

/// Root analysis for `side` (who moves next), cheapest and most urgent first within `budget`: a
/// five now; our VCF; facing a four, our VCT through the block, else the block; the opponent's
/// VCF; then our VCT and the opponent's in turns; and when the opponent has a win, the defences
/// against it with whatever is left. See `analyse_inner` for the shares.
pub fn analyse(board: &Board, side: Color, budget: Budget) -> Analysis {
    analyse_in(board, side, budget, &mut Memory::default())
}

fn analyse_in(board: &Board, side: Color, budget: Budget, memory: &mut Memory) -> Analysis {
    let mut lim = Limits::new(budget);
    let mut stats = Stats::default();
    let mut proof = None;
    let done = |tactics, stats, proof| Analysis {
        tactics,
        stats,
        proof,
    };
    if lim.stopped() {
        return done(RootTactics::Unknown, stats, proof);
    }
    let mut b = board.clone();
    if let Some(winner) = five_on_board(&b) {
        return done(RootTactics::GameOver { winner }, stats, proof);
    }
    if !b.points().any(|p| legal_for(&b, p, side)) {
        return done(RootTactics::NoMoves, stats, proof);
    }
    if let Some(p) = first_five_point(&b, side) {
        return done(RootTactics::WinNow(p), stats, proof);
    }
    let tactics = analyse_inner(&mut b, side, &mut lim, &mut stats, &mut proof, memory);
    stats.nodes = lim.used;
    done(tactics, stats, proof)
}

/// The stages of `analyse`. The opponent's threats come before our own long VCT: a VCF is
/// exhaustive and usually settled in a few milliseconds, and a defence found in time is worth
/// more than a win found never. The two VCTs then run in slices of growing size, ours first in
/// each round, until one of them is settled; a win of ours ends the analysis, a win of theirs
/// leaves our VCT half of what is left and the defence judging the rest.
fn analyse_inner(
    b: &mut Board,
    side: Color,
    lim: &mut Limits,
    stats: &mut Stats,
    proof: &mut Option<Proof>,
    memory: &mut Memory,
) -> RootTactics {
    let opp = side.opp();
    let [black, white] = &mut memory.vct;
    let (our_tables, their_tables) = if side == Color::Black {
        (black, white)
    } else {
        (white, black)
    };
    let opp_fives = five_points(b, opp);
    if !opp_fives.is_empty() && four_replies(b, opp, &opp_fives).is_empty() {
        return RootTactics::Lost;
    }
    let won = |p: Proof, proof: &mut Option<Proof>| {
        let tactics = RootTactics::ForcedWin {
            line: p.line.clone(),
            kind: p.kind,
        };
        *proof = Some(p);
        tactics
    };
    let vcf = |b: &mut Board, attacker: Color, lim: &mut Limits, stats: &mut Stats| {
        Sliced::new(attacker, WinKind::Vcf).resume(b, lim, (1, 4), stats)
    };
    // Our VCF first: it also covers the case of a four we must block with a four of our own.
    if let Solve::Win(p) = vcf(b, side, lim, stats) {
        return won(p, proof);
    }
    let mut ours = Sliced::new(side, WinKind::Vct);
    // Facing a four every move but the block loses: our VCT starts with the block (so a win that
    // begins by blocking is found), and there is nothing else to judge.
    if !opp_fives.is_empty() {
        if let Solve::Win(p) = ours.resume_sharing(our_tables, b, lim, (1, 1), stats) {
            return won(p, proof);
        }
        return RootTactics::MustBlock(four_replies(b, opp, &opp_fives));
    }
    let mut threat = match vcf(b, opp, lim, stats) {
        Solve::Win(p) => Some(p),
        _ => None,
    };
    if threat.is_none() {
        let mut theirs = Sliced::new(opp, WinKind::Vct);
        // Slices of 1/32, 1/16, … of what is left: about twice the last each round. Ours first
        // in each round: a win of ours ends the analysis whatever they threaten, and found a
        // slice earlier it is played that much sooner.
        for den in [32, 16, 8, 4, 2] {
            if lim.stopped() {
                break;
            }
            match ours.resume_sharing(our_tables, b, lim, (1, den), stats) {
                Solve::Win(p) => return won(p, proof),
                Solve::NoWin => {
                    // Ours is settled: theirs takes half of the rest, the judging the other half.
                    if let Solve::Win(p) =
                        theirs.resume_sharing(their_tables, b, lim, (1, 2), stats)
                    {
                        threat = Some(p);
                    }
                    break;
                }
                Solve::Unknown => {}
            }
            match theirs.resume_sharing(their_tables, b, lim, (1, den), stats) {
                Solve::Win(p) => {
                    threat = Some(p);
                    break;
                }
                Solve::NoWin => break,
                Solve::Unknown => {}
            }
        }
    }
    // A verified VCT of ours has already met every counter-four, so it wins against any threat
    // of the opponent's that is not a four.
    let share = if threat.is_some() { (1, 2) } else { (1, 1) };
    if let Solve::Win(p) = ours.resume_sharing(our_tables, b, lim, share, stats) {
        return won(p, proof);
    }
    match threat {
        Some(threat) => must_block(b, side, &threat, lim, stats, their_tables),
        None => RootTactics::Unknown,
    }
}

/// The root answer to the opponent's verified win: the moves not proven to lose (those that hold
/// and those the budget did not settle), or `Lost` when every move loses. Moves are judged
/// against a VCT whatever the threat's kind: a block that stops a VCF can still lose to threes.
fn must_block(
    b: &mut Board,
    side: Color,
    proof: &Proof,
    lim: &mut Limits,
    stats: &mut Stats,
    tables: &mut vct::VctTables,
) -> RootTactics {
    let moves = defend::judge(b, side, proof, WinKind::Vct, lim, stats, tables).not_lost();
    if moves.is_empty() {
        RootTactics::Lost
    } else {
        RootTactics::MustBlock(moves)
    }
}

/// VCF for `attacker` (moving next): the full verified line, or `None` (no VCF, or the budget ran
/// out). Cheap on quiet positions: one scan of the board when `attacker` cannot make a four.
pub fn vcf(board: &mut Board, attacker: Color, budget: Budget) -> Option<Vec<Pos>> {
    match solve_vcf(board, attacker, budget).0 {
        Solve::Win(p) => Some(p.line),
        _ => None,
    }
}

/// What many VCF searches on related positions (an MCTS search's leaves) proved between them:
/// per attacker colour, the positions it has no VCF from. That is a fact of the stones, whatever
/// led to them, so a search that meets such a position again skips it and spends its budget
/// elsewhere. The leaves' small share of `Memory`: it forgets everything when the rule or the
/// board size changes (the hashes do not say which).
#[derive(Clone, Debug, Default)]
pub struct VcfMemory {
    refuted: [vcf::ZobristSet; 2],
    /// The rule and board size (width, height) the refutations were learnt on.
    learnt_on: Option<(Rule, usize, usize)>,
}

impl VcfMemory {
    /// Positions per colour past which that colour's memory starts over (a few MB at most).
    const CAP: usize = 1 << 18;
}

/// `vcf`, starting from and adding to `memory`'s refutations for `attacker`.
pub fn vcf_remembering(
    board: &mut Board,
    attacker: Color,
    budget: Budget,
    memory: &mut VcfMemory,
) -> Option<Vec<Pos>> {
    let on = Some((board.rule(), board.width(), board.height()));
    if memory.learnt_on != on {
        *memory = VcfMemory {
            learnt_on: on,
            ..VcfMemory::default()
        };
    }
    let refuted = &mut memory.refuted[attacker.index()];
    if refuted.len() > VcfMemory::CAP {
        refuted.clear();
    }
    let mut lim = Limits::new(budget);
    let mut stats = Stats::default();
    match solve_remembering(board, attacker, WinKind::Vcf, &mut lim, &mut stats, refuted) {
        Solve::Win(p) => Some(p.line),
        _ => None,
    }
}

/// VCT for `attacker` (moving next): the main line of a verified win, or `None`.
pub fn vct(board: &mut Board, attacker: Color, budget: Budget) -> Option<Vec<Pos>> {
    match solve_vct(board, attacker, budget).0 {
        Solve::Win(p) => Some(p.line),
        _ => None,
    }
}

/// VCF with the whole proof and the work done. `board` is unchanged on return.
pub fn solve_vcf(board: &mut Board, attacker: Color, budget: Budget) -> (Solve, Stats) {
    let mut lim = Limits::new(budget);
    let mut stats = Stats::default();
    let r = solve_with(board, attacker, WinKind::Vcf, &mut lim, &mut stats);
    stats.nodes = lim.used;
    (r, stats)
}

/// VCT (which includes every VCF) with the whole proof and the work done.
pub fn solve_vct(board: &mut Board, attacker: Color, budget: Budget) -> (Solve, Stats) {
    let mut lim = Limits::new(budget);
    let mut stats = Stats::default();
    let r = solve_with(board, attacker, WinKind::Vct, &mut lim, &mut stats);
    stats.nodes = lim.used;
    (r, stats)
}

/// The moves for `side` (moving next) not proven to lose against `proof`, the opponent's forced
/// win: after them the opponent has no win of the same kind, or the budget did not settle it.
/// `defences` tells the two apart.
pub fn refutations(board: &Board, side: Color, proof: &Proof, budget: Budget) -> Vec<Pos> {
    let mut lim = Limits::new(budget);
    let mut stats = Stats::default();
    defend::judge(
        &mut board.clone(),
        side,
        proof,
        proof.kind,
        &mut lim,
        &mut stats,
        &mut vct::VctTables::default(),
    )
    .not_lost()
}

pub(crate) fn solve_with(
    b: &mut Board,
    a: Color,
    kind: WinKind,
    lim: &mut Limits,
    stats: &mut Stats,
) -> Solve {
    solve_remembering(b, a, kind, lim, stats, &mut vcf::ZobristSet::default())
}

/// `solve_with`, its VCF starting from the positions `refuted` already holds for `a` and adding
/// those it refutes.
fn solve_remembering(
    b: &mut Board,
    a: Color,
    kind: WinKind,
    lim: &mut Limits,
    stats: &mut Stats,
    refuted: &mut vcf::ZobristSet,
) -> Solve {
    if !lim.tick() {
        return Solve::Unknown;
    }
    if five_on_board(b).is_some() || b.is_full() {
        return Solve::NoWin;
    }
    if let Some(p) = first_five_point(b, a) {
        let proof = Proof {
            attacker: a,
            kind: WinKind::Vcf,
            line: vec![p],
            strategy: Strategy::new(),
        };
        return Solve::Win(proof);
    }
    if kind == WinKind::Vct {
        let clock = lim.clock();
        return vct_slice(&mut vct::VctSearch::new(a), b, a, lim, clock, stats)
            .unwrap_or(Solve::Unknown);
    }
    let (start, used_before) = (Instant::now(), lim.used);
    let mut s = vcf::VcfSearch::with_refuted(a, lim, std::mem::take(refuted));
    let searched = match s.root(b) {
        vcf::Res::Win => Some(Some(std::mem::take(&mut s.strategy))),
        vcf::Res::Fail => Some(None),
        vcf::Res::Abort => None,
    };
    *refuted = s.into_refuted();
    count_work(stats, kind, lim.used - used_before, start.elapsed());
    match searched {
        None => Solve::Unknown,
        Some(None) => Solve::NoWin,
        Some(Some(strategy)) => checked_proof(b, a, kind, &strategy, lim.clock(), stats),
    }
}

/// One run of `search` (a VCT for `a`, kept between runs) within `lim`, its win checked within
/// `verify_clock`: `None` while undecided (the budget ran out, or the clock ran out while
/// verifying a win the kept tree will offer again), else the verdict. A proof the verifier
/// rejects is final: `Solve::Unknown`.
fn vct_slice(
    search: &mut vct::VctSearch,
    b: &mut Board,
    a: Color,
    lim: &mut Limits,
    verify_clock: verify::Clock,
    stats: &mut Stats,
) -> Option<Solve> {
    let (start, used_before) = (Instant::now(), lim.used);
    let found = search.run(b, lim);
    count_work(stats, WinKind::Vct, lim.used - used_before, start.elapsed());
    match found {
        vct::VctResult::Unknown => None,
        vct::VctResult::NoWin => Some(Solve::NoWin),
        vct::VctResult::Win => {
            let rejected = stats.rejected;
            match checked_proof(
                b,
                a,
                WinKind::Vct,
                &search.tables.strategy,
                verify_clock,
                stats,
            ) {
                Solve::Unknown if stats.rejected == rejected => None,
                verdict => Some(verdict),
            }
        }
    }
}

/// Adds one search's nodes and time to the counts of its kind.
fn count_work(stats: &mut Stats, kind: WinKind, nodes: u64, time: Duration) {
    match kind {
        WinKind::Vcf => {
            (stats.vcf_nodes, stats.vcf_time) = (stats.vcf_nodes + nodes, stats.vcf_time + time)
        }
        WinKind::Vct => {
            (stats.vct_nodes, stats.vct_time) = (stats.vct_nodes + nodes, stats.vct_time + time)
        }
    }
}

/// A prover's winning strategy for `a` from `b`, turned into a `Proof` once the verifier has
/// replayed it against every defence; a strategy the verifier refutes is counted and dropped. The
/// proof keeps only the entries the verifier followed.
fn checked_proof(
    b: &mut Board,
    a: Color,
    kind: WinKind,
    strategy: &Strategy,
    clock: verify::Clock,
    stats: &mut Stats,
) -> Solve {
    let line = principal_line(b, a, strategy);
    let (verdict, strategy) = verify::verify_extract(b, a, strategy, clock);
    match verdict {
        // Out of time: nothing claimed, nothing rejected.
        verify::Check::OutOfTime => return Solve::Unknown,
        verify::Check::Refuted => {
            stats.rejected += 1;
            return Solve::Unknown;
        }
        verify::Check::Verified if !line_reaches_five(b, a, &line) => {
            stats.rejected += 1;
            return Solve::Unknown;
        }
        verify::Check::Verified => {}
    }
    // A VCT whose main line is all fours is reported as what it is.
    let kind = if kind == WinKind::Vct && is_all_fours(b, a, &line) {
        WinKind::Vcf
    } else {
        kind
    };
    Solve::Win(Proof {
        attacker: a,
        kind,
        line,
        strategy,
    })
}

/// A search for one attacker's win run in slices, each taking up where the last stopped: the VCT
/// keeps its tree; a VCF (cheap, exhaustive) simply runs again with the larger slice.
pub(crate) struct Sliced {
    attacker: Color,
    kind: WinKind,
    vct: Option<vct::VctSearch>,
    verdict: Option<Solve>,
}

impl Sliced {
    pub(crate) fn new(attacker: Color, kind: WinKind) -> Sliced {
        let vct = (kind == WinKind::Vct).then(|| vct::VctSearch::new(attacker));
        Sliced {
            attacker,
            kind,
            vct,
            verdict: None,
        }
    }

    /// `resume` with `tables` (see `vct::VctTables`) in place of the search's own: what other
    /// searches for the same attacker learnt is used, and what this one learns is added.
    pub(crate) fn resume_sharing(
        &mut self,
        tables: &mut vct::VctTables,
        b: &mut Board,
        lim: &mut Limits,
        share: (u64, u64),
        stats: &mut Stats,
    ) -> Solve {
        if let Some(search) = &mut self.vct {
            std::mem::swap(&mut search.tables, tables);
        }
        let verdict = self.resume(b, lim, share, stats);
        if let Some(search) = &mut self.vct {
            std::mem::swap(&mut search.tables, tables);
        }
        verdict
    }

    /// Searches on from `b` (the same position every call) within `share` of what `lim` has
    /// left; the verdict once there is one (`Solve::Unknown` while the search goes on).
    pub(crate) fn resume(
        &mut self,
        b: &mut Board,
        lim: &mut Limits,
        (num, den): (u64, u64),
        stats: &mut Stats,
    ) -> Solve {
        if let Some(v) = &self.verdict {
            return v.clone();
        }
        let mut share = lim.share(num, den);
        let verdict = match &mut self.vct {
            None => match solve_with(b, self.attacker, self.kind, &mut share, stats) {
                Solve::Unknown => None,
                settled => Some(settled),
            },
            // A win the prover found is checked on the whole budget's clock, not the slice's:
            // the check settles the analysis, and each slice would otherwise start it over (a
            // 9-ply VCT on 20x20 is found in 3 k nodes, and replaying it against every reply
            // takes longer than each of a 1 s budget's slices).
            Some(search) => vct_slice(search, b, self.attacker, &mut share, lim.clock(), stats),
        };
        lim.absorb(&share);
        self.verdict = verdict.clone();
        verdict.unwrap_or(Solve::Unknown)
    }
}

/// Does every attacker move of `line` make a four or five?
fn is_all_fours(board: &Board, a: Color, line: &[Pos]) -> bool {
    let mut b = board.clone();
    let mut c = a;
    for &m in line {
        if c == a && b.threats(m, a).fours() == 0 && !b.makes_five(m, a) {
            return false;
        }
        b.place_unchecked(m, c);
        c = c.opp();
    }
    true
}

/// The main line of a proof: the attacker follows the strategy (or a five / winning four), the
/// defender takes the first reply that the proof had to answer (else any stop, else any move).
fn principal_line(b: &mut Board, a: Color, strategy: &Strategy) -> Vec<Pos> {
    let d = a.opp();
    let mut line = Vec::new();
    for _ in 0..b.width() * b.height() {
        // Attacker.
        let m = if let Some(f) = first_five_point(b, a) {
            Some(f)
        } else {
            strategy
                .get(&b.hash())
                .copied()
                .or_else(|| winning_fours(b, a).first().copied())
        };
        let Some(m) = m.filter(|&m| legal_for(b, m, a)) else {
            break;
        };
        b.place_unchecked(m, a);
        line.push(m);
        if b.is_five_at(m) {
            break;
        }
        // Defender: a reply the strategy covers, else a block, else any legal move.
        let fives = five_points(b, a);
        let mut cands = if fives.is_empty() {
            let mut c = Vec::new();
            for w in winning_fours(b, a) {
                line_cells(b, w, &mut c);
            }
            c.extend(
                b.points_making(d, Pattern::Block4)
                    .filter(|&p| b.threats(p, d).fours() > 0),
            );
            c
        } else {
            let mut r = four_replies(b, a, &fives);
            r.extend(fives.iter().copied());
            r
        };
        cands.sort_unstable();
        cands.dedup();
        cands.retain(|&r| legal_for(b, r, d));
        let covered = cands.iter().copied().find(|&r| {
            b.place_unchecked(r, d);
            let hit = strategy.contains_key(&b.hash());
            b.undo();
            hit
        });
        let reply = covered
            .or(cands.first().copied())
            .or_else(|| b.points().find(|&p| legal_for(b, p, d)));
        let Some(r) = reply else { break };
        b.place_unchecked(r, d);
        line.push(r);
        if b.is_five_at(r) {
            break;
        }
    }
    for _ in 0..line.len() {
        b.undo();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A win the VCT finds within its slice is verified on the whole budget's clock. Checking
    /// `mined-freestyle-20-327-26`'s 9-ply VCT (found in about 3 k nodes, a few ms) means
    /// replaying it against every reply to each three on 20x20: about 100-200 ms here, far more
    /// than this slice's 20 ms (a 1,024th of 20 s) and far less than the 20 s. On the slice's
    /// clock the check ran out, and every later slice started it over.
    #[test]
    fn a_win_found_in_a_slice_is_verified_on_the_whole_clock() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/tactics-mined/mined.txt"
        );
        let suite = suite::parse(&std::fs::read_to_string(path).unwrap()).unwrap();
        let pos = suite
            .into_iter()
            .find(|p| p.name == "mined-freestyle-20-327-26")
            .unwrap();
        let mut b = pos.board.clone();
        let mut lim = Limits::new(Budget::nodes_and_time(10_000_000, Duration::from_secs(20)));
        let mut stats = Stats::default();
        let verdict =
            Sliced::new(pos.to_move, WinKind::Vct).resume(&mut b, &mut lim, (1, 1024), &mut stats);
        assert!(
            matches!(verdict, Solve::Win(_)),
            "{verdict:?} after {} VCT nodes in {:?}",
            stats.vct_nodes,
            stats.vct_time
        );
    }
}
