//! `fivezero-tools judge`: an independent judge for the threat search. Positions are labelled by
//! Rapfi (github.com/dhbloo/rapfi, GPL, run only as an external Gomocup brain; built by
//! `scripts/build-rapfi.sh`), and the engine's `engine::tss` is then measured against those
//! labels, so its verdicts are checked by something other than its own solver.
//!
//! One subcommand per step (`rapfi` runs the judge; one module per other step):
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
//! - `split`: cuts a labelled suite by game into the part tuning reads and a held-out part;
//! - `defences`: the exact defences of each must-defend entry (every nearby move, Rapfi judging);
//! - `play`: the whole engine moves in each position at its time per move and Rapfi judges the
//!   move; solved/total and the time to the move beside Rapfi's time to its proof;
//! - `compare`: runs `engine::tss::analyse` (through the `tactics` runner's judging) on such a
//!   suite at a fixed budget and prints solved/total and median time per rule and label beside
//!   Rapfi's nodes and time to its proof.
//!
//! Rapfi's mate is the judge's claim, not a certificate: alpha-beta with pruning can in principle
//! miss a defence. The engine's own win claims are still re-checked by `verify_strategy`.
//! Depends on `engine` (game, notation, tss), the tournament's process handling and `tactics`.

mod compare;
mod defences;
mod label;
mod play;
mod rapfi;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use engine::game::{Board, Rule};
use engine::notation::{self, ReplayEnd};

pub use compare::{JudgeNote, judge_notes};
pub use rapfi::{Eval, Rapfi, Verdict};

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
    /// The exact defences of each must-defend entry: every nearby move tried, Rapfi judging.
    Defences(defences::DefencesArgs),
    /// The engine moves in each position at its time per move; Rapfi judges the move.
    Play(play::PlayArgs),
    /// Cut a judged suite in two by game: a held-out part (every Nth game) and the rest.
    Split(SplitArgs),
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

#[derive(Debug, clap::Args)]
pub struct SplitArgs {
    /// A judged suite (`judge label` output) whose entries are named `... game N ply M`.
    pub suite: PathBuf,
    /// Games whose number is a multiple of this go to the held-out part.
    #[arg(long, default_value_t = 4)]
    pub every: usize,
    /// The part tuning may look at.
    #[arg(long)]
    pub tuning: PathBuf,
    /// The part it never looks at.
    #[arg(long)]
    pub held_out: PathBuf,
}

pub fn run(args: Args) -> Result<(), String> {
    match args.cmd {
        Cmd::Positions(a) => positions(a),
        Cmd::Label(a) => label::label(a),
        Cmd::Compare(a) => compare::compare(a),
        Cmd::Defences(a) => defences::defences(a),
        Cmd::Play(a) => play::play(a),
        Cmd::Split(a) => label::split(a),
    }
}

// --- positions files ---------------------------------------------------------------------

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

#[cfg(test)]
mod tests {
    use super::*;
    use engine::game::Color;

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
}
