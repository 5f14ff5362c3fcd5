//! Replay store and symmetry: lazy augmentation keeps planes, policy target and last-move plane
//! consistent; chunks survive reopening; corrupt or truncated chunks are named, skipped and left
//! untouched.

use engine::eval::features;
use engine::game::Rule;
use trainer::support::symmetry;
use trainer::training::replay::{GameRecord, Replay, board_at, sample_at};

fn record() -> GameRecord {
    // An asymmetric 7x7 game: black (1,0) (2,0) (1,3); white (5,5) (4,6).
    let n = 7u16;
    let mv = |x: u16, y: u16| y * n + x;
    let moves = vec![mv(1, 0), mv(5, 5), mv(2, 0), mv(4, 6), mv(1, 3)];
    let visits = moves
        .iter()
        .map(|&m| vec![(m, 30), ((m + 1) % 49, 10)])
        .collect();
    GameRecord {
        board_size: 7,
        rule: Rule::Freestyle.to_protocol(),
        moves,
        visits,
        outcome: 1,
        resigned: false,
    }
}

#[test]
fn symmetry_moves_planes_policy_and_last_move_together() {
    let rec = record();
    let n = 7;
    let area = n * n;
    for ply in 0..rec.positions() {
        let base = sample_at(&rec, ply, 0).unwrap();
        for sym in 0..symmetry::COUNT {
            let s = sample_at(&rec, ply, sym).unwrap();
            for i in 0..area {
                let j = symmetry::map_index(sym, n, i);
                for plane in 0..features::PLANES {
                    assert_eq!(
                        base.planes[plane * area + i],
                        s.planes[plane * area + j],
                        "ply {ply} sym {sym} plane {plane}"
                    );
                }
                assert_eq!(base.policy[i], s.policy[j], "policy ply {ply} sym {sym}");
            }
            assert_eq!(base.value, s.value);
            // Last-move plane (3) marks exactly the mapped last move.
            if ply > 0 {
                let last = rec.moves[ply - 1] as usize;
                assert_eq!(s.planes[3 * area + symmetry::map_index(sym, n, last)], 1.0);
            }
        }
    }
    // Values alternate with the side to move: black won.
    assert_eq!(sample_at(&rec, 0, 0).unwrap().value, 1.0);
    assert_eq!(sample_at(&rec, 1, 0).unwrap().value, -1.0);
}

#[test]
fn the_opponent_target_is_the_next_plys_target_on_the_same_board() {
    let mut rec = record();
    // The cheap search of playout-cap randomization at ply 2: played, no target.
    rec.visits[2].clear();
    let area = 49;
    for sym in 0..symmetry::COUNT {
        let first = sample_at(&rec, 0, sym).unwrap();
        let next = sample_at(&rec, 1, sym).unwrap();
        assert_eq!(
            first.opponent_policy, next.policy,
            "ply 0's opponent target is ply 1's target, sym {sym}"
        );
        let reply = symmetry::map_index(sym, 7, rec.moves[1] as usize);
        assert!((first.opponent_policy[reply] - 0.75).abs() < 1e-6);
        assert!((first.opponent_policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert_eq!(first.opponent_policy.len(), area);
    }
    // Ply 1's reply (ply 2) has no target, and the last ply has no reply at all.
    assert!(sample_at(&rec, 1, 0).unwrap().opponent_policy.is_empty());
    assert!(sample_at(&rec, 4, 3).unwrap().opponent_policy.is_empty());
}

#[test]
fn eight_symmetries_of_an_asymmetric_position_are_distinct_and_invert() {
    let rec = record();
    let boards: Vec<Vec<f32>> = (0..symmetry::COUNT)
        .map(|sym| {
            let b = board_at(&rec, rec.moves.len(), sym).unwrap();
            let mut p = vec![0f32; features::input_len(&b)];
            features::encode(&b, &mut p);
            p
        })
        .collect();
    for a in 0..symmetry::COUNT {
        for b in a + 1..symmetry::COUNT {
            assert_ne!(
                boards[a], boards[b],
                "symmetries {a} and {b} give the same planes"
            );
        }
    }
    for sym in 0..symmetry::COUNT {
        let back = GameRecord {
            moves: rec
                .moves
                .iter()
                .map(|&m| symmetry::map_index(sym, 7, m as usize) as u16)
                .collect(),
            ..rec.clone()
        };
        let inv = board_at(&back, back.moves.len(), symmetry::inverse(sym)).unwrap();
        assert_eq!(
            inv.history(),
            board_at(&rec, rec.moves.len(), 0).unwrap().history(),
            "sym {sym}"
        );
    }
}

#[test]
fn chunks_reload_window_trims_and_corruption_is_skipped_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("replay");
    let mut r = Replay::open(&path, 1000, |w| panic!("unexpected warning {w}")).unwrap();
    let c0 = r.add_chunk(vec![record(), record()]).unwrap();
    let c1 = r.add_chunk(vec![record()]).unwrap();
    assert_eq!(r.len(), 15);
    let r2 = Replay::open(&path, 1000, |w| panic!("unexpected warning {w}")).unwrap();
    assert_eq!(r2.len(), 15);
    assert_eq!(r2.next_chunk(), 2);
    // A window of 6 positions keeps the newest games only (whole games, at least 6 positions).
    let small = Replay::open(&path, 6, |_| {}).unwrap();
    assert_eq!(small.len(), 10);

    // Truncate the newest chunk and flip a byte of the oldest.
    let bytes = std::fs::read(&c1).unwrap();
    std::fs::write(&c1, &bytes[..bytes.len() - 3]).unwrap();
    let mut b0 = std::fs::read(&c0).unwrap();
    let last = b0.len() - 1;
    b0[last] ^= 0xFF;
    std::fs::write(&c0, &b0).unwrap();
    let mut warnings = Vec::new();
    let mut r3 = Replay::open(&path, 1000, |w| warnings.push(w)).unwrap();
    assert_eq!(r3.len(), 0);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("chunk-00000001.bin") && w.contains("truncated")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("chunk-00000000.bin") && w.contains("checksum")),
        "{warnings:?}"
    );
    // New data goes to a fresh chunk; the damaged files stay as they were.
    let c2 = r3.add_chunk(vec![record()]).unwrap();
    assert!(c2.ends_with("chunk-00000002.bin"));
    assert_eq!(std::fs::read(&c0).unwrap(), b0);
    assert_eq!(std::fs::read(&c1).unwrap().len(), bytes.len() - 3);
    let mut rng = trainer::seeded_rng(3);
    for _ in 0..20 {
        let s = r3.sample(&mut rng).unwrap().unwrap();
        assert!((s.policy.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
}
