//! The tch network against the contract: parameter counts of the presets, BN-folded export equal
//! to the eval-mode forward (pure-Rust reference and ONNX Runtime on the written file, max abs
//! difference <= 1e-4), after some training steps so BN statistics are not trivial.

use engine::eval::features;
use engine::eval::onnx::{Device as OrtDevice, OnnxModel};
use engine::game::{Board, Pos, Rule};
use engine::net::{ModelMeta, Preset, reference_forward, write_model_file};
use tch::{Device, Kind, Tensor, nn};
use trainer::config::Settings;
use trainer::network::form::Model;
use trainer::network::model::{Net, to_vec, trainable_params};
use trainer::network::optim::{OptimConfig, Optimizer};

fn planes(n: usize, size: usize) -> Vec<f32> {
    let mut out = Vec::new();
    for k in 0..n {
        let mut b = Board::new(size, size, Rule::Renju).unwrap();
        for m in 0..(3 + k * 2) {
            let x = (m * 3 + k) % size;
            let y = (m * 5 + 2 * k) % size;
            let p = Pos::new(x, y);
            if b.is_legal(p) {
                b.play(p).unwrap();
            }
        }
        let mut p = vec![0f32; features::input_len(&b)];
        features::encode(&b, &mut p);
        out.extend(p);
    }
    out
}

#[test]
fn preset_parameter_counts_match_the_contract() {
    tch::set_num_threads(1);
    for p in Preset::RESNETS {
        let vs = nn::VarStore::new(Device::Cpu);
        let net = Net::new(&vs.root(), p.config());
        let folded = net.export().unwrap().param_count();
        assert_eq!(folded, p.config().param_count(), "{p}");
        // BN adds gamma/beta per channel and drops the conv biases it replaces.
        assert!(trainable_params(&vs) >= folded, "{p}");
        eprintln!("{p}: {} trainable, {folded} folded", trainable_params(&vs));
    }
}

#[test]
fn exported_onnx_matches_tch_eval_forward() {
    tch::set_num_threads(1);
    tch::manual_seed(5);
    let size = 9;
    let config = Preset::Tiny.config();
    let vs = nn::VarStore::new(Device::Cpu);
    let net = Net::new(&vs.root(), config);
    // A few training steps so running statistics and weights move away from their init.
    let mut opt = Optimizer::new(
        &vs,
        OptimConfig {
            lr: 1e-2,
            warmup_steps: 1,
            ..OptimConfig::from_settings(&Settings::default(), 10_000)
        },
    );
    let n = 6;
    let x = Tensor::from_slice(&planes(n, size)).view([n as i64, 11, size as i64, size as i64]);
    for _ in 0..5 {
        let (p, v) = net.forward(&x, true);
        let loss = p.square().mean(Kind::Float) + (v - 0.5).square().mean(Kind::Float);
        opt.zero_grad();
        loss.backward();
        opt.step();
    }
    let (p, v) = tch::no_grad(|| net.forward(&x, false));
    let (p, v) = (to_vec(&p), to_vec(&v));

    let weights = net.export().unwrap();
    let host = planes(n, size);
    let (rp, rv) = reference_forward(&weights, &host, n, size, size).unwrap();
    let max_diff = |a: &[f32], b: &[f32]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max)
    };
    assert!(
        max_diff(&p, &rp) <= 1e-4,
        "reference policy diff {}",
        max_diff(&p, &rp)
    );
    assert!(
        max_diff(&v, &rv) <= 1e-4,
        "reference value diff {}",
        max_diff(&v, &rv)
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.onnx");
    write_model_file(&file, &weights, &ModelMeta::for_config(&config, 5)).unwrap();
    let mut model = OnnxModel::load(&file, 1, OrtDevice::Cpu)
        .expect("ONNX Runtime (make third_party/.runtime-ok)");
    let (op, ov) = model.run(&host, n, size, size).unwrap();
    let (dp, dv) = (max_diff(&p, &op), max_diff(&v, &ov));
    eprintln!("tch vs ORT: policy max diff {dp:e}, value max diff {dv:e}");
    assert!(dp <= 1e-4 && dv <= 1e-4, "policy {dp} value {dv}");
    // The outputs are not trivially equal to zero.
    assert!(p.iter().any(|x| x.abs() > 1e-3));
}

/// `trainer transfer-rule`: the new rule's network answers a position exactly as the old rule's
/// network answered it (the rule planes are constant), and a folder that already holds a
/// checkpoint is refused, not overwritten.
#[test]
fn transfer_rule_plays_the_new_rule_as_the_old() {
    use trainer::network::checkpoint::{self, Checkpoint};
    tch::set_num_threads(1);
    tch::manual_seed(11);
    let size = 9;
    let config = Preset::Tiny.config();
    let vs = nn::VarStore::new(Device::Cpu);
    let net = Net::new(&vs.root(), config);
    let forward = |net: &Net, rule: Rule| {
        let mut b = Board::new(size, size, rule).unwrap();
        for p in [Pos::new(4, 4), Pos::new(5, 4), Pos::new(4, 5)] {
            b.play(p).unwrap();
        }
        let mut x = vec![0f32; features::input_len(&b)];
        features::encode(&b, &mut x);
        let x = Tensor::from_slice(&x).view([1, features::PLANES as i64, size as i64, size as i64]);
        let (p, v) = net.forward(&x, false);
        (to_vec(&p), to_vec(&v))
    };
    let freestyle = forward(&net, Rule::Freestyle);
    let max_diff = |a: &(Vec<f32>, Vec<f32>), b: &(Vec<f32>, Vec<f32>)| {
        a.0.iter()
            .chain(&a.1)
            .zip(b.0.iter().chain(&b.1))
            .map(|(x, y)| (x - y).abs())
            .fold(0f32, f32::max)
    };
    assert!(
        max_diff(&freestyle, &forward(&net, Rule::Standard)) > 1e-3,
        "the rule planes should matter before"
    );

    let dir = tempfile::tempdir().unwrap();
    let ck = Checkpoint {
        epoch: 7,
        step: 70,
        preset: Preset::Tiny.name().into(),
        blocks: config.blocks,
        channels: config.channels,
        rng: trainer::seeded_rng(1),
        next_chunk: 0,
        games_played: 0,
        best_epoch: 0,
        best_elo: 0.0,
        weights: checkpoint::capture(&vs),
        optimizer: Vec::new(),
        best_weights: Vec::new(),
        rule: Some(Rule::Freestyle),
        board_size: Some(size),
        warm_start_steps: 0,
    };
    // Version 3 keeps the warm start's steps; a version 2 file (the body alone) reads with none.
    let warm = Checkpoint {
        warm_start_steps: 123,
        ..ck.clone()
    };
    let v3 = checkpoint::save(dir.path(), &warm).unwrap();
    assert_eq!(checkpoint::load(&v3).unwrap(), warm);
    trainer::support::store::write(&v3, *b"FZCK", 2, &ck).unwrap();
    assert_eq!(checkpoint::load(&v3).unwrap(), ck);
    let from = checkpoint::save(dir.path(), &ck).unwrap();
    let run = dir.path().join("standard");
    let err = checkpoint::transfer_rule(&from, Rule::Renju, Rule::Standard, &run).unwrap_err();
    assert!(err.contains("trained on freestyle, not renju"), "{err}");
    let moved = checkpoint::transfer_rule(&from, Rule::Freestyle, Rule::Standard, &run).unwrap();
    let ck2 = checkpoint::load(&moved).unwrap();
    assert_eq!((ck2.epoch, ck2.step), (7, 70));
    assert_eq!(
        ck2.rule,
        Some(Rule::Standard),
        "the new run's checkpoint says its rule"
    );
    let vs2 = nn::VarStore::new(Device::Cpu);
    let net2 = Net::new(&vs2.root(), config);
    checkpoint::restore(&vs2, &ck2.weights).unwrap();
    let standard = forward(&net2, Rule::Standard);
    assert!(
        max_diff(&freestyle, &standard) < 1e-6,
        "standard after the transfer: {}",
        max_diff(&freestyle, &standard)
    );

    let err = checkpoint::transfer_rule(&from, Rule::Freestyle, Rule::Renju, &run).unwrap_err();
    assert!(err.contains("already holds checkpoints"), "{err}");
    assert_eq!(
        checkpoint::load(&moved).unwrap(),
        ck2,
        "the folder's checkpoint is untouched"
    );
}

#[test]
fn the_opponent_reply_head_learns_and_stays_out_of_the_export() {
    use trainer::training::replay::{GameRecord, sample_at};
    use trainer::training::{batch_tensors, losses};
    tch::set_num_threads(1);
    let config = Preset::Tiny.config();
    // A 9x9 game whose replies follow the previous move (white answers one point to the right),
    // so the reply is predictable from the board.
    let n = 9u16;
    let mut moves = Vec::new();
    for k in 0..8u16 {
        let black = (k % 4) * 2 * n + (k / 4) * 4;
        moves.extend([black, black + 1]);
    }
    let visits = moves.iter().map(|&m| vec![(m, 1)]).collect();
    let rec = GameRecord {
        board_size: 9,
        rule: Rule::Freestyle.to_protocol(),
        moves,
        visits,
        outcome: 0,
        resigned: false,
    };
    let samples: Vec<_> = (0..rec.plies() - 1)
        .flat_map(|ply| (0..8).map(move |sym| (ply, sym)))
        .map(|(ply, sym)| sample_at(&rec, ply, sym).unwrap())
        .collect();
    let batch = batch_tensors(&samples, 9, Device::Cpu);
    assert_eq!(batch.opponent_targets, samples.len());

    let vs = nn::VarStore::new(Device::Cpu);
    let net = Model::ResNet(Box::new(Net::for_training(&vs.root(), config, true)));
    let fast = OptimConfig {
        lr: 1e-2,
        warmup_steps: 1,
        ..OptimConfig::from_settings(&Settings::default(), 10_000)
    };
    let mut opt = Optimizer::new(&vs, fast);
    let aux_loss = |net: &Model| {
        losses(net, &batch)
            .opponent_policy
            .expect("the net has the head")
            .double_value(&[])
    };
    let before = aux_loss(&net);
    for _ in 0..60 {
        let l = losses(&net, &batch);
        let loss = l.policy + l.value + l.opponent_policy.unwrap() * 0.5;
        opt.zero_grad();
        loss.backward();
        opt.step();
    }
    let after = aux_loss(&net);
    eprintln!("opponent-reply loss {before:.3} -> {after:.3}");
    assert!(
        after < 0.5 * before,
        "opponent-reply loss {before} -> {after}"
    );

    // The export is the plain network's: the same parameters, and a net without the head has no
    // such loss.
    assert_eq!(net.export().unwrap().param_count(), config.param_count());
    let plain_vs = nn::VarStore::new(Device::Cpu);
    let plain = Model::new(&plain_vs.root(), config);
    assert!(losses(&plain, &batch).opponent_policy.is_none());
}
