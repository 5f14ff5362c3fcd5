//! The pattern network in tch (the contract of `engine::net::pattern`): each point's four line
//! keys computed from the input planes, one learned table looked up and summed, the black and
//! forbidden vectors, clamp, the policy's depthwise 3x3 and 1x1 (its weights moved per board by
//! the context times the features' mean), and the value head on the mean and max of the clamped
//! features. No BatchNorm, so training and eval forwards are the same and the
//! export is the variables as they are (`engine::net::PatternWeights`). With the auxiliary head,
//! a second 1x1 on the depthwise features predicts the opponent's reply (training only).
//!
//! Depends on tch and `engine::net` (the contract: keys, widths) only; no games, no files.

use engine::eval::features;
use engine::net::NetError;
use engine::net::pattern::{DIRECTIONS, KEYS, PatternWeights, REACH, VALUE_HIDDEN, key_weight};
use tch::nn;
use tch::{Kind, Tensor};

use crate::network::model::{AUX_HEAD_PREFIX, Heads, to_vec};

/// Plane of the on-board mask, and of "black is to move" (feature version 1).
const ON_BOARD: i64 = 5;
const BLACK_TO_MOVE: i64 = 10;

/// The pattern network, its weights living in the `VarStore` given to `new`.
pub struct PatternNet {
    pub dim: usize,
    table: Tensor,
    black: Tensor,
    forbidden: Tensor,
    policy_dw: nn::Conv2D,
    policy_out: nn::Conv2D,
    /// `[D][D]`: the 1x1's weights added per board, times the features' mean.
    policy_context: Tensor,
    value_fc1: nn::Linear,
    value_fc2: nn::Linear,
    opponent_policy_out: Option<nn::Conv2D>,
}

impl PatternNet {
    /// The network of width `dim`; with `opponent_policy`, the auxiliary opponent-reply head.
    pub fn for_training(vs: &nn::Path, dim: usize, opponent_policy: bool) -> PatternNet {
        let d = dim as i64;
        let p = vs / "pattern";
        // A point's features are the clamp of four rows' sum: rows drawn from 0..0.2 put the sum
        // (mean 0.4) inside 0..1 almost everywhere, so every feature gets a gradient at the start
        // (centred rows would leave half of them at a clamp, learning nothing).
        let table = p.var(
            "table",
            &[KEYS as i64, d],
            nn::Init::Uniform { lo: 0.0, up: 0.2 },
        );
        let black = p.var("black", &[d], nn::Init::Const(0.0));
        let forbidden = p.var("forbidden", &[d], nn::Init::Const(0.0));
        let dw = nn::ConvConfig {
            padding: 1,
            groups: d,
            ws_init: nn::Init::Uniform { lo: -0.1, up: 0.1 },
            bs_init: nn::Init::Const(0.5),
            ..Default::default()
        };
        // Bias 0.5 and small weights: the second clamp starts inside 0..1 too.
        let policy_dw = nn::conv2d(vs / "policy_dw", d, d, 3, dw);
        let one_by_one = |name: &str| nn::conv2d(vs / name, d, 1, 1, Default::default());
        // Zero: the network starts as one with a fixed 1x1 and learns what the board adds.
        let policy_context = (vs / "policy_context").var("weight", &[d, d], nn::Init::Const(0.0));
        PatternNet {
            dim,
            table,
            black,
            forbidden,
            policy_dw,
            policy_out: one_by_one("policy_out"),
            policy_context,
            value_fc1: nn::linear(
                vs / "value_fc1",
                2 * d,
                VALUE_HIDDEN as i64,
                Default::default(),
            ),
            value_fc2: nn::linear(vs / "value_fc2", VALUE_HIDDEN as i64, 1, Default::default()),
            opponent_policy_out: opponent_policy
                .then(|| one_by_one(&format!("{AUX_HEAD_PREFIX}opponent_policy_out"))),
        }
    }

    /// Every head on `x` (`[n, planes, h, w]`); the same in training and eval mode.
    pub fn forward_heads(&self, x: &Tensor) -> Heads {
        let n = x.size()[0];
        let f = self.features(x);
        let g = (f.apply(&self.policy_dw)).clamp(0.0, 1.0);
        let board = [2i64, 3];
        let mean = f.mean_dim(board.as_slice(), false, Kind::Float);
        let context = mean
            .matmul(&self.policy_context.tr())
            .view([n, self.dim as i64, 1, 1]);
        let context_logits = (&g * context).sum_dim_intlist([1i64].as_slice(), false, Kind::Float);
        let policy = (g.apply(&self.policy_out).squeeze_dim(1) + context_logits).view([n, -1]);
        let opponent_policy = self
            .opponent_policy_out
            .as_ref()
            .map(|head| g.apply(head).view([n, -1]));
        let pooled = Tensor::cat(&[mean, f.amax(board.as_slice(), false)], 1);
        let value = super::model::value_tail(&pooled, &self.value_fc1, &self.value_fc2);
        Heads {
            policy,
            value,
            opponent_policy,
        }
    }

    /// `f = clamp(T[key_0] + .. + T[key_3] + black + forbidden, 0, 1)`, `[n, D, h, w]`.
    fn features(&self, x: &Tensor) -> Tensor {
        let keys = line_keys(x);
        // [n, 4, h, w, D], summed over the directions and moved to channels first.
        let rows = Tensor::embedding(&self.table, &keys, -1, false, false);
        let acc = rows.sum_dim_intlist([1i64].as_slice(), false, Kind::Float);
        let acc = acc.permute([0, 3, 1, 2]);
        let d = self.dim as i64;
        let plane = |i: i64| x.narrow(1, i, 1);
        let black = self.black.view([1, d, 1, 1]) * plane(BLACK_TO_MOVE);
        let forbidden = self.forbidden.view([1, d, 1, 1]) * plane(features::FORBIDDEN as i64);
        (acc + black + forbidden).clamp(0.0, 1.0)
    }

    /// Takes the weights of `w` (a file's, to train on from there); the auxiliary head keeps
    /// its own.
    ///
    /// # Errors
    /// When `w` is not of this network's width or its tensors have the wrong lengths.
    pub fn import(&self, w: &PatternWeights) -> Result<(), NetError> {
        w.validate()?;
        if w.dim != self.dim {
            return Err(NetError::Config(format!(
                "a pattern network of width {} cannot take weights of width {}",
                self.dim, w.dim
            )));
        }
        let set = |t: &Tensor, v: &[f32]| {
            let src = Tensor::from_slice(v).view(t.size().as_slice());
            tch::no_grad(|| t.shallow_clone().copy_(&src));
        };
        let set_bias = |c: &nn::Conv2D, v: &[f32]| c.bs.iter().for_each(|b| set(b, v));
        set(&self.table, &w.table);
        set(&self.black, &w.black);
        set(&self.forbidden, &w.forbidden);
        set(&self.policy_dw.ws, &w.policy_dw);
        set_bias(&self.policy_dw, &w.policy_dw_bias);
        set(&self.policy_out.ws, &w.policy_out);
        set_bias(&self.policy_out, &[w.policy_out_bias]);
        set(&self.policy_context, &w.policy_context);
        for (l, d) in [
            (&self.value_fc1, &w.value_fc1),
            (&self.value_fc2, &w.value_fc2),
        ] {
            set(&l.ws, &d.weight);
            l.bs.iter().for_each(|b| set(b, &d.bias));
        }
        Ok(())
    }

    /// The weights as the contract holds them (the auxiliary head left out).
    pub fn export(&self) -> Result<PatternWeights, NetError> {
        let bias = |c: &nn::Conv2D| c.bs.as_ref().map(to_vec).unwrap_or_default();
        let w = PatternWeights {
            dim: self.dim,
            table: to_vec(&self.table),
            black: to_vec(&self.black),
            forbidden: to_vec(&self.forbidden),
            policy_dw: to_vec(&self.policy_dw.ws),
            policy_dw_bias: bias(&self.policy_dw),
            policy_out: to_vec(&self.policy_out.ws),
            policy_out_bias: bias(&self.policy_out).first().copied().unwrap_or(0.0),
            policy_context: to_vec(&self.policy_context),
            value_fc1: super::model::dense_of(&self.value_fc1),
            value_fc2: super::model::dense_of(&self.value_fc2),
        };
        w.validate()?;
        Ok(w)
    }
}

/// The four direction keys of every point, `[n, 4, h, w]` int64, exactly as the contract:
/// codes 0 empty, 1 own, 2 opponent, 3 off the board (the planes padded by `REACH`), each
/// neighbour's code weighed by `key_weight` of its offset.
pub fn line_keys(x: &Tensor) -> Tensor {
    let (h, w) = (x.size()[2], x.size()[3]);
    let r = REACH as i64;
    let plane = |i: i64| x.narrow(1, i, 1).squeeze_dim(1);
    let pad = [r, r, r, r];
    // Zero padding of the on-board mask marks the points past the edge.
    let off_board: Tensor = 1.0 - plane(ON_BOARD).constant_pad_nd(pad);
    let stones: Tensor = plane(features::OWN as i64) + plane(features::OPPONENT as i64) * 2.0;
    let codes = (stones.constant_pad_nd(pad) + off_board * 3.0)
        .round()
        .to_kind(Kind::Int64);
    let keys: Vec<Tensor> = DIRECTIONS
        .iter()
        .map(|&(dx, dy)| {
            let at = |k: i64| {
                codes.narrow(1, r + k * dy, h).narrow(2, r + k * dx, w) * key_weight(k) as i64
            };
            (-r..=r)
                .filter(|&k| k != 0)
                .fold(at(0), |key, k| key + at(k))
        })
        .collect();
    Tensor::stack(&keys, 1)
}
