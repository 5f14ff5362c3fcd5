//! The pattern network after the accumulator: features `clamp(acc, 0, 1)` (int16 to fp32), their
//! mean and max, and the policy in `kernels`; the policy's per-board 1x1 weights (`out + C
//! mean`) and the value head over the mean and max here. Every sum runs in the same order on
//! every path, so all paths give the same bits.

use super::super::simd::Simd;
use super::kernels;
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
    /// `[dim][dim]`: the context transposed, row per input channel (the mean's), so its loop
    /// runs over the output channels, which the compiler vectorizes.
    pub context_t: Vec<f32>,
    /// `[2 dim][hidden]`: fc1 transposed, so its loop runs over the hidden units (the mean's
    /// inputs, then the max's).
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
    max: Vec<f32>,
    /// The 1x1's weights of this board: `out + C mean`.
    out: Vec<f32>,
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
        self.biases(black, &mut s.bias);
        for v in [&mut s.sum, &mut s.max] {
            v.clear();
            v.resize(dim, 0.0);
        }
        let conversion = kernels::Conversion {
            dim,
            scale: self.scale,
            bias: [&s.bias[0], &s.bias[1]],
        };
        let pooled = kernels::Pooled {
            sum: &mut s.sum,
            max: &mut s.max,
        };
        kernels::features(
            simd,
            conversion,
            acc,
            &s.forbidden,
            (w, h),
            &mut s.features,
            pooled,
        );
        let inv = 1.0 / (w * h) as f32;
        s.sum.iter_mut().for_each(|x| *x *= inv);
        self.board_out(simd, &s.sum, &mut s.out);
        let weights = kernels::Weights {
            dim,
            dw: &self.dw,
            bias: &self.dw_bias,
            out: &s.out,
            out_bias: self.out_bias,
        };
        kernels::logits(simd, weights, &s.features, empty, (w, h), logits);
        self.value(simd, s)
    }

    /// The int16 vectors added to every point (`[0]`: black's when black is to move) and to
    /// forbidden points (`[1]`: that plus the forbidden vector).
    fn biases(&self, black: bool, bias: &mut [Vec<i32>; 2]) {
        let base = |c: usize| if black { self.black[c] as i32 } else { 0 };
        bias[0].clear();
        bias[0].extend((0..self.dim).map(base));
        bias[1].clear();
        bias[1].extend((0..self.dim).map(|c| base(c) + self.forbidden[c] as i32));
    }

    /// `out + C mean` into `out` (`kernels::dense_add`).
    fn board_out(&self, simd: Simd, mean: &[f32], out: &mut Vec<f32>) {
        out.clear();
        out.extend_from_slice(&self.out);
        kernels::dense_add(simd, out, &self.context_t, mean);
    }

    /// The value from the features' mean (`s.sum`, already divided) and max.
    fn value(&self, simd: Simd, s: &mut Scratch) -> f32 {
        let (dim, hidden) = (self.dim, self.fc1_bias.len());
        s.hidden.clear();
        s.hidden.extend_from_slice(&self.fc1_bias);
        let (of_mean, of_max) = self.fc1_t.split_at(dim * hidden);
        kernels::dense_add(simd, &mut s.hidden, of_mean, &s.sum);
        kernels::dense_add(simd, &mut s.hidden, of_max, &s.max);
        let v = s
            .hidden
            .iter()
            .zip(&self.fc2.weight)
            .fold(self.fc2.bias[0], |a, (&x, &wt)| a + wt * x.max(0.0));
        v.tanh()
    }
}
