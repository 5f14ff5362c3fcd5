//! The two network forms the trainer trains behind one type: `Model` is the ResNet (`model`) or
//! the pattern network (`pattern`), with the same forward (`Heads`) and an export to the weights
//! of either form (`Exported`), which writes its own ONNX file. `Form` is the shape that makes
//! one, from a preset or a ResNet config.
//!
//! Depends on tch, `model`, `pattern` and `engine::net`.

use engine::game::Rule;
use engine::net::{
    ModelMeta, NetConfig, NetError, NetWeights, PatternWeights, Preset, onnx_bytes,
    pattern_onnx_bytes,
};
use tch::{Tensor, nn};

use crate::network::model::{Heads, Net};
use crate::network::pattern::PatternNet;

/// The shape of a network: a ResNet's config, or the pattern network's width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    ResNet(NetConfig),
    Pattern { dim: usize },
}

impl Form {
    /// The shape `preset` names.
    pub fn of(preset: Preset) -> Form {
        match preset.try_config() {
            Ok(config) => Form::ResNet(config),
            Err(_) => Form::Pattern {
                dim: preset.dims().1,
            },
        }
    }
}

impl From<NetConfig> for Form {
    fn from(config: NetConfig) -> Form {
        Form::ResNet(config)
    }
}

/// A network of either form, its weights in the `VarStore` given to `new`.
pub enum Model {
    ResNet(Box<Net>),
    Pattern(Box<PatternNet>),
}

impl Model {
    /// The network an evaluator or an export needs: policy and value heads.
    pub fn new(vs: &nn::Path, form: impl Into<Form>) -> Model {
        Model::for_training(vs, form, false)
    }

    /// The network with, where `opponent_policy` is set, the auxiliary opponent-reply head.
    pub fn for_training(vs: &nn::Path, form: impl Into<Form>, opponent_policy: bool) -> Model {
        match form.into() {
            Form::ResNet(config) => {
                Model::ResNet(Box::new(Net::for_training(vs, config, opponent_policy)))
            }
            Form::Pattern { dim } => {
                Model::Pattern(Box::new(PatternNet::for_training(vs, dim, opponent_policy)))
            }
        }
    }

    /// Every head on `x` (`[n, planes, h, w]`); `train` matters to the ResNet's BatchNorm only.
    pub fn forward_heads(&self, x: &Tensor, train: bool) -> Heads {
        match self {
            Model::ResNet(net) => net.forward_heads(x, train),
            Model::Pattern(net) => net.forward_heads(x),
        }
    }

    /// (policy logits `[n, h*w]`, value `[n]` in [-1, 1]).
    pub fn forward(&self, x: &Tensor, train: bool) -> (Tensor, Tensor) {
        let h = self.forward_heads(x, train);
        (h.policy, h.value)
    }

    /// The eval-mode network as its file holds it (BatchNorm folded, training-only heads left
    /// out).
    pub fn export(&self) -> Result<Exported, NetError> {
        Ok(match self {
            Model::ResNet(net) => Exported::ResNet(net.export()?),
            Model::Pattern(net) => Exported::Pattern(net.export()?),
        })
    }
}

/// A network's exported weights, of either form.
#[derive(Clone, Debug, PartialEq)]
pub enum Exported {
    ResNet(NetWeights),
    Pattern(PatternWeights),
}

impl Exported {
    /// Learned parameters of the file.
    pub fn param_count(&self) -> usize {
        match self {
            Exported::ResNet(w) => w.param_count(),
            Exported::Pattern(w) => engine::net::pattern::param_count(w.dim),
        }
    }

    /// The ONNX file: metadata with `step` and the claim `rule` on `board_size`.
    pub fn onnx_bytes(
        &self,
        step: u64,
        rule: Rule,
        board_size: usize,
    ) -> Result<Vec<u8>, NetError> {
        let claim = |meta: ModelMeta| ModelMeta {
            rules: vec![rule],
            board_sizes: vec![board_size],
            ..meta
        };
        match self {
            Exported::ResNet(w) => onnx_bytes(w, &claim(ModelMeta::for_config(&w.config, step))),
            Exported::Pattern(w) => pattern_onnx_bytes(w, &claim(w.meta(step))),
        }
    }
}
