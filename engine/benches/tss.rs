//! Threat-space search speed: VCF on a quiet position (the MCTS-leaf case), VCF and VCT on fixed
//! winning positions from the hand-made suite, a 19-ply VCT and the defence search from the
//! generated suite. Run with `cargo bench -p engine --bench tss`.

use criterion::{Criterion, criterion_group, criterion_main};
use engine::game::{Board, Color, Pos, Rule};
use engine::tss::suite;
use engine::tss::{Budget, defences, solve_vcf, solve_vct};
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

/// A position of the generated suite by name.
fn generated(name: &str) -> suite::Position {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tactics/generated.txt"
    ))
    .expect("generated suite");
    suite::parse(&text)
        .expect("suite parses")
        .into_iter()
        .find(|p| p.name == name)
        .expect("position in the suite")
}

fn bench_tss(c: &mut Criterion) {
    let mut g = c.benchmark_group("tss");
    let mut quiet = board(
        Rule::Renju,
        &[(7, 7), (8, 9), (5, 6)],
        &[(8, 8), (6, 6), (9, 7)],
    );
    g.bench_function("vcf_quiet", |b| {
        b.iter(|| solve_vcf(black_box(&mut quiet), Color::Black, Budget::nodes(100_000)))
    });
    let mut four_three = board(
        Rule::Freestyle,
        &[(5, 5), (6, 5), (7, 5), (8, 6), (8, 7)],
        &[(4, 5), (0, 0), (0, 14)],
    );
    g.bench_function("vcf_four_three", |b| {
        b.iter(|| {
            solve_vcf(
                black_box(&mut four_three),
                Color::Black,
                Budget::nodes(100_000),
            )
        })
    });
    let mut double_three = board(
        Rule::Freestyle,
        &[(5, 7), (6, 7), (7, 5), (7, 6)],
        &[(0, 0), (0, 14), (14, 0)],
    );
    g.bench_function("vct_double_three", |b| {
        b.iter(|| {
            solve_vct(
                black_box(&mut double_three),
                Color::Black,
                Budget::nodes(1_000_000),
            )
        })
    });
    let long = generated("gen-freestyle-vct-7");
    let (mut long_board, long_side) = (long.board, long.to_move);
    g.bench_function("vct_19_plies", |b| {
        b.iter(|| {
            solve_vct(
                black_box(&mut long_board),
                long_side,
                Budget::nodes(5_000_000),
            )
        })
    });
    let threat = generated("gen-freestyle-defend-3");
    g.bench_function("defences_against_vcf", |b| {
        b.iter(|| {
            defences(
                black_box(&threat.board),
                threat.to_move,
                Budget::nodes(20_000_000),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench_tss);
criterion_main!(benches);
