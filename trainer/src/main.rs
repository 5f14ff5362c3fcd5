//! `trainer`: the command line over `trainer::run` and the distributed subcommands. Settings come
//! from their defaults, then a profile of a TOML file (`--config trainer/presets.toml --profile
//! train-fast`), then the flags given here; `config::Settings` declares all three at once. Every
//! value is checked, and the run folder against the network it holds, before any work starts.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches, Parser};
use trainer::config::commands::{BootstrapArgs, EqualTimeOptions};
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
    /// Warm start: games of the engine's classical search with tactics (or, with --teacher, of
    /// a trained network's search), written to the replay folder of --checkpoint-dir; the next
    /// `trainer` run there trains on them first.
    Bootstrap(BootstrapArgs),
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
        options: EqualTimeOptions,
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
    trainer::support::allocator::keep_freed_memory();
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
    if takes_over_the_run_folder(&command) {
        config::check_run_folder(&r)?;
    }
    let s = &r.settings;
    match command {
        Some(Command::Distributed(cmd)) => {
            if cmd.produces_work() {
                trainer::support::stop::install()?;
            }
            trainer::distributed::cli::run(cmd, s)?;
            Ok(stopped_or_success())
        }
        Some(Command::Bootstrap(BootstrapArgs {
            games,
            visits,
            teacher,
        })) => {
            trainer::support::stop::install()?;
            trainer::run::set_threads(s);
            trainer::selfplay::bootstrap::run(s, games, visits, teacher.as_deref())?;
            Ok(stopped_or_success())
        }
        Some(Command::Curve { out, runs }) => curve(&runs, &out),
        Some(Command::EqualTime { runs, options }) => {
            for run in &runs {
                trainer::matches::equal_time::run(run, &options)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::TransferRule { from, from_rule }) => transfer_rule(s, &from, from_rule),
        Some(Command::Export { checkpoint, out }) => export(s, &checkpoint, &out),
        None => train(s),
    }
}

/// Whether `command` writes into the run folder (so its settings are checked against the
/// folder's, and recorded there): all but the curve, equal-time, export, the self-play worker
/// and the monitor, which read run folders (or none) without taking one over.
fn takes_over_the_run_folder(command: &Option<Command>) -> bool {
    !matches!(
        command,
        Some(
            Command::Curve { .. }
                | Command::EqualTime { .. }
                | Command::Export { .. }
                | Command::Distributed(Distributed::SelfplayWorker(_) | Distributed::Monitor(_))
        )
    )
}

/// The training run itself (no subcommand).
fn train(s: &Settings) -> anyhow::Result<ExitCode> {
    trainer::support::stop::install()?;
    let sum = trainer::run::run(s)?;
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

/// `trainer curve`: draws the runs' curves into `out` and says what each one shows.
fn curve(runs: &[PathBuf], out: &Path) -> anyhow::Result<ExitCode> {
    for c in trainer::matches::curve::draw_runs(runs, out)? {
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
    Ok(ExitCode::SUCCESS)
}

/// `trainer transfer-rule`: the run folder starts from a checkpoint of another rule.
fn transfer_rule(
    s: &Settings,
    from: &Path,
    from_rule: engine::game::Rule,
) -> anyhow::Result<ExitCode> {
    let path =
        trainer::network::checkpoint::transfer_rule(from, from_rule, s.rule, &s.checkpoint_dir)
            .map_err(anyhow::Error::msg)?;
    eprintln!(
        "transfer-rule: {} ({from_rule}) -> {} ({}); train there with --rule {} --resume auto",
        from.display(),
        path.display(),
        s.rule,
        s.rule
    );
    Ok(ExitCode::SUCCESS)
}

/// `trainer export`: a checkpoint's ONNX file, claiming the settings' rule and board.
fn export(s: &Settings, checkpoint: &Path, out: &Path) -> anyhow::Result<ExitCode> {
    let bytes = trainer::training::export_checkpoint(checkpoint, s.rule, s.board_size, &mut |m| {
        eprintln!("export: warning: {m}")
    })?;
    trainer::support::store::write_atomic(out, &bytes)
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
