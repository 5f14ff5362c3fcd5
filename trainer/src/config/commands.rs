//! The flags of the commands beside training, declared here with the training settings
//! (`Settings`, in `config`) so that every default of the trainer is in one place: `trainer
//! bootstrap`, `trainer equal-time`, the distributed subcommands (`selfplay-worker`,
//! `train-worker`, `monitor`) and the `trainer-eval` program. They are flags only, given after
//! their subcommand; profiles and `settings.toml` hold the training settings alone.

use std::path::PathBuf;

use clap::Args;
use engine::game::Rule;
use engine::openings::OpeningFormat;

// The flags of `trainer bootstrap`: warm-start games of the classical search. (A `///` comment
// here would replace the subcommand's own help text.)
#[derive(Args, Debug, Clone)]
pub struct BootstrapArgs {
    /// Games to play.
    #[arg(long, default_value_t = 256)]
    pub games: usize,
    /// Fresh playouts per move; 0: no search, the expert's own policy (the teacher's, or the
    /// classical evaluator's) is both the move's target and what it is drawn from (distillation
    /// of a network's outputs over many cheap positions; add --value-teacher when training).
    #[arg(long, default_value_t = 800)]
    pub visits: u64,
    /// Search over this network (a model file the engine loads: `models/default.onnx`, say)
    /// instead of the classical evaluator: a new network, of any form, starts from what the
    /// teacher's search plays (distillation from search targets).
    #[arg(long)]
    pub teacher: Option<PathBuf>,
}

/// How the matches are played (the flags of `trainer equal-time`).
#[derive(Clone, Debug, Args)]
pub struct EqualTimeOptions {
    /// Epochs to play (comma-separated); default: every --every-th export and the last.
    #[arg(long, value_delimiter = ',')]
    pub epochs: Vec<u64>,
    #[arg(long, default_value_t = 10)]
    pub every: u64,
    /// Games per epoch (each opening twice, colours swapped).
    #[arg(long, default_value_t = 40)]
    pub games: u32,
    /// Time per move, ms (both engines).
    #[arg(long, default_value_t = 1000)]
    pub turn_ms: u64,
    /// Time per game and engine, ms [default: 60 x --turn-ms].
    #[arg(long)]
    pub match_ms: Option<u64>,
    /// Games played at the same time (each a pair of engine processes; one core each).
    #[arg(long, default_value_t = 2)]
    pub concurrency: u32,
    #[arg(long, default_value = "tools/openings/balanced-3stone.txt")]
    pub openings: PathBuf,
    /// Memory limit per engine (Gomocup's is 350 MiB).
    #[arg(long, default_value = "350M")]
    pub max_memory: String,
    /// Where pbrain-fivezero and fivezero-tools are [default: this program's folder].
    #[arg(long)]
    pub bin_dir: Option<PathBuf>,
}

// The Redis connection of the distributed subcommands.
#[derive(Args, Debug, Clone)]
pub struct RedisArgs {
    /// redis://[:password@]host:port[/db], rediss:// for TLS, redis+unix:///path.
    #[arg(long)]
    pub redis_url: String,
    /// Key prefix (separate runs can share one Redis).
    #[arg(long, default_value = "fz")]
    pub prefix: String,
    /// Give up when Redis stays unreachable this long.
    #[arg(long, alias = "give-up-after", default_value_t = 300)]
    pub give_up_after_s: u64,
}

#[derive(Args, Debug, Clone)]
pub struct SelfplayWorkerArgs {
    #[command(flatten)]
    pub redis: RedisArgs,
    #[arg(long)]
    pub worker_id: String,
    /// Look for a newer model every N games (swapped between batches).
    #[arg(long, default_value_t = 8)]
    pub model_check_games: usize,
    /// Stop after N games (per device); default: run until killed.
    #[arg(long)]
    pub max_games: Option<u64>,
    /// Devices to play on, one worker each (`<id>-g<k>`); CPU workers when CUDA is absent.
    #[arg(long)]
    pub gpus: Option<String>,
    /// The worker counts as gone when its heartbeat is this old.
    #[arg(long, alias = "heartbeat-ttl", default_value_t = 30)]
    pub heartbeat_ttl_s: u64,
    /// How long to wait for the first model.
    #[arg(long, alias = "wait-model", default_value_t = 600)]
    pub wait_model_s: u64,
    /// Backpressure: before each batch, wait (polling every 0.5 s) while the games stream
    /// holds N games or more, so a trainer that ingests slower than the workers produce
    /// never runs Redis out of memory; no game is ever dropped. The check is per batch, so
    /// the queue can overshoot N by at most one batch (--parallel-games) per worker.
    /// 0 disables the limit.
    #[arg(long, default_value_t = 20_000)]
    pub max_queue: u64,
}

#[derive(Args, Debug, Clone)]
pub struct TrainWorkerArgs {
    #[command(flatten)]
    pub redis: RedisArgs,
    /// Consumer name in the group (reuse it after a restart).
    #[arg(long, default_value = "train-0")]
    pub consumer: String,
    #[arg(long, default_value_t = 200)]
    pub publish_every: u64,
    #[arg(long, default_value_t = 5)]
    pub keep_models: usize,
    /// Train only once the replay window holds this many positions.
    #[arg(long, default_value_t = 512)]
    pub min_positions: usize,
    /// Reclaim entries left unacknowledged by a dead consumer after this long.
    #[arg(long, alias = "claim-idle", default_value_t = 60.0)]
    pub claim_idle_s: f64,
    #[arg(long)]
    pub max_steps: Option<u64>,
    #[arg(long)]
    pub max_games: Option<u64>,
    /// Exit once the stream has nothing more for this consumer.
    #[arg(long)]
    pub exit_when_drained: bool,
    /// Train on the first listed device (CPU when CUDA is absent).
    #[arg(long)]
    pub gpus: Option<String>,
    /// The worker counts as gone when its heartbeat is this old.
    #[arg(long, alias = "heartbeat-ttl", default_value_t = 30)]
    pub heartbeat_ttl_s: u64,
}

#[derive(Args, Debug, Clone)]
pub struct MonitorArgs {
    #[command(flatten)]
    pub redis: RedisArgs,
    /// Print one snapshot and exit.
    #[arg(long)]
    pub once: bool,
    /// Seconds between snapshots.
    #[arg(long, alias = "interval", default_value_t = 2.0)]
    pub interval_s: f64,
}

// The flags of `trainer-eval`: the final network of a run against the uniform and classical
// evaluators at equal visits; board, rule, run folder and visits default to the profile's.
#[derive(Args, Debug, Clone)]
pub struct EvalArgs {
    /// TOML file of training profiles (board, rule, run folder and visits come from it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    #[arg(long, requires = "config")]
    pub profile: Option<String>,
    /// The ONNX model (default: <checkpoint_dir>/models/latest.onnx).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Board size (default: the profile's).
    #[arg(long)]
    pub board_size: Option<usize>,
    /// freestyle, standard, renju or caro (default: the profile's).
    #[arg(long)]
    pub rule: Option<Rule>,
    /// Opening pairs per opponent (each opening with both colours: 2 games per pair).
    #[arg(long, default_value_t = 50)]
    pub pairs: usize,
    /// Openings from this file (the tournament manager's format, e.g.
    /// tools/openings/balanced-3stone.txt) instead of random ones: pair i plays opening i mod n,
    /// turned by board symmetry once the file is used up (at most 8n pairs). Default: the
    /// profile's eval_openings, else random openings of eval_opening_moves stones.
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// How the openings file writes points: auto, offset, absolute or algebraic.
    #[arg(long, value_enum, default_value_t = OpeningFormat::Auto)]
    pub openings_format: OpeningFormat,
    /// Visits per move for both sides (default: the profile's eval_simulations).
    #[arg(long)]
    pub simulations: Option<u64>,
    /// Opponents, comma separated: uniform, classical, or another network's .onnx file (two
    /// runs' models head to head).
    #[arg(long, default_value = "uniform,classical")]
    pub against: String,
    /// Threat-space search on both sides as the engine's `--difficulty medium` runs it (VCF/VCT
    /// at the root, VCF at new leaves with the profile's vcf_budget_nodes): closer to a timed
    /// match, where tactics settle many positions whatever the network says. Off by default:
    /// the match then measures the networks alone.
    #[arg(long)]
    pub tactics: bool,
    /// Games played at once (threads).
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    #[arg(long, default_value_t = 12345)]
    pub seed: u64,
    /// Where the JSON summary goes (default: <checkpoint_dir>/proof.json when the model is the
    /// run's own; with --model and no --json, no file is written).
    #[arg(long)]
    pub json: Option<PathBuf>,
}
