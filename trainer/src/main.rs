//! `trainer`: the command line over `trainer::run` and the distributed subcommands. Settings come
//! from their defaults, then a profile of a TOML file (`--config trainer/presets.toml --profile
//! train-fast`), then the flags given here; `config::Settings` declares all three at once. Every
//! value is checked, and the run folder against the network it holds, before any work starts.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches, Parser};
use trainer::config::{self, Resolved, Settings};
use trainer::distributed::cli::Command as Distributed;

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
    /// Without a subcommand: self-play and train (settings flags go before a subcommand).
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Warm start: games of the engine's classical search with tactics, written to the replay
    /// folder of --checkpoint-dir; the next `trainer` run there trains on them first.
    Bootstrap {
        /// Games to play.
        #[arg(long, default_value_t = 256)]
        games: usize,
        /// Fresh playouts per move.
        #[arg(long, default_value_t = 800)]
        visits: u64,
    },
    /// The learning curve: Elo against the classical evaluator by CPU-hours and by games played,
    /// one line per run folder (runs trained with eval_vs_classical), drawn into a PNG.
    Curve {
        /// The PNG to write.
        #[arg(long)]
        out: PathBuf,
        /// Run folders (--checkpoint-dir of each run).
        #[arg(required = true)]
        runs: Vec<PathBuf>,
    },
    /// Plays run folders' saved networks (models/model-NNNNNN.onnx) in the engine against the
    /// engine's classical evaluator at equal time per move, under `fivezero-tools tournament`
    /// (real engine processes, colours swapped over each opening), on each run's rule and size,
    /// and appends each result to the run's equal-time.jsonl for `trainer curve`. Epochs already
    /// there at the same clock are skipped, so an interrupted sweep resumes.
    EqualTime {
        /// Run folders (--checkpoint-dir of each run).
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        #[command(flatten)]
        options: trainer::matches::equal_time::Options,
    },
    /// Starts the run folder --checkpoint-dir, for --rule, from a checkpoint trained on another
    /// rule: the network's weights on the old rule's input plane are copied onto the new one's,
    /// so it starts by playing the new rule as it played the old; epoch, step and optimizer
    /// carry over. Then train there with `--resume auto`.
    TransferRule {
        /// The checkpoint to start from (a `ckpt-NNNNNN.bin` of another run).
        #[arg(long)]
        from: PathBuf,
        /// The rule that checkpoint was trained on.
        #[arg(long)]
        from_rule: engine::game::Rule,
    },
    /// Writes the ONNX file of a checkpoint (as its epoch's export: BatchNorm folded, training-only
    /// heads left out), claiming --rule on --board-size. For a kept checkpoint whose run folder
    /// no longer has its exports; quantize it with `fivezero-tools model quantize`.
    Export {
        /// The checkpoint (`ckpt-NNNNNN.bin`).
        #[arg(long)]
        checkpoint: PathBuf,
        /// The ONNX file to write (replaced atomically).
        #[arg(long)]
        out: PathBuf,
    },
    #[command(flatten)]
    Distributed(Distributed),
}

fn main() -> ExitCode {
    trainer::support::device::load_cuda_early();
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
        Ok(code) => code,
        Err(e) => {
            eprintln!("trainer: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn start(r: Resolved, command: Option<Command>) -> anyhow::Result<ExitCode> {
    for line in &r.overridden {
        eprintln!("trainer: {line}");
    }
    // These read run folders (or none) without taking one over: the curve, equal-time, export,
    // the self-play worker and the monitor.
    let folder_free = matches!(
        command,
        Some(
            Command::Curve { .. }
                | Command::EqualTime { .. }
                | Command::Export { .. }
                | Command::Distributed(Distributed::SelfplayWorker(_) | Distributed::Monitor(_))
        )
    );
    if !folder_free {
        config::check_run_folder(&r)?;
    }
    match command {
        Some(Command::Distributed(cmd)) => {
            if cmd.produces_work() {
                trainer::support::stop::install()?;
            }
            trainer::distributed::cli::run(cmd, &r.settings)?;
            return Ok(stopped_or_success());
        }
        Some(Command::Bootstrap { games, visits }) => {
            trainer::support::stop::install()?;
            trainer::run::set_threads(&r.settings);
            trainer::selfplay::bootstrap::run(&r.settings, games, visits)?;
            return Ok(stopped_or_success());
        }
        Some(Command::Curve { out, runs }) => {
            for c in trainer::matches::curve::draw_runs(&runs, &out)? {
                let last = c.points.last().map_or("no finite Elo".to_string(), |p| {
                    format!(
                        "last finite Elo {:+.0} ± {:.0} at {:.2} CPU-hours, {} games",
                        p.elo, p.error, p.hours, p.games
                    )
                });
                eprintln!(
                    "curve: {}: {} evaluations ({} clean sweeps), {last}; {} games",
                    c.label,
                    c.points.len() + c.sweeps.len(),
                    c.sweeps.len(),
                    c.games
                );
            }
            eprintln!("curve: wrote {}", out.display());
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::EqualTime { runs, options }) => {
            for run in &runs {
                trainer::matches::equal_time::run(run, &options)?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::TransferRule { from, from_rule }) => {
            let s = &r.settings;
            let path = trainer::network::checkpoint::transfer_rule(
                &from,
                from_rule,
                s.rule,
                &s.checkpoint_dir,
            )
            .map_err(anyhow::Error::msg)?;
            eprintln!(
                "transfer-rule: {} ({from_rule}) -> {} ({}); train there with --rule {} --resume auto",
                from.display(),
                path.display(),
                s.rule,
                s.rule
            );
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Export { checkpoint, out }) => {
            let s = &r.settings;
            let bytes = trainer::training::export_checkpoint(
                &checkpoint,
                s.rule,
                s.board_size,
                &mut |m| eprintln!("export: warning: {m}"),
            )?;
            trainer::support::store::write_atomic(&out, &bytes)
                .with_context(|| format!("writing {}", out.display()))?;
            eprintln!(
                "export: {} -> {} ({} bytes, claims {} on {}x{})",
                checkpoint.display(),
                out.display(),
                bytes.len(),
                s.rule,
                s.board_size,
                s.board_size
            );
            return Ok(ExitCode::SUCCESS);
        }
        None => {}
    }
    trainer::support::stop::install()?;
    let sum = trainer::run::run(&r.settings)?;
    if let Some(signal) = sum.stopped_by {
        // Saved, but short of its last epoch: a script must not go on as if it had finished.
        return Ok(ExitCode::from(128 + signal as u8));
    }
    eprintln!(
        "trainer: done: at epoch {}, {} steps, {} games",
        sum.last_epoch, sum.step, sum.games
    );
    Ok(ExitCode::SUCCESS)
}

/// 128 + the signal's number when a stop signal ended the command (its work saved, but short of
/// what was asked: a script must not go on as if it had finished), success otherwise.
fn stopped_or_success() -> ExitCode {
    match trainer::support::stop::requested() {
        Some(signal) => ExitCode::from(128 + signal as u8),
        None => ExitCode::SUCCESS,
    }
}
