//! The pattern network as plain data (the contract the trainer exports and the engine reads): a
//! network shaped for the CPU, whose input is each point's line shape in the four directions
//! looked up in one learned table, so a move changes only the points near it.
//!
//! From the side to move's view, each point holds a code: 0 empty, 1 own, 2 opponent, 3 off the
//! board. For an on-board point `q` and a direction `d` of (1,0), (0,1), (1,1), (1,-1):
//!
//! ```text
//! key_d(q) = code(q) + 3 * sum over j = 0..8 of code(q + k_j * d) * 4^j,  k = -4,-3,-2,-1,1,2,3,4
//! acc[q]   = T[key_0(q)] + T[key_1(q)] + T[key_2(q)] + T[key_3(q)]
//!            + (black to move ? black : 0) + (q forbidden to the side to move ? forbidden : 0)
//! f[q]     = clamp(acc[q], 0, 1)
//! s, m     = mean and max of f over the board                          (D each)
//! g[q]     = clamp(depthwise3x3(f)[q] + b, 0, 1)                       (zero padding)
//! policy   = g[q] . (out + C s) + b                                    (y*w+x)
//! value    = tanh(fc2(relu(fc1([s, m]))))                              (for the side to move)
//! ```
//!
//! The policy's 1x1 weights depend on the whole board through `C` (`[D][D]`, the policy's
//! context): a local shape worth playing when the side to move is attacking may not be when it
//! must defend, which a 3x3 view cannot tell. The max lets the value see one decisive shape
//! that the mean dilutes over the board.
//!
//! `T` is `[KEYS][D]` (`KEYS` = 3 * 4^8 = 196,608: the centre is never off the board), shared
//! by the four directions; vectors are `D` wide (`DEFAULT_DIM` = 32). The input is the feature
//! planes of the ResNet (feature version 1); a file of this form says `fivezero.form = pattern`
//! in its metadata, with `preset = pattern`, `blocks = 0` and `channels = D`.

use super::{Dense, ModelMeta, NetConfig, NetError};
use crate::rng::Rng;

/// Metadata value of `meta_keys::FORM` for this network.
pub const PATTERN_FORM: &str = "pattern";
/// Points on each side of the centre a key sees.
pub const REACH: usize = 4;
/// Distinct keys: 3 centre codes x 4^8 neighbour codes.
pub const KEYS: usize = 3 * (1 << (4 * REACH));
/// The four line directions (dx, dy), in key order.
pub const DIRECTIONS: [(i64, i64); 4] = [(1, 0), (0, 1), (1, 1), (1, -1)];
/// Accumulator width the engine is measured with.
pub const DEFAULT_DIM: usize = 32;
/// Width of the value head's hidden layer.
pub const VALUE_HIDDEN: usize = 32;
/// Widest accumulator the contract allows (the native runtime's buffers).
pub const MAX_DIM: usize = 256;

/// The offset `k` (-4..=4, not 0) of a neighbour's code in a key: `3 * 4^j`. The centre's is 1.
pub fn key_weight(k: i64) -> u32 {
    match k {
        0 => 1,
        k if k < 0 => 3 << (2 * (k + REACH as i64)),
        k => 3 << (2 * (k + REACH as i64 - 1)),
    }
}

/// Learned parameters of a pattern network of width `dim` (the exported tensors).
pub fn param_count(dim: usize) -> usize {
    // Table, black, forbidden, depthwise weights and bias, 1x1, context; then the 1x1 bias and
    // the value head.
    (KEYS + 1 + 1 + 9 + 1 + 1 + dim) * dim + 1 + (2 * dim + 1) * VALUE_HIDDEN + VALUE_HIDDEN + 1
}

/// The weights of a pattern network, fp32.
#[derive(Clone, Debug, PartialEq)]
pub struct PatternWeights {
    /// Accumulator width `D`.
    pub dim: usize,
    /// `[KEYS][dim]`, row per line shape.
    pub table: Vec<f32>,
    /// Added to every point when black is to move; `[dim]`.
    pub black: Vec<f32>,
    /// Added to the points forbidden to the side to move; `[dim]`.
    pub forbidden: Vec<f32>,
    /// Depthwise 3x3: `[dim][3][3]` and `[dim]`.
    pub policy_dw: Vec<f32>,
    pub policy_dw_bias: Vec<f32>,
    /// 1x1 to one logit: `[dim]` and one bias.
    pub policy_out: Vec<f32>,
    pub policy_out_bias: f32,
    /// The 1x1's weights added per board: `[dim][dim]`, times the features' mean.
    pub policy_context: Vec<f32>,
    /// `VALUE_HIDDEN x 2 dim` (the features' mean, then their max), then `1 x VALUE_HIDDEN`.
    pub value_fc1: Dense,
    pub value_fc2: Dense,
}

impl PatternWeights {
    /// Names of the graph's learned tensors (every other initializer is fixed by the writer).
    pub const LEARNED: [&'static str; 12] = [
        "pattern.table",
        "pattern.black",
        "pattern.forbidden",
        "policy_dw.weight",
        "policy_dw.bias",
        "policy_out.weight",
        "policy_out.bias",
        "policy_context.weight",
        "value_fc1.weight",
        "value_fc1.bias",
        "value_fc2.weight",
        "value_fc2.bias",
    ];

    /// All-zero weights of width `dim` (a stand-in with the right shapes).
    pub fn zeros(dim: usize) -> Result<PatternWeights, NetError> {
        check_dim(dim)?;
        let dense = |o: usize, i: usize| Dense {
            out_features: o,
            in_features: i,
            weight: vec![0.0; o * i],
            bias: vec![0.0; o],
        };
        Ok(PatternWeights {
            dim,
            table: vec![0.0; KEYS * dim],
            black: vec![0.0; dim],
            forbidden: vec![0.0; dim],
            policy_dw: vec![0.0; 9 * dim],
            policy_dw_bias: vec![0.0; dim],
            policy_out: vec![0.0; dim],
            policy_out_bias: 0.0,
            policy_context: vec![0.0; dim * dim],
            value_fc1: dense(VALUE_HIDDEN, 2 * dim),
            value_fc2: dense(1, VALUE_HIDDEN),
        })
    }

    /// Seeded random weights scaled like a trained net's: a point's four rows sum to about
    /// +-0.6, so the clamp at 0 and at 1 both bite.
    pub fn random(dim: usize, seed: u64) -> Result<PatternWeights, NetError> {
        check_dim(dim)?;
        let mut rng = Rng::new(seed ^ 0x0A77_E2B5_0000_0001);
        let mut uniform = |n: usize, half: f64| -> Vec<f32> {
            (0..n)
                .map(|_| ((rng.unit() * 2.0 - 1.0) * half) as f32)
                .collect()
        };
        let table = uniform(KEYS * dim, 0.5);
        let black = uniform(dim, 0.2);
        let forbidden = uniform(dim, 0.5);
        let policy_dw = uniform(dim * 9, 0.6);
        let policy_dw_bias = uniform(dim, 0.2);
        let policy_out = uniform(dim, 1.0);
        let policy_out_bias = uniform(1, 0.1)[0];
        let policy_context = uniform(dim * dim, 0.3);
        let dense = |o: usize, i: usize, w: Vec<f32>, b: Vec<f32>| Dense {
            out_features: o,
            in_features: i,
            weight: w,
            bias: b,
        };
        let value_fc1 = dense(
            VALUE_HIDDEN,
            2 * dim,
            uniform(VALUE_HIDDEN * 2 * dim, 0.6),
            uniform(VALUE_HIDDEN, 0.2),
        );
        let value_fc2 = dense(1, VALUE_HIDDEN, uniform(VALUE_HIDDEN, 0.5), uniform(1, 0.1));
        Ok(PatternWeights {
            dim,
            table,
            black,
            forbidden,
            policy_dw,
            policy_dw_bias,
            policy_out,
            policy_out_bias,
            policy_context,
            value_fc1,
            value_fc2,
        })
    }

    /// Every tensor has the length `dim` says.
    pub fn validate(&self) -> Result<(), NetError> {
        check_dim(self.dim)?;
        let d = self.dim;
        let fc = [
            (
                "value_fc1.weight",
                self.value_fc1.weight.len(),
                VALUE_HIDDEN * 2 * d,
            ),
            ("value_fc1.bias", self.value_fc1.bias.len(), VALUE_HIDDEN),
            (
                "value_fc2.weight",
                self.value_fc2.weight.len(),
                VALUE_HIDDEN,
            ),
            ("value_fc2.bias", self.value_fc2.bias.len(), 1),
        ];
        let lens = [
            ("pattern.table", self.table.len(), KEYS * d),
            ("pattern.black", self.black.len(), d),
            ("pattern.forbidden", self.forbidden.len(), d),
            ("policy_dw.weight", self.policy_dw.len(), 9 * d),
            ("policy_dw.bias", self.policy_dw_bias.len(), d),
            ("policy_out.weight", self.policy_out.len(), d),
            ("policy_context.weight", self.policy_context.len(), d * d),
        ];
        for (name, got, expected) in lens.into_iter().chain(fc) {
            if got != expected {
                return Err(NetError::Shape {
                    name: name.into(),
                    expected,
                    got,
                });
            }
        }
        Ok(())
    }

    /// The metadata of this network at training `step` (all rules and sizes until claimed).
    pub fn meta(&self, step: u64) -> ModelMeta {
        ModelMeta {
            preset: PATTERN_FORM.into(),
            blocks: 0,
            channels: self.dim,
            ..ModelMeta::for_config(&NetConfig::default(), step)
        }
    }
}

/// Whether `dim` is a width the contract allows: a multiple of 8 in 8..=`MAX_DIM`.
///
/// # Errors
/// `NetError::Config` naming the width and the rule.
pub fn check_dim(dim: usize) -> Result<(), NetError> {
    if dim == 0 || dim > MAX_DIM || !dim.is_multiple_of(8) {
        return Err(NetError::Config(format!(
            "pattern width {dim} is not a multiple of 8 in 8..={MAX_DIM}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn param_count_counts_every_tensor() {
        let w = PatternWeights::zeros(DEFAULT_DIM).unwrap();
        let dense = |d: &Dense| d.weight.len() + d.bias.len();
        let n = w.table.len()
            + w.black.len()
            + w.forbidden.len()
            + w.policy_dw.len()
            + w.policy_dw_bias.len()
            + w.policy_out.len()
            + w.policy_context.len()
            + 1
            + dense(&w.value_fc1)
            + dense(&w.value_fc2);
        assert_eq!(param_count(DEFAULT_DIM), n);
    }

    #[test]
    fn keys_cover_exactly_the_table() {
        let max = 2 * key_weight(0)
            + (-4..=4)
                .filter(|&k| k != 0)
                .map(|k| 3 * key_weight(k))
                .sum::<u32>();
        assert_eq!(max as usize, KEYS - 1);
        let mut w: Vec<u32> = (-4..=4).map(key_weight).collect();
        w.sort();
        assert_eq!(w, [1, 3, 12, 48, 192, 768, 3072, 12288, 49152]);
    }
}
