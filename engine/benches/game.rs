//! Rules-core speed: make/unmake with incremental patterns, renju forbidden checks, and the
//! classical evaluator. Run with `cargo bench -p engine --bench game`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use engine::game::{Board, Pos, Rule};
use std::hint::black_box;

/// A fixed, reproducible middle-game: a deterministic pseudo-random walk of legal moves near the
/// centre.
pub fn middle_game(rule: Rule, stones: usize) -> Board {
    let mut board = Board::new(15, 15, rule).unwrap();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    while board.move_count() < stones {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let cands = board.candidates(2);
        let p = cands[(state % cands.len() as u64) as usize];
        if board.is_legal(p)
            && board.threats(p, board.side_to_move()).best() < engine::game::Pattern::Five
        {
            board.play(p).unwrap();
        }
    }
    board
}

fn bench_make_unmake(c: &mut Criterion) {
    let board = middle_game(Rule::Freestyle, 30);
    let moves: Vec<Pos> = board.candidates(2);
    let mut g = c.benchmark_group("board");
    g.throughput(Throughput::Elements(moves.len() as u64));
    g.bench_function("make_unmake", |b| {
        let mut board = board.clone();
        b.iter(|| {
            for &p in &moves {
                board.play_unchecked(black_box(p));
                board.undo();
            }
        })
    });
    g.finish();
}

fn bench_forbidden(c: &mut Criterion) {
    let board = middle_game(Rule::Renju, 40);
    let empties: Vec<Pos> = board.points().filter(|&p| board.is_empty(p)).collect();
    let mut g = c.benchmark_group("renju");
    g.throughput(Throughput::Elements(empties.len() as u64));
    g.bench_function("forbidden_check", |b| {
        b.iter(|| {
            empties
                .iter()
                .filter(|&&p| board.is_forbidden(black_box(p)))
                .count()
        })
    });
    g.finish();
}

fn bench_classical(c: &mut Criterion) {
    use engine::eval::{Evaluation, classical::ClassicalEvaluator};
    let boards: Vec<Board> = [Rule::Freestyle, Rule::Standard, Rule::Renju]
        .into_iter()
        .map(|rule| middle_game(rule, 30))
        .collect();
    let mut g = c.benchmark_group("classical");
    g.throughput(Throughput::Elements(boards.len() as u64));
    g.bench_function("evaluate", |b| {
        let mut out = Evaluation::default();
        b.iter(|| {
            for board in &boards {
                ClassicalEvaluator::evaluate_one(black_box(board), &mut out);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench_make_unmake, bench_forbidden, bench_classical);
criterion_main!(benches);
