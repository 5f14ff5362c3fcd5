//! Warm start from the project's own search (`trainer bootstrap`): games played by the engine's
//! MCTS over the classical pattern evaluator (or, with `--teacher FILE`, over a trained network
//! the engine loads, which distils that network's search into a new one of any form, as the
//! pattern network's first stage does) with threat-space tactics at a high visit count,
//! recorded exactly as self-play records its games (policy target from the root's visits or the
//! proven wins, outcome as value target; root noise and the temperature schedule for variety),
//! or, at `--visits 0`, games of the teacher's own policy recorded with that policy as target,
//! so a fresh network first learns what the classical search plays instead of starting from
//! random play. `run` trains on them before its first self-play; then self-play takes over
//! (expert iteration, Anthony et al. 2017, with the classical search as the first expert).
//!
//! Depends on `engine::mcts`, `engine::eval` (`classical`, the engine's model loader),
//! `selfplay` (its search settings, move choice and policy target) and `progress`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use engine::eval::Evaluator;
use engine::eval::classical::ClassicalEvaluator;
use engine::game::{Board, Pos};
use engine::mcts::{Proven, RootCandidate, Search, SearchLimits, SearchResult};
use rayon::prelude::*;

use crate::selfplay::status::{SelfPlayStatus, expected_plies};
use crate::selfplay::{
    self, SelfPlayConfig, SelfPlayReport, game_seed, new_record, play_searched, policy_target,
};
use crate::training::replay::GameRecord;

/// The evaluator the bootstrap searches over: the classical one, or the network of `teacher` as
/// the engine loads it (natively where it can; one search thread a game, batch 1).
pub fn expert(teacher: Option<&std::path::Path>) -> anyhow::Result<Arc<dyn Evaluator>> {
    match teacher {
        Some(path) => teacher_network(path, 1),
        None => Ok(Arc::new(ClassicalEvaluator)),
    }
}

/// The network file `path` as the engine loads it (natively where it can), run `batch`
/// positions at a time.
pub fn teacher_network(path: &std::path::Path, batch: usize) -> anyhow::Result<Arc<dyn Evaluator>> {
    let config = engine::eval::network::LoadConfig {
        batch,
        ..Default::default()
    };
    let loaded = engine::eval::slot::network_loader(config)(path)
        .map_err(|e| anyhow::anyhow!("the teacher {}: {e}", path.display()))?;
    if let Some(note) = loaded.note {
        eprintln!("trainer: the teacher {}: {note}", path.display());
    }
    Ok(loaded.evaluator)
}

/// One game of the `expert`'s search against itself, `visits` fresh playouts per move; with 0
/// visits, of its own policy without a search (`play_policy_game`).
pub fn play_game(
    cfg: &SelfPlayConfig,
    expert: &Arc<dyn Evaluator>,
    visits: u64,
    game: usize,
) -> anyhow::Result<GameRecord> {
    if visits == 0 {
        return play_policy_game(cfg, expert, game);
    }
    let n = cfg.board_size;
    let mut board =
        Board::new(n, n, cfg.rule).map_err(|e| anyhow::anyhow!("board {n}x{n}: {e}"))?;
    let seed = game_seed(cfg, game);
    let mcts = engine::mcts::MctsConfig {
        // One leaf at a time: the experts are cheap at batch 1, and virtual loss would only
        // blur the visit counts the network learns from.
        batch_size: 1,
        tactics: true,
        vcf_budget: cfg.vcf_budget_nodes,
        ..selfplay::mcts_config(cfg, seed)
    };
    let mut search = Search::new(mcts, expert.clone());
    let mut record = new_record(cfg);
    let mut rng = crate::seeded_rng(seed);
    let limits = SearchLimits::visits(visits.max(1));
    loop {
        search.set_position(&board);
        let r = search.run(&limits);
        let target = policy_target(&board, &r);
        match play_searched(cfg, &mut board, &mut record, &mut rng, &r, &target, None)? {
            Some(false) => {}
            Some(true) | None => return Ok(record),
        }
    }
}

/// A recorded policy target keeps integer weights: a whole probability is this many.
const POLICY_TARGET_SCALE: f32 = 10_000.0;
/// Moves the expert gives less than this are left out of a recorded policy target (they are
/// most of the board and almost none of the probability; the record stays small).
const POLICY_TARGET_FLOOR: f32 = 2e-3;

/// One game of the `expert`'s policy against itself, no search: each position is evaluated once,
/// its target is the policy (the moves above `POLICY_TARGET_FLOOR`), and the move is drawn from
/// it at the ply's temperature, a five where there is one. A hundred times cheaper a position
/// than a searched game, so a student can learn the expert's own outputs over far more
/// positions (distillation; the value comes from `--value-teacher` or the outcome).
fn play_policy_game(
    cfg: &SelfPlayConfig,
    expert: &Arc<dyn Evaluator>,
    game: usize,
) -> anyhow::Result<GameRecord> {
    let n = cfg.board_size;
    let mut board =
        Board::new(n, n, cfg.rule).map_err(|e| anyhow::anyhow!("board {n}x{n}: {e}"))?;
    let mut record = new_record(cfg);
    let mut rng = crate::seeded_rng(game_seed(cfg, game));
    let mut out = Vec::with_capacity(1);
    loop {
        expert.evaluate(&[&board], &mut out);
        let (target, proven) = policy_as_target(&board, &out[0].policy);
        let r = SearchResult {
            best: target.first().map_or(Pos::NONE, |c| c.mv),
            visits: 0,
            playouts: 0,
            value: out[0].value,
            pv: Vec::new(),
            root_children: target.clone(),
            nodes: 0,
            proven,
            elapsed: Duration::ZERO,
        };
        match play_searched(cfg, &mut board, &mut record, &mut rng, &r, &target, None)? {
            Some(false) => {}
            Some(true) | None => return Ok(record),
        }
    }
}

/// `policy` (by dense index) as root candidates, heaviest first, and whether it is a win: the
/// side to move's fives, weight 1 each, when it has one; else every move above the floor, the
/// largest always.
fn policy_as_target(board: &Board, policy: &[f32]) -> (Vec<RootCandidate>, Option<Proven>) {
    let me = board.side_to_move();
    let candidate = |mv: Pos, visits: u32, prior: f32| RootCandidate {
        mv,
        visits,
        prior,
        value: 0.0,
        proven: None,
        pv: Vec::new(),
    };
    let legal = board.legal_moves();
    let fives: Vec<RootCandidate> = legal
        .iter()
        .filter(|&&mv| board.makes_five(mv, me))
        .map(|&mv| candidate(mv, 1, 1.0))
        .collect();
    if !fives.is_empty() {
        return (fives, Some(Proven::Win));
    }
    let mut target: Vec<RootCandidate> = legal
        .iter()
        .map(|&mv| {
            let p = policy.get(board.dense_index(mv)).copied().unwrap_or(0.0);
            candidate(mv, (p * POLICY_TARGET_SCALE).round() as u32, p)
        })
        .collect();
    target.sort_by(|a, b| b.prior.total_cmp(&a.prior));
    let keep = target
        .iter()
        .take_while(|c| c.prior >= POLICY_TARGET_FLOOR && c.visits > 0)
        .count();
    target.truncate(keep.max(1));
    if let Some(first) = target.first_mut() {
        first.visits = first.visits.max(1);
    }
    (target, None)
}

/// `games` games (numbered from `first_game`), `cfg.parallel_workers` at a time; `progress` sees
/// each finished game. The report's `moves` and `positions` count what was recorded.
pub fn play(
    cfg: &SelfPlayConfig,
    expert: &Arc<dyn Evaluator>,
    visits: u64,
    games: usize,
    first_game: usize,
    progress: impl Fn(&SelfPlayStatus) + Sync,
) -> anyhow::Result<SelfPlayReport> {
    let start = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.parallel_workers.max(1))
        .build()?;
    let (done, moves) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let records: Vec<anyhow::Result<GameRecord>> = pool.install(|| {
        (0..games)
            .into_par_iter()
            .map(|g| {
                let rec = play_game(cfg, expert, visits, first_game + g)?;
                let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                let plies = moves.fetch_add(rec.positions(), Ordering::Relaxed) + rec.positions();
                progress(&SelfPlayStatus {
                    games_total: games,
                    games_done: finished,
                    games_running: cfg.parallel_workers.max(1).min(games - finished),
                    moves: plies,
                    finished_moves: plies,
                    leaves: plies * visits.max(1) as usize,
                    elapsed: start.elapsed(),
                });
                Ok(rec)
            })
            .collect()
    });
    let mut report = SelfPlayReport::default();
    for r in records {
        let rec = r?;
        report.positions += rec.positions();
        report.moves += rec.positions();
        report.games.push(rec);
    }
    report.elapsed = start.elapsed();
    Ok(report)
}

/// Games written per replay chunk: an interrupted bootstrap loses at most one chunk's games.
pub const GAMES_PER_CHUNK: usize = 32;

/// Plays `games` bootstrap games with `s`'s board, rule and self-play settings and adds them to
/// the replay store of `s.checkpoint_dir`, a chunk of `GAMES_PER_CHUNK` at a time. Game numbers
/// start past every chunk already there, so a second bootstrap adds new games. `teacher`: see
/// `expert`.
pub fn run(
    s: &crate::config::Settings,
    games: usize,
    visits: u64,
    teacher: Option<&std::path::Path>,
) -> anyhow::Result<usize> {
    let cfg = SelfPlayConfig::from_settings(s);
    let expert = expert(teacher)?;
    let warn = |m: String| eprintln!("bootstrap: warning: {m}");
    let dir = s.checkpoint_dir.join("replay");
    let mut replay = crate::training::replay::Replay::open(&dir, s.replay_window, warn)?;
    announce(s, games, visits, &*expert, &dir);
    let (mut written, mut positions) = (0, 0);
    let started = Instant::now();
    let pb = std::sync::Mutex::new(crate::support::progress::Progress::new(
        "bootstrap",
        games as u64,
    ));
    let plies = expected_plies(s.board_size);
    // SIGINT/SIGTERM (`crate::support::stop`): the chunk in progress is written, then no other starts.
    while written < games && crate::support::stop::requested().is_none() {
        let n = GAMES_PER_CHUNK.min(games - written);
        let first = replay.next_chunk() as usize * 1_000_000;
        let report = play(&cfg, &expert, visits, n, first, |st| {
            let mut pb = pb.lock().unwrap_or_else(|e| e.into_inner());
            // The whole bootstrap's figures, not this chunk's.
            let st = SelfPlayStatus {
                games_total: games,
                games_done: written + st.games_done,
                moves: positions + st.moves,
                finished_moves: positions + st.finished_moves,
                leaves: (positions + st.moves) * visits.max(1) as usize,
                elapsed: started.elapsed(),
                ..*st
            };
            pb.update(st.games_done as u64, || st.line(plies));
        })?;
        positions += report.positions;
        written += report.games.len();
        replay.add_chunk(report.games)?;
    }
    pb.into_inner().unwrap_or_else(|e| e.into_inner()).finish();
    let mut record = serde_json::json!({"games": written, "positions": positions,
                                        "visits": visits, "expert": expert.name(),
                                        "seconds": started.elapsed().as_secs_f64(),
                                        "threads": cfg.parallel_workers.max(1)});
    if let Some(name) = crate::support::stop::requested().map(crate::support::stop::name) {
        record["stopped"] = name.into();
        eprintln!("bootstrap: stopped on {name} after {written} of {games} games (all saved)");
    }
    crate::support::metrics::Metrics::open(&s.checkpoint_dir.join("metrics.jsonl"))?
        .log("bootstrap", record)?;
    eprintln!(
        "bootstrap: {written} games, {positions} positions added; the replay window holds {}",
        replay.len()
    );
    Ok(written)
}

/// Says on stderr what the bootstrap is about to play, and where it goes (`dir`).
fn announce(
    s: &crate::config::Settings,
    games: usize,
    visits: u64,
    expert: &dyn Evaluator,
    dir: &std::path::Path,
) {
    let how = match visits {
        0 => "its policy, no search".to_string(),
        v => format!("search + tactics, {v} visits/move"),
    };
    eprintln!(
        "bootstrap: {games} games of {expert}: {how}, {n}x{n} {rule}, into {dir}",
        expert = expert.name(),
        n = s.board_size,
        rule = s.rule,
        dir = dir.display()
    );
}
