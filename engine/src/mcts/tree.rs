//! The search tree as two flat arenas: nodes (visited positions) and edges (moves with priors).
//!
//! A node's moves are one contiguous `u32` range of edges; an edge points at its child node only
//! once the child has been selected, so an expansion costs 8 bytes per legal move and 24 more per
//! visited child. Memory is counted by capacity against a byte budget: when the budget is spent
//! the tree stops growing (`full`), and `prune` makes room in place by folding up the least
//! visited nodes, so a search can go on until its time is spent.
//!
//! Pure data and arithmetic: no boards, no evaluators, no threads (callers hold the lock).

use crate::game::Pos;

/// Child index meaning "no node yet". Node 0 is always the root, which is never a child.
pub(crate) const NO_NODE: u32 = 0;

/// A proven game-theoretic result, for the side to move at the root unless said otherwise (in
/// the tree: for the player who moved into the node). Ordered worst to best.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Proven {
    Loss,
    Draw,
    Win,
}

impl Proven {
    /// The same result seen by the other player.
    pub fn flip(self) -> Proven {
        match self {
            Proven::Win => Proven::Loss,
            Proven::Loss => Proven::Win,
            Proven::Draw => Proven::Draw,
        }
    }

    /// The value it stands for, in [-1, 1].
    pub fn value(self) -> f32 {
        match self {
            Proven::Win => 1.0,
            Proven::Draw => 0.0,
            Proven::Loss => -1.0,
        }
    }
}

/// A move out of a node.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Edge {
    pub mv: Pos,
    /// Prior probability in units of 1/65535 (nonzero for every stored edge).
    pub prior: u16,
    pub child: u32,
}

impl Edge {
    #[inline]
    pub fn prior(&self) -> f32 {
        self.prior as f32 * (1.0 / 65535.0)
    }
}

/// Quantises a probability for `Edge::prior`; any positive prior stays positive.
#[inline]
pub(crate) fn quantize_prior(p: f32) -> u16 {
    // `as` saturates (so no clamp to [0, 1] first) and maps NaN to 0; the max keeps a positive
    // prior positive.
    ((p * 65535.0 + 0.5) as u16).max(1)
}

/// Orders edges by prior, largest first, ties by board index: the order selection relies on.
pub(crate) fn sort_edges(edges: &mut [Edge]) {
    // Already ordered (equal priors come in board order) is common: one pass to see it. The keys
    // are unique (a point appears once), so the unstable sort gives the stable order.
    if !edges.is_sorted_by_key(sort_key) {
        edges.sort_unstable_by_key(sort_key);
    }
}

/// The edge order as one integer: prior descending, then board index.
#[inline]
fn sort_key(e: &Edge) -> u32 {
    order_key(e.mv, e.prior)
}

/// `sort_key` of an edge to `mv` with the quantised `prior`: it holds both, so a new node's
/// edges can be sorted as bare integers and rebuilt from them (`edge_of_key`).
#[inline]
pub(crate) fn order_key(mv: Pos, prior: u16) -> u32 {
    (u32::from(u16::MAX - prior) << 16) | mv.index() as u32
}

/// The edge, without a child yet, that `order_key` stands for.
#[inline]
pub(crate) fn edge_of_key(key: u32) -> Edge {
    Edge {
        mv: Pos((key & 0xFFFF) as u16),
        prior: u16::MAX - (key >> 16) as u16,
        child: NO_NODE,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum State {
    /// Created, not yet evaluated.
    Fresh,
    /// Selected as a leaf and waiting for its evaluation (another selection here is a collision).
    Pending,
    /// Has its edges.
    Expanded,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub first_edge: u32,
    pub n_edges: u16,
    pub state: State,
    /// Game-theoretic value for the player who moved into this node, `None` when unknown.
    /// Proven nodes other than the root are not searched below.
    pub proven: Option<Proven>,
    pub visits: u32,
    /// Selections that passed through here and have not been backed up yet (virtual loss).
    pub in_flight: u32,
    /// Sum of backed-up values, from the view of the player who moved into this node.
    pub value_sum: f64,
}

impl Node {
    pub const FRESH: Node = Node {
        first_edge: 0,
        n_edges: 0,
        state: State::Fresh,
        proven: None,
        visits: 0,
        in_flight: 0,
        value_sum: 0.0,
    };

    #[inline]
    pub fn is_proven(&self) -> bool {
        self.proven.is_some()
    }

    /// Mean value from the mover's view (0 when unvisited).
    #[inline]
    pub fn q(&self) -> f64 {
        if self.visits == 0 {
            0.0
        } else {
            self.value_sum / self.visits as f64
        }
    }
}

pub(crate) const NODE_BYTES: usize = std::mem::size_of::<Node>();
pub(crate) const EDGE_BYTES: usize = std::mem::size_of::<Edge>();

/// Search parameters the selection rule needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Puct<'a> {
    pub c_init: f32,
    pub c_base: f32,
    pub fpu_reduction: f32,
    pub fpu_reduction_root: f32,
    pub virtual_loss: f32,
    /// `explore(n)` for the first `n` (see `explore_table`).
    pub explore_small: &'a [f32],
}

impl Puct<'_> {
    /// The exploration factor at a parent with `n` visits (in flight included):
    /// c(n) * sqrt(max(n, 1)), with c(n) = c_init + ln((n + c_base + 1) / c_base).
    #[inline]
    pub fn explore(&self, n: u32) -> f32 {
        match self.explore_small.get(n as usize) {
            Some(&e) => e,
            None => explore_formula(self.c_init, self.c_base, n),
        }
    }
}

fn explore_formula(c_init: f32, c_base: f32, n: u32) -> f32 {
    let n = n as f32;
    let c = c_init + ((n + c_base + 1.0) / c_base).ln();
    c * n.max(1.0).sqrt()
}

/// `explore(n)` for n below 4096, by the same f32 arithmetic: the logarithm is the costliest
/// step of a selection and most selections are at nodes with few visits.
pub(crate) fn explore_table(c_init: f32, c_base: f32) -> Box<[f32]> {
    (0..4096)
        .map(|n| explore_formula(c_init, c_base, n))
        .collect()
}

#[derive(Clone)]
pub(crate) struct Tree {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    budget_bytes: usize,
    /// Set when an allocation was refused: the search stops at the next check.
    pub full: bool,
    /// Root noise re-sorted the root's edges after some had children: scan them all there.
    pub root_reordered: bool,
}

impl Tree {
    pub fn new(budget_bytes: usize) -> Tree {
        let mut t = Tree {
            nodes: Vec::new(),
            edges: Vec::new(),
            budget_bytes,
            full: false,
            root_reordered: false,
        };
        t.reset();
        t
    }

    /// Drops everything but a fresh root.
    pub fn reset(&mut self) {
        self.nodes.clear();
        self.edges.clear();
        self.full = false;
        self.root_reordered = false;
        self.nodes.push(Node::FRESH);
    }

    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    pub fn bytes(&self) -> usize {
        self.nodes.capacity() * NODE_BYTES + self.edges.capacity() * EDGE_BYTES
    }

    /// Makes room for `nodes` more nodes and `edges` more edges within the budget; `false` (and
    /// `full` set) when the budget does not allow it.
    pub fn reserve(&mut self, nodes: usize, edges: usize) -> bool {
        let (cap_n, cap_e) = (self.nodes.capacity(), self.edges.capacity());
        let (need_n, need_e) = (self.nodes.len() + nodes, self.edges.len() + edges);
        if need_n <= cap_n && need_e <= cap_e {
            return true;
        }
        let bytes = |n: usize, e: usize| n * NODE_BYTES + e * EDGE_BYTES;
        // Geometric growth keeps pushes amortised; near the budget, grow by what is left.
        let mut new_n = if need_n > cap_n {
            need_n.max(cap_n * 2).max(1024)
        } else {
            cap_n
        };
        let mut new_e = if need_e > cap_e {
            need_e.max(cap_e * 2).max(16 * 1024)
        } else {
            cap_e
        };
        if bytes(new_n, new_e) > self.budget_bytes {
            new_n = need_n.max(cap_n);
            new_e = need_e.max(cap_e);
            if bytes(new_n, new_e) > self.budget_bytes {
                self.full = true;
                return false;
            }
            // Half of the remaining room to the array that asked, so the other can still grow.
            let spare = (self.budget_bytes - bytes(new_n, new_e)) / 2;
            if need_e > cap_e {
                new_e += spare / EDGE_BYTES;
            } else {
                new_n += spare / NODE_BYTES;
            }
        }
        self.nodes.reserve_exact(new_n - self.nodes.len());
        self.edges.reserve_exact(new_e - self.edges.len());
        true
    }

    #[inline]
    pub fn edges_of(&self, node: u32) -> &[Edge] {
        let n = &self.nodes[node as usize];
        &self.edges[n.first_edge as usize..n.first_edge as usize + n.n_edges as usize]
    }

    /// Keeps only the expanded root's edges whose move is in `keep`, their priors renormalised
    /// over what is kept, and takes what the dropped children had backed up out of the root's
    /// visits and value, and its proven value out if one of them made it. The dropped subtrees
    /// stay in the arena, unreachable, until the next prune or rebase compacts them. Nothing
    /// changes when no edge, or every edge, is kept, or while selections are in flight (they
    /// could be running through an edge being dropped).
    pub fn restrict_root(&mut self, keep: &[Pos]) {
        let root = self.nodes[0];
        let (first, n) = (root.first_edge as usize, root.n_edges as usize);
        let kept = self.edges[first..first + n]
            .iter()
            .filter(|e| keep.contains(&e.mv))
            .count();
        if root.state != State::Expanded || root.in_flight > 0 || kept == 0 || kept == n {
            return;
        }
        let edges = &mut self.edges[first..first + n];
        // Stable: the kept edges first, each part in its old order.
        edges.sort_by_key(|e| !keep.contains(&e.mv));
        let mass: f32 = edges[..kept].iter().map(Edge::prior).sum();
        for e in &mut edges[..kept] {
            e.prior = quantize_prior(e.prior() / mass);
        }
        sort_edges(&mut edges[..kept]);
        let dropped: Vec<u32> = edges[kept..]
            .iter()
            .map(|e| e.child)
            .filter(|&c| c != NO_NODE)
            .collect();
        self.nodes[0].n_edges = kept as u16;
        for c in dropped {
            let child = self.nodes[c as usize];
            // The root's value is its mover's, the opposite of its children's movers.
            self.nodes[0].visits -= child.visits.min(self.nodes[0].visits);
            self.nodes[0].value_sum += child.value_sum;
        }
        // Edges with children may now stand behind edges without: selection must scan them all.
        self.root_reordered = true;
        self.nodes[0].proven = None;
        let children: Vec<u32> = self
            .edges_of(0)
            .iter()
            .map(|e| e.child)
            .filter(|&c| c != NO_NODE)
            .collect();
        for c in children {
            if self.propagate_proven(0, c) {
                break;
            }
        }
    }

    /// The child node of edge `e`, created on first use. `None` when the budget is spent.
    pub fn child(&mut self, e: usize) -> Option<u32> {
        let c = self.edges[e].child;
        if c != NO_NODE {
            return Some(c);
        }
        if !self.reserve(1, 0) {
            return None;
        }
        let id = self.nodes.len() as u32;
        self.nodes.push(Node::FRESH);
        self.edges[e].child = id;
        Some(id)
    }

    /// The PUCT choice among the edges of `parent` (an expanded node with edges): the index into
    /// `edges`. Edges are in (prior descending, board index) order and ties go to the first one,
    /// so the choice is deterministic. The scan stops at the first edge without a child node
    /// (except at a root whose edges noise re-sorted).
    pub fn select(&self, parent: u32, is_root: bool, p: &Puct) -> usize {
        self.select_with(parent, is_root, p, true)
    }

    /// `select`, scoring the leading visited children four at a time (`by_four`) or every child
    /// one by one (the reference the four-wide path must match to the bit).
    #[inline]
    fn select_with(&self, parent: u32, is_root: bool, p: &Puct, by_four: bool) -> usize {
        let node = &self.nodes[parent as usize];
        let first = node.first_edge as usize;
        let edges = &self.edges[first..first + node.n_edges as usize];
        let explore = p.explore(node.visits + node.in_flight);
        // The parent's value is stored from its mover's view; the selector is the other player.
        let parent_q = -node.q() as f32;
        let reduction = if is_root {
            p.fpu_reduction_root
        } else {
            p.fpu_reduction
        };
        // One pass: the best visited child by its score, the unvisited one with the largest prior
        // (all unvisited share the FPU value), and the prior mass already visited.
        let mut visited_policy = 0.0f32;
        let mut best_seen = usize::MAX;
        let mut best_seen_score = f32::NEG_INFINITY;
        let mut best_new = usize::MAX;
        let mut best_new_prior = -1.0f32;
        // Edges are sorted by prior and children are created in that order, so past the first
        // edge without a node nothing is visited and no prior is larger: the scan stops there,
        // unless root noise re-sorted this node's edges after children existed.
        let scan_all = is_root && self.root_reordered;
        let vl = p.virtual_loss;
        // The prior mass visited only matters with a reduction (0 * sqrt(mass) is 0 anyway).
        let need_mass = reduction != 0.0;
        // The leading visited children four at a time, then the rest one by one.
        #[cfg(target_arch = "x86_64")]
        let (start, best4, best4_score) = if by_four {
            // SAFETY: SSE2 is part of every x86_64 CPU (the target's baseline).
            unsafe {
                self.score_visited_by_four(
                    edges,
                    explore,
                    vl,
                    need_mass.then_some(&mut visited_policy),
                )
            }
        } else {
            (0, usize::MAX, f32::NEG_INFINITY)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let (start, best4, best4_score) = {
            let _ = by_four;
            (0, usize::MAX, f32::NEG_INFINITY)
        };
        if best4 != usize::MAX {
            best_seen = best4;
            best_seen_score = best4_score;
        }
        for (i, e) in edges.iter().enumerate().skip(start) {
            let prior = e.prior();
            if e.child == NO_NODE {
                if !scan_all {
                    if best_new == usize::MAX {
                        best_new = i;
                        best_new_prior = prior;
                    }
                    break;
                }
            } else {
                let ch = &self.nodes[e.child as usize];
                let n = ch.visits + ch.in_flight;
                if n > 0 {
                    if ch.proven == Some(Proven::Win) {
                        return first + i;
                    }
                    visited_policy += prior;
                    let nf = n as f32;
                    // q in f32: the value sums of one search stay far inside f32's exact range
                    // for the precision PUCT needs, and the f64 division cost more than the rest.
                    let q = (ch.value_sum as f32 - vl * ch.in_flight as f32) / nf;
                    let mut s = q + explore * prior / (1.0 + nf);
                    if ch.proven == Some(Proven::Loss) {
                        s -= 1.0e6;
                    }
                    if s > best_seen_score {
                        best_seen_score = s;
                        best_seen = i;
                    }
                    continue;
                }
            }
            if prior > best_new_prior {
                best_new_prior = prior;
                best_new = i;
            }
        }
        let best = if best_new == usize::MAX {
            best_seen
        } else {
            let new_score = parent_q - reduction * visited_policy.sqrt() + explore * best_new_prior;
            // Equal scores go to the lower board index, as everywhere else.
            if best_seen == usize::MAX
                || new_score > best_seen_score
                || (new_score == best_seen_score && best_new < best_seen)
            {
                best_new
            } else {
                best_seen
            }
        };
        first + best
    }

    /// `select`'s scores for the leading groups of four children that are all visited and unproven
    /// (a wide node's whole visited prefix, but for the last few), with SSE2: the same IEEE
    /// operations in the same order as the one-by-one loop, so the same choice to the bit. Stops
    /// at the first group that is not all such. Returns how many edges it scored and the best of
    /// them (index, score; the first on ties; `usize::MAX` when none), and adds their priors to
    /// `mass` in edge order when given.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse2")]
    fn score_visited_by_four(
        &self,
        edges: &[Edge],
        explore: f32,
        vl: f32,
        mut mass: Option<&mut f32>,
    ) -> (usize, usize, f32) {
        use std::arch::x86_64::*;
        let mut best = _mm_set1_ps(f32::NEG_INFINITY);
        let mut best_at = _mm_set1_epi32(-1);
        let mut at = _mm_set_epi32(3, 2, 1, 0);
        let (explore, vl, one) = (_mm_set1_ps(explore), _mm_set1_ps(vl), _mm_set1_ps(1.0));
        let unit = _mm_set1_ps(1.0 / 65535.0);
        let mut done = 0;
        for g in edges.chunks_exact(4) {
            if g.iter().any(|e| e.child == NO_NODE) {
                break;
            }
            let ch = [0, 1, 2, 3].map(|k| &self.nodes[g[k].child as usize]);
            if ch
                .iter()
                .any(|c| c.is_proven() || c.visits + c.in_flight == 0)
            {
                break;
            }
            if let Some(m) = mass.as_deref_mut() {
                for e in g {
                    *m += e.prior();
                }
            }
            // Counts through i32: the same f32 as the scalar loop's u32 conversion for any count
            // below 2^31, far beyond what one node can gather.
            let lanes_i32 = |f: &dyn Fn(usize) -> u32| {
                _mm_set_epi32(f(3) as i32, f(2) as i32, f(1) as i32, f(0) as i32)
            };
            let n = _mm_cvtepi32_ps(lanes_i32(&|k| ch[k].visits + ch[k].in_flight));
            let in_flight = _mm_cvtepi32_ps(lanes_i32(&|k| ch[k].in_flight));
            let prior = _mm_mul_ps(_mm_cvtepi32_ps(lanes_i32(&|k| u32::from(g[k].prior))), unit);
            let w = _mm_movelh_ps(
                _mm_cvtpd_ps(_mm_set_pd(ch[1].value_sum, ch[0].value_sum)),
                _mm_cvtpd_ps(_mm_set_pd(ch[3].value_sum, ch[2].value_sum)),
            );
            let q = _mm_div_ps(_mm_sub_ps(w, _mm_mul_ps(vl, in_flight)), n);
            let u = _mm_div_ps(_mm_mul_ps(explore, prior), _mm_add_ps(one, n));
            let s = _mm_add_ps(q, u);
            // Per lane, the first strictly better score wins, as in the scalar loop.
            let better = _mm_cmpgt_ps(s, best);
            best = _mm_or_ps(_mm_and_ps(better, s), _mm_andnot_ps(better, best));
            let better = _mm_castps_si128(better);
            best_at = _mm_or_si128(_mm_and_si128(better, at), _mm_andnot_si128(better, best_at));
            at = _mm_add_epi32(at, _mm_set1_epi32(4));
            done += 4;
        }
        // Across lanes: the highest score, the lowest index among equal ones (the first in order).
        let score = [
            _mm_cvtss_f32(best),
            _mm_cvtss_f32(_mm_shuffle_ps(best, best, 1)),
            _mm_cvtss_f32(_mm_shuffle_ps(best, best, 2)),
            _mm_cvtss_f32(_mm_shuffle_ps(best, best, 3)),
        ];
        let index = [
            _mm_cvtsi128_si32(best_at),
            _mm_cvtsi128_si32(_mm_shuffle_epi32(best_at, 1)),
            _mm_cvtsi128_si32(_mm_shuffle_epi32(best_at, 2)),
            _mm_cvtsi128_si32(_mm_shuffle_epi32(best_at, 3)),
        ];
        let (mut best_i, mut best_s) = (usize::MAX, f32::NEG_INFINITY);
        for (&s, &i) in score.iter().zip(&index) {
            if i >= 0 && (s > best_s || (s == best_s && (i as usize) < best_i)) {
                best_s = s;
                best_i = i as usize;
            }
        }
        (done, best_i, best_s)
    }

    /// Backs `value` (the leaf mover's view) up `path` (root first), releasing its virtual loss,
    /// and propagates proven values from the leaf upwards.
    pub fn backup(&mut self, path: &[u32], value: f64) {
        let mut v = value;
        for &id in path.iter().rev() {
            let n = &mut self.nodes[id as usize];
            n.visits += 1;
            n.value_sum += v;
            n.in_flight -= 1;
            v = -v;
        }
        for w in path.windows(2).rev() {
            if !self.propagate_proven(w[0], w[1]) {
                break;
            }
        }
    }

    /// Removes the virtual loss of a selection that will not be backed up.
    pub fn revert(&mut self, path: &[u32]) {
        for &id in path {
            self.nodes[id as usize].in_flight -= 1;
        }
    }

    /// Updates `parent`'s proven value from its proven `child`; `true` when `parent` became proven.
    fn propagate_proven(&mut self, parent: u32, child: u32) -> bool {
        let Some(c) = self.nodes[child as usize].proven else {
            return false;
        };
        if self.nodes[parent as usize].is_proven() {
            return false;
        }
        // The child's mover is the parent's side to move: a winning child refutes the parent's move.
        let value = if c == Proven::Win {
            Proven::Loss
        } else {
            let mut best = Proven::Loss;
            for e in self.edges_of(parent) {
                if e.child == NO_NODE {
                    return false;
                }
                let Some(p) = self.nodes[e.child as usize].proven else {
                    return false;
                };
                best = best.max(p);
            }
            if self.nodes[parent as usize].n_edges == 0 {
                return false;
            }
            best.flip()
        };
        self.nodes[parent as usize].proven = Some(value);
        true
    }

    /// Bytes the nodes and edges in use take (not the capacity held for them).
    pub fn bytes_used(&self) -> usize {
        self.nodes.len() * NODE_BYTES + self.edges.len() * EDGE_BYTES
    }

    /// Makes room in a full tree, in place, for a search that goes on: the tree is brought to at
    /// most half its budget (`fold_up`) and the arenas' spare capacity is given back (the budget
    /// counts capacity, and one arena may hold room the other needs). `false` when that leaves no
    /// room (a budget the root's own moves fill). Selections in flight must have been backed up
    /// or reverted.
    pub fn prune(&mut self) -> bool {
        let target = self.budget_bytes / 2;
        if self.bytes_used() > target {
            self.fold_up(target);
        }
        self.nodes.shrink_to_fit();
        self.edges.shrink_to_fit();
        self.full = false;
        self.bytes_used() <= target
    }

    /// Every node with fewer than `k` visits keeps its statistics (its parent's view of it stays
    /// exact) but loses its edges and everything below them, and is expanded afresh if the search
    /// comes back to it. `k` is the smallest count that brings the tree to at most `target`
    /// bytes, so what survives is the part of the tree the search visited most. Proven values
    /// stay.
    fn fold_up(&mut self, target: usize) {
        // What keeping each node's edges costs (the edges and the child nodes they have made),
        // summed by visit count: exact up to 2^16 visits, pooled above (a handful of nodes).
        const EXACT: usize = 1 << 16;
        let cost = |t: &Tree, i: usize| {
            let children = t
                .edges_of(i as u32)
                .iter()
                .filter(|e| e.child != NO_NODE)
                .count();
            t.nodes[i].n_edges as usize * EDGE_BYTES + children * NODE_BYTES
        };
        let mut cost_by_visits = vec![0usize; EXACT + 1];
        for i in 1..self.nodes.len() {
            if self.nodes[i].n_edges > 0 {
                cost_by_visits[(self.nodes[i].visits as usize).min(EXACT)] += cost(self, i);
            }
        }
        // A child has fewer visits than its parent, so "at least k visits" keeps a connected tree.
        let mut total = NODE_BYTES + cost(self, 0);
        let mut k = None;
        for (visits, &c) in cost_by_visits.iter().enumerate().rev() {
            if total + c > target {
                k = Some(visits as u32 + 1);
                break;
            }
            total += c;
        }
        let Some(k) = k else {
            return; // everything fits already: nothing to fold up
        };
        drop(cost_by_visits);
        self.compact(0, |n| n.visits >= k && n.n_edges > 0);
    }

    /// Keeps `root` (renumbered 0) and the nodes below it whose parents keep their edges, in
    /// place: a node keeps its edges when `keeps_edges` says so (`root` always), and the others
    /// become leaves with their statistics (unexpanded, unless proven). Arena order is kept, so
    /// node and edge ranges only move down and no second copy of the tree is ever held; a child
    /// always lies after its parent (nodes are appended as they are made), which one forward
    /// pass relies on. Selections in flight must have been backed up or reverted: `in_flight`
    /// holds the new numbers meanwhile.
    fn compact(&mut self, root: u32, keeps_edges: impl Fn(&Node) -> bool) {
        const MARKED: u32 = u32::MAX;
        let root = root as usize;
        let keeps = |n: &Node, i: usize| i == root || keeps_edges(n);
        // in_flight: 0 = dropped, MARKED = kept and not numbered yet, else new number + 1.
        for n in &mut self.nodes {
            n.in_flight = 0;
        }
        self.nodes[root].in_flight = MARKED;
        let mut kept = 0u32;
        let mut with_edges = Vec::new();
        for i in root..self.nodes.len() {
            if self.nodes[i].in_flight == 0 {
                continue;
            }
            kept += 1;
            self.nodes[i].in_flight = kept;
            if keeps(&self.nodes[i], i) {
                with_edges.push(i as u32);
                let (first, len) = (
                    self.nodes[i].first_edge as usize,
                    self.nodes[i].n_edges as usize,
                );
                for e in first..first + len {
                    let c = self.edges[e].child;
                    if c != NO_NODE {
                        self.nodes[c as usize].in_flight = MARKED;
                    }
                }
            }
        }
        // Edge ranges move down in the order they lie in, so a copy never overwrites a range
        // still to be read.
        with_edges.sort_unstable_by_key(|&i| self.nodes[i as usize].first_edge);
        let mut cursor = 0usize;
        for &i in &with_edges {
            let n = self.nodes[i as usize];
            let (first, len) = (n.first_edge as usize, n.n_edges as usize);
            self.edges.copy_within(first..first + len, cursor);
            for e in cursor..cursor + len {
                let c = self.edges[e].child;
                if c != NO_NODE {
                    self.edges[e].child = self.nodes[c as usize].in_flight - 1;
                }
            }
            self.nodes[i as usize].first_edge = cursor as u32;
            cursor += len;
        }
        self.edges.truncate(cursor);
        for i in root..self.nodes.len() {
            let mut n = self.nodes[i];
            if n.in_flight == 0 {
                continue;
            }
            let to = (n.in_flight - 1) as usize;
            n.in_flight = 0;
            if !keeps(&n, i) {
                n.first_edge = 0;
                n.n_edges = 0;
                // A proven node is never searched below; any other is expanded again when reached.
                if n.proven.is_none() {
                    n.state = State::Fresh;
                }
            }
            if n.state == State::Pending {
                n.state = State::Fresh;
            }
            self.nodes[to] = n;
        }
        self.nodes.truncate(kept as usize);
    }

    /// Replaces the tree by the subtree under `new_root`, in place (arena order kept, so the
    /// result is as deterministic as the search that made it). Selections in flight must have
    /// been reverted.
    pub fn rebase(&mut self, new_root: u32) {
        if new_root == 0 {
            return;
        }
        self.compact(new_root, |_| true);
        self.full = false;
        self.root_reordered = false;
        // What the old tree held beyond the subtree goes back to the system.
        self.nodes.shrink_to_fit();
        self.edges.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_compact() {
        assert_eq!(EDGE_BYTES, 8);
        assert_eq!(NODE_BYTES, 24);
    }

    #[test]
    fn priors_round_trip_and_stay_positive() {
        assert_eq!(quantize_prior(0.0), 1);
        assert_eq!(quantize_prior(1.0), 65535);
        let e = Edge {
            mv: Pos::NONE,
            prior: quantize_prior(0.25),
            child: 0,
        };
        assert!((e.prior() - 0.25).abs() < 1e-4);
        // Out-of-range input saturates (there is no clamp before the cast).
        for (p, want) in [
            (f32::NAN, 1),
            (-0.5, 1),
            (2.0, 65535),
            (f32::INFINITY, 65535),
        ] {
            assert_eq!(quantize_prior(p), want, "{p}");
        }
    }

    /// The four-wide scoring must pick exactly what the one-by-one loop picks: random wide nodes
    /// with ties, virtual loss, unvisited and proven children, NaN values and re-sorted roots.
    #[test]
    fn four_wide_selection_matches_one_by_one() {
        use crate::rng::Rng;
        let mut rng = Rng::new(7);
        let table = explore_table(1.25, 19652.0);
        let mut checked = 0;
        for round in 0..3000 {
            let mut t = Tree::new(64 << 20);
            let n_edges = 1 + (rng.next_u64() % 60) as usize;
            // How varied the stats are: from everything equal (the uniform evaluator's wide,
            // flat nodes: ties everywhere) to mostly distinct.
            let kinds = 1 + rng.next_u64() % 4;
            let pick = |rng: &mut Rng, k: u64| rng.next_u64() % k.min(kinds);
            let mut priors: Vec<u16> = (0..n_edges)
                .map(|_| 300 + 7 * pick(&mut rng, 4) as u16)
                .collect();
            priors.sort_unstable_by(|a, b| b.cmp(a));
            let visited = (rng.next_u64() % (n_edges as u64 + 1)) as usize;
            for (i, &prior) in priors.iter().enumerate() {
                let mut child = NO_NODE;
                if i < visited || (round % 7 == 0 && rng.next_u64().is_multiple_of(2)) {
                    let mut c = Node::FRESH;
                    // Small integer stats make equal scores common.
                    c.visits = if rng.next_u64().is_multiple_of(40) {
                        0
                    } else {
                        1 + pick(&mut rng, 3) as u32
                    };
                    c.in_flight = if rng.next_u64().is_multiple_of(8) {
                        1 + pick(&mut rng, 2) as u32
                    } else {
                        0
                    };
                    c.value_sum = pick(&mut rng, 3) as f64 - 1.0;
                    if rng.next_u64().is_multiple_of(199) {
                        c.value_sum = f64::NAN;
                    }
                    c.proven = match rng.next_u64() % 300 {
                        0 => Some(Proven::Win),
                        1 => Some(Proven::Loss),
                        2 => Some(Proven::Draw),
                        _ => None,
                    };
                    child = t.nodes.len() as u32;
                    t.nodes.push(c);
                }
                t.edges.push(Edge {
                    mv: Pos::NONE,
                    prior,
                    child,
                });
            }
            let root = &mut t.nodes[0];
            root.state = State::Expanded;
            root.first_edge = 0;
            root.n_edges = n_edges as u16;
            root.visits = (rng.next_u64() % 5000) as u32;
            root.value_sum = (rng.next_u64() % 100) as f64 - 50.0;
            t.root_reordered = round % 5 == 0;
            for (is_root, reduction) in [(true, 0.0), (false, 0.25), (true, 0.1)] {
                let p = Puct {
                    c_init: 1.25,
                    c_base: 19652.0,
                    fpu_reduction: reduction,
                    fpu_reduction_root: reduction,
                    virtual_loss: 1.0,
                    explore_small: &table,
                };
                assert_eq!(
                    t.select_with(0, is_root, &p, true),
                    t.select_with(0, is_root, &p, false),
                    "round {round}, is_root {is_root}, reduction {reduction}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 9000);
    }

    #[test]
    fn budget_refuses_growth() {
        let mut t = Tree::new(64 * 1024);
        assert!(t.reserve(10, 100));
        assert!(!t.reserve(0, 1_000_000));
        assert!(t.full);
        assert!(t.bytes() <= 64 * 1024);
    }

    /// `prune` folds up exactly the least visited nodes and renumbers the rest consistently,
    /// whatever order the arenas hold them in; `rebase` keeps one subtree the same way.
    #[test]
    fn prune_folds_up_the_least_visited_nodes() {
        let node = |visits: u32, first_edge: u32, n_edges: u16| Node {
            first_edge,
            n_edges,
            state: if n_edges > 0 {
                State::Expanded
            } else {
                State::Fresh
            },
            visits,
            value_sum: visits as f64 * 0.25,
            ..Node::FRESH
        };
        let edge = |x: usize, child: u32| Edge {
            mv: Pos::new(x, 0),
            prior: 100,
            child,
        };
        // Root (13 visits) -> a: A (10) -> A1 (3, two edges, no children); b: B (2) -> B1 (1).
        // Arena order: 0 root, 1 B, 2 A, 3 B1, 4 A1; edges: A1 0..2, root 2..5, B 5..8, A 8..10.
        // Costs: root 24 + 3*8 + 2*24 = 96, A 2*8 + 24 = 40, A1 2*8 = 16, B 3*8 + 24 = 48: half a
        // 320-byte budget (160) keeps A and A1 (152) and not B (200).
        let mut t = Tree::new(320);
        t.nodes = vec![
            node(13, 2, 3),
            node(2, 5, 3),
            node(10, 8, 2),
            node(1, 0, 0),
            node(3, 0, 2),
        ];
        t.edges = vec![
            edge(7, NO_NODE),
            edge(8, NO_NODE), // A1
            edge(0, 2),
            edge(1, 1),
            edge(2, NO_NODE), // root
            edge(3, 3),
            edge(4, NO_NODE),
            edge(5, NO_NODE), // B
            edge(6, 4),
            edge(9, NO_NODE), // A
        ];
        t.nodes[3].proven = Some(Proven::Win);
        t.full = true;
        assert!(t.prune());
        assert!(!t.full);
        assert_eq!(t.nodes.len(), 4, "B1 goes with B's edges");
        assert_eq!(t.edges.len(), 7);
        let visits: Vec<u32> = t.nodes.iter().map(|n| n.visits).collect();
        assert_eq!(
            visits,
            [13, 2, 10, 3],
            "survivors keep their order and statistics"
        );
        assert_eq!(t.nodes[1].value_sum, 0.5);
        let moves = |t: &Tree, n: u32| {
            t.edges_of(n)
                .iter()
                .map(|e| (e.mv.x(), e.child))
                .collect::<Vec<_>>()
        };
        assert_eq!(moves(&t, 0), [(0, 2), (1, 1), (2, NO_NODE)]);
        assert_eq!(moves(&t, 2), [(6, 3), (9, NO_NODE)]);
        assert_eq!(moves(&t, 3), [(7, NO_NODE), (8, NO_NODE)]);
        assert_eq!(
            (t.nodes[1].n_edges, t.nodes[1].state),
            (0, State::Fresh),
            "B is a leaf again"
        );
        // Moving the root to A keeps A's subtree alone, A renumbered 0, in place.
        let mut r = t.clone();
        r.rebase(2);
        assert_eq!(
            r.nodes.iter().map(|n| n.visits).collect::<Vec<_>>(),
            [10, 3]
        );
        assert_eq!(moves(&r, 0), [(6, 1), (9, NO_NODE)]);
        assert_eq!(moves(&r, 1), [(7, NO_NODE), (8, NO_NODE)]);
        assert_eq!(r.edges.len(), 4);
        // Now within half its budget: a second prune folds up nothing.
        let used = 4 * NODE_BYTES + 7 * EDGE_BYTES;
        assert_eq!(t.bytes_used(), used);
        assert!(t.prune());
        assert_eq!((t.bytes_used(), t.nodes.len()), (used, 4));
        // Full by capacity, not by use (one arena holds the room): the capacity goes back.
        let mut t = Tree::new(320);
        t.nodes = Vec::with_capacity(12);
        t.nodes.push(node(13, 0, 3));
        t.edges = vec![edge(0, NO_NODE); 3];
        assert!(
            !t.reserve(0, 20),
            "12 nodes' capacity leaves no room for 23 edges"
        );
        assert!(t.prune());
        assert!(t.reserve(0, 20));
        // The root's own moves fill the budget: no room can be made.
        let mut t = Tree::new(320);
        t.nodes = vec![node(1, 0, 30)];
        t.edges = vec![edge(0, NO_NODE); 30];
        t.full = true;
        assert!(!t.prune());
    }
}
