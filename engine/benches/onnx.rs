//! ONNX Runtime throughput: positions/s of random-weight networks on 15x15, batch 16, one
//! intra-op thread (the engine's per-thread setting on 2 cores). Skips with a notice when the
//! runtime library has not been fetched (scripts/fetch-runtime.sh).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::eval::onnx::{Device, OnnxModel, OnnxRuntime};
use engine::net::{ModelMeta, NetWeights, Preset, onnx_bytes};

const SIDE: usize = 15;
const BATCH: usize = 16;

fn planes(n: usize) -> Vec<f32> {
    // A fixed pseudo-position per batch entry: sparse stones, on-board mask, a rule plane.
    let hw = SIDE * SIDE;
    let mut v = vec![0f32; n * 11 * hw];
    for b in 0..n {
        let base = b * 11 * hw;
        for i in 0..hw {
            let r = (i * 2654435761 + b * 97) % 17;
            if r == 0 {
                v[base + i] = 1.0;
            } else if r == 1 {
                v[base + hw + i] = 1.0;
            }
            v[base + 5 * hw + i] = 1.0;
            v[base + 6 * hw + i] = 1.0;
        }
    }
    v
}

fn bench_presets(c: &mut Criterion) {
    if let Err(e) = OnnxRuntime::init() {
        eprintln!("onnx bench skipped: {e}");
        return;
    }
    let input = planes(BATCH);
    let mut group = c.benchmark_group("onnx_15x15_b16_t1");
    group.throughput(Throughput::Elements(BATCH as u64));
    for preset in [Preset::Tiny, Preset::Small] {
        let weights = NetWeights::random(preset.config(), 1).expect("random weights");
        let bytes =
            onnx_bytes(&weights, &ModelMeta::for_config(&weights.config, 0)).expect("onnx bytes");
        let mut model = OnnxModel::from_bytes(&bytes, 1, Device::Cpu).expect("load model");
        group.bench_function(preset.name(), |b| {
            b.iter(|| {
                black_box(
                    model
                        .run(black_box(&input), BATCH, SIDE, SIDE)
                        .expect("run"),
                )
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_presets
}
criterion_main!(benches);
