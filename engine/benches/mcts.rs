//! MCTS speed. `cargo bench -p engine --bench mcts`:
//! - criterion: tree speed with the uniform evaluator, one thread, 15x15 middle games (the goal
//!   is >= 500,000 visits/s);
//! - then, when the ONNX Runtime is present, figures measured in one run with the same random
//!   `small` model on the CPU: search visits/s over raw ORT positions/s at the same batch
//!   (goal >= 0.9), and two search threads over one (goal >= 1.8x on two free cores).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use engine::bench::position;
use engine::eval::network::LoadConfig;
use engine::eval::onnx::{Device, OnnxModel, OnnxRuntime};
use engine::eval::onnx_evaluator::OnnxEvaluator;
use engine::eval::{UniformEvaluator, features};
use engine::game::{Board, Rule};
use engine::mcts::{MctsConfig, Search, SearchLimits};
use engine::net::{ModelMeta, NetWeights, Preset, onnx_bytes};

const VISITS: u64 = 20_000;

/// The tree-speed setting: a middle-game position and one search over the uniform evaluator, one
/// thread, batch 1. One search object, as the engine keeps one: each run starts a fresh tree in
/// the arenas the previous one grew (reuse off), so the figure is the steady-state tree speed
/// rather than the kernel's page-zeroing of a new process.
fn uniform_search(rule: Rule, stones: usize) -> (Board, Search) {
    let cfg = MctsConfig {
        threads: 1,
        batch_size: 1,
        reuse_tree: false,
        ..Default::default()
    };
    (
        position(rule, stones),
        Search::new(cfg, Arc::new(UniformEvaluator)),
    )
}

fn bench_uniform(c: &mut Criterion) {
    let mut g = c.benchmark_group("mcts_uniform_1thread");
    g.throughput(Throughput::Elements(VISITS));
    for (rule, stones) in [(Rule::Freestyle, 30), (Rule::Renju, 30)] {
        let (board, mut s) = uniform_search(rule, stones);
        g.bench_function(format!("{rule}_{stones}stones_{VISITS}visits"), |b| {
            b.iter(|| {
                s.set_position(&board);
                black_box(s.run(&SearchLimits::visits(VISITS)))
            })
        });
    }
    g.finish();
}

/// Thread CPU time: the tree figure stays comparable while other work shares the cores.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer for the duration of the call.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// `MCTS_TREE_CPU=1`: only the uniform tree speed, in visits per second of this thread's CPU
/// time and of wall time, for before/after comparisons on a busy machine.
fn tree_cpu() {
    let rounds: u32 = std::env::var("MCTS_TREE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    for (rule, stones) in [(Rule::Freestyle, 30), (Rule::Renju, 30)] {
        let (board, mut s) = uniform_search(rule, stones);
        s.set_position(&board);
        black_box(s.run(&SearchLimits::visits(VISITS)));
        let (cpu0, wall0) = (thread_cpu(), Instant::now());
        for _ in 0..rounds {
            s.set_position(&board);
            black_box(s.run(&SearchLimits::visits(VISITS)));
        }
        let (cpu, wall) = (thread_cpu() - cpu0, wall0.elapsed());
        let visits = (VISITS * rounds as u64) as f64;
        println!(
            "tree {rule} {stones} stones: {:>9.0} visits/cpu-s {:>9.0} visits/wall-s",
            visits / cpu.as_secs_f64(),
            visits / wall.as_secs_f64()
        );
    }
}

fn onnx_figures() {
    if let Err(e) = OnnxRuntime::init() {
        eprintln!("onnx figures skipped: {e}");
        return;
    }
    const BATCH: usize = 16;
    let secs = std::env::var("MCTS_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4.0);
    let weights = NetWeights::random(Preset::Small.config(), 1).expect("weights");
    let bytes = onnx_bytes(&weights, &ModelMeta::for_config(&weights.config, 0)).expect("bytes");
    let board = position(Rule::Freestyle, 30);

    // Raw ORT: the same model, batches of real encoded positions, one intra-op thread.
    let mut model = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).expect("model");
    let per = features::input_len(&board);
    let mut planes = vec![0.0; BATCH * per];
    for chunk in planes.chunks_mut(per) {
        features::encode(&board, chunk);
    }
    let raw_run = |model: &mut OnnxModel| {
        let t = Instant::now();
        let mut positions = 0usize;
        while t.elapsed().as_secs_f64() < secs {
            black_box(model.run(&planes, BATCH, 15, 15).expect("run"));
            positions += BATCH;
        }
        positions as f64 / t.elapsed().as_secs_f64()
    };
    let raw = raw_run(&mut model);
    // Two sessions side by side: what two cores give this machine right now (the honest
    // reference for the two-thread search when other work shares the cores).
    let mut second = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).expect("model");
    let raw2 = std::thread::scope(|sc| {
        let a = sc.spawn(|| raw_run(&mut model));
        let b = sc.spawn(|| raw_run(&mut second));
        a.join().expect("thread") + b.join().expect("thread")
    });

    let search = |threads: usize| {
        let cfg = LoadConfig {
            sessions: threads,
            threads_intra: 1,
            device: Device::Cpu,
            batch: BATCH,
            cache_entries: 0,
        };
        let ev = Arc::new(OnnxEvaluator::from_bytes(&bytes, cfg).expect("evaluator"));
        let mut s = Search::new(
            MctsConfig {
                threads,
                batch_size: BATCH,
                ..Default::default()
            },
            ev,
        );
        s.set_position(&board);
        let r = s.run(&SearchLimits::time(Duration::from_secs_f64(secs)));
        r.playouts as f64 / r.elapsed.as_secs_f64()
    };
    let one = search(1);
    let two = search(2);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "onnx small, 15x15, batch {BATCH}, CPU ({} cores, loadavg {})",
        num_cpus(),
        load.trim()
    );
    println!("  raw ORT 1 thread      : {raw:>9.0} positions/s");
    println!(
        "  search 1 thread       : {one:>9.0} visits/s   ratio to raw {:.3} (goal >= 0.9)",
        one / raw
    );
    println!(
        "  search 2 threads      : {two:>9.0} visits/s   speed-up {:.2}x (goal >= 1.8x), ratio to raw 2 sessions {:.3}",
        two / one,
        two / raw2
    );
    println!(
        "  raw ORT 2 sessions    : {raw2:>9.0} positions/s   ({:.2}x one session)",
        raw2 / raw
    );
}

fn num_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(5));
    targets = bench_uniform
}

fn main() {
    if std::env::var_os("MCTS_TREE_CPU").is_some() {
        tree_cpu();
        return;
    }
    benches();
    onnx_figures();
    Criterion::default().configure_from_args().final_summary();
}
