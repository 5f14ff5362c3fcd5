//! `trainer`: the command line over `trainer::run`. Settings come from defaults, then a profile of
//! a TOML file (`--config trainer/presets.toml --profile train-fast`), then the flags given here.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use trainer::config::{Settings, load_profile};
use trainer::optim::OptimizerKind;
use trainer::selfplay::Difficulty;

#[derive(Parser, Debug)]
#[command(
    name = "trainer",
    about = "AlphaZero-style self-play and training for fivezero"
)]
struct Cli {
    /// TOML file of named profiles (unknown keys are an error).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Profile (table) of --config to use.
    #[arg(long, requires = "config")]
    profile: Option<String>,
    /// Network size: tiny, small (~1.2M), medium (~3M), large (~4.7M).
    #[arg(long, alias = "preset")]
    model_preset: Option<String>,
    /// easy (pure MCTS) or medium (MCTS + threat-space tactics).
    #[arg(long)]
    difficulty: Option<Difficulty>,
    #[arg(long)]
    mcts_simulations: Option<u32>,
    /// Threads for the tree work of self-play and evaluation games.
    #[arg(long)]
    parallel_workers: Option<usize>,
    /// Games played at once; their leaves share one forward per step.
    #[arg(long)]
    parallel_games: Option<usize>,
    /// Training batch size.
    #[arg(long)]
    batch_size: Option<usize>,
    /// Leaves one game contributes per forward (virtual loss).
    #[arg(long)]
    batch_size_mcts: Option<usize>,
    /// Self-play games per epoch.
    #[arg(long)]
    selfplay_games: Option<usize>,
    #[arg(long)]
    epochs: Option<u64>,
    /// Evaluate against the best network every N epochs (0 = never).
    #[arg(long)]
    eval_frequency: Option<u64>,
    #[arg(long)]
    eval_pairs: Option<usize>,
    #[arg(long)]
    eval_simulations: Option<u32>,
    /// auto (CUDA when available), cpu, cuda or cuda:N.
    #[arg(long)]
    device: Option<String>,
    /// auto (newest valid checkpoint), none, or a checkpoint file.
    #[arg(long)]
    resume: Option<String>,
    #[arg(long)]
    board_size: Option<usize>,
    /// freestyle, standard, renju or caro.
    #[arg(long)]
    rule: Option<String>,
    #[arg(long)]
    checkpoint_dir: Option<PathBuf>,
    #[arg(long)]
    seed: Option<u64>,
    /// sgd (momentum) or adamw.
    #[arg(long)]
    optimizer: Option<OptimizerKind>,
    #[arg(long)]
    lr: Option<f64>,
    #[arg(long)]
    weight_decay: Option<f64>,
    /// Training steps per epoch (0 = from the new positions and --sample-reuse).
    #[arg(long)]
    train_steps: Option<u64>,
    #[arg(long)]
    sample_reuse: Option<f64>,
    #[arg(long)]
    replay_window: Option<usize>,
    /// Torch threads (0 = all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Distributed self-play/training over Redis (settings flags go before the subcommand).
    #[command(subcommand)]
    command: Option<trainer::distributed::cli::Command>,
}

fn settings(cli: Cli) -> anyhow::Result<Settings> {
    let mut s = match (&cli.config, &cli.profile) {
        (Some(path), Some(p)) => load_profile(path, p)?,
        (Some(path), None) => load_profile(path, "default")?,
        _ => Settings::default(),
    };
    macro_rules! over {
        ($($f:ident),*) => { $( if let Some(v) = cli.$f { s.$f = v; } )* };
    }
    over!(
        model_preset,
        difficulty,
        mcts_simulations,
        parallel_workers,
        parallel_games,
        batch_size,
        batch_size_mcts,
        selfplay_games,
        epochs,
        eval_frequency,
        eval_pairs,
        eval_simulations,
        device,
        resume,
        board_size,
        rule,
        checkpoint_dir,
        seed,
        optimizer,
        lr,
        weight_decay,
        train_steps,
        sample_reuse,
        replay_window,
        threads
    );
    s.validate()?;
    Ok(s)
}

fn main() -> ExitCode {
    let mut cli = Cli::parse();
    if let Some(cmd) = cli.command.take() {
        let result = settings(cli).and_then(|s| trainer::distributed::cli::run(cmd, &s));
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("trainer: error: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    let result = settings(cli).and_then(|s| trainer::run::run(&s));
    match result {
        Ok(sum) => {
            eprintln!(
                "trainer: done: {} epochs, {} steps, {} games",
                sum.epochs_done, sum.step, sum.games
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("trainer: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
