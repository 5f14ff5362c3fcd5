//! `pbrain-fivezero bench`: fixed searches over fixed positions for rules 0, 1 and 4, one thread,
//! fixed visit counts and deterministic evaluators, printing `Nodes searched: N`, the speed and a
//! signature hash. Same build, same output (speed aside): a change that claims "no functional
//! change" shows the same `Nodes searched` and signature.
//!
//! Two passes: the uniform evaluator without tactics (the tree itself: selection, expansion,
//! backup, make/unmake), then the classical evaluator with tactics (the engine's medium path:
//! fives, forced blocks, VCF at leaves).
//!
//! `game_positions` plays classical games for positions a network meets in play: the int8
//! export's calibration (`fivezero-tools model quantize`, int8 self-play) and agreement checks.
//!
//! Depends on `game`, `eval` (uniform and classical evaluators, input features) and `mcts`; never
//! on an inference runtime.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::eval::classical::ClassicalEvaluator;
use crate::eval::{Evaluator, UniformEvaluator};
use crate::game::{Board, Pattern, Rule};
use crate::mcts::{MctsConfig, Search, SearchLimits};

/// What the bench searches.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Playouts per position.
    pub visits: u64,
    /// Stone counts of the positions searched per rule.
    pub stones: Vec<usize>,
    pub rules: Vec<Rule>,
    /// Settle fives, blocks and VCFs at leaves (the engine's medium difficulty path).
    pub tactics: bool,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            visits: 20_000,
            stones: vec![0, 9, 24, 41],
            rules: vec![Rule::Freestyle, Rule::Standard, Rule::Renju],
            tactics: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchReport {
    /// Tree nodes created over all positions (depends on every choice the search made).
    pub nodes: u64,
    /// Playouts over all positions.
    pub visits: u64,
    pub elapsed: Duration,
    /// FNV-1a over each position's best move, node count and root visit distribution.
    pub signature: u64,
}

impl BenchReport {
    pub fn visits_per_second(&self) -> f64 {
        self.visits as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// A fixed, reproducible, quiet 15x15 position: a xorshift walk over near points where no move
/// makes even a three (so neither side has a four to make, hence no VCF at the root) and, under
/// renju, no forbidden point is played. Stops early if no quiet move is left.
pub fn position(rule: Rule, stones: usize) -> Board {
    let mut board = match Board::new(15, 15, rule) {
        Ok(b) => b,
        Err(e) => unreachable!("15x15 is supported: {e}"),
    };
    let mut state =
        0x2545_F491_4F6C_DD1Du64 ^ (rule.to_protocol() as u64).wrapping_mul(0x9E37_79B9);
    let mut tries = 0;
    while board.move_count() < stones && tries < 100_000 {
        tries += 1;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let cands = board.candidates(2);
        let p = cands[(state % cands.len() as u64) as usize];
        let me = board.side_to_move();
        if board.is_legal(p) && board.threats(p, me).best() < Pattern::Block3 {
            let _ = board.play(p);
        }
    }
    board
}

/// How many `game_positions`, of which seed, an int8 export is calibrated on (the same for
/// `fivezero-tools model quantize` and the trainer's int8 self-play, so both write one file).
pub const CALIBRATION_POSITIONS: usize = 256;
pub const CALIBRATION_SEED: u64 = 1;

/// Positions of `rule` games the classical MCTS plays against itself (root noise, a different
/// seed per game), as input planes: what a network meets in play, for calibration and agreement.
pub fn game_positions(
    count: usize,
    size: usize,
    rule: Rule,
    seed: u64,
) -> Result<Vec<Vec<f32>>, String> {
    let mut out = Vec::with_capacity(count);
    let mut game = 0u64;
    while out.len() < count {
        let config = MctsConfig {
            dirichlet_alpha: 0.3,
            seed: seed.wrapping_mul(1_000_003).wrapping_add(game),
            ..MctsConfig::default()
        };
        let mut search = Search::new(config, Arc::new(ClassicalEvaluator));
        let mut b = Board::new(size, size, rule).map_err(|e| e.to_string())?;
        while out.len() < count && b.winner().is_none() && !b.legal_moves().is_empty() {
            let mut planes = vec![0f32; crate::eval::features::input_len(&b)];
            crate::eval::features::encode(&b, &mut planes);
            out.push(planes);
            search.set_position(&b);
            let r = search.run(&SearchLimits::visits(32));
            let mv = if r.best == crate::game::Pos::NONE {
                b.legal_moves()[0]
            } else {
                r.best
            };
            b.play(mv).map_err(|e| e.to_string())?;
        }
        game += 1;
    }
    Ok(out)
}

fn fnv(h: &mut u64, x: u64) {
    for b in x.to_le_bytes() {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// Runs the bench with `evaluator`, writing one line per position and the summary to `out`.
///
/// # Errors
/// Only from writing to `out`.
pub fn run_with(
    config: &BenchConfig,
    evaluator: Arc<dyn Evaluator>,
    out: &mut dyn Write,
) -> std::io::Result<BenchReport> {
    let mut report = BenchReport {
        nodes: 0,
        visits: 0,
        elapsed: Duration::ZERO,
        signature: 0xcbf2_9ce4_8422_2325,
    };
    let mcts = MctsConfig {
        threads: 1,
        batch_size: 1,
        tactics: config.tactics,
        vcf_budget: 200,
        ..Default::default()
    };
    let start = Instant::now();
    for &rule in &config.rules {
        for &stones in &config.stones {
            let board = position(rule, stones);
            let mut search = Search::new(mcts.clone(), evaluator.clone());
            search.set_position(&board);
            let r = search.run(&SearchLimits::visits(config.visits));
            report.nodes += r.nodes as u64;
            report.visits += r.playouts;
            fnv(&mut report.signature, r.best.index() as u64);
            fnv(&mut report.signature, r.nodes as u64);
            for c in &r.root_children {
                fnv(
                    &mut report.signature,
                    ((c.mv.index() as u64) << 32) | c.visits as u64,
                );
            }
            writeln!(
                out,
                "bench {} {rule} stones={stones:>2} best={} visits={} nodes={} value={:+.3}",
                evaluator.name(),
                r.best,
                r.playouts,
                r.nodes,
                r.value
            )?;
        }
    }
    report.elapsed = start.elapsed();
    writeln!(
        out,
        "pass {} tactics={}: nodes {} visits {} in {} ms = {:.0} visits/s, signature {:016x}",
        evaluator.name(),
        config.tactics,
        report.nodes,
        report.visits,
        report.elapsed.as_millis(),
        report.visits_per_second(),
        report.signature
    )?;
    Ok(report)
}

/// The default bench printed to stdout: uniform without tactics, then classical with tactics;
/// `Nodes searched` and the signature cover both.
pub fn run() -> BenchReport {
    let mut stdout = std::io::stdout().lock();
    // A closed stdout must not stop the numbers from being computed and returned.
    let mut sink = std::io::sink();
    let out: &mut dyn Write = &mut stdout;
    run_default(out)
        .or_else(|_| run_default(&mut sink))
        .unwrap_or(BenchReport {
            nodes: 0,
            visits: 0,
            elapsed: Duration::ZERO,
            signature: 0,
        })
}

fn run_default(out: &mut dyn Write) -> std::io::Result<BenchReport> {
    let tree = BenchConfig {
        tactics: false,
        ..BenchConfig::default()
    };
    let medium = BenchConfig {
        visits: 2_000,
        tactics: true,
        ..BenchConfig::default()
    };
    let a = run_with(&tree, Arc::new(UniformEvaluator), out)?;
    let b = run_with(&medium, Arc::new(ClassicalEvaluator), out)?;
    let mut signature = a.signature;
    fnv(&mut signature, b.signature);
    let total = BenchReport {
        nodes: a.nodes + b.nodes,
        visits: a.visits + b.visits,
        elapsed: a.elapsed + b.elapsed,
        signature,
    };
    writeln!(out, "===========================")?;
    writeln!(out, "Total time (ms): {}", total.elapsed.as_millis())?;
    writeln!(out, "Nodes searched: {}", total.nodes)?;
    writeln!(out, "Nodes/second  : {:.0}", total.visits_per_second())?;
    writeln!(out, "Signature     : {:016x}", total.signature)?;
    Ok(total)
}
