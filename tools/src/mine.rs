//! `fivezero-tools mine-tactics`: mines a tactics suite from self-play. Plays games between
//! classical move rankers of different strengths (each side picks among its top 1, 2 or 4
//! scored moves), then walks back from each finished game: the earliest position where the
//! winner, to move, has a verified forced win (`win-vcf` / `win-vct`), and the positions where the
//! loser, to move, still had moves that hold (`must-defend` with the exact set from
//! `engine::tss::defences`, every move settled) or had none (`lost`). Difficulty (plies, nodes
//! the solver needed) goes into a comment per position.
//!
//! Takes a thread count and a wall-clock budget so the same command runs on a laptop or a big
//! machine; the output is the suite text format of `engine::tss::suite`, in game order.
//! Depends on `engine` (game, classical move ranking, tss) only.

use std::fmt::Write as _;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use engine::eval::classical::scored_moves;
use engine::game::{Board, Color, Pos, Rule};
use engine::tss::{Budget, Solve, Threat, WinKind, defences, solve_vct};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Suite file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Rules to play, comma separated (games cycle through them).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "freestyle,standard,renju"
    )]
    pub rules: Vec<String>,
    /// Board sizes (square), comma separated (games cycle through them).
    #[arg(long, value_delimiter = ',', default_value = "15,20")]
    pub sizes: Vec<usize>,
    /// Games to play at most.
    #[arg(long, default_value_t = 1000)]
    pub games: usize,
    /// Wall-clock budget in seconds: no game starts after it.
    #[arg(long, default_value_t = 60)]
    pub time_s: u64,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Node budget of each proof and defence search.
    #[arg(long, default_value_t = 2_000_000)]
    pub solve_nodes: u64,
    /// Seed of game 0 (game i uses seed + i).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// One mined position, rendered.
struct Mined {
    game: usize,
    ply: usize,
    text: String,
    kind: &'static str,
}

fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Plays one game; `None` when nobody made five.
fn play(rule: Rule, size: usize, seed: u64) -> Option<Board> {
    let mut b = Board::new(size, size, rule).ok()?;
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let strengths = [1usize, 2, 4];
    let top = [
        strengths[(next(&mut rng) % 3) as usize],
        strengths[(next(&mut rng) % 3) as usize],
    ];
    let opening = 2 + (next(&mut rng) % 3) as usize;
    while b.winner().is_none() && !b.is_full() {
        let moves = scored_moves(&b);
        if moves.is_empty() {
            return None;
        }
        let k = if b.move_count() < opening {
            moves.len().min(8)
        } else {
            moves.len().min(top[b.side_to_move().index()])
        };
        let m = moves[(next(&mut rng) % k as u64) as usize].pos;
        b.play(m).ok()?;
    }
    b.winner().is_some().then_some(b)
}

fn header(b: &Board, name: &str) -> String {
    let moves: Vec<String> = b
        .moves()
        .iter()
        .map(|p| format!("{},{}", p.x(), p.y()))
        .collect();
    format!(
        "\n[{name}]\nsize {} {}\nrule {}\nmoves {}\n",
        b.width(),
        b.height(),
        b.rule(),
        moves.join(" ")
    )
}

fn points(ps: &[Pos]) -> String {
    ps.iter()
        .map(|p| format!("{},{}", p.x(), p.y()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Walks back from the end of a finished game and renders what it finds.
fn mine_game(game: usize, mut b: Board, nodes: u64) -> Vec<Mined> {
    let Some(winner) = b.winner() else {
        return Vec::new();
    };
    let mut walk = Walk {
        game,
        tag: format!("mined-{}-{}", b.rule(), b.width()),
        nodes,
        winner,
        found: Vec::new(),
        earliest_win: None,
        defends: 0,
        lost: 0,
    };
    b.undo();
    while b.undo().is_some() {
        let step = if b.side_to_move() == winner {
            walk.winner_to_move(&mut b)
        } else {
            walk.loser_to_move(&mut b)
        };
        if step.is_break() {
            break;
        }
    }
    walk.found.extend(walk.earliest_win);
    walk.found
}

/// The walk back through one game: what it has found so far.
struct Walk {
    game: usize,
    tag: String,
    nodes: u64,
    winner: Color,
    /// Defence positions (`must-defend`, `lost`), in the order met.
    found: Vec<Mined>,
    /// The earliest verified forced win met so far (the walk goes backwards).
    earliest_win: Option<Mined>,
    defends: usize,
    lost: usize,
}

impl Walk {
    fn mined(&self, b: &Board, text: String, kind: &'static str) -> Mined {
        Mined {
            game: self.game,
            ply: b.move_count(),
            text,
            kind,
        }
    }

    fn header(&self, b: &Board) -> String {
        header(b, &format!("{}-{}-{}", self.tag, self.game, b.move_count()))
    }

    /// The winner to move: a verified forced win here is the earliest so far; the walk stops
    /// where the solver finds none (or cannot verify it).
    fn winner_to_move(&mut self, b: &mut Board) -> ControlFlow<()> {
        let (r, st) = solve_vct(b, self.winner, Budget::nodes(self.nodes));
        let Solve::Win(p) = r else {
            return ControlFlow::Break(());
        };
        if st.rejected > 0 {
            return ControlFlow::Break(());
        }
        // A three-ply line is a straight four or a double four: too easy to keep.
        if p.line.len() >= 5 {
            let (kind, name) = if p.kind == WinKind::Vcf {
                ("win-vcf", "VCF")
            } else {
                ("win-vct", "VCT")
            };
            let mut text = self.header(b);
            let _ = write!(
                text,
                "# {name} of {} plies, {} solver nodes; verified\nexpect {kind}\n",
                p.line.len(),
                st.nodes
            );
            self.earliest_win = Some(self.mined(b, text, kind));
        }
        ControlFlow::Continue(())
    }

    /// The loser to move: a position where every move is settled as holding or losing against
    /// the winner's threat is kept (a few per game); the walk stops where the defence search
    /// cannot settle it.
    fn loser_to_move(&mut self, b: &mut Board) -> ControlFlow<()> {
        let side = b.side_to_move();
        if b.points()
            .any(|p| b.is_empty(p) && b.makes_five(p, self.winner))
        {
            // Blocking a four (or facing two) is no test of a defence search: walk on.
            return ControlFlow::Continue(());
        }
        if !matches!(
            solve_vct(b, side, Budget::nodes(self.nodes)).0,
            Solve::NoWin
        ) {
            // The loser had a win of its own here (or may have): not a defence position.
            return ControlFlow::Continue(());
        }
        let d = defences(b, side, Budget::nodes(self.nodes));
        let Threat::Win(kind) = d.threat else {
            return ControlFlow::Break(());
        };
        if !d.moves.unknown.is_empty() {
            return ControlFlow::Break(());
        }
        let holds = &d.moves.holds;
        let (wanted, label) = if holds.is_empty() {
            (self.lost < 1, "lost")
        } else {
            (self.defends < 2 && holds.len() <= 12, "must-defend")
        };
        if wanted {
            let mut text = self.header(b);
            let _ = write!(
                text,
                "# the opponent has a {kind:?}; {} of {} moves lose, every one settled\nexpect {label} {}\n",
                d.moves.loses.len(),
                d.moves.loses.len() + holds.len(),
                points(holds)
            );
            if holds.is_empty() {
                self.lost += 1;
            } else {
                self.defends += 1;
            }
            let mined = self.mined(b, text, label);
            self.found.push(mined);
        }
        ControlFlow::Continue(())
    }
}

pub fn run(args: Args) -> Result<(), String> {
    let rules: Vec<Rule> = args
        .rules
        .iter()
        .map(|r| r.parse())
        .collect::<Result<_, _>>()?;
    if rules.is_empty() || args.sizes.is_empty() || args.threads == 0 {
        return Err("need at least one rule, one size and one thread".into());
    }
    for &s in &args.sizes {
        Board::new(s, s, Rule::Freestyle).map_err(|e| e.to_string())?;
    }
    let deadline = Instant::now() + Duration::from_secs(args.time_s);
    let next_game = AtomicUsize::new(0);
    let found = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..args.threads {
            scope.spawn(|| {
                loop {
                    let g = next_game.fetch_add(1, Ordering::Relaxed);
                    if g >= args.games || Instant::now() >= deadline {
                        break;
                    }
                    let rule = rules[g % rules.len()];
                    let size = args.sizes[(g / rules.len()) % args.sizes.len()];
                    let Some(b) = play(rule, size, args.seed.wrapping_add(g as u64)) else {
                        continue;
                    };
                    // Named by seed, so suites from runs with other seeds merge without clashes.
                    let mined = mine_game(args.seed as usize + g, b, args.solve_nodes);
                    found
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(mined);
                }
            });
        }
    });
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    found.sort_by_key(|m| (m.game, m.ply));
    let games = next_game.load(Ordering::Relaxed).min(args.games);
    let mut text = format!(
        "# fivezero tactics suite mined from self-play by `fivezero-tools mine-tactics` (seed {}, \
         {} games started): classical rankers of different strengths, walked back from each \
         finished game. Wins are verified against every defence; must-defend lists are every \
         move that holds (no VCF/VCT after it), all other moves proven lost.\n",
        args.seed, games
    );
    for m in &found {
        text.push_str(&m.text);
    }
    std::fs::write(&args.out, text).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let count = |k: &str| found.iter().filter(|m| m.kind == k).count();
    println!(
        "{} games, {} positions: win-vcf {} win-vct {} must-defend {} lost {} -> {}",
        games,
        found.len(),
        count("win-vcf"),
        count("win-vct"),
        count("must-defend"),
        count("lost"),
        args.out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::tss::suite::{self, Expect};
    use engine::tss::verify_strategy;

    /// What the miner writes parses, and each claim holds when checked again from the text.
    #[test]
    fn mined_positions_parse_and_their_claims_hold() {
        let mut seen = 0;
        for seed in 1..40 {
            let Some(b) = play(Rule::Freestyle, 15, seed) else {
                continue;
            };
            let text: String = mine_game(0, b, 300_000)
                .iter()
                .map(|m| m.text.clone())
                .collect();
            for pos in suite::parse(&text).unwrap() {
                let mut b = pos.board.clone();
                let attacker = match pos.expect {
                    Expect::WinVcf | Expect::WinVct => pos.to_move,
                    _ => pos.to_move.opp(),
                };
                if matches!(pos.expect, Expect::WinVcf | Expect::WinVct) {
                    let Solve::Win(p) = solve_vct(&mut b, attacker, Budget::nodes(300_000)).0
                    else {
                        panic!("{}: no win", pos.name)
                    };
                    assert!(
                        verify_strategy(&mut b, attacker, &p.strategy),
                        "{}",
                        pos.name
                    );
                } else {
                    let holds = match &pos.expect {
                        Expect::MustDefend(Some(h)) => h.clone(),
                        Expect::Lost => Vec::new(),
                        other => panic!("{}: unexpected {other:?}", pos.name),
                    };
                    let d = defences(&b, pos.to_move, Budget::nodes(300_000));
                    assert_eq!(d.moves.holds, holds, "{}", pos.name);
                }
                seen += 1;
            }
            if seen >= 6 {
                break;
            }
        }
        assert!(seen >= 6, "only {seen} positions mined");
    }
}
