//! The pattern network after the accumulator: features `clamp(acc, 0, 1)` (int16 to fp32), the
//! policy's depthwise 3x3, clamp and 1x1, and the value head. Plain loops over channels in
//! groups of `L` lanes, compiled by `simd::vectorized` for the chosen kernels' vector width.
//! Every sum runs in the same order on every path, so all paths give the same bits.

use super::super::simd::{Elementwise, Simd, vectorized};
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
    /// Per point, the policy's 1x1 sums in `PART` lanes (channel c in lane c % PART).
    parts: Vec<f32>,
    hidden: Vec<f32>,
}

/// Lanes of the policy's per-point partial sums: fixed, so every path adds in the same order.
const PART: usize = 16;

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
        s.parts.clear();
        s.parts.resize(w * h * PART, 0.0);
        let pass = Pass {
            head: self,
            acc,
            empty,
            w,
            h,
            scratch: s,
            logits,
        };
        // Nine taps of weights stay in registers: 16 lanes fill AVX-512's 32 registers, 8 lanes
        // AVX2's 16.
        match (simd, dim % 16) {
            (Simd::Avx512Vnni, 0) => vectorized(simd, Lanes::<16>(pass)),
            _ => vectorized(simd, Lanes::<8>(pass)),
        }
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
    /// The points whose logit is computed (the others are occupied: masked anyway).
    empty: &'a [bool],
    w: usize,
    h: usize,
    scratch: &'a mut Scratch,
    logits: &'a mut [f32],
}

/// The pass with channels in groups of `L`.
struct Lanes<'a, const L: usize>(Pass<'a>);

impl<const L: usize> Elementwise for Lanes<'_, L> {
    #[inline(always)]
    fn run(self) {
        let mut p = self.0;
        for y in 0..p.h {
            features::<L>(&mut p, y);
        }
        for y in 0..p.h {
            policy::<L>(&mut p, y);
        }
        let (logits, parts) = (&mut *p.logits, &p.scratch.parts);
        for (logit, part) in logits.iter_mut().zip(parts.chunks_exact(PART)) {
            // Halved in a fixed order: a running sum of the 16 lanes was compiled into gathers
            // across points, a third of the head's time.
            let mut v: [f32; PART] = part.try_into().expect("PART");
            for half in [8, 4, 2, 1] {
                for j in 0..half {
                    v[j] += v[j + half];
                }
            }
            *logit = p.head.out_bias + v[0];
        }
    }
}

/// Row `y` of `clamp(acc + bias, 0, 1)` into the padded feature image, and their sum per
/// channel.
#[inline(always)]
fn features<const L: usize>(p: &mut Pass, y: usize) {
    let (head, dim, pw) = (p.head, p.head.dim, p.w + 2);
    let (inv, top) = (1.0 / head.scale, head.scale);
    let s = &mut *p.scratch;
    for x in 0..p.w {
        let i = y * p.w + x;
        let bias = &s.bias[s.forbidden[i] as usize];
        let at = ((y + 1) * pw + x + 1) * dim;
        for g in (0..dim).step_by(L) {
            let a: &[i16; L] = p.acc[i * dim + g..][..L].try_into().expect("L");
            let b: &[i32; L] = bias[g..g + L].try_into().expect("L");
            // Clamped as floats (exact: the sums are far below 2^24). max/min, not clamp:
            // clamp's check of its bounds kept the loop from vectorizing. Computed into a local
            // first: stored straight into the features, whose buffer the compiler cannot tell
            // apart from the sums', every lane ran one at a time.
            let v: [f32; L] =
                std::array::from_fn(|l| ((a[l] as i32 + b[l]) as f32).max(0.0).min(top) * inv);
            s.features[at + g..][..L].copy_from_slice(&v);
            let sum: &mut [f32; L] = (&mut s.sum[g..g + L]).try_into().expect("L");
            for l in 0..L {
                sum[l] += v[l];
            }
        }
    }
}

/// Row `y` of the policy: depthwise 3x3 + bias, clamp, 1x1 into the per-point partial sums,
/// `L` channels at a time with their weights in registers.
#[inline(always)]
// max/min rather than clamp: clamp's check of its bounds sits in the loop.
#[allow(clippy::manual_clamp)]
fn policy<const L: usize>(p: &mut Pass, y: usize) {
    let (head, dim, pw) = (p.head, p.head.dim, p.w + 2);
    let (f, parts) = (&p.scratch.features, &mut p.scratch.parts);
    let taps: [usize; 9] = std::array::from_fn(|t| ((t / 3) * pw + t % 3) * dim);
    for g in (0..dim).step_by(L) {
        let lanes = |v: &[f32], at: usize| -> [f32; L] { v[at..at + L].try_into().expect("L") };
        let wt: [[f32; L]; 9] = std::array::from_fn(|t| lanes(&head.dw, t * dim + g));
        let (bias, out) = (lanes(&head.dw_bias, g), lanes(&head.out, g));
        for x in 0..p.w {
            if !p.empty[y * p.w + x] {
                continue;
            }
            let at = (y * pw + x) * dim + g;
            let mut t = bias;
            for (w, &off) in wt.iter().zip(&taps) {
                let xs = lanes(f, at + off);
                for l in 0..L {
                    t[l] += w[l] * xs[l];
                }
            }
            let part = &mut parts[(y * p.w + x) * PART + g % PART..][..L];
            for l in 0..L {
                part[l] += out[l] * t[l].max(0.0).min(1.0);
            }
        }
    }
}
