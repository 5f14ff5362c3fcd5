//! The tch network as a backend of the engine's network seam: `TchNet` holds a `Net` in its own
//! `VarStore` and runs eval-mode forwards without gradients. `TchEvaluator`, the engine's
//! `NetEvaluator` over it, serves self-play, the five-prior probe and evaluation matches.
//!
//! Depends on tch, `model` and `engine::eval::network`.

use std::sync::Mutex;

use engine::eval::features;
use engine::eval::network::{Backend, BackendError, NetEvaluator, NetOutput};
use engine::net::NetConfig;
use tch::{Device, Kind, Tensor, nn};

use crate::model::{Net, to_vec};

/// The trainer's evaluator: encode, tch forward, masked softmax.
pub type TchEvaluator = NetEvaluator<TchNet>;

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

    /// `new`, wrapped in the evaluator.
    pub fn evaluator(config: NetConfig, device: Device, label: &str, id: u64) -> TchEvaluator {
        NetEvaluator::new(TchNet::new(config, device, label, id))
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
}

impl Backend for TchNet {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn model_id(&self) -> u64 {
        self.id
    }

    fn preferred_batch(&self) -> usize {
        16
    }

    /// Eval-mode forward on host planes.
    fn forward(&self, planes: &[f32], n: usize, h: usize, w: usize) -> Result<NetOutput, BackendError> {
        let expected = n * features::PLANES * h * w;
        if planes.len() != expected || n == 0 {
            return Err(format!(
                "forward: {} values for n={n} x {} planes x {h}x{w}",
                planes.len(),
                features::PLANES
            )
            .into());
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
            Ok(NetOutput {
                logits: to_vec(&p),
                values: to_vec(&v),
            })
        })
    }
}
