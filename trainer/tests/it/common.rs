//! What several trainer test modules share: the arguments that keep the real `trainer` binary on
//! one CPU thread, and random game records.

/// The trainer on the CPU, one torch thread, one self-play worker: tests run beside each other
/// on small CI machines, and one thread each keeps them from crowding one another out.
pub const ONE_CPU_THREAD: [&str; 6] = [
    "--device",
    "cpu",
    "--threads",
    "1",
    "--parallel-workers",
    "1",
];

/// A game of up to `plies` random moves near the stones on a `size` x `size` freestyle board
/// (stopping at a five), each move its own policy target, with `outcome` from black's side.
pub fn random_record(
    size: usize,
    plies: usize,
    seed: u64,
    outcome: i8,
) -> trainer::training::replay::GameRecord {
    use engine::game::{Board, Pos, Rule};
    let mut rng = engine::rng::Rng::new(seed);
    let mut board = Board::new(size, size, Rule::Freestyle).unwrap();
    let mut moves = Vec::new();
    while moves.len() < plies && board.winner().is_none() {
        let cands: Vec<Pos> = board
            .candidates(2)
            .into_iter()
            .filter(|&p| board.is_legal(p))
            .collect();
        let p = cands[rng.below(cands.len())];
        moves.push(board.dense_index(p) as u16);
        board.play(p).unwrap();
    }
    trainer::training::replay::GameRecord {
        board_size: size as u8,
        rule: Rule::Freestyle.to_protocol(),
        visits: moves.iter().map(|&m| vec![(m, 1)]).collect(),
        moves,
        outcome,
        resigned: false,
    }
}
