//! Naive pure-Rust forward pass of the contract's network: the slow obvious code that the ONNX
//! writer and every runtime are checked against. Direct loops, f64 accumulation; small models only.
//! Depends only on `net`'s weight types.

use super::{Conv, Dense, NetError, NetWeights};

/// Runs `weights` on `planes` (`[n, input_planes, h, w]` row-major). Returns the policy logits
/// (`[n, h*w]`, index `y*w + x`) and the values (`[n]`, in [-1, 1]).
pub fn reference_forward(
    weights: &NetWeights,
    planes: &[f32],
    n: usize,
    h: usize,
    w: usize,
) -> Result<(Vec<f32>, Vec<f32>), NetError> {
    weights.validate()?;
    let c = &weights.config;
    let expected = n
        .checked_mul(c.input_planes)
        .and_then(|v| v.checked_mul(h))
        .and_then(|v| v.checked_mul(w));
    if expected != Some(planes.len()) || h == 0 || w == 0 {
        return Err(NetError::Input {
            expected: expected.unwrap_or(usize::MAX),
            got: planes.len(),
            n,
            planes: c.input_planes,
            h,
            w,
        });
    }
    let hw = h * w;
    let mut policy = Vec::with_capacity(n * hw);
    let mut value = Vec::with_capacity(n);
    for b in 0..n {
        let x = &planes[b * c.input_planes * hw..(b + 1) * c.input_planes * hw];
        let (p, v) = forward_one(weights, x, h, w, &mut |_, _| {});
        policy.extend(p);
        value.push(v);
    }
    Ok((policy, value))
}

/// One position through the network; `seen` gets every intermediate tensor the int8 export
/// quantizes, under its name in the ONNX graph (`net::writer`), for calibration.
pub(crate) fn forward_one(
    weights: &NetWeights,
    x: &[f32],
    h: usize,
    w: usize,
    seen: &mut dyn FnMut(&str, &[f32]),
) -> (Vec<f32>, f32) {
    let hw = h * w;
    seen(super::INPUT_NAME, x);
    let mut t = conv2d(&weights.stem, x, h, w);
    relu(&mut t);
    seen("stem.relu", &t);
    for (i, blk) in weights.blocks.iter().enumerate() {
        let mut y = conv2d(&blk.conv1, &t, h, w);
        relu(&mut y);
        seen(&format!("block{i}.relu1"), &y);
        let mut y = conv2d(&blk.conv2, &y, h, w);
        seen(&format!("block{i}.conv2"), &y);
        for (yi, ti) in y.iter_mut().zip(&t) {
            *yi += *ti;
        }
        relu(&mut y);
        seen(&format!("block{i}.relu2"), &y);
        t = y;
    }
    let mut p = conv2d(&weights.policy_conv, &t, h, w);
    relu(&mut p);
    seen("policy_conv.relu", &p);
    let policy = conv2d(&weights.policy_out, &p, h, w);

    let mut v = conv2d(&weights.value_conv, &t, h, w);
    relu(&mut v);
    let mut pooled: Vec<f32> = v
        .chunks(hw)
        .map(|ch| (ch.iter().map(|&a| a as f64).sum::<f64>() / hw as f64) as f32)
        .collect();
    pooled.extend(
        v.chunks(hw)
            .map(|ch| ch.iter().copied().fold(f32::MIN, f32::max)),
    );
    let mut hidden = dense(&weights.value_fc1, &pooled);
    relu(&mut hidden);
    (policy, dense(&weights.value_fc2, &hidden)[0].tanh())
}

fn relu(v: &mut [f32]) {
    for x in v {
        *x = x.max(0.0);
    }
}

/// Same-padding, stride-1 convolution of one `[in, h, w]` image.
fn conv2d(conv: &Conv, x: &[f32], h: usize, w: usize) -> Vec<f32> {
    // Each output is its bias plus the taps in (input channel, ky, kx) order, summed in f64; the
    // loops run tap by tap over whole rows so the inner loop is contiguous (int8 calibration runs
    // hundreds of positions through here every self-play epoch).
    let (k, pad) = (conv.kernel, conv.kernel / 2);
    let plane_len = h * w;
    let mut out = vec![0f64; conv.out_channels * plane_len];
    for (o, plane) in out.chunks_exact_mut(plane_len).enumerate() {
        plane.fill(conv.bias[o] as f64);
        for (i, src) in x.chunks_exact(plane_len).take(conv.in_channels).enumerate() {
            for ky in 0..k {
                for kx in 0..k {
                    let wv = conv.weight[((o * conv.in_channels + i) * k + ky) * k + kx] as f64;
                    // Output columns whose source column xx + kx - pad is on the board.
                    let (lo, hi) = (pad.saturating_sub(kx), (w + pad).saturating_sub(kx).min(w));
                    for y in 0..h {
                        let Some(sy) = (y + ky).checked_sub(pad).filter(|&sy| sy < h) else {
                            continue;
                        };
                        let dst = &mut plane[y * w + lo..y * w + hi];
                        let row = &src[sy * w + lo + kx - pad..sy * w + hi + kx - pad];
                        for (d, &v) in dst.iter_mut().zip(row) {
                            *d += wv * v as f64;
                        }
                    }
                }
            }
        }
    }
    out.into_iter().map(|v| v as f32).collect()
}

fn dense(d: &Dense, x: &[f32]) -> Vec<f32> {
    (0..d.out_features)
        .map(|o| {
            let row = &d.weight[o * d.in_features..(o + 1) * d.in_features];
            (d.bias[o] as f64
                + row
                    .iter()
                    .zip(x)
                    .map(|(&a, &b)| a as f64 * b as f64)
                    .sum::<f64>()) as f32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{NetConfig, Preset};

    #[test]
    fn outputs_are_shaped_bounded_and_input_dependent() {
        let wts = NetWeights::random(Preset::Tiny.config(), 3).unwrap();
        let (h, w) = (6, 7);
        let mut planes = vec![0f32; 2 * 11 * h * w];
        for (i, p) in planes.iter_mut().enumerate() {
            *p = ((i.wrapping_mul(2_654_435_761) >> 7) % 4 == 0) as u8 as f32;
        }
        let (p, v) = reference_forward(&wts, &planes, 2, h, w).unwrap();
        assert_eq!(p.len(), 2 * h * w);
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|x| x.abs() < 1.0));
        assert_ne!(
            p[..h * w],
            p[h * w..],
            "different inputs must give different policies"
        );
        let spread =
            p.iter().cloned().fold(f32::MIN, f32::max) - p.iter().cloned().fold(f32::MAX, f32::min);
        assert!(spread > 1e-2, "policy is degenerate: spread {spread}");
    }

    #[test]
    fn rejects_wrong_input_length() {
        let wts = NetWeights::random(
            NetConfig {
                blocks: 0,
                ..NetConfig::default()
            },
            3,
        )
        .unwrap();
        assert!(reference_forward(&wts, &[0.0; 10], 1, 5, 5).is_err());
        assert!(reference_forward(&wts, &[], 0, 0, 5).is_err());
    }

    /// The convolution's definition, one output at a time: `conv2d` must give the very same
    /// numbers (same taps, same order, f64 sums), edges and odd shapes included.
    fn conv_by_definition(conv: &Conv, x: &[f32], h: usize, w: usize) -> Vec<f32> {
        let (k, pad) = (conv.kernel as isize, conv.kernel as isize / 2);
        let mut out = vec![0f32; conv.out_channels * h * w];
        for o in 0..conv.out_channels {
            for y in 0..h as isize {
                for xx in 0..w as isize {
                    let mut acc = conv.bias[o] as f64;
                    for i in 0..conv.in_channels {
                        for ky in 0..k {
                            for kx in 0..k {
                                let (sy, sx) = (y + ky - pad, xx + kx - pad);
                                if sy < 0 || sy >= h as isize || sx < 0 || sx >= w as isize {
                                    continue;
                                }
                                let wi = ((o * conv.in_channels + i) * conv.kernel + ky as usize)
                                    * conv.kernel
                                    + kx as usize;
                                acc += conv.weight[wi] as f64
                                    * x[(i * h + sy as usize) * w + sx as usize] as f64;
                            }
                        }
                    }
                    out[(o * h + y as usize) * w + xx as usize] = acc as f32;
                }
            }
        }
        out
    }

    #[test]
    fn row_wise_convolution_is_the_definition_exactly() {
        let wts = NetWeights::random(Preset::Tiny.config(), 9).unwrap();
        for (h, w) in [(5, 5), (6, 9), (15, 15)] {
            for conv in [&wts.stem, &wts.blocks[0].conv1, &wts.policy_conv] {
                let x: Vec<f32> = (0..conv.in_channels * h * w)
                    .map(|i| ((i.wrapping_mul(2_654_435_761) >> 5) % 7) as f32 * 0.25 - 0.5)
                    .collect();
                assert_eq!(conv2d(conv, &x, h, w), conv_by_definition(conv, &x, h, w));
            }
        }
    }
}
