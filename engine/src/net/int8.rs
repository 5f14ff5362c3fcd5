//! The int8 numbers of the QDQ export: the activation ranges calibration measures, uint8
//! activation scales and zero points, per-output-channel symmetric int8 weights in the range
//! `WeightBits` allows, and int32 biases at the input scale times the weight scale. `quant`
//! measures the ranges and reads models back; `writer` turns these numbers into the graph.
//!
//! Pure arithmetic on `net`'s weights; depends on nothing else.

use std::collections::BTreeMap;

use super::Conv;

/// (min, max) of every quantized tensor over the calibration positions, by graph name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActivationRanges {
    pub ranges: BTreeMap<String, (f32, f32)>,
}

/// uint8 affine parameters (scale, zero point) covering `[lo, hi]` and 0.
pub(crate) fn activation_params(lo: f32, hi: f32) -> (f32, u8) {
    let (lo, hi) = (lo.min(0.0), hi.max(0.0));
    let scale = ((hi - lo) / 255.0).max(1e-8);
    let zero = (-lo / scale).round().clamp(0.0, 255.0) as u8;
    (scale, zero)
}

/// The range of the int8 weights. ONNX Runtime's integer convolution on x86 CPUs without VNNI
/// (AVX2, and AVX-512 before VNNI) adds pairs of uint8 x int8 products in 16 bits with
/// saturation, which full-range weights can overflow (its `reduce_range` remedy). On an
/// AVX2-only AMD EPYC the int8 test model's logits were off by 12% of their spread and its value
/// by 0.039 with 8 bits, by 6.6% and 0.006 with 7 bits; so 7 is the default. Yet the shipped
/// freestyle network played better in 8 bits on that CPU (200 games at 1 s/move, models/README.md)
/// though it follows its fp32 network less closely there: which plays better is measured per
/// network, and `fivezero-tools model quantize --weight-bits` chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WeightBits {
    /// -63..=63.
    #[default]
    Seven,
    /// -127..=127.
    Eight,
}

impl WeightBits {
    pub fn from_bits(bits: u8) -> Option<WeightBits> {
        match bits {
            7 => Some(WeightBits::Seven),
            8 => Some(WeightBits::Eight),
            _ => None,
        }
    }

    fn largest(self) -> f32 {
        match self {
            WeightBits::Seven => 63.0,
            WeightBits::Eight => 127.0,
        }
    }

    /// The file's `fivezero.quantization` value (`int8-qdq` alone meant 8-bit weights before 7
    /// existed, so it keeps that meaning).
    pub fn tag(self) -> &'static str {
        match self {
            WeightBits::Seven => "int8-qdq-w7",
            WeightBits::Eight => "int8-qdq",
        }
    }
}

/// Per-output-channel symmetric int8 weights in the range `bits` allows, and their scales.
pub(crate) fn quantize_weights(c: &Conv, bits: WeightBits) -> (Vec<i8>, Vec<f32>) {
    let per = c.in_channels * c.kernel * c.kernel;
    let top = bits.largest();
    let mut q = Vec::with_capacity(c.weight.len());
    let mut scales = Vec::with_capacity(c.out_channels);
    for row in c.weight.chunks(per) {
        let m = row.iter().fold(0f32, |m, &v| m.max(v.abs()));
        let s = (m / top).max(1e-12);
        scales.push(s);
        q.extend(row.iter().map(|&v| (v / s).round().clamp(-top, top) as i8));
    }
    (q, scales)
}

/// int32 biases at scale `x_scale * w_scale[o]` (what the integer accumulator adds).
pub(crate) fn quantize_bias(c: &Conv, x_scale: f32, w_scales: &[f32]) -> (Vec<i32>, Vec<f32>) {
    let scales: Vec<f32> = w_scales.iter().map(|&s| x_scale * s).collect();
    let q = c
        .bias
        .iter()
        .zip(&scales)
        .map(|(&b, &s)| {
            (b as f64 / s as f64)
                .round()
                .clamp(i32::MIN as f64, i32::MAX as f64) as i32
        })
        .collect();
    (q, scales)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{NetWeights, Preset};

    #[test]
    fn weights_and_biases_round_trip_within_a_step() {
        let w = NetWeights::random(Preset::Tiny.config(), 5).unwrap();
        let (q, s) = quantize_weights(&w.stem, WeightBits::default());
        let per = w.stem.in_channels * 9;
        for (i, (&v, &qv)) in w.stem.weight.iter().zip(&q).enumerate() {
            let scale = s[i / per];
            assert!((v - qv as f32 * scale).abs() <= scale / 2.0 + 1e-9);
        }
        let (qb, bs) = quantize_bias(&w.stem, 0.01, &s);
        for ((&b, &qv), &sc) in w.stem.bias.iter().zip(&qb).zip(&bs) {
            assert!((b - qv as f32 * sc).abs() <= sc / 2.0 + 1e-6);
        }
        assert_eq!(activation_params(0.0, 2.55), (0.01, 0));
        let (scale, zero) = activation_params(-1.0, 1.0);
        assert!((127..=128).contains(&zero), "{zero}");
        assert!((scale - 2.0 / 255.0).abs() < 1e-7);
    }
}
