//! The policy/value network in tch, the network contract of `engine::net` with BatchNorm after
//! every trunk and head conv (training mode while learning, running statistics at eval), and its
//! export: BN folded into the convs, giving `engine::net::NetWeights` for the ONNX writer. A
//! training run may add an auxiliary head (the opponent's reply, KataGo's auxiliary policy
//! target) that shapes the trunk and is never exported.
//!
//! Depends on tch and `engine::net` (shapes, folding) only; no games, no files.

use engine::net::{Conv, Dense, NetConfig, NetWeights, ResBlock, fold_batchnorm};
use tch::nn::{self, ModuleT};
use tch::{Device, Kind, Tensor};

const BN_EPS: f64 = 1e-5;

struct ConvBn {
    conv: nn::Conv2D,
    bn: nn::BatchNorm,
}

impl ConvBn {
    fn new(p: nn::Path, i: i64, o: i64, k: i64) -> ConvBn {
        let cfg = nn::ConvConfig {
            padding: k / 2,
            bias: false,
            ..Default::default()
        };
        let bn_cfg = nn::BatchNormConfig {
            eps: BN_EPS,
            ..Default::default()
        };
        ConvBn {
            conv: nn::conv2d(&p / "conv", i, o, k, cfg),
            bn: nn::batch_norm2d(&p / "bn", o, bn_cfg),
        }
    }
    fn forward(&self, x: &Tensor, train: bool) -> Tensor {
        self.bn.forward_t(&x.apply(&self.conv), train)
    }
    fn export(&self) -> Result<Conv, engine::net::NetError> {
        let w = &self.conv.ws;
        let shape = w.size();
        let gamma = self
            .bn
            .ws
            .as_ref()
            .map(to_vec)
            .unwrap_or_else(|| vec![1.0; shape[0] as usize]);
        let beta = self
            .bn
            .bs
            .as_ref()
            .map(to_vec)
            .unwrap_or_else(|| vec![0.0; shape[0] as usize]);
        let (weight, bias) = fold_batchnorm(
            &to_vec(w),
            None,
            &gamma,
            &beta,
            &to_vec(&self.bn.running_mean),
            &to_vec(&self.bn.running_var),
            BN_EPS as f32,
        )?;
        Ok(Conv {
            out_channels: shape[0] as usize,
            in_channels: shape[1] as usize,
            kernel: shape[2] as usize,
            weight,
            bias,
        })
    }
}

/// Flattens any tensor to host f32 values.
pub fn to_vec(t: &Tensor) -> Vec<f32> {
    let flat = t
        .detach()
        .to_device(Device::Cpu)
        .to_kind(Kind::Float)
        .contiguous()
        .view([-1]);
    Vec::<f32>::try_from(&flat).unwrap_or_default()
}

/// The network, its weights living in the `VarStore` given to `new`.
pub struct Net {
    pub config: NetConfig,
    stem: ConvBn,
    blocks: Vec<(ConvBn, ConvBn)>,
    policy_conv: ConvBn,
    policy_out: nn::Conv2D,
    value_conv: ConvBn,
    value_fc1: nn::Linear,
    value_fc2: nn::Linear,
    /// The auxiliary head (training only, never exported): the opponent's reply, from the policy
    /// head's features.
    opponent_policy_out: Option<nn::Conv2D>,
}

/// Variables whose names start with this belong to training-only heads: a checkpoint saved
/// without them still resumes (they start fresh), and exports and evaluators leave them out.
pub const AUX_HEAD_PREFIX: &str = "aux_";

/// Whether variable `name` (or an optimizer buffer of it) belongs to a training-only head: such a
/// variable may be missing from a checkpoint, and then starts fresh.
pub fn is_training_only(name: &str) -> bool {
    name.starts_with(AUX_HEAD_PREFIX)
}

/// What one forward pass gives: policy logits `[n, h*w]`, value `[n]` in [-1, 1], and the
/// opponent-reply logits `[n, h*w]` when the net has that head.
pub struct Heads {
    pub policy: Tensor,
    pub value: Tensor,
    pub opponent_policy: Option<Tensor>,
}

impl Net {
    /// The network an evaluator or an export needs: policy and value heads.
    pub fn new(vs: &nn::Path, config: NetConfig) -> Net {
        Net::for_training(vs, config, false)
    }

    /// The network with, where `opponent_policy` is set, the auxiliary opponent-reply head.
    pub fn for_training(vs: &nn::Path, config: NetConfig, opponent_policy: bool) -> Net {
        let c = config.channels as i64;
        let blocks = (0..config.blocks)
            .map(|i| {
                let p = vs / format!("block{i}");
                (
                    ConvBn::new(&p / "a", c, c, 3),
                    ConvBn::new(&p / "b", c, c, 3),
                )
            })
            .collect();
        let pc = config.policy_channels as i64;
        let vc = config.value_channels as i64;
        Net {
            config,
            stem: ConvBn::new(vs / "stem", config.input_planes as i64, c, 3),
            blocks,
            policy_conv: ConvBn::new(vs / "policy", c, pc, 1),
            policy_out: nn::conv2d(vs / "policy_out", pc, 1, 1, Default::default()),
            value_conv: ConvBn::new(vs / "value", c, vc, 1),
            value_fc1: nn::linear(
                vs / "value_fc1",
                config.value_pool_features() as i64,
                config.value_hidden as i64,
                Default::default(),
            ),
            value_fc2: nn::linear(
                vs / "value_fc2",
                config.value_hidden as i64,
                1,
                Default::default(),
            ),
            opponent_policy_out: opponent_policy.then(|| {
                let name = format!("{AUX_HEAD_PREFIX}opponent_policy_out");
                nn::conv2d(vs / name, pc, 1, 1, Default::default())
            }),
        }
    }

    /// `x` is `[n, planes, h, w]`; returns (policy logits `[n, h*w]`, value `[n]` in [-1, 1]).
    pub fn forward(&self, x: &Tensor, train: bool) -> (Tensor, Tensor) {
        let h = self.forward_heads(x, train);
        (h.policy, h.value)
    }

    /// Every head of the network on `x` (`[n, planes, h, w]`).
    pub fn forward_heads(&self, x: &Tensor, train: bool) -> Heads {
        let mut t = self.stem.forward(x, train).relu();
        for (a, b) in &self.blocks {
            let y = a.forward(&t, train).relu();
            t = (b.forward(&y, train) + &t).relu();
        }
        let n = x.size()[0];
        let policy_features = self.policy_conv.forward(&t, train).relu();
        let p = policy_features.apply(&self.policy_out).view([n, -1]);
        let opponent_policy = self
            .opponent_policy_out
            .as_ref()
            .map(|head| policy_features.apply(head).view([n, -1]));
        let v = self.value_conv.forward(&t, train).relu();
        // Each channel's mean, then its max (the ONNX graph's order).
        let v = Tensor::cat(
            &[
                v.mean_dim([2i64, 3].as_slice(), false, Kind::Float),
                v.amax([2i64, 3].as_slice(), false),
            ],
            1,
        );
        let v = value_tail(&v, &self.value_fc1, &self.value_fc2);
        Heads {
            policy: p,
            value: v,
            opponent_policy,
        }
    }

    /// The eval-mode network with BN folded: what the ONNX file holds.
    pub fn export(&self) -> Result<NetWeights, engine::net::NetError> {
        let conv_plain = |c: &nn::Conv2D| {
            let s = c.ws.size();
            Conv {
                out_channels: s[0] as usize,
                in_channels: s[1] as usize,
                kernel: s[2] as usize,
                weight: to_vec(&c.ws),
                bias: c
                    .bs
                    .as_ref()
                    .map(to_vec)
                    .unwrap_or_else(|| vec![0.0; s[0] as usize]),
            }
        };
        let mut blocks = Vec::with_capacity(self.blocks.len());
        for (a, b) in &self.blocks {
            blocks.push(ResBlock {
                conv1: a.export()?,
                conv2: b.export()?,
            });
        }
        let w = NetWeights {
            config: self.config,
            stem: self.stem.export()?,
            blocks,
            policy_conv: self.policy_conv.export()?,
            policy_out: conv_plain(&self.policy_out),
            value_conv: self.value_conv.export()?,
            value_fc1: dense_of(&self.value_fc1),
            value_fc2: dense_of(&self.value_fc2),
        };
        w.validate()?;
        Ok(w)
    }
}

/// A linear layer as the contract holds it (a layer without bias gets zeros).
pub fn dense_of(l: &nn::Linear) -> Dense {
    let s = l.ws.size();
    Dense {
        out_features: s[0] as usize,
        in_features: s[1] as usize,
        weight: to_vec(&l.ws),
        bias: l
            .bs
            .as_ref()
            .map(to_vec)
            .unwrap_or_else(|| vec![0.0; s[0] as usize]),
    }
}

/// The value head's end in both network forms: the pooled features `[n, k]` through a ReLU
/// layer and one tanh output, `[n]` (the ONNX writer's `value_mlp`).
pub fn value_tail(pooled: &Tensor, fc1: &nn::Linear, fc2: &nn::Linear) -> Tensor {
    pooled
        .apply(fc1)
        .relu()
        .apply(fc2)
        .tanh()
        .view([pooled.size()[0]])
}

/// Learned parameters of the tch model (including BN scale/shift, before folding).
pub fn trainable_params(vs: &nn::VarStore) -> usize {
    vs.trainable_variables().iter().map(|t| t.numel()).sum()
}
