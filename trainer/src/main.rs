//! `trainer`: the command line over `trainer::run` and the distributed subcommands. Settings come
//! from their defaults, then a profile of a TOML file (`--config trainer/presets.toml --profile
//! train-fast`), then the flags given here; `config::Settings` declares all three at once. Every
//! value is checked, and the run folder against the network it holds, before any work starts.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser};
use trainer::config::{self, Resolved, Settings};

#[derive(Parser, Debug)]
#[command(
    name = "trainer",
    about = "AlphaZero-style self-play and training for fivezero"
)]
struct Cli {
    /// TOML file of named profiles (unknown keys are an error).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Profile (table) of --config to use (default: `default`).
    #[arg(long, requires = "config")]
    profile: Option<String>,
    #[command(flatten)]
    settings: Settings,
    /// Distributed self-play/training over Redis (settings flags go before the subcommand).
    #[command(subcommand)]
    command: Option<trainer::distributed::cli::Command>,
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let resolved = config::resolve(&matches, cli.config.as_deref(), cli.profile.as_deref());
    let result = resolved
        .map_err(anyhow::Error::from)
        .and_then(|r| start(r, cli.command));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("trainer: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn start(r: Resolved, command: Option<trainer::distributed::cli::Command>) -> anyhow::Result<()> {
    for line in &r.overridden {
        eprintln!("trainer: {line}");
    }
    use trainer::distributed::cli::Command;
    if !matches!(
        command,
        Some(Command::SelfplayWorker(_) | Command::Monitor(_))
    ) {
        config::check_run_folder(&r)?;
    }
    if let Some(cmd) = command {
        return trainer::distributed::cli::run(cmd, &r.settings);
    }
    let sum = trainer::run::run(&r.settings)?;
    eprintln!(
        "trainer: done: {} epochs, {} steps, {} games",
        sum.epochs_done, sum.step, sum.games
    );
    Ok(())
}
