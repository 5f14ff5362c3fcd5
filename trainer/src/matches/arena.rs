//! Evaluation matches: two evaluators play engine games (MCTS at a fixed visit count, no noise)
//! from seeded random openings or from the openings of a file (as the tournament manager's), each
//! opening twice with colours swapped; the score becomes an Elo difference with error bars (`stats`)
//! and a count of the opening pairs by the points each side took in them.
//!
//! Depends on `engine::mcts`, `engine::game`, `engine::eval::Evaluator`, `engine::openings`, `stats`,
//! `engine::rng`, `symmetry`.

use std::path::Path;
use std::sync::Arc;

use engine::eval::Evaluator;
use engine::game::{Board, Color, Pos, Rule};
use engine::mcts::{MctsConfig, Search, SearchLimits};
use engine::openings::{OpeningFormat, parse_openings};
use rayon::prelude::*;

#[derive(Clone, Debug)]
pub struct MatchConfig {
    pub board_size: usize,
    pub rule: Rule,
    /// Game pairs (each opening with both colours).
    pub pairs: usize,
    pub simulations: u64,
    /// Random stones played before the engines take over (diversity), when `openings` is empty.
    pub opening_moves: usize,
    /// Fixed openings (points in move order, black first) instead of random ones: pair `i` plays
    /// opening `i mod n` turned by board symmetry `i / n`, so up to 8n pairs differ. A random
    /// opening may hand the game to one colour, so that both games of most pairs go to the side
    /// it favours whoever plays it (on 20x20 at 64 visits, 179 of 200 random two-stone pairs
    /// split 1-1); a file of balanced openings measures more with the same games.
    pub openings: Vec<Vec<Pos>>,
    pub tactics: bool,
    /// VCF nodes per leaf when `tactics` is on.
    pub vcf_budget_nodes: u32,
    pub workers: usize,
    pub seed: u64,
}

impl MatchConfig {
    /// A training run's evaluation match (`eval_*` settings), from `openings` (those of the
    /// `eval_openings` file, `openings_from_file`; empty: random ones). Tactics stay off whatever
    /// the difficulty: the match measures the network, and threat search would hide its mistakes.
    pub fn for_evaluation(
        s: &crate::config::Settings,
        openings: Vec<Vec<Pos>>,
        seed: u64,
    ) -> MatchConfig {
        MatchConfig {
            board_size: s.board_size,
            rule: s.rule,
            pairs: s.eval_pairs,
            simulations: s.eval_simulations as u64,
            opening_moves: s.eval_opening_moves,
            openings,
            tactics: false,
            vcf_budget_nodes: s.vcf_budget_nodes,
            workers: s.parallel_workers,
            seed,
        }
    }

    /// Refuses more pairs than the fixed openings give distinct starts: a match would replay
    /// the same games and count them twice.
    pub fn check(&self) -> anyhow::Result<()> {
        if !self.openings.is_empty() && self.pairs > max_pairs(self.openings.len()) {
            anyhow::bail!(
                "{} pairs from {} openings: at most {} (each opening in its 8 orientations)",
                self.pairs,
                self.openings.len(),
                max_pairs(self.openings.len())
            );
        }
        Ok(())
    }
}

/// The openings of the file `path` (`format`: as the tournament manager reads them) as points
/// in move order, validated on a `board_size` board under `rule`; an empty file is an error.
pub fn openings_from_file(
    path: &Path,
    format: OpeningFormat,
    board_size: usize,
    rule: Rule,
) -> anyhow::Result<Vec<Vec<Pos>>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("openings file {}: {e}", path.display()))?;
    let n = board_size;
    let parsed = parse_openings(&text, format, n, n, rule)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    if parsed.is_empty() {
        anyhow::bail!("openings file {} has no openings", path.display());
    }
    Ok(parsed
        .iter()
        .map(|o| {
            o.stones
                .iter()
                .map(|&(x, y)| Pos::new(x as usize, y as usize))
                .collect()
        })
        .collect())
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct MatchResult {
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub elo: f64,
    pub elo_error: f64,
    /// Opening pairs by the points `a` took in them (0, ½, 1, 1½, 2): where the opening or the
    /// colour decides each game, nearly every pair is 1-1 and the score stays near 50% whatever
    /// the networks' strength, which the game count alone hides.
    pub pairs_by_points: [u32; 5],
}

impl MatchResult {
    /// "Elo +X ± Y (95%; Wilson lo..hi)", or the one-sided Wilson bound for a clean sweep (which
    /// has no finite Elo: the normal approximation would print "+1200 ± 0").
    pub fn elo_text(&self) -> String {
        let (lo, hi) = stats::wilson_bounds(&(self.wins, self.draws, self.losses).into());
        if self.losses == 0 && self.draws == 0 && self.wins > 0 {
            format!("Elo >= {lo:+.0} (95%)")
        } else if self.wins == 0 && self.draws == 0 && self.losses > 0 {
            format!("Elo <= {hi:+.0} (95%)")
        } else {
            format!(
                "Elo {:+.0} ± {:.0} (95%; Wilson {lo:+.0}..{hi:+.0})",
                self.elo, self.elo_error
            )
        }
    }

    /// "pairs by points 0/½/1/1½/2: a/b/c/d/e", from the first side's view.
    pub fn pairs_text(&self) -> String {
        let counts = self.pairs_by_points.map(|n| n.to_string()).join("/");
        format!("pairs by points 0/½/1/1½/2: {counts}")
    }

    pub fn score(&self) -> f64 {
        let n = (self.wins + self.draws + self.losses).max(1) as f64;
        (self.wins as f64 + 0.5 * self.draws as f64) / n
    }
}

/// The most pairs `openings` fixed openings can give distinct starts (see `MatchConfig::openings`).
fn max_pairs(openings: usize) -> usize {
    openings * crate::support::symmetry::COUNT
}

fn opening(cfg: &MatchConfig, pair: usize) -> Result<Board, String> {
    let n = cfg.board_size;
    let mut b = Board::new(n, n, cfg.rule).map_err(|e| e.to_string())?;
    if !cfg.openings.is_empty() {
        let count = cfg.openings.len();
        let sym = (pair / count) % crate::support::symmetry::COUNT;
        for &p in &cfg.openings[pair % count] {
            let (x, y) = crate::support::symmetry::map_xy(sym, n, p.x(), p.y());
            b.play(Pos::new(x, y)).map_err(|e| e.to_string())?;
        }
        return Ok(b);
    }
    let mut rng = crate::seeded_rng(cfg.seed ^ (pair as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
    // Openings stay near the centre so they are plausible and rarely decide the game.
    let r = (n / 4).max(1);
    let c = n / 2;
    while b.move_count() < cfg.opening_moves {
        let x = c + rng.below(2 * r + 1) - r;
        let y = c + rng.below(2 * r + 1) - r;
        let p = Pos::new(x, y);
        if b.is_legal(p) {
            b.play(p).map_err(|e| e.to_string())?;
        }
    }
    Ok(b)
}

/// One game from `start`; returns the winner's colour (None: draw).
fn game(
    cfg: &MatchConfig,
    start: Board,
    black: &Arc<dyn Evaluator>,
    white: &Arc<dyn Evaluator>,
) -> Option<Color> {
    game_moves(cfg, start, black, white).0
}

/// One game from `start`: the winner's colour (None: draw) and the moves the engines played.
fn game_moves(
    cfg: &MatchConfig,
    start: Board,
    black: &Arc<dyn Evaluator>,
    white: &Arc<dyn Evaluator>,
) -> (Option<Color>, Vec<Pos>) {
    let mk = |e: &Arc<dyn Evaluator>| {
        Search::new(
            MctsConfig {
                threads: 1,
                // Both sides run the same sequential search: left at 0, the batch would follow
                // each evaluator's `preferred_batch` (16 for networks, 1 for uniform/classical),
                // and 16 virtual-loss leaves out of a few dozen visits flatten the network's
                // tree into a near-breadth-first one, so "equal visits" would not be equal.
                batch_size: 1,
                tactics: cfg.tactics,
                vcf_budget: if cfg.tactics { cfg.vcf_budget_nodes } else { 0 },
                max_memory: 64 << 20,
                ..MctsConfig::default()
            },
            e.clone(),
        )
    };
    let mut searches = [mk(black), mk(white)];
    let mut b = start;
    let mut played = Vec::new();
    loop {
        if let Some(w) = b.winner() {
            return (Some(w), played);
        }
        if b.is_full() || b.legal_moves().is_empty() {
            return (None, played);
        }
        let s = &mut searches[b.side_to_move().index()];
        s.set_position(&b);
        let r = s.run(&SearchLimits::visits(cfg.simulations));
        let mv = if r.best == Pos::NONE {
            b.legal_moves()[0]
        } else {
            r.best
        };
        if b.play(mv).is_err() {
            // An illegal choice loses (never expected from the engine's search).
            return (Some(b.side_to_move().opp()), played);
        }
        played.push(mv);
    }
}

/// Plays `a` against `b`; the result is from `a`'s side.
pub fn play_match(
    cfg: &MatchConfig,
    a: Arc<dyn Evaluator>,
    b: Arc<dyn Evaluator>,
) -> anyhow::Result<MatchResult> {
    cfg.check()?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.workers.max(1))
        .build()?;
    let outcomes: Vec<Result<[i32; 2], String>> = pool.install(|| {
        (0..cfg.pairs)
            .into_par_iter()
            .map(|pair| {
                let start = opening(cfg, pair)?;
                // Opening stones leave some side to move; "a as black" means a plays black stones.
                let g1 = game(cfg, start.clone(), &a, &b);
                let g2 = game(cfg, start, &b, &a);
                let score = |w: Option<Color>, a_color: Color| match w {
                    None => 0,
                    Some(c) if c == a_color => 1,
                    Some(_) => -1,
                };
                Ok([score(g1, Color::Black), score(g2, Color::White)])
            })
            .collect()
    });
    let mut r = MatchResult::default();
    for o in outcomes {
        let pair = o.map_err(|e| anyhow::anyhow!("opening: {e}"))?;
        // Half points: 0..=4 from -2..=2.
        r.pairs_by_points[(pair[0] + pair[1] + 2) as usize] += 1;
        for s in pair {
            match s {
                1 => r.wins += 1,
                0 => r.draws += 1,
                _ => r.losses += 1,
            }
        }
    }
    (r.elo, r.elo_error) = stats::capped_elo(&(r.wins, r.draws, r.losses).into());
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::eval::Evaluation;
    use engine::eval::classical::ClassicalEvaluator;

    /// The classical evaluator asking for large batches, as a network does.
    struct BatchHungry;

    impl Evaluator for BatchHungry {
        fn name(&self) -> String {
            "classical-batch16".into()
        }
        fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
            ClassicalEvaluator.evaluate(boards, out)
        }
        fn preferred_batch(&self) -> usize {
            16
        }
    }

    /// Two evaluators that score every position alike must play the same moves: a search
    /// setting that followed the evaluator (its preferred batch, i.e. how many virtual-loss
    /// leaves per step) would give the network a differently shaped tree than the uniform or
    /// classical opponent at the same visit count.
    #[test]
    fn equal_evaluators_search_alike_whatever_batch_they_prefer() {
        let cfg = MatchConfig {
            board_size: 9,
            rule: Rule::Freestyle,
            pairs: 3,
            simulations: 64,
            opening_moves: 2,
            openings: Vec::new(),
            tactics: false,
            vcf_budget_nodes: 0,
            workers: 1,
            seed: 3,
        };
        let hungry: Arc<dyn Evaluator> = Arc::new(BatchHungry);
        let plain: Arc<dyn Evaluator> = Arc::new(ClassicalEvaluator);
        for pair in 0..cfg.pairs {
            let start = opening(&cfg, pair).unwrap();
            let a = game_moves(&cfg, start.clone(), &hungry, &plain);
            let b = game_moves(&cfg, start, &plain, &plain);
            assert!(a.1.len() > 4, "pair {pair}: a real game");
            assert_eq!(
                a, b,
                "pair {pair}: the batch-hungry evaluator searched differently"
            );
        }
    }

    /// The same deterministic player on both sides plays each opening's two games alike, so
    /// every pair splits 1-1 (or draws twice): the pair counts must say so, and add up to the
    /// match's points.
    #[test]
    fn pairs_by_points_count_each_opening_once() {
        let cfg = MatchConfig {
            board_size: 9,
            rule: Rule::Freestyle,
            pairs: 4,
            simulations: 32,
            opening_moves: 2,
            openings: Vec::new(),
            tactics: false,
            vcf_budget_nodes: 0,
            workers: 1,
            seed: 5,
        };
        let plain: Arc<dyn Evaluator> = Arc::new(ClassicalEvaluator);
        let r = play_match(&cfg, plain.clone(), plain).unwrap();
        assert_eq!(r.pairs_by_points.iter().sum::<u32>(), 4);
        assert_eq!(r.pairs_by_points[2], 4, "{r:?}");
        let half_points: u32 = r.pairs_by_points.iter().zip(0..).map(|(n, h)| n * h).sum();
        assert_eq!(half_points, 2 * r.wins + r.draws);
    }

    /// With `tactics` the match's searches run the engine's threat search: from an opening where
    /// black, to move, has an open three, black makes the open four and the five whatever the
    /// (uniform) evaluator says, at one visit a move; without it the same search plays elsewhere.
    #[test]
    fn tactics_in_a_match_finish_a_won_position() {
        let stones = |s: &[(usize, usize)]| s.iter().map(|&(x, y)| Pos::new(x, y)).collect();
        let cfg = MatchConfig {
            board_size: 9,
            rule: Rule::Freestyle,
            pairs: 1,
            simulations: 1,
            opening_moves: 0,
            openings: vec![stones(&[(3, 4), (0, 0), (4, 4), (0, 8), (5, 4), (8, 0)])],
            tactics: true,
            vcf_budget_nodes: 64,
            workers: 1,
            seed: 7,
        };
        let uniform: Arc<dyn Evaluator> = Arc::new(engine::eval::UniformEvaluator);
        let start = opening(&cfg, 0).unwrap();
        let (winner, moves) = game_moves(&cfg, start.clone(), &uniform, &uniform);
        assert_eq!(winner, Some(Color::Black), "{moves:?}");
        assert_eq!(moves.len(), 3, "open four, a block, the five: {moves:?}");
        assert!(
            moves[0] == Pos::new(2, 4) || moves[0] == Pos::new(6, 4),
            "{moves:?}"
        );
        let off = MatchConfig {
            tactics: false,
            ..cfg
        };
        let (_, blind) = game_moves(&off, start, &uniform, &uniform);
        assert_ne!(blind.first(), moves.first(), "without tactics: {blind:?}");
    }

    /// Fixed openings: pair i plays opening i mod n, turned by symmetry i / n once the list is
    /// used up, so no two of the 8n pairs start alike; more pairs than that is an error.
    #[test]
    fn fixed_openings_turn_by_symmetry_once_used_up() {
        let stones = |s: &[(usize, usize)]| s.iter().map(|&(x, y)| Pos::new(x, y)).collect();
        let cfg = MatchConfig {
            board_size: 9,
            rule: Rule::Freestyle,
            pairs: 16,
            simulations: 8,
            opening_moves: 2,
            openings: vec![
                stones(&[(4, 4), (5, 4), (3, 5)]),
                stones(&[(4, 4), (4, 5), (6, 6)]),
            ],
            tactics: false,
            vcf_budget_nodes: 0,
            workers: 1,
            seed: 5,
        };
        let first = opening(&cfg, 0).unwrap();
        assert_eq!(first.move_count(), 3);
        for (i, &p) in cfg.openings[0].iter().enumerate() {
            assert_eq!(
                first.moves()[i],
                p,
                "pair 0 is the first opening as written"
            );
        }
        let starts: std::collections::HashSet<Vec<Pos>> = (0..cfg.pairs)
            .map(|i| opening(&cfg, i).unwrap().moves())
            .collect();
        assert_eq!(starts.len(), 16, "every pair starts from its own position");
        // Pair 2 is the first opening turned by 90 degrees: (x, y) -> (8 - y, x).
        assert_eq!(opening(&cfg, 2).unwrap().moves()[1], Pos::new(4, 5));
        let plain: Arc<dyn Evaluator> = Arc::new(ClassicalEvaluator);
        let too_many = MatchConfig { pairs: 17, ..cfg };
        let e = play_match(&too_many, plain.clone(), plain)
            .unwrap_err()
            .to_string();
        assert!(e.contains("at most 16"), "{e}");
    }
}
