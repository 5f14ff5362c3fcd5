//! `judge compare`: the engine's threat search on a judged suite beside the judge's figures.

use std::collections::HashMap;
use std::time::Duration;

use engine::tss::Budget;
use engine::tss::suite;

use super::CompareArgs;
use crate::tactics::run_position;

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

/// The `q` quantile (0.5: the median) by the nearest rank; the default of `T` when `v` is empty.
pub(super) fn percentile<T: Copy + Ord + Default>(v: &[T], q: f64) -> T {
    let mut v = v.to_vec();
    v.sort_unstable();
    let rank = ((v.len() as f64 * q).ceil() as usize).clamp(1, v.len().max(1)) - 1;
    v.get(rank).copied().unwrap_or_default()
}

pub(super) fn compare(a: CompareArgs) -> Result<(), String> {
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
            percentile(&times, 0.5).as_secs_f64() * 1e3,
            percentile(&solved_times, 0.5).as_secs_f64() * 1e3,
            percentile(&jn, 0.5),
            percentile(&jm, 0.5)
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
    use std::path::Path;

    /// The committed judged suites stay readable by the suite parser and by `compare`, every
    /// entry carries its judge line, and the held-out part holds whole games no other part has.
    #[test]
    fn committed_judged_suites_parse() {
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../engine/tests/fixtures/tactics-judged");
        let mut names = std::collections::HashSet::new();
        for entry in std::fs::read_dir(&dir).expect("the suite folder") {
            let path = entry.expect("a folder entry").path();
            let stem = path
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            if path.extension().is_none_or(|e| e != "txt") {
                continue;
            }
            // RULE[-SOURCE][-held-out].txt: `freestyle`, `freestyle-classical-held-out`.
            let (part, held_out) = match stem.strip_suffix("-held-out") {
                Some(part) => (part, true),
                None => (stem.as_str(), false),
            };
            let rule = part.split('-').next().unwrap_or_default();
            let text = std::fs::read_to_string(&path).expect("a committed suite");
            let ps = suite::parse(&text).expect("a valid suite");
            let notes = judge_notes(&text).expect("valid judge lines");
            assert!(!ps.is_empty(), "{}", path.display());
            for p in &ps {
                assert_eq!(p.board.rule().to_string(), rule, "{}", p.name);
                assert!(notes.contains_key(&p.name), "{} has no judge line", p.name);
                let game = p
                    .name
                    .split(" game ")
                    .nth(1)
                    .and_then(|g| g.split(' ').next());
                let game: usize = game.and_then(|g| g.parse().ok()).expect("a game number");
                assert_eq!(
                    game.is_multiple_of(4),
                    held_out,
                    "{} in {}",
                    p.name,
                    path.display()
                );
                assert!(names.insert(p.name.clone()), "{} twice", p.name);
            }
        }
        assert!(names.len() >= 500, "{} judged positions", names.len());
    }
}
