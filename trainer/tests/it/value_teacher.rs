//! The value teacher: a network file's value of each sampled position moves the value target
//! by the teacher's share, position by position under every symmetry; a file it cannot load,
//! one that claims other games, or a share outside 0..=1 is refused with the reason.

use std::path::{Path, PathBuf};

use engine::game::Rule;
use engine::net::{ModelMeta, NetWeights, Preset, write_model_file};
use trainer::training::replay::sample_and_board;
use trainer::training::teacher::ValueTeacher;

use crate::common::random_record;

/// A random tiny network claiming `rules` on 9x9.
fn teacher_file(dir: &Path, rules: &[Rule]) -> PathBuf {
    let w = NetWeights::random(Preset::Tiny.config(), 3).unwrap();
    let mut meta = ModelMeta::for_config(&w.config, 1);
    meta.rules = rules.to_vec();
    meta.board_sizes = vec![9];
    let path = dir.join("teacher.onnx");
    write_model_file(&path, &w, &meta).unwrap();
    path
}

#[test]
fn each_value_target_moves_by_the_share_toward_the_teachers_value_of_its_board() {
    let dir = tempfile::tempdir().unwrap();
    let path = teacher_file(dir.path(), &[Rule::Freestyle]);
    // A random 9x9 game of 20 moves that white wins.
    let rec = random_record(9, 20, 8, -1);
    let (mut samples, boards): (Vec<_>, Vec<_>) = (0..rec.plies() - 1)
        .map(|ply| sample_and_board(&rec, ply, ply % 8).unwrap())
        .unzip();
    let outcomes: Vec<f32> = samples.iter().map(|x| x.value).collect();
    // The teacher's own values, one board at a time, as the engine would ask.
    let single = trainer::selfplay::bootstrap::teacher_network(&path, 1).unwrap();
    let mut out = Vec::new();
    let values: Vec<f32> = boards
        .iter()
        .map(|b| {
            single.evaluate(&[b], &mut out);
            out[0].value
        })
        .collect();
    assert!(
        values.iter().any(|v| (v - values[0]).abs() > 1e-3),
        "a random network values the positions differently: {values:?}"
    );
    let share = 0.25;
    let teacher = ValueTeacher::load(&path, share, Rule::Freestyle, 9).unwrap();
    teacher.mix(&mut samples, &boards);
    for (i, x) in samples.iter().enumerate() {
        let expected = outcomes[i] + share * (values[i] - outcomes[i]);
        assert!(
            (x.value - expected).abs() < 1e-4,
            "ply {i}: {} where {expected} (outcome {}, teacher {})",
            x.value,
            outcomes[i],
            values[i]
        );
    }
    // Share 0 leaves the outcomes as they are.
    let mut again: Vec<_> = (0..rec.plies() - 1)
        .map(|ply| sample_and_board(&rec, ply, 0).unwrap().0)
        .collect();
    let none = ValueTeacher::load(&path, 0.0, Rule::Freestyle, 9).unwrap();
    none.mix(&mut again, &boards);
    assert!(again.iter().zip(&outcomes).all(|(x, &z)| x.value == z));
}

#[test]
fn a_teacher_that_cannot_judge_the_run_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let renju = teacher_file(dir.path(), &[Rule::Renju]);
    let e = ValueTeacher::load(&renju, 0.5, Rule::Freestyle, 9)
        .err()
        .expect("a renju network cannot judge freestyle")
        .to_string();
    assert!(e.contains("cannot judge freestyle"), "{e}");
    let e = ValueTeacher::load(&renju, 0.5, Rule::Renju, 15)
        .err()
        .expect("a 9x9 network cannot judge 15x15")
        .to_string();
    assert!(e.contains("15x15"), "{e}");
    let broken = dir.path().join("broken.onnx");
    std::fs::write(&broken, b"not a model").unwrap();
    let e = ValueTeacher::load(&broken, 0.5, Rule::Freestyle, 9)
        .err()
        .expect("a broken file")
        .to_string();
    assert!(e.contains("broken.onnx"), "{e}");
    let e = ValueTeacher::load(&renju, 1.5, Rule::Renju, 9)
        .err()
        .expect("a share above 1")
        .to_string();
    assert!(e.contains("outside 0..=1"), "{e}");
}
