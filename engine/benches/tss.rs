//! Threat-space search speed: VCF on a quiet position (the MCTS-leaf case), VCF and VCT on fixed
//! winning positions from the hand-made suite. Run with `cargo bench -p engine --bench tss`.

use criterion::{Criterion, criterion_group, criterion_main};
use engine::game::{Board, Color, Pos, Rule};
use engine::tss::{Budget, solve_vcf, solve_vct};
use std::hint::black_box;

fn board(rule: Rule, black: &[(usize, usize)], white: &[(usize, usize)]) -> Board {
    let mut b = Board::new(15, 15, rule).unwrap();
    for &(x, y) in black {
        b.place(Pos::new(x, y), Color::Black).unwrap();
    }
    for &(x, y) in white {
        b.place(Pos::new(x, y), Color::White).unwrap();
    }
    b
}

fn bench_tss(c: &mut Criterion) {
    let mut g = c.benchmark_group("tss");
    let mut quiet = board(Rule::Renju, &[(7, 7), (8, 9), (5, 6)], &[(8, 8), (6, 6), (9, 7)]);
    g.bench_function("vcf_quiet", |b| {
        b.iter(|| solve_vcf(black_box(&mut quiet), Color::Black, Budget::nodes(100_000)))
    });
    let mut four_three = board(
        Rule::Freestyle,
        &[(5, 5), (6, 5), (7, 5), (8, 6), (8, 7)],
        &[(4, 5), (0, 0), (0, 14)],
    );
    g.bench_function("vcf_four_three", |b| {
        b.iter(|| solve_vcf(black_box(&mut four_three), Color::Black, Budget::nodes(100_000)))
    });
    let mut double_three = board(
        Rule::Freestyle,
        &[(5, 7), (6, 7), (7, 5), (7, 6)],
        &[(0, 0), (0, 14), (14, 0)],
    );
    g.bench_function("vct_double_three", |b| {
        b.iter(|| solve_vct(black_box(&mut double_three), Color::Black, Budget::nodes(1_000_000)))
    });
    g.finish();
}

criterion_group!(benches, bench_tss);
criterion_main!(benches);
