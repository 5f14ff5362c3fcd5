//! `fivezero-tools judge`: an independent judge for the threat search. Positions are labelled by
//! Rapfi (github.com/dhbloo/rapfi, GPL, run only as an external Gomocup brain; built by
//! `scripts/build-rapfi.sh`), and the engine's `engine::tss` is then measured against those
//! labels, so its verdicts are checked by something other than its own solver.
//!
//! Three steps, one subcommand each:
//! - `positions`: every position of the last N plies of each game of tournament records, one per
//!   line as `RULE SIZE MOVES # source` (moves as one algebraic move string, `engine::notation`);
//! - `label`: asks Rapfi for each such line at a fixed node budget (one thread, no time limit,
//!   transposition table cleared per position, so a label can be re-checked) and writes the
//!   positions it settles as a tactics suite (`engine::tss::suite`): `expect win-vct` where Rapfi
//!   reports a mate for the side to move (`+Mn`), `expect lost` where it reports being mated
//!   (`-Mn`), `expect must-defend` where neither but the opponent mates if the side to move
//!   passes (a threat; Rapfi's own move held it within the budget, which is its evidence that a
//!   defence exists). Anything else is "none found" and is only counted. Each position carries a
//!   `# judge` comment with Rapfi's evaluation, move, depth, and the nodes and time at which the
//!   mate was first reported;
//! - `compare`: runs `engine::tss::analyse` (through the `tactics` runner's judging) on such a
//!   suite at a fixed budget and prints solved/total and median time per rule and label beside
//!   Rapfi's nodes and time to its proof.
//!
//! Rapfi's mate is the judge's claim, not a certificate: alpha-beta with pruning can in principle
//! miss a defence. The engine's own win claims are still re-checked by `verify_strategy`.
//! Depends on `engine` (game, notation, tss), the tournament's process handling and `tactics`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use engine::game::{Board, Color, Rule};
use engine::notation::{self, ReplayEnd};
use engine::tss::Budget;
use engine::tss::suite;

use crate::tactics::run_position;
use crate::tournament::log::Logger;
use crate::tournament::process::{EngineProcess, Recv};
use crate::tournament::spec::EngineSpec;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Debug, clap::Subcommand)]
pub enum Cmd {
    /// Positions from game records (`tournament --pgn`): each game's last plies, one per line.
    Positions(PositionsArgs),
    /// Label a positions file with Rapfi at a fixed node budget; writes a tactics suite.
    Label(LabelArgs),
    /// Run the engine's threat search on a judged suite beside the judge's figures.
    Compare(CompareArgs),
}

#[derive(Debug, clap::Args)]
pub struct PositionsArgs {
    /// Record files (PGN-like from `tournament --pgn`, or SGF).
    #[arg(required = true)]
    pub records: Vec<PathBuf>,
    /// Positions taken from the end of each game: the position before each of its last N moves.
    #[arg(long, default_value_t = 20)]
    pub last_plies: usize,
    /// Rule of records that do not name one.
    #[arg(long, default_value = "freestyle")]
    pub rule: Rule,
    /// Output file (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct LabelArgs {
    /// Positions file: `RULE SIZE MOVES [# source]` per line (`#` lines are comments).
    pub positions: PathBuf,
    /// Rapfi's Gomocup brain (e.g. third_party/judges/rapfi/pbrain-rapfi); it runs in its own
    /// folder, where build-rapfi.sh puts its config.toml and model.
    #[arg(long)]
    pub rapfi: PathBuf,
    /// Nodes per position (INFO max_node); the time is unlimited, so the label is reproducible.
    #[arg(long, default_value_t = 1_000_000)]
    pub nodes: u64,
    /// Shortest mate (plies) worth a suite entry: a five to make now (+M1) tests nothing. A loss
    /// (-Mn) is kept when the opponent's mate after the best defence (n - 1) is this long.
    #[arg(long, default_value_t = 3)]
    pub min_mate: u32,
    /// Wall-clock limit per position, seconds; past it the labelling fails (a hung judge).
    #[arg(long, default_value_t = 300)]
    pub timeout_s: u64,
    /// Suite file to write.
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Judged suite files (`judge label` output).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Time budget of the engine's threat search per position, ms.
    #[arg(long, default_value_t = 1000)]
    pub time_ms: u64,
    /// Node budget of the engine's threat search per position (default: none).
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Print only the summary lines.
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: Args) -> Result<(), String> {
    match args.cmd {
        Cmd::Positions(a) => positions(a),
        Cmd::Label(a) => label(a),
        Cmd::Compare(a) => compare(a),
    }
}

// ---------------------------------------------------------------------------------------------
// Positions files

/// One line of a positions file.
#[derive(Debug, Clone)]
pub struct PositionLine {
    pub board: Board,
    /// Where it came from (the comment after `#`), or empty.
    pub source: String,
    /// 1-based line number in its file.
    pub line: usize,
}

/// Parses `width` or `WxH`.
fn parse_size(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("bad size '{s}' (N or WxH)");
    match s.split_once(['x', 'X']) {
        Some((w, h)) => Ok((w.parse().map_err(|_| bad())?, h.parse().map_err(|_| bad())?)),
        None => {
            let n = s.parse().map_err(|_| bad())?;
            Ok((n, n))
        }
    }
}

/// Parses a positions file: `RULE SIZE MOVES [# source]`, `#` comment lines, blank lines.
///
/// # Errors
/// The first bad line, named by its number: unknown rule, bad size, bad or illegal moves, a
/// finished game (a five on the board is no position to judge).
pub fn parse_positions(text: &str) -> Result<Vec<PositionLine>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let (body, source) = match raw.split_once('#') {
            Some((b, c)) => (b.trim(), c.trim()),
            None => (raw.trim(), ""),
        };
        if body.is_empty() {
            continue;
        }
        let err = |m: String| format!("line {line}: {m}");
        let mut it = body.split_whitespace();
        let rule: Rule = it.next().unwrap_or_default().parse().map_err(err)?;
        let size = parse_size(it.next().ok_or_else(|| err("no size".into()))?).map_err(err)?;
        let moves: String = it.collect();
        let points = notation::parse_algebraic(&moves, size.1).map_err(err)?;
        let board = notation::replay(&points, size, rule, ReplayEnd::default()).map_err(err)?;
        out.push(PositionLine {
            board,
            source: source.to_string(),
            line,
        });
    }
    Ok(out)
}

fn write_out(out: Option<&Path>, text: &str) -> Result<(), String> {
    match out {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display())),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn positions(a: PositionsArgs) -> Result<(), String> {
    let mut text = format!(
        "# positions: the last {} plies of each game of {}\n",
        a.last_plies,
        a.records
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut count = 0;
    for file in &a.records {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let raw = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let games = notation::parse_records(&raw, 100_000)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        for (g, game) in games.iter().enumerate() {
            let rule = game.rule.unwrap_or(a.rule);
            let size = game.size.unwrap_or((15, 15));
            // A record may end in a five or a renju foul: its last stone is allowed to.
            let end = ReplayEnd {
                five: true,
                foul: true,
            };
            notation::replay(&game.moves, size, rule, end)
                .map_err(|e| format!("{}: game {}: {e}", file.display(), g + 1))?;
            let first = game.moves.len().saturating_sub(a.last_plies);
            for ply in first..game.moves.len() {
                let b = notation::replay(&game.moves[..ply], size, rule, ReplayEnd::default())
                    .map_err(|e| format!("{}: game {}: {e}", file.display(), g + 1))?;
                let size_text = if size.0 == size.1 {
                    size.0.to_string()
                } else {
                    format!("{}x{}", size.0, size.1)
                };
                writeln!(
                    text,
                    "{rule} {size_text} {}  # {name} game {} ply {ply}",
                    notation::move_string(&b),
                    g + 1
                )
                .expect("writing to a String");
                count += 1;
            }
        }
    }
    write_out(a.out.as_deref(), &text)?;
    eprintln!("judge positions: {count} positions");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Rapfi over the Gomocup protocol

/// A value as Rapfi prints it (`core/iohelper.cpp`): `+Mn` (mates in n plies), `-Mn` (is mated
/// in n plies), `+M*`/`-M*` (from its database, which the judge does not use) or centipawn-like
/// integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eval {
    Win(u32),
    Loss(u32),
    Score(i32),
}

impl Eval {
    pub fn parse(s: &str) -> Option<Eval> {
        if let Some(n) = s.strip_prefix("+M") {
            n.parse().ok().map(Eval::Win)
        } else if let Some(n) = s.strip_prefix("-M") {
            n.parse().ok().map(Eval::Loss)
        } else {
            s.parse().ok().map(Eval::Score)
        }
    }
    fn is_mate(self) -> bool {
        !matches!(self, Eval::Score(_))
    }
}

impl std::fmt::Display for Eval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Eval::Win(n) => write!(f, "+M{n}"),
            Eval::Loss(n) => write!(f, "-M{n}"),
            Eval::Score(v) => write!(f, "{v}"),
        }
    }
}

/// What Rapfi said about one position.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// The evaluation of its last completed iteration (for the side to move).
    pub eval: Eval,
    pub mv: (u32, u32),
    pub depth: u32,
    pub nodes: u64,
    pub time_ms: u64,
    /// Nodes and time when a mate of the final sign was first reported.
    pub proof_nodes: u64,
    pub proof_ms: u64,
}

/// Collects the `INFO` detail lines (`show_detail 2`) of one search: one block per completed
/// iteration (`INFO DEPTH`, `INFO TOTALNODES`, `INFO TOTALTIME`, `INFO EVAL`, ...).
#[derive(Debug, Default)]
struct InfoBlocks {
    depth: u32,
    nodes: u64,
    time_ms: u64,
    eval: Option<Eval>,
    /// (eval, depth, nodes, time) of each completed iteration.
    done: Vec<(Eval, u32, u64, u64)>,
}

impl InfoBlocks {
    /// Feeds one line; a malformed INFO value is an error naming the line.
    fn feed(&mut self, line: &str) -> Result<(), String> {
        let Some(rest) = line.strip_prefix("INFO ") else {
            return Ok(());
        };
        let (key, value) = rest.split_once(' ').unwrap_or((rest, ""));
        let bad = || format!("Rapfi sent a malformed line '{line}'");
        match key {
            "DEPTH" => self.depth = value.trim().parse().map_err(|_| bad())?,
            "TOTALNODES" => self.nodes = value.trim().parse().map_err(|_| bad())?,
            "TOTALTIME" => self.time_ms = value.trim().parse().map_err(|_| bad())?,
            "EVAL" => self.eval = Some(Eval::parse(value.trim()).ok_or_else(bad)?),
            "PV" if value.trim() == "DONE" => {
                if let Some(e) = self.eval.take() {
                    self.done.push((e, self.depth, self.nodes, self.time_ms));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn verdict(&self, mv: (u32, u32)) -> Option<Verdict> {
        let &(eval, depth, nodes, time_ms) = self.done.last()?;
        // The proof is as old as the unbroken run of same-signed mates that ends the search.
        let same = |e: Eval| {
            matches!(
                (e, eval),
                (Eval::Win(_), Eval::Win(_)) | (Eval::Loss(_), Eval::Loss(_))
            )
        };
        let mut first = self.done.len() - 1;
        while first > 0 && same(self.done[first - 1].0) {
            first -= 1;
        }
        let (proof_nodes, proof_ms) = if eval.is_mate() {
            (self.done[first].2, self.done[first].3)
        } else {
            (0, 0)
        };
        Some(Verdict {
            eval,
            mv,
            depth,
            nodes,
            time_ms,
            proof_nodes,
            proof_ms,
        })
    }
}

/// The error of a Rapfi that died on a position (it segfaults on some renju positions it finds
/// decided at the root): that position is counted as `judge-crashed` and Rapfi restarted.
const EXITED: &str = "Rapfi exited";

/// A running Rapfi.
pub struct Rapfi {
    proc: EngineProcess,
    size: Option<usize>,
    rule: Option<Rule>,
    timeout: Duration,
    /// Rapfi's ABOUT line.
    pub about: String,
}

/// The Gomocup rule number Rapfi takes for `rule`.
fn rule_number(rule: Rule) -> Result<u32, String> {
    match rule {
        Rule::Freestyle => Ok(0),
        Rule::Standard => Ok(1),
        Rule::Renju => Ok(4),
        Rule::Caro => Err("Rapfi does not play caro".into()),
    }
}

impl Rapfi {
    /// Starts `exe` in its own folder (where its config.toml and model are) and reads ABOUT.
    pub fn start(exe: &Path, timeout: Duration) -> Result<Rapfi, String> {
        let exe = exe
            .canonicalize()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        let spec = EngineSpec {
            name: "rapfi".into(),
            cmd: exe.clone(),
            args: vec![],
            dir: exe.parent().map(Path::to_path_buf),
            env: vec![],
            turn_ms: None,
            match_ms: None,
            max_node: None,
        };
        let proc = EngineProcess::spawn(&spec, Logger::disabled(), false)?;
        let mut r = Rapfi {
            proc,
            size: None,
            rule: None,
            timeout,
            about: String::new(),
        };
        r.proc.send("ABOUT")?;
        r.about = r.wait_for(|l| l.contains("name=") || l.contains("name =\""))?;
        Ok(r)
    }

    /// Waits for the first line that `want` accepts, skipping MESSAGE/DEBUG/INFO lines; an
    /// ERROR line, end of output or the timeout is an error.
    fn wait_for(&mut self, want: impl Fn(&str) -> bool) -> Result<String, String> {
        self.wait_for_within(self.timeout, want)
    }

    fn wait_for_within(
        &mut self,
        timeout: Duration,
        want: impl Fn(&str) -> bool,
    ) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.proc.recv(deadline) {
                Recv::Line(l, _) if want(&l) => return Ok(l),
                Recv::Line(l, _) if l.starts_with("ERROR") => {
                    return Err(format!("Rapfi: {l}"));
                }
                Recv::Line(..) => {}
                Recv::Eof => return Err(EXITED.into()),
                Recv::Timeout => return Err(format!("Rapfi silent for {timeout:?}")),
            }
        }
    }

    /// Waits until Rapfi takes commands again. It prints its move a moment before it stops
    /// "thinking", and drops commands that come in between (only their first word, so the rest
    /// of the line is then read as an unknown command): a clear-hash probe is repeated until one
    /// is answered.
    fn settle(&mut self) -> Result<(), String> {
        const ACK: &str = "Transposition table cleared";
        let deadline = Instant::now() + self.timeout;
        while Instant::now() < deadline {
            self.proc.send("YXHASHCLEAR")?;
            match self.wait_for_within(Duration::from_millis(200), |l| l.contains(ACK)) {
                Ok(_) => return Ok(()),
                Err(e) if e.starts_with("Rapfi silent") => {}
                Err(e) => return Err(e),
            }
        }
        Err(format!("Rapfi took no command for {:?}", self.timeout))
    }

    /// Searches `board` (side to move: whoever follows the last stone; with `pass`, the
    /// opponent, as if the side to move passed) with `nodes` nodes, one thread, no time limit and
    /// an empty transposition table.
    pub fn judge(&mut self, board: &Board, nodes: u64, pass: bool) -> Result<Verdict, String> {
        if board.width() != board.height() {
            return Err("Rapfi plays square boards only".into());
        }
        self.settle()?;
        if self.size != Some(board.width()) {
            self.proc.send(&format!("START {}", board.width()))?;
            self.wait_for(|l| l == "OK")?;
            self.size = Some(board.width());
            self.rule = None;
        }
        if self.rule != Some(board.rule()) {
            self.proc
                .send(&format!("INFO rule {}", rule_number(board.rule())?))?;
            self.rule = Some(board.rule());
        }
        // Rapfi answers nothing to INFO; YXHASHCLEAR's message marks that all were read.
        self.proc.send(&format!(
            "INFO thread_num 1\nINFO max_node {nodes}\nINFO timeout_turn 0\nINFO timeout_match 0\n\
             INFO show_detail 2\nYXHASHCLEAR"
        ))?;
        self.wait_for(|l| l.contains("Transposition table cleared"))?;
        let me = board.side_to_move();
        let mut cmd = String::from("BOARD\n");
        for (p, c) in board.history() {
            let who = if *c == me { 1 } else { 2 };
            writeln!(cmd, "{},{},{who}", p.x(), p.y()).expect("writing to a String");
        }
        if pass {
            // Rapfi's pass point, played by the side to move (its own stone flag).
            cmd.push_str("-1,-1,1\n");
        }
        cmd.push_str("DONE");
        self.proc.send(&cmd)?;
        let deadline = Instant::now() + self.timeout;
        let mut info = InfoBlocks::default();
        loop {
            match self.proc.recv(deadline) {
                Recv::Line(l, _) => {
                    if l.starts_with("ERROR") {
                        return Err(format!("Rapfi: {l}"));
                    }
                    info.feed(&l)?;
                    if let Some((x, y)) = l.split_once(',')
                        && let (Ok(x), Ok(y)) = (x.parse::<u32>(), y.parse::<u32>())
                    {
                        return info
                            .verdict((x, y))
                            .ok_or_else(|| format!("Rapfi moved {l} without an INFO EVAL block"));
                    }
                }
                Recv::Eof => return Err(EXITED.into()),
                Recv::Timeout => return Err(format!("Rapfi took over {:?}", self.timeout)),
            }
        }
    }

    pub fn quit(self) {
        self.proc.quit(Duration::from_secs(2));
    }
}

/// The VERSION file build-rapfi.sh leaves beside the binary, as comment lines.
fn build_notes(exe: &Path) -> String {
    let version = exe.with_file_name("VERSION");
    match std::fs::read_to_string(&version) {
        Ok(t) => t.lines().map(|l| format!("#   {l}\n")).collect(),
        Err(_) => format!("#   (no {} found)\n", version.display()),
    }
}

fn label(a: LabelArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&a.positions)
        .map_err(|e| format!("{}: {e}", a.positions.display()))?;
    let positions =
        parse_positions(&text).map_err(|e| format!("{}: {e}", a.positions.display()))?;
    let mut rapfi = Rapfi::start(&a.rapfi, Duration::from_secs(a.timeout_s))?;
    let mut out = format!(
        "# Tactics suite labelled by Rapfi, an independent judge (engine::tss::suite format).\n\
         # judge: {}\n{}\
         # node budget {} per position, thread_num 1, no time limit, hash cleared per position\n\
         # positions: {}; mates of at least {} plies kept\n\
         # win-vct: Rapfi reports +Mn for the side to move; lost: it reports -Mn (mated).\n\
         # must-defend: no mate either way, but +Mn for the opponent if the side to move passed\n\
         # (the judge's own move held within the budget; `threat` is the opponent's mate).\n\
         # short: a mate shorter than that, none: no mate within the budget, judge-crashed:\n\
         # Rapfi died on the position (none of these is kept).\n\
         # `# judge` lines: eval, move (x,y), depth, nodes/time of the search and when the mate\n\
         # was first reported (its proof).\n",
        rapfi.about,
        build_notes(&a.rapfi),
        a.nodes,
        a.positions.display(),
        a.min_mate,
    );
    let mut counts: HashMap<(Rule, &'static str), usize> = HashMap::new();
    let started = Instant::now();
    for (i, p) in positions.iter().enumerate() {
        let at = |e: String| format!("{} line {}: {e}", a.positions.display(), p.line);
        let v = match rapfi.judge(&p.board, a.nodes, false) {
            Err(e) if e == EXITED => {
                crashed(&a, p.line);
                *counts.entry((p.board.rule(), "judge-crashed")).or_default() += 1;
                rapfi = Rapfi::start(&a.rapfi, Duration::from_secs(a.timeout_s))?;
                continue;
            }
            other => other.map_err(at)?,
        };
        // No mate either way: does the opponent threaten one (a mate if we passed)?
        let threat = if matches!(v.eval, Eval::Score(_)) {
            match rapfi.judge(&p.board, a.nodes, true) {
                Err(e) if e == EXITED => {
                    crashed(&a, p.line);
                    *counts.entry((p.board.rule(), "judge-crashed")).or_default() += 1;
                    rapfi = Rapfi::start(&a.rapfi, Duration::from_secs(a.timeout_s))?;
                    continue;
                }
                other => Some(other.map_err(at)?),
            }
        } else {
            None
        };
        let kind = match (v.eval, threat.as_ref().map(|t| t.eval)) {
            (Eval::Win(n), _) if n >= a.min_mate => "win-vct",
            // Mated in n plies: after its best move the opponent mates in n - 1.
            (Eval::Loss(n), _) if n > a.min_mate => "lost",
            (Eval::Win(_) | Eval::Loss(_), _) => "short",
            (Eval::Score(_), Some(Eval::Win(n))) if n >= a.min_mate => "must-defend",
            (Eval::Score(_), _) => "none",
        };
        *counts.entry((p.board.rule(), kind)).or_default() += 1;
        if matches!(kind, "win-vct" | "lost" | "must-defend") {
            let name = if p.source.is_empty() {
                format!("{} line {}", p.board.rule(), p.line)
            } else {
                format!("{} {}", p.board.rule(), p.source)
            };
            write_suite_entry(&mut out, &name, &p.board, &v, threat.as_ref(), kind);
        }
        eprint!(
            "\rjudge label: {}/{} positions, {:.0} s",
            i + 1,
            positions.len(),
            started.elapsed().as_secs_f64()
        );
    }
    eprintln!();
    rapfi.quit();
    let mut keys: Vec<_> = counts.into_iter().collect();
    keys.sort_by_key(|((r, k), _)| (r.to_string(), *k));
    let mut summary = String::from("# counts (rule, label: positions):\n");
    for ((r, k), n) in keys {
        writeln!(summary, "#   {r} {k}: {n}").expect("writing to a String");
    }
    eprint!("{summary}");
    out.push_str(&summary);
    std::fs::write(&a.out, out).map_err(|e| format!("{}: {e}", a.out.display()))
}

/// Says that Rapfi died on the position of `line`.
fn crashed(a: &LabelArgs, line: usize) {
    eprintln!(
        "\njudge label: {} line {line}: Rapfi crashed on it; counted as judge-crashed",
        a.positions.display()
    );
}

/// One suite entry. For `must-defend`, `threat` is the opponent's search after a pass: its
/// nodes and time are the proof of the threat, and the judge line keeps the move that held.
fn write_suite_entry(
    out: &mut String,
    name: &str,
    b: &Board,
    v: &Verdict,
    threat: Option<&Verdict>,
    kind: &str,
) {
    let (proof_nodes, proof_ms, threat_text) = match threat {
        Some(t) => (
            t.proof_nodes,
            t.proof_ms,
            format!(" threat {} threat-move {},{}", t.eval, t.mv.0, t.mv.1),
        ),
        None => (v.proof_nodes, v.proof_ms, String::new()),
    };
    let moves: Vec<String> = b
        .history()
        .iter()
        .map(|(p, _)| format!("{},{}", p.x(), p.y()))
        .collect();
    let side = if b.side_to_move() == Color::Black {
        "black"
    } else {
        "white"
    };
    writeln!(
        out,
        "\n[{name}]\n# judge {} move {},{} depth {} nodes {} time {}{threat_text} proof-nodes \
         {proof_nodes} proof-ms {proof_ms}\nsize {} {}\nrule {}\nmoves {}\nto-move {side}\n\
         expect {kind}",
        v.eval,
        v.mv.0,
        v.mv.1,
        v.depth,
        v.nodes,
        v.time_ms,
        b.width(),
        b.height(),
        b.rule(),
        moves.join(" "),
    )
    .expect("writing to a String");
}

// ---------------------------------------------------------------------------------------------
// The engine against the judge's labels

/// The judge's figures of one suite entry, from its `# judge` line.
#[derive(Debug, Clone, Default)]
pub struct JudgeNote {
    pub proof_nodes: u64,
    pub proof_ms: u64,
}

/// The `# judge` lines of a suite, by position name.
///
/// # Errors
/// A malformed `# judge` line, named by its line number.
pub fn judge_notes(text: &str) -> Result<HashMap<String, JudgeNote>, String> {
    let mut notes = HashMap::new();
    let mut name: Option<String> = None;
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if let Some(n) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            name = Some(n.trim().to_string());
        } else if let Some(rest) = l.strip_prefix("# judge ") {
            let Some(n) = &name else { continue };
            let toks: Vec<&str> = rest.split_whitespace().collect();
            let field = |key: &str| -> Result<u64, String> {
                let at = toks
                    .iter()
                    .position(|t| *t == key)
                    .ok_or_else(|| format!("line {}: judge line without {key}", i + 1))?;
                toks.get(at + 1)
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| format!("line {}: bad {key} value", i + 1))
            };
            notes.insert(
                n.clone(),
                JudgeNote {
                    proof_nodes: field("proof-nodes")?,
                    proof_ms: field("proof-ms")?,
                },
            );
        }
    }
    Ok(notes)
}

fn median<T: Copy + Ord + Default>(mut v: Vec<T>) -> T {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn compare(a: CompareArgs) -> Result<(), String> {
    // (rule, label) -> (solved, total, engine times, its times on the solved, judge proof nodes,
    // judge proof ms)
    type Row = (
        usize,
        usize,
        Vec<Duration>,
        Vec<Duration>,
        Vec<u64>,
        Vec<u64>,
    );
    let mut rows: HashMap<(String, &'static str), Row> = HashMap::new();
    for file in &a.files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let positions = suite::parse(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let notes = judge_notes(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        for pos in &positions {
            let d = Duration::from_millis(a.time_ms);
            let budget = match a.nodes {
                Some(n) => Budget::nodes_and_time(n, d),
                None => Budget::time(d),
            };
            let o = run_position(pos, budget);
            let note = notes.get(&pos.name).cloned().unwrap_or_default();
            if !a.quiet {
                println!(
                    "{:<5} {:<40} {:<8} {:>9.2} ms {:>9} nodes  got {}  | judge proof {} nodes {} ms{}",
                    if o.solved { "ok" } else { "MISS" },
                    o.name,
                    o.kind,
                    o.time.as_secs_f64() * 1e3,
                    o.nodes,
                    o.got,
                    note.proof_nodes,
                    note.proof_ms,
                    if o.false_claim { "  FALSE CLAIM" } else { "" }
                );
            }
            if o.false_claim {
                return Err(format!(
                    "{}: position '{}' (line {}): the engine claimed a win that does not hold",
                    file.display(),
                    pos.name,
                    pos.line
                ));
            }
            let row = rows
                .entry((pos.board.rule().to_string(), o.kind))
                .or_default();
            row.0 += usize::from(o.solved);
            row.1 += 1;
            row.2.push(o.time);
            if o.solved {
                row.3.push(o.time);
            }
            row.4.push(note.proof_nodes);
            row.5.push(note.proof_ms);
        }
    }
    let mut keys: Vec<_> = rows.keys().cloned().collect();
    keys.sort();
    println!(
        "engine budget: {} ms{} per position",
        a.time_ms,
        a.nodes.map(|n| format!(", {n} nodes")).unwrap_or_default()
    );
    println!(
        "{:<10} {:<12} {:>9} {:>11} {:>17} {:>13} {:>11}",
        "rule", "label", "solved", "engine ms", "engine ms solved", "judge nodes", "judge ms"
    );
    for k in keys {
        let (solved, total, times, solved_times, jn, jm) =
            rows.remove(&k).expect("a key of the map");
        println!(
            "{:<10} {:<12} {:>9} {:>11.2} {:>17.2} {:>13} {:>11}",
            k.0,
            k.1,
            format!("{solved}/{total}"),
            median(times).as_secs_f64() * 1e3,
            median(solved_times).as_secs_f64() * 1e3,
            median(jn),
            median(jm)
        );
    }
    println!(
        "(medians; engine ms: time to its verdict, all positions and the solved ones; judge: \
         nodes and ms at which Rapfi first reported the mate, the threat's for must-defend)"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed judged suites stay readable by the suite parser and by `compare`, and every
    /// entry carries its judge line.
    #[test]
    fn committed_judged_suites_parse() {
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/fixtures/tactics-judged");
        let mut seen = 0;
        for rule in ["freestyle", "renju"] {
            let path = dir.join(format!("{rule}.txt"));
            let text = std::fs::read_to_string(&path).expect("a committed suite");
            let ps = suite::parse(&text).expect("a valid suite");
            let notes = judge_notes(&text).expect("valid judge lines");
            assert!(!ps.is_empty(), "{}", path.display());
            for p in &ps {
                assert_eq!(p.board.rule().to_string(), rule, "{}", p.name);
                assert!(notes.contains_key(&p.name), "{} has no judge line", p.name);
            }
            seen += ps.len();
        }
        assert!(seen > 0);
    }

    #[test]
    fn evals_parse_as_rapfi_prints_them() {
        assert_eq!(Eval::parse("+M15"), Some(Eval::Win(15)));
        assert_eq!(Eval::parse("-M4"), Some(Eval::Loss(4)));
        assert_eq!(Eval::parse("-312"), Some(Eval::Score(-312)));
        assert_eq!(Eval::parse("+M*"), None);
    }

    #[test]
    fn positions_lines_parse_and_bad_ones_name_their_line() {
        let ps = parse_positions("# c\nrenju 15 h8i9j10  # g 1 ply 3\n\nfreestyle 15x15 h8\n")
            .expect("valid lines");
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[0].line, 2);
        assert_eq!(ps[0].source, "g 1 ply 3");
        assert_eq!(ps[0].board.side_to_move(), Color::White);
        assert_eq!(ps[1].board.rule(), Rule::Freestyle);
        let e = parse_positions("freestyle 15 h8\nrenju 15 h8h8\n").unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        let e = parse_positions("gomoku 15 h8\n").unwrap_err();
        assert!(e.starts_with("line 1:"), "{e}");
        let e = parse_positions("renju fifteen h8\n").unwrap_err();
        assert!(e.starts_with("line 1:"), "{e}");
    }

    #[test]
    fn the_proof_starts_at_the_first_of_the_final_run_of_mates() {
        let mut info = InfoBlocks::default();
        for (d, n, t, e) in [
            (5, 100, 1, "40"),
            (6, 200, 2, "+M9"),
            (7, 300, 3, "120"),
            (8, 400, 4, "+M7"),
            (9, 500, 5, "+M7"),
        ] {
            for l in [
                format!("INFO DEPTH {d}"),
                format!("INFO TOTALNODES {n}"),
                format!("INFO TOTALTIME {t}"),
                format!("INFO EVAL {e}"),
                "INFO PV DONE".into(),
            ] {
                info.feed(&l).expect("well-formed");
            }
        }
        let v = info.verdict((7, 8)).expect("a block");
        assert_eq!(v.eval, Eval::Win(7));
        assert_eq!((v.depth, v.nodes, v.time_ms), (9, 500, 5));
        assert_eq!((v.proof_nodes, v.proof_ms), (400, 4));
        assert!(info.feed("INFO TOTALNODES lots").is_err());
    }

    #[test]
    fn written_entries_parse_as_a_suite_with_their_notes() {
        let b = notation::replay(
            &[(7, 7), (8, 8), (7, 8)],
            (15, 15),
            Rule::Renju,
            ReplayEnd::default(),
        )
        .expect("legal");
        let v = Verdict {
            eval: Eval::Win(9),
            mv: (7, 9),
            depth: 12,
            nodes: 1000,
            time_ms: 5,
            proof_nodes: 800,
            proof_ms: 4,
        };
        let mut text = String::new();
        write_suite_entry(&mut text, "renju x", &b, &v, None, "win-vct");
        write_suite_entry(
            &mut text,
            "renju y",
            &b,
            &v.clone(),
            Some(&v),
            "must-defend",
        );
        let ps = suite::parse(&text).expect("a suite");
        assert_eq!(ps.len(), 2);
        assert_eq!(ps[1].expect, suite::Expect::MustDefend(None));
        assert_eq!(ps[0].to_move, Color::White);
        assert_eq!(ps[0].expect, suite::Expect::WinVct);
        let notes = judge_notes(&text).expect("notes");
        assert_eq!(notes["renju x"].proof_nodes, 800);
        assert!(judge_notes("[a]\n# judge +M3 proof-nodes x proof-ms 1\n").is_err());
    }
}
