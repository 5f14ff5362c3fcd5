//! The training loop: per epoch, self-play with the current network, add the games to the replay
//! store, train on samples from the window, evaluate against the best network every
//! `eval_frequency` epochs, then checkpoint and export ONNX (`models/model-NNNNNN.onnx`, with
//! `latest.onnx` replaced atomically). `--resume auto` continues from the newest valid checkpoint.
//!
//! Depends on every other trainer module; it is the only one that prints.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use engine::eval::{Evaluator, UniformEvaluator, features};
use engine::net::{ModelMeta, NetConfig, Preset, write_model_file};
use serde_json::json;
use tch::{Device, Kind, Tensor, nn};

use crate::arena::{MatchConfig, play_match};
use crate::checkpoint::{self, Checkpoint};
use crate::config::Settings;
use crate::device::{DeviceArg, describe, resolve};
use crate::metrics::Metrics;
use crate::model::{Net, trainable_params};
use crate::net_eval::TchNet;
use crate::optim::{OptimConfig, Optimizer};
use crate::probe::FivePositions;
use crate::progress::{self, EpochShape, Progress};
use crate::replay::{Replay, Sample};
use crate::rng::Rng;
use crate::selfplay::{self, SelfPlayConfig};

/// What a finished run reports (tests read it).
#[derive(Debug, Clone, Default)]
pub struct RunSummary {
    pub epochs_done: u64,
    pub step: u64,
    pub games: u64,
    pub last_policy_loss: f64,
    pub last_value_loss: f64,
    pub resumed_from: Option<PathBuf>,
    pub last_vs_uniform: Option<crate::arena::MatchResult>,
}

/// A training batch as device tensors.
pub fn batch_tensors(samples: &[Sample], size: usize, device: Device) -> (Tensor, Tensor, Tensor) {
    let n = samples.len() as i64;
    let s = size as i64;
    let mut planes = Vec::with_capacity(samples.len() * features::PLANES * size * size);
    let mut policy = Vec::with_capacity(samples.len() * size * size);
    let mut value = Vec::with_capacity(samples.len());
    for x in samples {
        planes.extend_from_slice(&x.planes);
        policy.extend_from_slice(&x.policy);
        value.push(x.value);
    }
    (
        Tensor::from_slice(&planes)
            .view([n, features::PLANES as i64, s, s])
            .to_device(device),
        Tensor::from_slice(&policy)
            .view([n, s * s])
            .to_device(device),
        Tensor::from_slice(&value).to_device(device),
    )
}

/// (policy cross-entropy, value MSE) of `net` in training mode on one batch.
pub fn losses(net: &Net, x: &Tensor, target_p: &Tensor, target_v: &Tensor) -> (Tensor, Tensor) {
    let (logits, v) = net.forward(x, true);
    let logp = logits.log_softmax(1, Kind::Float);
    let pl = -(target_p * logp)
        .sum_dim_intlist(1, false, Kind::Float)
        .mean(Kind::Float);
    let vl = (v - target_v).square().mean(Kind::Float);
    (pl, vl)
}

fn export(
    dir: &Path,
    net: &Net,
    config: &NetConfig,
    step: u64,
    epoch: u64,
) -> anyhow::Result<PathBuf> {
    let weights = net.export().context("folding BatchNorm for export")?;
    let meta = ModelMeta::for_config(config, step);
    let models = dir.join("models");
    std::fs::create_dir_all(&models).with_context(|| format!("creating {}", models.display()))?;
    let path = models.join(format!("model-{epoch:06}.onnx"));
    write_model_file(&path, &weights, &meta)?;
    write_model_file(models.join("latest.onnx"), &weights, &meta)?;
    Ok(path)
}

pub fn run(s: &Settings) -> anyhow::Result<RunSummary> {
    s.validate()?;
    let threads = if s.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        s.threads
    };
    tch::set_num_threads(threads as i32);
    tch::manual_seed(s.seed as i64);
    let device = resolve(s.device.parse::<DeviceArg>().map_err(anyhow::Error::msg)?)?;
    let preset: Preset = s.model_preset.parse()?;
    let config = preset.config();
    let rule = crate::parse_rule(&s.rule).context("rule")?;
    let dir = s.checkpoint_dir.clone();
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;

    let vs = nn::VarStore::new(device);
    let net = Net::new(&vs.root(), config);
    eprintln!(
        "trainer: device {}; preset {preset}: {} blocks x {} channels, {} trainable parameters ({} after BN folding)",
        describe(device),
        config.blocks,
        config.channels,
        trainable_params(&vs),
        config.param_count()
    );
    let mut opt = Optimizer::new(
        &vs,
        OptimConfig {
            kind: s.optimizer,
            lr: s.lr,
            weight_decay: s.weight_decay,
            momentum: s.momentum,
            ..OptimConfig::default()
        },
    );
    let warn = |m: String| eprintln!("trainer: warning: {m}");
    let mut replay = Replay::open(&dir.join("replay"), s.replay_window, warn)?;
    let mut rng = Rng::new(s.seed);
    let mut summary = RunSummary::default();
    let mut start_epoch = 0u64;
    let mut step = 0u64;
    let mut games_played = 0u64;
    let mut best_epoch = 0u64;
    let mut best_elo = 0.0f64;
    let best = Arc::new(TchNet::evaluator(config, device, "best", 1));
    best.backend().load_from(&vs)?;

    let resume_from: Option<(PathBuf, Checkpoint)> = match s.resume.as_str() {
        "none" | "" => None,
        "auto" => checkpoint::latest_valid(&dir, warn),
        path => Some((PathBuf::from(path), checkpoint::load(Path::new(path))?)),
    };
    if let Some((path, ck)) = resume_from {
        if ck.blocks != config.blocks || ck.channels != config.channels {
            anyhow::bail!(
                "{}: checkpoint is {} ({}x{}), settings ask for {preset}",
                path.display(),
                ck.preset,
                ck.blocks,
                ck.channels
            );
        }
        checkpoint::restore(&vs, &ck.weights)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        opt.load_state(&ck.optimizer, ck.step)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        if !ck.best_weights.is_empty() {
            best.backend().with(|bvs, _| checkpoint::restore(bvs, &ck.best_weights))
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
        if replay.next_chunk() < ck.next_chunk {
            warn(format!(
                "replay folder ends at chunk {} but the checkpoint saw {}: some chunks are gone",
                replay.next_chunk(),
                ck.next_chunk
            ));
        }
        start_epoch = ck.epoch;
        step = ck.step;
        games_played = ck.games_played;
        best_epoch = ck.best_epoch;
        best_elo = ck.best_elo;
        rng = ck.rng.clone();
        eprintln!(
            "trainer: resumed from {} (epoch {}, step {})",
            path.display(),
            ck.epoch,
            ck.step
        );
        summary.resumed_from = Some(path);
    }
    let steps_hint = if s.train_steps > 0 {
        s.train_steps
    } else {
        let per_game = (s.board_size * s.board_size / 3).max(1) as f64;
        ((s.selfplay_games as f64 * per_game * s.sample_reuse) / s.batch_size as f64)
            .ceil()
            .max(1.0) as u64
    };
    opt.config.total_steps = (steps_hint * s.epochs).max(opt.config.warmup_steps + 1);
    opt.config.warmup_steps = opt.config.warmup_steps.min(opt.config.total_steps / 10 + 1);

    let mut metrics = Metrics::open(&dir.join("metrics.jsonl")).context("opening metrics.jsonl")?;
    let player = TchNet::evaluator(config, device, "current", 2);
    let sp_base = SelfPlayConfig::from_settings(s, rule);
    if start_epoch < s.epochs {
        progress::warn_if_slow(&player, &EpochShape::of(&sp_base, s.selfplay_games));
    }

    for epoch in start_epoch + 1..=s.epochs {
        // ---- self-play ----
        player.backend().load_from(&vs)?;
        let sp = SelfPlayConfig {
            seed: s.seed.wrapping_mul(1_000_003).wrapping_add(epoch),
            ..sp_base.clone()
        };
        let mut pb = Progress::new("self-play", s.selfplay_games as u64);
        let plies = progress::expected_plies(s.board_size);
        let report = selfplay::play(&sp, &player, s.selfplay_games, games_played as usize, |st| {
            pb.update(st.games_done as u64, || st.line(plies))
        })?;
        pb.finish();
        games_played += report.games.len() as u64;
        let sp_secs = report.elapsed.as_secs_f64().max(1e-9);
        let (positions, resigned, false_resigns) =
            (report.positions, report.resigned, report.false_resigns);
        let fives = FivePositions::collect(&report.games, 2048);
        let chunk = replay.add_chunk(report.games)?;
        metrics.log(
            "selfplay",
            json!({"epoch": epoch, "games": s.selfplay_games, "positions": positions,
                   "seconds": sp_secs, "positions_per_s": positions as f64 / sp_secs,
                   "games_per_hour": s.selfplay_games as f64 * 3600.0 / sp_secs,
                   "forward_share": report.forward_time.as_secs_f64() / sp_secs,
                   "forwards": report.forwards, "mean_batch": report.leaves as f64 / report.forwards.max(1) as f64,
                   "resigned": resigned, "false_resigns": false_resigns,
                   "chunk": chunk.display().to_string()}),
        )?;

        // ---- training ----
        let steps = if s.train_steps > 0 {
            s.train_steps
        } else {
            ((positions as f64 * s.sample_reuse) / s.batch_size as f64)
                .ceil()
                .max(1.0) as u64
        };
        let mut pb = Progress::new("train", steps);
        let t0 = Instant::now();
        let (mut sum_p, mut sum_v, mut count) = (0.0, 0.0, 0u64);
        for k in 0..steps {
            let mut samples = Vec::with_capacity(s.batch_size);
            for _ in 0..s.batch_size {
                match replay.sample(&mut rng) {
                    Some(Ok(x)) => samples.push(x),
                    Some(Err(e)) => warn(format!("bad replay sample skipped: {e}")),
                    None => break,
                }
            }
            if samples.is_empty() {
                break;
            }
            let (x, tp, tv) = batch_tensors(&samples, s.board_size, device);
            let (pl, vl) = losses(&net, &x, &tp, &tv);
            let loss = &pl + &vl;
            opt.zero_grad();
            loss.backward();
            let lr = opt.step();
            step += 1;
            let (p, v) = (pl.double_value(&[]), vl.double_value(&[]));
            if !p.is_finite() || !v.is_finite() {
                anyhow::bail!(
                    "loss is not finite at step {step} (policy {p}, value {v}): lower --lr"
                );
            }
            sum_p += p;
            sum_v += v;
            count += 1;
            if k % 10 == 0 || k + 1 == steps {
                metrics.log("step", json!({"epoch": epoch, "step": step, "policy_loss": p, "value_loss": v, "lr": lr}))?;
            }
            pb.update(k + 1, || {
                progress::train_line(k + 1, steps, (k as usize + 1) * s.batch_size, t0.elapsed(), (p, v))
            });
        }
        pb.finish();
        let train_secs = t0.elapsed().as_secs_f64().max(1e-9);
        let (mp, mv) = (sum_p / count.max(1) as f64, sum_v / count.max(1) as f64);
        summary.last_policy_loss = mp;
        summary.last_value_loss = mv;
        let samples_per_s = (count as usize * s.batch_size) as f64 / train_secs;
        // The trained network on this epoch's positions with a five for the mover.
        player.backend().load_from(&vs)?;
        let five_prior = fives.measure(&player)?;

        // ---- evaluation ----
        let mut eval_json = serde_json::Value::Null;
        if s.eval_frequency > 0 && epoch % s.eval_frequency == 0 && s.eval_pairs > 0 {
            let current = Arc::new(TchNet::evaluator(
                config,
                device,
                &format!("epoch{epoch}"),
                100 + epoch,
            ));
            current.backend().load_from(&vs)?;
            let mc = MatchConfig {
                board_size: s.board_size,
                rule,
                pairs: s.eval_pairs,
                simulations: s.eval_simulations as u64,
                opening_moves: 2,
                tactics: false,
                workers: s.parallel_workers,
                seed: s.seed ^ epoch,
            };
            let best_dyn: Arc<dyn Evaluator> = best.clone();
            let cur_dyn: Arc<dyn Evaluator> = current.clone();
            let vs_best = play_match(&mc, cur_dyn.clone(), best_dyn)?;
            let vs_uniform = if s.eval_vs_uniform {
                Some(play_match(&mc, cur_dyn, Arc::new(UniformEvaluator))?)
            } else {
                None
            };
            let promoted = vs_best.score() > 0.55;
            let previous_best = best_epoch;
            if promoted {
                best_elo += vs_best.elo;
                best_epoch = epoch;
                current.backend().with(|cvs, _| best.backend().load_from(cvs))?;
            }
            eprintln!(
                "trainer: eval epoch {epoch}: vs best (epoch {}) +{} ={} -{} {}{}{}",
                previous_best,
                vs_best.wins,
                vs_best.draws,
                vs_best.losses,
                vs_best.elo_text(),
                if promoted { " -> promoted" } else { "" },
                vs_uniform
                    .as_ref()
                    .map(|u| format!(
                        "; vs uniform +{} ={} -{} {}",
                        u.wins,
                        u.draws,
                        u.losses,
                        u.elo_text()
                    ))
                    .unwrap_or_default()
            );
            eval_json = json!({"epoch": epoch, "vs_best": vs_best, "vs_uniform": vs_uniform,
                               "promoted": promoted, "best_epoch": best_epoch, "best_elo": best_elo});
            metrics.log("eval", eval_json.clone())?;
            summary.last_vs_uniform = vs_uniform;
        }

        // ---- checkpoint + export ----
        let ck = Checkpoint {
            epoch,
            step,
            preset: preset.name().into(),
            blocks: config.blocks,
            channels: config.channels,
            rng: rng.clone(),
            next_chunk: replay.next_chunk(),
            games_played,
            best_epoch,
            best_elo,
            weights: checkpoint::capture(&vs),
            optimizer: opt.state(),
            best_weights: best.backend().with(|bvs, _| checkpoint::capture(bvs)),
        };
        let ck_path = checkpoint::save(&dir, &ck)?;
        let onnx = export(&dir, &net, &config, step, epoch)?;
        metrics.log(
            "epoch",
            json!({"epoch": epoch, "step": step, "games": games_played, "positions": positions,
                   "window": replay.len(), "policy_loss": mp, "value_loss": mv,
                   "five_prior": five_prior,
                   "selfplay_positions_per_s": positions as f64 / sp_secs,
                   "train_samples_per_s": samples_per_s, "device": describe(device),
                   "checkpoint": ck_path.display().to_string(), "onnx": onnx.display().to_string(),
                   "eval": eval_json}),
        )?;
        // The plot is a convenience: a failure to draw it is reported, never fatal to training.
        let title = format!("fivezero {preset} {}x{} {rule}", s.board_size, s.board_size);
        if let Err(e) = crate::plot::plot_file(
            &dir.join("metrics.jsonl"),
            &dir.join("training.png"),
            &title,
        ) {
            eprintln!("trainer: warning: {e:#}");
        }
        eprintln!(
            "epoch {epoch}/{}: games {games_played} (+{}), positions {positions} (window {}), policy {mp:.4}, value {mv:.4}, \
             prior on own fives {:.3} (top move in {:.0}% of {}), \
             self-play {:.0} pos/s, train {:.0} samples/s, step {step}, device {}",
            s.epochs,
            s.selfplay_games,
            replay.len(),
            five_prior.mean_prior,
            100.0 * five_prior.top_share,
            five_prior.positions,
            positions as f64 / sp_secs,
            samples_per_s,
            describe(device)
        );
        summary.epochs_done = epoch;
    }
    summary.step = step;
    summary.games = games_played;
    Ok(summary)
}
