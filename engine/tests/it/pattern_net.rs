//! The pattern network's native runtime (`eval::native::pattern`) against its definitions: the
//! incremental accumulator against one computed from scratch, every kernel path against the
//! scalar one bit for bit, the whole network against ONNX Runtime on the exported graph over
//! positions of real games (all four rules), and bad files refused with an error.
//!
//! The full table is 196,608 x D floats (25 MB at D = 32): the models are made here from seeded
//! random weights, never committed.

use std::sync::OnceLock;

use engine::eval::Evaluator;
use engine::eval::features;
use engine::eval::native::pattern::{PatternEvaluator, PatternNet, PatternState, Reached, view_of};
use engine::eval::native::{LoadError, NativeNet, Simd};
use engine::game::{Board, Pos, Rule};
use engine::net::pattern::{KEYS, PatternWeights};
use engine::net::{ModelMeta, pattern_onnx_bytes};
use engine::rng::Rng;

/// The bytes of a D = 32 pattern network of seeded random weights (made once per test binary).
fn model_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| random_model_bytes(32, 74))
}

/// The bytes of a pattern network `dim` wide of random weights from `seed`.
fn random_model_bytes(dim: usize, seed: u64) -> Vec<u8> {
    let w = PatternWeights::random(dim, seed).unwrap();
    pattern_onnx_bytes(&w, &w.meta(0)).unwrap()
}

fn net() -> PatternNet {
    PatternNet::from_bytes(model_bytes()).unwrap()
}

/// A random legal move of the side to move, or None when the game is over.
fn random_move(board: &Board, rng: &mut Rng) -> Option<Pos> {
    if board.winner().is_some() {
        return None;
    }
    let legal = board.legal_moves();
    (!legal.is_empty()).then(|| legal[rng.below(legal.len())])
}

#[test]
fn the_incremental_accumulator_equals_one_from_scratch() {
    let net = net();
    let mut rng = Rng::new(5);
    let (mut incremental, mut refreshes) = (0, 0);
    for rule in Rule::ALL {
        for size in [15, 20] {
            let mut state = PatternState::default();
            let mut board = Board::new(size, size, rule).unwrap();
            for step in 0..400 {
                // Mostly forward, sometimes a few moves back (a search's next leaf), sometimes
                // a new game.
                match rng.below(10) {
                    0..=5 => match random_move(&board, &mut rng) {
                        Some(p) => board.play(p).unwrap(),
                        None => board = Board::new(size, size, rule).unwrap(),
                    },
                    6..=8 => {
                        for _ in 0..1 + rng.below(4) {
                            board.undo();
                        }
                    }
                    _ if step % 97 == 0 => board = Board::new(size, size, rule).unwrap(),
                    _ => {}
                }
                match net.sync(&mut state, &board) {
                    Reached::Refresh => refreshes += 1,
                    Reached::Incremental { .. } => incremental += 1,
                }
                let view = view_of(&board);
                assert!(
                    state.acc.view(view) == net.refreshed(&board).view(view),
                    "{rule} {size}x{size} after {} moves, view {view}",
                    board.move_count()
                );
            }
        }
    }
    // Both ways were exercised (the first sync of each board is a refresh).
    assert!(
        incremental > 3000 && refreshes >= 8,
        "{incremental} {refreshes}"
    );
}

#[test]
fn stones_on_the_edges_see_the_board_end() {
    // The corner and edge points' keys read 3 (off the board) past the edge; a stone there must
    // change only on-board neighbours, and taking it back must restore the empty board exactly.
    let net = net();
    let empty = Board::new(15, 15, Rule::Freestyle).unwrap();
    let mut state = PatternState::default();
    net.sync(&mut state, &empty);
    let before = state.acc.view(0).to_vec();
    let mut board = empty.clone();
    for (x, y) in [
        (0, 0),
        (14, 0),
        (0, 14),
        (14, 14),
        (7, 0),
        (0, 7),
        (1, 14),
        (14, 1),
    ] {
        board.play(Pos::new(x, y)).unwrap();
        net.sync(&mut state, &board);
        let view = view_of(&board);
        assert!(state.acc.view(view) == net.refreshed(&board).view(view));
    }
    // Taking all eight back is incremental too, and restores the empty board exactly.
    assert_eq!(view_of(&board), 0);
    assert!(state.acc.view(0) != before.as_slice());
    assert!(matches!(
        net.sync(&mut state, &empty),
        Reached::Incremental {
            undone: 8,
            played: 0
        }
    ));
    assert!(state.acc.view(0) == before.as_slice());
}

/// Every position of the tournament records in the fixtures: freestyle games replayed under
/// freestyle, standard and caro (up to the first five or refused move), renju games under renju.
fn game_positions() -> Vec<Board> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tactics-judged");
    let mut boards = Vec::new();
    for (file, rules) in [
        (
            "freestyle.pgn",
            &[Rule::Freestyle, Rule::Standard, Rule::Caro][..],
        ),
        ("renju.pgn", &[Rule::Renju][..]),
    ] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
        let games = engine::notation::parse_records(&text, 1000).unwrap();
        for game in &games {
            let (w, h) = game.size.unwrap_or((15, 15));
            for &rule in rules {
                let mut board = Board::new(w, h, rule).unwrap();
                for &(x, y) in &game.moves {
                    boards.push(board.clone());
                    let Ok(p) = board.pos(x, y) else { break };
                    if board.play(p).is_err() || board.winner().is_some() {
                        break;
                    }
                }
            }
        }
    }
    boards
}

#[test]
fn every_kernel_path_gives_the_scalar_bits() {
    let paths = Simd::available();
    assert!(paths.contains(&Simd::Scalar));
    let boards = game_positions();
    let refs: Vec<&Board> = boards.iter().collect();
    // D = 24 too: not a whole number of AVX-512 vectors, it takes the 8-lane kernels there;
    // and 64, the `pattern64` preset's width.
    let width = |dim| PatternNet::from_bytes(&random_model_bytes(dim, 75)).unwrap();
    for net in [net(), width(24), width(64)] {
        let scalar = PatternEvaluator::new(net.clone().with_simd(Simd::Scalar));
        let mut want = Vec::new();
        scalar.evaluate(&refs, &mut want);
        for &simd in &paths {
            let ev = PatternEvaluator::new(net.clone().with_simd(simd));
            let mut got = Vec::new();
            // One at a time, as a search asks: the accumulator moves from board to board.
            for (b, w) in refs.iter().zip(&want) {
                ev.evaluate(&[b], &mut got);
                assert!(
                    got[0] == *w,
                    "{simd} differs from scalar on {} (D = {})",
                    b.move_count(),
                    net.dim()
                );
            }
        }
    }
}

#[test]
fn a_model_that_is_no_pattern_network_is_left_to_onnx_runtime() {
    use engine::net::{NetWeights, Preset, onnx_bytes};
    let config = Preset::Tiny.config();
    let resnet = onnx_bytes(
        &NetWeights::random(config, 1).unwrap(),
        &ModelMeta::for_config(&config, 1),
    )
    .unwrap();
    assert!(matches!(
        PatternNet::from_bytes(&resnet),
        Err(LoadError::Unsupported(_))
    ));
    // And the ResNet loader leaves a pattern network alone.
    assert!(matches!(
        NativeNet::from_bytes(model_bytes()),
        Err(LoadError::Unsupported(_))
    ));
}

#[test]
fn bad_pattern_files_are_errors() {
    use engine::net::onnx_pb::{ModelProto, tensor_proto::DataType};
    use prost::Message;
    let good = model_bytes();
    for cut in [10, good.len() / 2, good.len() - 7] {
        let e = PatternNet::from_bytes(&good[..cut]).unwrap_err();
        assert!(
            matches!(e, LoadError::NotOnnx(_) | LoadError::Contract(_)),
            "{e}"
        );
    }
    let edit = |f: &dyn Fn(&mut ModelProto)| {
        let mut m = ModelProto::decode(good).unwrap();
        f(&mut m);
        PatternNet::from_bytes(&m.encode_to_vec())
            .unwrap_err()
            .to_string()
    };
    let tensor = |m: &mut ModelProto, name: &str| -> usize {
        let g = m.graph.as_ref().unwrap();
        g.initializer
            .iter()
            .position(|t| t.name.as_deref() == Some(name))
            .unwrap()
    };
    // A truncated table: its shape says more rows than it holds.
    let e = edit(&|m| {
        let i = tensor(m, "pattern.table");
        let raw = m.graph.as_mut().unwrap().initializer[i]
            .raw_data
            .as_mut()
            .unwrap();
        raw.truncate(raw.len() - 4 * 32 * 10);
    });
    assert!(e.contains("pattern.table"), "{e}");
    // A table of the wrong shape.
    let e = edit(&|m| {
        let i = tensor(m, "pattern.table");
        let t = &mut m.graph.as_mut().unwrap().initializer[i];
        t.dims = vec![KEYS as i64 / 2, 64];
    });
    assert!(e.contains("pattern.table"), "{e}");
    // A head of the wrong shape.
    let e = edit(&|m| {
        let i = tensor(m, "policy_dw.weight");
        let t = &mut m.graph.as_mut().unwrap().initializer[i];
        t.dims = vec![16, 2, 3, 3];
    });
    assert!(e.contains("policy_dw.weight"), "{e}");
    // NaN weights.
    for name in ["pattern.table", "value_fc1.weight", "pattern.black"] {
        let e = edit(&|m| {
            let i = tensor(m, name);
            let raw = m.graph.as_mut().unwrap().initializer[i]
                .raw_data
                .as_mut()
                .unwrap();
            raw[4..8].copy_from_slice(&f32::NAN.to_le_bytes());
        });
        assert!(e.contains(name) && e.contains("NaN"), "{e}");
    }
    // A changed key kernel computes other keys than the native runtime does.
    let e = edit(&|m| {
        let i = tensor(m, "pattern.key_weight");
        let raw = m.graph.as_mut().unwrap().initializer[i]
            .raw_data
            .as_mut()
            .unwrap();
        raw[0..4].copy_from_slice(&7f32.to_le_bytes());
    });
    assert!(e.contains("pattern.key_weight"), "{e}");
    // The table as another type.
    let e = edit(&|m| {
        let i = tensor(m, "pattern.table");
        m.graph.as_mut().unwrap().initializer[i].data_type = Some(DataType::Double as i32);
    });
    assert!(e.contains("pattern.table"), "{e}");
    // The writer refuses what the loader would.
    let mut w = PatternWeights::random(16, 1).unwrap();
    w.table.pop();
    assert!(pattern_onnx_bytes(&w, &w.meta(0)).is_err());
    let e = PatternWeights::random(12, 1).unwrap_err().to_string();
    assert!(e.contains("12"), "{e}");
}

#[test]
fn the_evaluator_answers_every_rule_and_size_it_claims() {
    let ev = PatternEvaluator::new(net());
    let mut rng = Rng::new(9);
    for rule in Rule::ALL {
        for size in [15, 20, 6] {
            let mut board = Board::new(size, size, rule).unwrap();
            for _ in 0..size {
                if let Some(p) = random_move(&board, &mut rng) {
                    board.play(p).unwrap();
                }
            }
            let mut out = Vec::new();
            ev.evaluate(&[&board], &mut out);
            let e = &out[0];
            let sum: f32 = e.policy.iter().sum();
            assert!((sum - 1.0).abs() < 1e-4, "{rule} {size}: {sum}");
            assert!(e.value.abs() <= 1.0);
            for p in board.points() {
                if !board.is_legal(p) {
                    assert_eq!(e.policy[board.dense_index(p)], 0.0);
                }
            }
        }
    }
}

#[cfg(feature = "onnx")]
#[test]
fn the_native_pattern_network_matches_onnx_runtime_on_game_positions() {
    use engine::eval::onnx::OnnxRuntime;
    OnnxRuntime::init().unwrap_or_else(|e| panic!("ONNX Runtime unavailable: {e}"));
    let boards = game_positions();
    let rules: std::collections::BTreeSet<String> =
        boards.iter().map(|b| b.rule().to_string()).collect();
    assert!(
        boards.len() >= 1000 && rules.len() == 4,
        "{} {rules:?}",
        boards.len()
    );
    // Renju positions with forbidden points: the forbidden vector is in play.
    let forbidding = boards
        .iter()
        .filter(|b| {
            b.side_has_forbidden_points() && b.points().any(|p| b.is_empty(p) && b.is_forbidden(p))
        })
        .count();
    assert!(forbidding > 0);
    // D = 32, and 64 (the `pattern64` preset's width).
    for bytes in [model_bytes().to_vec(), random_model_bytes(64, 75)] {
        let dim = PatternNet::from_bytes(&bytes).unwrap().dim();
        let (worst_p, worst_v, clipped) = onnx_runtime_difference(&bytes, &boards);
        eprintln!(
            "D = {dim}, {} positions ({rules:?}, {forbidding} with forbidden points): max \
             |dprob| {worst_p:.2e}, max |dvalue| {worst_v:.2e}",
            boards.len()
        );
        // The table and the two vectors rounded to int16 (3e-5 of 1.0 at this table's scale):
        // measured 9.8e-6 on the probabilities and 1.5e-4 on the values at D = 32, 6.9e-5 and
        // 1.7e-6 at D = 64 (leaving out the forbidden vector gave 6e-3 and 3e-3).
        assert!(
            worst_p < 1e-4 && worst_v < 5e-4,
            "D = {dim}: {worst_p} {worst_v}"
        );
        assert!(
            clipped > 0,
            "the values never left 0: the test would not see a wrong head"
        );
    }
}

/// The largest differences between the native evaluator and ONNX Runtime on `boards` (15x15),
/// probabilities and values, and how many values ONNX Runtime put beyond 0.05.
fn onnx_runtime_difference(bytes: &[u8], boards: &[Board]) -> (f32, f32, usize) {
    use engine::eval::masked_softmax;
    use engine::eval::onnx::{Device, OnnxModel};
    let mut ort = OnnxModel::from_bytes(bytes, 1, Device::Cpu).unwrap();
    let ev = PatternEvaluator::new(PatternNet::from_bytes(bytes).unwrap());
    let (mut worst_p, mut worst_v, mut clipped) = (0f32, 0f32, 0usize);
    for chunk in boards.chunks(64) {
        let mut planes = vec![0f32; chunk.len() * features::input_len(&chunk[0])];
        for (b, x) in chunk
            .iter()
            .zip(planes.chunks_mut(features::input_len(&chunk[0])))
        {
            features::encode(b, x);
        }
        let (logits, values) = ort.run(&planes, chunk.len(), 15, 15).unwrap();
        let refs: Vec<&Board> = chunk.iter().collect();
        let mut got = Vec::new();
        ev.evaluate(&refs, &mut got);
        for (k, (b, e)) in chunk.iter().zip(&got).enumerate() {
            let mut want = vec![0f32; 225];
            masked_softmax(b, &logits[k * 225..(k + 1) * 225], &mut want);
            let dp = want
                .iter()
                .zip(&e.policy)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f32::max);
            worst_p = worst_p.max(dp);
            worst_v = worst_v.max((values[k] - e.value).abs());
            clipped += usize::from(values[k].abs() > 0.05);
        }
    }
    (worst_p, worst_v, clipped)
}
