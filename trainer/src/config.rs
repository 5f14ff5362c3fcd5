//! Training settings: defaults, a TOML file of named profiles (`trainer/presets.toml`: one table
//! per profile, unknown keys are an error that names them), then command-line flags on top.
//!
//! Depends on serde/toml and the small enums of the other modules.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::optim::OptimizerKind;
use crate::selfplay::Difficulty;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    pub model_preset: String,
    pub difficulty: Difficulty,
    pub mcts_simulations: u32,
    pub parallel_workers: usize,
    pub parallel_games: usize,
    pub batch_size: usize,
    pub batch_size_mcts: usize,
    pub selfplay_games: usize,
    pub epochs: u64,
    pub eval_frequency: u64,
    /// Game pairs per evaluation match (each opening with both colours).
    pub eval_pairs: usize,
    pub eval_simulations: u32,
    /// Also measure the network against the uniform evaluator at each evaluation.
    pub eval_vs_uniform: bool,
    pub device: String,
    /// "auto" (newest valid checkpoint, else fresh), "none", or a checkpoint file.
    pub resume: String,
    pub board_size: usize,
    pub rule: String,
    pub checkpoint_dir: PathBuf,
    pub seed: u64,
    pub optimizer: OptimizerKind,
    pub lr: f64,
    /// AdamW: decoupled decay, each step multiplies the weights by 1 - lr * weight_decay (0.01-0.1
    /// is typical; 1e-4, the old default, was a decay of 2e-7 per step: none). SGD: the L2
    /// coefficient (about 1e-4).
    pub weight_decay: f64,
    pub momentum: f64,
    /// Training steps per epoch; 0 = enough to see each new position about `sample_reuse` times.
    pub train_steps: u64,
    pub sample_reuse: f64,
    /// Newest positions kept for sampling.
    pub replay_window: usize,
    /// Torch intra-op threads (0 = all cores).
    pub threads: usize,
    pub temperature_moves: usize,
    pub dirichlet_alpha: f32,
    pub resign_threshold: f32,
    pub no_resign_fraction: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            model_preset: "small".into(),
            difficulty: Difficulty::Easy,
            mcts_simulations: 100,
            parallel_workers: 1,
            parallel_games: 32,
            batch_size: 256,
            batch_size_mcts: 8,
            selfplay_games: 64,
            epochs: 10,
            eval_frequency: 1,
            eval_pairs: 10,
            eval_simulations: 64,
            eval_vs_uniform: true,
            device: "auto".into(),
            resume: "auto".into(),
            board_size: 15,
            rule: "freestyle".into(),
            checkpoint_dir: PathBuf::from("runs/default"),
            seed: 1,
            optimizer: OptimizerKind::Adamw,
            lr: 2e-3,
            weight_decay: 0.1,
            momentum: 0.9,
            train_steps: 0,
            sample_reuse: 4.0,
            replay_window: 200_000,
            threads: 0,
            temperature_moves: 8,
            dirichlet_alpha: 0.15,
            resign_threshold: -0.95,
            no_resign_fraction: 0.2,
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
    #[error("invalid setting: {0}")]
    Invalid(String),
}

/// The profile `profile` of the TOML text `text` (named `file` in errors).
pub fn profile_from_str(text: &str, file: &str, profile: &str) -> Result<Settings, ConfigError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| ConfigError::Parse {
        file: file.into(),
        why: e.to_string(),
    })?;
    let Some(entry) = table.get(profile) else {
        return Err(ConfigError::NoProfile {
            file: file.into(),
            profile: profile.into(),
            have: table.keys().cloned().collect::<Vec<_>>().join(", "),
        });
    };
    entry
        .clone()
        .try_into::<Settings>()
        .map_err(|e| ConfigError::Parse {
            file: file.into(),
            why: format!("profile `{profile}`: {e}"),
        })
}

pub fn load_profile(path: &Path, profile: &str) -> Result<Settings, ConfigError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        file: file.clone(),
        source,
    })?;
    profile_from_str(&text, &file, profile)
}

impl Settings {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |s: String| Err(ConfigError::Invalid(s));
        if self.model_preset.parse::<engine::net::Preset>().is_err() {
            return bad(format!(
                "model_preset `{}` (expected tiny, cpu32, cpu48, small, medium or large)",
                self.model_preset
            ));
        }
        if !(engine::game::MIN_SIZE..=engine::game::MAX_SIZE).contains(&self.board_size) {
            return bad(format!("board_size {} (expected 5..=22)", self.board_size));
        }
        if crate::parse_rule(&self.rule).is_none() {
            return bad(format!(
                "rule `{}` (expected freestyle, standard, renju or caro)",
                self.rule
            ));
        }
        if self.batch_size == 0 || self.mcts_simulations == 0 || self.parallel_games == 0 {
            return bad("batch_size, mcts_simulations and parallel_games must be positive".into());
        }
        if !(self.lr > 0.0 && self.lr.is_finite()) {
            return bad(format!("lr {}", self.lr));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_overrides_defaults_and_unknown_keys_are_named() {
        let s =
            profile_from_str("[a]\nmodel_preset = \"tiny\"\nepochs = 3\n", "x.toml", "a").unwrap();
        assert_eq!(s.model_preset, "tiny");
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
}
