//! Network weights as flat f32 tensors (BatchNorm already folded into each conv's bias), the
//! BatchNorm folding helper, and deterministic random initialisation for tests and benches.
//! Pure data: no runtime, no I/O; the random weights come from `rng`.

use super::{NetConfig, NetError};
use crate::rng::Rng;

/// A 2-D convolution with bias: `weight` is `[out, in, k, k]` row-major, `bias` is `[out]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv {
    pub out_channels: usize,
    pub in_channels: usize,
    pub kernel: usize,
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
}

impl Conv {
    pub fn shape(&self) -> [usize; 4] {
        [
            self.out_channels,
            self.in_channels,
            self.kernel,
            self.kernel,
        ]
    }

    fn check(&self, name: &str, out: usize, inp: usize, k: usize) -> Result<(), NetError> {
        if (self.out_channels, self.in_channels, self.kernel) != (out, inp, k) {
            return Err(NetError::Config(format!(
                "{name}: conv is {}x{}x{k}x{k}, expected {out}x{inp}x{k}x{k}",
                self.out_channels, self.in_channels
            )));
        }
        check_len(&format!("{name}.weight"), &self.weight, out * inp * k * k)?;
        check_len(&format!("{name}.bias"), &self.bias, out)
    }
}

/// A dense layer `y = x W^T + b` (ONNX Gemm with transB=1): `weight` is `[out, in]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Dense {
    pub out_features: usize,
    pub in_features: usize,
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
}

impl Dense {
    fn check(&self, name: &str, out: usize, inp: usize) -> Result<(), NetError> {
        if (self.out_features, self.in_features) != (out, inp) {
            return Err(NetError::Config(format!(
                "{name}: dense is {}x{}, expected {out}x{inp}",
                self.out_features, self.in_features
            )));
        }
        check_len(&format!("{name}.weight"), &self.weight, out * inp)?;
        check_len(&format!("{name}.bias"), &self.bias, out)
    }
}

/// conv3x3 + ReLU, conv3x3, skip add, ReLU.
#[derive(Clone, Debug, PartialEq)]
pub struct ResBlock {
    pub conv1: Conv,
    pub conv2: Conv,
}

/// All weights of a network of the contract's architecture.
#[derive(Clone, Debug, PartialEq)]
pub struct NetWeights {
    pub config: NetConfig,
    /// conv3x3 input_planes -> channels.
    pub stem: Conv,
    pub blocks: Vec<ResBlock>,
    /// conv1x1 channels -> policy_channels (+ReLU).
    pub policy_conv: Conv,
    /// conv1x1 policy_channels -> 1: the logits.
    pub policy_out: Conv,
    /// conv1x1 channels -> value_channels (+ReLU, then each channel's mean and max).
    pub value_conv: Conv,
    /// 2 * value_channels (the means, then the maxima) -> value_hidden (+ReLU).
    pub value_fc1: Dense,
    /// value_hidden -> 1 (+tanh).
    pub value_fc2: Dense,
}

fn check_len(name: &str, v: &[f32], expected: usize) -> Result<(), NetError> {
    if v.len() != expected {
        return Err(NetError::Shape {
            name: name.to_string(),
            expected,
            got: v.len(),
        });
    }
    Ok(())
}

/// Folds an eval-mode BatchNorm that follows a conv into the conv: for output channel `o`,
/// `s = gamma[o] / sqrt(var[o] + eps)`, `w'[o] = w[o] * s`, `b'[o] = (b[o] - mean[o]) * s + beta[o]`.
/// `weight` is `[out, ...]` row-major with `out = gamma.len()`; a missing `bias` counts as zeros.
/// Returns the folded (weight, bias).
pub fn fold_batchnorm(
    weight: &[f32],
    bias: Option<&[f32]>,
    gamma: &[f32],
    beta: &[f32],
    mean: &[f32],
    var: &[f32],
    eps: f32,
) -> Result<(Vec<f32>, Vec<f32>), NetError> {
    let out = gamma.len();
    if out == 0 || !weight.len().is_multiple_of(out) {
        return Err(NetError::Shape {
            name: "fold_batchnorm.weight".into(),
            expected: out,
            got: weight.len(),
        });
    }
    check_len("fold_batchnorm.beta", beta, out)?;
    check_len("fold_batchnorm.mean", mean, out)?;
    check_len("fold_batchnorm.var", var, out)?;
    if let Some(b) = bias {
        check_len("fold_batchnorm.bias", b, out)?;
    }
    let per = weight.len() / out;
    let mut w = weight.to_vec();
    let mut b = vec![0f32; out];
    for o in 0..out {
        // f64 for the scale: var + eps can be tiny and this runs once per export.
        let s = (gamma[o] as f64 / (var[o] as f64 + eps as f64).sqrt()) as f32;
        for x in &mut w[o * per..(o + 1) * per] {
            *x *= s;
        }
        let b0 = bias.map_or(0.0, |bb| bb[o]);
        b[o] = (b0 - mean[o]) * s + beta[o];
    }
    Ok((w, b))
}

impl NetWeights {
    /// Deterministic random weights (He-normal, small random biases). The second conv of each
    /// residual block is scaled down so activations stay in range through deep trunks and the
    /// outputs are neither constant nor saturated.
    pub fn random(config: NetConfig, seed: u64) -> Result<NetWeights, NetError> {
        config.validate()?;
        // The workspace's fixed generator, not the `rand` crate: the same weights on every
        // platform and every version.
        let mut rng = Rng::new(seed ^ 0x5EED_F1FE_2E20_0001);
        let conv = |rng: &mut Rng, o: usize, i: usize, k: usize, gain: f64| {
            let std = gain * (2.0 / (i * k * k) as f64).sqrt();
            Conv {
                out_channels: o,
                in_channels: i,
                kernel: k,
                weight: (0..o * i * k * k)
                    .map(|_| (rng.normal() * std) as f32)
                    .collect(),
                bias: (0..o).map(|_| ((rng.unit() - 0.5) * 0.2) as f32).collect(),
            }
        };
        let c = &config;
        let f = c.channels;
        let stem = conv(&mut rng, f, c.input_planes, 3, 1.0);
        let blocks = (0..c.blocks)
            .map(|_| ResBlock {
                conv1: conv(&mut rng, f, f, 3, 1.0),
                conv2: conv(&mut rng, f, f, 3, 0.3),
            })
            .collect();
        let policy_conv = conv(&mut rng, c.policy_channels, f, 1, 1.0);
        let policy_out = conv(&mut rng, 1, c.policy_channels, 1, 1.0);
        let value_conv = conv(&mut rng, c.value_channels, f, 1, 1.0);
        let fc1 = conv(&mut rng, c.value_hidden, c.value_pool_features(), 1, 1.0);
        // gain < 1 on the last layer keeps tanh away from +-1 for random inputs.
        let fc2 = conv(&mut rng, 1, c.value_hidden, 1, 0.5);
        let dense = |cv: Conv| Dense {
            out_features: cv.out_channels,
            in_features: cv.in_channels,
            weight: cv.weight,
            bias: cv.bias,
        };
        let w = NetWeights {
            config,
            stem,
            blocks,
            policy_conv,
            policy_out,
            value_conv,
            value_fc1: dense(fc1),
            value_fc2: dense(fc2),
        };
        w.validate()?;
        Ok(w)
    }

    /// Checks every tensor against `config`.
    pub fn validate(&self) -> Result<(), NetError> {
        let c = &self.config;
        c.validate()?;
        let f = c.channels;
        self.stem.check("stem", f, c.input_planes, 3)?;
        if self.blocks.len() != c.blocks {
            return Err(NetError::Config(format!(
                "{} residual blocks, config says {}",
                self.blocks.len(),
                c.blocks
            )));
        }
        for (i, b) in self.blocks.iter().enumerate() {
            b.conv1.check(&format!("block{i}.conv1"), f, f, 3)?;
            b.conv2.check(&format!("block{i}.conv2"), f, f, 3)?;
        }
        self.policy_conv
            .check("policy_conv", c.policy_channels, f, 1)?;
        self.policy_out
            .check("policy_out", 1, c.policy_channels, 1)?;
        self.value_conv
            .check("value_conv", c.value_channels, f, 1)?;
        self.value_fc1
            .check("value_fc1", c.value_hidden, c.value_pool_features())?;
        self.value_fc2.check("value_fc2", 1, c.value_hidden)?;
        for (name, t) in self.tensors() {
            if let Some(i) = t.iter().position(|x| !x.is_finite()) {
                return Err(NetError::Config(format!(
                    "{name}[{i}] = {} is not finite",
                    t[i]
                )));
            }
        }
        Ok(())
    }

    /// Every tensor with a stable name, in graph order (the writer's initializer names).
    pub fn tensors(&self) -> Vec<(String, &[f32])> {
        fn conv<'a>(name: &str, c: &'a Conv, v: &mut Vec<(String, &'a [f32])>) {
            v.push((format!("{name}.weight"), &c.weight));
            v.push((format!("{name}.bias"), &c.bias));
        }
        let mut v: Vec<(String, &[f32])> = Vec::new();
        conv("stem", &self.stem, &mut v);
        for (i, b) in self.blocks.iter().enumerate() {
            conv(&format!("block{i}.conv1"), &b.conv1, &mut v);
            conv(&format!("block{i}.conv2"), &b.conv2, &mut v);
        }
        conv("policy_conv", &self.policy_conv, &mut v);
        conv("policy_out", &self.policy_out, &mut v);
        conv("value_conv", &self.value_conv, &mut v);
        v.push(("value_fc1.weight".into(), &self.value_fc1.weight));
        v.push(("value_fc1.bias".into(), &self.value_fc1.bias));
        v.push(("value_fc2.weight".into(), &self.value_fc2.weight));
        v.push(("value_fc2.bias".into(), &self.value_fc2.bias));
        v
    }

    /// Number of learned parameters actually held.
    pub fn param_count(&self) -> usize {
        self.tensors().iter().map(|(_, t)| t.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::Preset;

    #[test]
    fn random_is_deterministic_and_seed_dependent() {
        let a = NetWeights::random(Preset::Tiny.config(), 7).unwrap();
        let b = NetWeights::random(Preset::Tiny.config(), 7).unwrap();
        let c = NetWeights::random(Preset::Tiny.config(), 8).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.param_count(), a.config.param_count());
    }

    #[test]
    fn fold_batchnorm_matches_conv_then_bn() {
        // One output channel of 2 weights; check conv(x)+BN == folded conv(x) on x = [1, 2].
        let (w, b) = fold_batchnorm(
            &[0.5, -1.0, 2.0, 3.0],
            Some(&[0.1, -0.2]),
            &[2.0, 0.5],
            &[0.3, -0.1],
            &[0.2, 1.0],
            &[4.0, 0.25],
            0.0,
        )
        .unwrap();
        let x = [1.0f32, 2.0];
        for o in 0..2 {
            let conv = [0.5f32, -1.0, 2.0, 3.0][o * 2] * x[0]
                + [0.5f32, -1.0, 2.0, 3.0][o * 2 + 1] * x[1]
                + [0.1f32, -0.2][o];
            let bn = ([2.0f32, 0.5][o]) * (conv - [0.2f32, 1.0][o]) / [4.0f32, 0.25][o].sqrt()
                + [0.3f32, -0.1][o];
            let folded = w[o * 2] * x[0] + w[o * 2 + 1] * x[1] + b[o];
            assert!((bn - folded).abs() < 1e-6, "channel {o}: {bn} vs {folded}");
        }
        assert!(
            fold_batchnorm(
                &[1.0, 2.0, 3.0],
                None,
                &[1.0, 1.0],
                &[0.0; 2],
                &[0.0; 2],
                &[1.0; 2],
                1e-5
            )
            .is_err()
        );
    }

    #[test]
    fn validate_catches_bad_shapes() {
        let mut w = NetWeights::random(Preset::Tiny.config(), 1).unwrap();
        w.blocks[1].conv2.bias.pop();
        assert!(matches!(w.validate(), Err(NetError::Shape { .. })));
    }
}
