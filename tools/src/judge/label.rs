//! `judge label`: a positions file labelled by Rapfi, written as a tactics suite.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use engine::game::{Board, Color, Rule};

use super::rapfi::build_notes;
use super::{Eval, LabelArgs, Rapfi, SplitArgs, Verdict, parse_positions};

pub(super) fn label(a: LabelArgs) -> Result<(), String> {
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
        let mut crashed = || {
            eprintln!(
                "\njudge label: {} line {}: Rapfi crashed on it; counted as judge-crashed",
                a.positions.display(),
                p.line
            );
            *counts.entry((p.board.rule(), "judge-crashed")).or_default() += 1;
        };
        let Some(v) = rapfi
            .judge_or_restart(&p.board, a.nodes, false)
            .map_err(at)?
        else {
            crashed();
            continue;
        };
        // No mate either way: does the opponent threaten one (a mate if we passed)?
        let threat = if matches!(v.eval, Eval::Score(_)) {
            let Some(t) = rapfi
                .judge_or_restart(&p.board, a.nodes, true)
                .map_err(at)?
            else {
                crashed();
                continue;
            };
            Some(t)
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

/// The game number in an entry name `... game N ply M`.
fn game_number(name: &str) -> Option<usize> {
    let mut words = name.split_whitespace();
    while let Some(w) = words.next() {
        if w == "game" {
            return words.next()?.parse().ok();
        }
    }
    None
}

/// A judged suite cut into its held-out part (games numbered a multiple of `every`) and the
/// rest: (tuning, held-out) texts, each with the suite's header and a line naming its part.
///
/// # Errors
/// An entry without a game number in its name, named by its line.
pub fn split_suite(text: &str, every: usize, source: &str) -> Result<(String, String), String> {
    let every = every.max(1);
    let mut header = String::new();
    let (mut tuning, mut held_out) = (String::new(), String::new());
    let mut into_held_out: Option<bool> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(name) = line.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            let game = game_number(name)
                .ok_or_else(|| format!("line {}: no `game N` in the name '{name}'", i + 1))?;
            into_held_out = Some(game % every == 0);
        } else if line.starts_with("# counts") {
            into_held_out = None;
            continue;
        }
        let out = match into_held_out {
            // The whole suite's counts, which neither part keeps.
            None if !tuning.is_empty() || !held_out.is_empty() => continue,
            None => &mut header,
            Some(true) => &mut held_out,
            Some(false) => &mut tuning,
        };
        out.push_str(line);
        out.push('\n');
    }
    let part = |what: &str, body: &str| {
        format!(
            "{}\n# part: {what} of {source} (held out: games numbered a multiple of {every})\n\n{body}",
            header.trim_end()
        )
    };
    Ok((part("tuning", &tuning), part("held-out", &held_out)))
}

pub(super) fn split(a: SplitArgs) -> Result<(), String> {
    let text =
        std::fs::read_to_string(&a.suite).map_err(|e| format!("{}: {e}", a.suite.display()))?;
    let source = a.suite.file_name().unwrap_or_default().to_string_lossy();
    let (tuning, held_out) =
        split_suite(&text, a.every, &source).map_err(|e| format!("{}: {e}", a.suite.display()))?;
    for (path, body) in [(&a.tuning, tuning), (&a.held_out, held_out)] {
        std::fs::write(path, body).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::judge_notes;
    use engine::notation::{self, ReplayEnd};
    use engine::tss::suite;
    use std::collections::HashSet;

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

    #[test]
    fn a_split_keeps_every_entry_once_and_holds_out_whole_games() {
        let b = notation::replay(&[(7, 7)], (15, 15), Rule::Freestyle, ReplayEnd::default())
            .expect("legal");
        let v = Verdict {
            eval: Eval::Win(5),
            mv: (8, 8),
            depth: 6,
            nodes: 10,
            time_ms: 1,
            proof_nodes: 5,
            proof_ms: 1,
        };
        let mut text = String::from("# Tactics suite\n# judge: x\n#   rapfi abc\n");
        for (g, ply) in [(1, 1), (4, 1), (4, 2), (5, 1), (8, 1)] {
            write_suite_entry(
                &mut text,
                &format!("f.pgn game {g} ply {ply}"),
                &b,
                &v,
                None,
                "win-vct",
            );
        }
        text.push_str("# counts (rule, label: positions):\n#   freestyle win-vct: 5\n");
        let (tuning, held_out) = split_suite(&text, 4, "f.txt").expect("named by game");
        let names = |t: &str| -> HashSet<String> {
            suite::parse(t)
                .expect("a suite")
                .into_iter()
                .map(|p| p.name)
                .collect()
        };
        let (t, h) = (names(&tuning), names(&held_out));
        assert_eq!(t.len() + h.len(), 5);
        assert!(
            h.iter()
                .all(|n| n.contains("game 4 ") || n.contains("game 8 ")),
            "{h:?}"
        );
        assert_eq!(t.len(), 2);
        for part in [&tuning, &held_out] {
            assert!(part.starts_with("# Tactics suite\n# judge: x\n#   rapfi abc\n# part: "));
            assert!(!part.contains("# counts"));
            assert_eq!(judge_notes(part).expect("notes").len(), names(part).len());
        }
        let e = split_suite("[no number here]\nexpect lost\n", 4, "f").unwrap_err();
        assert!(e.starts_with("line 1:"), "{e}");
    }
}
