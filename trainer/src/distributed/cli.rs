//! The distributed subcommands. Network, board and search settings are the trainer's usual flags,
//! given before the subcommand (`trainer --model-preset tiny --board-size 7 selfplay-worker …`);
//! the subcommands' own flags are declared with the others in `config::commands`.
//!
//! Depends on `config::Settings`, `selfplay_worker`, `train_worker`, `monitor`.

use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;

use super::queue::Queue;
use super::{device_for, monitor, parse_gpus, selfplay_worker, train_worker};
use crate::config::Settings;
use crate::config::commands::{MonitorArgs, SelfplayWorkerArgs, TrainWorkerArgs};
use crate::network::net_eval::onnx_selfplay;
use crate::run::set_threads;
use crate::selfplay::SelfPlayConfig;
use crate::support::device::resolve;

#[derive(Subcommand, Debug, Clone)]
pub enum Command {
    /// Play self-play games with the newest published model and push them to Redis.
    SelfplayWorker(SelfplayWorkerArgs),
    /// Consume games into the replay store, train, publish models every N steps.
    TrainWorker(TrainWorkerArgs),
    /// Queue depth, models, active workers, games pushed/pulled and rates.
    Monitor(MonitorArgs),
}

impl Command {
    /// The workers stop cleanly on SIGINT/SIGTERM (`crate::support::stop`); the monitor keeps the default
    /// action, so Ctrl-C ends it at once.
    pub fn produces_work(&self) -> bool {
        !matches!(self, Command::Monitor(_))
    }
}

pub fn run(cmd: Command, s: &Settings) -> anyhow::Result<()> {
    match cmd {
        Command::SelfplayWorker(a) => selfplay_workers(a, s),
        Command::TrainWorker(a) => train_worker(a, s),
        Command::Monitor(a) => {
            let mut q = Queue::open(&a.redis.redis_url, &a.redis.prefix)?;
            q.redis.backoff.give_up_after = Duration::from_secs(a.redis.give_up_after_s);
            monitor::run(
                &mut q,
                a.once,
                Duration::from_secs_f64(a.interval_s.max(0.2)),
            )?;
            Ok(())
        }
    }
}

/// One self-play worker per device (`--gpus`), or one on `--device`.
fn selfplay_workers(a: SelfplayWorkerArgs, s: &Settings) -> anyhow::Result<()> {
    set_threads(s);
    let devices: Vec<(String, tch::Device)> = match &a.gpus {
        Some(g) => parse_gpus(g)
            .map_err(anyhow::Error::msg)?
            .into_iter()
            .map(|i| (format!("{}-g{i}", a.worker_id), device_for(i)))
            .collect(),
        None => vec![(a.worker_id.clone(), resolve(s.device)?)],
    };
    let base = selfplay_worker::SelfPlayWorkerOptions {
        redis_url: a.redis.redis_url.clone(),
        prefix: a.redis.prefix.clone(),
        worker_id: a.worker_id.clone(),
        selfplay: SelfPlayConfig::from_settings(s),
        batch_games: s.parallel_games,
        model_check_games: a.model_check_games,
        max_games: a.max_games,
        device: tch::Device::Cpu,
        onnx: None,
        heartbeat_ttl: Duration::from_secs(a.heartbeat_ttl_s),
        wait_model: Duration::from_secs(a.wait_model_s),
        give_up_after: Duration::from_secs(a.redis.give_up_after_s),
        max_queue: a.max_queue,
    };
    let workers = devices
        .iter()
        .map(|(id, dev)| {
            Ok(selfplay_worker::SelfPlayWorkerOptions {
                worker_id: id.clone(),
                device: *dev,
                onnx: onnx_selfplay(s, *dev, |m| eprintln!("selfplay-worker {id}: warning: {m}"))?,
                ..base.clone()
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    // SIGINT/SIGTERM: every worker pushes the batch it is playing, then stops.
    let stop = crate::support::stop::flag();
    let results: Vec<_> = std::thread::scope(|sc| {
        let handles: Vec<_> = workers
            .into_iter()
            .map(|o| sc.spawn(move || (o.worker_id.clone(), selfplay_worker::run(&o, stop))))
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    for (id, r) in results {
        let sum = r.with_context(|| format!("selfplay-worker {id}"))?;
        eprintln!(
            "selfplay-worker {id}: {} games, {} positions, model v{} ({} swaps), \
             play {:.1} s, queue {:.1} ms/game, waited for the trainer {:.1} s \
             ({} times), {} reconnects",
            sum.games,
            sum.positions,
            sum.last_model,
            sum.model_swaps,
            sum.play_seconds,
            sum.push_seconds * 1000.0 / sum.games.max(1) as f64,
            sum.queue_wait_seconds,
            sum.queue_waits,
            sum.reconnects
        );
        if let Some(last) = &sum.stopped_unanswered {
            eprintln!(
                "selfplay-worker {id}: stopped while Redis did not answer ({last}): {} games \
                 played and not pushed",
                sum.games_not_pushed
            );
        }
    }
    Ok(())
}

/// The train worker on the first `--gpus` device, or on `--device`.
fn train_worker(a: TrainWorkerArgs, s: &Settings) -> anyhow::Result<()> {
    set_threads(s);
    tch::manual_seed(s.seed as i64);
    let device = match &a.gpus {
        Some(g) => device_for(parse_gpus(g).map_err(anyhow::Error::msg)?[0]),
        None => resolve(s.device)?,
    };
    let o = train_worker::TrainWorkerOptions {
        settings: s.clone(),
        redis_url: a.redis.redis_url,
        prefix: a.redis.prefix,
        consumer: a.consumer,
        device,
        min_positions: a.min_positions,
        publish_every: a.publish_every,
        keep_models: a.keep_models,
        read_count: 64,
        block_ms: 1000,
        claim_idle: Duration::from_secs_f64(a.claim_idle_s.max(0.0)),
        max_steps: a.max_steps,
        max_games: a.max_games,
        exit_when_drained: a.exit_when_drained,
        heartbeat_ttl: Duration::from_secs(a.heartbeat_ttl_s),
        give_up_after: Duration::from_secs(a.redis.give_up_after_s),
    };
    // SIGINT/SIGTERM: the steps since the last publish are checkpointed and published first.
    let sum = train_worker::run(&o, crate::support::stop::flag())?;
    eprintln!(
        "train-worker: {} games ingested, {} duplicates dropped, {} rejected, {} steps, \
         models {:?}, ingest {:.1} ms/game, {} reconnects",
        sum.ingested,
        sum.duplicates,
        sum.rejected,
        sum.steps,
        sum.published,
        sum.ingest_seconds * 1000.0 / sum.ingested.max(1) as f64,
        sum.reconnects
    );
    if let Some(last) = &sum.stopped_unanswered {
        match sum.unpublished_step {
            Some(step) => eprintln!(
                "train-worker: stopped while Redis did not answer ({last}): step {step} is \
                 checkpointed in {} but not published; a restarted train worker publishes it \
                 first",
                o.settings.checkpoint_dir.display()
            ),
            None => eprintln!("train-worker: stopped while Redis did not answer ({last})"),
        }
    }
    Ok(())
}
