//! Evaluators of positions: for a batch of positions, a prior over moves and a value for the side
//! to move. The search sees only the `Evaluator` trait defined here.
//!
//! - `features` — the one definition of the network's input planes (engine, trainer, exporter).
//! - `cache` — `EvalCache`, a network's answers for recent positions (transpositions, the next
//!   move's tree).
//! - `classical` — the pattern evaluator: the no-network fallback and a cheap MCTS prior.
//! - `network` — the network seam: the `Backend` trait (planes in, logits and values out) and
//!   `NetEvaluator`, the one evaluator over any backend (encode, forward, legal mask).
//! - `native` — the engine's own inference for its ResNet form (fp32, int8 QDQ), pure Rust with
//!   kernels for the CPU: it plays the embedded networks and model files of that form; and for
//!   the pattern network (`native::pattern`: incremental int16 accumulators, its own evaluator).
//! - `onnx` — ONNX Runtime; the only module that names an inference runtime.
//! - `onnx_evaluator` — the ONNX Runtime backend (a pool of sessions) and `OnnxEvaluator`.
//! - `by_claim` — `ByClaim`: several networks as one evaluator, each playing the games it claims
//!   (the embedded defaults, one per rule).
//! - `slot` — `ModelSlot`: the live evaluator behind an ArcSwap, and the checkpoint watcher.
//!
//! `onnx` and `onnx_evaluator` exist only with the `onnx` cargo feature (on by default); without
//! it the engine still plays its embedded networks and model files of its own form (`native`),
//! and the slot's loader refuses any other model file, saying why.
//!
//! Also here: `UniformEvaluator`, the null evaluator (tree-speed benches, tests), and the masked
//! softmax every network evaluator ends with.

pub mod by_claim;
pub mod cache;
pub mod classical;
pub mod embedded;
pub mod features;
pub mod native;
pub mod network;
#[cfg(feature = "onnx")]
pub mod onnx;
#[cfg(feature = "onnx")]
pub mod onnx_evaluator;
pub mod slot;

use crate::game::Board;

/// One evaluated position.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Evaluation {
    /// Move probabilities indexed by `Board::dense_index` (row-major `y * width + x`): zero on
    /// occupied and forbidden points, summing to 1 over the rest.
    pub policy: Vec<f32>,
    /// Expected outcome for the side to move, in [-1, 1].
    pub value: f32,
}

/// Anything that scores positions: uniform, classical, ONNX, tch (in the trainer).
/// Implementations must be callable from several search threads.
pub trait Evaluator: Send + Sync {
    /// A short name for logs and `MESSAGE` lines.
    fn name(&self) -> String;

    /// Evaluates every board of the batch; `out` is resized to `boards.len()` and its policy
    /// buffers are reused when they already have the right length.
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>);

    /// The batch size this evaluator is most efficient at (1 for the cheap ones).
    fn preferred_batch(&self) -> usize {
        1
    }

    /// Identifies the model behind the evaluator, so a tree kept between moves is dropped when
    /// the model behind it changed.
    fn model_id(&self) -> u64 {
        0
    }

    /// Why this evaluator should not play on `board` (a network trained for other rules or
    /// board sizes), or None. The engine plays such a game on the classical evaluator.
    fn refuses(&self, _board: &Board) -> Option<String> {
        None
    }

    /// The evaluator that plays `board`'s game when this one is a set of networks
    /// (`by_claim::ByClaim`: the member claiming it); None for a single evaluator, which plays
    /// it itself. The brain searches with the member, so a reply names the network that played.
    fn member_for(&self, _board: &Board) -> Option<std::sync::Arc<dyn Evaluator>> {
        None
    }

    /// (lookups, hits) of the evaluator's cache of recent positions, when it has one.
    fn cache_stats(&self) -> Option<(u64, u64)> {
        None
    }
}

/// Every legal move equally likely, value 0: the null evaluator (tree-speed benches, tests). It
/// skips the input planes; `network::UniformBackend` is the same null network for callers that
/// need the network path.
#[derive(Debug, Default, Clone, Copy)]
pub struct UniformEvaluator;

impl Evaluator for UniformEvaluator {
    fn name(&self) -> String {
        "uniform".into()
    }
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        out.resize_with(boards.len(), Evaluation::default);
        for (board, e) in boards.iter().zip(out.iter_mut()) {
            // `legal_mask` writes every point: no zeroing first.
            e.policy.resize(board.width() * board.height(), 0.0);
            match board.legal_count_without_forbidden() {
                // Every empty point is legal: one pass writes the share.
                Some(n) => {
                    board.legal_mask(&mut e.policy, 1.0 / n.max(1) as f32);
                }
                // Forbidden points: the share is known only after the legality pass.
                None => {
                    let n = board.legal_mask(&mut e.policy, 1.0);
                    let share = 1.0 / n.max(1) as f32;
                    e.policy.iter_mut().for_each(|v| *v *= share);
                }
            }
            e.value = 0.0;
        }
    }
}

/// Softmax of `logits` over the legal points of `board`, written into `policy` (zero elsewhere).
pub fn masked_softmax(board: &Board, logits: &[f32], policy: &mut [f32]) {
    board.legal_mask(policy, 1.0);
    softmax_in_mask(logits, policy);
}

/// `masked_softmax` with the legal points read from the position's encoded input planes (empty
/// and not forbidden to the side to move), so an evaluator that has just encoded the board does
/// not run the forbidden checks a second time.
///
/// # Panics
/// If `planes` is shorter than three planes of `policy.len()` points (a caller bug).
pub fn masked_softmax_planes(planes: &[f32], logits: &[f32], policy: &mut [f32]) {
    let area = policy.len();
    let plane = |k: usize| &planes[k * area..(k + 1) * area];
    let (own, opp, forbidden) = (
        plane(features::OWN),
        plane(features::OPPONENT),
        plane(features::FORBIDDEN),
    );
    for (i, m) in policy.iter_mut().enumerate() {
        let legal = own[i] == 0.0 && opp[i] == 0.0 && forbidden[i] == 0.0;
        *m = if legal { 1.0 } else { 0.0 };
    }
    softmax_in_mask(logits, policy);
}

/// Lanes of the softmax's sum: a fixed order of additions, whatever width the compiler gives
/// the loop.
const SUM_LANES: usize = 16;

/// Softmax of `logits` over the points where `policy` is not zero on entry (the legal mask),
/// in place: zero elsewhere, uniform over the legal points when the logits overflow. Every loop
/// is branch-free over the whole board, compiled for the vector width of `Simd::chosen`; the
/// exponential is `exp_nonpositive`, not libm's (a call per point was the largest part of the
/// softmax).
///
/// # Panics
/// If `logits` is shorter than `policy` (a caller bug).
pub(crate) fn softmax_in_mask(logits: &[f32], policy: &mut [f32]) {
    let logits = &logits[..policy.len()];
    native::simd::vectorized(native::Simd::chosen(), SoftmaxInMask { logits, policy });
}

struct SoftmaxInMask<'a> {
    logits: &'a [f32],
    policy: &'a mut [f32],
}

impl native::simd::Elementwise for SoftmaxInMask<'_> {
    #[inline(always)]
    fn run(self) {
        let SoftmaxInMask { logits, policy } = self;
        let max = logits
            .iter()
            .zip(policy.iter())
            .map(|(&x, &m)| if m != 0.0 { x } else { f32::NEG_INFINITY })
            .fold(f32::NEG_INFINITY, f32::max);
        // A legal point's value is at least e^-86 > 0, so "positive" stays the mask.
        for (p, &x) in policy.iter_mut().zip(logits) {
            let e = exp_nonpositive(x - max);
            *p = if *p != 0.0 { e } else { 0.0 };
        }
        let mut part = [0f32; SUM_LANES];
        let mut chunks = policy.chunks_exact(SUM_LANES);
        for chunk in &mut chunks {
            part.iter_mut().zip(chunk).for_each(|(s, &v)| *s += v);
        }
        part.iter_mut()
            .zip(chunks.remainder())
            .for_each(|(s, &v)| *s += v);
        let sum = part.iter().sum::<f32>();
        if sum > 0.0 && sum.is_finite() {
            policy.iter_mut().for_each(|v| *v /= sum);
        } else {
            let legal = policy.iter().filter(|&&v| v > 0.0).count();
            let share = 1.0 / legal.max(1) as f32;
            policy
                .iter_mut()
                .for_each(|v| *v = if *v > 0.0 { share } else { 0.0 });
        }
    }
}

/// `e^x` for `x <= 0` (e^-86 for NaN and below -86): Cody-Waite reduction by ln 2 and
/// Cephes' degree-7 polynomial for `expf` (about 1 ulp), in plain arithmetic that the compiler
/// vectorizes and never fuses, so every vector width gives the same bits.
#[inline(always)]
// max/min rather than clamp: clamp keeps a NaN.
#[allow(clippy::manual_clamp)]
fn exp_nonpositive(x: f32) -> f32 {
    // 1.5 * 2^23: adding it rounds to an integer held in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    // ln 2 in two parts: n * LN2_HI is exact for |n| < 2^15.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    const P: [f32; 6] = [
        1.987_569_1e-4,
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        0.166_666_65,
        0.5,
    ];
    // `max` drops a NaN; -86 keeps 2^n a normal number.
    let x = x.max(-86.0).min(0.0);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    let r = (x - n * LN2_HI) - n * LN2_LO;
    let p = P.iter().fold(0.0, |acc, &c| acc * r + c);
    let y = p * r * r + r + 1.0;
    let k = t.to_bits() as i32 - ROUND.to_bits() as i32;
    f32::from_bits((y.to_bits() as i32 + (k << 23)) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Color, Pos, Rule};

    /// Renju, black to move, with a double-three point at (7,7) and stones around it.
    fn renju_double_three() -> Board {
        let mut b = Board::new(15, 15, Rule::Renju).unwrap();
        for (x, y) in [(7, 5), (7, 6), (5, 7), (6, 7)] {
            b.place(Pos::new(x, y), Color::Black).unwrap();
        }
        for (x, y) in [(0, 0), (14, 0), (0, 14), (14, 14)] {
            b.place(Pos::new(x, y), Color::White).unwrap();
        }
        assert_eq!(b.side_to_move(), Color::Black);
        assert!(
            b.is_forbidden(Pos::new(7, 7)),
            "fixture must have a forbidden point"
        );
        b
    }

    fn boards() -> Vec<Board> {
        let mut out = vec![renju_double_three()];
        for rule in [Rule::Freestyle, Rule::Renju, Rule::Caro] {
            let mut b = Board::new(9, 7, rule).unwrap();
            for i in 0..20 {
                let legal = b.legal_moves();
                let _ = b.play(legal[(i * 7 + 3) % legal.len()]);
                out.push(b.clone());
            }
        }
        out
    }

    #[test]
    fn one_pass_legality_agrees_with_is_legal() {
        for mut b in boards() {
            let slow: Vec<Pos> = b.points().filter(|&p| b.is_legal(p)).collect();
            assert_eq!(b.legal_moves(), slow);
            let mut mask = vec![0.5; b.width() * b.height()];
            assert_eq!(b.legal_mask(&mut mask, 1.0), slow.len());
            for p in b.points() {
                let want = if b.is_legal(p) { 1.0 } else { 0.0 };
                assert_eq!(mask[b.dense_index(p)], want);
                let before = (b.hash(), b.move_count());
                assert_eq!(b.is_forbidden_mut(p), b.is_forbidden(p));
                assert_eq!((b.hash(), b.move_count()), before);
            }
        }
    }

    #[test]
    fn uniform_policy_covers_exactly_the_legal_moves() {
        for b in boards() {
            let mut out = Vec::new();
            UniformEvaluator.evaluate(&[&b], &mut out);
            let legal = b.legal_moves();
            let share = 1.0 / legal.len() as f32;
            for p in b.points() {
                let want = if legal.contains(&p) { share } else { 0.0 };
                assert_eq!(out[0].policy[b.dense_index(p)], want);
            }
        }
    }

    #[test]
    fn the_softmax_exponential_is_within_two_ulp_of_libm() {
        let mut x = 0.0f32;
        while x > -86.0 {
            let (got, want) = (exp_nonpositive(x), x.exp());
            let ulp = (want.to_bits() as i64 - got.to_bits() as i64).abs();
            assert!(ulp <= 2, "e^{x}: {got} against libm's {want}");
            x -= 0.001_37;
        }
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert!(exp_nonpositive(f32::NAN) > 0.0 && exp_nonpositive(f32::NAN) < 1e-37);
        assert_eq!(exp_nonpositive(f32::NEG_INFINITY), exp_nonpositive(-86.0));
    }

    #[test]
    fn the_softmax_sums_to_one_over_the_legal_points_and_survives_overflow() {
        let logits = [3.0, f32::NAN, -1.0, 50.0, 2.0, f32::INFINITY, 0.5];
        let mut p = [1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0];
        softmax_in_mask(&logits, &mut p);
        assert_eq!((p[2], p[4], p[5]), (0.0, 0.0, 0.0));
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(p[3] > 0.99 && p[1] > 0.0 && p[0] > 0.0);
        // An infinite legal logit: every shifted logit is NaN, and the share is uniform.
        let mut q = [1.0, 0.0, 1.0];
        softmax_in_mask(&[f32::INFINITY, 0.0, 1.0], &mut q);
        assert!(q[0] > 0.0 && q[2] > 0.0 && q[1] == 0.0);
        assert!((q.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        let mut none = [0.0; 3];
        softmax_in_mask(&[1.0, 2.0, 3.0], &mut none);
        assert_eq!(none, [0.0; 3]);
    }

    #[test]
    fn softmax_from_planes_matches_softmax_from_board() {
        for b in boards() {
            let area = b.width() * b.height();
            let mut planes = vec![0.0; features::input_len(&b)];
            features::encode(&b, &mut planes);
            let logits: Vec<f32> = (0..area).map(|i| ((i * 37) % 11) as f32 * 0.3).collect();
            let (mut a, mut c) = (vec![0.0; area], vec![0.0; area]);
            masked_softmax(&b, &logits, &mut a);
            masked_softmax_planes(&planes, &logits, &mut c);
            assert_eq!(a, c);
            for p in b.points() {
                assert_eq!(a[b.dense_index(p)] > 0.0, b.is_legal(p), "{p:?}");
            }
        }
    }
}
