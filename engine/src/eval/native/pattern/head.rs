//! The pattern network after the accumulator: features `clamp(acc, 0, 1)` (int16 to fp32), the
//! policy's depthwise 3x3, clamp and 1x1, and the value head. Plain loops over channels in
//! groups of `L` lanes, which `simd::vectorized` compiles for the chosen kernels' vector width;
//! every sum runs in the same order on every path, so all paths give the same bits.

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
    /// Features on the board padded by one zero point: `[(h + 2) * (w + 2)][dim]`.
    features: Vec<f32>,
    /// Points whose accumulator gets the forbidden vector.
    forbidden: Vec<bool>,
    bias: [Vec<i32>; 2],
    sum: Vec<f32>,
    hidden: Vec<f32>,
}

impl Head {
    /// Logits of the `w` x `h` board (`logits`, `y * w + x`) and the value, from the side to
    /// move's accumulator `acc` (`[point][dim]`).
    #[allow(clippy::too_many_arguments)]
    pub fn forward(
        &self,
        simd: Simd,
        acc: &[i16],
        (w, h): (usize, usize),
        black: bool,
        forbidden: &[usize],
        scratch: &mut Scratch,
        logits: &mut [f32],
    ) -> f32 {
        let dim = self.dim;
        let s = scratch;
        s.features.clear();
        s.features.resize((w + 2) * (h + 2) * dim, 0.0);
        s.forbidden.clear();
        s.forbidden.resize(w * h, false);
        forbidden.iter().for_each(|&i| s.forbidden[i] = true);
        let base = |c: usize| if black { self.black[c] as i32 } else { 0 };
        s.bias[0] = (0..dim).map(base).collect();
        s.bias[1] = (0..dim)
            .map(|c| base(c) + self.forbidden[c] as i32)
            .collect();
        s.sum.clear();
        s.sum.resize(dim, 0.0);
        let pass = Pass {
            head: self,
            acc,
            w,
            h,
            scratch: s,
            logits,
        };
        match dim % 16 {
            0 => vectorized(simd, Lanes::<16>(pass)),
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
        features(&mut p);
        policy::<L>(p);
    }
}

/// `clamp(acc + bias, 0, 1)` into the padded feature image, and their sum per channel.
#[inline(always)]
fn features(p: &mut Pass) {
    let (head, dim, pw) = (p.head, p.head.dim, p.w + 2);
    let inv = 1.0 / head.scale;
    let top = head.scale as i32;
    let s = &mut *p.scratch;
    for y in 0..p.h {
        for x in 0..p.w {
            let i = y * p.w + x;
            let bias = &s.bias[s.forbidden[i] as usize];
            let a = &p.acc[i * dim..(i + 1) * dim];
            let f = &mut s.features[((y + 1) * pw + x + 1) * dim..][..dim];
            for (((f, &a), &b), sum) in f.iter_mut().zip(a).zip(bias).zip(s.sum.iter_mut()) {
                *f = (a as i32 + b).clamp(0, top) as f32 * inv;
                *sum += *f;
            }
        }
    }
}

/// Depthwise 3x3 + bias, clamp, 1x1 to the logit, point by point.
#[inline(always)]
fn policy<const L: usize>(p: Pass) {
    let (head, dim, pw) = (p.head, p.head.dim, p.w + 2);
    let f = &p.scratch.features;
    for y in 0..p.h {
        for x in 0..p.w {
            let mut part = [0f32; L];
            for g in (0..dim).step_by(L) {
                let mut t: [f32; L] = head.dw_bias[g..g + L].try_into().expect("L lanes");
                for (tap, wrow) in head.dw.chunks_exact(dim).enumerate() {
                    let at = ((y + tap / 3) * pw + x + tap % 3) * dim + g;
                    let (xs, ws) = (&f[at..at + L], &wrow[g..g + L]);
                    for l in 0..L {
                        t[l] += ws[l] * xs[l];
                    }
                }
                let o = &head.out[g..g + L];
                for l in 0..L {
                    part[l] += o[l] * t[l].clamp(0.0, 1.0);
                }
            }
            p.logits[y * p.w + x] = head.out_bias + part.iter().sum::<f32>();
        }
    }
}
