//! int8 export by static quantization (ONNX QDQ): activation ranges measured on calibration
//! positions with the reference forward, per-output-channel symmetric int8 conv weights, int32
//! biases at the input scale times the weight scale, and uint8 activations (zero point 0 after a
//! ReLU, so ONNX Runtime folds the ReLU into the quantized conv). The writer (`writer`) puts a
//! QuantizeLinear/DequantizeLinear pair on every tensor measured here and dequantizes the
//! weights; ONNX Runtime fuses the pattern into QLinearConv / QLinearAdd on a CPU that has
//! integer dot products, and runs the same graph unfused (slower, same numbers) elsewhere.
//!
//! Reading a model back (`weights_from_model`) lets a finished fp32 file be quantized later.
//! The int8 numbers themselves (scales, zero points, weight range) are `int8`'s, which the writer
//! uses too. Depends on `net` (weights, reference forward, `int8`, the writer) and the generated
//! protobuf types.

pub use super::int8::{ActivationRanges, WeightBits};
use super::onnx_pb::{ModelProto, tensor_proto::DataType};
use super::reference::forward_one;
use super::{Conv, Dense, ModelMeta, NetConfig, NetError, NetWeights, ResBlock};

/// Runs `positions` (each `[input_planes, h, w]`) through `weights` and keeps every quantized
/// tensor's range. Errors when a position has the wrong length or there is none.
pub fn calibrate(
    weights: &NetWeights,
    positions: &[Vec<f32>],
    h: usize,
    w: usize,
) -> Result<ActivationRanges, NetError> {
    weights.validate()?;
    let want = weights.config.input_planes * h * w;
    if positions.is_empty() || positions.iter().any(|p| p.len() != want) {
        return Err(NetError::Config(format!(
            "calibration needs at least one position of {want} values ({h}x{w})"
        )));
    }
    let mut r = ActivationRanges::default();
    for x in positions {
        forward_one(weights, x, h, w, &mut |name, t| {
            let (lo, hi) = t
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(v), hi.max(v))
                });
            let e = r.ranges.entry(name.to_string()).or_insert((lo, hi));
            *e = (e.0.min(lo), e.1.max(hi));
        });
    }
    Ok(r)
}

/// The fp32 weights and metadata of a model the project's writer wrote (the int8 export of it
/// needs them back). Errors name the missing or malformed tensor.
pub fn weights_from_model(m: &ModelProto) -> Result<(NetWeights, ModelMeta), NetError> {
    let bad = |s: String| NetError::Config(s);
    let meta = super::writer::meta_of_proto(m)?;
    let graph = m
        .graph
        .as_ref()
        .ok_or_else(|| bad("the model has no graph".into()))?;
    let tensor = |name: &str| -> Result<(Vec<usize>, Vec<f32>), NetError> {
        let t = graph
            .initializer
            .iter()
            .find(|t| t.name.as_deref() == Some(name))
            .ok_or_else(|| {
                bad(format!(
                    "tensor `{name}` is missing (not an fp32 fivezero model?)"
                ))
            })?;
        if t.data_type != Some(DataType::Float as i32) {
            return Err(bad(format!("tensor `{name}` is not float32")));
        }
        let data: Vec<f32> = match &t.raw_data {
            Some(raw) if raw.len() % 4 == 0 => raw
                .chunks(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Some(_) => {
                return Err(bad(format!(
                    "tensor `{name}`: raw data is not whole floats"
                )));
            }
            None => t.float_data.clone(),
        };
        Ok((t.dims.iter().map(|&d| d.max(0) as usize).collect(), data))
    };
    let conv = |name: &str| -> Result<Conv, NetError> {
        let (dims, weight) = tensor(&format!("{name}.weight"))?;
        let (_, bias) = tensor(&format!("{name}.bias"))?;
        let [o, i, k, _] = dims[..] else {
            return Err(bad(format!("`{name}.weight` is not 4-dimensional")));
        };
        Ok(Conv {
            out_channels: o,
            in_channels: i,
            kernel: k,
            weight,
            bias,
        })
    };
    let dense = |name: &str| -> Result<Dense, NetError> {
        let (dims, weight) = tensor(&format!("{name}.weight"))?;
        let (_, bias) = tensor(&format!("{name}.bias"))?;
        let [o, i] = dims[..] else {
            return Err(bad(format!("`{name}.weight` is not 2-dimensional")));
        };
        Ok(Dense {
            out_features: o,
            in_features: i,
            weight,
            bias,
        })
    };
    let blocks = (0..meta.blocks)
        .map(|i| {
            Ok(ResBlock {
                conv1: conv(&format!("block{i}.conv1"))?,
                conv2: conv(&format!("block{i}.conv2"))?,
            })
        })
        .collect::<Result<Vec<_>, NetError>>()?;
    let (policy_conv, value_conv) = (conv("policy_conv")?, conv("value_conv")?);
    let value_fc1 = dense("value_fc1")?;
    let config = NetConfig {
        blocks: meta.blocks,
        channels: meta.channels,
        input_planes: meta.input_planes,
        policy_channels: policy_conv.out_channels,
        value_channels: value_conv.out_channels,
        value_hidden: value_fc1.out_features,
    };
    let w = NetWeights {
        config,
        stem: conv("stem")?,
        blocks,
        policy_conv,
        policy_out: conv("policy_out")?,
        value_conv,
        value_fc1,
        value_fc2: dense("value_fc2")?,
    };
    w.validate()?;
    Ok((w, meta))
}

/// An fp32 model file's bytes (as the project's writer wrote them) -> its int8 export with
/// weights in `bits`, calibrated on `positions` (each `[input_planes, h, w]`).
pub fn quantize_model_bytes(
    fp32: &[u8],
    positions: &[Vec<f32>],
    h: usize,
    w: usize,
    bits: WeightBits,
) -> Result<Vec<u8>, NetError> {
    let m = super::writer::decode_model(fp32)?;
    let (weights, meta) = weights_from_model(&m)?;
    let ranges = calibrate(&weights, positions, h, w)?;
    super::writer::quantized_onnx_bytes(&weights, &meta, &ranges, bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Preset;

    #[test]
    fn a_written_model_reads_back_to_the_same_weights() {
        let w = NetWeights::random(Preset::Tiny.config(), 2).unwrap();
        let meta = ModelMeta::for_config(&w.config, 77);
        let m = crate::net::writer::model_proto(&w, &meta).unwrap();
        let (back, back_meta) = weights_from_model(&m).unwrap();
        assert_eq!(back, w);
        assert_eq!(back_meta, meta);
    }
}
