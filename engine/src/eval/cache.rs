//! `EvalCache`: the network's answers for recently evaluated positions, so a position the search
//! reaches again — a transposition inside one search, or a line of the last move's tree that the
//! next search walks into by another order — costs a copy instead of a forward pass.
//!
//! A direct-mapped table keyed by everything the input planes are made of (`features::encode`):
//! the stones (Zobrist hash, which also fixes the side to move), the last two moves, the rule and
//! the board's size. A hit therefore returns exactly what the network would return. One cache
//! belongs to one model (the engine builds a new evaluator, and so a new cache, per model).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Evaluation;
use crate::game::Board;
use crate::rng::mix64;

/// One remembered evaluation (`key` 0: empty).
#[derive(Default)]
struct Slot {
    key: u64,
    value: f32,
    policy: Vec<f32>,
}

/// A fixed number of slots (a power of two), replaced on collision.
pub struct EvalCache {
    slots: Mutex<Vec<Slot>>,
    mask: u64,
    lookups: AtomicU64,
    hits: AtomicU64,
}

impl std::fmt::Debug for EvalCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalCache")
            .field("slots", &(self.mask + 1))
            .field("lookups", &self.lookups.load(Ordering::Relaxed))
            .field("hits", &self.hits.load(Ordering::Relaxed))
            .finish()
    }
}

/// The key of everything `features::encode` reads from `board` (never 0).
pub fn key_of(board: &Board) -> u64 {
    let history = board.history();
    let back = |k: usize| {
        history
            .len()
            .checked_sub(k)
            .map_or(0xFFFF, |i| history[i].0.index() as u64)
    };
    let shape = (board.width() as u64) | (board.height() as u64) << 8 | (board.rule() as u64) << 16;
    let k = board.hash() ^ mix64(back(1) | back(2) << 16 | shape << 32);
    k.max(1)
}

/// Slots a cache asked for `entries` has: the next power of two (0 for 0).
pub fn slots_for(entries: usize) -> usize {
    if entries == 0 {
        0
    } else {
        entries.next_power_of_two()
    }
}

/// The most memory a cache of `entries` holds once full of `cells`-point policies (the slot, the
/// policy and the allocator's header for it).
pub fn bytes_for(entries: usize, cells: usize) -> usize {
    slots_for(entries) * (std::mem::size_of::<Slot>() + 16 + cells * std::mem::size_of::<f32>())
}

impl EvalCache {
    /// A cache of `slots_for(entries)` slots (at least 1).
    pub fn new(entries: usize) -> EvalCache {
        let n = slots_for(entries.max(1));
        let mut slots = Vec::with_capacity(n);
        slots.resize_with(n, Slot::default);
        EvalCache {
            slots: Mutex::new(slots),
            mask: n as u64 - 1,
            lookups: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        }
    }

    fn index(&self, key: u64) -> usize {
        (mix64(key) & self.mask) as usize
    }

    /// Fills `out[i]` for every key found and returns the indices of the others, in order.
    pub fn lookup(&self, keys: &[u64], out: &mut [Evaluation]) -> Vec<usize> {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let mut missing = Vec::new();
        for (i, (&key, e)) in keys.iter().zip(out.iter_mut()).enumerate() {
            let slot = &slots[self.index(key)];
            if slot.key == key {
                e.policy.clear();
                e.policy.extend_from_slice(&slot.policy);
                e.value = slot.value;
            } else {
                missing.push(i);
            }
        }
        self.lookups.fetch_add(keys.len() as u64, Ordering::Relaxed);
        self.hits
            .fetch_add((keys.len() - missing.len()) as u64, Ordering::Relaxed);
        missing
    }

    /// Remembers `evals[i]` under `keys[i]`.
    pub fn store(&self, keys: &[u64], evals: &[Evaluation]) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        for (&key, e) in keys.iter().zip(evals) {
            let i = self.index(key);
            let slot = &mut slots[i];
            slot.key = key;
            slot.value = e.value;
            slot.policy.clear();
            slot.policy.extend_from_slice(&e.policy);
        }
    }

    /// (lookups, hits) so far.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.lookups.load(Ordering::Relaxed),
            self.hits.load(Ordering::Relaxed),
        )
    }
}
