//! The pattern network in tch against the engine's definition of it: the forward on positions of
//! real games (all four rules, renju with forbidden points, 15x15 and 20x20) equals the native
//! runtime and ONNX Runtime on its export; training steps lower the loss; the pattern profile
//! trains an epoch on native self-play and publishes a file the native runtime loads, which
//! `trainer export` of its checkpoint and a resumed trainer both give again byte for byte.

use engine::eval::features;
use engine::eval::native::pattern::{PatternEvaluator, PatternNet as NativeNet};
use engine::eval::onnx::{Device as OrtDevice, OnnxModel, OnnxRuntime};
use engine::eval::{Evaluator, masked_softmax};
use engine::game::{Board, Pos, Rule};
use engine::net::pattern::{DEFAULT_DIM, PatternWeights};
use engine::net::{Preset, pattern_onnx_bytes};
use engine::rng::Rng;
use tch::{Device, Tensor, nn};
use trainer::config::{Resume, Settings, load_profile};
use trainer::network::checkpoint;
use trainer::network::form::{Exported, Form, Model};
use trainer::network::model::to_vec;
use trainer::network::optim::{OptimConfig, Optimizer};
use trainer::network::pattern::{PatternNet, line_keys};
use trainer::training::replay::sample_at;
use trainer::training::{Trainer, batch_tensors, export_checkpoint, losses};

/// Positions of the judged tactics games (15x15; the freestyle games under three rules, the
/// renju games under renju) and of random games on 20x20 under every rule.
fn positions() -> Vec<Board> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../engine/tests/fixtures/tactics-judged"
    );
    let mut boards = Vec::new();
    for (file, rules) in [
        (
            "freestyle.pgn",
            &[Rule::Freestyle, Rule::Standard, Rule::Caro][..],
        ),
        ("renju.pgn", &[Rule::Renju][..]),
    ] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
        for game in engine::notation::parse_records(&text, 1000)
            .unwrap()
            .iter()
            .take(6)
        {
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
    let mut rng = Rng::new(3);
    for rule in Rule::ALL {
        let mut board = Board::new(20, 20, rule).unwrap();
        for _ in 0..60 {
            let legal = board.candidates(2);
            let legal: Vec<Pos> = legal.into_iter().filter(|&p| board.is_legal(p)).collect();
            if board.winner().is_some() || legal.is_empty() {
                break;
            }
            boards.push(board.clone());
            board.play(legal[rng.below(legal.len())]).unwrap();
        }
    }
    boards
}

fn planes_of(boards: &[Board]) -> Tensor {
    let (h, w) = (boards[0].height(), boards[0].width());
    let len = features::PLANES * h * w;
    let mut planes = vec![0f32; boards.len() * len];
    for (b, x) in boards.iter().zip(planes.chunks_mut(len)) {
        features::encode(b, x);
    }
    Tensor::from_slice(&planes).view([
        boards.len() as i64,
        features::PLANES as i64,
        h as i64,
        w as i64,
    ])
}

/// A tch pattern network holding `w`.
fn tch_net(w: &PatternWeights) -> (nn::VarStore, PatternNet) {
    let vs = nn::VarStore::new(Device::Cpu);
    let net = PatternNet::for_training(&vs.root(), w.dim, false);
    net.import(w).unwrap();
    (vs, net)
}

#[test]
fn keys_read_the_board_edge_as_off_board() {
    // The corner of an empty board: the four points before it along x are off the board (3).
    let board = Board::new(15, 15, Rule::Freestyle).unwrap();
    let keys = line_keys(&planes_of(&[board]));
    assert_eq!(keys.size(), [1, 4, 15, 15]);
    let off = |ks: &[i64]| {
        ks.iter()
            .map(|&k| 3 * engine::net::pattern::key_weight(k) as i64)
            .sum::<i64>()
    };
    let at = |d: i64, y: i64, x: i64| keys.int64_value(&[0, d, y, x]);
    assert_eq!(at(0, 0, 0), off(&[-4, -3, -2, -1]));
    // Direction (1, -1) at the top-left corner: behind is (-k, +k), ahead is (+k, -k): both
    // sides leave the board.
    assert_eq!(at(3, 0, 0), off(&[-4, -3, -2, -1, 1, 2, 3, 4]));
    // The centre sees no edge.
    assert_eq!(at(2, 7, 7), 0);
}

#[test]
fn the_tch_forward_equals_the_native_runtime_and_onnx_runtime_on_game_positions() {
    tch::set_num_threads(1);
    OnnxRuntime::init().unwrap_or_else(|e| panic!("ONNX Runtime unavailable: {e}"));
    // Seeded weights scaled so both clamps bite (a fresh network's would rarely reach them).
    let w = PatternWeights::random(DEFAULT_DIM, 11).unwrap();
    let (_vs, net) = tch_net(&w);
    assert!(
        net.export().unwrap() == w,
        "export gives back the weights imported"
    );
    let bytes = pattern_onnx_bytes(&w, &w.meta(0)).unwrap();
    let native = PatternEvaluator::new(NativeNet::from_bytes(&bytes).unwrap());
    let mut ort = OnnxModel::from_bytes(&bytes, 1, OrtDevice::Cpu).unwrap();
    let boards = positions();
    let forbidding = boards
        .iter()
        .filter(|b| {
            b.side_has_forbidden_points() && b.points().any(|p| b.is_empty(p) && b.is_forbidden(p))
        })
        .count();
    assert!(forbidding > 0, "renju positions with forbidden points");
    let (mut worst_logit, mut worst_p, mut worst_v, mut moved) = (0f32, 0f32, 0f32, 0);
    let mut sizes = std::collections::BTreeSet::new();
    for size in [15, 20] {
        let of_size: Vec<Board> = boards
            .iter()
            .filter(|b| b.width() == size)
            .cloned()
            .collect();
        sizes.insert((size, of_size.len()));
        for chunk in of_size.chunks(64) {
            let x = planes_of(chunk);
            let heads = tch::no_grad(|| net.forward_heads(&x));
            let (logits, values) = (to_vec(&heads.policy), to_vec(&heads.value));
            let (ort_logits, ort_values) = ort.run(&to_vec(&x), chunk.len(), size, size).unwrap();
            let refs: Vec<&Board> = chunk.iter().collect();
            let mut got = Vec::new();
            native.evaluate(&refs, &mut got);
            let area = size * size;
            for (k, (b, e)) in chunk.iter().zip(&got).enumerate() {
                let ours = &logits[k * area..(k + 1) * area];
                for (a, o) in ours.iter().zip(&ort_logits[k * area..(k + 1) * area]) {
                    worst_logit = worst_logit.max((a - o).abs());
                }
                worst_v = worst_v.max((values[k] - ort_values[k]).abs());
                let mut p = vec![0f32; area];
                masked_softmax(b, ours, &mut p);
                let dp = p
                    .iter()
                    .zip(&e.policy)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f32::max);
                worst_p = worst_p.max(dp);
                worst_v = worst_v.max((values[k] - e.value).abs());
                moved += usize::from(values[k].abs() > 0.05);
            }
        }
    }
    eprintln!(
        "{sizes:?} positions ({forbidding} with forbidden points): max |dlogit| vs ORT {worst_logit:.2e}, \
         max |dprob| vs native {worst_p:.2e}, max |dvalue| {worst_v:.2e}"
    );
    assert!(sizes.iter().all(|&(_, n)| n >= 100), "{sizes:?}");
    assert!(
        worst_logit < 1e-4 && worst_p < 1e-4 && worst_v < 5e-4,
        "{worst_logit} {worst_p} {worst_v}"
    );
    assert!(
        moved > 0,
        "the values never left 0: the test would not see a wrong value head"
    );
}

/// Samples of a random 15x15 game under all eight symmetries (policy: the move played).
fn game_samples() -> Vec<trainer::training::replay::Sample> {
    let rec = crate::common::random_record(15, 12, 21, 1);
    (0..rec.plies() - 1)
        .flat_map(|ply| (0..8).map(move |sym| (ply, sym)))
        .map(|(ply, sym)| sample_at(&rec, ply, sym).unwrap())
        .collect()
}

#[test]
fn training_steps_lower_the_loss_and_the_export_loads_natively() {
    // One thread: each step updates the whole 6.3M-row table, and tests share two cores.
    tch::set_num_threads(1);
    let batch = batch_tensors(&game_samples(), 15, Device::Cpu);
    let vs = nn::VarStore::new(Device::Cpu);
    let net = Model::for_training(&vs.root(), Form::of(Preset::Pattern), true);
    // The tch variables are the file's tensors by name; the auxiliary head is the one extra.
    let names = vs.variables();
    for name in PatternWeights::LEARNED {
        assert!(
            names.contains_key(name),
            "no variable {name}: {:?}",
            names.keys()
        );
    }
    assert_eq!(
        names.len(),
        PatternWeights::LEARNED.len() + 2,
        "{:?}",
        names.keys()
    );
    let fast = OptimConfig {
        lr: 1e-2,
        warmup_steps: 1,
        ..OptimConfig::from_settings(&Settings::default(), 10_000)
    };
    let mut opt = Optimizer::new(&vs, fast);
    let total = |net: &Model| {
        let l = losses(net, &batch);
        l.policy + l.value + l.opponent_policy.expect("the net has the head") * 0.5
    };
    let before = total(&net).double_value(&[]);
    for _ in 0..20 {
        let loss = total(&net);
        opt.zero_grad();
        loss.backward();
        opt.step();
    }
    let after = total(&net).double_value(&[]);
    eprintln!("pattern loss {before:.3} -> {after:.3}");
    assert!(after < 0.8 * before, "loss {before} -> {after}");
    let Exported::Pattern(w) = net.export().unwrap() else {
        panic!("the pattern preset exports a pattern network")
    };
    let bytes = Exported::Pattern(w)
        .onnx_bytes(20, Rule::Freestyle, 15)
        .unwrap();
    let loaded = NativeNet::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.meta().preset, "pattern");
    assert_eq!(
        (loaded.meta().blocks, loaded.meta().channels),
        (0, DEFAULT_DIM)
    );
    assert_eq!(loaded.meta().rules, [Rule::Freestyle]);
    assert_eq!(loaded.meta().board_sizes, [15]);
    assert_eq!(loaded.meta().step, 20);
}

#[test]
fn the_pattern_profile_trains_an_epoch_on_native_self_play_and_resumes_to_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let presets = concat!(env!("CARGO_MANIFEST_DIR"), "/presets.toml");
    let s = Settings {
        checkpoint_dir: dir.path().to_path_buf(),
        selfplay_games: 2,
        parallel_games: 2,
        mcts_simulations: 8,
        batch_size: 32,
        train_steps: 2,
        epochs: 1,
        eval_frequency: 1,
        eval_pairs: 1,
        eval_simulations: 4,
        eval_vs_classical: false,
        seed: 5,
        ..load_profile(std::path::Path::new(presets), "pattern-15x15").unwrap()
    };
    assert_eq!(s.model_preset, Preset::Pattern);
    let sum = trainer::run::run(&s).unwrap();
    assert_eq!((sum.last_epoch, sum.games), (1, 2));
    let models = dir.path().join("models");
    let latest = std::fs::read(models.join("latest.onnx")).unwrap();
    let net = NativeNet::from_bytes(&latest).unwrap();
    assert_eq!(
        (net.meta().preset.as_str(), net.meta().blocks),
        ("pattern", 0)
    );
    assert_eq!(
        (
            net.meta().rules.as_slice(),
            net.meta().board_sizes.as_slice()
        ),
        (&[Rule::Freestyle][..], &[15][..])
    );
    let metrics = std::fs::read_to_string(dir.path().join("metrics.jsonl")).unwrap();
    assert!(
        metrics.contains("native-pattern"),
        "self-play and matches ran natively"
    );
    // `trainer export` of the checkpoint, and a trainer resumed from it, give the epoch's file.
    let epoch1 = std::fs::read(models.join("model-000001.onnx")).unwrap();
    let ck = checkpoint::path_for(dir.path(), 1);
    let exported = export_checkpoint(&ck, s.rule, s.board_size, &mut |m| panic!("{m}")).unwrap();
    assert!(
        exported == epoch1,
        "trainer export differs from the epoch's file"
    );
    let mut t = Trainer::new(&s, Device::Cpu, 10, false, |_| {}).unwrap();
    let fresh = t.onnx().unwrap();
    t.resume(&Resume::Auto, dir.path(), |m| panic!("{m}"))
        .unwrap()
        .expect("a checkpoint");
    assert!(
        fresh != epoch1 && t.onnx().unwrap() == epoch1,
        "the resume restores the weights"
    );
}

/// One training step (batch 1,024, 15x15, CPU) of the pattern networks and of cpu32, at 1 and 2
/// threads: `cargo test --release -p trainer --test it pattern_net::step_speed -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn step_speed() {
    let mut samples = game_samples();
    const BATCH: usize = 1024;
    while samples.len() < BATCH {
        samples.extend_from_within(..samples.len().min(BATCH - samples.len()));
    }
    let batch = batch_tensors(&samples[..BATCH], 15, Device::Cpu);
    for threads in [1, 2] {
        tch::set_num_threads(threads);
        for preset in [Preset::Pattern, Preset::Pattern64, Preset::Cpu32] {
            let vs = nn::VarStore::new(Device::Cpu);
            let net = Model::for_training(&vs.root(), Form::of(preset), false);
            let mut opt =
                Optimizer::new(&vs, OptimConfig::from_settings(&Settings::default(), 1000));
            // (forward + backward, optimizer update) in seconds.
            let mut step = || {
                let t0 = std::time::Instant::now();
                let l = losses(&net, &batch);
                opt.zero_grad();
                (l.policy + l.value).backward();
                let t1 = std::time::Instant::now();
                opt.step();
                (t1 - t0, t1.elapsed())
            };
            step();
            let n = 5;
            let (mut grad, mut update) = (0.0, 0.0);
            for _ in 0..n {
                let (g, u) = step();
                (grad, update) = (grad + g.as_secs_f64(), update + u.as_secs_f64());
            }
            let per = |t: f64| t * 1000.0 / n as f64;
            let (ms, grad_ms, update_ms) = (per(grad + update), per(grad), per(update));
            eprintln!(
                "{preset}: {ms:.1} ms per step (forward+backward {grad_ms:.1}, update \
                 {update_ms:.1}; batch {BATCH}, 15x15, {threads} thread(s))"
            );
        }
    }
}
