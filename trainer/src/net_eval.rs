//! The tch network as an evaluator: `TchNet` holds a `Net` in its own `VarStore` and runs eval-mode
//! forwards without gradients; it serves self-play (`BatchNet`: one big batch per step) and engine
//! games (`engine::eval::Evaluator`: evaluation matches between networks).
//!
//! Depends on tch, `model`, `engine::eval` and `selfplay::BatchNet`.

use std::sync::Mutex;

use engine::eval::{Evaluation, Evaluator, features, masked_softmax, prepare};
use engine::game::Board;
use engine::net::NetConfig;
use tch::{Device, Kind, Tensor, nn};

use crate::model::{Net, to_vec};
use crate::selfplay::BatchNet;

pub struct TchNet {
    inner: Mutex<(nn::VarStore, Net)>,
    device: Device,
    label: String,
    id: u64,
}

impl TchNet {
    /// A fresh (randomly initialised) network on `device`; `tch::manual_seed` decides the weights.
    pub fn new(config: NetConfig, device: Device, label: &str, id: u64) -> TchNet {
        let vs = nn::VarStore::new(device);
        let net = Net::new(&vs.root(), config);
        TchNet {
            inner: Mutex::new((vs, net)),
            device,
            label: label.to_string(),
            id,
        }
    }

    /// Copies every variable (weights and BN statistics) from `src`.
    pub fn load_from(&self, src: &nn::VarStore) -> anyhow::Result<()> {
        let mut g = self
            .inner
            .lock()
            .map_err(|_| anyhow::anyhow!("network lock poisoned"))?;
        g.0.copy(src)
            .map_err(|e| anyhow::anyhow!("copying weights: {e}"))
    }

    pub fn with<R>(&self, f: impl FnOnce(&nn::VarStore, &Net) -> R) -> R {
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(&g.0, &g.1)
    }

    /// Eval-mode forward on host planes.
    pub fn run(
        &self,
        planes: &[f32],
        n: usize,
        h: usize,
        w: usize,
    ) -> anyhow::Result<(Vec<f32>, Vec<f32>)> {
        let expected = n * features::PLANES * h * w;
        if planes.len() != expected || n == 0 {
            anyhow::bail!(
                "forward: {} values for n={n} x {} planes x {h}x{w}",
                planes.len(),
                features::PLANES
            );
        }
        let g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        tch::no_grad(|| {
            let x = Tensor::from_slice(planes).view([
                n as i64,
                features::PLANES as i64,
                h as i64,
                w as i64,
            ]);
            let x = x.to_device(self.device).to_kind(Kind::Float);
            let (p, v) = g.1.forward(&x, false);
            Ok((to_vec(&p), to_vec(&v)))
        })
    }
}

impl BatchNet for TchNet {
    fn forward(
        &self,
        planes: &[f32],
        n: usize,
        size: usize,
    ) -> anyhow::Result<(Vec<f32>, Vec<f32>)> {
        self.run(planes, n, size, size)
    }
    fn name(&self) -> String {
        self.label.clone()
    }
}

impl Evaluator for TchNet {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        let Some(first) = boards.first() else {
            out.clear();
            return;
        };
        let (h, w) = (first.height(), first.width());
        prepare(out, boards.len(), h * w);
        let len = features::PLANES * h * w;
        let same = boards.iter().all(|b| b.height() == h && b.width() == w);
        let mut planes = vec![0f32; len * boards.len()];
        for (k, b) in boards.iter().enumerate() {
            if same {
                features::encode(b, &mut planes[k * len..(k + 1) * len]);
            }
        }
        match (same, self.run(&planes, boards.len(), h, w)) {
            (true, Ok((logits, values))) => {
                for (k, (b, e)) in boards.iter().zip(out.iter_mut()).enumerate() {
                    masked_softmax(b, &logits[k * h * w..(k + 1) * h * w], &mut e.policy);
                    e.value = values[k].clamp(-1.0, 1.0);
                }
            }
            // Mixed sizes or a failed forward: fall back to uniform priors, value 0, so a
            // search degrades instead of aborting (the trainer never mixes sizes).
            _ => engine::eval::UniformEvaluator.evaluate(boards, out),
        }
    }

    fn preferred_batch(&self) -> usize {
        16
    }

    fn model_id(&self) -> u64 {
        self.id
    }
}
