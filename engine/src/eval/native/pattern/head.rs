//! The pattern network after the accumulator: features `clamp(acc, 0, 1)` (int16 to fp32) in
//! plain loops over channels in groups of `L` lanes, compiled by `simd::vectorized` for the
//! chosen kernels' vector width; the policy (`policy`); the value head over the features' mean.
//! Every sum runs in the same order on every path, so all paths give the same bits.

use super::super::simd::{Elementwise, Simd, vectorized};
use super::policy;
use crate::net::Dense;

/// The head's weights, laid out for the loops below.
#[derive(Clone, Debug)]
pub struct Head {
    pub dim: usize,
    /// Accumulator units per 1.0 (the table's scale).
    pub scale: f32,
    /// int16 at `scale`: added when black is to move, and at forbidden points.
    pub black: Vec<i16>,
    pub forbidden: Vec<i16>,
    /// `[tap][dim]` (tap = 3 * dy + dx).
    pub dw: Vec<f32>,
    pub dw_bias: Vec<f32>,
    pub out: Vec<f32>,
    pub out_bias: f32,
    /// `[dim][hidden]`: fc1 transposed, so its loop runs over the hidden units.
    pub fc1_t: Vec<f32>,
    pub fc1_bias: Vec<f32>,
    pub fc2: Dense,
}

/// Buffers of one evaluation, kept between evaluations.
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    /// Features on the board padded by one zero point: `[(h + 2) * (w + 2)][dim]`. Only the
    /// inside is written, so the border stays zero from the allocation on.
    features: Vec<f32>,
    /// Points whose accumulator gets the forbidden vector.
    forbidden: Vec<bool>,
    /// The int16 vectors added to every point (`[0]`) and to forbidden points (`[1]`).
    bias: [Vec<i32>; 2],
    sum: Vec<f32>,
    hidden: Vec<f32>,
}

impl Head {
    /// Logits of the `w` x `h` board's `empty` points (`logits`, `y * w + x`; the bias alone
    /// at the others) and the value, from the side to move's accumulator `acc` (`[point][dim]`).
    #[allow(clippy::too_many_arguments)]
    pub fn forward(
        &self,
        simd: Simd,
        acc: &[i16],
        empty: &[bool],
        (w, h): (usize, usize),
        black: bool,
        forbidden: &[usize],
        scratch: &mut Scratch,
        logits: &mut [f32],
    ) -> f32 {
        let dim = self.dim;
        let s = scratch;
        let padded = (w + 2) * (h + 2) * dim;
        if s.features.len() != padded {
            s.features.clear();
            s.features.resize(padded, 0.0);
        }
        s.forbidden.clear();
        s.forbidden.resize(w * h, false);
        forbidden.iter().for_each(|&i| s.forbidden[i] = true);
        let base = |c: usize| if black { self.black[c] as i32 } else { 0 };
        s.bias[0].clear();
        s.bias[0].extend((0..dim).map(base));
        s.bias[1].clear();
        s.bias[1].extend((0..dim).map(|c| base(c) + self.forbidden[c] as i32));
        s.sum.clear();
        s.sum.resize(dim, 0.0);
        let pass = Pass {
            head: self,
            acc,
            w,
            h,
            scratch: s,
        };
        match (simd, dim % 16) {
            (Simd::Avx512Vnni, 0) => vectorized(simd, Lanes::<16>(pass)),
            _ => vectorized(simd, Lanes::<8>(pass)),
        }
        let weights = policy::Weights {
            dim,
            dw: &self.dw,
            bias: &self.dw_bias,
            out: &self.out,
            out_bias: self.out_bias,
        };
        policy::logits(simd, weights, &s.features, empty, (w, h), logits);
        self.value(s, w * h)
    }

    fn value(&self, s: &mut Scratch, area: usize) -> f32 {
        let hidden = self.fc1_bias.len();
        s.hidden.clear();
        s.hidden.extend_from_slice(&self.fc1_bias);
        let inv = 1.0 / area as f32;
        for (c, &sum) in s.sum.iter().enumerate() {
            let m = sum * inv;
            let row = &self.fc1_t[c * hidden..(c + 1) * hidden];
            for (o, &wt) in s.hidden.iter_mut().zip(row) {
                *o += wt * m;
            }
        }
        let v = s
            .hidden
            .iter()
            .zip(&self.fc2.weight)
            .fold(self.fc2.bias[0], |a, (&x, &wt)| a + wt * x.max(0.0));
        v.tanh()
    }
}

struct Pass<'a> {
    head: &'a Head,
    acc: &'a [i16],
    w: usize,
    h: usize,
    scratch: &'a mut Scratch,
}

/// The pass with channels in groups of `L`.
struct Lanes<'a, const L: usize>(Pass<'a>);

impl<const L: usize> Elementwise for Lanes<'_, L> {
    #[inline(always)]
    fn run(self) {
        let Pass {
            head,
            acc,
            w,
            h,
            scratch,
        } = self.0;
        let (dim, pw) = (head.dim, w + 2);
        let Scratch {
            features,
            forbidden,
            bias,
            sum,
            ..
        } = scratch;
        for y in 0..h {
            let inside = &mut features[((y + 1) * pw + 1) * dim..][..w * dim];
            let row = y * w..(y + 1) * w;
            let acc = &acc[row.start * dim..row.end * dim];
            features_row::<L>(head, acc, &forbidden[row], bias, inside, sum);
        }
    }
}

/// A row of `clamp(acc + bias, 0, 1)` into `out` (the row's inside in the padded feature
/// image), and their sum per channel into `sum`. Slices as arguments, so the compiler knows the
/// stores into `out` leave `sum` and the rest alone.
#[inline(always)]
fn features_row<const L: usize>(
    head: &Head,
    acc: &[i16],
    forbidden: &[bool],
    bias: &[Vec<i32>; 2],
    out: &mut [f32],
    sum: &mut [f32],
) {
    let dim = head.dim;
    let (inv, top) = (1.0 / head.scale, head.scale);
    let points = acc.chunks_exact(dim).zip(out.chunks_exact_mut(dim));
    for ((a, o), &f) in points.zip(forbidden) {
        let bias = &bias[f as usize];
        for g in (0..dim).step_by(L) {
            let a: &[i16; L] = a[g..g + L].try_into().expect("L");
            let b: &[i32; L] = bias[g..g + L].try_into().expect("L");
            // Clamped as floats (exact: the sums are far below 2^24). max/min, not clamp:
            // clamp's check of its bounds kept the loop from vectorizing.
            let v: [f32; L] =
                std::array::from_fn(|l| ((a[l] as i32 + b[l]) as f32).max(0.0).min(top) * inv);
            o[g..g + L].copy_from_slice(&v);
            let sum: &mut [f32; L] = (&mut sum[g..g + L]).try_into().expect("L");
            for l in 0..L {
                sum[l] += v[l];
            }
        }
    }
}
