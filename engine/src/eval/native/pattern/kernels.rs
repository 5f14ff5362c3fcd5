//! The pattern network's head kernels after the accumulator, each written three times in the
//! same order of operations, so all give the same bits: AVX-512 (16 channels a vector), AVX2
//! with FMA (8) and portable scalar code. Explicit intrinsics because the compiler's own
//! vectorization of these loops, tried several ways, kept them 2-4x slower (the policy's
//! nine-tap chain latency-bound, lanes halved through the stack, fields read again after every
//! store).
//!
//! - `features`: `clamp(acc + bias, 0, scale) / scale` (int16 + int32 to fp32; exact, the sums
//!   are far below 2^24) into the padded feature image, and each channel's sum over the points
//!   in row-major order and its max.
//! - `logits`: per empty point, the depthwise 3x3 + bias (taps 0..9, tap = 3 * dy + dx, by fused
//!   multiply-adds: `mul_add` in the portable code, one instruction where the CPU has FMA, exact
//!   in software where it has not), clamp to [0, 1], and the 1x1: channel c's product into lane
//!   c % 16 of a 16-lane sum (channels in increasing order), the lanes halved 8, 4, 2 and 1
//!   apart at the end (a vector reduction's order).
//! - `dense_add`: the small dense layers after pooling (the policy's context, the value's first
//!   layer), one safe body compiled for each path's vector width.

use super::super::simd::Simd;

/// Lanes of the per-point sum.
const PART: usize = 16;

/// The policy's weights as the kernels read them.
#[derive(Clone, Copy)]
pub struct Weights<'a> {
    pub dim: usize,
    /// `[tap][dim]`.
    pub dw: &'a [f32],
    pub bias: &'a [f32],
    pub out: &'a [f32],
    pub out_bias: f32,
}

/// Logits of the `w` x `h` board's points (`y * w + x`) from `features` (`[(h + 2) * (w + 2)]
/// [dim]`, padded by one zero point); a point that is not `empty` gets the output bias alone.
///
/// # Panics
/// If the slices' lengths do not fit `w`, `h` and `dim`, or `dim` is not a multiple of 8.
pub fn logits(
    simd: Simd,
    net: Weights,
    features: &[f32],
    empty: &[bool],
    (w, h): (usize, usize),
    logits: &mut [f32],
) {
    let dim = net.dim;
    assert!(dim.is_multiple_of(8), "pattern width {dim}");
    assert!(net.dw.len() == 9 * dim && net.bias.len() == dim && net.out.len() == dim);
    assert!(features.len() == (w + 2) * (h + 2) * dim);
    assert!(empty.len() == w * h && logits.len() == w * h);
    match simd {
        // SAFETY: the CPU has the features (a `Simd` other than Scalar is only chosen after
        // `supported`, which checks AVX2 and FMA for both); every read is inside the slices,
        // whose lengths are checked above.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512Vnni if dim.is_multiple_of(16) => unsafe {
            x86::avx512(net, features, empty, w, logits)
        },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512Vnni | Simd::Avx2 => unsafe { x86::avx2(net, features, empty, w, logits) },
        _ => scalar(net, features, empty, w, logits),
    }
}

/// `acc[o] += sum over i of rows[i][o] * inputs[i]` (`rows` is `[inputs.len()][acc.len()]`),
/// each output's sum in input order by a separate multiply and add. One body, compiled for each
/// path's vector width: Rust never fuses the two, so every path gives the same bits.
///
/// # Panics
/// If `rows` is not `inputs.len() * acc.len()` long.
pub fn dense_add(simd: Simd, acc: &mut [f32], rows: &[f32], inputs: &[f32]) {
    assert_eq!(rows.len(), inputs.len() * acc.len(), "a row per input");
    match simd {
        // SAFETY: the CPU has the features (`Simd::supported`); the body is safe code.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512Vnni => unsafe { x86::dense_add512(acc, rows, inputs) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { x86::dense_add256(acc, rows, inputs) },
        _ => dense_add_body(acc, rows, inputs),
    }
}

/// Outputs a block of `dense_add_body`: held in registers over all the inputs (a loop over the
/// inputs outside kept every output in memory, a store and a load per input).
const DENSE_BLOCK: usize = 16;

#[inline(always)]
fn dense_add_body(acc: &mut [f32], rows: &[f32], inputs: &[f32]) {
    let n = acc.len();
    for (b, out) in acc.chunks_mut(DENSE_BLOCK).enumerate() {
        let first = b * DENSE_BLOCK;
        if out.len() == DENSE_BLOCK {
            let mut sum: [f32; DENSE_BLOCK] = std::array::from_fn(|j| out[j]);
            for (i, &x) in inputs.iter().enumerate() {
                let row = &rows[i * n + first..][..DENSE_BLOCK];
                sum.iter_mut().zip(row).for_each(|(o, &w)| *o += w * x);
            }
            out.copy_from_slice(&sum);
        } else {
            for (i, &x) in inputs.iter().enumerate() {
                let row = &rows[i * n + first..][..out.len()];
                out.iter_mut().zip(row).for_each(|(o, &w)| *o += w * x);
            }
        }
    }
}

/// The accumulator's conversion to features: `bias[1]` at the `forbidden` points, `bias[0]` at
/// the others (int16 units of the table's `scale`).
#[derive(Clone, Copy)]
pub struct Conversion<'a> {
    pub dim: usize,
    pub scale: f32,
    pub bias: [&'a [i32]; 2],
}

/// Per channel, the features' sum and max over the board (both start from what they hold: 0).
pub struct Pooled<'a> {
    pub sum: &'a mut [f32],
    pub max: &'a mut [f32],
}

/// The features of the `w` x `h` board's accumulator `acc` (`[point][dim]`) into the inside of
/// `features` (padded by one point that is left as it is), and their sums and maxima per
/// channel into `pooled`.
///
/// # Panics
/// If the slices' lengths do not fit `w`, `h` and `dim`, or `dim` is not a multiple of 8.
pub fn features(
    simd: Simd,
    c: Conversion,
    acc: &[i16],
    forbidden: &[bool],
    (w, h): (usize, usize),
    features: &mut [f32],
    pooled: Pooled,
) {
    let dim = c.dim;
    assert!(dim.is_multiple_of(8), "pattern width {dim}");
    assert!(c.bias[0].len() == dim && c.bias[1].len() == dim);
    assert!(pooled.sum.len() == dim && pooled.max.len() == dim);
    assert!(acc.len() == w * h * dim && forbidden.len() == w * h);
    assert!(features.len() == (w + 2) * (h + 2) * dim);
    match simd {
        // SAFETY: as in `logits`.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512Vnni if dim.is_multiple_of(16) => unsafe {
            x86::features512(c, acc, forbidden, w, features, pooled)
        },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512Vnni | Simd::Avx2 => unsafe {
            x86::features256(c, acc, forbidden, w, features, pooled)
        },
        _ => features_scalar(c, acc, forbidden, w, features, pooled),
    }
}

/// The offset in the padded feature image of point `i` of a `w`-wide board.
fn inside(i: usize, w: usize, dim: usize) -> usize {
    ((i / w + 1) * (w + 2) + i % w + 1) * dim
}

// max/min rather than clamp, as the kernels compute it.
#[allow(clippy::manual_clamp)]
fn features_scalar(
    c: Conversion,
    acc: &[i16],
    forbidden: &[bool],
    w: usize,
    features: &mut [f32],
    pooled: Pooled,
) {
    let (dim, inv) = (c.dim, 1.0 / c.scale);
    for (i, &f) in forbidden.iter().enumerate() {
        let at = inside(i, w, dim);
        for ch in 0..dim {
            let a = acc[i * dim + ch] as i32 + c.bias[f as usize][ch];
            let v = (a as f32).max(0.0).min(c.scale) * inv;
            features[at + ch] = v;
            pooled.sum[ch] += v;
            pooled.max[ch] = pooled.max[ch].max(v);
        }
    }
}

/// The feature offsets of the nine taps from a point's top-left neighbour.
fn taps(w: usize, dim: usize) -> [usize; 9] {
    std::array::from_fn(|t| ((t / 3) * (w + 2) + t % 3) * dim)
}

/// The reference: one channel at a time, in the order the vector kernels keep.
// max/min rather than clamp, as the kernels compute it.
#[allow(clippy::manual_clamp)]
fn scalar(net: Weights, f: &[f32], empty: &[bool], w: usize, logits: &mut [f32]) {
    let (dim, taps) = (net.dim, taps(w, net.dim));
    for (i, logit) in logits.iter_mut().enumerate() {
        if !empty[i] {
            *logit = net.out_bias;
            continue;
        }
        let at = ((i / w) * (w + 2) + i % w) * dim;
        let mut part = [0f32; PART];
        for c in 0..dim {
            let mut t = net.bias[c];
            for (tap, &off) in taps.iter().enumerate() {
                t = net.dw[tap * dim + c].mul_add(f[at + off + c], t);
            }
            part[c % PART] = net.out[c].mul_add(t.max(0.0).min(1.0), part[c % PART]);
        }
        *logit = net.out_bias + halved(part);
    }
}

/// The sum of `v`'s lanes, halved 8, 4, 2 and 1 apart.
fn halved(v: [f32; PART]) -> f32 {
    let a: [f32; 8] = std::array::from_fn(|j| v[j] + v[j + 8]);
    let b: [f32; 4] = std::array::from_fn(|j| a[j] + a[j + 4]);
    let c: [f32; 2] = std::array::from_fn(|j| b[j] + b[j + 2]);
    c[0] + c[1]
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Conversion, Pooled, Weights, dense_add_body, taps};
    use std::arch::x86_64::*;

    /// `dense_add` in 16-lane vectors.
    ///
    /// # Safety
    /// The CPU has AVX-512F.
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn dense_add512(acc: &mut [f32], rows: &[f32], inputs: &[f32]) {
        dense_add_body(acc, rows, inputs);
    }

    /// `dense_add` in 8-lane vectors.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn dense_add256(acc: &mut [f32], rows: &[f32], inputs: &[f32]) {
        dense_add_body(acc, rows, inputs);
    }

    /// Points computed side by side: the nine taps are a chain of dependent multiply-adds, so
    /// one point at a time waits on their latency. Two FMA units of four cycles' latency need
    /// eight chains in flight: eight points in AVX-512's 32 registers. AVX2's 16 hold the eight
    /// chains and the weights but not all the points' sums, which go to the stack; touched once
    /// every eight channels, they cost less than reloading the weights for every four points
    /// (blocks of four: 182,000 evaluations/s on Zen 4, of eight: 197,000-200,000). Sixteen
    /// AVX-512 points spill the chains themselves (215,000 -> 135,000).
    const BLOCK512: usize = 8;
    const BLOCK256: usize = 8;

    /// Eight lanes halved 4, 2 and 1 apart (the last three steps of `halved`).
    #[target_feature(enable = "avx2")]
    fn halved8(a: __m256) -> f32 {
        let b = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps::<1>(a));
        let c = _mm_add_ps(b, _mm_movehl_ps(b, b));
        _mm_cvtss_f32(_mm_add_ss(c, _mm_shuffle_ps::<1>(c, c)))
    }

    /// Runs `block` over the board's rows, `block_len` points at a time (fewer at a row's end),
    /// skipping runs of occupied points.
    #[inline(always)]
    fn by_blocks(
        block_len: usize,
        empty: &[bool],
        w: usize,
        logits: &mut [f32],
        out_bias: f32,
        mut block: impl FnMut(usize, &mut [f32]),
    ) {
        for (row, (empty, logits)) in empty
            .chunks_exact(w)
            .zip(logits.chunks_exact_mut(w))
            .enumerate()
        {
            let mut x = 0;
            while x < w {
                let n = block_len.min(w - x);
                let (i, out) = (row * w + x, &mut logits[x..x + n]);
                if empty[x..x + n].iter().any(|&e| e) {
                    block(i, out);
                    for (o, &e) in out.iter_mut().zip(&empty[x..x + n]) {
                        if !e {
                            *o = out_bias;
                        }
                    }
                } else {
                    out.fill(out_bias);
                }
                x += n;
            }
        }
    }

    /// The walk of a `features` kernel, `lanes` channels a vector: channel group outer, so the
    /// group's sum stays in a register. `start(g)` gives the group's state, `point` converts the
    /// point at accumulator offset `ai` (features offset `at`, forbidden or not), `end` stores
    /// the group's sum.
    #[inline(always)]
    fn features_walk<S>(
        (w, dim, lanes): (usize, usize, usize),
        forbidden: &[bool],
        start: impl Fn(usize) -> S,
        mut point: impl FnMut(&mut S, usize, usize, bool),
        mut end: impl FnMut(usize, S),
    ) {
        for g in (0..dim).step_by(lanes) {
            let mut state = start(g);
            for (y, row) in forbidden.chunks_exact(w).enumerate() {
                let (mut ai, mut at) = (y * w * dim + g, ((y + 1) * (w + 2) + 1) * dim + g);
                for &f in row {
                    point(&mut state, ai, at, f);
                    (ai, at) = (ai + dim, at + dim);
                }
            }
            end(g, state);
        }
    }

    /// `features` 16 channels a vector.
    ///
    /// # Safety
    /// The CPU has AVX-512F; the slices' lengths are as `features` checks.
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn features512(
        c: Conversion,
        acc: &[i16],
        forbidden: &[bool],
        w: usize,
        features: &mut [f32],
        pooled: Pooled,
    ) {
        let (zero, top) = (_mm512_setzero_ps(), _mm512_set1_ps(c.scale));
        let inv = _mm512_set1_ps(1.0 / c.scale);
        let (a, out) = (acc.as_ptr(), features.as_mut_ptr());
        let (total, most) = (pooled.sum.as_mut_ptr(), pooled.max.as_mut_ptr());
        type State = ([__m512i; 2], __m512, __m512);
        // SAFETY (all accesses): channels g..g + 16 < dim of points inside the board, in slices
        // whose lengths `features` checked.
        let start = |g: usize| unsafe {
            let bias = [0, 1].map(|f| _mm512_loadu_si512(c.bias[f].as_ptr().add(g).cast()));
            (
                bias,
                _mm512_loadu_ps(total.add(g)),
                _mm512_loadu_ps(most.add(g)),
            )
        };
        let point = |(bias, s, m): &mut State, ai: usize, at: usize, f: bool| unsafe {
            let x = _mm512_cvtepi16_epi32(_mm256_loadu_si256(a.add(ai).cast()));
            let v = _mm512_cvtepi32_ps(_mm512_add_epi32(x, bias[f as usize]));
            let v = _mm512_mul_ps(_mm512_min_ps(_mm512_max_ps(v, zero), top), inv);
            _mm512_storeu_ps(out.add(at), v);
            *s = _mm512_add_ps(*s, v);
            *m = _mm512_max_ps(*m, v);
        };
        let end = |g: usize, (_, s, m): State| unsafe {
            _mm512_storeu_ps(total.add(g), s);
            _mm512_storeu_ps(most.add(g), m);
        };
        features_walk((w, c.dim, 16), forbidden, start, point, end);
    }

    /// `features` 8 channels a vector.
    ///
    /// # Safety
    /// The CPU has AVX2; the slices' lengths are as `features` checks.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn features256(
        c: Conversion,
        acc: &[i16],
        forbidden: &[bool],
        w: usize,
        features: &mut [f32],
        pooled: Pooled,
    ) {
        let (zero, top) = (_mm256_setzero_ps(), _mm256_set1_ps(c.scale));
        let inv = _mm256_set1_ps(1.0 / c.scale);
        let (a, out) = (acc.as_ptr(), features.as_mut_ptr());
        let (total, most) = (pooled.sum.as_mut_ptr(), pooled.max.as_mut_ptr());
        type State = ([__m256i; 2], __m256, __m256);
        // SAFETY (all accesses): as in `features512`, 8 channels at a time.
        let start = |g: usize| unsafe {
            let bias = [0, 1].map(|f| _mm256_loadu_si256(c.bias[f].as_ptr().add(g).cast()));
            (
                bias,
                _mm256_loadu_ps(total.add(g)),
                _mm256_loadu_ps(most.add(g)),
            )
        };
        let point = |(bias, s, m): &mut State, ai: usize, at: usize, f: bool| unsafe {
            let x = _mm256_cvtepi16_epi32(_mm_loadu_si128(a.add(ai).cast()));
            let v = _mm256_cvtepi32_ps(_mm256_add_epi32(x, bias[f as usize]));
            let v = _mm256_mul_ps(_mm256_min_ps(_mm256_max_ps(v, zero), top), inv);
            _mm256_storeu_ps(out.add(at), v);
            *s = _mm256_add_ps(*s, v);
            *m = _mm256_max_ps(*m, v);
        };
        let end = |g: usize, (_, s, m): State| unsafe {
            _mm256_storeu_ps(total.add(g), s);
            _mm256_storeu_ps(most.add(g), m);
        };
        features_walk((w, c.dim, 8), forbidden, start, point, end);
    }

    /// The kernel `$block` (`block512` or `block256`) over the board by `by_blocks`.
    macro_rules! over_board {
        ($block:ident, $len:expr, $net:expr, $f:expr, $empty:expr, $w:expr, $logits:expr) => {{
            let (net, f, w) = ($net, $f, $w);
            by_blocks($len, $empty, w, $logits, net.out_bias, |i, out| {
                let at = ((i / w) * (w + 2) + i % w) * net.dim;
                // SAFETY: the features of points i..i + out.len() and their neighbours are
                // inside the padded image (`logits` checks its length), as are the weights'
                // rows; the caller has the CPU features.
                unsafe {
                    match out.len() {
                        8 => out.copy_from_slice(&$block::<8>(net, f, at, w)),
                        7 => out.copy_from_slice(&$block::<7>(net, f, at, w)),
                        6 => out.copy_from_slice(&$block::<6>(net, f, at, w)),
                        5 => out.copy_from_slice(&$block::<5>(net, f, at, w)),
                        4 => out.copy_from_slice(&$block::<4>(net, f, at, w)),
                        3 => out.copy_from_slice(&$block::<3>(net, f, at, w)),
                        2 => out.copy_from_slice(&$block::<2>(net, f, at, w)),
                        _ => out.copy_from_slice(&$block::<1>(net, f, at, w)),
                    }
                }
            })
        }};
    }

    /// 16 channels a vector (`dim` a multiple of 16): lane l of the sum is lane l of `part`.
    ///
    /// # Safety
    /// The CPU has AVX-512F and FMA; the slices' lengths are as `logits` checks.
    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn avx512(
        net: Weights,
        f: &[f32],
        empty: &[bool],
        w: usize,
        logits: &mut [f32],
    ) {
        over_board!(block512, BLOCK512, net, f, empty, w, logits);
    }

    /// `P` consecutive points from feature offset `at`.
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[inline]
    unsafe fn block512<const P: usize>(net: Weights, f: &[f32], at: usize, w: usize) -> [f32; P] {
        let (dim, taps) = (net.dim, taps(w, net.dim));
        let (zero, one) = (_mm512_setzero_ps(), _mm512_set1_ps(1.0));
        let (dw, bias, out) = (net.dw.as_ptr(), net.bias.as_ptr(), net.out.as_ptr());
        let f = unsafe { f.as_ptr().add(at) };
        let mut part = [zero; P];
        for g in (0..dim).step_by(16) {
            let mut t = [unsafe { _mm512_loadu_ps(bias.add(g)) }; P];
            for (tap, &off) in taps.iter().enumerate() {
                let wt = unsafe { _mm512_loadu_ps(dw.add(tap * dim + g)) };
                for (p, t) in t.iter_mut().enumerate() {
                    let x = unsafe { _mm512_loadu_ps(f.add(off + p * dim + g)) };
                    *t = _mm512_fmadd_ps(wt, x, *t);
                }
            }
            let o = unsafe { _mm512_loadu_ps(out.add(g)) };
            for (part, &t) in part.iter_mut().zip(&t) {
                *part = _mm512_fmadd_ps(o, _mm512_min_ps(_mm512_max_ps(t, zero), one), *part);
            }
        }
        part.map(|v| {
            let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v)));
            net.out_bias + halved8(_mm256_add_ps(_mm512_castps512_ps256(v), hi))
        })
    }

    /// 8 channels a vector: channels with g % 16 == 0 into the low half of the sum, the others
    /// into the high half.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; the slices' lengths are as `logits` checks.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn avx2(
        net: Weights,
        f: &[f32],
        empty: &[bool],
        w: usize,
        logits: &mut [f32],
    ) {
        over_board!(block256, BLOCK256, net, f, empty, w, logits);
    }

    /// `P` consecutive points from feature offset `at`, 8 channels a vector.
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn block256<const P: usize>(net: Weights, f: &[f32], at: usize, w: usize) -> [f32; P] {
        let (dim, taps) = (net.dim, taps(w, net.dim));
        let (zero, one) = (_mm256_setzero_ps(), _mm256_set1_ps(1.0));
        let (dw, bias, out) = (net.dw.as_ptr(), net.bias.as_ptr(), net.out.as_ptr());
        let f = unsafe { f.as_ptr().add(at) };
        let mut part = [[zero; 2]; P];
        for g in (0..dim).step_by(8) {
            let mut t = [unsafe { _mm256_loadu_ps(bias.add(g)) }; P];
            for (tap, &off) in taps.iter().enumerate() {
                let wt = unsafe { _mm256_loadu_ps(dw.add(tap * dim + g)) };
                for (p, t) in t.iter_mut().enumerate() {
                    let x = unsafe { _mm256_loadu_ps(f.add(off + p * dim + g)) };
                    *t = _mm256_fmadd_ps(wt, x, *t);
                }
            }
            let o = unsafe { _mm256_loadu_ps(out.add(g)) };
            for (part, &t) in part.iter_mut().zip(&t) {
                let half = &mut part[(g / 8) % 2];
                *half = _mm256_fmadd_ps(o, _mm256_min_ps(_mm256_max_ps(t, zero), one), *half);
            }
        }
        part.map(|[lo, hi]| net.out_bias + halved8(_mm256_add_ps(lo, hi)))
    }
}
