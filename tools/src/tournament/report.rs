//! Tournament bookkeeping and output: totals per engine and per pair, the game record file
//! (PGN-like), the progress line, the final tables and the `--json` summary.
//!
//! Pure accounting on finished games; depends on `game` (records), `stats`, `engine::openings`
//! (algebraic coordinates) and serde.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::game::{GameRecord, Outcome, SideStats};
use engine::notation::algebraic;
use stats::{SprtDecision, SprtParams, Wdl};

#[derive(Debug, Clone, Default, Serialize)]
pub struct EngineTotals {
    pub name: String,
    /// Its time control (its own when the spec gave time odds).
    pub turn_ms: u64,
    pub match_ms: Option<u64>,
    /// Its node limit per move (`INFO max_node`), when it plays at fixed work.
    pub max_node: Option<u64>,
    pub games: u64,
    pub wins: u64,
    pub losses: u64,
    pub draws: u64,
    /// Losses without a five, by reason key (`timeout`, `crash`, `forbidden`, ...).
    pub forfeits: BTreeMap<String, u64>,
    /// Peak summed private memory of the process tree, bytes (polled).
    pub peak_memory_bytes: u64,
    /// Peak resident set (VmHWM) of the main process, bytes.
    pub peak_rss_bytes: u64,
    pub moves: u64,
    pub mean_reply_ms: f64,
    pub slowest_reply_ms: f64,
    /// The budget (turn limit or time left, tolerance excluded) of the slowest reply.
    pub slowest_reply_budget_ms: u64,
    /// Manager time between the opponent's move arriving and this engine's TURN going out.
    pub manager_overhead_mean_us: f64,
    pub manager_overhead_max_us: f64,
    /// Processes started beyond the first (after crashes, timeouts, garbled output, ...).
    pub restarts: u64,
    /// Times the engine ignored END and was killed after the grace period.
    pub killed_after_end: u64,
    /// The first MESSAGE it sent before its OK to START (the model or evaluator it plays on),
    /// so a match whose engine fell back to something else is not misread.
    pub start_message: Option<String>,
    #[serde(skip)]
    pub(crate) think_ms_total: f64,
    #[serde(skip)]
    pub(crate) overhead_us_total: f64,
    #[serde(skip)]
    pub(crate) overhead_count: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PairTotals {
    pub first: String,
    pub second: String,
    /// From `first`'s point of view.
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub score: Option<f64>,
    pub elo: Option<f64>,
    pub elo_error95: Option<f64>,
    pub los: Option<f64>,
    #[serde(skip)]
    pub a: usize,
    #[serde(skip)]
    pub b: usize,
}

impl EngineTotals {
    /// Adds this engine's side (0 black, 1 white) of a finished game: result, forfeit, memory,
    /// reply times and the manager's overhead on its moves. True when the game made its START
    /// message known.
    fn add_game(&mut self, side: usize, rec: &GameRecord) -> bool {
        let st = &rec.stats[side];
        self.games += 1;
        let won = matches!(
            (rec.outcome, side),
            (Outcome::BlackWins, 0) | (Outcome::WhiteWins, 1)
        );
        match rec.outcome {
            Outcome::Draw => self.draws += 1,
            _ if won => self.wins += 1,
            _ => self.losses += 1,
        }
        if let Some((c, f)) = rec.forfeit
            && c.index() == side
        {
            *self.forfeits.entry(f.key().to_string()).or_default() += 1;
        }
        let heard = self.start_message.is_none() && rec.start_messages[side].is_some();
        if heard {
            self.start_message.clone_from(&rec.start_messages[side]);
        }
        self.peak_memory_bytes = self.peak_memory_bytes.max(st.peak_memory);
        self.peak_rss_bytes = self.peak_rss_bytes.max(st.peak_rss.unwrap_or(0));
        self.moves += st.moves;
        self.think_ms_total += st.think_ms_total;
        self.mean_reply_ms = if self.moves > 0 {
            self.think_ms_total / self.moves as f64
        } else {
            0.0
        };
        if st.slowest_ms > self.slowest_reply_ms {
            self.slowest_reply_ms = st.slowest_ms;
            self.slowest_reply_budget_ms = st.slowest_budget_ms;
        }
        self.overhead_us_total += st.overhead_us_total;
        self.overhead_count += st.overhead_count;
        self.manager_overhead_max_us = self.manager_overhead_max_us.max(st.overhead_us_max);
        self.manager_overhead_mean_us = if self.overhead_count > 0 {
            self.overhead_us_total / self.overhead_count as f64
        } else {
            0.0
        };
        heard
    }

    /// Its line of the final report.
    fn report_line(&self) -> String {
        let forfeits: Vec<String> = self
            .forfeits
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        format!(
            "  {}: {} games +{} ={} -{}  {} ms/move{}{}  forfeits [{}]  peak mem {:.1} MiB (rss {:.1} MiB)  reply mean {:.2} ms, slowest {:.2} ms of {} ms  manager {:.0} µs/move (max {:.0})  restarts {}  killed after END {}",
            self.name,
            self.games,
            self.wins,
            self.draws,
            self.losses,
            self.turn_ms,
            self.match_ms
                .map_or(String::new(), |m| format!(", {m} ms/game")),
            self.max_node
                .map_or(String::new(), |n| format!(", {n} nodes/move")),
            forfeits.join(", "),
            self.peak_memory_bytes as f64 / 1048576.0,
            self.peak_rss_bytes as f64 / 1048576.0,
            self.mean_reply_ms,
            self.slowest_reply_ms,
            self.slowest_reply_budget_ms,
            self.manager_overhead_mean_us,
            self.manager_overhead_max_us,
            self.restarts,
            self.killed_after_end
        )
    }
}

impl PairTotals {
    pub fn wdl(&self) -> Wdl {
        Wdl::new(self.wins, self.draws, self.losses)
    }

    /// Adds a game's outcome (`first_is_black`: which colour this pair's first engine had) and
    /// updates score, Elo and LOS.
    fn add_game(&mut self, first_is_black: bool, outcome: Outcome) {
        match (outcome, first_is_black) {
            (Outcome::Draw, _) => self.draws += 1,
            (Outcome::BlackWins, true) | (Outcome::WhiteWins, false) => self.wins += 1,
            _ => self.losses += 1,
        }
        let wdl = self.wdl();
        self.score = wdl.score();
        let est = stats::elo_estimate(&wdl);
        self.elo = est.map(|e| e.elo).filter(|v| v.is_finite());
        self.elo_error95 = est.map(|e| e.error95).filter(|v| v.is_finite());
        self.los = stats::los(&wdl);
    }

    /// Its line of the final report: results, score, Elo with its error bar, LOS.
    fn report_line(&self) -> String {
        let mut out = format!(
            "  {} vs {}: +{} ={} -{}",
            self.first, self.second, self.wins, self.draws, self.losses
        );
        if let Some(sc) = self.score {
            let _ = write!(out, "  score {sc:.3}");
        }
        if let Some(e) = stats::elo_estimate(&self.wdl()) {
            let err = if e.error95.is_finite() {
                format!("{:.1}", e.error95)
            } else {
                "inf".into()
            };
            let _ = write!(out, "  elo {} ± {err}", fmt_elo(e.elo));
            if let Some(l) = self.los {
                let _ = write!(out, "  LOS {:.1}%", l * 100.0);
            }
        }
        out
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct GameSummary {
    pub number: u64,
    pub black: String,
    pub white: String,
    pub opening: Option<String>,
    pub result: &'static str,
    pub reason: String,
    /// `timeout`, `crash`, ... when the game ended by forfeit.
    pub forfeit: Option<&'static str>,
    pub moves: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct SprtSummary {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub llr: f64,
    pub lower_bound: f64,
    pub upper_bound: f64,
    /// `H0`, `H1` or `continue` (the game budget ran out first).
    pub result: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub rule: String,
    pub width: usize,
    pub height: usize,
    pub games_planned: u64,
    pub games_played: u64,
    pub engines: Vec<EngineTotals>,
    pub pairs: Vec<PairTotals>,
    pub sprt: Option<SprtSummary>,
    pub manager_overhead_mean_us: f64,
    pub manager_overhead_max_us: f64,
    pub games: Vec<GameSummary>,
    /// Stopped by Ctrl-C or SIGTERM before the planned games were played.
    pub interrupted: bool,
}

/// Accumulates results as games finish (in completion order; totals do not depend on it).
pub struct Tally {
    pub summary: Summary,
    sprt: Option<SprtParams>,
    overhead_total: f64,
    pub(crate) overhead_count: u64,
}

impl Tally {
    pub fn new(summary: Summary, sprt: Option<SprtParams>) -> Self {
        Self {
            summary,
            sprt,
            overhead_total: 0.0,
            overhead_count: 0,
        }
    }

    /// Adds one finished game between engines `black` and `white`; gives the engines whose START
    /// message this game made known (so the caller says it once).
    pub fn add(
        &mut self,
        black: usize,
        white: usize,
        opening: Option<String>,
        rec: &GameRecord,
    ) -> Vec<usize> {
        let mut heard = Vec::new();
        self.summary.games_played += 1;
        for (side, idx) in [(0usize, black), (1, white)] {
            if self.summary.engines[idx].add_game(side, rec) {
                heard.push(idx);
            }
            self.add_overhead(&rec.stats[side]);
        }
        let s = &mut self.summary;
        if let Some(p) = s
            .pairs
            .iter_mut()
            .find(|p| (p.a, p.b) == (black, white) || (p.a, p.b) == (white, black))
        {
            p.add_game(p.a == black, rec.outcome);
        }
        let number = s.games.len() as u64 + 1;
        s.games.push(GameSummary {
            number,
            black: s.engines[black].name.clone(),
            white: s.engines[white].name.clone(),
            opening,
            result: rec.outcome.result_text(),
            reason: rec.reason.clone(),
            forfeit: rec.forfeit.map(|(_, f)| f.key()),
            moves: rec.moves.len(),
        });
        if let Some(sp) = &self.sprt {
            s.sprt = Some(sprt_summary(sp, &s.pairs[0].wdl()));
        }
        heard
    }

    /// The manager's overhead over all engines: one side's moves of a game added.
    fn add_overhead(&mut self, st: &SideStats) {
        self.overhead_total += st.overhead_us_total;
        self.overhead_count += st.overhead_count;
        let s = &mut self.summary;
        s.manager_overhead_max_us = s.manager_overhead_max_us.max(st.overhead_us_max);
        if self.overhead_count > 0 {
            s.manager_overhead_mean_us = self.overhead_total / self.overhead_count as f64;
        }
    }

    /// The SPRT verdict once a bound is crossed.
    pub fn sprt_decision(&self) -> Option<SprtDecision> {
        let sp = self.sprt.as_ref()?;
        Some(sp.decide(&self.summary.pairs.first()?.wdl())).filter(|d| *d != SprtDecision::Continue)
    }

    pub fn add_process_counts(&mut self, restarts: &[u64], end_kills: &[u64]) {
        for (e, (r, k)) in self
            .summary
            .engines
            .iter_mut()
            .zip(restarts.iter().zip(end_kills))
        {
            e.restarts += r;
            e.killed_after_end += k;
        }
    }

    /// One line for stderr: games done, the first pair's score, Elo and LLR.
    pub fn progress_line(&self) -> String {
        let s = &self.summary;
        let mut line = format!("[{}/{}]", s.games_played, s.games_planned);
        if let Some(p) = s.pairs.first() {
            let _ = write!(
                line,
                " {} vs {}: +{} ={} -{}",
                p.first, p.second, p.wins, p.draws, p.losses
            );
            if let (Some(elo), Some(err)) = (p.elo, p.elo_error95) {
                let _ = write!(line, "  elo {elo:+.1} ± {err:.1}");
            }
        }
        if let Some(sp) = &s.sprt {
            let _ = write!(
                line,
                "  LLR {:.2} [{:.2}, {:.2}]",
                sp.llr, sp.lower_bound, sp.upper_bound
            );
        }
        line
    }

    /// The final human-readable report (stdout).
    pub fn final_report(&self) -> String {
        let s = &self.summary;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Tournament: {} games of {} planned{}, {} {}x{}",
            s.games_played,
            s.games_planned,
            if s.interrupted { " (interrupted)" } else { "" },
            s.rule,
            s.width,
            s.height
        );
        let _ = writeln!(out, "\nResults per pair (first engine's view):");
        for p in &s.pairs {
            let _ = writeln!(out, "{}", p.report_line());
        }
        let _ = writeln!(out, "\nEngines:");
        for e in &s.engines {
            let _ = writeln!(out, "{}", e.report_line());
            if let Some(m) = &e.start_message {
                let _ = writeln!(out, "    said at START: {m}");
            }
        }
        if let Some(sp) = &s.sprt {
            let _ = writeln!(
                out,
                "\nSPRT elo0={} elo1={} alpha={} beta={}: LLR {:.3} [{:.3}, {:.3}] -> {}",
                sp.elo0,
                sp.elo1,
                sp.alpha,
                sp.beta,
                sp.llr,
                sp.lower_bound,
                sp.upper_bound,
                sp.result
            );
        }
        let _ = writeln!(
            out,
            "\nManager overhead per move (move received -> next TURN sent): mean {:.1} µs, max {:.1} µs",
            s.manager_overhead_mean_us, s.manager_overhead_max_us
        );
        out
    }
}

fn fmt_elo(v: f64) -> String {
    if v.is_finite() {
        format!("{v:+.1}")
    } else {
        "inf".into()
    }
}

fn sprt_summary(sp: &SprtParams, wdl: &Wdl) -> SprtSummary {
    let (lo, hi) = sp.bounds();
    SprtSummary {
        elo0: sp.elo0,
        elo1: sp.elo1,
        alpha: sp.alpha,
        beta: sp.beta,
        llr: sp.llr(wdl),
        lower_bound: lo,
        upper_bound: hi,
        result: match sp.decide(wdl) {
            SprtDecision::AcceptH0 => "H0",
            SprtDecision::AcceptH1 => "H1",
            SprtDecision::Continue => "continue",
        },
    }
}

/// A PGN-like record of one game: tags, then numbered move pairs in algebraic notation
/// (`h8`, column letter and row counted from the bottom), then the result.
pub fn record_text(
    number: u64,
    black: &str,
    white: &str,
    rule: &str,
    (width, height): (usize, usize),
    opening: Option<&str>,
    rec: &GameRecord,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "[Event \"fivezero-tools tournament\"]");
    let _ = writeln!(out, "[Game \"{number}\"]");
    let _ = writeln!(out, "[Black \"{black}\"]");
    let _ = writeln!(out, "[White \"{white}\"]");
    let _ = writeln!(out, "[Rule \"{rule}\"]");
    let _ = writeln!(out, "[Size \"{width}x{height}\"]");
    if let Some(o) = opening {
        let _ = writeln!(out, "[Opening \"{o}\"]");
        let _ = writeln!(out, "[OpeningMoves \"{}\"]", rec.opening_len);
    }
    let _ = writeln!(out, "[Result \"{}\"]", rec.outcome.result_text());
    let _ = writeln!(out, "[Termination \"{}\"]", rec.reason.replace('"', "'"));
    out.push('\n');
    let mut line = String::new();
    for (i, &(x, y)) in rec.moves.iter().enumerate() {
        if i % 2 == 0 {
            let _ = write!(line, "{}. ", i / 2 + 1);
        }
        let _ = write!(line, "{} ", algebraic(x, y, height));
        if line.len() > 72 {
            out.push_str(line.trim_end());
            out.push('\n');
            line.clear();
        }
    }
    let _ = writeln!(out, "{}{}\n", line, rec.outcome.result_text());
    out
}
