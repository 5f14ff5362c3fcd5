//! Writes [`NetWeights`] + [`ModelMeta`] as an ONNX model (opset 17, IR 8): the graph of the
//! network contract, built from our own description of the network (as KataGo and lc0 do), with
//! dynamic N, H, W. Depends only on `net` (with `int8` for the quantized graph) and the generated
//! protobuf types; never on a runtime.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use prost::Message;

use super::int8::{self, ActivationRanges, WeightBits};
use super::onnx_pb::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, StringStringEntryProto,
    TensorProto, TensorShapeProto, TypeProto, ValueInfoProto, attribute_proto::AttributeType,
    tensor_proto::DataType, tensor_shape_proto, type_proto,
};
use super::pattern::{
    DIRECTIONS as PATTERN_DIRECTIONS, KEYS, PATTERN_FORM, PatternWeights, REACH, key_weight,
};
use super::{
    Conv, INPUT_NAME, INPUT_PLANES, ModelMeta, NetError, NetWeights, POLICY_NAME, VALUE_NAME,
};

pub const OPSET: i64 = 17;
/// Metadata key an int8 export carries (`WeightBits::tag`); fp32 files have none.
pub const QUANTIZATION_KEY: &str = super::meta_keys::QUANTIZATION;
pub const IR_VERSION: i64 = 8;

/// Graph builder: nodes in topological order, initializers in the same order (stable bytes).
/// With `quant`, every tensor that has a calibrated range is quantized once where it is made
/// (QuantizeLinear + DequantizeLinear) and its consumers read the dequantized copy.
struct Builder<'a> {
    nodes: Vec<NodeProto>,
    inits: Vec<TensorProto>,
    quant: Option<(&'a ActivationRanges, WeightBits)>,
    /// Tensor name -> (its dequantized copy, its scale).
    dequantized: BTreeMap<String, (String, f32)>,
}

fn attr_ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..Default::default()
    }
}

fn attr_int(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    }
}

fn attr_float(name: &str, v: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Float as i32),
        f: Some(v),
        ..Default::default()
    }
}

impl Builder<'_> {
    fn init(&mut self, name: &str, dims: &[usize], data: &[f32]) -> String {
        let raw = data.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.init_raw(name, dims, DataType::Float, raw)
    }

    /// An initializer of any element type; `raw` is little-endian, as ONNX raw_data is.
    fn init_raw(&mut self, name: &str, dims: &[usize], ty: DataType, raw: Vec<u8>) -> String {
        self.inits.push(TensorProto {
            dims: dims.iter().map(|&d| d as i64).collect(),
            data_type: Some(ty as i32),
            name: Some(name.into()),
            raw_data: Some(raw),
            ..Default::default()
        });
        name.to_string()
    }

    /// `tensor` as its consumers should read it: the dequantized copy when it has a calibrated
    /// range (made on first use), else itself; and its scale when quantized.
    fn read(&mut self, tensor: &str) -> (String, Option<f32>) {
        if let Some((dq, scale)) = self.dequantized.get(tensor) {
            return (dq.clone(), Some(*scale));
        }
        let Some(&(lo, hi)) = self.quant.and_then(|(q, _)| q.ranges.get(tensor)) else {
            return (tensor.to_string(), None);
        };
        let (scale, zero) = int8::activation_params(lo, hi);
        let sc = self.init(&format!("{tensor}.q_scale"), &[], &[scale]);
        let zp = self.init_raw(
            &format!("{tensor}.q_zero"),
            &[],
            DataType::Uint8,
            vec![zero],
        );
        let q = self.node(
            "QuantizeLinear",
            &format!("{tensor}.q"),
            &[tensor, &sc, &zp],
            vec![],
        );
        let dq = self.node(
            "DequantizeLinear",
            &format!("{tensor}.dq"),
            &[&q, &sc, &zp],
            vec![],
        );
        self.dequantized
            .insert(tensor.to_string(), (dq.clone(), scale));
        (dq, Some(scale))
    }

    /// A conv's weight and bias inputs: fp32 initializers, or with a quantized input, int8
    /// per-channel weights and int32 biases behind DequantizeLinear.
    fn conv_params(&mut self, name: &str, c: &Conv, x_scale: Option<f32>) -> (String, String) {
        let Some(x_scale) = x_scale else {
            let w = self.init(&format!("{name}.weight"), &c.shape(), &c.weight);
            let b = self.init(&format!("{name}.bias"), &[c.out_channels], &c.bias);
            return (w, b);
        };
        let o = c.out_channels;
        let bits = self.quant.map_or(WeightBits::default(), |(_, bits)| bits);
        let (wq, ws) = int8::quantize_weights(c, bits);
        let (bq, bs) = int8::quantize_bias(c, x_scale, &ws);
        let w_raw = wq.iter().map(|&v| v as u8).collect();
        let wq = self.init_raw(
            &format!("{name}.weight_q"),
            &c.shape(),
            DataType::Int8,
            w_raw,
        );
        let ws = self.init(&format!("{name}.weight_scale"), &[o], &ws);
        let wz = self.init_raw(
            &format!("{name}.weight_zero"),
            &[o],
            DataType::Int8,
            vec![0; o],
        );
        let b_raw = bq.iter().flat_map(|v| v.to_le_bytes()).collect();
        let bq = self.init_raw(&format!("{name}.bias_q"), &[o], DataType::Int32, b_raw);
        let bs = self.init(&format!("{name}.bias_scale"), &[o], &bs);
        let bz = self.init_raw(
            &format!("{name}.bias_zero"),
            &[o],
            DataType::Int32,
            vec![0; 4 * o],
        );
        let axis = vec![attr_int("axis", 0)];
        let w = self.node(
            "DequantizeLinear",
            &format!("{name}.weight"),
            &[&wq, &ws, &wz],
            axis.clone(),
        );
        let b = self.node(
            "DequantizeLinear",
            &format!("{name}.bias"),
            &[&bq, &bs, &bz],
            axis,
        );
        (w, b)
    }

    fn node(
        &mut self,
        op: &str,
        name: &str,
        inputs: &[&str],
        attrs: Vec<AttributeProto>,
    ) -> String {
        let out = name.to_string();
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![out.clone()],
            name: Some(name.into()),
            op_type: Some(op.into()),
            attribute: attrs,
            ..Default::default()
        });
        out
    }

    fn conv(&mut self, name: &str, c: &Conv, input: &str) -> String {
        let (input, x_scale) = self.read(input);
        let (w, b) = self.conv_params(name, c, x_scale);
        let input = input.as_str();
        let k = c.kernel as i64;
        let p = k / 2;
        let attrs = vec![
            attr_ints("kernel_shape", &[k, k]),
            attr_ints("pads", &[p, p, p, p]),
            attr_ints("strides", &[1, 1]),
            attr_ints("dilations", &[1, 1]),
            attr_int("group", 1),
        ];
        self.node("Conv", name, &[input, &w, &b], attrs)
    }

    fn relu(&mut self, name: &str, input: &str) -> String {
        self.node("Relu", name, &[input], vec![])
    }

    fn gemm(&mut self, name: &str, d: &super::Dense, input: &str) -> String {
        let w = self.init(
            &format!("{name}.weight"),
            &[d.out_features, d.in_features],
            &d.weight,
        );
        let b = self.init(&format!("{name}.bias"), &[d.out_features], &d.bias);
        let attrs = vec![
            attr_float("alpha", 1.0),
            attr_float("beta", 1.0),
            attr_int("transA", 0),
            attr_int("transB", 1),
        ];
        self.node("Gemm", name, &[input, &w, &b], attrs)
    }
}

enum Dim {
    Fixed(i64),
    Param(&'static str),
}

fn value_info(name: &str, dims: &[Dim]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| tensor_shape_proto::Dimension {
            denotation: None,
            value: Some(match d {
                Dim::Fixed(v) => tensor_shape_proto::dimension::Value::DimValue(*v),
                Dim::Param(p) => tensor_shape_proto::dimension::Value::DimParam((*p).into()),
            }),
        })
        .collect();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            denotation: None,
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(DataType::Float as i32),
                shape: Some(TensorShapeProto { dim }),
            })),
        }),
        ..Default::default()
    }
}

/// The ONNX model of `weights`, labelled with `meta`. `meta` must describe the same shape as the
/// weights (blocks, channels, input planes); its feature version is written as given.
pub fn model_proto(weights: &NetWeights, meta: &ModelMeta) -> Result<ModelProto, NetError> {
    build(weights, meta, None)
}

/// The int8 (QDQ) model of `weights`, its activations quantized with the calibrated `ranges`
/// (`quant::calibrate`), its weights in `bits`. Same inputs, outputs and metadata as
/// `model_proto`, plus `fivezero.quantization` (`WeightBits::tag`).
pub fn quantized_model_proto(
    weights: &NetWeights,
    meta: &ModelMeta,
    ranges: &ActivationRanges,
    bits: WeightBits,
) -> Result<ModelProto, NetError> {
    build(weights, meta, Some((ranges, bits)))
}

fn build(
    weights: &NetWeights,
    meta: &ModelMeta,
    quant: Option<(&ActivationRanges, WeightBits)>,
) -> Result<ModelProto, NetError> {
    weights.validate()?;
    let c = &weights.config;
    if (meta.blocks, meta.channels, meta.input_planes) != (c.blocks, c.channels, c.input_planes) {
        return Err(NetError::Config(format!(
            "metadata says {} blocks x {} channels x {} planes, weights are {} x {} x {}",
            meta.blocks, meta.channels, meta.input_planes, c.blocks, c.channels, c.input_planes
        )));
    }
    let mut g = Builder {
        nodes: Vec::new(),
        inits: Vec::new(),
        quant,
        dequantized: BTreeMap::new(),
    };
    let x = g.conv("stem", &weights.stem, INPUT_NAME);
    let mut t = g.relu("stem.relu", &x);
    for (i, b) in weights.blocks.iter().enumerate() {
        let y = g.conv(&format!("block{i}.conv1"), &b.conv1, &t);
        let y = g.relu(&format!("block{i}.relu1"), &y);
        let y = g.conv(&format!("block{i}.conv2"), &b.conv2, &y);
        let (y, _) = g.read(&y);
        let (skip, _) = g.read(&t);
        let y = g.node("Add", &format!("block{i}.add"), &[&y, &skip], vec![]);
        t = g.relu(&format!("block{i}.relu2"), &y);
    }
    let p = g.conv("policy_conv", &weights.policy_conv, &t);
    let p = g.relu("policy_conv.relu", &p);
    let p = g.conv("policy_out", &weights.policy_out, &p);
    g.nodes.push(NodeProto {
        input: vec![p],
        output: vec![POLICY_NAME.into()],
        name: Some("policy.flatten".into()),
        op_type: Some("Flatten".into()),
        attribute: vec![attr_int("axis", 1)],
        ..Default::default()
    });

    let v = g.conv("value_conv", &weights.value_conv, &t);
    let v = g.relu("value_conv.relu", &v);
    let mean = g.node("GlobalAveragePool", "value.mean", &[&v], vec![]);
    let max = g.node("GlobalMaxPool", "value.max", &[&v], vec![]);
    let v = g.node(
        "Concat",
        "value.pool",
        &[&mean, &max],
        vec![attr_int("axis", 1)],
    );
    value_mlp(&mut g, (&weights.value_fc1, &weights.value_fc2), &v);

    Ok(finish_model(g, meta, quant, c.input_planes))
}

/// The model around a finished graph: inputs, outputs, opset, metadata.
fn finish_model(
    g: Builder,
    meta: &ModelMeta,
    quant: Option<(&ActivationRanges, WeightBits)>,
    input_planes: usize,
) -> ModelProto {
    let graph = GraphProto {
        node: g.nodes,
        name: Some("fivezero".into()),
        initializer: g.inits,
        input: vec![value_info(
            INPUT_NAME,
            &[
                Dim::Param("N"),
                Dim::Fixed(input_planes as i64),
                Dim::Param("H"),
                Dim::Param("W"),
            ],
        )],
        output: vec![
            value_info(POLICY_NAME, &[Dim::Param("N"), Dim::Param("HW")]),
            value_info(VALUE_NAME, &[Dim::Param("N"), Dim::Fixed(1)]),
        ],
        ..Default::default()
    };
    ModelProto {
        ir_version: Some(IR_VERSION),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(OPSET),
        }],
        producer_name: Some("fivezero".into()),
        producer_version: Some(env!("CARGO_PKG_VERSION").into()),
        model_version: Some(meta.step.min(i64::MAX as u64) as i64),
        doc_string: Some(format!(
            "fivezero policy/value network ({} {}x{})",
            meta.preset, meta.blocks, meta.channels
        )),
        graph: Some(graph),
        metadata_props: meta
            .to_props()
            .into_iter()
            .chain(quant.map(|(_, bits)| (QUANTIZATION_KEY.to_string(), bits.tag().to_string())))
            .map(|(k, v)| StringStringEntryProto {
                key: Some(k),
                value: Some(v),
            })
            .collect(),
        ..Default::default()
    }
}

/// The ONNX model of a pattern network (`net::pattern`), labelled with `meta` and
/// `fivezero.form = pattern`: standard operators only, the same input and outputs as the ResNet.
/// The line-shape keys come from a fixed-weight 9x9 convolution over the codes (exact in fp32:
/// integer sums below 2^24), cast to int64 and looked up in the table with Gather.
pub fn pattern_model_proto(
    weights: &PatternWeights,
    meta: &ModelMeta,
) -> Result<ModelProto, NetError> {
    weights.validate()?;
    let d = weights.dim;
    if (meta.blocks, meta.channels, meta.input_planes) != (0, d, INPUT_PLANES) {
        return Err(NetError::Config(format!(
            "metadata says {} blocks x {} channels x {} planes, a pattern network is 0 x {d} x {INPUT_PLANES}",
            meta.blocks, meta.channels, meta.input_planes
        )));
    }
    let mut g = Builder {
        nodes: Vec::new(),
        inits: Vec::new(),
        quant: None,
        dequantized: BTreeMap::new(),
    };
    let acc = pattern_accumulator(&mut g, weights);
    let f = pattern_clip(&mut g, "pattern.features", &acc);
    let mean = g.node("GlobalAveragePool", "pattern.mean", &[&f], vec![]);
    pattern_policy(&mut g, weights, &f, &mean);
    pattern_value(&mut g, weights, &f, &mean);
    let mut model = finish_model(g, meta, None, INPUT_PLANES);
    model.doc_string = Some(format!("fivezero pattern network (D={d})"));
    model.metadata_props.push(StringStringEntryProto {
        key: Some(super::meta_keys::FORM.into()),
        value: Some(PATTERN_FORM.into()),
    });
    Ok(model)
}

/// The serialized pattern network (`pattern_model_proto`).
pub fn pattern_onnx_bytes(weights: &PatternWeights, meta: &ModelMeta) -> Result<Vec<u8>, NetError> {
    Ok(pattern_model_proto(weights, meta)?.encode_to_vec())
}

fn int64s(g: &mut Builder, name: &str, v: &[i64]) -> String {
    let raw = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    g.init_raw(name, &[v.len()], DataType::Int64, raw)
}

fn conv_attrs(k: i64, pad: i64, group: i64) -> Vec<AttributeProto> {
    vec![
        attr_ints("kernel_shape", &[k, k]),
        attr_ints("pads", &[pad, pad, pad, pad]),
        attr_ints("strides", &[1, 1]),
        attr_ints("dilations", &[1, 1]),
        attr_int("group", group),
    ]
}

/// The fixed 9x9 kernel of the keys: direction `d`'s output weighs the code `k` steps along it
/// by `pattern::key_weight(k)`.
fn key_kernel() -> Vec<f32> {
    let r = REACH as i64;
    let side = 2 * REACH + 1;
    let mut w = vec![0f32; 4 * side * side];
    for (o, &(dx, dy)) in PATTERN_DIRECTIONS.iter().enumerate() {
        for k in -r..=r {
            let (x, y) = ((r + dx * k) as usize, (r + dy * k) as usize);
            w[(o * side + y) * side + x] = key_weight(k) as f32;
        }
    }
    w
}

/// Planes -> `acc` `[N, D, H, W]`: codes, keys, table rows summed over the directions, and the
/// black-to-move and forbidden vectors.
fn pattern_accumulator(g: &mut Builder, w: &PatternWeights) -> String {
    let d = w.dim;
    let side = 2 * REACH + 1;
    // own + 2 * opponent on the board; the padding reads 3 (off the board).
    let mut code_w = vec![0f32; INPUT_PLANES];
    (code_w[0], code_w[1]) = (1.0, 2.0);
    let cw = g.init("pattern.code_weight", &[1, INPUT_PLANES, 1, 1], &code_w);
    let codes = g.node(
        "Conv",
        "pattern.codes_inner",
        &[INPUT_NAME, &cw],
        conv_attrs(1, 0, 1),
    );
    let r = REACH as i64;
    let pads = int64s(g, "pattern.pads", &[0, 0, r, r, 0, 0, r, r]);
    let off = g.init("pattern.off_board", &[], &[3.0]);
    let codes = g.node("Pad", "pattern.codes", &[&codes, &pads, &off], vec![]);
    let kw = g.init("pattern.key_weight", &[4, 1, side, side], &key_kernel());
    let keys = g.node(
        "Conv",
        "pattern.keys_f",
        &[&codes, &kw],
        conv_attrs(side as i64, 0, 1),
    );
    let to = attr_int("to", DataType::Int64 as i64);
    let keys = g.node("Cast", "pattern.keys", &[&keys], vec![to]);
    let table = g.init("pattern.table", &[KEYS, d], &w.table);
    let rows = g.node(
        "Gather",
        "pattern.rows",
        &[&table, &keys],
        vec![attr_int("axis", 0)],
    );
    let axes = int64s(g, "pattern.direction_axis", &[1]);
    let sum = g.node(
        "ReduceSum",
        "pattern.lines_nhwc",
        &[&rows, &axes],
        vec![attr_int("keepdims", 0)],
    );
    let lines = g.node(
        "Transpose",
        "pattern.lines",
        &[&sum],
        vec![attr_ints("perm", &[0, 3, 1, 2])],
    );
    let mut acc = lines;
    for (name, plane, v) in [("black", 10, &w.black), ("forbidden", 2, &w.forbidden)] {
        let starts = int64s(g, &format!("pattern.{name}_start"), &[plane]);
        let ends = int64s(g, &format!("pattern.{name}_end"), &[plane + 1]);
        let axis = int64s(g, &format!("pattern.{name}_axis"), &[1]);
        let x = g.node(
            "Slice",
            &format!("pattern.{name}_plane"),
            &[INPUT_NAME, &starts, &ends, &axis],
            vec![],
        );
        let v = g.init(&format!("pattern.{name}"), &[1, d, 1, 1], v);
        let t = g.node("Mul", &format!("pattern.{name}_term"), &[&x, &v], vec![]);
        acc = g.node("Add", &format!("pattern.acc_{name}"), &[&acc, &t], vec![]);
    }
    acc
}

/// `clamp(x, 0, 1)`.
fn pattern_clip(g: &mut Builder, name: &str, x: &str) -> String {
    let lo = g.init(&format!("{name}.min"), &[], &[0.0]);
    let hi = g.init(&format!("{name}.max"), &[], &[1.0]);
    g.node("Clip", name, &[x, &lo, &hi], vec![])
}

/// The policy: the depthwise 3x3, clamp, and the 1x1 whose weights are `out + C s` (`s` the
/// features' mean, `mean`): the fixed 1x1 plus the context's per-board weights as a Mul and a
/// ReduceSum over the channels.
fn pattern_policy(g: &mut Builder, w: &PatternWeights, f: &str, mean: &str) {
    let d = w.dim;
    let dw = g.init("policy_dw.weight", &[d, 1, 3, 3], &w.policy_dw);
    let db = g.init("policy_dw.bias", &[d], &w.policy_dw_bias);
    let p = g.node(
        "Conv",
        "policy_dw",
        &[f, &dw, &db],
        conv_attrs(3, 1, d as i64),
    );
    let p = pattern_clip(g, "policy_dw.clip", &p);
    let ow = g.init("policy_out.weight", &[1, d, 1, 1], &w.policy_out);
    let ob = g.init("policy_out.bias", &[1], &[w.policy_out_bias]);
    let fixed = g.node("Conv", "policy_out", &[&p, &ow, &ob], conv_attrs(1, 0, 1));
    let s = g.node(
        "Flatten",
        "policy_context.mean",
        &[mean],
        vec![attr_int("axis", 1)],
    );
    let context = super::Dense {
        out_features: d,
        in_features: d,
        weight: w.policy_context.clone(),
        bias: vec![0.0; d],
    };
    let c = g.gemm("policy_context", &context, &s);
    let shape = int64s(g, "policy_context.shape", &[0, d as i64, 1, 1]);
    let c = g.node("Reshape", "policy_context.nchw", &[&c, &shape], vec![]);
    let t = g.node("Mul", "policy_context.terms", &[&p, &c], vec![]);
    let axes = int64s(g, "policy_context.axis", &[1]);
    let t = g.node(
        "ReduceSum",
        "policy_context.logits",
        &[&t, &axes],
        vec![attr_int("keepdims", 1)],
    );
    let p = g.node("Add", "policy.logits", &[&fixed, &t], vec![]);
    g.nodes.push(NodeProto {
        input: vec![p],
        output: vec![POLICY_NAME.into()],
        name: Some("policy.flatten".into()),
        op_type: Some("Flatten".into()),
        attribute: vec![attr_int("axis", 1)],
        ..Default::default()
    });
}

/// The value head on the features' mean and max over the board.
fn pattern_value(g: &mut Builder, w: &PatternWeights, f: &str, mean: &str) {
    let max = g.node("GlobalMaxPool", "value.max", &[f], vec![]);
    let v = g.node(
        "Concat",
        "value.pooled",
        &[mean, &max],
        vec![attr_int("axis", 1)],
    );
    value_mlp(g, (&w.value_fc1, &w.value_fc2), &v);
}

/// The value head's end, shared by both forms: the pooled features flattened, a ReLU layer and
/// the tanh output.
fn value_mlp(g: &mut Builder, (fc1, fc2): (&super::Dense, &super::Dense), pooled: &str) {
    let v = g.node(
        "Flatten",
        "value.flatten",
        &[pooled],
        vec![attr_int("axis", 1)],
    );
    let v = g.gemm("value_fc1", fc1, &v);
    let v = g.relu("value_fc1.relu", &v);
    let v = g.gemm("value_fc2", fc2, &v);
    g.nodes.push(NodeProto {
        input: vec![v],
        output: vec![VALUE_NAME.into()],
        name: Some("value.tanh".into()),
        op_type: Some("Tanh".into()),
        ..Default::default()
    });
}

/// The serialized int8 model (`quantized_model_proto`).
pub fn quantized_onnx_bytes(
    weights: &NetWeights,
    meta: &ModelMeta,
    ranges: &ActivationRanges,
    bits: WeightBits,
) -> Result<Vec<u8>, NetError> {
    Ok(quantized_model_proto(weights, meta, ranges, bits)?.encode_to_vec())
}

/// A model file's bytes with its claim replaced: the rules and square board sizes it was
/// trained for or measured on (empty: not stated, so everything). The rest of the file, weights
/// and other metadata included, is kept as it was.
///
/// # Errors
/// Bytes that are not an ONNX model with fivezero metadata.
pub fn set_claim(
    onnx: &[u8],
    rules: &[crate::game::Rule],
    board_sizes: &[usize],
) -> Result<Vec<u8>, NetError> {
    let mut m = decode_model(onnx)?;
    let mut meta = meta_of_proto(&m)?;
    meta.rules = rules.to_vec();
    meta.board_sizes = board_sizes.to_vec();
    let keys = [super::meta_keys::RULES, super::meta_keys::BOARD_SIZES];
    m.metadata_props
        .retain(|p| !keys.iter().any(|k| p.key.as_deref() == Some(*k)));
    for (key, value) in meta.to_props() {
        if keys.contains(&key.as_str()) {
            m.metadata_props.push(StringStringEntryProto {
                key: Some(key),
                value: Some(value),
            });
        }
    }
    Ok(m.encode_to_vec())
}

/// The fivezero metadata of a model file's bytes (preset, step, the rules and sizes it claims).
///
/// # Errors
/// Bytes that are not an ONNX model with fivezero metadata.
pub fn model_meta(onnx: &[u8]) -> Result<ModelMeta, NetError> {
    meta_of_proto(&decode_model(onnx)?)
}

/// A model file's bytes decoded, or "not an ONNX model".
pub(crate) fn decode_model(onnx: &[u8]) -> Result<ModelProto, NetError> {
    ModelProto::decode(onnx).map_err(|e| NetError::Config(format!("not an ONNX model: {e}")))
}

/// The fivezero metadata of a decoded model.
pub(crate) fn meta_of_proto(m: &ModelProto) -> Result<ModelMeta, NetError> {
    ModelMeta::from_props(|k| {
        m.metadata_props
            .iter()
            .find(|p| p.key.as_deref() == Some(k))
            .and_then(|p| p.value.clone())
    })
    .map_err(NetError::Config)
}

/// The serialized ONNX model (deterministic: same weights and meta, same bytes).
pub fn onnx_bytes(weights: &NetWeights, meta: &ModelMeta) -> Result<Vec<u8>, NetError> {
    Ok(model_proto(weights, meta)?.encode_to_vec())
}

/// Writes the model to `path` atomically: a temporary file in the same folder, fsync, rename
/// (then fsync of the folder), so a reader never sees a half-written model.
pub fn write_model_file(
    path: impl AsRef<Path>,
    weights: &NetWeights,
    meta: &ModelMeta,
) -> Result<(), NetError> {
    let path = path.as_ref();
    let bytes = onnx_bytes(weights, meta)?;
    write_atomic(path, &bytes).map_err(|source| NetError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Writes `bytes` to `path` so a reader sees the old file or the new one, never a torn one: a
/// temporary file in the same folder, fsync, rename, fsync of the folder. Checkpoints, replay
/// chunks and models all go through here.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let file_name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "path has no file name")
    })?;
    let tmp = dir.join(format!(
        ".{}.tmp.{}.{}",
        file_name.to_string_lossy(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    // Persist the rename itself; some filesystems refuse to open a folder for sync: not fatal.
    if let Ok(d) = fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Preset;

    #[test]
    fn bytes_are_deterministic_and_decode_back() {
        let w = NetWeights::random(Preset::Tiny.config(), 11).unwrap();
        let meta = ModelMeta::for_config(&w.config, 5);
        let a = onnx_bytes(&w, &meta).unwrap();
        assert_eq!(a, onnx_bytes(&w, &meta).unwrap());
        let m = ModelProto::decode(a.as_slice()).unwrap();
        assert_eq!(m.ir_version, Some(8));
        assert_eq!(m.opset_import[0].version, Some(17));
        let g = m.graph.unwrap();
        assert_eq!(g.input[0].name.as_deref(), Some("planes"));
        let outs: Vec<_> = g.output.iter().filter_map(|o| o.name.clone()).collect();
        assert_eq!(outs, ["policy", "value"]);
        let params: usize = g
            .initializer
            .iter()
            .map(|t| t.raw_data.as_ref().unwrap().len() / 4)
            .sum();
        assert_eq!(params, w.param_count());
    }

    #[test]
    fn meta_must_match_weights() {
        let w = NetWeights::random(Preset::Tiny.config(), 11).unwrap();
        let mut meta = ModelMeta::for_config(&w.config, 0);
        meta.channels = 32;
        assert!(matches!(onnx_bytes(&w, &meta), Err(NetError::Config(_))));
    }

    #[test]
    fn write_is_atomic_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.onnx");
        let w = NetWeights::random(Preset::Tiny.config(), 1).unwrap();
        let meta = ModelMeta::for_config(&w.config, 0);
        write_model_file(&path, &w, &meta).unwrap();
        write_model_file(&path, &w, &meta).unwrap(); // overwrite in place
        assert_eq!(fs::read(&path).unwrap(), onnx_bytes(&w, &meta).unwrap());
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(write_model_file(dir.path().join("missing/m.onnx"), &w, &meta).is_err());
    }
}
