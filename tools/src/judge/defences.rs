//! `judge defences`: the exact defences of each `must-defend` entry of a judged suite, by Rapfi.
//! Every legal move within `DEFENCE_REACH` points of a stone is played and Rapfi searches the
//! attacker's reply: a move after which it finds a mate is refuted, the others hold. A cheap
//! first pass refutes most moves; each survivor is searched again at the full budget. The entry
//! then expects exactly the moves that hold (`expect must-defend x,y ...`); one where none holds
//! becomes `expect lost` (the labelling search missed the loss), with a comment saying so.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use engine::game::{Board, Pos};
use engine::tss::suite::{self, Expect};

use super::{Eval, Rapfi};

/// Moves farther than this (Chebyshev distance) from every stone are not tried: they neither
/// block a line through a stone nor make a four.
pub const DEFENCE_REACH: i64 = 4;

#[derive(Debug, clap::Args)]
pub struct DefencesArgs {
    /// A judged suite (`judge label` or `judge split` output).
    pub suite: PathBuf,
    /// Rapfi's Gomocup brain (see `judge label`).
    #[arg(long)]
    pub rapfi: PathBuf,
    /// Nodes of the first pass over every candidate.
    #[arg(long, default_value_t = 50_000)]
    pub quick_nodes: u64,
    /// Nodes for each move the first pass left standing (the labels' budget by default).
    #[arg(long, default_value_t = 500_000)]
    pub nodes: u64,
    /// Wall-clock limit of Rapfi per search, seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout_s: u64,
    /// Entries where more moves than this survive the first pass keep `must-defend` without
    /// points: a threat many moves stop is no test of exact defence, and confirming each of them
    /// at the full budget is the expensive part.
    #[arg(long, default_value_t = 6)]
    pub max_listed: usize,
    /// The suite to write (the input is left as it was).
    #[arg(long)]
    pub out: PathBuf,
}

/// What the judge found for one entry.
struct Found {
    tried: usize,
    /// The moves that hold, or None when more than `max_listed` survived the first pass.
    holds: Option<Vec<Pos>>,
}

pub(super) fn defences(a: DefencesArgs) -> Result<(), String> {
    let text =
        std::fs::read_to_string(&a.suite).map_err(|e| format!("{}: {e}", a.suite.display()))?;
    let positions = suite::parse(&text).map_err(|e| format!("{}: {e}", a.suite.display()))?;
    let timeout = Duration::from_secs(a.timeout_s);
    let mut rapfi = Rapfi::start(&a.rapfi, timeout)?;
    let mut found: HashMap<String, Found> = HashMap::new();
    let started = Instant::now();
    let wanted: Vec<_> = positions
        .iter()
        .filter(|p| matches!(p.expect, Expect::MustDefend(_)))
        .collect();
    for (i, pos) in wanted.iter().enumerate() {
        let at = |e: String| format!("{} line {}: {e}", a.suite.display(), pos.line);
        let candidates = candidates(&pos.board);
        let holds = match holding(&mut rapfi, &pos.board, &candidates, &a).map_err(at)? {
            Judging::Done(holds) => holds,
            // Rapfi dies on some renju positions: the entry keeps its label without points.
            Judging::JudgeDied => {
                eprintln!(
                    "\n{}",
                    at("Rapfi died twice on one move; entry left as it was".into())
                );
                continue;
            }
        };
        eprint!(
            "\rjudge defences: {}/{} positions, {:.0} s",
            i + 1,
            wanted.len(),
            started.elapsed().as_secs_f64()
        );
        found.insert(
            pos.name.clone(),
            Found {
                tried: candidates.len(),
                holds,
            },
        );
    }
    eprintln!();
    rapfi.quit();
    let out = rewrite(&text, &found, &a);
    eprint!("{}", histogram(&found));
    std::fs::write(&a.out, out).map_err(|e| format!("{}: {e}", a.out.display()))
}

/// The legal moves within `DEFENCE_REACH` of a stone, in board order.
fn candidates(board: &Board) -> Vec<Pos> {
    let stones: Vec<(i64, i64)> = board
        .history()
        .iter()
        .map(|(p, _)| (p.x() as i64, p.y() as i64))
        .collect();
    board
        .legal_moves()
        .into_iter()
        .filter(|p| {
            let (x, y) = (p.x() as i64, p.y() as i64);
            stones
                .iter()
                .any(|&(sx, sy)| (sx - x).abs().max((sy - y).abs()) <= DEFENCE_REACH)
        })
        .collect()
}

/// What `holding` found.
enum Judging {
    /// The moves that hold, in board order; None when more than `max_listed` survived the first
    /// pass.
    Done(Option<Vec<Pos>>),
    /// Rapfi died twice on the same move.
    JudgeDied,
}

/// The candidates after which Rapfi finds no mate for the attacker.
fn holding(
    rapfi: &mut Rapfi,
    board: &Board,
    candidates: &[Pos],
    a: &DefencesArgs,
) -> Result<Judging, String> {
    let mut survivors = Vec::new();
    for &mv in candidates {
        let mut after = board.clone();
        after.play(mv).map_err(|e| e.to_string())?;
        let Some(refuted) = refuted(rapfi, &after, a.quick_nodes)? else {
            return Ok(Judging::JudgeDied);
        };
        if !refuted {
            survivors.push((mv, after));
        }
    }
    if survivors.len() > a.max_listed {
        return Ok(Judging::Done(None));
    }
    let mut holds = Vec::new();
    for (mv, after) in survivors {
        let Some(refuted) = refuted(rapfi, &after, a.nodes)? else {
            return Ok(Judging::JudgeDied);
        };
        if !refuted {
            holds.push(mv);
        }
    }
    holds.sort();
    Ok(Judging::Done(Some(holds)))
}

/// Does the side to move on `after` (the attacker) mate, by Rapfi at `nodes`? A five on the board
/// already ended the game, so nothing refutes the move that made it. None when Rapfi died on it
/// twice (it is started again each time).
fn refuted(rapfi: &mut Rapfi, after: &Board, nodes: u64) -> Result<Option<bool>, String> {
    if after.winner().is_some() {
        return Ok(Some(false));
    }
    for _ in 0..2 {
        if let Some(v) = rapfi.judge_or_restart(after, nodes, false)? {
            return Ok(Some(matches!(v.eval, Eval::Win(_))));
        }
    }
    Ok(None)
}

/// The suite with each judged entry's `expect` line replaced and a comment before it.
fn rewrite(text: &str, found: &HashMap<String, Found>, a: &DefencesArgs) -> String {
    let mut out = String::new();
    let mut current: Option<&Found> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            current = found.get(name.trim());
        }
        match current {
            Some(f) if line.trim_start().starts_with("expect must-defend") => {
                let Some(holds) = &f.holds else {
                    writeln!(
                        out,
                        "# defences: more than {} of {} moves within {DEFENCE_REACH} of a stone \
                         survive Rapfi's first pass at {} nodes (not listed)\n{line}",
                        a.max_listed, f.tried, a.quick_nodes
                    )
                    .expect("writing to a String");
                    continue;
                };
                let points: Vec<String> = holds
                    .iter()
                    .map(|p| format!("{},{}", p.x(), p.y()))
                    .collect();
                writeln!(
                    out,
                    "# defences: {} of {} moves within {DEFENCE_REACH} of a stone hold (Rapfi \
                     finds no mate after them at {} then {} nodes)",
                    holds.len(),
                    f.tried,
                    a.quick_nodes,
                    a.nodes
                )
                .expect("writing to a String");
                if holds.is_empty() {
                    out.push_str("# every move was refuted: the position is lost\nexpect lost\n");
                } else {
                    writeln!(out, "expect must-defend {}", points.join(" "))
                        .expect("writing to a String");
                }
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// How many entries have 0, 1, 2, 3 and more holding moves.
fn histogram(found: &HashMap<String, Found>) -> String {
    let mut counts = [0usize; 6];
    for f in found.values() {
        counts[f.holds.as_ref().map_or(5, |h| h.len().min(4))] += 1;
    }
    format!(
        "judge defences: moves that hold: none (lost) {}, one {}, two {}, three {}, four or more \
         {}, not listed {}\n",
        counts[0], counts[1], counts[2], counts[3], counts[4], counts[5]
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::game::Rule;
    use engine::notation::{self, ReplayEnd};

    #[test]
    fn candidates_stay_near_the_stones() {
        let b = notation::replay(
            &[(7, 7), (8, 8)],
            (15, 15),
            Rule::Freestyle,
            ReplayEnd::default(),
        )
        .expect("legal");
        let c = candidates(&b);
        // Two overlapping 9x9 squares: a 10x10 one less two far corners and the two stones.
        assert_eq!(c.len(), 10 * 10 - 2 - 2);
        assert!(
            c.iter()
                .all(|p| (3..=12).contains(&p.x()) && (3..=12).contains(&p.y()))
        );
    }

    #[test]
    fn judged_entries_get_their_defences_or_become_lost() {
        let text = "# h\n\n[a game 1 ply 3]\n# judge 0\nsize 15 15\nmoves 7,7 8,8 7,8\n\
                    expect must-defend\n\n[b game 2 ply 3]\nmoves 7,7 8,8 7,8\nexpect must-defend\n\
                    \n[c game 3 ply 3]\nmoves 7,7\nexpect win-vct\n\n[d game 4 ply 3]\n\
                    moves 7,7 8,8 7,8\nexpect must-defend\n";
        let b = notation::replay(&[(7, 7)], (15, 15), Rule::Freestyle, ReplayEnd::default())
            .expect("legal");
        let p = |x, y| b.pos(x, y).expect("on the board");
        let found = HashMap::from([
            (
                "a game 1 ply 3".to_string(),
                Found {
                    tried: 40,
                    holds: Some(vec![p(7, 6), p(7, 9)]),
                },
            ),
            (
                "d game 4 ply 3".to_string(),
                Found {
                    tried: 40,
                    holds: None,
                },
            ),
            (
                "b game 2 ply 3".to_string(),
                Found {
                    tried: 40,
                    holds: Some(vec![]),
                },
            ),
        ]);
        let a = DefencesArgs {
            suite: "s".into(),
            rapfi: "r".into(),
            quick_nodes: 5,
            nodes: 50,
            timeout_s: 1,
            max_listed: 6,
            out: "o".into(),
        };
        let out = rewrite(text, &found, &a);
        let ps = suite::parse(&out).expect("a suite");
        assert_eq!(
            ps[0].expect,
            Expect::MustDefend(Some(vec![p(7, 6), p(7, 9)]))
        );
        assert_eq!(ps[1].expect, Expect::Lost);
        assert_eq!(ps[2].expect, Expect::WinVct);
        assert_eq!(ps[3].expect, Expect::MustDefend(None));
        assert!(out.contains("more than 6 of 40 moves"));
        assert!(out.contains("# defences: 2 of 40 moves"));
    }
}
