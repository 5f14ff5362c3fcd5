//! `bench` is reproducible: the same `Nodes searched` and signature on every run of a build.

use std::sync::Arc;

use engine::bench::{BenchConfig, run_with};
use engine::eval::UniformEvaluator;

#[test]
fn bench_signature_is_reproducible() {
    let config = BenchConfig {
        visits: 2_000,
        ..Default::default()
    };
    let mut out_a = Vec::new();
    let mut out_b = Vec::new();
    let a = run_with(&config, Arc::new(UniformEvaluator), &mut out_a).unwrap();
    let b = run_with(&config, Arc::new(UniformEvaluator), &mut out_b).unwrap();
    assert_eq!(a.nodes, b.nodes);
    assert_eq!(a.signature, b.signature);
    assert!(a.visits > 0 && a.visits <= 2_000 * 12, "{}", a.visits);
    let text = String::from_utf8(out_a).unwrap();
    assert!(
        text.contains(&format!("nodes {} visits", a.nodes)),
        "{text}"
    );
    // Every per-position line is identical between runs (the summary line has the timing).
    let stable = |s: &str| {
        s.lines()
            .filter(|l| l.starts_with("bench "))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(stable(&text), stable(&String::from_utf8(out_b).unwrap()));
    // Another visit count searches differently: the signature sees it.
    let c = run_with(
        &BenchConfig {
            visits: 1_000,
            ..config
        },
        Arc::new(UniformEvaluator),
        &mut std::io::sink(),
    )
    .unwrap();
    assert_ne!(a.signature, c.signature);
}

/// The full default bench, printed (`cargo test --release -p engine --test it -- --ignored --nocapture mcts_bench`).
#[test]
#[ignore]
fn default_bench_prints() {
    let a = engine::bench::run();
    let b = engine::bench::run();
    assert!(a.nodes > 0);
    assert_eq!((a.nodes, a.signature), (b.nodes, b.signature));
}
