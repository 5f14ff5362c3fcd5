//! Optimizers written out over named tensors (SGD with momentum and L2 weight decay, AdamW with
//! decoupled decay; both decay only the conv and dense weights, not biases or BatchNorm), so their
//! state is plain data a checkpoint can save and restore exactly, and the learning-rate schedule
//! (linear warm-up, cosine decay to a floor). Every number of it is a setting (`config`):
//! `OptimConfig::from_settings`.
//!
//! Depends on tch, `model` (which variables decay) and `config`.

use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor, nn};

use crate::config::{OptimizerKind, Settings};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OptimConfig {
    pub kind: OptimizerKind,
    pub lr: f64,
    pub weight_decay: f64,
    pub momentum: f64,
    pub warmup_steps: u64,
    /// Steps over which the cosine goes from `lr` to `lr * min_lr_ratio`.
    pub total_steps: u64,
    pub min_lr_ratio: f64,
}

impl OptimConfig {
    /// The optimizer and schedule the settings ask for, over `schedule_steps` steps: the warm-up
    /// takes at most a tenth of them (plus one), and the schedule is longer than the warm-up.
    pub fn from_settings(s: &Settings, schedule_steps: u64) -> OptimConfig {
        let total_steps = schedule_steps.max(s.warmup_steps + 1);
        OptimConfig {
            kind: s.optimizer,
            lr: s.lr,
            weight_decay: s.weight_decay,
            momentum: s.momentum,
            warmup_steps: s.warmup_steps.min(total_steps / 10 + 1),
            total_steps,
            min_lr_ratio: s.min_lr_ratio,
        }
    }

    pub fn lr_at(&self, step: u64) -> f64 {
        if step < self.warmup_steps {
            return self.lr * (step + 1) as f64 / self.warmup_steps as f64;
        }
        let span = self.total_steps.saturating_sub(self.warmup_steps).max(1);
        let t = ((step - self.warmup_steps) as f64 / span as f64).min(1.0);
        let floor = self.lr * self.min_lr_ratio;
        floor + (self.lr - floor) * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
    }
}

/// Per-parameter state, by variable name (sorted, so order never depends on a hash map).
pub struct Optimizer {
    pub config: OptimConfig,
    params: Vec<(String, Tensor)>,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    pub steps: u64,
}

impl Optimizer {
    pub fn new(vs: &nn::VarStore, config: OptimConfig) -> Optimizer {
        let mut params: Vec<(String, Tensor)> = vs
            .variables()
            .into_iter()
            .filter(|(_, t)| t.requires_grad())
            .collect();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        let m = params.iter().map(|(_, t)| t.zeros_like()).collect();
        let v = params.iter().map(|(_, t)| t.zeros_like()).collect();
        Optimizer {
            config,
            params,
            m,
            v,
            steps: 0,
        }
    }

    pub fn zero_grad(&mut self) {
        for (_, p) in &mut self.params {
            p.zero_grad();
        }
    }

    /// One update with the learning rate of the current step.
    pub fn step(&mut self) -> f64 {
        let lr = self.config.lr_at(self.steps);
        let c = self.config.clone();
        self.steps += 1;
        let t = self.steps as f64;
        tch::no_grad(|| {
            for ((_, p), (m, v)) in self
                .params
                .iter_mut()
                .zip(self.m.iter_mut().zip(self.v.iter_mut()))
            {
                let g = p.grad();
                if !g.defined() {
                    continue;
                }
                // Biases and BatchNorm scales/shifts (1-D) are not decayed: shrinking them only
                // shifts activations.
                let decay = if p.dim() > 1 { c.weight_decay } else { 0.0 };
                match c.kind {
                    OptimizerKind::Sgd => {
                        let g = g + &*p * decay;
                        let _ = m.g_mul_scalar_(c.momentum).g_add_(&g);
                        let _ = p.g_sub_(&(&*m * lr));
                    }
                    OptimizerKind::Adamw => {
                        let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
                        let _ = p.g_mul_scalar_(1.0 - lr * decay);
                        let _ = m.g_mul_scalar_(b1).g_add_(&(&g * (1.0 - b1)));
                        let _ = v.g_mul_scalar_(b2).g_add_(&(&g * &g * (1.0 - b2)));
                        let mhat = &*m / (1.0 - b1.powf(t));
                        let vhat = &*v / (1.0 - b2.powf(t));
                        let _ = p.g_sub_(&(mhat / (vhat.sqrt() + eps) * lr));
                    }
                }
            }
        });
        lr
    }

    /// State as named host tensors: `m.<name>`, `v.<name>`.
    pub fn state(&self) -> Vec<(String, Vec<f32>)> {
        let mut out = Vec::new();
        for ((name, _), (m, v)) in self.params.iter().zip(self.m.iter().zip(&self.v)) {
            out.push((format!("m.{name}"), crate::network::model::to_vec(m)));
            out.push((format!("v.{name}"), crate::network::model::to_vec(v)));
        }
        out
    }

    /// Restores `state`; every buffer must be present with the right size, except those of
    /// training-only heads (`model::is_training_only`), which stay at zero when missing.
    pub fn load_state(&mut self, state: &[(String, Vec<f32>)], steps: u64) -> Result<(), String> {
        let find = |k: &str| state.iter().find(|(n, _)| n == k).map(|(_, v)| v);
        for ((name, _), (m, v)) in self
            .params
            .iter()
            .zip(self.m.iter_mut().zip(self.v.iter_mut()))
        {
            for (prefix, buf) in [("m", &mut *m), ("v", &mut *v)] {
                let key = format!("{prefix}.{name}");
                let Some(data) = find(&key) else {
                    // A training-only head the checkpoint was saved without starts fresh, its
                    // moments at zero (`checkpoint::restore`).
                    if crate::network::model::is_training_only(name) {
                        continue;
                    }
                    return Err(format!("optimizer state `{key}` missing"));
                };
                if data.len() as i64 != buf.numel() as i64 {
                    return Err(format!(
                        "optimizer state `{key}`: {} values, expected {}",
                        data.len(),
                        buf.numel()
                    ));
                }
                let t = Tensor::from_slice(data)
                    .view(buf.size().as_slice())
                    .to_kind(Kind::Float)
                    .to_device(buf.device());
                tch::no_grad(|| buf.copy_(&t));
            }
        }
        self.steps = steps;
        Ok(())
    }
}
