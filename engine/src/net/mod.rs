//! The policy/value network as plain data (network contract v1): presets, shapes, weights with
//! BatchNorm already folded, model metadata, the ONNX writer (fp32, and int8 QDQ: the numbers in
//! `int8`, calibration and reading a model back in `quant`) and a naive reference forward pass;
//! and the pattern network's contract and weights (`pattern`), written by the same writer.
//! Files, lowest first: `weights`, `pattern`, `reference`, `int8`, `writer`, `quant`.
//!
//! Shared by the engine (tests, tiny models), the trainer (export after training) and tools.
//! Must not depend on any inference runtime (`ort`, `tch`) or on search code: it knows tensors,
//! and of `game` only the `Rule` a model claims; random weights come from `rng`. The runtime that
//! executes the written files lives in `eval::onnx`.

mod int8;
pub mod onnx_pb;
pub mod pattern;
pub mod quant;
mod reference;
mod weights;
mod writer;

pub use pattern::PatternWeights;
pub use reference::reference_forward;
pub use weights::{Conv, Dense, NetWeights, ResBlock, fold_batchnorm};
pub use writer::{
    QUANTIZATION_KEY, model_meta, model_proto, onnx_bytes, pattern_model_proto, pattern_onnx_bytes,
    quantized_model_proto, quantized_onnx_bytes, set_claim, write_atomic, write_model_file,
};

use std::fmt;
use std::str::FromStr;

use crate::game::Rule;

/// Version of the input encoding (the 11 planes of the network contract). A model declares the
/// version it was trained on; a runtime refuses models of any other version.
pub const FEATURE_VERSION: u32 = 1;
/// Input planes of feature version 1.
pub const INPUT_PLANES: usize = 11;
/// Smallest and largest board side the contract covers.
pub const MIN_BOARD: usize = 5;
pub const MAX_BOARD: usize = 22;

/// Names of the graph's input and outputs (network contract v1).
pub const INPUT_NAME: &str = "planes";
pub const POLICY_NAME: &str = "policy";
pub const VALUE_NAME: &str = "value";

/// Keys of the ONNX `metadata_props` the runtime reads back.
pub mod meta_keys {
    pub const FEATURE_VERSION: &str = "fivezero.feature_version";
    pub const PRESET: &str = "fivezero.preset";
    pub const BLOCKS: &str = "fivezero.blocks";
    pub const CHANNELS: &str = "fivezero.channels";
    pub const INPUT_PLANES: &str = "fivezero.input_planes";
    pub const STEP: &str = "fivezero.step";
    pub const MIN_BOARD: &str = "fivezero.min_board";
    pub const MAX_BOARD: &str = "fivezero.max_board";
    /// Present on quantized files only (`int8-qdq`: 8-bit weights, `int8-qdq-w7`: 7-bit); the
    /// writer of a quantized file sets it.
    pub const QUANTIZATION: &str = "fivezero.quantization";
    /// The rules the network was trained for, comma separated (`freestyle`); absent: not stated.
    pub const RULES: &str = "fivezero.rules";
    /// The board sizes it was trained (or measured) for, comma separated (`15,20`); absent: not
    /// stated.
    pub const BOARD_SIZES: &str = "fivezero.board_sizes";
    /// The network's architecture when it is not the ResNet (`pattern`: `net::pattern`);
    /// absent: the ResNet.
    pub const FORM: &str = "fivezero.form";
}

/// Errors of building, checking or writing a network description.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error(
        "unknown network preset `{0}` (expected tiny, cpu32, cpu48, small, medium, large or pattern)"
    )]
    UnknownPreset(String),
    #[error("tensor `{name}` has {got} values, expected {expected}")]
    Shape {
        name: String,
        expected: usize,
        got: usize,
    },
    #[error("invalid network config: {0}")]
    Config(String),
    #[error("input has {got} values, expected {expected} (n={n}, planes={planes}, h={h}, w={w})")]
    Input {
        expected: usize,
        got: usize,
        n: usize,
        planes: usize,
        h: usize,
        w: usize,
    },
    #[error("writing model file {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// Network sizes of the contract: the ResNets' blocks x channels, and the pattern networks
/// (`pattern`, width `pattern::DEFAULT_DIM`, and `pattern64`), which have no [`NetConfig`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Preset {
    Tiny,
    /// Sized for CPU play: 4x32 (about 75k parameters, ~6k positions/s on one core at batch 1).
    Cpu32,
    /// Sized for CPU play: 6x48 (about 250k parameters, ~2k positions/s on one core).
    Cpu48,
    Small,
    Medium,
    Large,
    /// The pattern network (`pattern`), D = `pattern::DEFAULT_DIM`: not a ResNet.
    Pattern,
    /// The pattern network twice as wide (D = 64): more knowledge a position, about half the
    /// speed. Its files are of the same form (`pattern`); the width is the table's.
    Pattern64,
}

impl Preset {
    /// Every preset, the pattern networks last.
    pub const ALL: [Preset; 8] = [
        Preset::Tiny,
        Preset::Cpu32,
        Preset::Cpu48,
        Preset::Small,
        Preset::Medium,
        Preset::Large,
        Preset::Pattern,
        Preset::Pattern64,
    ];

    /// The ResNet presets: those with a [`NetConfig`].
    pub const RESNETS: [Preset; 6] = [
        Preset::Tiny,
        Preset::Cpu32,
        Preset::Cpu48,
        Preset::Small,
        Preset::Medium,
        Preset::Large,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Tiny => "tiny",
            Preset::Cpu32 => "cpu32",
            Preset::Cpu48 => "cpu48",
            Preset::Small => "small",
            Preset::Medium => "medium",
            Preset::Large => "large",
            Preset::Pattern => pattern::PATTERN_FORM,
            Preset::Pattern64 => "pattern64",
        }
    }

    /// Whether this is a pattern network rather than a ResNet.
    pub fn is_pattern(self) -> bool {
        matches!(self, Preset::Pattern | Preset::Pattern64)
    }

    /// (residual blocks, trunk channels) as the metadata and checkpoints record them: the
    /// pattern network's are (0, D).
    pub fn dims(self) -> (usize, usize) {
        match self {
            Preset::Tiny => (2, 16),
            Preset::Cpu32 => (4, 32),
            Preset::Cpu48 => (6, 48),
            Preset::Small => (10, 80),
            Preset::Medium => (10, 128),
            Preset::Large => (16, 128),
            Preset::Pattern => (0, pattern::DEFAULT_DIM),
            Preset::Pattern64 => (0, 64),
        }
    }

    /// The ResNet shape of this preset.
    ///
    /// # Panics
    /// For `Pattern`, which is no ResNet: [`Preset::try_config`] says so as an error.
    pub fn config(self) -> NetConfig {
        match self.try_config() {
            Ok(config) => config,
            Err(e) => panic!("{e}"),
        }
    }

    /// The ResNet shape of this preset, or an error for the pattern network.
    pub fn try_config(self) -> Result<NetConfig, NetError> {
        if self.is_pattern() {
            return Err(NetError::Config(
                "the pattern preset is not a ResNet (blocks x channels): this path takes the \
                 ResNet presets only"
                    .into(),
            ));
        }
        let (blocks, channels) = self.dims();
        Ok(NetConfig {
            blocks,
            channels,
            ..NetConfig::default()
        })
    }

    /// Learned parameters of the exported network (BatchNorm folded for a ResNet).
    pub fn param_count(self) -> usize {
        match self.try_config() {
            Ok(config) => config.param_count(),
            Err(_) => pattern::param_count(self.dims().1),
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

crate::serde_via_str!(Preset);

impl FromStr for Preset {
    type Err = NetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| NetError::UnknownPreset(s.to_string()))
    }
}

/// Shape of a network: trunk of `blocks` residual blocks of `channels` filters, and the heads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NetConfig {
    pub blocks: usize,
    pub channels: usize,
    pub input_planes: usize,
    pub policy_channels: usize,
    pub value_channels: usize,
    pub value_hidden: usize,
}

impl Default for NetConfig {
    /// The `tiny` preset's trunk with the contract's head sizes.
    fn default() -> Self {
        NetConfig {
            blocks: 2,
            channels: 16,
            input_planes: INPUT_PLANES,
            policy_channels: 16,
            value_channels: 16,
            value_hidden: 64,
        }
    }
}

impl NetConfig {
    /// The ResNet preset whose trunk this is, if any (heads are the same for all presets).
    pub fn preset(&self) -> Option<Preset> {
        Preset::RESNETS.into_iter().find(|p| p.config() == *self)
    }

    pub fn validate(&self) -> Result<(), NetError> {
        let fields = [
            ("channels", self.channels),
            ("input_planes", self.input_planes),
            ("policy_channels", self.policy_channels),
            ("value_channels", self.value_channels),
            ("value_hidden", self.value_hidden),
        ];
        for (name, v) in fields {
            if v == 0 || v > 4096 {
                return Err(NetError::Config(format!("{name} = {v} is out of 1..=4096")));
            }
        }
        if self.blocks > 256 {
            return Err(NetError::Config(format!(
                "blocks = {} is out of 0..=256",
                self.blocks
            )));
        }
        Ok(())
    }

    /// Inputs of the value head's first dense layer: each value channel's mean and its maximum
    /// over the board (a mean alone dilutes "a five is here" by the board's area).
    pub fn value_pool_features(&self) -> usize {
        2 * self.value_channels
    }

    /// Number of learned parameters (weights + biases after BatchNorm folding).
    pub fn param_count(&self) -> usize {
        let conv = |i: usize, o: usize, k: usize| o * i * k * k + o;
        let f = self.channels;
        conv(self.input_planes, f, 3)
            + self.blocks * 2 * conv(f, f, 3)
            + conv(f, self.policy_channels, 1)
            + conv(self.policy_channels, 1, 1)
            + conv(f, self.value_channels, 1)
            + conv(self.value_pool_features(), self.value_hidden, 1) // a dense layer counts the same
            + conv(self.value_hidden, 1, 1)
    }
}

/// What a model file says about itself (ONNX `metadata_props`, keys in [`meta_keys`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelMeta {
    pub feature_version: u32,
    /// A [`Preset`] name, or "custom" for other shapes.
    pub preset: String,
    pub blocks: usize,
    pub channels: usize,
    pub input_planes: usize,
    /// Training step the weights come from (0 for untrained/random weights).
    pub step: u64,
    pub min_board: usize,
    pub max_board: usize,
    /// How the weights are stored when not fp32 (`int8-qdq`, `int8-qdq-w7`); None for fp32.
    pub quantization: Option<String>,
    /// The rules and square board sizes the network claims (trained for, or measured on); empty
    /// when the file does not say, as files before these keys do not.
    pub rules: Vec<Rule>,
    pub board_sizes: Vec<usize>,
}

impl ModelMeta {
    /// Metadata for weights of `config` at training `step`, current feature version, full board range.
    pub fn for_config(config: &NetConfig, step: u64) -> ModelMeta {
        ModelMeta {
            feature_version: FEATURE_VERSION,
            preset: config
                .preset()
                .map_or_else(|| "custom".to_string(), |p| p.name().to_string()),
            blocks: config.blocks,
            channels: config.channels,
            input_planes: config.input_planes,
            step,
            min_board: MIN_BOARD,
            max_board: MAX_BOARD,
            quantization: None,
            rules: Vec::new(),
            board_sizes: Vec::new(),
        }
    }

    /// Why the network should not play a `rule` game on a `width` x `height` board, or None when
    /// it claims them (a claim the file does not make covers everything).
    pub fn refuses(&self, rule: Rule, width: usize, height: usize) -> Option<String> {
        let rule_ok = self.rules.is_empty() || self.rules.contains(&rule);
        let size_ok =
            self.board_sizes.is_empty() || (width == height && self.board_sizes.contains(&width));
        if rule_ok && size_ok {
            return None;
        }
        Some(format!(
            "the network plays {}, not {rule} on {width}x{height}",
            self.claim()
        ))
    }

    /// "freestyle on 15x15, 20x20" (what the file claims): see [`describe_claim`].
    pub fn claim(&self) -> String {
        describe_claim(&self.rules, &self.board_sizes)
    }

    /// Key/value pairs in a fixed order (the file's bytes must not depend on map order).
    pub fn to_props(&self) -> Vec<(String, String)> {
        vec![
            (
                meta_keys::FEATURE_VERSION.into(),
                self.feature_version.to_string(),
            ),
            (meta_keys::PRESET.into(), self.preset.clone()),
            (meta_keys::BLOCKS.into(), self.blocks.to_string()),
            (meta_keys::CHANNELS.into(), self.channels.to_string()),
            (
                meta_keys::INPUT_PLANES.into(),
                self.input_planes.to_string(),
            ),
            (meta_keys::STEP.into(), self.step.to_string()),
            (meta_keys::MIN_BOARD.into(), self.min_board.to_string()),
            (meta_keys::MAX_BOARD.into(), self.max_board.to_string()),
        ]
        .into_iter()
        .chain((!self.rules.is_empty()).then(|| (meta_keys::RULES.into(), join(&self.rules))))
        .chain(
            (!self.board_sizes.is_empty())
                .then(|| (meta_keys::BOARD_SIZES.into(), join(&self.board_sizes))),
        )
        .collect()
    }

    /// Parses the props back; `get` looks a key up. Errors name the key at fault.
    pub fn from_props(get: impl Fn(&str) -> Option<String>) -> Result<ModelMeta, String> {
        fn num<T: FromStr>(get: &impl Fn(&str) -> Option<String>, key: &str) -> Result<T, String> {
            let v = get(key).ok_or_else(|| format!("metadata `{key}` is missing"))?;
            v.trim()
                .parse()
                .map_err(|_| format!("metadata `{key}` = `{v}` is not a number"))
        }
        Ok(ModelMeta {
            feature_version: num(&get, meta_keys::FEATURE_VERSION)?,
            preset: get(meta_keys::PRESET).unwrap_or_else(|| "custom".to_string()),
            blocks: num(&get, meta_keys::BLOCKS)?,
            channels: num(&get, meta_keys::CHANNELS)?,
            input_planes: num(&get, meta_keys::INPUT_PLANES)?,
            step: num(&get, meta_keys::STEP)?,
            min_board: num(&get, meta_keys::MIN_BOARD)?,
            max_board: num(&get, meta_keys::MAX_BOARD)?,
            quantization: get(meta_keys::QUANTIZATION),
            rules: list(&get, meta_keys::RULES)?,
            board_sizes: list(&get, meta_keys::BOARD_SIZES)?,
        })
    }
}

/// A claim in words: "freestyle on 15x15, 20x20"; an empty list reads "any rule" / "any size".
pub fn describe_claim(rules: &[Rule], board_sizes: &[usize]) -> String {
    let rules = if rules.is_empty() {
        "any rule".to_string()
    } else {
        join(rules)
    };
    let sizes = if board_sizes.is_empty() {
        "any size".to_string()
    } else {
        let sizes: Vec<String> = board_sizes.iter().map(|n| format!("{n}x{n}")).collect();
        sizes.join(", ")
    };
    format!("{rules} on {sizes}")
}

fn join<T: std::fmt::Display>(items: &[T]) -> String {
    let items: Vec<String> = items.iter().map(|t| t.to_string()).collect();
    items.join(",")
}

/// A comma-separated metadata list (empty when the key is absent); an item that does not parse
/// is an error naming the key.
fn list<T: FromStr>(get: &impl Fn(&str) -> Option<String>, key: &str) -> Result<Vec<T>, String> {
    let Some(v) = get(key) else {
        return Ok(Vec::new());
    };
    v.split(',')
        .map(|item| {
            item.trim().parse().map_err(|_| {
                format!(
                    "metadata `{key}` = `{v}`: `{}` is not understood",
                    item.trim()
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_names_round_trip() {
        for p in Preset::ALL {
            assert_eq!(p.to_string().parse::<Preset>().unwrap(), p);
        }
        for p in Preset::RESNETS {
            assert_eq!(p.config().preset(), Some(p));
        }
        // The pattern network is no ResNet: no config, and a (0, D) trunk is not it.
        assert_eq!(Preset::Pattern.name(), pattern::PATTERN_FORM);
        assert!(Preset::Pattern.try_config().is_err());
        let (blocks, channels) = Preset::Pattern.dims();
        let lookalike = NetConfig {
            blocks,
            channels,
            ..NetConfig::default()
        };
        assert_eq!(lookalike.preset(), None);
        let w = PatternWeights::zeros(channels).unwrap();
        assert_eq!(w.meta(0).preset, Preset::Pattern.name());
        assert_eq!(
            (w.meta(0).blocks, w.meta(0).channels),
            Preset::Pattern.dims()
        );
        assert!("huge".parse::<Preset>().is_err());
        assert_eq!("Small".parse::<Preset>().unwrap(), Preset::Small);
    }

    #[test]
    fn param_counts_match_contract_sizes() {
        let small = Preset::Small.config().param_count();
        assert!((1_100_000..1_300_000).contains(&small), "small has {small}");
        let medium = Preset::Medium.config().param_count();
        assert!(
            (2_800_000..3_200_000).contains(&medium),
            "medium has {medium}"
        );
        let large = Preset::Large.config().param_count();
        assert!((4_500_000..4_900_000).contains(&large), "large has {large}");
    }

    #[test]
    fn meta_props_round_trip() {
        let m = ModelMeta::for_config(&Preset::Small.config(), 1234);
        let props = m.to_props();
        let back =
            ModelMeta::from_props(|k| props.iter().find(|(kk, _)| kk == k).map(|(_, v)| v.clone()));
        assert_eq!(back.unwrap(), m);
        let missing = ModelMeta::from_props(|_| None).unwrap_err();
        assert!(missing.contains("fivezero.feature_version"), "{missing}");
    }

    #[test]
    fn the_claimed_rules_and_sizes_round_trip_and_decide_where_the_network_plays() {
        let m = ModelMeta {
            rules: vec![Rule::Freestyle],
            board_sizes: vec![15, 20],
            ..ModelMeta::for_config(&Preset::Cpu32.config(), 7)
        };
        let props = m.to_props();
        let get = |k: &str| props.iter().find(|(kk, _)| kk == k).map(|(_, v)| v.clone());
        assert_eq!(get(meta_keys::RULES).as_deref(), Some("freestyle"));
        assert_eq!(get(meta_keys::BOARD_SIZES).as_deref(), Some("15,20"));
        assert_eq!(ModelMeta::from_props(get).unwrap(), m);
        assert_eq!(m.refuses(Rule::Freestyle, 15, 15), None);
        assert_eq!(m.refuses(Rule::Freestyle, 20, 20), None);
        let renju = m.refuses(Rule::Renju, 15, 15).unwrap();
        assert!(
            renju.contains("freestyle on 15x15, 20x20") && renju.contains("renju"),
            "{renju}"
        );
        assert!(m.refuses(Rule::Freestyle, 19, 19).is_some());
        assert!(m.refuses(Rule::Freestyle, 15, 20).is_some());
        // A file that does not say claims everything (files from before these keys).
        let old = ModelMeta::for_config(&Preset::Cpu32.config(), 7);
        assert_eq!(old.refuses(Rule::Renju, 19, 19), None);
        // A value that does not parse names its key.
        let bad = ModelMeta::from_props(|k| {
            if k == meta_keys::RULES {
                Some("freestyle,gomoku".into())
            } else {
                get(k)
            }
        })
        .unwrap_err();
        assert!(
            bad.contains("fivezero.rules") && bad.contains("gomoku"),
            "{bad}"
        );
    }
}
