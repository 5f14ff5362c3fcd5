//! A run folder (`--checkpoint-dir`): where one training run keeps everything — the settings it
//! was started with (`settings.toml`), its checkpoints (`ckpt-NNNNNN.bin`), its replay store
//! (`replay/`), its exported networks (`models/model-NNNNNN.onnx` and `models/latest.onnx`) and
//! its metrics (`metrics.jsonl`). `RunFolder` names those places and reads and writes the
//! settings file, for the training run (`config::check_run_folder`), the learning curve and the
//! equal-time matches alike.

use std::path::{Path, PathBuf};

use super::{ConfigError, Settings};

/// One run's folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFolder {
    dir: PathBuf,
}

impl RunFolder {
    /// The settings the run was started with.
    pub const SETTINGS: &str = "settings.toml";
    /// The metrics records (`support::metrics`).
    pub const METRICS: &str = "metrics.jsonl";

    pub fn new(dir: impl Into<PathBuf>) -> RunFolder {
        RunFolder { dir: dir.into() }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The folder's last name, as curves label a run.
    pub fn name(&self) -> String {
        self.dir
            .file_name()
            .map_or("run".into(), |n| n.to_string_lossy().into_owned())
    }

    pub fn settings_path(&self) -> PathBuf {
        self.dir.join(Self::SETTINGS)
    }

    pub fn metrics_path(&self) -> PathBuf {
        self.dir.join(Self::METRICS)
    }

    /// The exported networks (`model-NNNNNN.onnx`, `latest.onnx`).
    pub fn models(&self) -> PathBuf {
        self.dir.join("models")
    }

    /// The exports of the run by epoch, oldest first.
    pub fn exports(&self) -> std::io::Result<Vec<(u64, PathBuf)>> {
        crate::support::store::numbered_files(&self.models(), "model-", ".onnx")
    }

    /// `settings.toml` as a table of keys, or None where the folder has none (a folder from
    /// before the file existed, or a new one).
    pub fn settings_table(&self) -> Result<Option<toml::Table>, ConfigError> {
        let Some(text) = self.settings_text()? else {
            return Ok(None);
        };
        toml::from_str(&text)
            .map(Some)
            .map_err(|e| self.parse_error(e))
    }

    /// The settings the run was started with, or None where the folder has no `settings.toml`.
    /// Keys added since the file was written take their defaults.
    pub fn settings(&self) -> Result<Option<Settings>, ConfigError> {
        let Some(text) = self.settings_text()? else {
            return Ok(None);
        };
        toml::from_str(&text)
            .map(Some)
            .map_err(|e| self.parse_error(e))
    }

    /// Records `s` as the settings the run was started with (written atomically; the folder is
    /// made when it does not exist).
    pub fn write_settings(&self, s: &Settings) -> Result<(), ConfigError> {
        std::fs::create_dir_all(&self.dir).map_err(|source| ConfigError::Read {
            file: self.dir.display().to_string(),
            source,
        })?;
        let text = toml::to_string(s).map_err(|e| self.parse_error(e))?;
        crate::support::store::write_atomic(&self.settings_path(), text.as_bytes())
            .map_err(|e| self.parse_error(e))
    }

    fn settings_text(&self) -> Result<Option<String>, ConfigError> {
        let path = self.settings_path();
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ConfigError::Read {
                file: path.display().to_string(),
                source,
            }),
        }
    }

    fn parse_error(&self, why: impl std::fmt::Display) -> ConfigError {
        ConfigError::Parse {
            file: self.settings_path().display().to_string(),
            why: why.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_written_read_back_and_a_missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(dir.path().join("run"));
        assert!(folder.settings().unwrap().is_none());
        let s = Settings {
            board_size: 9,
            ..Settings::default()
        };
        folder.write_settings(&s).unwrap();
        assert_eq!(folder.settings().unwrap().unwrap().board_size, 9);
        let table = folder.settings_table().unwrap().unwrap();
        assert_eq!(table.get("board_size"), Some(&toml::Value::Integer(9)));
        std::fs::write(folder.settings_path(), "board_size = \"nine\"").unwrap();
        let e = folder.settings().unwrap_err().to_string();
        assert!(e.contains("settings.toml"), "{e}");
    }
}
