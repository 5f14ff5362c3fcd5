//! `Trainer`: one network being trained — its variables, optimizer, replay window, sampling RNG
//! and the counters a checkpoint keeps — with the training step, resume, the checkpoint, the ONNX
//! export and the evaluation against the best network as methods. The single-machine run (`run`)
//! and the distributed train worker (`distributed::train_worker`) both drive one, so a step, a
//! checkpoint and an exported model mean the same in both.
//!
//! The room also holds the replay store the trainer samples from (`replay`), the value teacher
//! mixed into the value targets (`teacher`) and the probe of the network's prior on available
//! fives (`probe`).
//!
//! Depends on `config`, `network` (`form`, `model`, `optim`, `checkpoint`, `net_eval`), `replay`,
//! `matches::arena` and `support::store`.

pub mod probe;
pub mod replay;
pub mod teacher;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use engine::eval::classical::ClassicalEvaluator;
use engine::eval::{Evaluator, UniformEvaluator, features};
use engine::game::Pos;
use engine::net::Preset;
use tch::{Device, Kind, Tensor, nn};

use crate::config::{Resume, Settings};
use crate::matches::arena::{MatchConfig, MatchResult, play_match};
use crate::network::checkpoint::{self, Checkpoint};
use crate::network::form::{Form, Model};
use crate::network::model::trainable_params;
use crate::network::net_eval::{OnnxSelfplay, SelfplayNet, TchEvaluator, TchNet};
use crate::network::optim::{OptimConfig, Optimizer};
use crate::support::store;
use crate::training::replay::{Replay, Sample};
use crate::training::teacher::ValueTeacher;
use engine::rng::Rng;

/// A training batch as device tensors.
pub struct Batch {
    /// `[n, planes, size, size]`.
    pub planes: Tensor,
    /// `[n, size*size]` policy targets.
    pub policy: Tensor,
    /// `[n]` value targets.
    pub value: Tensor,
    /// `[n, size*size]` opponent-reply targets, a row of zeros where a sample has none.
    pub opponent_policy: Tensor,
    /// Samples with an opponent-reply target.
    pub opponent_targets: usize,
}

pub fn batch_tensors(samples: &[Sample], size: usize, device: Device) -> Batch {
    let n = samples.len() as i64;
    let s = size as i64;
    let cells = size * size;
    let mut planes = Vec::with_capacity(samples.len() * features::PLANES * cells);
    let mut policy = Vec::with_capacity(samples.len() * cells);
    let mut value = Vec::with_capacity(samples.len());
    let mut opponent = Vec::with_capacity(samples.len() * cells);
    let mut opponent_targets = 0;
    for x in samples {
        planes.extend_from_slice(&x.planes);
        policy.extend_from_slice(&x.policy);
        value.push(x.value);
        if x.opponent_policy.len() == cells {
            opponent.extend_from_slice(&x.opponent_policy);
            opponent_targets += 1;
        } else {
            opponent.resize(opponent.len() + cells, 0.0);
        }
    }
    Batch {
        planes: Tensor::from_slice(&planes)
            .view([n, features::PLANES as i64, s, s])
            .to_device(device),
        policy: Tensor::from_slice(&policy)
            .view([n, s * s])
            .to_device(device),
        value: Tensor::from_slice(&value).to_device(device),
        opponent_policy: Tensor::from_slice(&opponent)
            .view([n, s * s])
            .to_device(device),
        opponent_targets,
    }
}

/// The losses of one batch.
pub struct Losses {
    /// Policy cross-entropy.
    pub policy: Tensor,
    /// Value MSE.
    pub value: Tensor,
    /// The opponent-reply cross-entropy over the samples that have that target; None without
    /// the head.
    pub opponent_policy: Option<Tensor>,
}

/// Cross-entropy of `logits` against the target rows of `target`, summed over the board and
/// divided by `rows`.
fn cross_entropy(logits: &Tensor, target: &Tensor, rows: usize) -> Tensor {
    let logp = logits.log_softmax(1, Kind::Float);
    -(target * logp).sum(Kind::Float) / rows.max(1) as f64
}

/// The losses of `net` in training mode on one batch.
pub fn losses(net: &Model, b: &Batch) -> Losses {
    let heads = net.forward_heads(&b.planes, true);
    let rows = b.value.size()[0] as usize;
    Losses {
        policy: cross_entropy(&heads.policy, &b.policy, rows),
        value: (heads.value - &b.value).square().mean(Kind::Float),
        opponent_policy: heads
            .opponent_policy
            .map(|logits| cross_entropy(&logits, &b.opponent_policy, b.opponent_targets)),
    }
}

/// The entropy (nats) of one policy target, a distribution over the board.
fn entropy(p: &[f32]) -> f64 {
    -p.iter()
        .filter(|&&x| x > 0.0)
        .map(|&x| x as f64 * (x as f64).ln())
        .sum::<f64>()
}

/// What one training step measured.
#[derive(Clone, Copy, Debug)]
pub struct StepLosses {
    pub policy: f64,
    /// The entropy of the batch's policy targets: the least the policy cross-entropy can be,
    /// so `policy - policy_target_entropy` is how far the network is from its targets (the KL).
    pub policy_target_entropy: f64,
    pub value: f64,
    /// The auxiliary opponent-reply loss, when the net has that head.
    pub opponent_policy: Option<f64>,
    pub lr: f64,
}

/// One evaluation: the trained network against the best one (and the uniform evaluator).
#[derive(Clone, Debug)]
pub struct Evaluation {
    pub vs_best: MatchResult,
    pub vs_uniform: Option<MatchResult>,
    pub vs_classical: Option<MatchResult>,
    pub promoted: bool,
    /// The epoch of the best network it played.
    pub previous_best: u64,
}

/// The network new ones are measured against, kept by single-machine runs.
struct Best {
    net: Arc<TchEvaluator>,
    epoch: u64,
    elo: f64,
}

pub struct Trainer {
    pub preset: Preset,
    pub device: Device,
    board_size: usize,
    /// The rule self-play plays: with the board size, what exported models claim.
    rule: engine::game::Rule,
    batch_size: usize,
    /// The weight of the opponent-reply loss (`aux_policy_weight`; 0: no such head).
    aux_policy_weight: f64,
    vs: nn::VarStore,
    net: Model,
    opt: Optimizer,
    pub replay: Replay,
    rng: Rng,
    /// Training steps taken, epochs (or publications) completed and games in the store.
    pub step: u64,
    pub epoch: u64,
    pub games: u64,
    best: Option<Best>,
    /// The window's games of another board size were reported (once is enough).
    warned_board: bool,
    value_teacher: Option<ValueTeacher>,
    /// Steps of the warm start on the bootstrap's games (0 for none): the learning-rate
    /// schedule spans them before the self-play epochs, and checkpoints keep the count.
    pub warm_start_steps: u64,
}

impl Trainer {
    /// A fresh network for `s` on `device`, its optimizer on a cosine schedule of
    /// `schedule_steps`, and the replay store of the run folder. `keep_best`: also keep the best
    /// network for `evaluate` (and in checkpoints).
    pub fn new(
        s: &Settings,
        device: Device,
        schedule_steps: u64,
        keep_best: bool,
        warn: impl FnMut(String),
    ) -> anyhow::Result<Trainer> {
        let form = Form::of(s.model_preset);
        let vs = nn::VarStore::new(device);
        let net = Model::for_training(&vs.root(), form, s.aux_policy_weight > 0.0);
        let opt = Optimizer::new(&vs, OptimConfig::from_settings(s, schedule_steps));
        let replay = Replay::open(&s.checkpoint_dir.join("replay"), s.replay_window, warn)?;
        let best = if keep_best {
            let net = Arc::new(TchNet::evaluator(form, device, "best", 1));
            net.backend().load_from(&vs)?;
            Some(Best {
                net,
                epoch: 0,
                elo: 0.0,
            })
        } else {
            None
        };
        Ok(Trainer {
            preset: s.model_preset,
            device,
            board_size: s.board_size,
            rule: s.rule,
            batch_size: s.batch_size,
            aux_policy_weight: s.aux_policy_weight,
            vs,
            net,
            opt,
            replay,
            rng: crate::seeded_rng(s.seed),
            step: 0,
            epoch: 0,
            games: 0,
            best,
            warned_board: false,
            value_teacher: match &s.value_teacher {
                Some(path) => Some(ValueTeacher::load(
                    path,
                    s.value_teacher_weight as f32,
                    s.rule,
                    s.board_size,
                )?),
                None => None,
            },
            warm_start_steps: 0,
        })
    }

    /// The shape of the network being trained.
    pub fn form(&self) -> Form {
        Form::of(self.preset)
    }

    /// Parameters the optimizer trains (before BatchNorm folding).
    pub fn trainable_params(&self) -> usize {
        trainable_params(&self.vs)
    }

    /// Continues from a checkpoint as `resume` says (`Auto`: the newest valid one of `dir`).
    /// Returns the file it resumed from, or None for a fresh start.
    pub fn resume(
        &mut self,
        resume: &Resume,
        dir: &Path,
        mut warn: impl FnMut(String),
    ) -> anyhow::Result<Option<PathBuf>> {
        let found = match resume {
            Resume::None => None,
            Resume::Auto => checkpoint::latest_valid(dir, &mut warn),
            Resume::File(path) => Some((path.clone(), checkpoint::load(path)?)),
        };
        let Some((path, ck)) = found else {
            return Ok(None);
        };
        self.restore(&ck, &mut warn)
            .with_context(|| format!("resuming from {}", path.display()))?;
        Ok(Some(path))
    }

    /// A fresh run's network from another run's checkpoint (`Settings::init_from`): the weights
    /// only. Epoch, step, optimizer and schedule start fresh, so the warm start trains the
    /// network on this folder's replay (a second distillation stage on new targets).
    pub fn init_weights(
        &mut self,
        path: &Path,
        mut warn: impl FnMut(String),
    ) -> anyhow::Result<()> {
        let ck = checkpoint::load(path)?;
        self.restore_weights(&ck, &mut warn)
            .with_context(|| format!("initialising from {}", path.display()))
    }

    fn restore(&mut self, ck: &Checkpoint, warn: &mut impl FnMut(String)) -> anyhow::Result<()> {
        self.restore_weights(ck, warn)?;
        self.opt
            .load_state(&ck.optimizer, ck.step)
            .map_err(anyhow::Error::msg)?;
        self.warm_start_steps = ck.warm_start_steps;
        if let Some(best) = &mut self.best {
            if !ck.best_weights.is_empty() {
                best.net
                    .backend()
                    .with(|bvs, _| checkpoint::restore(bvs, &ck.best_weights))
                    .map_err(anyhow::Error::msg)?;
            }
            (best.epoch, best.elo) = (ck.best_epoch, ck.best_elo);
        }
        self.warn_missing_chunks(ck.next_chunk, warn);
        (self.step, self.epoch, self.games) = (ck.step, ck.epoch, ck.games_played);
        self.rng = ck.rng.clone();
        Ok(())
    }

    /// The checkpoint's network weights, after checking it is this run's form and rule.
    fn restore_weights(
        &mut self,
        ck: &Checkpoint,
        warn: &mut impl FnMut(String),
    ) -> anyhow::Result<()> {
        let (blocks, channels) = self.preset.dims();
        let wanted = format!("model_preset {}", self.preset.name());
        ck.check_shape(blocks, channels, &wanted)
            .and_then(|()| ck.check_rule(self.rule))
            .map_err(anyhow::Error::msg)?;
        if let Some(size) = ck.board_size.filter(|&n| n != self.board_size) {
            warn(format!(
                "the checkpoint was trained on {size}x{size}; this run plays {n}x{n}",
                n = self.board_size
            ));
        }
        let fresh = checkpoint::restore(&self.vs, &ck.weights).map_err(anyhow::Error::msg)?;
        if !fresh.is_empty() {
            warn(format!(
                "the checkpoint has no {}: that training-only head starts fresh",
                fresh.join(", ")
            ));
        }
        // The other way round, the head's weights are left behind unasked: say so, since a run
        // resumed without its `--aux-policy-weight` would otherwise drop the head silently.
        let ours = self.vs.variables();
        let dropped: Vec<&str> = ck
            .weights
            .iter()
            .map(|w| w.name.as_str())
            .filter(|n| crate::network::model::is_training_only(n) && !ours.contains_key(*n))
            .collect();
        if !dropped.is_empty() {
            warn(format!(
                "the checkpoint trained {} (the opponent-reply head): this run has \
                 aux_policy_weight 0, so the head is dropped; --aux-policy-weight W keeps it",
                dropped.join(", ")
            ));
        }
        Ok(())
    }

    /// Says when the replay folder holds fewer chunks than the checkpoint saw (`seen`). An empty
    /// folder is the documented way to go on from a shipped checkpoint (copy it into a new run
    /// folder), so that case is said plainly; a folder with some but fewer has lost some.
    fn warn_missing_chunks(&self, seen: u64, warn: &mut impl FnMut(String)) {
        match self.replay.next_chunk() {
            0 if seen > 0 => warn(format!(
                "the replay folder is empty (the checkpoint saw {seen} chunks elsewhere): the \
                 window starts empty and self-play refills it, as expected for a checkpoint \
                 copied into a new run folder"
            )),
            have if have < seen => warn(format!(
                "replay folder ends at chunk {have} but the checkpoint saw {seen}: some chunks \
                 are gone"
            )),
            _ => {}
        }
    }

    /// A batch of samples from the replay window and the boards they encode; games of another
    /// board size (a chunk copied in from elsewhere) cannot join this network's batch and are
    /// skipped, said once.
    fn draw_batch(
        &mut self,
        mut warn: impl FnMut(String),
    ) -> (Vec<Sample>, Vec<engine::game::Board>) {
        let cells = self.board_size * self.board_size;
        let mut samples = Vec::with_capacity(self.batch_size);
        let mut boards = Vec::with_capacity(self.batch_size);
        for _ in 0..self.batch_size {
            match self.replay.sample_with_board(&mut self.rng) {
                Some(Ok((x, _))) if x.policy.len() != cells => {
                    if !self.warned_board {
                        self.warned_board = true;
                        warn(format!(
                            "the replay window holds games of another board ({} points); this \
                             run plays {n}x{n} and skips them",
                            x.policy.len(),
                            n = self.board_size
                        ));
                    }
                }
                Some(Ok((x, board))) => {
                    samples.push(x);
                    boards.push(board);
                }
                Some(Err(e)) => warn(format!("bad replay sample skipped: {e}")),
                None => break,
            }
        }
        (samples, boards)
    }

    /// One optimizer step on a batch sampled from the window; None when the window is empty.
    /// A loss that is not finite is an error (nothing is saved from it).
    pub fn train_step(&mut self, warn: impl FnMut(String)) -> anyhow::Result<Option<StepLosses>> {
        let (mut samples, boards) = self.draw_batch(warn);
        if samples.is_empty() {
            return Ok(None);
        }
        if let Some(teacher) = &self.value_teacher {
            teacher.mix(&mut samples, &boards);
        }
        let policy_target_entropy =
            samples.iter().map(|x| entropy(&x.policy)).sum::<f64>() / samples.len() as f64;
        let batch = batch_tensors(&samples, self.board_size, self.device);
        let l = losses(&self.net, &batch);
        let mut loss = &l.policy + &l.value;
        if let Some(aux) = &l.opponent_policy {
            loss += aux * self.aux_policy_weight;
        }
        self.opt.zero_grad();
        loss.backward();
        let lr = self.opt.step();
        self.step += 1;
        let (policy, value) = (l.policy.double_value(&[]), l.value.double_value(&[]));
        let opponent_policy = l.opponent_policy.map(|t| t.double_value(&[]));
        if !policy.is_finite() || !value.is_finite() || !opponent_policy.unwrap_or(0.0).is_finite()
        {
            anyhow::bail!(
                "loss is not finite at step {} (policy {policy}, value {value}, opponent policy \
                 {opponent_policy:?}): lower --lr",
                self.step
            );
        }
        Ok(Some(StepLosses {
            policy,
            policy_target_entropy,
            value,
            opponent_policy,
            lr,
        }))
    }

    /// The optimizer's schedule from here on (the steps it spans may grow after `new`: a warm
    /// start's, known once the replay folder is read or the checkpoint resumed).
    pub fn set_schedule(&mut self, config: OptimConfig) {
        self.opt.config = config;
    }

    /// Copies the trained weights into `net` (a self-play or probe evaluator).
    pub fn load_into(&self, net: &TchEvaluator) -> anyhow::Result<()> {
        net.backend().load_from(&self.vs)
    }

    /// The trained variables, as a checkpoint or a model payload stores them.
    pub fn weights(&self) -> Vec<checkpoint::NamedTensor> {
        checkpoint::capture(&self.vs)
    }

    /// Everything needed to continue: weights, optimizer, counters, RNG, replay cursor, best net.
    pub fn checkpoint(&self) -> Checkpoint {
        let (blocks, channels) = self.preset.dims();
        let (best_epoch, best_elo, best_weights) = match &self.best {
            Some(b) => (
                b.epoch,
                b.elo,
                b.net.backend().with(|bvs, _| checkpoint::capture(bvs)),
            ),
            None => (0, 0.0, Vec::new()),
        };
        Checkpoint {
            epoch: self.epoch,
            step: self.step,
            preset: self.preset.name().into(),
            blocks,
            channels,
            rng: self.rng.clone(),
            next_chunk: self.replay.next_chunk(),
            games_played: self.games,
            best_epoch,
            best_elo,
            weights: self.weights(),
            optimizer: self.opt.state(),
            best_weights,
            rule: Some(self.rule),
            board_size: Some(self.board_size),
            warm_start_steps: self.warm_start_steps,
        }
    }

    /// Writes `ckpt-<epoch>.bin` in `dir` atomically; with `keep`, only the newest `keep` stay.
    pub fn save_checkpoint(&self, dir: &Path, keep: Option<usize>) -> anyhow::Result<PathBuf> {
        let path = checkpoint::save(dir, &self.checkpoint())?;
        if let Some(keep) = keep {
            for (_, old) in checkpoint::list(dir).into_iter().skip(keep.max(1)) {
                let _ = std::fs::remove_file(old);
            }
        }
        Ok(path)
    }

    /// The network as an ONNX file (BatchNorm folded, metadata with the step, and the rule and
    /// board size it was trained for as its claim: the engine plays it only there).
    pub fn onnx(&self) -> anyhow::Result<Vec<u8>> {
        onnx_of(&self.net, self.step, self.rule, self.board_size)
    }

    /// Writes the ONNX model as `<dir>/models/<name>.onnx` and `latest.onnx`, each atomically
    /// (a watching engine never sees half a file).
    pub fn export(&self, dir: &Path, name: &str) -> anyhow::Result<PathBuf> {
        publish_model_files(dir, name, &self.onnx()?)
    }

    /// The trained network against the best one (and the uniform and classical evaluators when
    /// asked), at the settings' evaluation visits, from `openings` (empty: random ones); promotes it when it scores above
    /// `eval_promote_score`. With `onnx`, both networks play as their exports on the sessions
    /// self-play uses (int8 when it does): the networks as the engine plays them, and on a CPU
    /// far faster than small-batch libtorch forwards (80 games at 64 visits on a 2-core VNNI
    /// Xeon: 16 s against 219 s, docs/training.md), which had made an evaluation cost several epochs.
    /// The caller loads the current network (`OnnxSelfplay::evaluator` of `onnx()`), so that
    /// the next self-play can take the same sessions instead of exporting and quantizing again.
    ///
    /// # Errors
    /// When the trainer was made without `keep_best`, an export does not load, or a match fails.
    pub fn evaluate(
        &mut self,
        s: &Settings,
        onnx: Option<(&OnnxSelfplay, Arc<SelfplayNet>)>,
        openings: &[Vec<Pos>],
    ) -> anyhow::Result<Evaluation> {
        let epoch = self.epoch;
        let (form, step, rule, size) = (self.form(), self.step, self.rule, self.board_size);
        let current: Arc<dyn Evaluator> = match &onnx {
            Some((_, current)) => current.clone(),
            None => {
                let net =
                    TchNet::evaluator(form, self.device, &format!("epoch{epoch}"), 100 + epoch);
                self.load_into(&net)?;
                Arc::new(net)
            }
        };
        let best = self
            .best
            .as_mut()
            .context("this trainer keeps no best network to evaluate against")?;
        let best_dyn: Arc<dyn Evaluator> = match onnx {
            Some((o, _)) => {
                let bytes = best
                    .net
                    .backend()
                    .with(|_, net| onnx_of(net, step, rule, size))?;
                Arc::new(o.evaluator(&bytes)?)
            }
            None => best.net.clone(),
        };
        let mc = MatchConfig::for_evaluation(s, openings.to_vec(), s.seed ^ epoch);
        let vs_best = play_match(&mc, current.clone(), best_dyn)?;
        let against = |on: bool, other: Arc<dyn Evaluator>| match on {
            true => play_match(&mc, current.clone(), other).map(Some),
            false => Ok(None),
        };
        let vs_uniform = against(s.eval_vs_uniform, Arc::new(UniformEvaluator))?;
        let vs_classical = against(s.eval_vs_classical, Arc::new(ClassicalEvaluator))?;
        let previous_best = best.epoch;
        let promoted = vs_best.score() > s.eval_promote_score;
        if promoted {
            best.elo += vs_best.elo;
            best.epoch = epoch;
            best.net.backend().load_from(&self.vs)?;
        }
        Ok(Evaluation {
            vs_best,
            vs_uniform,
            vs_classical,
            promoted,
            previous_best,
        })
    }

    /// (epoch, Elo over the first network) of the best network.
    pub fn best(&self) -> (u64, f64) {
        self.best.as_ref().map_or((0, 0.0), |b| (b.epoch, b.elo))
    }
}

/// `net` as an ONNX file: BatchNorm folded, training-only heads left out, metadata with `step`
/// and the claim `rule` on `board_size` (the engine plays it only there).
fn onnx_of(
    net: &Model,
    step: u64,
    rule: engine::game::Rule,
    board_size: usize,
) -> anyhow::Result<Vec<u8>> {
    let weights = net.export().context("exporting the network")?;
    Ok(weights.onnx_bytes(step, rule, board_size)?)
}

/// `trainer export`: the ONNX file of the checkpoint at `path` (its own preset), exactly as its
/// run's epoch export would have been, claiming `rule` on `board_size`. For a checkpoint whose
/// run folder no longer holds its export (the kept checkpoints of `models/runs/`). A checkpoint
/// that records another rule or board size is refused, so the file never claims what its network
/// was not trained for; what a checkpoint does not record (a version 1 checkpoint records
/// neither) is taken on trust, and `warn` is told so.
pub fn export_checkpoint(
    path: &Path,
    rule: engine::game::Rule,
    board_size: usize,
    warn: &mut impl FnMut(String),
) -> anyhow::Result<Vec<u8>> {
    let ck = checkpoint::load(path).with_context(|| format!("reading {}", path.display()))?;
    let preset: Preset = ck
        .preset
        .parse()
        .with_context(|| format!("{}: preset `{}`", path.display(), ck.preset))?;
    let (blocks, channels) = preset.dims();
    ck.check_shape(blocks, channels, &format!("its preset {}", ck.preset))
        .and_then(|()| ck.check_rule(rule))
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if let Some(size) = ck.board_size.filter(|&n| n != board_size) {
        anyhow::bail!(
            "{}: the checkpoint was trained on {size}x{size}, the profile plays \
             {board_size}x{board_size}",
            path.display()
        );
    }
    // A version 1 checkpoint records neither; one that `transfer-rule` made from it, only the
    // rule.
    let unrecorded = match (ck.rule, ck.board_size) {
        (None, None) => Some("the rule and board size"),
        (None, Some(_)) => Some("the rule"),
        (Some(_), None) => Some("the board size"),
        (Some(_), Some(_)) => None,
    };
    if let Some(what) = unrecorded {
        warn(format!(
            "{}: the checkpoint does not record {what} it was trained on: the export claims \
             the profile's {rule} on {board_size}x{board_size} unchecked",
            path.display()
        ));
    }
    let vs = nn::VarStore::new(Device::Cpu);
    let net = Model::new(&vs.root(), Form::of(preset));
    checkpoint::restore(&vs, &ck.weights)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("loading the weights of {}", path.display()))?;
    onnx_of(&net, ck.step, rule, board_size)
}

/// Writes `bytes` as `<dir>/models/<name>.onnx` and `latest.onnx`, each atomically.
pub fn publish_model_files(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let models = dir.join("models");
    std::fs::create_dir_all(&models).with_context(|| format!("creating {}", models.display()))?;
    let path = models.join(format!("{name}.onnx"));
    for p in [&path, &models.join("latest.onnx")] {
        store::write_atomic(p, bytes).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(path)
}

/// Keeps the newest `keep` (at least one) of the numbered exports `<dir>/models/<prefix>N.onnx`
/// (`model-` for a run's epochs, `model-v` for the distributed versions); `latest.onnx` and any
/// other file stay.
pub fn prune_models(dir: &Path, prefix: &str, keep: usize) {
    let files = store::numbered_files(&dir.join("models"), prefix, ".onnx").unwrap_or_default();
    let excess = files.len().saturating_sub(keep.max(1));
    for (_, p) in &files[..excess] {
        let _ = std::fs::remove_file(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_of_policy_targets() {
        assert_eq!(entropy(&[0.0, 1.0, 0.0]), 0.0);
        assert!((entropy(&[0.25; 4]) - 4f64.ln()).abs() < 1e-9);
        assert!((entropy(&[0.5, 0.5, 0.0]) - 2f64.ln()).abs() < 1e-9);
    }
}
