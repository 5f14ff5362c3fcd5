//! `fivezero-tools`: the manager side of fivezero: tournaments, Elo and SPRT on given counts,
//! tactics suites (running and mining them) and model files (inspect, write, quantize, compare,
//! claim, bench). Adding a subcommand = one `Cmd` variant + one module of the library with
//! `Args`/`run`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "fivezero-tools",
    version,
    about = "fivezero tools: tournaments, Elo/SPRT, tactics suites, model files"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Play Gomocup engines against each other (round-robin or gauntlet) with Elo and SPRT.
    Tournament(Box<tools::tournament::Args>),
    /// Elo, error bar, LOS and SPRT for given win/draw/loss counts.
    Elo(tools::elo::Args),
    /// Run tactics suites (VCF/VCT/defence positions) through the engine's threat-space search.
    Tactics(tools::tactics::Args),
    /// Mine a verified tactics suite from self-play (thread count and time budget as arguments).
    MineTactics(tools::mine::Args),
    /// Model files: `info FILE` (metadata, sizes, a load and probe check), `random` (a new one).
    Model(tools::model::Args),
    /// Figures of the engine under a manager, measured and printed: `startup` (spawn → START → OK,
    /// a game's slowest reply and peak memory), `reload` (checkpoint landing → loaded, → first move).
    Bench(tools::measure::Args),
    /// An independent judge (Rapfi, an external program) for the threat search: `positions` from
    /// game records, `label` them at a fixed node budget into a tactics suite, `compare` the
    /// engine's threat search with the labels.
    Judge(tools::judge::Args),
}

fn main() -> ExitCode {
    let result = match Cli::parse().cmd {
        Cmd::Tournament(a) => match tools::tournament::run(*a) {
            // 130 = 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C, so a
            // script does not take a cut-short match for a finished one.
            Ok(summary) if summary.interrupted => return ExitCode::from(130),
            other => other.map(|_| ()),
        },
        Cmd::Elo(a) => tools::elo::run(a),
        Cmd::Tactics(a) => tools::tactics::run(a),
        Cmd::MineTactics(a) => tools::mine::run(a),
        Cmd::Model(a) => tools::model::run(a),
        Cmd::Bench(a) => tools::measure::run(a),
        Cmd::Judge(a) => tools::judge::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fivezero-tools: error: {e}");
            ExitCode::from(2)
        }
    }
}
