//! The int8 QDQ network of the native runtime: the numbers of the graph `net::writer` emits for
//! an int8 export, computed as ONNX Runtime's fused kernels compute them. Activations are uint8
//! (quantized where the graph has QuantizeLinear: round half to even, saturate), convolutions
//! accumulate `(x - zero) * w` in int32 with the int32 bias and requantize per output channel
//! with the scale `x_scale * w_scale / y_scale` (QLinearConv); a residual add dequantizes both
//! sides and quantizes the sum (QLinearAdd). The two convolutions without a quantized output
//! (the policy logits, the value head's features) are dequantized to fp32 from their exact
//! accumulators; pooling and the value head's dense layers are fp32, as in the graph.
//!
//! Images are NHWC with a one-pixel border holding the tensor's zero point (ONNX Conv pads the
//! dequantized input with 0.0, whose quantized value is the zero point).

use super::LoadError;
use super::float::Head;
use super::image::Geometry;
use super::simd::{self, Elementwise, Input, PIX, QConv, Simd};

/// uint8 affine parameters of one quantized tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QParams {
    pub scale: f32,
    pub zero: u8,
}

impl QParams {
    /// ONNX QuantizeLinear: `saturate(round_half_even(x / scale) + zero)`.
    pub fn quantize(self, x: f32) -> u8 {
        let z = self.zero as f32;
        let v = (x / self.scale).max(-z).min(255.0 - z);
        (round_even(v) + self.zero as i32) as u8
    }
}

/// Round half to even for |v| < 2^22 (what SSE's conversion does under the default rounding
/// mode, and what ONNX Runtime's kernels use): adding 1.5 * 2^23 leaves no fraction bits, and
/// the integer is read from the sum's low bits (no float-to-int conversion: this vectorizes).
#[inline(always)]
fn round_even(v: f32) -> i32 {
    const MAGIC: f32 = 12_582_912.0;
    (v + MAGIC).to_bits() as i32 - MAGIC.to_bits() as i32
}

/// What a convolution does with its accumulators.
#[derive(Clone, Debug)]
pub enum Output {
    /// Requantized to uint8 (QLinearConv): `scale[o] = x_scale * w_scale[o] / y_scale`, the
    /// bias already in the accumulator; `relu` keeps the result at or above the zero point.
    Quantized {
        scale: Vec<f32>,
        to: QParams,
        relu: bool,
    },
    /// Dequantized to fp32: `acc * scale[o] + bias[o]`, with `relu` clamped at 0.
    Float {
        scale: Vec<f32>,
        bias: Vec<f32>,
        relu: bool,
    },
}

/// A convolution of the int8 graph: packed weights, the constant each accumulator starts from
/// (the int32 bias of a requantized output, minus the input zero point times the weight sum),
/// and its output.
#[derive(Clone, Debug)]
pub struct QLayer {
    pub conv: QConv,
    pub start: Vec<i32>,
    pub output: Output,
}

/// A residual add: `quantize((a - za) * sa + (b - zb) * sb)` into `to`, then ReLU.
#[derive(Clone, Copy, Debug)]
pub struct QAdd {
    pub a: QParams,
    pub b: QParams,
    pub to: QParams,
}

#[derive(Clone, Debug)]
pub struct QBlock {
    pub conv1: QLayer,
    pub conv2: QLayer,
    pub add: QAdd,
}

/// The whole int8 network.
#[derive(Clone, Debug)]
pub struct QuantNet {
    pub input: QParams,
    pub stem: QLayer,
    pub blocks: Vec<QBlock>,
    pub policy_conv: QLayer,
    pub policy_out: QLayer,
    pub value_conv: QLayer,
    pub head: Head,
}

/// Working buffers of one position.
struct Buffers {
    a: Vec<u8>,
    b: Vec<u8>,
    c: Vec<u8>,
    acc: Vec<i32>,
}

impl QuantNet {
    /// The policy logits (`h*w`) and value of one position (`planes`: `[planes, h, w]`).
    pub fn forward_one(
        &self,
        simd: Simd,
        planes: &[f32],
        geo: &Geometry,
        logits: &mut [f32],
    ) -> f32 {
        let trunk = self.stem.conv.cout_p;
        let widest = self.widest();
        let mut buf = Buffers {
            a: vec![0; geo.pixels() * widest],
            b: vec![0; geo.pixels() * widest],
            c: vec![0; geo.pixels() * widest],
            acc: vec![0; PIX * widest.max(simd::OUT_BLOCK)],
        };
        let cin = self.stem.conv.cin_p;
        self.quantize_input(planes, geo, &mut buf.a[..geo.pixels() * cin]);
        self.conv_u8(simd, &self.stem, &buf.a, geo, &mut buf.b, &mut buf.acc);
        // The trunk lives in `b`; `a` and `c` are scratch.
        for blk in &self.blocks {
            self.conv_u8(simd, &blk.conv1, &buf.b, geo, &mut buf.a, &mut buf.acc);
            self.conv_u8(simd, &blk.conv2, &buf.a, geo, &mut buf.c, &mut buf.acc);
            residual_add(simd, &blk.add, &buf.c, &mut buf.b, trunk, geo);
        }
        self.conv_u8(
            simd,
            &self.policy_conv,
            &buf.b,
            geo,
            &mut buf.a,
            &mut buf.acc,
        );
        let mut out = vec![0f32; geo.pixels() * self.policy_out.conv.cout_p];
        conv_f32(simd, &self.policy_out, &buf.a, geo, &mut out, &mut buf.acc);
        let cp = self.policy_out.conv.cout_p;
        for (i, l) in logits.iter_mut().enumerate() {
            *l = out[geo.interior(i) * cp];
        }
        let vc = &self.value_conv.conv;
        let mut v = vec![0f32; geo.pixels() * vc.cout_p];
        conv_f32(simd, &self.value_conv, &buf.b, geo, &mut v, &mut buf.acc);
        self.head.value(&v, vc.cout_p, vc.cout, geo)
    }

    /// The most bytes a pixel of any image of this network holds.
    fn widest(&self) -> usize {
        let mut layers = vec![
            &self.stem,
            &self.policy_conv,
            &self.policy_out,
            &self.value_conv,
        ];
        layers.extend(self.blocks.iter().flat_map(|b| [&b.conv1, &b.conv2]));
        layers
            .iter()
            .map(|l| l.conv.cin_p.max(l.conv.cout_p))
            .max()
            .unwrap_or(simd::OUT_BLOCK)
    }

    /// `[planes, h, w]` fp32 -> padded NHWC uint8 (QuantizeLinear of the input); the border
    /// and the padding channels hold the zero point.
    fn quantize_input(&self, planes: &[f32], geo: &Geometry, x: &mut [u8]) {
        let cs = self.stem.conv.cin_p;
        x.fill(self.input.zero);
        let hw = geo.h * geo.w;
        // The planes hold 0 and 1: their quantized values once, the division for anything else.
        let (q0, q1) = (self.input.quantize(0.0), self.input.quantize(1.0));
        for (c, plane) in planes.chunks_exact(hw).enumerate() {
            for (i, &v) in plane.iter().enumerate() {
                x[geo.interior(i) * cs + c] = match v {
                    0.0 => q0,
                    1.0 => q1,
                    _ => self.input.quantize(v),
                };
            }
        }
    }

    /// A convolution with a uint8 output; the output's border is reset to its zero point.
    fn conv_u8(
        &self,
        simd: Simd,
        layer: &QLayer,
        x: &[u8],
        geo: &Geometry,
        y: &mut [u8],
        acc: &mut [i32],
    ) {
        let Output::Quantized { scale, to, relu } = &layer.output else {
            unreachable!("conv_u8 on a float output")
        };
        let cout_p = layer.conv.cout_p;
        let z = to.zero as f32;
        let (lo, hi) = (if *relu { 0.0 } else { -z }, 255.0 - z);
        let acc = &mut acc[..PIX * cout_p];
        let offsets = geo.offsets(layer.conv.taps);
        let mut wide = Vec::new();
        simd::widen(simd, x, &mut wide);
        let input = Input { x, wide: &wide };
        let start = &layer.start[..cout_p];
        let scale = &scale[..cout_p];
        for p0 in geo.chunks() {
            simd::accumulate(simd, &layer.conv, input, &offsets, p0, acc);
            let dst = &mut y[p0 * cout_p..(p0 + PIX) * cout_p];
            // Padding channels (zero start and scale) come out as the zero point.
            let (lo, hi, zero) = (lo, hi, to.zero as i32);
            let step = Requantize {
                acc,
                start,
                scale,
                lo,
                hi,
                zero,
                dst,
            };
            simd::vectorized(simd, step);
        }
        geo.reset_border(y, cout_p, to.zero);
    }
}

/// A convolution dequantized to fp32 (`y`: padded NHWC, `cout_p` floats a pixel; its border is
/// not meaningful).
fn conv_f32(simd: Simd, layer: &QLayer, x: &[u8], geo: &Geometry, y: &mut [f32], acc: &mut [i32]) {
    let Output::Float { scale, bias, relu } = &layer.output else {
        unreachable!("conv_f32 on a quantized output")
    };
    let cout_p = layer.conv.cout_p;
    let acc = &mut acc[..PIX * cout_p];
    let offsets = geo.offsets(layer.conv.taps);
    let mut wide = Vec::new();
    simd::widen(simd, x, &mut wide);
    let input = Input { x, wide: &wide };
    let floor = if *relu { 0.0 } else { f32::NEG_INFINITY };
    let (start, scale, bias) = (&layer.start[..cout_p], &scale[..cout_p], &bias[..cout_p]);
    for p0 in geo.chunks() {
        simd::accumulate(simd, &layer.conv, input, &offsets, p0, acc);
        let dst = &mut y[p0 * cout_p..(p0 + PIX) * cout_p];
        let step = Dequantize {
            acc,
            start,
            scale,
            bias,
            floor,
            dst,
        };
        simd::vectorized(simd, step);
    }
}

/// `trunk = relu(quantize(dq(conv2) + dq(trunk)))` over the whole image, border reset after.
fn residual_add(simd: Simd, add: &QAdd, conv2: &[u8], trunk: &mut [u8], cs: usize, geo: &Geometry) {
    let (ra, rb) = (add.a.scale / add.to.scale, add.b.scale / add.to.scale);
    let (za, zb) = (add.a.zero as f32, add.b.zero as f32);
    // From the first board pixel to the last: the rest is border, reset below.
    let run = geo.run();
    let (lo, hi) = (run.start * cs, run.end * cs);
    let step = Add {
        a: &conv2[lo..hi],
        b: &mut trunk[lo..hi],
        offset: -za * ra - zb * rb,
        ra,
        rb,
        hi: 255.0 - add.to.zero as f32,
        zc: add.to.zero as i32,
    };
    simd::vectorized(simd, step);
    geo.reset_border(trunk, cs, add.to.zero);
}

/// Requantization of one chunk's accumulators (`PIX` pixels of `start.len()` channels).
struct Requantize<'a> {
    acc: &'a [i32],
    start: &'a [i32],
    scale: &'a [f32],
    lo: f32,
    hi: f32,
    zero: i32,
    dst: &'a mut [u8],
}

impl Elementwise for Requantize<'_> {
    #[inline(always)]
    fn run(self) {
        // Blocks of a fixed 16 channels, computed in local arrays: one vector each, where a loop
        // over slices is left to a scalar path (a run-time count, possible aliasing).
        let cout_p = self.start.len();
        for (a, d) in self
            .acc
            .chunks_exact(cout_p)
            .zip(self.dst.chunks_exact_mut(cout_p))
        {
            for blk in 0..cout_p / B {
                let r = blk * B..(blk + 1) * B;
                let a: &[i32; B] = a[r.clone()].try_into().expect("a block");
                let start: &[i32; B] = self.start[r.clone()].try_into().expect("a block");
                let scale: &[f32; B] = self.scale[r.clone()].try_into().expect("a block");
                let mut out = [0u8; B];
                for o in 0..B {
                    let v = (a[o] + start[o]) as f32 * scale[o];
                    let v = if v > self.lo { v } else { self.lo };
                    let v = if v < self.hi { v } else { self.hi };
                    out[o] = (round_even(v) + self.zero) as u8;
                }
                d[r].copy_from_slice(&out);
            }
        }
    }
}

/// The channel block of the element-wise steps (`simd::OUT_BLOCK`).
const B: usize = simd::OUT_BLOCK;

/// Dequantization of one chunk's accumulators to fp32.
struct Dequantize<'a> {
    acc: &'a [i32],
    start: &'a [i32],
    scale: &'a [f32],
    bias: &'a [f32],
    floor: f32,
    dst: &'a mut [f32],
}

impl Elementwise for Dequantize<'_> {
    #[inline(always)]
    fn run(self) {
        let cout_p = self.start.len();
        for (a, d) in self
            .acc
            .chunks_exact(cout_p)
            .zip(self.dst.chunks_exact_mut(cout_p))
        {
            for blk in 0..cout_p / B {
                let r = blk * B..(blk + 1) * B;
                let a: &[i32; B] = a[r.clone()].try_into().expect("a block");
                let start: &[i32; B] = self.start[r.clone()].try_into().expect("a block");
                let scale: &[f32; B] = self.scale[r.clone()].try_into().expect("a block");
                let bias: &[f32; B] = self.bias[r.clone()].try_into().expect("a block");
                let mut out = [0f32; B];
                for o in 0..B {
                    let v = (a[o] + start[o]) as f32 * scale[o] + bias[o];
                    // A select, not `f32::max` (whose NaN rule keeps this from vectorizing).
                    out[o] = if v > self.floor { v } else { self.floor };
                }
                d[r].copy_from_slice(&out);
            }
        }
    }
}

/// `b = relu(quantize((a - za) * sa + (b - zb) * sb))` element by element (QLinearAdd), with
/// the scale ratios `sa / sc`, `sb / sc` as ONNX Runtime's kernels use them (a division per
/// element would cost more than the convolution's kernel).
struct Add<'a> {
    a: &'a [u8],
    b: &'a mut [u8],
    /// `zc - za * ra - zb * rb`.
    offset: f32,
    ra: f32,
    rb: f32,
    /// 255 - zc.
    hi: f32,
    zc: i32,
}

impl Elementwise for Add<'_> {
    #[inline(always)]
    fn run(self) {
        // Blocks of 64 in local arrays (see `Requantize`); the images are whole pixels of 16
        // or more channels, the tail is done one by one.
        const N: usize = 64;
        let step = |a: &[u8], b: &mut [u8]| {
            for (t, &c) in b.iter_mut().zip(a) {
                let v = c as f32 * self.ra + (*t as f32 * self.rb + self.offset);
                let v = if v > 0.0 { v } else { 0.0 };
                let v = if v < self.hi { v } else { self.hi };
                *t = (round_even(v) + self.zc) as u8;
            }
        };
        let mut a = self.a.chunks_exact(N);
        let mut b = self.b.chunks_exact_mut(N);
        for (a, b) in (&mut a).zip(&mut b) {
            let a: &[u8; N] = a.try_into().expect("a block");
            let mut out: [u8; N] = b.try_into().expect("a block");
            step(a, &mut out);
            b.copy_from_slice(&out);
        }
        step(a.remainder(), b.into_remainder());
    }
}

/// The per-output-channel requantization scales and start values of a layer.
pub fn layer(
    conv: QConv,
    bias_q: &[i32],
    x: QParams,
    w_scale: &[f32],
    bias_scale: &[f32],
    out: Option<(QParams, bool)>,
    float_relu: bool,
) -> Result<QLayer, LoadError> {
    let sums = conv.weight_sums();
    let zx = x.zero as i32;
    let cout = conv.cout;
    let mut start: Vec<i32> = (0..cout).map(|o| -zx * sums[o]).collect();
    let output = match out {
        Some((to, relu)) => {
            for (s, &b) in start.iter_mut().zip(bias_q) {
                *s = s.checked_add(b).ok_or_else(|| {
                    LoadError::Unsupported("a bias overflows the int32 accumulator".into())
                })?;
            }
            let scale = w_scale.iter().map(|&ws| x.scale * ws / to.scale).collect();
            Output::Quantized { scale, to, relu }
        }
        None => Output::Float {
            scale: w_scale.iter().map(|&ws| x.scale * ws).collect(),
            bias: bias_q
                .iter()
                .zip(bias_scale)
                .map(|(&b, &bs)| b as f32 * bs)
                .collect(),
            relu: float_relu,
        },
    };
    // Padded to the padded output channels, which then come out as zeros (the kernels compute
    // whole blocks of channels).
    let cout_p = conv.cout_p;
    start.resize(cout_p, 0);
    let output = match output {
        Output::Quantized {
            mut scale,
            to,
            relu,
        } => {
            scale.resize(cout_p, 0.0);
            Output::Quantized { scale, to, relu }
        }
        Output::Float {
            mut scale,
            mut bias,
            relu,
        } => {
            scale.resize(cout_p, 0.0);
            bias.resize(cout_p, 0.0);
            Output::Float { scale, bias, relu }
        }
    };
    Ok(QLayer {
        conv,
        start,
        output,
    })
}
