//! Training settings, declared once: `Settings` is at the same time the clap flags (`--lr`), the
//! keys of a profile in a TOML file (`trainer/presets.toml`: one table per profile) and the values
//! self-play, training, evaluation and the distributed workers read. Each field has its doc
//! comment (the `--help` text), its default (clap's `default_value_t`, which `Default` and serde
//! reuse) and, for quantities, the unit in its name.
//!
//! Layering: defaults, then the profile's parents (`inherits = "NAME"`, nearest last), then the
//! profile, then the flags given on the command line. Where every
//! value came from is kept (`Source`), so an error names the key and its source: an unknown key
//! or a wrong type in a profile, an invalid value, or a run folder whose network disagrees with
//! the settings (`check_run_folder`). All of it is checked before any work starts.
//!
//! The flags of the other commands (bootstrap, equal-time, the distributed workers,
//! `trainer-eval`) are declared beside it in `commands`, so every default is here; `run_folder`
//! is the folder a run keeps its settings, checkpoints, models and metrics in.
//!
//! Depends on serde/toml/clap, the vocabulary types of `engine` (Rule, Preset, Difficulty) and
//! `support` (`device`, `store`).

pub mod commands;
pub mod run_folder;

pub use run_folder::RunFolder;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser};
use engine::brain::Difficulty;
use engine::game::Rule;
use engine::net::Preset;
use serde::{Deserialize, Serialize};

use crate::support::device::DeviceArg;

/// Where a run starts from.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Resume {
    /// The newest valid checkpoint of the run folder, else a fresh network.
    #[default]
    Auto,
    /// A fresh network whatever the folder holds.
    None,
    /// This checkpoint file.
    File(PathBuf),
}

impl FromStr for Resume {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "auto" => Ok(Resume::Auto),
            "none" | "" => Ok(Resume::None),
            path => Ok(Resume::File(PathBuf::from(path))),
        }
    }
}

impl fmt::Display for Resume {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Resume::Auto => f.write_str("auto"),
            Resume::None => f.write_str("none"),
            Resume::File(p) => write!(f, "{}", p.display()),
        }
    }
}

engine::serde_via_str!(Resume);

/// The network self-play searches with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SelfplayBackend {
    /// On a CPU onnx-int8 where it has integer dot products (AVX-512 VNNI or AVX-VNNI), onnx
    /// elsewhere; tch on CUDA (the project's ONNX Runtime is a CPU build).
    #[default]
    Auto,
    /// The training network itself, on libtorch.
    Tch,
    /// The training network's export, loaded into ONNX Runtime at the start of each epoch.
    Onnx,
    /// That export quantized to int8 (calibrated on classical games' positions, 7-bit weights
    /// as `fivezero-tools model quantize` writes them): the arithmetic the shipped networks play
    /// with, faster where the CPU has integer dot products.
    OnnxInt8,
}

impl FromStr for SelfplayBackend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(SelfplayBackend::Auto),
            "tch" | "torch" | "libtorch" => Ok(SelfplayBackend::Tch),
            "onnx" | "ort" => Ok(SelfplayBackend::Onnx),
            "onnx-int8" | "int8" => Ok(SelfplayBackend::OnnxInt8),
            _ => Err(format!(
                "unknown self-play backend `{s}` (expected auto, tch, onnx or onnx-int8)"
            )),
        }
    }
}

impl fmt::Display for SelfplayBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SelfplayBackend::Auto => "auto",
            SelfplayBackend::Tch => "tch",
            SelfplayBackend::Onnx => "onnx",
            SelfplayBackend::OnnxInt8 => "onnx-int8",
        })
    }
}

engine::serde_via_str!(SelfplayBackend);

/// The optimizer a run trains with (`network::optim` implements both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OptimizerKind {
    Sgd,
    #[default]
    Adamw,
}

impl std::str::FromStr for OptimizerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "sgd" => Ok(OptimizerKind::Sgd),
            "adamw" | "adam" => Ok(OptimizerKind::Adamw),
            _ => Err(format!("unknown optimizer `{s}` (expected sgd or adamw)")),
        }
    }
}

impl std::fmt::Display for OptimizerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OptimizerKind::Sgd => "sgd",
            OptimizerKind::Adamw => "adamw",
        })
    }
}

engine::serde_via_str!(OptimizerKind);

/// Everything a training run is told. Flags are the field names with dashes (`--board-size`).
#[derive(Clone, Debug, PartialEq, Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Network size: tiny, cpu32, cpu48 (sized for CPU play), small, medium or large (ResNets), or
    /// pattern or pattern64 (the pattern network of `engine::net::pattern`, 32 or 64 wide,
    /// self-played on the native runtime).
    #[arg(long, alias = "preset", default_value_t = Preset::Small)]
    pub model_preset: Preset,
    /// easy (pure MCTS: the network learns tactics itself) or medium (threat-space tactics at
    /// the leaves of self-play and evaluation searches).
    #[arg(long, default_value_t = Difficulty::Easy, value_enum)]
    pub difficulty: Difficulty,
    /// Fresh playouts per self-play move.
    #[arg(long, default_value_t = 100)]
    pub mcts_simulations: u32,
    /// Threads for the tree work of self-play and evaluation games (and, with the onnx
    /// self-play backend, ONNX Runtime sessions that run parts of a step's batch at once).
    #[arg(long, default_value_t = 1)]
    pub parallel_workers: usize,
    /// The network self-play searches with: tch (the training network on libtorch), onnx (its
    /// export each epoch, on ONNX Runtime: 1.45-1.65x the self-play positions/s of libtorch
    /// for the CPU presets), onnx-int8 (that export quantized to int8: 2.0-2.5x again on a VNNI
    /// CPU) or auto (on a CPU onnx-int8 where it has VNNI, else onnx; tch on CUDA).
    #[arg(long, default_value_t = SelfplayBackend::Auto)]
    pub selfplay_backend: SelfplayBackend,
    /// The batch each ONNX Runtime session prefers (positions per call) when self-play or the
    /// evaluation matches search with the network's export.
    #[arg(long, default_value_t = 16)]
    pub onnx_batch: usize,
    /// Games played at once; their leaves share one forward per step.
    #[arg(long, default_value_t = 32)]
    pub parallel_games: usize,
    /// Training batch size (positions).
    #[arg(long, default_value_t = 256)]
    pub batch_size: usize,
    /// Leaves one game contributes per forward (virtual loss).
    #[arg(long, default_value_t = 8)]
    pub batch_size_mcts: usize,
    /// Self-play games per epoch.
    #[arg(long, default_value_t = 64)]
    pub selfplay_games: usize,
    /// Epochs to run (a resumed run continues up to this number). It is also the horizon of the
    /// cosine learning-rate schedule: to stop a run earlier on the same schedule, take
    /// `--stop-after-epoch`.
    #[arg(long, default_value_t = 10)]
    pub epochs: u64,
    /// Stop after this epoch (0 = run to `--epochs`) without moving the learning-rate schedule,
    /// whose horizon stays `--epochs`: how a profile repeats a run that was stopped by hand.
    #[arg(long, default_value_t = 0)]
    pub stop_after_epoch: u64,
    /// Epoch checkpoints (and their ONNX exports) the run folder keeps, the newest; 0 = all.
    /// Two or more leave `--resume auto` a fallback when the newest file is damaged.
    #[arg(long, default_value_t = 0)]
    pub keep_checkpoints: usize,
    /// Evaluate against the best network every N epochs (0 = never).
    #[arg(long, default_value_t = 1)]
    pub eval_frequency: u64,
    /// Game pairs per evaluation match (each opening with both colours).
    #[arg(long, default_value_t = 10)]
    pub eval_pairs: usize,
    /// Visits per move in evaluation games.
    #[arg(long, default_value_t = 64)]
    pub eval_simulations: u32,
    /// Also measure the network against the uniform evaluator at each evaluation.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub eval_vs_uniform: bool,
    /// Also measure it against the classical evaluator (the engine's default without a network)
    /// at equal visits: the learning curve that says when a network is worth shipping.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    pub eval_vs_classical: bool,
    /// Score against the best network (0..1) above which the new one becomes the best.
    #[arg(long, default_value_t = 0.55)]
    pub eval_promote_score: f64,
    /// Random stones placed near the centre before evaluation games start (diversity), when
    /// `eval_openings` names no file.
    #[arg(long, default_value_t = 2)]
    pub eval_opening_moves: usize,
    /// A file of openings the evaluation matches play instead of random ones, in any format the
    /// tournament manager reads (e.g. tools/openings/balanced-3stone.txt): pair i plays opening
    /// i mod n, turned by board symmetry i / n, so eval_pairs may be up to 8n. Random openings
    /// often decide both games of a pair for one colour; balanced ones measure more per game.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_openings: Option<PathBuf>,
    /// auto (CUDA when available), cpu, cuda or cuda:N.
    #[arg(long, default_value_t = DeviceArg::Auto)]
    pub device: DeviceArg,
    /// auto (newest valid checkpoint of the run folder, else fresh), none, or a checkpoint file.
    #[arg(long, default_value_t = Resume::Auto)]
    pub resume: Resume,
    /// A checkpoint file (of another run, same form and rule) whose network weights a fresh run
    /// starts from; its epoch, step and optimizer are not taken, so the warm start trains the
    /// network on this folder's replay (a second distillation stage, on search targets say).
    /// Ignored when the run resumes from its own checkpoint.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub init_from: Option<PathBuf>,
    /// Board size (5..=22).
    #[arg(long, default_value_t = 15)]
    pub board_size: usize,
    /// freestyle, standard, renju or caro (or the protocol's number: 0, 1, 4, 8).
    #[arg(long, default_value_t = Rule::Freestyle)]
    pub rule: Rule,
    /// The run folder: checkpoints, replay, models, metrics.
    #[arg(long, default_value = "runs/default")]
    pub checkpoint_dir: PathBuf,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// sgd (momentum) or adamw.
    #[arg(long, default_value_t = OptimizerKind::Adamw)]
    pub optimizer: OptimizerKind,
    /// Peak learning rate (after the warm-up; cosine decay over the run).
    #[arg(long, default_value_t = 2e-3)]
    pub lr: f64,
    /// AdamW: decoupled decay, each step multiplies the weights by 1 - lr * weight_decay (0.01-0.1
    /// is typical). SGD: the L2 coefficient (about 1e-4).
    #[arg(long, default_value_t = 0.1)]
    pub weight_decay: f64,
    /// SGD momentum.
    #[arg(long, default_value_t = 0.9)]
    pub momentum: f64,
    /// Steps of the linear warm-up to `lr` at the start of the learning-rate schedule (at most a
    /// tenth of the schedule's steps, plus one).
    #[arg(long, default_value_t = 50)]
    pub warmup_steps: u64,
    /// The learning rate's floor, as a fraction of `lr`: where the cosine decay ends.
    #[arg(long, default_value_t = 0.1)]
    pub min_lr_ratio: f64,
    /// Training steps per epoch; 0 = enough to see each new position about `sample_reuse` times.
    #[arg(long, default_value_t = 0)]
    pub train_steps: u64,
    /// Times each new position is sampled on average (sets the steps when train_steps is 0).
    #[arg(long, default_value_t = 4.0)]
    pub sample_reuse: f64,
    /// Newest positions kept for sampling.
    #[arg(long, default_value_t = 200_000)]
    pub replay_window: usize,
    /// Torch intra-op threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Plies over which the move temperature falls linearly from 1 to temperature_final.
    #[arg(long, default_value_t = 8)]
    pub temperature_moves: usize,
    /// Move temperature after temperature_moves plies.
    #[arg(long, default_value_t = 0.1)]
    pub temperature_final: f64,
    /// Dirichlet noise at self-play roots: alpha (about 10 / legal moves).
    #[arg(long, default_value_t = 0.15)]
    pub dirichlet_alpha: f64,
    /// Dirichlet noise at self-play roots: its weight in the prior.
    #[arg(long, default_value_t = 0.25)]
    pub dirichlet_epsilon: f64,
    /// Resign when the root value stays below this for two moves of the same side.
    #[arg(long, default_value_t = -0.95, allow_negative_numbers = true)]
    pub resign_threshold: f64,
    /// Share of self-play games that never resign (they measure false resignations).
    #[arg(long, default_value_t = 0.2)]
    pub no_resign_fraction: f64,
    /// Playout-cap randomization (KataGo): the share of self-play moves searched with
    /// mcts_simulations and recorded as training targets; the others get cheap_simulations
    /// without root noise and are played but not recorded. 1 = off (every move full).
    #[arg(long, default_value_t = 1.0)]
    pub full_search_share: f64,
    /// Fresh playouts of the cheap searches of playout-cap randomization.
    #[arg(long, default_value_t = 16)]
    pub cheap_simulations: u32,
    /// Gumbel root search in self-play (Gumbel AlphaZero): the root draws this many moves by
    /// Gumbel-top-k over the priors, divides mcts_simulations among them by sequential halving,
    /// plays the survivor and stores the completed-Q policy as the target, in place of root
    /// Dirichlet noise, visit counts and the temperature. 0 = off (PUCT at the root).
    #[arg(long, default_value_t = 0)]
    pub gumbel_root_moves: usize,
    /// VCF nodes per leaf at difficulty medium (self-play and evaluation searches).
    #[arg(long, default_value_t = 2000)]
    pub vcf_budget_nodes: u32,
    /// Auxiliary target (KataGo's opponent policy): the weight of the loss of a second policy
    /// head that predicts the opponent's reply (the next ply's policy target). It shapes the
    /// trunk only: exported models do not carry the head. 0 = off; KataGo uses 0.15.
    #[arg(long, default_value_t = 0.0)]
    pub aux_policy_weight: f64,
    /// A network file (any the engine loads, e.g. models/default.onnx) whose value of each
    /// training position is mixed into the value target: (1 - w) * the game's outcome + w *
    /// the teacher's value, w = `value_teacher_weight` (distillation: a small network learns
    /// more from a strong one's estimate of every position than from a few thousand games'
    /// outcomes). Unset: outcomes only.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_teacher: Option<PathBuf>,
    /// The teacher's share of the value target (0..=1; with `value_teacher`).
    #[arg(long, default_value_t = 0.5)]
    pub value_teacher_weight: f64,
}

impl Settings {
    /// Torch intra-op threads: `threads`, or every core when it is 0.
    pub fn torch_threads(&self) -> usize {
        match self.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }

    /// The epoch the run stops after: `stop_after_epoch`, or `epochs` when that is 0.
    pub fn last_epoch(&self) -> u64 {
        match self.stop_after_epoch {
            0 => self.epochs,
            n => n.min(self.epochs),
        }
    }

    /// How many epoch checkpoints the run folder keeps (`None`: all of them).
    pub fn kept_checkpoints(&self) -> Option<usize> {
        (self.keep_checkpoints > 0).then_some(self.keep_checkpoints)
    }
}

/// Only the settings' flags: `Settings::default()` is what clap gives with no flag at all.
#[derive(Parser)]
struct DefaultsOnly {
    #[command(flatten)]
    settings: Settings,
}

impl Default for Settings {
    fn default() -> Self {
        DefaultsOnly::try_parse_from(["trainer"])
            .expect("every setting has a default")
            .settings
    }
}

/// Where a setting's value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Default,
    Profile { file: String, profile: String },
    Flag,
}

impl Source {
    fn describe(&self, key: &str) -> String {
        match self {
            Source::Default => "the default".into(),
            Source::Profile { file, profile } => format!("profile `{profile}` of {file}"),
            Source::Flag => format!("--{}", key.replace('_', "-")),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("reading {file}: {source}")]
    Read {
        file: String,
        source: std::io::Error,
    },
    #[error("{file}: {why}")]
    Parse { file: String, why: String },
    #[error("{file}: no profile `{profile}` (have: {have})")]
    NoProfile {
        file: String,
        profile: String,
        have: String,
    },
    #[error("setting `{key}` (from {source_text}): {why}")]
    Invalid {
        key: String,
        source_text: String,
        why: String,
    },
}

/// Settings with the source of each value, and the profile values that flags replaced.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub settings: Settings,
    pub sources: BTreeMap<String, Source>,
    /// "key: flag value replaces the profile's value" lines, for the run's log.
    pub overridden: Vec<String>,
}

impl Resolved {
    pub fn source(&self, key: &str) -> Source {
        self.sources.get(key).cloned().unwrap_or(Source::Default)
    }

    fn invalid(&self, key: &str, why: String) -> ConfigError {
        ConfigError::Invalid {
            key: key.into(),
            source_text: self.source(key).describe(key),
            why,
        }
    }

    /// Checks every value, naming the key and its source on the first that is wrong.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let s = &self.settings;
        let positive = [
            ("batch_size", s.batch_size as f64),
            ("mcts_simulations", s.mcts_simulations as f64),
            ("parallel_games", s.parallel_games as f64),
            ("parallel_workers", s.parallel_workers as f64),
            ("batch_size_mcts", s.batch_size_mcts as f64),
            ("onnx_batch", s.onnx_batch as f64),
            ("selfplay_games", s.selfplay_games as f64),
            ("eval_simulations", s.eval_simulations as f64),
            ("lr", s.lr),
            ("sample_reuse", s.sample_reuse),
        ];
        for (key, v) in positive {
            if !(v > 0.0 && v.is_finite()) {
                return Err(self.invalid(key, format!("{v} must be positive")));
            }
        }
        if !(engine::game::MIN_SIZE..=engine::game::MAX_SIZE).contains(&s.board_size) {
            let why = format!(
                "{} is outside {}..={}",
                s.board_size,
                engine::game::MIN_SIZE,
                engine::game::MAX_SIZE
            );
            return Err(self.invalid("board_size", why));
        }
        if s.stop_after_epoch > s.epochs {
            let why = format!(
                "{} is beyond epochs = {} (the run ends there anyway)",
                s.stop_after_epoch, s.epochs
            );
            return Err(self.invalid("stop_after_epoch", why));
        }
        let unit = [
            ("eval_promote_score", s.eval_promote_score),
            ("no_resign_fraction", s.no_resign_fraction),
            ("dirichlet_epsilon", s.dirichlet_epsilon),
            ("full_search_share", s.full_search_share),
            ("min_lr_ratio", s.min_lr_ratio),
            ("value_teacher_weight", s.value_teacher_weight),
        ];
        for (key, v) in unit {
            if !(0.0..=1.0).contains(&v) {
                return Err(self.invalid(key, format!("{v} is outside 0..=1")));
            }
        }
        let non_negative = [
            ("weight_decay", s.weight_decay),
            ("aux_policy_weight", s.aux_policy_weight),
            ("momentum", s.momentum),
            ("temperature_final", s.temperature_final),
            ("dirichlet_alpha", s.dirichlet_alpha),
        ];
        for (key, v) in non_negative {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(self.invalid(key, format!("{v} must be zero or more")));
            }
        }
        Ok(())
    }
}

/// The keys of `Settings`, in declaration order (clap's ids are the field names).
pub fn keys() -> Vec<String> {
    DefaultsOnly::command()
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .filter(|id| id != "help")
        .collect()
}

/// The table `profile` of the TOML text `text` (named `file` in errors), unparsed, with the keys
/// it does not set taken from the profile it names in `inherits = "PARENT"` (as Cargo's profiles
/// do), and from that one's parent in turn; and the profile each key came from.
fn profile_table(
    text: &str,
    file: &str,
    profile: &str,
) -> Result<(toml::Table, BTreeMap<String, String>), ConfigError> {
    let parse_error = |why: String| ConfigError::Parse {
        file: file.into(),
        why,
    };
    let all: toml::Table = toml::from_str(text).map_err(|e| parse_error(e.to_string()))?;
    let (mut merged, mut origin) = (toml::Table::new(), BTreeMap::new());
    let mut chain: Vec<String> = Vec::new();
    let mut name = profile.to_string();
    loop {
        let mut table = match all.get(&name) {
            Some(toml::Value::Table(t)) => t.clone(),
            Some(_) => return Err(parse_error(format!("`{name}` is not a table of settings"))),
            None if chain.is_empty() => {
                return Err(ConfigError::NoProfile {
                    file: file.into(),
                    profile: name,
                    have: all.keys().cloned().collect::<Vec<_>>().join(", "),
                });
            }
            None => {
                let child = chain.last().expect("not the first profile");
                return Err(parse_error(format!(
                    "profile `{child}` inherits `{name}`, which is not a profile here"
                )));
            }
        };
        chain.push(name.clone());
        let parent = match table.remove("inherits") {
            None => None,
            Some(toml::Value::String(parent)) => Some(parent),
            Some(other) => {
                return Err(parse_error(format!(
                    "profile `{name}`: `inherits` is {other}, not the name of a profile"
                )));
            }
        };
        for (key, value) in table {
            if !merged.contains_key(&key) {
                origin.insert(key.clone(), name.clone());
                merged.insert(key, value);
            }
        }
        match parent {
            Some(parent) if chain.contains(&parent) => {
                return Err(parse_error(format!(
                    "profiles inherit in a circle: {} -> {parent}",
                    chain.join(" -> ")
                )));
            }
            Some(parent) => name = parent,
            None => return Ok((merged, origin)),
        }
    }
}

fn read_file(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        file: path.display().to_string(),
        source,
    })
}

/// Settings from a profile's table on top of the defaults; unknown keys and wrong types are
/// errors that name the key, the profile and the file.
fn settings_from_table(
    table: toml::Table,
    file: &str,
    profile: &str,
) -> Result<Settings, ConfigError> {
    toml::Value::Table(table)
        .try_into::<Settings>()
        .map_err(|e| ConfigError::Parse {
            file: file.into(),
            why: format!(
                "profile `{profile}`: {}",
                e.to_string().trim_end().replace('\n', " ")
            ),
        })
}

/// The profile `profile` of the TOML text `text` (named `file` in errors), over the defaults.
pub fn profile_from_str(text: &str, file: &str, profile: &str) -> Result<Settings, ConfigError> {
    settings_from_table(profile_table(text, file, profile)?.0, file, profile)
}

pub fn load_profile(path: &Path, profile: &str) -> Result<Settings, ConfigError> {
    let file = path.display().to_string();
    profile_from_str(&read_file(path)?, &file, profile)
}

/// Defaults, then the profile (`config` file, `profile` name or "default"), then the flags of
/// `matches` that were given on the command line; validated.
pub fn resolve(
    matches: &ArgMatches,
    config: Option<&Path>,
    profile: Option<&str>,
) -> Result<Resolved, ConfigError> {
    let flags = Settings::from_arg_matches(matches).map_err(|e| ConfigError::Parse {
        file: "command line".into(),
        why: e.to_string(),
    })?;
    let (mut table, mut sources) = (toml::Table::new(), BTreeMap::new());
    let (file, profile) = match config {
        Some(path) => {
            let file = path.display().to_string();
            let name = profile.unwrap_or("default").to_string();
            let origin;
            (table, origin) = profile_table(&read_file(path)?, &file, &name)?;
            for (key, profile) in origin {
                let source = Source::Profile {
                    file: file.clone(),
                    profile,
                };
                sources.insert(key, source);
            }
            (file, name)
        }
        None => ("command line".to_string(), String::new()),
    };
    let flag_values = toml::Table::try_from(&flags).map_err(|e| ConfigError::Parse {
        file: "command line".into(),
        why: e.to_string(),
    })?;
    let mut overridden = Vec::new();
    for key in keys() {
        if matches.value_source(&key) != Some(ValueSource::CommandLine) {
            continue;
        }
        let Some(v) = flag_values.get(&key) else {
            continue;
        };
        if let Some(old) = table.get(&key).filter(|old| *old != v) {
            overridden.push(format!(
                "{key}: {v} (--{}) replaces {old} ({})",
                key.replace('_', "-"),
                sources[&key].describe(&key)
            ));
        }
        table.insert(key.clone(), v.clone());
        sources.insert(key, Source::Flag);
    }
    let resolved = Resolved {
        settings: settings_from_table(table, &file, &profile)?,
        sources,
        overridden,
    };
    resolved.validate()?;
    Ok(resolved)
}

/// The settings a run folder was started with (`settings.toml`), and what may not change when it
/// resumes: the network, the board and the rule. A folder from before this file existed has
/// none: its settings are recorded now.
pub fn check_run_folder(r: &Resolved) -> Result<(), ConfigError> {
    let s = &r.settings;
    let folder = RunFolder::new(&s.checkpoint_dir);
    if s.resume != Resume::None
        && let Some(before) = folder.settings_table()?
    {
        let now = toml::Table::try_from(s).map_err(|e| ConfigError::Parse {
            file: folder.settings_path().display().to_string(),
            why: e.to_string(),
        })?;
        for key in ["model_preset", "board_size", "rule"] {
            if let (Some(a), Some(b)) = (before.get(key), now.get(key))
                && a != b
            {
                return Err(r.invalid(
                    key,
                    format!(
                        "{b} disagrees with {a}, which the run in {} was started with \
                         (use another --checkpoint-dir, or --resume none to start over there)",
                        s.checkpoint_dir.display()
                    ),
                ));
            }
        }
        return Ok(());
    }
    folder.write_settings(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        settings: Settings,
    }

    fn resolve_with(profile: &str, args: &[&str]) -> Result<Resolved, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, profile).unwrap();
        let m = Cli::command()
            .try_get_matches_from(std::iter::once("trainer").chain(args.iter().copied()))
            .unwrap();
        resolve(&m, Some(&path), Some("a"))
    }

    /// The Makefile and README name these profiles: each must resolve and validate as shipped.
    #[test]
    fn every_shipped_profile_resolves() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("presets.toml");
        let table: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        // The Makefile's train-default targets name these.
        for name in [
            "default-15x15",
            "default-15x15-finetune",
            "default-15x15-standard",
            "default-15x15-renju",
        ] {
            assert!(table.contains_key(name), "{name}");
        }
        for name in table.keys() {
            let m = Cli::command().try_get_matches_from(["trainer"]).unwrap();
            let r = resolve(&m, Some(&path), Some(name));
            assert!(r.is_ok(), "profile {name}: {}", r.as_ref().err().unwrap());
            // Its openings file, from the repository root where the Makefile runs the trainer.
            let s = r.unwrap().settings;
            if let Some(file) = &s.eval_openings {
                let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
                let format = engine::openings::OpeningFormat::Auto;
                crate::matches::arena::openings_from_file(
                    &root.join(file),
                    format,
                    s.board_size,
                    s.rule,
                )
                .unwrap_or_else(|e| panic!("profile {name}: {e}"));
            }
        }
    }

    /// The "To continue it:" paragraph of a `models/runs/*/README.md`: the command that trains a
    /// saved run on from one of its checkpoints.
    struct ContinueCommand {
        /// The README, as errors name it.
        name: String,
        readme: PathBuf,
        /// The paragraph on one line.
        paragraph: String,
    }

    impl ContinueCommand {
        /// The command of the README `readme`, or None where it has none (or no README).
        fn of(readme: PathBuf) -> Option<ContinueCommand> {
            let text = std::fs::read_to_string(&readme).ok()?;
            let at = text.find("To continue it:")?;
            let paragraph = text[at..].split("\n\n").next().unwrap().replace('\n', " ");
            let name = readme.display().to_string();
            Some(ContinueCommand {
                name,
                readme,
                paragraph,
            })
        }

        /// The first word after `key`, without Markdown's backticks or quotes.
        fn word_after(&self, key: &str) -> Option<String> {
            let rest = self.paragraph.split(key).nth(1)?;
            rest.split(|c: char| c.is_whitespace() || "`\"".contains(c))
                .find(|w| !w.is_empty())
                .map(str::to_string)
        }

        /// The epoch of the `ckpt-NNNNNN.bin` it continues from, which must be committed in the
        /// README's folder (the command copies it from there).
        fn checkpoint_epoch(&self) -> u64 {
            let name = &self.name;
            let checkpoint: u64 = self
                .word_after("ckpt-")
                .and_then(|w| w.strip_suffix(".bin").map(str::to_string))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{name}: no ckpt-NNNNNN.bin to continue from"));
            let file = self
                .readme
                .with_file_name(format!("ckpt-{checkpoint:06}.bin"));
            assert!(
                file.is_file(),
                "{name}: continues from {}, not in the folder",
                file.display()
            );
            checkpoint
        }

        /// Its profile: `--profile P`, or `make train-default[-X]`, which runs profile
        /// `default-15x15[-X]` (the Makefile's targets).
        fn profile(&self) -> String {
            self.word_after("--profile ")
                .or_else(|| {
                    self.word_after("make ")
                        .map(|t| t.replace("train-default", "default-15x15"))
                })
                .unwrap_or_else(|| panic!("{}: no make target or --profile", self.name))
        }

        /// The epoch the run stops after: its profile's, or the command's own `--epochs` and
        /// `--stop-after-epoch`.
        fn stop_epoch(&self, presets: &Path, profile: &str) -> u64 {
            let mut args = vec!["trainer".to_string()];
            for flag in ["--epochs", "--stop-after-epoch"] {
                if let Some(n) = self.word_after(&format!("{flag} ")) {
                    args.extend([flag.to_string(), n]);
                }
            }
            let m = Cli::command().try_get_matches_from(&args).unwrap();
            let r = resolve(&m, Some(presets), Some(profile))
                .unwrap_or_else(|e| panic!("{}: profile {profile}: {e}", self.name));
            r.settings.last_epoch()
        }
    }

    /// Every "To continue it:" command of `models/runs/*/README.md` trains at least one epoch: the
    /// checkpoint it copies is before the epoch its profile (with the command's own
    /// `--stop-after-epoch`, if any) stops after. Such a command that trains nothing then ships
    /// nothing, or an old model, and reads as if it worked.
    #[test]
    fn every_runs_saved_continue_command_trains() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let presets = root.join("trainer/presets.toml");
        let mut checked = Vec::new();
        for entry in std::fs::read_dir(root.join("models/runs")).unwrap() {
            let Some(command) = ContinueCommand::of(entry.unwrap().path().join("README.md")) else {
                continue;
            };
            let checkpoint = command.checkpoint_epoch();
            let profile = command.profile();
            let stop = command.stop_epoch(&presets, &profile);
            assert!(
                stop > checkpoint,
                "{}: continuing from epoch {checkpoint} with profile {profile} stops after \
                 epoch {stop}: it trains nothing (give it a later --stop-after-epoch)",
                command.name
            );
            checked.push(profile);
        }
        checked.sort();
        assert_eq!(
            checked,
            [
                "default-15x15-caro",
                "default-15x15-finetune",
                "default-15x15-finetune",
                "default-15x15-low-lr",
                "default-15x15-renju",
                "default-15x15-standard",
                "default-15x15-tactics",
                "default-20x20-low-lr",
                "default-20x20-tactics"
            ],
            "the models/runs folders with a \"To continue it:\" command"
        );
    }

    #[test]
    fn profile_overrides_defaults_and_unknown_keys_are_named() {
        let s =
            profile_from_str("[a]\nmodel_preset = \"tiny\"\nepochs = 3\n", "x.toml", "a").unwrap();
        assert_eq!(s.model_preset, Preset::Tiny);
        assert_eq!(s.epochs, 3);
        assert_eq!(s.batch_size, Settings::default().batch_size);
        let e = profile_from_str("[a]\nepochz = 3\n", "x.toml", "a")
            .unwrap_err()
            .to_string();
        assert!(e.contains("epochz") && e.contains("x.toml"), "{e}");
        let e = profile_from_str("[a]\n", "x.toml", "b")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`b`") && e.contains("a"), "{e}");
    }

    /// A profile takes the keys it does not set from the profile it `inherits`, and that one's
    /// parent in turn; an error names the profile a bad key came from.
    #[test]
    fn a_profile_inherits_the_keys_it_does_not_set() {
        let text = "[base]\nepochs = 3\nlr = 0.5\nboard_size = 9\n\
                    [mid]\ninherits = \"base\"\nlr = 0.25\n\
                    [a]\ninherits = \"mid\"\nboard_size = 11\n";
        let s = profile_from_str(text, "x.toml", "a").unwrap();
        assert_eq!((s.epochs, s.lr, s.board_size), (3, 0.25, 11));
        let r = resolve_with(text, &["--epochs", "4"]).unwrap();
        assert_eq!(r.settings.epochs, 4);
        let profile_of = |key: &str| match r.source(key) {
            Source::Profile { profile, .. } => profile,
            other => panic!("{key} from {other:?}"),
        };
        assert_eq!(
            (profile_of("lr"), profile_of("board_size")),
            ("mid".into(), "a".into())
        );
        assert_eq!(r.source("epochs"), Source::Flag);
        assert_eq!(r.source("batch_size"), Source::Default);
        assert!(
            r.overridden.iter().any(|l| l.contains("profile `base`")),
            "{:?}",
            r.overridden
        );
        let e = resolve_with("[base]\nlr = -1.0\n[a]\ninherits = \"base\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("`lr`") && e.contains("profile `base`"), "{e}");
    }

    #[test]
    fn a_missing_parent_a_circle_or_a_parent_that_is_no_name_is_an_error() {
        for (text, words) in [
            (
                "[a]\ninherits = \"b\"\n",
                &["`a`", "`b`", "not a profile"][..],
            ),
            (
                "[a]\ninherits = \"b\"\n[b]\ninherits = \"a\"\n",
                &["circle", "a -> b -> a"][..],
            ),
            ("[a]\ninherits = \"a\"\n", &["circle", "a -> a"][..]),
            ("[a]\ninherits = 3\n", &["`inherits`", "not the name"][..]),
            (
                "b = 1\n[a]\ninherits = \"b\"\n",
                &["`b` is not a table"][..],
            ),
        ] {
            let e = profile_from_str(text, "x.toml", "a")
                .unwrap_err()
                .to_string();
            assert!(e.contains("x.toml"), "{e}");
            for w in words {
                assert!(e.contains(w), "{text}: {e}");
            }
        }
    }

    #[test]
    fn a_wrong_type_or_vocabulary_word_names_the_key() {
        let e = profile_from_str("[a]\nepochs = \"three\"\n", "x.toml", "a")
            .unwrap_err()
            .to_string();
        assert!(e.contains("epochs") && e.contains("x.toml"), "{e}");
        for (text, word) in [
            ("rule = \"gomoku\"", "gomoku"),
            ("model_preset = \"huge\"", "huge"),
            ("device = \"tpu\"", "tpu"),
            ("difficulty = \"hard\"", "hard"),
        ] {
            let e = profile_from_str(&format!("[a]\n{text}\n"), "x.toml", "a")
                .unwrap_err()
                .to_string();
            assert!(e.contains(word) && e.contains("x.toml"), "{e}");
        }
    }

    #[test]
    fn defaults_are_the_flags_defaults_and_round_trip_through_toml() {
        let d = Settings::default();
        assert_eq!(d.model_preset, Preset::Small);
        assert_eq!(d.dirichlet_alpha, 0.15);
        assert_eq!(d.resume, Resume::Auto);
        let text = toml::to_string(&d).unwrap();
        let back: Settings = toml::from_str(&text).unwrap();
        assert_eq!(back, d);
        // Every key of the struct is a flag of the same name (optional ones given, as TOML
        // leaves a missing value out).
        let all_given = Settings {
            eval_openings: Some(PathBuf::from("openings.txt")),
            value_teacher: Some(PathBuf::from("teacher.onnx")),
            init_from: Some(PathBuf::from("ckpt-000000.bin")),
            ..d
        };
        let table = toml::Table::try_from(&all_given).unwrap();
        let mut from_serde: Vec<&String> = table.keys().collect();
        let flags = keys();
        let mut from_clap: Vec<&String> = flags.iter().collect();
        from_serde.sort();
        from_clap.sort();
        assert_eq!(from_serde, from_clap);
    }

    #[test]
    fn flags_win_over_the_profile_and_say_so() {
        let r = resolve_with(
            "[a]\nlr = 0.01\nepochs = 3\n",
            &["--lr", "0.05", "--rule", "renju"],
        )
        .unwrap();
        assert_eq!(r.settings.lr, 0.05);
        assert_eq!(r.settings.epochs, 3);
        assert_eq!(r.settings.rule, Rule::Renju);
        assert_eq!(r.source("lr"), Source::Flag);
        assert!(matches!(r.source("epochs"), Source::Profile { .. }));
        assert_eq!(r.source("seed"), Source::Default);
        assert_eq!(r.overridden.len(), 1, "{:?}", r.overridden);
        assert!(r.overridden[0].starts_with("lr:"), "{:?}", r.overridden);
    }

    #[test]
    fn invalid_values_name_the_key_and_where_it_came_from() {
        let e = resolve_with("[a]\nboard_size = 3\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("board_size") && e.contains("profile `a`"), "{e}");
        let e = resolve_with("[a]\n", &["--lr", "0"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("`lr`") && e.contains("--lr"), "{e}");
        let e = resolve_with("[a]\nepochs = 300\n", &["--stop-after-epoch", "301"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("stop_after_epoch") && e.contains("beyond epochs = 300"),
            "{e}"
        );
        let r = resolve_with("[a]\nepochs = 300\nstop_after_epoch = 140\n", &[]).unwrap();
        assert_eq!((r.settings.epochs, r.settings.last_epoch()), (300, 140));
    }

    #[test]
    fn a_run_folder_refuses_another_network_board_or_rule() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        let arg = run.display().to_string();
        let first = resolve_with("[a]\nboard_size = 9\n", &["--checkpoint-dir", &arg]).unwrap();
        check_run_folder(&first).unwrap();
        check_run_folder(&first).unwrap();
        let other = resolve_with(
            "[a]\nboard_size = 9\n",
            &["--checkpoint-dir", &arg, "--rule", "renju"],
        )
        .unwrap();
        let e = check_run_folder(&other).unwrap_err().to_string();
        assert!(
            e.contains("rule") && e.contains("--rule") && e.contains("freestyle"),
            "{e}"
        );
        // Starting over is allowed.
        let fresh = resolve_with(
            "[a]\nboard_size = 9\n",
            &[
                "--checkpoint-dir",
                &arg,
                "--rule",
                "renju",
                "--resume",
                "none",
            ],
        )
        .unwrap();
        check_run_folder(&fresh).unwrap();
    }
}
