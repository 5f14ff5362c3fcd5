//! The distributed subcommands. Network, board and search settings are the trainer's usual flags,
//! given before the subcommand (`trainer --model-preset tiny --board-size 7 selfplay-worker …`);
//! the flags here are the distributed ones.
//!
//! Depends on `config::Settings`, `selfplay_worker`, `train_worker`, `monitor`.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Subcommand};
use engine::net::Preset;

use super::queue::Queue;
use super::{device_for, monitor, parse_gpus, selfplay_worker, train_worker};
use crate::config::Settings;
use crate::device::{DeviceArg, resolve};
use crate::selfplay::SelfPlayConfig;

#[derive(Args, Debug, Clone)]
pub struct RedisArgs {
    /// redis://[:password@]host:port[/db], rediss:// for TLS, redis+unix:///path.
    #[arg(long)]
    pub redis_url: String,
    /// Key prefix (separate runs can share one Redis).
    #[arg(long, default_value = "fz")]
    pub prefix: String,
    /// Give up when Redis stays unreachable this long (seconds).
    #[arg(long, default_value_t = 300)]
    pub give_up_after: u64,
}

#[derive(Subcommand, Debug, Clone)]
pub enum Command {
    /// Play self-play games with the newest published model and push them to Redis.
    SelfplayWorker {
        #[command(flatten)]
        redis: RedisArgs,
        #[arg(long)]
        worker_id: String,
        /// Look for a newer model every N games (swapped between batches).
        #[arg(long, default_value_t = 8)]
        model_check_games: usize,
        /// Stop after N games (per device); default: run until killed.
        #[arg(long)]
        max_games: Option<u64>,
        /// Devices to play on, one worker each (`<id>-g<k>`); CPU workers when CUDA is absent.
        #[arg(long)]
        gpus: Option<String>,
        #[arg(long, default_value_t = 30)]
        heartbeat_ttl: u64,
        /// Seconds to wait for the first model.
        #[arg(long, default_value_t = 600)]
        wait_model: u64,
        /// Backpressure: before each batch, wait (polling every 0.5 s) while the games stream
        /// holds N games or more, so a trainer that ingests slower than the workers produce
        /// never runs Redis out of memory; no game is ever dropped. The check is per batch, so
        /// the queue can overshoot N by at most one batch (--parallel-games) per worker.
        /// 0 disables the limit.
        #[arg(long, default_value_t = 20_000)]
        max_queue: u64,
    },
    /// Consume games into the replay store, train, publish models every N steps.
    TrainWorker {
        #[command(flatten)]
        redis: RedisArgs,
        /// Consumer name in the group (reuse it after a restart).
        #[arg(long, default_value = "train-0")]
        consumer: String,
        #[arg(long, default_value_t = 200)]
        publish_every: u64,
        #[arg(long, default_value_t = 5)]
        keep_models: usize,
        /// Train only once the replay window holds this many positions.
        #[arg(long, default_value_t = 512)]
        min_positions: usize,
        /// Reclaim entries left unacknowledged by a dead consumer after this many seconds.
        #[arg(long, default_value_t = 60.0)]
        claim_idle: f64,
        #[arg(long)]
        max_steps: Option<u64>,
        #[arg(long)]
        max_games: Option<u64>,
        /// Exit once the stream has nothing more for this consumer.
        #[arg(long)]
        exit_when_drained: bool,
        /// Train on the first listed device (CPU when CUDA is absent).
        #[arg(long)]
        gpus: Option<String>,
        #[arg(long, default_value_t = 30)]
        heartbeat_ttl: u64,
    },
    /// Queue depth, models, active workers, games pushed/pulled and rates.
    Monitor {
        #[command(flatten)]
        redis: RedisArgs,
        /// Print one snapshot and exit.
        #[arg(long)]
        once: bool,
        #[arg(long, default_value_t = 2.0)]
        interval: f64,
    },
}

fn threads(s: &Settings) {
    let n = if s.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        s.threads
    };
    tch::set_num_threads(n as i32);
}

pub fn run(cmd: Command, s: &Settings) -> anyhow::Result<()> {
    let stop = AtomicBool::new(false);
    match cmd {
        Command::SelfplayWorker {
            redis,
            worker_id,
            model_check_games,
            max_games,
            gpus,
            heartbeat_ttl,
            wait_model,
            max_queue,
        } => {
            threads(s);
            let rule = crate::parse_rule(&s.rule).context("rule")?;
            let devices: Vec<(String, tch::Device)> = match gpus {
                Some(g) => parse_gpus(&g)
                    .map_err(anyhow::Error::msg)?
                    .into_iter()
                    .map(|i| (format!("{worker_id}-g{i}"), device_for(i)))
                    .collect(),
                None => vec![(
                    worker_id.clone(),
                    resolve(s.device.parse::<DeviceArg>().map_err(anyhow::Error::msg)?)?,
                )],
            };
            let base = selfplay_worker::SelfPlayWorkerOptions {
                redis_url: redis.redis_url.clone(),
                prefix: redis.prefix.clone(),
                worker_id: worker_id.clone(),
                selfplay: SelfPlayConfig::from_settings(&s, rule),
                batch_games: s.parallel_games,
                model_check_games,
                max_games,
                device: tch::Device::Cpu,
                heartbeat_ttl: Duration::from_secs(heartbeat_ttl),
                wait_model: Duration::from_secs(wait_model),
                give_up_after: Duration::from_secs(redis.give_up_after),
                max_queue,
            };
            let results: Vec<_> = std::thread::scope(|sc| {
                let handles: Vec<_> = devices
                    .iter()
                    .map(|(id, dev)| {
                        let o = selfplay_worker::SelfPlayWorkerOptions {
                            worker_id: id.clone(),
                            device: *dev,
                            ..base.clone()
                        };
                        let stop = &stop;
                        sc.spawn(move || (o.worker_id.clone(), selfplay_worker::run(&o, stop)))
                    })
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
            }
            Ok(())
        }
        Command::TrainWorker {
            redis,
            consumer,
            publish_every,
            keep_models,
            min_positions,
            claim_idle,
            max_steps,
            max_games,
            exit_when_drained,
            gpus,
            heartbeat_ttl,
        } => {
            threads(s);
            tch::manual_seed(s.seed as i64);
            let device = match gpus {
                Some(g) => device_for(parse_gpus(&g).map_err(anyhow::Error::msg)?[0]),
                None => resolve(s.device.parse::<DeviceArg>().map_err(anyhow::Error::msg)?)?,
            };
            let preset: Preset = s.model_preset.parse()?;
            let o = train_worker::TrainWorkerOptions {
                redis_url: redis.redis_url,
                prefix: redis.prefix,
                consumer,
                dir: s.checkpoint_dir.clone(),
                preset,
                board_size: s.board_size,
                device,
                seed: s.seed,
                batch_size: s.batch_size,
                optimizer: s.optimizer,
                lr: s.lr,
                weight_decay: s.weight_decay,
                replay_window: s.replay_window,
                sample_reuse: s.sample_reuse,
                min_positions,
                publish_every,
                keep_models,
                read_count: 64,
                block_ms: 1000,
                claim_idle: Duration::from_secs_f64(claim_idle.max(0.0)),
                max_steps,
                max_games,
                exit_when_drained,
                heartbeat_ttl: Duration::from_secs(heartbeat_ttl),
                give_up_after: Duration::from_secs(redis.give_up_after),
            };
            let sum = train_worker::run(&o, &stop)?;
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
            Ok(())
        }
        Command::Monitor {
            redis,
            once,
            interval,
        } => {
            let mut q = Queue::open(&redis.redis_url, &redis.prefix)?;
            q.redis.backoff.give_up_after = Duration::from_secs(redis.give_up_after);
            monitor::run(&mut q, once, Duration::from_secs_f64(interval.max(0.2)))?;
            Ok(())
        }
    }
}
