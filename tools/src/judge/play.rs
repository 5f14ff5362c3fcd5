//! `judge play`: the whole engine (threat search and tree search, as it plays in a game) moves in
//! each position of a judged suite within its time per move, and Rapfi judges that move: a win
//! is kept when Rapfi then finds the opponent mated, a defence holds when Rapfi then finds no
//! mate for the attacker. It prints solved/total and the time to the move (median and 95th
//! percentile) beside Rapfi's time to its proof, per suite file, rule and label.
//!
//! `lost` entries have no move to judge (every move loses) and are only counted.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use engine::brain::{Engine, EngineConfig, ModelSource};
use engine::game::Board;
use engine::time::TimeLimits;
use engine::tss::suite::{self, Expect, Position};

use super::compare::{JudgeNote, judge_notes, percentile};
use super::{Eval, Rapfi};

#[derive(Debug, clap::Args)]
pub struct PlayArgs {
    /// Judged suite files (`judge label` output).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Rapfi's Gomocup brain, which judges each move (see `judge label`).
    #[arg(long)]
    pub rapfi: PathBuf,
    /// The engine's time per move (its turn limit, as a manager sends it), ms.
    #[arg(long, default_value_t = 1000)]
    pub time_ms: u64,
    /// The engine's networks: `embedded` (what pbrain-fivezero plays), `none`, or a file.
    #[arg(long, default_value = "embedded")]
    pub model: ModelSource,
    /// The engine's search threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Rapfi's nodes to judge one move (the labels' budget by default).
    #[arg(long, default_value_t = 500_000)]
    pub nodes: u64,
    /// Wall-clock limit of Rapfi per move, seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout_s: u64,
    /// Print only the summary.
    #[arg(long)]
    pub quiet: bool,
}

/// One suite file, rule and label's results.
#[derive(Default)]
struct Row {
    solved: usize,
    total: usize,
    /// The engine's time to its move on the solved positions.
    engine_ms: Vec<u64>,
    /// Rapfi's time to its proof (the threat's for must-defend) on every position.
    judge_ms: Vec<u64>,
}

pub(super) fn play(a: PlayArgs) -> Result<(), String> {
    let mut engine = Engine::new(EngineConfig {
        model: a.model.clone(),
        threads: a.threads.max(1),
        ..EngineConfig::default()
    });
    engine.limits = TimeLimits {
        timeout_turn_ms: Some(a.time_ms as i64),
        timeout_match_ms: None,
        time_left_ms: None,
    };
    let timeout = Duration::from_secs(a.timeout_s);
    let mut rapfi = Rapfi::start(&a.rapfi, timeout)?;
    let mut rows: BTreeMap<(String, String, &'static str), Row> = BTreeMap::new();
    let (mut lost, mut crashed) = (0, 0);
    for file in &a.files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let positions = suite::parse(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let notes = judge_notes(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let part = file.file_stem().unwrap_or_default().to_string_lossy();
        for pos in &positions {
            let at = |e: String| format!("{} line {}: {e}", file.display(), pos.line);
            let kind = match pos.expect {
                Expect::WinVct | Expect::WinVcf => "win",
                Expect::MustDefend(_) => "must-defend",
                Expect::Lost => {
                    lost += 1;
                    continue;
                }
                _ => {
                    return Err(at(
                        "only win, must-defend and lost entries are judged".into()
                    ));
                }
            };
            let (after, elapsed) = engine_move(&mut engine, pos).map_err(at)?;
            let holds = match after.winner() {
                Some(_) => true,
                None => match rapfi.judge_or_restart(&after, a.nodes, false).map_err(at)? {
                    None => {
                        eprintln!("{}", at("Rapfi died judging the engine's move".into()));
                        crashed += 1;
                        continue;
                    }
                    Some(v) if kind == "win" => matches!(v.eval, Eval::Loss(_)),
                    Some(v) => !matches!(v.eval, Eval::Win(_)),
                },
            };
            let note = notes.get(&pos.name).cloned().unwrap_or_default();
            if !a.quiet {
                print_line(pos, kind, holds, &after, elapsed, &note);
            }
            let row = rows
                .entry((part.to_string(), pos.board.rule().to_string(), kind))
                .or_default();
            row.total += 1;
            row.judge_ms.push(note.proof_ms);
            if holds {
                row.solved += 1;
                row.engine_ms.push(elapsed.as_millis() as u64);
            }
        }
    }
    rapfi.quit();
    print_summary(&a, &rows, lost, crashed);
    Ok(())
}

/// The engine's move in `pos`, thought as in a game: the board after it and the time it took.
fn engine_move(engine: &mut Engine, pos: &Position) -> Result<(Board, Duration), String> {
    let b = &pos.board;
    if pos.to_move != b.side_to_move() {
        return Err("a position with passes cannot be played through the engine".into());
    }
    engine.set_rule(b.rule());
    engine
        .start(b.width(), b.height())
        .map_err(|e| e.to_string())?;
    for (p, _) in b.history() {
        engine
            .opponent_move(p.x() as i64, p.y() as i64)
            .map_err(|e| e.to_string())?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let info = engine
        .think(Instant::now(), &stop)
        .map_err(|e| format!("the engine did not move: {e}"))?;
    let mut after = b.clone();
    after.play(info.best).map_err(|e| e.to_string())?;
    Ok((after, info.elapsed))
}

fn print_line(
    pos: &Position,
    kind: &str,
    holds: bool,
    after: &Board,
    elapsed: Duration,
    note: &JudgeNote,
) {
    let mv = after
        .history()
        .last()
        .map(|(p, _)| p.to_string())
        .unwrap_or_default();
    println!(
        "{:<5} {:<40} {:<11} move {:<4} {:>7.0} ms  | judge proof {} ms",
        if holds { "ok" } else { "MISS" },
        pos.name,
        kind,
        mv,
        elapsed.as_secs_f64() * 1e3,
        note.proof_ms,
    );
}

fn print_summary(
    a: &PlayArgs,
    rows: &BTreeMap<(String, String, &'static str), Row>,
    lost: usize,
    crashed: usize,
) {
    println!(
        "engine: {} ms per move, {} thread(s), model {:?}; each move judged by Rapfi at {} nodes",
        a.time_ms, a.threads, a.model, a.nodes
    );
    println!(
        "{:<22} {:<10} {:<12} {:>9} {:>7} {:>11} {:>11} {:>10} {:>10}",
        "suite", "rule", "label", "solved", "%", "engine ms", "engine p95", "judge ms", "judge p95"
    );
    for ((part, rule, kind), r) in rows {
        println!(
            "{:<22} {:<10} {:<12} {:>9} {:>6.1}% {:>11} {:>11} {:>10} {:>10}",
            part,
            rule,
            kind,
            format!("{}/{}", r.solved, r.total),
            100.0 * r.solved as f64 / r.total.max(1) as f64,
            percentile(&r.engine_ms, 0.5),
            percentile(&r.engine_ms, 0.95),
            percentile(&r.judge_ms, 0.5),
            percentile(&r.judge_ms, 0.95),
        );
    }
    println!(
        "(engine ms: time to its move on the solved positions; judge ms: when Rapfi first reported \
         the mate when labelling, the threat's for must-defend; {lost} lost positions not judged; \
         {crashed} moves not judged: Rapfi died on them)"
    );
}
