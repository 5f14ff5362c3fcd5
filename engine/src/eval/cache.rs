//! A bounded evaluation cache wrapping any `Evaluator`: transpositions and re-searched positions
//! skip the network. Keyed by the position hash, the last two moves (the feature planes see them),
//! board size, rule and the model id, so a model swap never serves stale entries.
//!
//! Depends on the `Evaluator` trait and `game` only.

use std::sync::{Arc, Mutex};

use super::{Evaluation, Evaluator};
use crate::game::Board;

const SHARDS: usize = 16;

struct Entry {
    key: u64,
    value: f32,
    policy: Box<[f32]>,
}

/// Direct-mapped, sharded: a slot holds the last position that hashed to it. Replacement is by
/// arrival, so a single-threaded search sees the same hits on every run.
pub struct CachedEvaluator {
    inner: Arc<dyn Evaluator>,
    shards: Vec<Mutex<Vec<Option<Entry>>>>,
    slots_per_shard: usize,
    hits: std::sync::atomic::AtomicU64,
    misses: std::sync::atomic::AtomicU64,
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The cache key of `board` under model `model_id`.
pub fn cache_key(board: &Board, model_id: u64) -> u64 {
    let h = board.history();
    let last = h.last().map_or(0xffff, |m| m.0.index() as u64);
    let prev = if h.len() >= 2 {
        h[h.len() - 2].0.index() as u64
    } else {
        0xffff
    };
    let shape = (board.width() as u64)
        | (board.height() as u64) << 8
        | (board.rule().to_protocol() as u64) << 16;
    mix(board.hash() ^ mix(model_id ^ mix(last | prev << 16 | shape << 32)))
}

impl CachedEvaluator {
    /// A cache of at most about `max_bytes` (entries sized for `cells` points per board).
    pub fn new(inner: Arc<dyn Evaluator>, max_bytes: usize, cells: usize) -> CachedEvaluator {
        let entry = std::mem::size_of::<Option<Entry>>() + cells * 4;
        let slots = (max_bytes / entry.max(1)).max(SHARDS);
        let per = slots / SHARDS;
        CachedEvaluator {
            inner,
            shards: (0..SHARDS)
                .map(|_| Mutex::new((0..per).map(|_| None).collect()))
                .collect(),
            slots_per_shard: per,
            hits: 0.into(),
            misses: 0.into(),
        }
    }

    pub fn inner(&self) -> &Arc<dyn Evaluator> {
        &self.inner
    }

    /// (hits, misses) so far.
    pub fn stats(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.hits.load(Relaxed), self.misses.load(Relaxed))
    }

    fn slot(&self, key: u64) -> (usize, usize) {
        (
            (key % SHARDS as u64) as usize,
            ((key / SHARDS as u64) % self.slots_per_shard as u64) as usize,
        )
    }
}

impl Evaluator for CachedEvaluator {
    fn name(&self) -> String {
        format!("cached({})", self.inner.name())
    }

    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        use std::sync::atomic::Ordering::Relaxed;
        out.resize_with(boards.len(), Evaluation::default);
        let model = self.inner.model_id();
        let mut missing: Vec<usize> = Vec::new();
        let mut keys = Vec::with_capacity(boards.len());
        for (i, b) in boards.iter().enumerate() {
            let key = cache_key(b, model);
            keys.push(key);
            let (s, k) = self.slot(key);
            let shard = self.shards[s].lock().unwrap_or_else(|e| e.into_inner());
            match &shard[k] {
                Some(e) if e.key == key && e.policy.len() == b.width() * b.height() => {
                    out[i].policy.clear();
                    out[i].policy.extend_from_slice(&e.policy);
                    out[i].value = e.value;
                }
                _ => missing.push(i),
            }
        }
        self.hits
            .fetch_add((boards.len() - missing.len()) as u64, Relaxed);
        self.misses.fetch_add(missing.len() as u64, Relaxed);
        if missing.is_empty() {
            return;
        }
        let sub: Vec<&Board> = missing.iter().map(|&i| boards[i]).collect();
        let mut evals = Vec::new();
        self.inner.evaluate(&sub, &mut evals);
        for (&i, e) in missing.iter().zip(evals) {
            let (s, k) = self.slot(keys[i]);
            let mut shard = self.shards[s].lock().unwrap_or_else(|e| e.into_inner());
            shard[k] = Some(Entry {
                key: keys[i],
                value: e.value,
                policy: e.policy.clone().into_boxed_slice(),
            });
            drop(shard);
            out[i] = e;
        }
    }

    fn preferred_batch(&self) -> usize {
        self.inner.preferred_batch()
    }

    fn model_id(&self) -> u64 {
        self.inner.model_id()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::UniformEvaluator;
    use crate::game::{Pos, Rule};
    use std::sync::Mutex as StdMutex;

    struct Counting(StdMutex<usize>, u64);
    impl Evaluator for Counting {
        fn name(&self) -> String {
            "counting".into()
        }
        fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
            *self.0.lock().unwrap() += boards.len();
            UniformEvaluator.evaluate(boards, out);
        }
        fn model_id(&self) -> u64 {
            self.1
        }
    }

    #[test]
    fn hits_skip_the_inner_evaluator_and_keys_separate_models_and_move_order() {
        let inner = Arc::new(Counting(StdMutex::new(0), 7));
        let cache = CachedEvaluator::new(inner.clone(), 1 << 20, 225);
        let mut a = Board::new(15, 15, Rule::Freestyle).unwrap();
        a.play(Pos::new(7, 7)).unwrap();
        a.play(Pos::new(8, 8)).unwrap();
        a.play(Pos::new(9, 9)).unwrap();
        // Same stones, other move order: the last-move planes differ, so a different entry.
        let mut b = Board::new(15, 15, Rule::Freestyle).unwrap();
        b.play(Pos::new(9, 9)).unwrap();
        b.play(Pos::new(8, 8)).unwrap();
        b.play(Pos::new(7, 7)).unwrap();
        assert_eq!(a.hash(), b.hash());
        assert_ne!(cache_key(&a, 7), cache_key(&b, 7));
        assert_ne!(cache_key(&a, 7), cache_key(&a, 8));
        let mut out = Vec::new();
        cache.evaluate(&[&a, &b], &mut out);
        let first = out.clone();
        cache.evaluate(&[&a, &b], &mut out);
        assert_eq!(*inner.0.lock().unwrap(), 2);
        assert_eq!(out, first);
        assert_eq!(cache.stats(), (2, 2));
    }

    #[test]
    fn the_cache_stays_bounded() {
        let cache = CachedEvaluator::new(Arc::new(UniformEvaluator), 64 << 10, 225);
        let total: usize = cache.shards.iter().map(|s| s.lock().unwrap().len()).sum();
        assert!(total * (225 * 4 + 32) <= 64 << 10, "{total} slots");
    }
}
