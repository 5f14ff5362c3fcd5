//! `fivezero-tools tactics FILE…`: runs tactics suites (see `engine::tss::suite` for the format)
//! through `engine::tss::analyse` and reports solved / wrong / time per position, then per file
//! and over all files: solve rates within budgets of 100 ms, 1 s and 5 s, median and worst time,
//! VCF and VCT nodes per second, false claims, and the same per expectation kind.
//!
//! Each position runs under the budgets of that ladder up to `--time-ms` in turn until one solves
//! it (the search splits its budget between stages, so "solved in 0.8 s of a 5 s budget" is not
//! "solved under a 1 s budget"); its time is that run's, and a claim in any run is checked.
//!
//! A false claim is a win announced where the suite says there is none, or a proof that fails an
//! independent re-check here; it must stay 0. Depends on `engine::tss` and `engine::game` only.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use engine::game::Color;
use engine::tss::suite::{self, Expect, Position};
use engine::tss::{
    Budget, RootTactics, Stats, WinKind, analyse, line_reaches_five, verify_strategy,
};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Suite files (e.g. engine/tests/fixtures/tactics/*.txt).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Largest time budget per position in milliseconds; the 100 ms / 1 s / 5 s runs below it
    /// come first.
    #[arg(long, default_value_t = 5000)]
    pub time_ms: u64,
    /// Node limit per position (default: none).
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Print only the summary lines.
    #[arg(long)]
    pub quiet: bool,
}

/// One position's outcome.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub name: String,
    pub solved: bool,
    pub false_claim: bool,
    /// The budget of the run this outcome comes from.
    pub budget_ms: u64,
    pub time: Duration,
    pub nodes: u64,
    pub got: String,
    pub kind: &'static str,
    /// The search's own counts (VCF and VCT nodes and time).
    pub stats: Stats,
}

/// Totals over a suite.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub positions: usize,
    pub solved: usize,
    pub false_claims: usize,
    pub within_100ms: usize,
    pub within_1s: usize,
    pub within_5s: usize,
    pub median: Duration,
    pub worst: Duration,
    pub vcf_nodes: u64,
    pub vcf_time: Duration,
    pub vct_nodes: u64,
    pub vct_time: Duration,
}

fn describe(t: &RootTactics) -> String {
    match t {
        RootTactics::WinNow(p) => format!("win-now {p}"),
        RootTactics::ForcedWin { line, kind } => {
            let k = if *kind == WinKind::Vcf { "vcf" } else { "vct" };
            let first: Vec<String> = line.iter().take(9).map(|p| p.to_string()).collect();
            format!(
                "win-{k} len {} [{}{}]",
                line.len(),
                first.join(" "),
                if line.len() > 9 { " …" } else { "" }
            )
        }
        RootTactics::MustBlock(m) => {
            let pts: Vec<String> = m.iter().take(12).map(|p| p.to_string()).collect();
            format!(
                "must-defend {} [{}{}]",
                m.len(),
                pts.join(" "),
                if m.len() > 12 { " …" } else { "" }
            )
        }
        RootTactics::Lost => "lost".into(),
        RootTactics::GameOver { winner } => format!("game-over {winner:?}"),
        RootTactics::NoMoves => "no-moves".into(),
        RootTactics::Unknown => "unknown".into(),
    }
}

/// Solves one position and judges the answer against its expectation.
pub fn run_position(pos: &Position, budget: Budget) -> Outcome {
    let start = Instant::now();
    let a = analyse(&pos.board, pos.to_move, budget);
    let time = start.elapsed();
    let claims_win = matches!(
        a.tactics,
        RootTactics::WinNow(_) | RootTactics::ForcedWin { .. }
    );
    // Independent re-check of every claimed win: the line is a legal game ending in a five, and
    // the proof tree holds against every defence.
    let recheck = match (&a.tactics, &a.proof) {
        (RootTactics::WinNow(p), _) => line_reaches_five(&pos.board, pos.to_move, &[*p]),
        (RootTactics::ForcedWin { line, .. }, Some(proof)) => {
            let mut b = pos.board.clone();
            proof.attacker == pos.to_move
                && line_reaches_five(&pos.board, pos.to_move, line)
                && verify_strategy(&mut b, pos.to_move, &proof.strategy)
        }
        (RootTactics::ForcedWin { .. }, None) => false,
        _ => true,
    };
    let solved = match (&pos.expect, &a.tactics) {
        (Expect::WinVcf, RootTactics::WinNow(_)) => true,
        (Expect::WinVcf, RootTactics::ForcedWin { kind, .. }) => *kind == WinKind::Vcf,
        (Expect::WinVct, t) => matches!(t, RootTactics::WinNow(_) | RootTactics::ForcedWin { .. }),
        (Expect::MustDefend(None), RootTactics::MustBlock(m)) => !m.is_empty(),
        (Expect::MustDefend(Some(want)), RootTactics::MustBlock(m)) => {
            let mut got = m.clone();
            got.sort();
            &got == want
        }
        (Expect::NoWin, t) => !matches!(t, RootTactics::WinNow(_) | RootTactics::ForcedWin { .. }),
        (Expect::NoVcf, t) => !matches!(
            t,
            RootTactics::WinNow(_)
                | RootTactics::ForcedWin {
                    kind: WinKind::Vcf,
                    ..
                }
        ),
        (Expect::Lost, RootTactics::Lost) => true,
        _ => false,
    } && recheck;
    let expects_win = matches!(pos.expect, Expect::WinVcf | Expect::WinVct | Expect::NoVcf);
    let vcf_claim = matches!(
        a.tactics,
        RootTactics::WinNow(_)
            | RootTactics::ForcedWin {
                kind: WinKind::Vcf,
                ..
            }
    );
    let false_claim =
        claims_win && (!expects_win || !recheck || (pos.expect == Expect::NoVcf && vcf_claim));
    Outcome {
        name: pos.name.clone(),
        solved,
        false_claim,
        budget_ms: 0,
        time,
        nodes: a.stats.nodes,
        got: describe(&a.tactics),
        kind: expect_name(&pos.expect),
        stats: a.stats,
    }
}

fn expect_name(e: &Expect) -> &'static str {
    match e {
        Expect::WinVcf => "win-vcf",
        Expect::WinVct => "win-vct",
        Expect::MustDefend(_) => "must-defend",
        Expect::NoWin => "no-win",
        Expect::NoVcf => "no-vcf",
        Expect::Lost => "lost",
    }
}

/// The totals over `outcomes`.
fn summarise(outcomes: &[Outcome]) -> Summary {
    let mut s = Summary::default();
    let mut times: Vec<Duration> = outcomes.iter().map(|o| o.time).collect();
    times.sort();
    let solved_within = |ms: u64| {
        outcomes
            .iter()
            .filter(|o| o.solved && o.budget_ms <= ms)
            .count()
    };
    s.positions = outcomes.len();
    s.solved = outcomes.iter().filter(|o| o.solved).count();
    s.false_claims = outcomes.iter().filter(|o| o.false_claim).count();
    s.within_100ms = solved_within(100);
    s.within_1s = solved_within(1000);
    s.within_5s = solved_within(5000);
    s.median = times.get(times.len() / 2).copied().unwrap_or_default();
    s.worst = times.last().copied().unwrap_or_default();
    for o in outcomes {
        s.vcf_nodes += o.stats.vcf_nodes;
        s.vcf_time += o.stats.vcf_time;
        s.vct_nodes += o.stats.vct_nodes;
        s.vct_time += o.stats.vct_time;
    }
    s
}

/// One summary line: `label` then the counts, times and node rates.
fn report(label: &str, s: &Summary) {
    let pct = |n: usize| 100.0 * n as f64 / s.positions.max(1) as f64;
    println!(
        "{label}: solved {}/{}  wrong {}  false claims {}  median {:.2} ms  worst {:.2} ms  \
         solved<=100ms {}/{} ({:.1}%)  <=1s {}/{} ({:.1}%)  <=5s {}/{} ({:.1}%)  \
         VCF {} nodes/s  VCT {} nodes/s",
        s.solved,
        s.positions,
        s.positions - s.solved,
        s.false_claims,
        s.median.as_secs_f64() * 1e3,
        s.worst.as_secs_f64() * 1e3,
        s.within_100ms,
        s.positions,
        pct(s.within_100ms),
        s.within_1s,
        s.positions,
        pct(s.within_1s),
        s.within_5s,
        s.positions,
        pct(s.within_5s),
        rate(s.vcf_nodes, s.vcf_time),
        rate(s.vct_nodes, s.vct_time),
    );
}

/// The summary of the outcomes of one expectation kind.
fn kind_summary(outcomes: &[Outcome], kind: &str) -> Summary {
    let of_kind: Vec<Outcome> = outcomes
        .iter()
        .filter(|o| o.kind == kind)
        .cloned()
        .collect();
    summarise(&of_kind)
}

fn rate(nodes: u64, t: Duration) -> String {
    if t.is_zero() {
        "-".into()
    } else {
        format!("{:.0}", nodes as f64 / t.as_secs_f64())
    }
}

/// Runs `pos` under each budget of the ladder up to `max_ms` until one solves it; a false claim in
/// any run is kept.
fn run_ladder(pos: &Position, max_ms: u64, nodes: Option<u64>) -> Outcome {
    let mut ladder: Vec<u64> = [100, 1000, 5000]
        .into_iter()
        .filter(|&ms| ms < max_ms)
        .collect();
    ladder.push(max_ms);
    let mut false_claim = false;
    let mut last = None;
    for ms in ladder {
        let d = Duration::from_millis(ms);
        let budget = match nodes {
            Some(n) => Budget::nodes_and_time(n, d),
            None => Budget::time(d),
        };
        let mut o = run_position(pos, budget);
        o.budget_ms = ms;
        false_claim |= o.false_claim;
        let solved = o.solved;
        last = Some(o);
        if solved {
            break;
        }
    }
    let mut o = last.expect("the ladder has at least one budget");
    o.false_claim = false_claim;
    o
}

pub fn run(args: Args) -> Result<(), String> {
    let mut all = Vec::new();
    for file in &args.files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let positions = suite::parse(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut outcomes = Vec::new();
        for pos in &positions {
            let o = run_ladder(pos, args.time_ms, args.nodes);
            if !args.quiet || !o.solved {
                let side = if pos.to_move == Color::Black {
                    "black"
                } else {
                    "white"
                };
                println!(
                    "{:<5} {:<34} {} {:<11} {:>9.2} ms of {:>5} {:>9} nodes  got {}{}",
                    if o.solved { "ok" } else { "WRONG" },
                    o.name,
                    side,
                    o.kind,
                    o.time.as_secs_f64() * 1e3,
                    o.budget_ms,
                    o.nodes,
                    o.got,
                    if o.false_claim { "  FALSE CLAIM" } else { "" }
                );
            }
            outcomes.push(o);
        }
        report(&format!("suite {}", file.display()), &summarise(&outcomes));
        all.extend(outcomes);
    }
    let total = summarise(&all);
    if args.files.len() > 1 {
        report("all files", &total);
    }
    let mut kinds: Vec<&str> = all.iter().map(|o| o.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for kind in kinds {
        report(&format!("  kind {kind:<11}"), &kind_summary(&all, kind));
    }
    if total.positions > total.solved || total.false_claims > 0 {
        return Err(format!(
            "{} wrong, {} false claims",
            total.positions - total.solved,
            total.false_claims
        ));
    }
    Ok(())
}
