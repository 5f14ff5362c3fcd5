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
use super::simd::{self, PIX, QConv, Simd};

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
        let v = (x / self.scale).clamp(-z, 255.0 - z);
        (round_even(v) as i32 + self.zero as i32) as u8
    }
}

/// Round half to even for |v| < 2^22 (what SSE's conversion does under the default rounding
/// mode, and what ONNX Runtime's kernels use): adding 1.5 * 2^23 leaves no fraction bits.
#[inline(always)]
fn round_even(v: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    (v + MAGIC) - MAGIC
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
            residual_add(&blk.add, &buf.c, &mut buf.b, trunk, geo);
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
        for (c, plane) in planes.chunks_exact(hw).enumerate() {
            for (i, &v) in plane.iter().enumerate() {
                x[geo.interior(i) * cs + c] = self.input.quantize(v);
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
        let (cout, cout_p) = (layer.conv.cout, layer.conv.cout_p);
        let z = to.zero as f32;
        let (lo, hi) = (if *relu { 0.0 } else { -z }, 255.0 - z);
        let acc = &mut acc[..PIX * cout_p];
        let offsets = geo.offsets(layer.conv.taps);
        for p0 in geo.chunks() {
            simd::accumulate(simd, &layer.conv, x, &offsets, p0, acc);
            for p in 0..PIX {
                let a = &acc[p * cout_p..p * cout_p + cout];
                let dst = &mut y[(p0 + p) * cout_p..(p0 + p) * cout_p + cout];
                for o in 0..cout {
                    let v = ((a[o] + layer.start[o]) as f32 * scale[o]).clamp(lo, hi);
                    dst[o] = (round_even(v) + z) as u8;
                }
            }
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
    let (cout, cout_p) = (layer.conv.cout, layer.conv.cout_p);
    let acc = &mut acc[..PIX * cout_p];
    let offsets = geo.offsets(layer.conv.taps);
    let floor = if *relu { 0.0 } else { f32::NEG_INFINITY };
    for p0 in geo.chunks() {
        simd::accumulate(simd, &layer.conv, x, &offsets, p0, acc);
        for p in 0..PIX {
            let a = &acc[p * cout_p..p * cout_p + cout];
            let dst = &mut y[(p0 + p) * cout_p..(p0 + p) * cout_p + cout];
            for o in 0..cout {
                dst[o] = ((a[o] + layer.start[o]) as f32 * scale[o] + bias[o]).max(floor);
            }
        }
    }
}

/// `trunk = relu(quantize(dq(conv2) + dq(trunk)))` over the whole image, border reset after.
fn residual_add(add: &QAdd, conv2: &[u8], trunk: &mut [u8], cs: usize, geo: &Geometry) {
    let (za, zb, zc) = (add.a.zero as f32, add.b.zero as f32, add.to.zero as f32);
    let (sa, sb, sc) = (add.a.scale, add.b.scale, add.to.scale);
    let n = geo.pixels() * cs;
    for (t, &c) in trunk[..n].iter_mut().zip(&conv2[..n]) {
        let v = ((c as f32 - za) * sa + (*t as f32 - zb) * sb) / sc;
        *t = (round_even(v.clamp(0.0, 255.0 - zc)) + zc) as u8;
    }
    geo.reset_border(trunk, cs, add.to.zero);
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
    Ok(QLayer {
        conv,
        start,
        output,
    })
}
