//! `trainer bootstrap`: games of the classical search with tactics (or of a teacher network's
//! search), recorded as self-play records its games; and a run over such a folder trains on them
//! before its first self-play.

use std::sync::Arc;

use engine::eval::classical::ClassicalEvaluator;
use engine::game::{Board, Pos};
use engine::mcts::{MctsConfig, Proven, Search, SearchLimits};
use engine::net::Preset;
use trainer::config::Settings;
use trainer::selfplay::SelfPlayConfig;
use trainer::selfplay::bootstrap;
use trainer::support::device::DeviceArg;
use trainer::training::replay::{GameRecord, Replay};

fn cfg(size: usize) -> SelfPlayConfig {
    SelfPlayConfig {
        board_size: size,
        parallel_workers: 2,
        seed: 5,
        ..SelfPlayConfig::default()
    }
}

/// Replays `g` on a 15x15 board, checking that each move is legal and in its target (with a
/// weight), and that where the mover has a five the target holds fives only; `each(ply, board,
/// target, five)` sees every position before its move. The final board, and the positions
/// where the mover had a five.
fn replay_checked(
    g: &GameRecord,
    mut each: impl FnMut(usize, &Board, &[(u16, u32)], bool),
) -> (Board, usize) {
    assert_eq!(g.moves.len(), g.visits.len());
    let mut b = Board::new(15, 15, g.rule()).unwrap();
    let mut fives = 0;
    for (i, (&mv, target)) in g.moves.iter().zip(&g.visits).enumerate() {
        let p = Pos::new(mv as usize % 15, mv as usize / 15);
        assert!(b.is_legal(p), "game move {i} is legal");
        assert!(
            target.iter().any(|&(m, w)| m == mv && w > 0),
            "the move is in its target"
        );
        let me = b.side_to_move();
        let five = b.legal_moves().into_iter().any(|q| b.makes_five(q, me));
        if five {
            fives += 1;
            for &(m, _) in target {
                let q = Pos::new(m as usize % 15, m as usize / 15);
                assert!(
                    b.makes_five(q, me),
                    "target move {q:?} at ply {i} is not a five"
                );
            }
        }
        each(i, &b, target, five);
        b.play(p).unwrap();
    }
    (b, fives)
}

#[test]
fn bootstrap_games_are_legal_decided_and_take_their_fives() {
    let classical = bootstrap::expert(None).unwrap();
    let games = bootstrap::play(&cfg(15), &classical, 300, 8, 0, |_| {})
        .unwrap()
        .games;
    assert_eq!(games.len(), 8);
    let mut decided = 0;
    let mut fives = 0;
    for g in &games {
        let (b, with_five) = replay_checked(g, |_, _, _, _| {});
        fives += with_five;
        let want = match b.winner() {
            Some(engine::game::Color::Black) => 1,
            Some(engine::game::Color::White) => -1,
            // No five on the board: the game ended where the tactics proved it, so the outcome
            // is that proof's (the side to move loses), never a draw.
            None if !b.is_full() => {
                let mut search = Search::new(
                    MctsConfig {
                        tactics: true,
                        vcf_budget: 2000,
                        ..MctsConfig::default()
                    },
                    Arc::new(ClassicalEvaluator),
                );
                search.set_position(&b);
                let r = search.run(&SearchLimits::visits(300));
                assert_eq!(r.proven, Some(Proven::Loss), "a game ended unproven");
                if b.side_to_move() == engine::game::Color::Black {
                    -1
                } else {
                    1
                }
            }
            None => 0,
        };
        assert_eq!(g.outcome, want);
        decided += (g.outcome != 0) as usize;
    }
    eprintln!("bootstrap: 8 games on 15x15, {decided} decided, {fives} positions with a five");
    // 15x15 freestyle favours the first player: the classical search wins most of its games
    // (on 9x9 it draws them all, which would teach a value head nothing).
    assert!(decided >= 4, "{decided} of 8 games decided");
    assert!(fives > 0, "some game reached a five");
}

/// A tiny 7x7 run in `dir`: epochs of 4 self-play games and 3 training steps, one evaluation.
fn small_run(dir: std::path::PathBuf) -> Settings {
    Settings {
        model_preset: Preset::Tiny,
        board_size: 7,
        mcts_simulations: 8,
        parallel_games: 4,
        selfplay_games: 4,
        batch_size: 32,
        train_steps: 3,
        epochs: 1,
        eval_frequency: 1,
        eval_pairs: 1,
        eval_simulations: 8,
        eval_vs_uniform: false,
        eval_vs_classical: true,
        device: DeviceArg::Cpu,
        threads: 1,
        parallel_workers: 2,
        checkpoint_dir: dir,
        ..Settings::default()
    }
}

#[test]
fn a_run_over_bootstrap_games_trains_on_them_first_and_resumes_past_that() {
    let tmp = tempfile::tempdir().unwrap();
    let s = small_run(tmp.path().to_path_buf());
    assert_eq!(bootstrap::run(&s, 6, 64, None).unwrap(), 6);
    let replay = Replay::open(&tmp.path().join("replay"), 100_000, |_| {}).unwrap();
    assert_eq!(replay.games().len(), 6);
    let sum = trainer::run::run(&s).unwrap();
    // 3 warm-start steps on the bootstrap games, then epoch 1's 3.
    assert_eq!(sum.step, 6);
    // The warm start's steps are in the checkpoint, so a resumed run spans the same schedule.
    let warm = trainer::network::checkpoint::load(&tmp.path().join("ckpt-000000.bin")).unwrap();
    assert_eq!(warm.warm_start_steps, 3);
    assert!(tmp.path().join("models/model-000000.onnx").is_file());
    let metrics = std::fs::read_to_string(tmp.path().join("metrics.jsonl")).unwrap();
    assert!(metrics.contains("\"warm_start\""), "{metrics}");
    // The learning curve of this folder: one evaluation, bootstrap and self-play games counted.
    let png = tmp.path().join("curve.png");
    let curves = trainer::matches::curve::draw_runs(&[tmp.path().to_path_buf()], &png).unwrap();
    // One evaluation: a point, or a clean sweep kept apart at its bound.
    assert_eq!(curves[0].points.len() + curves[0].sweeps.len(), 1);
    assert_eq!(curves[0].games, 6 + 4);
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
    // A second bootstrap adds new games; a resumed run does not warm-start again.
    assert_eq!(bootstrap::run(&s, 2, 64, None).unwrap(), 2);
    let again = trainer::run::run(&Settings {
        epochs: 2,
        ..s.clone()
    })
    .unwrap();
    assert!(again.resumed_from.is_some());
    assert_eq!(again.step, 9);
    let last = trainer::network::checkpoint::load(&tmp.path().join("ckpt-000002.bin")).unwrap();
    assert_eq!(last.warm_start_steps, 3, "carried through the resume");
}

/// `--init-from CHECKPOINT`: a fresh run folder starts from another run's weights (its epoch,
/// step and optimizer fresh) and warm-starts them on its own replay; a checkpoint of another
/// form is refused, naming the file.
#[test]
fn a_fresh_run_starts_from_the_weights_of_another_runs_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let first = small_run(tmp.path().join("first"));
    assert_eq!(bootstrap::run(&first, 4, 16, None).unwrap(), 4);
    assert_eq!(trainer::run::run(&first).unwrap().step, 6);
    let source = first.checkpoint_dir.join("ckpt-000001.bin");
    let trained = trainer::network::checkpoint::load(&source).unwrap();

    // A learning rate too small to move an f32 weight: the warm start's checkpoint then holds
    // exactly the weights it started from (the batch norms' running statistics move with every
    // batch whatever the rate, so they are left out).
    let second = Settings {
        checkpoint_dir: tmp.path().join("second"),
        init_from: Some(source.clone()),
        lr: 1e-30,
        ..first.clone()
    };
    assert_eq!(bootstrap::run(&second, 2, 16, None).unwrap(), 2);
    let sum = trainer::run::run(&second).unwrap();
    assert!(sum.resumed_from.is_none(), "a fresh run, not a resume");
    let warm =
        trainer::network::checkpoint::load(&second.checkpoint_dir.join("ckpt-000000.bin")).unwrap();
    assert_eq!(warm.epoch, 0);
    assert_eq!(
        warm.step, warm.warm_start_steps,
        "its own steps, not the first run's"
    );
    assert!(warm.warm_start_steps > 0, "it warm-started on its replay");
    let learned = |ck: &trainer::network::checkpoint::Checkpoint| -> Vec<_> {
        ck.weights
            .iter()
            .filter(|w| !w.name.contains(".running_"))
            .map(|w| (w.name.clone(), w.data.clone()))
            .collect()
    };
    let (started, source_weights) = (learned(&warm), learned(&trained));
    assert_eq!(started.len(), source_weights.len());
    let differ: Vec<&str> = started
        .iter()
        .zip(&source_weights)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a.0.as_str())
        .collect();
    assert!(differ.is_empty(), "not the source's weights: {differ:?}");

    let other_form = Settings {
        checkpoint_dir: tmp.path().join("third"),
        model_preset: Preset::Small,
        init_from: Some(source),
        ..first.clone()
    };
    let e = format!("{:#}", trainer::run::run(&other_form).unwrap_err());
    assert!(e.contains("ckpt-000001.bin"), "{e}");
}

/// `--teacher FILE`: the games are the search over that network (the engine's embedded default,
/// written to a file), and the metrics name it; a teacher that is no model is an error naming it.
#[test]
fn a_teacher_network_plays_the_bootstrap_games() {
    let tmp = tempfile::tempdir().unwrap();
    let teacher = tmp.path().join("teacher.onnx");
    std::fs::write(&teacher, engine::eval::embedded::DEFAULT_MODELS[0].1).unwrap();
    let s = Settings {
        model_preset: Preset::Tiny,
        board_size: 15,
        parallel_workers: 2,
        checkpoint_dir: tmp.path().join("run"),
        ..Settings::default()
    };
    assert_eq!(bootstrap::run(&s, 2, 16, Some(&teacher)).unwrap(), 2);
    let replay = Replay::open(&s.checkpoint_dir.join("replay"), 100_000, |_| {}).unwrap();
    assert_eq!(replay.games().len(), 2);
    assert!(replay.games().iter().all(|g| !g.moves.is_empty()));
    let metrics = std::fs::read_to_string(s.checkpoint_dir.join("metrics.jsonl")).unwrap();
    assert!(metrics.contains("\"expert\":\"native:cpu32"), "{metrics}");

    let garbage = tmp.path().join("garbage.onnx");
    std::fs::write(&garbage, b"no model").unwrap();
    let e = bootstrap::run(&s, 1, 16, Some(&garbage))
        .unwrap_err()
        .to_string();
    assert!(e.contains("teacher") && e.contains("garbage.onnx"), "{e}");
}

/// `--visits 0`: no search; each position's target is the teacher's own policy (to the
/// record's integer weights, the moves it gives at least 0.2%), or the mover's fives alone
/// when it has one, and the game runs to a five or a full board.
#[test]
fn teacher_policy_games_record_the_teachers_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("teacher.onnx");
    std::fs::write(&path, engine::eval::embedded::DEFAULT_MODELS[0].1).unwrap();
    let teacher = bootstrap::teacher_network(&path, 1).unwrap();
    let games = bootstrap::play(&cfg(15), &teacher, 0, 6, 0, |_| {})
        .unwrap()
        .games;
    assert_eq!(games.len(), 6);
    let (mut positions, mut fives) = (0, 0);
    let mut out = Vec::new();
    for g in &games {
        let (b, with_five) = replay_checked(g, |i, b, target, five| {
            positions += 1;
            if five {
                assert!(target.iter().all(|&(_, w)| w == 1), "ply {i}");
            } else {
                teacher.evaluate(&[b], &mut out);
                let policy = &out[0].policy;
                let kept: Vec<usize> = (0..225).filter(|&i| policy[i] >= 2e-3).collect();
                assert_eq!(target.len(), kept.len().max(1), "ply {i}");
                for &(m, w) in target {
                    let want = policy[m as usize] * 10_000.0;
                    assert!((w as f32 - want).abs() <= 1.0, "ply {i}: {w} for {want}");
                }
            }
        });
        fives += with_five;
        assert!(
            b.winner().is_some() || b.is_full(),
            "the game ran to its end"
        );
        let want = match b.winner() {
            Some(engine::game::Color::Black) => 1,
            Some(engine::game::Color::White) => -1,
            None => 0,
        };
        assert_eq!(g.outcome, want);
    }
    eprintln!("teacher policy: 6 games, {positions} positions, {fives} with a five");
    assert!(fives > 0, "some game reached a five");
    // Seeded by game number: the six games differ.
    let distinct: std::collections::HashSet<&Vec<u16>> = games.iter().map(|g| &g.moves).collect();
    assert_eq!(distinct.len(), 6);
}
