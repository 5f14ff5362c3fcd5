//! Self-play: games finish with legal moves and sane visit records, leaves of several games share
//! one forward, the same seed gives the same games, and resignation / temperature behave.

use engine::game::{Board, Pos, Rule};
use engine::net::Preset;
use trainer::net_eval::TchNet;
use trainer::selfplay::{SelfPlayConfig, UniformNet, play};

fn cfg() -> SelfPlayConfig {
    SelfPlayConfig {
        board_size: 7,
        rule: Rule::Freestyle,
        simulations: 16,
        batch_size_mcts: 4,
        parallel_games: 4,
        parallel_workers: 2,
        seed: 3,
        ..SelfPlayConfig::default()
    }
}

fn check_records(games: &[trainer::replay::GameRecord], sims: u32) {
    for g in games {
        assert_eq!(g.moves.len(), g.visits.len());
        let mut b = Board::new(7, 7, Rule::Freestyle).unwrap();
        for (k, &m) in g.moves.iter().enumerate() {
            let p = Pos::new(m as usize % 7, m as usize / 7);
            assert!(b.is_legal(p), "illegal move {m} at ply {k}");
            let total: u32 = g.visits[k].iter().map(|v| v.1).sum();
            assert!(total >= 1 && total <= sims + 64, "ply {k}: {total} visits");
            b.play(p).unwrap();
        }
        let expected = match b.winner() {
            Some(engine::game::Color::Black) => 1,
            Some(engine::game::Color::White) => -1,
            None => g.outcome, // resigned or drawn
        };
        assert_eq!(g.outcome, expected);
        assert!(g.resigned || b.winner().is_some() || b.is_full() || g.outcome == 0);
    }
}

#[test]
fn uniform_self_play_batches_leaves_across_games_and_is_deterministic() {
    let c = cfg();
    let a = play(&c, &UniformNet, 6, 0, |_, _| {}).unwrap();
    assert_eq!(a.games.len(), 6);
    check_records(&a.games, c.simulations);
    let mean_batch = a.leaves as f64 / a.forwards as f64;
    assert!(
        mean_batch > c.batch_size_mcts as f64,
        "one forward must carry leaves of several games: {mean_batch}"
    );
    let b = play(&c, &UniformNet, 6, 0, |_, _| {}).unwrap();
    assert_eq!(a.games, b.games, "same seed, same games");
    let other = play(
        &SelfPlayConfig {
            seed: 4,
            ..c.clone()
        },
        &UniformNet,
        6,
        0,
        |_, _| {},
    )
    .unwrap();
    assert_ne!(a.games, other.games);
}

#[test]
fn tch_network_self_play_produces_valid_games() {
    tch::set_num_threads(1);
    tch::manual_seed(1);
    let net = TchNet::new(Preset::Tiny.config(), tch::Device::Cpu, "t", 1);
    let c = cfg();
    let r = play(&c, &net, 4, 0, |_, _| {}).unwrap();
    assert_eq!(r.games.len(), 4);
    assert!(r.positions > 0 && r.forward_time.as_nanos() > 0);
    check_records(&r.games, c.simulations);
}
