//! Tree speed with the uniform evaluator, one thread, a 15x15 middle game: 100,000 visits must
//! finish, well within a cap that only a pathological slowdown reaches (an accidental quadratic
//! step, a lock). The speed itself is measured by `cargo bench -p engine --bench mcts`.

use std::sync::Arc;

use engine::bench::position;
use engine::eval::UniformEvaluator;
use engine::game::Rule;
use engine::mcts::{MctsConfig, Search, SearchLimits};

#[test]
fn uniform_tree_speed_one_thread() {
    let board = position(Rule::Freestyle, 30);
    let cfg = MctsConfig {
        threads: 1,
        batch_size: 1,
        ..Default::default()
    };
    let mut search = Search::new(cfg, Arc::new(UniformEvaluator));
    search.set_position(&board);
    // Warm up the pattern tables and caches.
    search.run(&SearchLimits::visits(5_000));
    let mut search = Search::new(
        MctsConfig {
            threads: 1,
            batch_size: 1,
            ..Default::default()
        },
        Arc::new(UniformEvaluator),
    );
    search.set_position(&board);
    let r = search.run(&SearchLimits::visits(100_000));
    let vps = r.playouts as f64 / r.elapsed.as_secs_f64();
    assert_eq!(r.playouts, 100_000);
    // About 500 k visits/s on one core: 10 k leaves a loaded machine fifty times the room.
    assert!(vps > 10_000.0, "{vps} visits/s");
}
