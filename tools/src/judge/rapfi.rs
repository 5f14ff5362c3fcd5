//! Rapfi over the Gomocup protocol: a search at a fixed node budget (one thread, no time limit,
//! hash cleared) and what it said, read from its `show_detail 2` lines.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use engine::game::{Board, Rule};

use crate::tournament::log::Logger;
use crate::tournament::process::{EngineProcess, Recv};
use crate::tournament::spec::EngineSpec;

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
    /// Its program, to start it again after it died.
    exe: PathBuf,
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
            exe: exe.clone(),
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
    /// is answered. Probes come every 20 ms (a wait of 200 ms cost more than the search itself
    /// at small budgets); a probe answered late leaves an extra acknowledgement behind, which is
    /// harmless: Rapfi reads its commands in order.
    fn settle(&mut self) -> Result<(), String> {
        const ACK: &str = "Transposition table cleared";
        let deadline = Instant::now() + self.timeout;
        while Instant::now() < deadline {
            self.proc.send("YXHASHCLEAR")?;
            match self.wait_for_within(Duration::from_millis(20), |l| l.contains(ACK)) {
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

    /// `judge`, except that a Rapfi that died on the position (it segfaults on some renju
    /// positions) is started again and None returned: the caller counts the position and goes on.
    pub fn judge_or_restart(
        &mut self,
        board: &Board,
        nodes: u64,
        pass: bool,
    ) -> Result<Option<Verdict>, String> {
        match self.judge(board, nodes, pass) {
            Err(e) if e == EXITED => {
                *self = Rapfi::start(&self.exe, self.timeout)?;
                Ok(None)
            }
            other => other.map(Some),
        }
    }

    pub fn quit(self) {
        self.proc.quit(Duration::from_secs(2));
    }
}

/// The VERSION file build-rapfi.sh leaves beside the binary, as comment lines.
pub(super) fn build_notes(exe: &Path) -> String {
    let version = exe.with_file_name("VERSION");
    match std::fs::read_to_string(&version) {
        Ok(t) => t.lines().map(|l| format!("#   {l}\n")).collect(),
        Err(_) => format!("#   (no {} found)\n", version.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evals_parse_as_rapfi_prints_them() {
        assert_eq!(Eval::parse("+M15"), Some(Eval::Win(15)));
        assert_eq!(Eval::parse("-M4"), Some(Eval::Loss(4)));
        assert_eq!(Eval::parse("-312"), Some(Eval::Score(-312)));
        assert_eq!(Eval::parse("+M*"), None);
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
}
