//! The fp32 network of the native runtime (a model exported without quantization) and the value
//! head both forms share. Plain loops over padded NHWC images that the compiler vectorizes over
//! the output channels; fp32 sums, so answers agree with `net::reference_forward` (f64 sums) to
//! rounding.

use super::image::Geometry;
use crate::net::{Conv, Dense, NetWeights};

/// A convolution: weights `[tap][cin][cout]`, bias per output channel.
#[derive(Clone, Debug)]
pub struct FConv {
    taps: usize,
    cin: usize,
    cout: usize,
    w: Vec<f32>,
    bias: Vec<f32>,
}

impl FConv {
    fn new(c: &Conv) -> FConv {
        let taps = c.kernel * c.kernel;
        let mut w = vec![0f32; taps * c.in_channels * c.out_channels];
        for o in 0..c.out_channels {
            for i in 0..c.in_channels {
                for t in 0..taps {
                    w[(t * c.in_channels + i) * c.out_channels + o] =
                        c.weight[(o * c.in_channels + i) * taps + t];
                }
            }
        }
        FConv {
            taps,
            cin: c.in_channels,
            cout: c.out_channels,
            w,
            bias: c.bias.clone(),
        }
    }

    /// `y` (board pixels only, border 0) = conv(`x`), optionally `+ skip` then ReLU.
    fn run(&self, x: &[f32], geo: &Geometry, y: &mut [f32], relu: bool, skip: Option<&[f32]>) {
        let offsets = geo.offsets(self.taps);
        y.fill(0.0);
        for i in 0..geo.h * geo.w {
            let p = geo.interior(i);
            let out = &mut y[p * self.cout..(p + 1) * self.cout];
            out.copy_from_slice(&self.bias);
            for (t, &off) in offsets.iter().enumerate() {
                let src = (p as isize + off) as usize * self.cin;
                let xs = &x[src..src + self.cin];
                let wt = &self.w[t * self.cin * self.cout..(t + 1) * self.cin * self.cout];
                for (&xv, row) in xs.iter().zip(wt.chunks_exact(self.cout)) {
                    for (o, &wv) in out.iter_mut().zip(row) {
                        *o += xv * wv;
                    }
                }
            }
            if let Some(skip) = skip {
                for (o, &s) in out.iter_mut().zip(&skip[p * self.cout..]) {
                    *o += s;
                }
            }
            if relu {
                out.iter_mut().for_each(|v| *v = v.max(0.0));
            }
        }
    }
}

/// The value head after its convolution: mean and max of each channel over the board, two
/// dense layers, tanh.
#[derive(Clone, Debug)]
pub struct Head {
    pub fc1: Dense,
    pub fc2: Dense,
}

impl Head {
    /// The value from the value convolution's ReLU output `v` (padded NHWC, `cs` floats a
    /// pixel, the first `channels` of them meaningful).
    pub fn value(&self, v: &[f32], cs: usize, channels: usize, geo: &Geometry) -> f32 {
        let hw = geo.h * geo.w;
        let mut sum = vec![0f32; channels];
        let mut max = vec![f32::MIN; channels];
        for i in 0..hw {
            let px = &v[geo.interior(i) * cs..][..channels];
            for c in 0..channels {
                sum[c] += px[c];
                max[c] = max[c].max(px[c]);
            }
        }
        let pooled: Vec<f32> = sum.iter().map(|s| s / hw as f32).chain(max).collect();
        let hidden: Vec<f32> = dense(&self.fc1, &pooled)
            .into_iter()
            .map(|x| x.max(0.0))
            .collect();
        dense(&self.fc2, &hidden)[0].tanh()
    }
}

fn dense(d: &Dense, x: &[f32]) -> Vec<f32> {
    (0..d.out_features)
        .map(|o| {
            let row = &d.weight[o * d.in_features..(o + 1) * d.in_features];
            d.bias[o] + row.iter().zip(x).map(|(a, b)| a * b).sum::<f32>()
        })
        .collect()
}

/// The whole fp32 network.
#[derive(Clone, Debug)]
pub struct FloatNet {
    stem: FConv,
    blocks: Vec<(FConv, FConv)>,
    policy_conv: FConv,
    policy_out: FConv,
    value_conv: FConv,
    head: Head,
}

impl FloatNet {
    pub fn new(w: &NetWeights) -> FloatNet {
        FloatNet {
            stem: FConv::new(&w.stem),
            blocks: w
                .blocks
                .iter()
                .map(|b| (FConv::new(&b.conv1), FConv::new(&b.conv2)))
                .collect(),
            policy_conv: FConv::new(&w.policy_conv),
            policy_out: FConv::new(&w.policy_out),
            value_conv: FConv::new(&w.value_conv),
            head: Head {
                fc1: w.value_fc1.clone(),
                fc2: w.value_fc2.clone(),
            },
        }
    }

    /// The policy logits (`h*w`) and value of one position (`planes`: `[planes, h, w]`).
    pub fn forward_one(&self, planes: &[f32], geo: &Geometry, logits: &mut [f32]) -> f32 {
        let img = |c: usize| vec![0f32; geo.pixels() * c];
        let hw = geo.h * geo.w;
        let mut x = img(self.stem.cin);
        for (c, plane) in planes.chunks_exact(hw).enumerate() {
            for (i, &v) in plane.iter().enumerate() {
                x[geo.interior(i) * self.stem.cin + c] = v;
            }
        }
        let f = self.stem.cout;
        let (mut t, mut y, mut z) = (img(f), img(f), img(f));
        self.stem.run(&x, geo, &mut t, true, None);
        for (c1, c2) in &self.blocks {
            c1.run(&t, geo, &mut y, true, None);
            c2.run(&y, geo, &mut z, true, Some(&t));
            std::mem::swap(&mut t, &mut z);
        }
        let mut p = img(self.policy_conv.cout);
        self.policy_conv.run(&t, geo, &mut p, true, None);
        let mut out = img(1);
        self.policy_out.run(&p, geo, &mut out, false, None);
        for (i, l) in logits.iter_mut().enumerate() {
            *l = out[geo.interior(i)];
        }
        let vc = self.value_conv.cout;
        let mut v = img(vc);
        self.value_conv.run(&t, geo, &mut v, true, None);
        self.head.value(&v, vc, vc, geo)
    }
}
