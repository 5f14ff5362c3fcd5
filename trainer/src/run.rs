//! The single-machine training run: per epoch, self-play with the current network, add the games
//! to the replay store, train on samples from the window, evaluate against the best network every
//! `eval_frequency` epochs, then checkpoint and export ONNX (`models/model-NNNNNN.onnx`, with
//! `latest.onnx` replaced atomically). `--resume auto` continues from the newest valid checkpoint.
//! The network, its step, checkpoint, export and evaluation are `training::Trainer`'s; this module
//! sequences them and reports (metrics.jsonl, training.png, one line per epoch), and stops
//! between epochs when `stop` has seen SIGINT or SIGTERM.
//!
//! Self-play searches with the tch network loaded with the trained weights, or (the
//! `selfplay_backend` setting; on a CPU by default) with their export loaded into ONNX Runtime
//! sessions at the start of each epoch: the same network, 1.45-1.65x the self-play speed. The
//! evaluation matches play on the same backend (its exports, int8 when self-play is), and the
//! `eval` record says which.
//!
//! Depends on every other trainer module; with `progress`, it is the one that prints.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use engine::game::Pos;
use engine::openings::OpeningFormat;
use serde_json::json;
use tch::Device;

use crate::config::{RunFolder, Settings};
use crate::matches::arena::{MatchConfig, MatchResult, openings_from_file};
use crate::network::net_eval::{OnnxSelfplay, SelfplayNet, TchEvaluator, TchNet, onnx_selfplay};
use crate::network::optim::OptimConfig;
use crate::selfplay::estimate::{EpochShape, warn_if_slow};
use crate::selfplay::status::expected_plies;
use crate::selfplay::{self, Leaves, SelfPlayConfig};
use crate::support::device::{describe, resolve};
use crate::support::metrics::Metrics;
use crate::support::progress::{self, Progress};
use crate::training::probe::{FivePositions, FivePrior};
use crate::training::{Trainer, prune_models};

/// What a finished run reports (tests read it).
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    /// The epoch the run is at when it returns (its last one, not how many this call trained).
    pub last_epoch: u64,
    pub step: u64,
    pub games: u64,
    pub last_policy_loss: f64,
    pub last_value_loss: f64,
    pub resumed_from: Option<PathBuf>,
    pub last_vs_uniform: Option<MatchResult>,
    /// The signal the run stopped on before its last epoch (`stop`), after saving the epoch it
    /// was in.
    pub stopped_by: Option<i32>,
}

fn warn(m: String) {
    eprintln!("trainer: warning: {m}");
}

/// Gives torch the settings' threads (`Settings::torch_threads`).
pub fn set_threads(s: &Settings) {
    tch::set_num_threads(s.torch_threads() as i32);
}

/// Training steps of an epoch: `train_steps`, or enough to see each new position
/// `sample_reuse` times.
fn steps_for(s: &Settings, positions: usize) -> u64 {
    if s.train_steps > 0 {
        return s.train_steps;
    }
    ((positions as f64 * s.sample_reuse) / s.batch_size as f64)
        .ceil()
        .max(1.0) as u64
}

/// What an epoch's self-play left behind for the rest of the epoch.
struct SelfPlayed {
    positions: usize,
    seconds: f64,
    fives: FivePositions,
}

/// What an epoch's training measured.
struct Trained {
    policy_loss: f64,
    /// The mean entropy of the policy targets trained on: `policy_loss` less it is the KL.
    policy_target_entropy: f64,
    value_loss: f64,
    /// The auxiliary opponent-reply loss (`aux_policy_weight` > 0).
    opponent_policy_loss: Option<f64>,
    samples_per_s: f64,
    /// The learning rate of the epoch's last step: the schedule depends on `--epochs` and the
    /// games an epoch, so a resumed run shows where it stands.
    lr: f64,
}

/// One run: its settings, the trainer, the self-play network and the log.
struct Run<'a> {
    s: &'a Settings,
    t: Trainer,
    player: TchEvaluator,
    /// The ONNX Runtime sessions self-play runs on instead of `player` (`selfplay_backend`).
    onnx_player: Option<OnnxSelfplay>,
    /// The current weights already in `onnx_player`'s sessions (the startup estimate or the
    /// epoch's evaluation loaded them): the next self-play takes them instead of exporting and
    /// quantizing again.
    onnx_loaded: Option<SelfplayNet>,
    selfplay: SelfPlayConfig,
    /// The `eval_openings` file's openings, read and checked before any work (empty: random).
    eval_openings: Vec<Vec<Pos>>,
    metrics: Metrics,
    summary: RunSummary,
}

pub fn run(s: &Settings) -> anyhow::Result<RunSummary> {
    set_threads(s);
    let device = resolve(s.device)?;
    tch::manual_seed(s.seed as i64);
    let eval_openings = checked_eval_openings(s)?;
    let (t, resumed_from) = start_trainer(s, device)?;
    let summary = RunSummary {
        resumed_from,
        ..RunSummary::default()
    };
    if t.epoch >= s.last_epoch() {
        // A checkpoint copied from models/runs/ sits at its profile's own stop: say how to go on.
        eprintln!(
            "trainer: the run is at epoch {}, and stops after epoch {}: nothing to train \
             (a later --stop-after-epoch, up to the schedule's epochs = {}, trains on)",
            t.epoch,
            s.last_epoch(),
            s.epochs
        );
        return Ok(where_it_stands(summary, &t));
    }
    let fresh = warm_start_pending(summary.resumed_from.is_some(), &t);
    let mut run = Run::start(s, t, device, eval_openings, summary)?;
    if fresh {
        run.warm_start()?;
    }
    for epoch in run.t.epoch + 1..=s.last_epoch() {
        if let Some(signal) = crate::support::stop::requested() {
            run.stopped(signal)?;
            break;
        }
        run.epoch(epoch)?;
    }
    let summary = std::mem::take(&mut run.summary);
    Ok(where_it_stands(summary, &run.t))
}

/// The `eval_openings` file's openings (empty: random ones), checked against `eval_pairs` before
/// any work starts.
fn checked_eval_openings(s: &Settings) -> anyhow::Result<Vec<Vec<Pos>>> {
    let eval_openings = match &s.eval_openings {
        Some(path) => openings_from_file(path, OpeningFormat::Auto, s.board_size, s.rule)?,
        None => Vec::new(),
    };
    MatchConfig::for_evaluation(s, eval_openings.clone(), s.seed)
        .check()
        .map_err(|e| anyhow::anyhow!("eval_pairs and eval_openings: {e}"))?;
    Ok(eval_openings)
}

/// The trainer of the run folder, resumed as `resume` says (and the checkpoint it resumed from),
/// with the network it trains described on stderr.
fn start_trainer(s: &Settings, device: Device) -> anyhow::Result<(Trainer, Option<PathBuf>)> {
    let dir = &s.checkpoint_dir;
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
    let per_game = (s.board_size * s.board_size / 3).max(1);
    let selfplay_steps = steps_for(s, s.selfplay_games * per_game) * s.epochs;
    let mut t = Trainer::new(s, device, selfplay_steps, true, warn)?;
    let (blocks, channels) = s.model_preset.dims();
    eprintln!(
        "trainer: device {}; preset {}: {blocks} blocks x {channels} channels, {} trainable parameters ({} exported)",
        describe(device),
        s.model_preset,
        t.trainable_params(),
        s.model_preset.param_count()
    );
    let resumed_from = t.resume(&s.resume, dir, warn)?;
    if let (None, Some(path)) = (&resumed_from, &s.init_from) {
        t.init_weights(path, warn)?;
        eprintln!(
            "trainer: the network starts from the weights of {} (epoch, step and optimizer fresh)",
            path.display()
        );
    }
    if warm_start_pending(resumed_from.is_some(), &t) {
        t.warm_start_steps = steps_for(s, t.replay.len());
    }
    // The warm start's steps come first in the schedule: a long one on the cosine of the
    // self-play epochs alone would end at the floor learning rate.
    t.set_schedule(OptimConfig::from_settings(
        s,
        selfplay_steps + t.warm_start_steps,
    ));
    if let Some(path) = &resumed_from {
        let (epoch, step) = (t.epoch, t.step);
        eprintln!(
            "trainer: resumed from {} (epoch {epoch}, step {step})",
            path.display()
        );
    }
    Ok((t, resumed_from))
}

/// The summary with the epoch, step and games the trainer stands at when the run returns.
fn where_it_stands(summary: RunSummary, t: &Trainer) -> RunSummary {
    RunSummary {
        last_epoch: t.epoch,
        step: t.step,
        games: t.games,
        ..summary
    }
}

/// A fresh network over a replay folder that already holds games (`trainer bootstrap`'s): the
/// run trains on them before its first self-play.
fn warm_start_pending(resumed: bool, t: &Trainer) -> bool {
    !resumed && t.epoch == 0 && !t.replay.is_empty()
}

impl<'a> Run<'a> {
    /// The run about to train: its metrics opened (with this process's start), the self-play
    /// network (tch, or ONNX Runtime sessions) ready, and the epoch's self-play time estimated.
    fn start(
        s: &'a Settings,
        t: Trainer,
        device: Device,
        eval_openings: Vec<Vec<Pos>>,
        summary: RunSummary,
    ) -> anyhow::Result<Run<'a>> {
        let mut metrics = Metrics::open(&RunFolder::new(&s.checkpoint_dir).metrics_path())
            .map_err(|e| anyhow::anyhow!("opening metrics.jsonl: {e}"))?;
        // Each process's own settings: the folder's settings.toml keeps those it was started
        // with, and a resume may run on other hardware (device, threads, workers) or to another
        // epoch.
        let resumed_from = summary.resumed_from.as_ref();
        metrics.log(
            "start",
            json!({"settings": s, "device": describe(device), "epoch": t.epoch, "step": t.step,
                   "resumed_from": resumed_from.map(|p| p.display().to_string())}),
        )?;
        let player = TchNet::evaluator(t.form(), device, "current", 2);
        let selfplay = SelfPlayConfig::from_settings(s);
        let onnx_player = onnx_selfplay(s, device, warn)?;
        let shape = EpochShape::of(&selfplay, s.selfplay_games);
        let mut onnx_loaded = None;
        match &onnx_player {
            Some(o) => {
                let loaded = o.evaluator(&t.onnx()?)?;
                // The native pattern network is fast enough to need no estimate.
                if let SelfplayNet::Batched(net) = &loaded {
                    warn_if_slow(&**net, &shape);
                }
                onnx_loaded = Some(loaded);
            }
            None => warn_if_slow(&player, &shape),
        }
        Ok(Run {
            s,
            t,
            player,
            onnx_player,
            onnx_loaded,
            selfplay,
            eval_openings,
            metrics,
            summary,
        })
    }
}

impl Run<'_> {
    /// Trains a fresh network on the games already in the replay folder before its first
    /// self-play (the warm start from `trainer bootstrap`), then saves it as epoch 0: a restart
    /// resumes from there instead of training on them again.
    fn warm_start(&mut self) -> anyhow::Result<()> {
        let (games, positions) = (self.t.replay.games().len(), self.t.replay.len());
        eprintln!(
            "trainer: warm start: training on the {positions} positions of {games} games already in the replay folder"
        );
        let trained = self.train(0, positions)?;
        self.onnx_loaded = None; // the weights it holds are the untrained ones
        let (ck_path, onnx) = self.save_epoch(0)?;
        self.metrics.log(
            "warm_start",
            json!({"games": games, "positions": positions, "step": self.t.step,
                   "policy_loss": trained.policy_loss, "value_loss": trained.value_loss,
                   "checkpoint": ck_path.display().to_string(), "onnx": onnx.display().to_string()}),
        )?;
        eprintln!(
            "trainer: warm start done: step {}, policy {:.4}, value {:.4}",
            self.t.step, trained.policy_loss, trained.value_loss
        );
        Ok(())
    }

    /// A stop signal came before the run's last epoch: the epochs trained are saved; say so.
    fn stopped(&mut self, signal: i32) -> anyhow::Result<()> {
        let (epoch, name) = (self.t.epoch, crate::support::stop::name(signal));
        self.metrics.log(
            "stopped",
            json!({"signal": name, "epoch": epoch, "step": self.t.step}),
        )?;
        if epoch == 0 {
            eprintln!("trainer: stopped on {name} before its first epoch");
        } else {
            eprintln!(
                "trainer: stopped on {name} after epoch {epoch} (saved; `--resume auto` continues from it)"
            );
        }
        self.summary.stopped_by = Some(signal);
        Ok(())
    }

    fn epoch(&mut self, epoch: u64) -> anyhow::Result<()> {
        let played = self.self_play(epoch)?;
        let trained = self.train(epoch, played.positions)?;
        self.t.epoch = epoch;
        // The trained network on this epoch's positions with a five for the mover.
        self.t.load_into(&self.player)?;
        let five_prior = played.fives.measure(&self.player)?;
        let s = self.s;
        let eval =
            if s.eval_frequency > 0 && epoch.is_multiple_of(s.eval_frequency) && s.eval_pairs > 0 {
                self.evaluate(epoch)?
            } else {
                serde_json::Value::Null
            };
        self.finish(epoch, &played, &trained, five_prior, eval)
    }

    fn self_play(&mut self, epoch: u64) -> anyhow::Result<SelfPlayed> {
        let s = self.s;
        // The export (and int8 quantization) before the games: part of the epoch, not of the
        // self-play positions/s (about 0 when startup or the last epoch's evaluation loaded it).
        let loading = Instant::now();
        // `weights_reused`: the evaluator loaded at startup or by the last evaluation.
        let (onnx, weights_reused) = match (&self.onnx_player, self.onnx_loaded.take()) {
            (Some(_), Some(loaded)) => (Some(loaded), true),
            (Some(o), None) => (Some(o.evaluator(&self.t.onnx()?)?), false),
            (None, _) => {
                self.t.load_into(&self.player)?;
                (None, false)
            }
        };
        let load_seconds = loading.elapsed().as_secs_f64();
        let net = match &onnx {
            Some(onnx) => onnx.leaves(),
            None => Leaves::Batched(&self.player),
        };
        let sp = SelfPlayConfig {
            seed: s.seed.wrapping_mul(1_000_003).wrapping_add(epoch),
            ..self.selfplay.clone()
        };
        let mut pb = Progress::new("self-play", s.selfplay_games as u64);
        let plies = expected_plies(s.board_size);
        let report = selfplay::play_on(&sp, net, s.selfplay_games, self.t.games as usize, |st| {
            pb.update(st.games_done as u64, || st.line(plies))
        })?;
        pb.finish();
        self.t.games += report.games.len() as u64;
        let seconds = report.elapsed.as_secs_f64().max(1e-9);
        let fives = FivePositions::collect(&report.games, 2048);
        let (positions, resigned, false_resigns) =
            (report.positions, report.resigned, report.false_resigns);
        let mean_batch = report.leaves as f64 / report.forwards.max(1) as f64;
        let (forward_share, forwards) =
            (report.forward_time.as_secs_f64() / seconds, report.forwards);
        // The outcomes (black's wins, draws, white's wins): whether a draw is a result the value
        // head ever sees, and how far the first move's edge goes.
        let outcome = |o: i8| report.games.iter().filter(|g| g.outcome == o).count();
        let (black_wins, draws, white_wins) = (outcome(1), outcome(0), outcome(-1));
        let chunk = self.t.replay.add_chunk(report.games)?;
        self.metrics.log(
            "selfplay",
            json!({"epoch": epoch, "games": s.selfplay_games, "positions": positions,
                   "seconds": seconds, "positions_per_s": positions as f64 / seconds,
                   "games_per_hour": s.selfplay_games as f64 * 3600.0 / seconds,
                   "forward_share": forward_share, "forwards": forwards, "mean_batch": mean_batch,
                   "backend": self.backend(),
                   "load_seconds": load_seconds, "weights_reused": weights_reused,
                   "resigned": resigned, "false_resigns": false_resigns,
                   "black_wins": black_wins, "draws": draws, "white_wins": white_wins,
                   "chunk": chunk.display().to_string()}),
        )?;
        Ok(SelfPlayed {
            positions,
            seconds,
            fives,
        })
    }

    fn train(&mut self, epoch: u64, positions: usize) -> anyhow::Result<Trained> {
        let s = self.s;
        let steps = steps_for(s, positions);
        let mut pb = Progress::new("train", steps);
        let t0 = Instant::now();
        let (mut sum_p, mut sum_v, mut sum_aux, mut count, mut lr) = (0.0, 0.0, 0.0, 0u64, 0.0);
        let mut sum_h = 0.0;
        for k in 0..steps {
            let Some(l) = self.t.train_step(warn)? else {
                break;
            };
            sum_p += l.policy;
            sum_h += l.policy_target_entropy;
            sum_v += l.value;
            sum_aux += l.opponent_policy.unwrap_or(0.0);
            count += 1;
            lr = l.lr;
            if k % 10 == 0 || k + 1 == steps {
                let step = self.t.step;
                let mut line = json!({"epoch": epoch, "step": step, "policy_loss": l.policy, "value_loss": l.value, "lr": l.lr});
                if let Some(aux) = l.opponent_policy {
                    line["opponent_policy_loss"] = json!(aux);
                }
                self.metrics.log("step", line)?;
            }
            let samples = (k as usize + 1) * s.batch_size;
            pb.update(k + 1, || {
                progress::train_line(k + 1, steps, samples, t0.elapsed(), (l.policy, l.value))
            });
        }
        pb.finish();
        let seconds = t0.elapsed().as_secs_f64().max(1e-9);
        let n = count.max(1) as f64;
        let trained = Trained {
            policy_loss: sum_p / n,
            policy_target_entropy: sum_h / n,
            value_loss: sum_v / n,
            opponent_policy_loss: (s.aux_policy_weight > 0.0).then_some(sum_aux / n),
            samples_per_s: (count as usize * s.batch_size) as f64 / seconds,
            lr,
        };
        self.summary.last_policy_loss = trained.policy_loss;
        self.summary.last_value_loss = trained.value_loss;
        Ok(trained)
    }

    /// What self-play and the evaluation matches play on: "tch", "onnx" or "onnx-int8".
    fn backend(&self) -> &'static str {
        self.onnx_player.as_ref().map_or("tch", OnnxSelfplay::name)
    }

    fn evaluate(&mut self, epoch: u64) -> anyhow::Result<serde_json::Value> {
        let current = match &self.onnx_player {
            Some(o) => Some(Arc::new(o.evaluator(&self.t.onnx()?)?)),
            None => None,
        };
        let e = self.t.evaluate(
            self.s,
            self.onnx_player.as_ref().zip(current.clone()),
            &self.eval_openings,
        )?;
        // The next self-play plays these weights: it takes the sessions the matches played on
        // (their last holder once the matches are over) instead of loading them a second time.
        self.onnx_loaded = current.and_then(Arc::into_inner);
        let (best_epoch, best_elo) = self.t.best();
        let vs = |name: &str, r: &MatchResult| {
            format!(
                "vs {name} +{} ={} -{} {}, {}",
                r.wins,
                r.draws,
                r.losses,
                r.elo_text(),
                r.pairs_text()
            )
        };
        eprintln!(
            "trainer: eval epoch {epoch}: {}{}{}",
            vs(&format!("best (epoch {})", e.previous_best), &e.vs_best),
            if e.promoted { " -> promoted" } else { "" },
            e.vs_uniform
                .as_ref()
                .map(|u| format!("; {}", vs("uniform", u)))
                .unwrap_or_default(),
        );
        if let Some(c) = &e.vs_classical {
            eprintln!("trainer: eval epoch {epoch}: {}", vs("classical", c));
        }
        let eval_json = json!({"epoch": epoch, "backend": self.backend(), "vs_best": e.vs_best, "vs_uniform": e.vs_uniform, "vs_classical": e.vs_classical,
                               "promoted": e.promoted, "best_epoch": best_epoch, "best_elo": best_elo});
        self.metrics.log("eval", eval_json.clone())?;
        self.summary.last_vs_uniform = e.vs_uniform;
        Ok(eval_json)
    }

    /// The epoch's checkpoint and its export `models/model-<epoch>.onnx` (and `latest.onnx`);
    /// with `keep_checkpoints`, the older ones of both beyond the newest that many go.
    fn save_epoch(&mut self, epoch: u64) -> anyhow::Result<(PathBuf, PathBuf)> {
        let (keep, dir) = (self.s.kept_checkpoints(), &self.s.checkpoint_dir);
        let ck_path = self.t.save_checkpoint(dir, keep)?;
        let onnx = self.t.export(dir, &format!("model-{epoch:06}"))?;
        if let Some(keep) = keep {
            prune_models(dir, "model-", keep);
        }
        Ok((ck_path, onnx))
    }

    /// Checkpoint, export, the epoch's metrics and plot, and its line.
    fn finish(
        &mut self,
        epoch: u64,
        played: &SelfPlayed,
        trained: &Trained,
        five_prior: FivePrior,
        eval: serde_json::Value,
    ) -> anyhow::Result<()> {
        let (s, dir) = (self.s, &self.s.checkpoint_dir);
        let (ck_path, onnx) = self.save_epoch(epoch)?;
        let device = describe(self.t.device);
        let (step, games, window) = (self.t.step, self.t.games, self.t.replay.len());
        let (mp, mv) = (trained.policy_loss, trained.value_loss);
        let positions_per_s = played.positions as f64 / played.seconds;
        let mut line = json!({"epoch": epoch, "step": step, "games": games, "positions": played.positions,
               "window": window, "policy_loss": mp, "value_loss": mv, "lr": trained.lr,
               "policy_target_entropy": trained.policy_target_entropy,
               "five_prior": five_prior,
               "selfplay_positions_per_s": positions_per_s,
               "train_samples_per_s": trained.samples_per_s, "device": device,
               "checkpoint": ck_path.display().to_string(), "onnx": onnx.display().to_string(),
               "eval": eval});
        let aux = match trained.opponent_policy_loss {
            Some(aux) => {
                line["opponent_policy_loss"] = json!(aux);
                format!(", opponent policy {aux:.4}")
            }
            None => String::new(),
        };
        self.metrics.log("epoch", line)?;
        // The plot is a convenience: a failure to draw it is reported, never fatal to training.
        let title = format!(
            "fivezero {} {}x{} {}",
            s.model_preset, s.board_size, s.board_size, s.rule
        );
        if let Err(e) = crate::support::plot::plot_file(
            &dir.join("metrics.jsonl"),
            &dir.join("training.png"),
            &title,
        ) {
            warn(format!("{e:#}"));
        }
        eprintln!(
            "epoch {epoch}/{}: games {games} (+{}), positions {} (window {window}), policy {mp:.4} (targets' entropy {:.4}), value {mv:.4}{aux}, \
             prior on own fives {:.3} (top move in {:.0}% of {}), \
             self-play {positions_per_s:.0} pos/s, train {:.0} samples/s, step {step}, lr {:.2e}, device {device}",
            s.epochs,
            s.selfplay_games,
            played.positions,
            trained.policy_target_entropy,
            five_prior.mean_prior,
            100.0 * five_prior.top_share,
            five_prior.positions,
            trained.samples_per_s,
            trained.lr,
        );
        Ok(())
    }
}
