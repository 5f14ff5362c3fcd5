//! `trainer-eval`: the final network of a run, loaded in the engine (its ONNX file through the
//! engine's ONNX Runtime evaluator), against the same engine search over the uniform evaluator
//! and over the classical evaluator, at equal visits per move (`trainer::matches::arena`: seeded random
//! openings or those of a file, `--openings` or else the profile's `eval_openings`, each played
//! twice with colours swapped, no noise, sequential MCTS on both sides, threat search on both with
//! `--tactics`). Prints W-D-L, score, Elo with its 95% interval and the opening pairs by points
//! per opponent, and writes them as JSON.
//!
//! Settings (board, rule, run folder, visits) come from the same profile as the training run, so
//! `make train-proof` evaluates exactly what it trained. Depends on `trainer::{config, matches::arena}` and
//! `engine::{eval, openings}`; never on tch.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use engine::eval::Evaluator;
use engine::eval::UniformEvaluator;
use engine::eval::classical::ClassicalEvaluator;
use engine::eval::network::LoadConfig;
use engine::eval::onnx::Device;
use engine::eval::onnx_evaluator::OnnxEvaluator;
use engine::game::Pos;
use trainer::config::commands::EvalArgs;
use trainer::config::{Settings, load_profile};
use trainer::matches::arena::{MatchConfig, MatchResult, openings_from_file, play_match};

#[derive(Parser, Debug)]
#[command(
    name = "trainer-eval",
    about = "The trained network in the engine vs the uniform and classical evaluators at equal visits"
)]
struct Cli {
    #[command(flatten)]
    args: EvalArgs,
}

/// A network in the engine's ONNX Runtime evaluator, one session per game played at once.
fn load_net(path: &Path, workers: usize) -> anyhow::Result<Arc<dyn Evaluator>> {
    let config = LoadConfig {
        sessions: workers,
        threads_intra: 1,
        device: Device::Cpu,
        batch: 1,
        // Exact answers, so the results are those without it; many games share their openings.
        cache_entries: 1 << 16,
    };
    let net = OnnxEvaluator::load(path, config)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(Arc::new(net))
}

fn opponent(name: &str, workers: usize) -> anyhow::Result<Arc<dyn Evaluator>> {
    match name.trim() {
        "uniform" => Ok(Arc::new(UniformEvaluator)),
        "classical" => Ok(Arc::new(ClassicalEvaluator)),
        other if other.ends_with(".onnx") => load_net(Path::new(other), workers),
        other => anyhow::bail!(
            "unknown opponent `{other}` (expected uniform, classical or an .onnx file)"
        ),
    }
}

fn line(name: &str, r: &MatchResult, games: usize, secs: f64) -> String {
    let elo = r.elo_text();
    format!(
        "vs {name:<9} +{} ={} -{} over {games} games: score {:.1}%, {elo}; {} [{secs:.0} s]",
        r.wins,
        r.draws,
        r.losses,
        100.0 * r.score(),
        r.pairs_text(),
    )
}

/// The profile's settings with this command's --board-size and --rule on top.
fn settings(cli: &EvalArgs) -> anyhow::Result<Settings> {
    let mut s = match (&cli.config, &cli.profile) {
        (Some(path), Some(p)) => load_profile(path, p)?,
        (Some(path), None) => load_profile(path, "default")?,
        _ => Settings::default(),
    };
    if let Some(n) = cli.board_size {
        s.board_size = n;
    }
    if let Some(r) = cli.rule {
        s.rule = r;
    }
    let sizes = engine::game::MIN_SIZE..=engine::game::MAX_SIZE;
    if !sizes.contains(&s.board_size) {
        anyhow::bail!("--board-size {} is outside {sizes:?}", s.board_size);
    }
    Ok(s)
}

/// The openings file the match plays: --openings, else the profile's `eval_openings`.
fn openings_file(cli: &EvalArgs, s: &Settings) -> Option<PathBuf> {
    cli.openings.clone().or_else(|| s.eval_openings.clone())
}

/// The match against each opponent: the profile's board, rule and evaluation settings with this
/// command's pairs, visits, tactics, workers and seed.
fn match_config(cli: &EvalArgs, s: &Settings, openings: Vec<Vec<Pos>>) -> MatchConfig {
    MatchConfig {
        board_size: s.board_size,
        rule: s.rule,
        pairs: cli.pairs.max(1),
        simulations: cli.simulations.unwrap_or(s.eval_simulations as u64).max(1),
        opening_moves: s.eval_opening_moves,
        openings,
        tactics: cli.tactics,
        vcf_budget_nodes: s.vcf_budget_nodes,
        workers: cli.workers.max(1),
        seed: cli.seed,
    }
}

fn run(cli: EvalArgs) -> anyhow::Result<()> {
    let s = settings(&cli)?;
    let rule = s.rule;
    let model = cli
        .model
        .clone()
        .unwrap_or_else(|| s.checkpoint_dir.join("models").join("latest.onnx"));
    let workers = cli.workers.max(1);
    let openings_file = openings_file(&cli, &s);
    let fixed_openings = match &openings_file {
        Some(path) => openings_from_file(path, cli.openings_format, s.board_size, rule)?,
        None => Vec::new(),
    };
    let net = load_net(&model, workers)?;
    let mc = match_config(&cli, &s, fixed_openings);
    let simulations = mc.simulations;
    let from = match &openings_file {
        Some(p) => format!("openings of {}", p.display()),
        None => format!("random {}-stone openings", mc.opening_moves),
    };
    let tactics = if mc.tactics { ", tactics on" } else { "" };
    println!(
        "trainer-eval: {} in the engine, {}x{} {rule}, {simulations} visits/move for both sides{tactics}, {} games per opponent from {from}",
        model.display(),
        s.board_size,
        s.board_size,
        2 * mc.pairs
    );
    let mut results = serde_json::Map::new();
    for name in cli.against.split(',').filter(|n| !n.trim().is_empty()) {
        let opp = opponent(name, workers)?;
        let t0 = Instant::now();
        let r = play_match(&mc, net.clone(), opp)?;
        let secs = t0.elapsed().as_secs_f64();
        let (lo, hi) = stats::wilson_bounds(&(r.wins, r.draws, r.losses).into());
        // JSON has no infinity: an open end of the interval is written as null.
        let finite = |x: f64| if x.is_finite() { Some(x) } else { None };
        println!("{}", line(name.trim(), &r, 2 * mc.pairs, secs));
        results.insert(
            name.trim().to_string(),
            serde_json::json!({"wins": r.wins, "draws": r.draws, "losses": r.losses,
                               "score": r.score(), "elo": r.elo, "elo_error_95": r.elo_error,
                               "elo_wilson_95": [finite(lo), finite(hi)],
                               "pairs_by_points": r.pairs_by_points,
                               "games": 2 * mc.pairs, "seconds": secs}),
        );
    }
    // The run folder's proof.json belongs to the run's own model: a file compared from
    // elsewhere must not overwrite it, so that summary goes only where --json says.
    let out = match (&cli.json, &cli.model) {
        (Some(path), _) => path.clone(),
        (None, None) => s.checkpoint_dir.join("proof.json"),
        (None, Some(_)) => {
            println!("trainer-eval: no summary file written (--json FILE keeps one)");
            return Ok(());
        }
    };
    let doc = serde_json::json!({
        "model": model.display().to_string(), "board_size": s.board_size, "rule": s.rule,
        "visits_per_move": simulations, "tactics": mc.tactics, "pairs": mc.pairs, "seed": cli.seed,
        "openings": openings_file.as_ref().map(|p| p.display().to_string()), "results": results,
    });
    // The folder --json names may not exist yet: the games just played must not end in an error.
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(&out, serde_json::to_string_pretty(&doc)? + "\n")
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", out.display()))?;
    println!("trainer-eval: summary in {}", out.display());
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse().args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("trainer-eval: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
