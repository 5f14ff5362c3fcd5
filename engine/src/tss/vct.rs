//! VCT (victory by continuous threats): the attacker plays fours and threes (any move after which
//! it holds a winning four), the defender answers with every move that stops the threat, counter
//! fours included. Best-first proof-number search over an explicit DAG: a position reached again
//! by another order of threats shares the children of its first expansion. A table of solved
//! positions (zobrist hash -> proven / disproven) is shared across searches when the caller passes
//! the tables on (`VctTables`).
//!
//! Depends on `game`, the threat vocabulary and `vcf`'s hashing helpers; not on the verifier.

use std::collections::HashMap;

use super::threat::{
    first_five_point, five_points, four_replies, is_winning_four, legal_for_mut, line_cells,
    winning_fours,
};
use super::vcf::{self, ZobristHasher, ZobristSet};
use super::{Limits, Strategy};
use crate::game::{Board, CELLS, Color, Pattern, Pos, Rule};

const INF: u32 = u32::MAX / 4;
/// Tree size cap (24 bytes a node): bounds memory whatever the node budget says.
const MAX_TREE: usize = 4_000_000;

#[derive(Clone, Copy)]
struct Node {
    mv: Pos,
    pn: u32,
    dn: u32,
    first: u32,
    len: u32,
    expanded: bool,
}

/// What expanding a node found.
enum Expansion {
    Proven,
    Disproven,
    /// The moves to try, each with its initial proof number (how hard it looks to prove).
    Children(Vec<(Pos, u32)>),
    /// The position is expanded at this other node: share its children.
    Twin(usize),
    /// Not expanded: the selection stopped at a node to bring it up to date.
    Stale,
}

/// Nodes a VCF probe inside the VCT may spend (the attacker's at an OR node, the defender's at
/// an AND node): enough for the VCFs that matter, small against a VCT node's own cost.
const VCF_PROBE_NODES: u64 = 400;

/// What a VCT learns about positions, whatever the root it started from: a position's verdict
/// belongs to its stones alone, so searches for the same attacker from neighbouring roots (the
/// defences `defend::judge` weighs: one defence's lines transpose into another's) can pass one
/// set of tables between them.
///
/// A position's stones alone do not say who moves: the opponent's threat at the root is searched
/// as if it moved next, so one set of stones can be an attacker-to-move position in one search and
/// a defender-to-move one in another. `solved` therefore keys by stones and mover
/// (`solved_key`); the strategy and the VCF refutations hold only positions whose mover they
/// imply (the attacker's; the probing colour's).
#[derive(Default)]
pub(crate) struct VctTables {
    solved: HashMap<u64, bool, std::hash::BuildHasherDefault<ZobristHasher>>,
    /// Winning attacker move per proven position (attacker to move).
    pub(crate) strategy: Strategy,
    /// Positions refuted by the VCF probes, per probing colour: the probes of sibling and
    /// transposed nodes meet the same lines again.
    vcf_refuted: [ZobristSet; 2],
}

impl VctTables {
    /// Entries held, all tables together (what keeping them costs).
    pub(crate) fn len(&self) -> usize {
        self.solved.len()
            + self.strategy.len()
            + self.vcf_refuted.iter().map(|s| s.len()).sum::<usize>()
    }
}

/// The `solved` key of the position with hash `hash` and `mover` to move.
#[inline]
fn solved_key(hash: u64, mover: Color) -> u64 {
    const WHITE_TO_MOVE: u64 = 0x9E37_79B9_7F4A_7C15;
    if mover == Color::White {
        hash ^ WHITE_TO_MOVE
    } else {
        hash
    }
}

pub(crate) struct VctSearch {
    a: Color,
    /// The budget of the `run` in progress (swapped in and out by it).
    lim: Limits,
    nodes: Vec<Node>,
    /// The expanded node of each position in the tree (by its stones: within one search they also
    /// say who moves). A leaf whose position was expanded elsewhere shares that node's children
    /// instead of growing its own copy, so the tree is a DAG: the attacker's threats come in many
    /// orders, and without this most expansions repeated a position already in the tree.
    expanded_at: HashMap<u64, u32, std::hash::BuildHasherDefault<ZobristHasher>>,
    pub(crate) tables: VctTables,
    /// Attacker moves along one line at most; keeps a runaway branch from eating the budget.
    max_depth: usize,
}

pub(crate) enum VctResult {
    Win,
    NoWin,
    Unknown,
}

impl VctSearch {
    pub(crate) fn new(a: Color) -> Self {
        VctSearch {
            a,
            lim: Limits::new(super::Budget::nodes(0)),
            nodes: Vec::new(),
            expanded_at: HashMap::default(),
            tables: VctTables::default(),
            max_depth: 40,
        }
    }

    /// Proof-number search from `b`, attacker to move, within `lim`. The tree is kept: a later
    /// `run` on the same position goes on where this one stopped, so a search can be given its
    /// time in slices (see `tss::analyse`) without repeating work.
    pub(crate) fn run(&mut self, b: &mut Board, lim: &mut Limits) -> VctResult {
        std::mem::swap(&mut self.lim, lim);
        let result = self.search(b);
        std::mem::swap(&mut self.lim, lim);
        result
    }

    /// After each expansion the proof numbers are backed up only as far as they change: the next
    /// most-proving leaf lies below the first ancestor that did not change (Allis' current-node
    /// rule), so the search does not replay the path from the root every time.
    fn search(&mut self, b: &mut Board) -> VctResult {
        if self.nodes.is_empty() {
            self.nodes.push(Node {
                mv: Pos::NONE,
                pn: 1,
                dn: 1,
                first: 0,
                len: 0,
                expanded: false,
            });
        }
        // Node indices from the root to the node the board is at.
        let mut path: Vec<u32> = Vec::with_capacity(64);
        path.push(0);
        let result = loop {
            if self.nodes[0].pn == 0 {
                break VctResult::Win;
            }
            if self.nodes[0].dn == 0 {
                break VctResult::NoWin;
            }
            if !self.lim.tick() {
                break VctResult::Unknown;
            }
            // Select the most-proving leaf below the current node, playing its moves. A node whose
            // shared children moved on through another parent is stale: it is brought up to date
            // and backed up instead of descended from.
            let mut n = path[path.len() - 1] as usize;
            let mut stale = false;
            while self.nodes[n].expanded {
                let or = path.len() % 2 == 1;
                let before = (self.nodes[n].pn, self.nodes[n].dn);
                self.update(n, or, b);
                if before != (self.nodes[n].pn, self.nodes[n].dn) {
                    stale = true;
                    break;
                }
                let node = self.nodes[n];
                let kids = node.first as usize..(node.first + node.len) as usize;
                let best = kids
                    .clone()
                    .min_by_key(|&c| {
                        if or {
                            self.nodes[c].pn
                        } else {
                            self.nodes[c].dn
                        }
                    })
                    .unwrap_or(kids.start);
                let colour = if or { self.a } else { self.a.opp() };
                b.place_unchecked(self.nodes[best].mv, colour);
                path.push(best as u32);
                n = best;
            }
            let or = path.len() % 2 == 1;
            let key = b.hash();
            let mover = if or { self.a } else { self.a.opp() };
            let exp = if stale {
                Expansion::Stale
            } else if let Some(t) = self
                .expanded_at
                .get(&key)
                .map(|&t| t as usize)
                .filter(|&t| t != n)
            {
                Expansion::Twin(t)
            } else if let Some(&won) = self.tables.solved.get(&solved_key(key, mover)) {
                if won {
                    Expansion::Proven
                } else {
                    Expansion::Disproven
                }
            } else if path.len() / 2 >= self.max_depth {
                Expansion::Disproven
            } else if or {
                self.expand_or(b)
            } else {
                self.expand_and(b)
            };
            match exp {
                Expansion::Stale => {}
                Expansion::Twin(t) => {
                    let (first, len) = (self.nodes[t].first, self.nodes[t].len);
                    let node = &mut self.nodes[n];
                    node.first = first;
                    node.len = len;
                    node.expanded = true;
                }
                Expansion::Proven => self.set(n, 0, INF),
                Expansion::Disproven => self.set(n, INF, 0),
                Expansion::Children(moves) => {
                    if !self.lim.charge(moves.len() as u64)
                        || self.nodes.len() + moves.len() > MAX_TREE
                    {
                        break VctResult::Unknown;
                    }
                    let first = self.nodes.len() as u32;
                    let colour = if or { self.a } else { self.a.opp() };
                    for (m, pn) in moves {
                        let (pn, dn) = match self
                            .tables
                            .solved
                            .get(&solved_key(b.hash_after(m, colour), colour.opp()))
                        {
                            Some(true) => (0, INF),
                            Some(false) => (INF, 0),
                            None => (pn, 1),
                        };
                        self.nodes.push(Node {
                            mv: m,
                            pn,
                            dn,
                            first: 0,
                            len: 0,
                            expanded: false,
                        });
                    }
                    let len = self.nodes.len() as u32 - first;
                    let node = &mut self.nodes[n];
                    node.first = first;
                    node.len = len;
                    node.expanded = true;
                    self.expanded_at.insert(key, n as u32);
                }
            }
            // Back up: the leaf always, then each ancestor until one keeps its numbers.
            loop {
                let depth = path.len() - 1;
                let i = path[depth] as usize;
                let before = (self.nodes[i].pn, self.nodes[i].dn);
                self.update(i, depth.is_multiple_of(2), b);
                let changed = before != (self.nodes[i].pn, self.nodes[i].dn);
                if depth == 0 || (i != n && !changed) {
                    break;
                }
                path.pop();
                b.undo();
            }
        };
        for _ in 1..path.len() {
            b.undo();
        }
        result
    }

    fn set(&mut self, n: usize, pn: u32, dn: u32) {
        self.nodes[n].pn = pn;
        self.nodes[n].dn = dn;
        self.nodes[n].expanded = false;
    }

    /// Recomputes a node from its children; records solved positions and winning moves.
    fn update(&mut self, i: usize, or: bool, b: &Board) {
        let node = self.nodes[i];
        if node.expanded {
            let kids = &self.nodes[node.first as usize..(node.first + node.len) as usize];
            let (pn, dn) = if kids.is_empty() {
                if or { (INF, 0) } else { (0, INF) }
            } else if or {
                let pn = kids.iter().map(|k| k.pn).min().unwrap_or(INF);
                let dn = kids
                    .iter()
                    .fold(0u32, |s, k| s.saturating_add(k.dn))
                    .min(INF);
                (pn, dn)
            } else {
                let pn = kids
                    .iter()
                    .fold(0u32, |s, k| s.saturating_add(k.pn))
                    .min(INF);
                let dn = kids.iter().map(|k| k.dn).min().unwrap_or(INF);
                (pn, dn)
            };
            if or
                && pn == 0
                && let Some(k) = kids.iter().find(|k| k.pn == 0)
            {
                self.tables.strategy.insert(b.hash(), k.mv);
            }
            self.nodes[i].pn = pn;
            self.nodes[i].dn = dn;
        }
        let node = self.nodes[i];
        let key = solved_key(b.hash(), if or { self.a } else { self.a.opp() });
        if node.pn == 0 {
            self.tables.solved.insert(key, true);
        } else if node.dn == 0 {
            self.tables.solved.insert(key, false);
        }
    }

    /// Runs a bounded VCF for `attacker` from `b`: `Some(strategy)` when it wins, `None` when it
    /// does not or the probe ran out.
    fn vcf_probe(&mut self, b: &mut Board, attacker: Color) -> Option<Strategy> {
        let mut probe = self.lim.capped(VCF_PROBE_NODES);
        let refuted = std::mem::take(&mut self.tables.vcf_refuted[attacker.index()]);
        let mut s = vcf::VcfSearch::with_refuted(attacker, &mut probe, refuted);
        let win = s.root(b) == vcf::Res::Win;
        let strategy = std::mem::take(&mut s.strategy);
        self.tables.vcf_refuted[attacker.index()] = s.into_refuted();
        self.lim.absorb(&probe);
        win.then_some(strategy)
    }

    /// Attacker to move: a five or a winning four wins; a defender five-point must be stopped; a
    /// VCF wins; otherwise every move that makes a four or a three.
    fn expand_or(&mut self, b: &mut Board) -> Expansion {
        let (a, d) = (self.a, self.a.opp());
        if first_five_point(b, a).is_some() {
            return Expansion::Proven;
        }
        let dfives = five_points(b, d);
        if !dfives.is_empty() {
            let stops: Vec<Pos> = if b.rule() != Rule::Caro {
                match dfives.as_slice() {
                    [f] if legal_for_mut(b, *f, a) => vec![*f],
                    _ => Vec::new(),
                }
            } else {
                let mut cands = Vec::new();
                for &f in &dfives {
                    line_cells(b, f, &mut cands);
                }
                cands.sort_unstable();
                cands.dedup();
                cands
                    .into_iter()
                    .filter(|&m| {
                        legal_for_mut(b, m, a) && {
                            b.place_unchecked(m, a);
                            let ok = first_five_point(b, d).is_none();
                            b.undo();
                            ok
                        }
                    })
                    .collect()
            };
            return if stops.is_empty() {
                Expansion::Disproven
            } else {
                Expansion::Children(stops.into_iter().map(|m| (m, 1)).collect())
            };
        }
        // The verifier and the main line find a winning four on the board themselves.
        if !winning_fours(b, a).is_empty() {
            return Expansion::Proven;
        }
        if let Some(strategy) = self.vcf_probe(b, a) {
            self.tables.strategy.extend(strategy);
            return Expansion::Proven;
        }
        let mut scored: Vec<(i32, Pos, u32)> = Vec::new();
        // Renju white may also threaten a four whose block black cannot play (from a blocked three).
        let white_trick = b.rule() == Rule::Renju && a == Color::White;
        let weakest = if white_trick {
            Pattern::Block3
        } else {
            Pattern::Flex3
        };
        let points: Vec<Pos> = b.points_making(a, weakest).collect();
        for p in points {
            let t = b.threats(p, a);
            let fours = t.fours();
            let threes = t.count(Pattern::Flex3);
            let white_trick = white_trick && t.count(Pattern::Block3) > 0;
            if fours == 0 && threes == 0 && !white_trick {
                continue;
            }
            if !legal_for_mut(b, p, a) {
                continue;
            }
            let mut score = i32::from(fours) * 100 + threes as i32 * 120;
            for pat in t.patterns {
                score += match pat {
                    Pattern::Block3 => 30,
                    Pattern::Flex2 => 20,
                    Pattern::Block2 => 5,
                    _ => 0,
                };
            }
            // Every child starts at proof number 1, threes as well as fours (since 7a5b668, with
            // the other VCT changes that halved the suite's times); the score above orders them.
            scored.push((score, p, 1));
        }
        scored.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        Expansion::Children(scored.into_iter().map(|(_, p, pn)| (p, pn)).collect())
    }

    /// Defender to move: a five of its own refutes; a four must be stopped; a threat (a winning
    /// four for the attacker next move) must be stopped or answered by a counter-four, and a VCF
    /// of the defender's own refutes it; no threat means the attack has run out.
    fn expand_and(&mut self, b: &mut Board) -> Expansion {
        let (a, d) = (self.a, self.a.opp());
        if first_five_point(b, d).is_some() {
            return Expansion::Disproven;
        }
        let fives = five_points(b, a);
        if !fives.is_empty() {
            let replies = four_replies(b, a, &fives);
            return if replies.is_empty() {
                Expansion::Proven
            } else {
                Expansion::Children(replies.into_iter().map(|m| (m, 1)).collect())
            };
        }
        let threats = winning_fours(b, a);
        if threats.is_empty() {
            return Expansion::Disproven;
        }
        // The attacker's threat is not a four: a defender with continuous fours wins first.
        if self.vcf_probe(b, d).is_some() {
            return Expansion::Disproven;
        }
        // Moves that could touch a threat: every point of their lines, plus counter-fours; renju
        // white's forbidden-block threats depend on black's whole neighbourhood, so try everything.
        let whole_board = b.rule() == Rule::Renju && a == Color::White;
        let counter_fours: Vec<Pos> = b
            .points_making(d, Pattern::Block4)
            .filter(|&p| b.threats(p, d).fours() > 0)
            .collect();
        let mut cands = Vec::new();
        if whole_board {
            cands.extend(b.points().filter(|&p| b.is_empty(p)));
        } else {
            for &w in &threats {
                line_cells(b, w, &mut cands);
            }
            cands.extend(&counter_fours);
            cands.sort_unstable();
            cands.dedup();
        }
        // A straight or double four wins whatever stands off its lines (its five-points are its
        // own): a move off the lines of any such threat stops nothing unless it makes a four. This
        // keeps renju white's whole-board list to the few points that matter.
        let robust: Vec<Pos> = threats
            .iter()
            .copied()
            .filter(|&p| b.threats(p, a).unstoppable_four())
            .collect();
        if !robust.is_empty() {
            let mut on_lines = vec![0u8; CELLS];
            let mut cells = Vec::new();
            for &p in &robust {
                cells.clear();
                line_cells(b, p, &mut cells);
                for q in &cells {
                    on_lines[q.index()] += 1;
                }
            }
            cands.retain(|m| {
                on_lines[m.index()] as usize == robust.len() || counter_fours.contains(m)
            });
        }
        // Attacker cells that may still be (or become) winning fours after a defender stone.
        // The threats standing now come first: a move that stops nothing fails on the first one.
        let mut four_cells = threats.clone();
        four_cells.extend(
            b.points_making(a, Pattern::Block4)
                .filter(|&p| b.threats(p, a).fours() > 0 && !threats.contains(&p)),
        );
        let mut defences = Vec::new();
        for m in cands {
            if !legal_for_mut(b, m, d) {
                continue;
            }
            let counter_four = b.threats(m, d).fours() > 0;
            b.place_unchecked(m, d);
            let stops = counter_four
                || !four_cells
                    .iter()
                    .any(|&p| p != m && is_winning_four(b, p, a));
            b.undo();
            if stops {
                defences.push((m, 1));
            }
        }
        Expansion::Children(defences)
    }
}
