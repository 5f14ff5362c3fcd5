//! Checkpoints: weights (every variable of the VarStore, BN statistics included), optimizer state,
//! step, epoch, sampling RNG and replay cursor in one checksummed file per epoch
//! (`<dir>/ckpt-NNNNNN.bin`, written atomically through `store`). `latest_valid` walks back from
//! the newest file and skips (with a warning) any that fails to read.
//!
//! A checkpoint records the rule and board size it was trained on (format version 2) and the
//! steps its warm start took (version 3: the learning-rate schedule runs over them and the
//! self-play epochs, so a resumed run rebuilds the same schedule); version 1 files read with the
//! rule and size unknown, version 1 and 2 files with no warm start. `transfer_rule` starts a run
//! on one rule from a checkpoint trained on another.
//!
//! Depends on tch, `store`, `optim`, `engine::rng`, and the engine's input planes (`features`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tch::{Kind, Tensor, nn};

use engine::eval::features;
use engine::game::Rule;

use crate::support::store::{self, StoreError};
use engine::rng::Rng;

const MAGIC: [u8; 4] = *b"FZCK";
/// 2 added `rule` and `board_size`; 3 writes `warm_start_steps` after the version 2 body.
/// Version 1 files read through [`CheckpointV1`], version 2 files as the body alone.
const VERSION: u32 = 3;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedTensor {
    pub name: String,
    pub shape: Vec<i64>,
    pub data: Vec<f32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Epochs completed.
    pub epoch: u64,
    pub step: u64,
    pub preset: String,
    pub blocks: usize,
    pub channels: usize,
    pub rng: Rng,
    /// Replay cursor: the next chunk number and the games played so far.
    pub next_chunk: u64,
    pub games_played: u64,
    /// Epoch of the current best network (the one new networks are measured against).
    pub best_epoch: u64,
    pub best_elo: f64,
    pub weights: Vec<NamedTensor>,
    pub optimizer: Vec<(String, Vec<f32>)>,
    /// Weights of the best network (empty while it is the initial one).
    pub best_weights: Vec<NamedTensor>,
    /// The rule and board size self-play played (None: a version 1 file, which did not say).
    pub rule: Option<Rule>,
    pub board_size: Option<usize>,
    /// Training steps of the warm start (`trainer bootstrap`'s games, before epoch 1), which
    /// the learning-rate schedule spans with the self-play epochs' steps; 0 for none (or a file
    /// older than version 3). Written after the body (`save`), so version 2 files still read.
    #[serde(skip)]
    pub warm_start_steps: u64,
}

/// The version 1 layout (no rule, no board size): read, never written.
#[derive(Deserialize)]
struct CheckpointV1 {
    epoch: u64,
    step: u64,
    preset: String,
    blocks: usize,
    channels: usize,
    rng: Rng,
    next_chunk: u64,
    games_played: u64,
    best_epoch: u64,
    best_elo: f64,
    weights: Vec<NamedTensor>,
    optimizer: Vec<(String, Vec<f32>)>,
    best_weights: Vec<NamedTensor>,
}

impl From<CheckpointV1> for Checkpoint {
    fn from(v1: CheckpointV1) -> Checkpoint {
        Checkpoint {
            epoch: v1.epoch,
            step: v1.step,
            preset: v1.preset,
            blocks: v1.blocks,
            channels: v1.channels,
            rng: v1.rng,
            next_chunk: v1.next_chunk,
            games_played: v1.games_played,
            best_epoch: v1.best_epoch,
            best_elo: v1.best_elo,
            weights: v1.weights,
            optimizer: v1.optimizer,
            best_weights: v1.best_weights,
            rule: None,
            board_size: None,
            warm_start_steps: 0,
        }
    }
}

/// The first convolution's weights, `[channels, planes, k, k]`: the only variable that sees the
/// input planes one by one.
const STEM_WEIGHT: &str = "stem.conv.weight";

impl Checkpoint {
    /// Refuses a checkpoint whose network is not `blocks`x`channels` (what `wanted` asks for).
    pub fn check_shape(&self, blocks: usize, channels: usize, wanted: &str) -> Result<(), String> {
        if (self.blocks, self.channels) == (blocks, channels) {
            return Ok(());
        }
        Err(format!(
            "the checkpoint holds {} ({}x{}), {wanted} asks for {blocks}x{channels}",
            self.preset, self.blocks, self.channels
        ))
    }

    /// Refuses a checkpoint trained on another rule than `rule`; one that does not say (version
    /// 1) passes.
    pub fn check_rule(&self, rule: Rule) -> Result<(), String> {
        match self.rule {
            Some(r) if r != rule => Err(format!(
                "the checkpoint was trained on {r}, not {rule} (`trainer transfer-rule` starts a \
                 run on another rule from it)"
            )),
            _ => Ok(()),
        }
    }

    /// Starts a network on another rule from one trained on `from_plane`'s rule: the first
    /// convolution's weights on input plane `from_plane` are copied onto `to_plane` (both rule
    /// planes of `engine::eval::features`), in the weights and in the best network's. The rule
    /// planes are constant, so the copy sees a game of the new rule as it saw one of the old; the
    /// fine-tune then only has to learn where the rules differ, instead of starting from a
    /// network that has never seen its rule plane on.
    pub fn transfer_rule_plane(
        &mut self,
        from_plane: usize,
        to_plane: usize,
    ) -> Result<(), String> {
        let mut copied = 0;
        for set in [&mut self.weights, &mut self.best_weights] {
            let Some(stem) = set.iter_mut().find(|t| t.name == STEM_WEIGHT) else {
                continue;
            };
            let [channels, planes, kh, kw] = stem.shape[..] else {
                return Err(format!(
                    "`{STEM_WEIGHT}` has shape {:?}, not 4 dimensions",
                    stem.shape
                ));
            };
            let (planes, kernel) = (planes as usize, (kh * kw) as usize);
            if from_plane.max(to_plane) >= planes
                || stem.data.len() != channels as usize * planes * kernel
            {
                return Err(format!(
                    "`{STEM_WEIGHT}` has shape {:?}: no planes {from_plane} and {to_plane}",
                    stem.shape
                ));
            }
            for c in 0..channels as usize {
                let base = c * planes * kernel;
                stem.data.copy_within(
                    base + from_plane * kernel..base + (from_plane + 1) * kernel,
                    base + to_plane * kernel,
                );
            }
            copied += 1;
        }
        if copied == 0 {
            return Err(format!("the checkpoint has no variable `{STEM_WEIGHT}`"));
        }
        Ok(())
    }
}

/// `trainer transfer-rule`: writes `from` (a checkpoint of a run on `from_rule`) into the empty
/// run folder `dir` as the start of a run on `to_rule`, its rule plane moved
/// ([`Checkpoint::transfer_rule_plane`]); epoch, step and optimizer state carry over, so
/// `--resume auto` there continues the schedule. Refuses a folder that already has checkpoints:
/// nothing saved is overwritten.
pub fn transfer_rule(
    from: &Path,
    from_rule: Rule,
    to_rule: Rule,
    dir: &Path,
) -> Result<PathBuf, String> {
    if let Some((_, existing)) = list(dir).first() {
        return Err(format!(
            "{} already holds checkpoints ({}): transfer-rule starts an empty run folder",
            dir.display(),
            existing.display()
        ));
    }
    let mut ck = load(from).map_err(|e| format!("{}: {e}", from.display()))?;
    ck.check_rule(from_rule)
        .map_err(|e| format!("{}: {e}", from.display()))?;
    ck.rule = Some(to_rule);
    ck.transfer_rule_plane(
        features::rule_plane(from_rule),
        features::rule_plane(to_rule),
    )?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    save(dir, &ck).map_err(|e| e.to_string())
}

pub fn path_for(dir: &Path, epoch: u64) -> PathBuf {
    dir.join(format!("ckpt-{epoch:06}.bin"))
}

/// Every variable of `vs`, sorted by name.
pub fn capture(vs: &nn::VarStore) -> Vec<NamedTensor> {
    let mut v: Vec<NamedTensor> = vs
        .variables()
        .into_iter()
        .map(|(name, t)| NamedTensor {
            name,
            shape: t.size(),
            data: crate::network::model::to_vec(&t),
        })
        .collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

/// Copies `tensors` into the variables of `vs`; every variable must be present with its shape,
/// except those of training-only heads (`model::is_training_only`), which keep their fresh values
/// when missing (a run that turns such a head on resumes a checkpoint saved without it). Returns
/// the names of the variables left fresh; variables of `tensors` that `vs` lacks are ignored.
pub fn restore(vs: &nn::VarStore, tensors: &[NamedTensor]) -> Result<Vec<String>, String> {
    let mut vars: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    let mut fresh = Vec::new();
    for (name, mut t) in vars {
        let Some(src) = tensors.iter().find(|n| n.name == name) else {
            if crate::network::model::is_training_only(&name) {
                fresh.push(name);
                continue;
            }
            return Err(format!("variable `{name}` missing"));
        };
        if src.shape != t.size() || src.data.len() as i64 != src.shape.iter().product::<i64>() {
            return Err(format!(
                "variable `{name}`: shape {:?}, model has {:?}",
                src.shape,
                t.size()
            ));
        }
        let x = Tensor::from_slice(&src.data)
            .view(src.shape.as_slice())
            .to_kind(Kind::Float)
            .to_device(t.device());
        tch::no_grad(|| t.copy_(&x));
    }
    Ok(fresh)
}

pub fn save(dir: &Path, ck: &Checkpoint) -> Result<PathBuf, StoreError> {
    let path = path_for(dir, ck.epoch);
    store::write(&path, MAGIC, VERSION, &(ck, ck.warm_start_steps))?;
    Ok(path)
}

pub fn load(path: &Path) -> Result<Checkpoint, StoreError> {
    match store::version_of(path, MAGIC) {
        Some(1) => store::read::<CheckpointV1>(path, MAGIC, 1).map(Checkpoint::from),
        Some(2) => store::read(path, MAGIC, 2),
        _ => store::read::<(Checkpoint, u64)>(path, MAGIC, VERSION).map(|(ck, warm)| Checkpoint {
            warm_start_steps: warm,
            ..ck
        }),
    }
}

/// Checkpoint files in `dir`, newest epoch first.
pub fn list(dir: &Path) -> Vec<(u64, PathBuf)> {
    let mut v = store::numbered_files(dir, "ckpt-", ".bin").unwrap_or_default();
    v.reverse();
    v
}

/// The newest checkpoint that reads back; unreadable newer ones are reported through `warn`.
pub fn latest_valid(dir: &Path, mut warn: impl FnMut(String)) -> Option<(PathBuf, Checkpoint)> {
    for (_, p) in list(dir) {
        match load(&p) {
            Ok(c) => return Some((p, c)),
            Err(e) => warn(format!(
                "skipping checkpoint: {e}; falling back to the previous one"
            )),
        }
    }
    None
}
