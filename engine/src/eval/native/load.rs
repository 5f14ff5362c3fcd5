//! Reading a model file into the native runtime's networks. Only the engine's own ResNet form is
//! accepted: the graph must be node for node the one `net::writer` writes for the weights' shape
//! (fp32, or int8 QDQ with 8- or 7-bit weights), which is checked by writing that graph again
//! from stand-in weights of the same shape and comparing. Anything else is `Unsupported`, for
//! ONNX Runtime to run.

use std::collections::BTreeMap;

use prost::Message;

use super::LoadError;
use super::float::{FloatNet, Head};
use super::quant::{self, QAdd, QBlock, QLayer, QParams, QuantNet};
use super::simd::{OUT_BLOCK, QConv};
use crate::net::onnx_pb::{GraphProto, ModelProto, TensorProto, tensor_proto::DataType};
use crate::net::quant::{ActivationRanges, WeightBits, weights_from_model};
use crate::net::{Dense, FEATURE_VERSION, INPUT_PLANES, ModelMeta, NetConfig, NetWeights};

/// A network the native runtime runs.
#[derive(Clone, Debug)]
pub enum Form {
    Quant(Box<QuantNet>),
    Float(Box<FloatNet>),
}

/// What `same_structure` calls the ResNet in its errors.
const RESNET: &str = "ResNet form";

/// A decoded model and its fivezero metadata, of feature version 1.
pub(super) fn decode(bytes: &[u8]) -> Result<(ModelProto, ModelMeta), LoadError> {
    let m = ModelProto::decode(bytes).map_err(|e| LoadError::NotOnnx(e.to_string()))?;
    let meta = ModelMeta::from_props(|k| prop(&m, k)).map_err(LoadError::Contract)?;
    if meta.feature_version != FEATURE_VERSION || meta.input_planes != INPUT_PLANES {
        return Err(LoadError::FeatureVersion(meta.feature_version));
    }
    Ok((m, meta))
}

/// A metadata value of the model.
pub(super) fn prop(m: &ModelProto, key: &str) -> Option<String> {
    m.metadata_props
        .iter()
        .find(|p| p.key.as_deref() == Some(key))
        .and_then(|p| p.value.clone())
}

/// Decodes `bytes` and builds the network they hold.
pub fn parse(bytes: &[u8]) -> Result<(Form, ModelMeta), LoadError> {
    let (m, meta) = decode(bytes)?;
    if let Some(form) = prop(&m, crate::net::meta_keys::FORM) {
        return Err(LoadError::Unsupported(format!(
            "a network of form `{form}`, not the ResNet"
        )));
    }
    let graph = m
        .graph
        .as_ref()
        .ok_or_else(|| LoadError::Contract("the model has no graph".into()))?;
    let form = match meta.quantization.as_deref() {
        None => {
            let (weights, _) = weights_from_model(&m).map_err(unsupported)?;
            let expected = crate::net::model_proto(&weights, &meta).map_err(unsupported)?;
            same_structure(graph, &expected, RESNET)?;
            Form::Float(Box::new(FloatNet::new(&weights)))
        }
        Some(tag) => {
            let bits = [WeightBits::Eight, WeightBits::Seven]
                .into_iter()
                .find(|b| b.tag() == tag)
                .ok_or_else(|| LoadError::Unsupported(format!("quantization `{tag}`")))?;
            Form::Quant(Box::new(quantized(graph, &meta, bits)?))
        }
    };
    Ok((form, meta))
}

fn unsupported(e: impl std::fmt::Display) -> LoadError {
    LoadError::Unsupported(e.to_string())
}

/// The names of the tensors the int8 graph quantizes, in the writer's order.
fn quantized_tensors(blocks: usize) -> Vec<String> {
    let mut names = vec!["planes".to_string(), "stem.relu".to_string()];
    for i in 0..blocks {
        names.extend([
            format!("block{i}.relu1"),
            format!("block{i}.conv2"),
            format!("block{i}.relu2"),
        ]);
    }
    names.push("policy_conv.relu".into());
    names
}

/// Node for node (operators, wiring, attributes) and initializer for initializer (name, type,
/// shape) the graph the writer makes; the numbers themselves are not compared.
pub(super) fn same_structure(
    graph: &GraphProto,
    expected: &ModelProto,
    form: &str,
) -> Result<(), LoadError> {
    let want = expected.graph.as_ref().expect("the writer makes a graph");
    if graph.node.len() != want.node.len() {
        return Err(LoadError::Unsupported(format!(
            "{} nodes where the engine's {form} has {}",
            graph.node.len(),
            want.node.len()
        )));
    }
    for (a, b) in graph.node.iter().zip(&want.node) {
        if (&a.op_type, &a.input, &a.output, &a.attribute)
            != (&b.op_type, &b.input, &b.output, &b.attribute)
        {
            return Err(LoadError::Unsupported(format!(
                "node `{}` is not the engine's {form}",
                a.name.as_deref().unwrap_or("?")
            )));
        }
    }
    let shape = |t: &TensorProto| (t.name.clone(), t.data_type, t.dims.clone());
    let (have, need): (Vec<_>, Vec<_>) = (
        graph.initializer.iter().map(shape).collect(),
        want.initializer.iter().map(shape).collect(),
    );
    if let Some((h, n)) = have.iter().zip(&need).find(|(h, n)| h != n) {
        return Err(LoadError::Unsupported(format!(
            "initializer `{}` {:?} where the engine's {form} has `{}` {:?}",
            h.0.as_deref().unwrap_or("?"),
            h.2,
            n.0.as_deref().unwrap_or("?"),
            n.2
        )));
    }
    if have.len() != need.len() {
        return Err(LoadError::Unsupported(format!(
            "{} initializers where the engine's {form} has {}",
            have.len(),
            need.len()
        )));
    }
    let names = |v: &[crate::net::onnx_pb::ValueInfoProto]| -> Vec<Option<String>> {
        v.iter().map(|i| i.name.clone()).collect()
    };
    if names(&graph.input) != names(&want.input) || names(&graph.output) != names(&want.output) {
        return Err(LoadError::Unsupported("inputs or outputs differ".into()));
    }
    Ok(())
}

/// Initializers by name.
pub(super) struct Inits<'a>(BTreeMap<&'a str, &'a TensorProto>);

impl<'a> Inits<'a> {
    pub(super) fn new(g: &'a GraphProto) -> Inits<'a> {
        Inits(
            g.initializer
                .iter()
                .filter_map(|t| Some((t.name.as_deref()?, t)))
                .collect(),
        )
    }

    pub(super) fn get(&self, name: &str) -> Result<&'a TensorProto, LoadError> {
        self.0
            .get(name)
            .copied()
            .ok_or_else(|| LoadError::Unsupported(format!("tensor `{name}` is missing")))
    }

    pub(super) fn dims(&self, name: &str) -> Result<Vec<usize>, LoadError> {
        Ok(self
            .get(name)?
            .dims
            .iter()
            .map(|&d| d.max(0) as usize)
            .collect())
    }

    /// The raw little-endian bytes of a tensor of `ty` with `len` elements of `size` bytes, or
    /// its typed field.
    fn values<T>(
        &self,
        name: &str,
        ty: DataType,
        size: usize,
        from_raw: impl Fn(&[u8]) -> T,
        from_typed: impl Fn(&TensorProto) -> Vec<T>,
    ) -> Result<Vec<T>, LoadError> {
        let t = self.get(name)?;
        if t.data_type != Some(ty as i32) {
            return Err(LoadError::Contract(format!(
                "tensor `{name}` is not {ty:?}"
            )));
        }
        let len: usize = t.dims.iter().map(|&d| d.max(0) as usize).product();
        let v = match &t.raw_data {
            Some(raw) => raw.chunks_exact(size).map(from_raw).collect(),
            None => from_typed(t),
        };
        if v.len() != len {
            return Err(LoadError::Contract(format!(
                "tensor `{name}` has {} values, its shape says {len}",
                v.len()
            )));
        }
        Ok(v)
    }

    pub(super) fn f32s(&self, name: &str) -> Result<Vec<f32>, LoadError> {
        let v = self.values(
            name,
            DataType::Float,
            4,
            |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            |t| t.float_data.clone(),
        )?;
        match v.iter().find(|x| !x.is_finite()) {
            Some(x) => Err(LoadError::Contract(format!("tensor `{name}` holds {x}"))),
            None => Ok(v),
        }
    }

    fn i32s(&self, name: &str) -> Result<Vec<i32>, LoadError> {
        let raw = |b: &[u8]| i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        self.values(name, DataType::Int32, 4, raw, |t| t.int32_data.clone())
    }

    fn i8s(&self, name: &str) -> Result<Vec<i8>, LoadError> {
        let typed = |t: &TensorProto| t.int32_data.iter().map(|&v| v as i8).collect();
        self.values(name, DataType::Int8, 1, |b| b[0] as i8, typed)
    }

    fn u8s(&self, name: &str) -> Result<Vec<u8>, LoadError> {
        let typed = |t: &TensorProto| t.int32_data.iter().map(|&v| v as u8).collect();
        self.values(name, DataType::Uint8, 1, |b| b[0], typed)
    }

    /// The scale and zero point of a quantized tensor.
    fn qparams(&self, tensor: &str) -> Result<QParams, LoadError> {
        let scale = self.f32s(&format!("{tensor}.q_scale"))?;
        let zero = self.u8s(&format!("{tensor}.q_zero"))?;
        match (&scale[..], &zero[..]) {
            (&[scale], &[zero]) if scale > 0.0 => Ok(QParams { scale, zero }),
            _ => Err(LoadError::Contract(format!(
                "`{tensor}` has no positive scalar scale and zero point"
            ))),
        }
    }

    pub(super) fn dense(&self, name: &str) -> Result<Dense, LoadError> {
        let dims = self.dims(&format!("{name}.weight"))?;
        let [out_features, in_features] = dims[..] else {
            return Err(unsupported(format!("`{name}.weight` is not 2-dimensional")));
        };
        Ok(Dense {
            out_features,
            in_features,
            weight: self.f32s(&format!("{name}.weight"))?,
            bias: self.f32s(&format!("{name}.bias"))?,
        })
    }
}

/// The int8 network of a graph the writer made with `bits` weights.
fn quantized(
    graph: &GraphProto,
    meta: &ModelMeta,
    bits: WeightBits,
) -> Result<QuantNet, LoadError> {
    let inits = Inits::new(graph);
    let outputs = |name: &str| -> Result<usize, LoadError> {
        inits
            .dims(name)?
            .first()
            .copied()
            .ok_or_else(|| unsupported(format!("`{name}` is a scalar")))
    };
    let config = NetConfig {
        blocks: meta.blocks,
        channels: meta.channels,
        input_planes: meta.input_planes,
        policy_channels: outputs("policy_conv.weight_q")?,
        value_channels: outputs("value_conv.weight_q")?,
        value_hidden: outputs("value_fc1.weight")?,
    };
    let standin = NetWeights::random(config, 1).map_err(unsupported)?;
    let ranges = ActivationRanges {
        ranges: quantized_tensors(meta.blocks)
            .into_iter()
            .map(|n| (n, (0.0, 1.0)))
            .collect(),
    };
    let expected =
        crate::net::quantized_model_proto(&standin, meta, &ranges, bits).map_err(unsupported)?;
    same_structure(graph, &expected, RESNET)?;

    let layer = |name: &str, input: &str, out: Option<(&str, bool)>, relu: bool| {
        qlayer(&inits, name, input, out, relu)
    };
    let mut trunk = "stem.relu".to_string();
    let stem = layer("stem", "planes", Some(("stem.relu", true)), false)?;
    let mut blocks = Vec::new();
    for i in 0..meta.blocks {
        let (relu1, conv2, relu2) = (
            format!("block{i}.relu1"),
            format!("block{i}.conv2"),
            format!("block{i}.relu2"),
        );
        blocks.push(QBlock {
            conv1: layer(
                &format!("block{i}.conv1"),
                &trunk,
                Some((&relu1, true)),
                false,
            )?,
            conv2: layer(&conv2, &relu1, Some((&conv2, false)), false)?,
            add: QAdd {
                a: inits.qparams(&conv2)?,
                b: inits.qparams(&trunk)?,
                to: inits.qparams(&relu2)?,
            },
        });
        trunk = relu2;
    }
    Ok(QuantNet {
        input: inits.qparams("planes")?,
        stem,
        blocks,
        policy_conv: layer(
            "policy_conv",
            &trunk,
            Some(("policy_conv.relu", true)),
            false,
        )?,
        policy_out: layer("policy_out", "policy_conv.relu", None, false)?,
        value_conv: layer("value_conv", &trunk, None, true)?,
        head: Head {
            fc1: inits.dense("value_fc1")?,
            fc2: inits.dense("value_fc2")?,
        },
    })
}

/// The conv `name` reading the quantized tensor `input`: requantized into `out` (its name, and
/// whether a ReLU follows), or dequantized to fp32 (then `float_relu`).
fn qlayer(
    inits: &Inits,
    name: &str,
    input: &str,
    out: Option<(&str, bool)>,
    float_relu: bool,
) -> Result<QLayer, LoadError> {
    let dims = inits.dims(&format!("{name}.weight_q"))?;
    let [o, i, k, _] = dims[..] else {
        return Err(unsupported(format!(
            "`{name}.weight_q` is not 4-dimensional"
        )));
    };
    let w = inits.i8s(&format!("{name}.weight_q"))?;
    let w_scale = inits.f32s(&format!("{name}.weight_scale"))?;
    let bias = inits.i32s(&format!("{name}.bias_q"))?;
    let b_scale = inits.f32s(&format!("{name}.bias_scale"))?;
    let symmetric = inits
        .i8s(&format!("{name}.weight_zero"))?
        .iter()
        .all(|&z| z == 0)
        && inits
            .i32s(&format!("{name}.bias_zero"))?
            .iter()
            .all(|&z| z == 0);
    if !symmetric {
        return Err(unsupported(format!(
            "`{name}` has nonzero weight or bias zero points"
        )));
    }
    if [w_scale.len(), bias.len(), b_scale.len()] != [o; 3] {
        return Err(LoadError::Contract(format!(
            "`{name}`: scales or biases are not per output channel"
        )));
    }
    let out = match out {
        Some((tensor, relu)) => Some((inits.qparams(tensor)?, relu)),
        None => None,
    };
    // The input image has a pixel stride of its producer's padded outputs, but the network's
    // input planes are packed as tightly as the kernels allow.
    let cin_p = if input == "planes" {
        i.div_ceil(4) * 4
    } else {
        i.div_ceil(OUT_BLOCK) * OUT_BLOCK
    };
    if w.len() != o * i * k * k {
        return Err(LoadError::Contract(format!(
            "`{name}.weight_q` is not square"
        )));
    }
    quant::layer(
        QConv::pack(&w, o, i, k, cin_p),
        &bias,
        inits.qparams(input)?,
        &w_scale,
        &b_scale,
        out,
        float_relu,
    )
}
