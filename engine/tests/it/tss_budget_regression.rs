//! Regression: the defence phase of `tss::analyse` (replaying the opponent's winning strategy
//! after every candidate move) read the clock only when its node count crossed a multiple of 256,
//! which one tick per candidate never reaches on a 15x15 board: a 150 ms budget ran 924 ms and
//! lost 20 games on time in a 100-game match. The bound here is loose (a loaded CI machine), but
//! far below what the bug took.

use engine::game::{Board, Pos, Rule};
use engine::tss::{Budget, analyse};
use std::time::{Duration, Instant};

#[test]
fn analyse_stays_near_its_time_budget() {
    let budget = Duration::from_millis(50);
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut worst = Duration::ZERO;
    for game in 0..24 {
        for rule in [Rule::Freestyle, Rule::Renju] {
            let mut b = Board::new(15, 15, rule).unwrap();
            b.play(Pos::new(7, 7)).unwrap();
            for _ in 0..(10 + game % 30) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let c = b.candidates(2);
                let p = c[(state % c.len() as u64) as usize];
                if b.is_legal(p) && !b.makes_five(p, b.side_to_move()) {
                    b.play(p).unwrap();
                }
            }
            let t = Instant::now();
            analyse(&b, b.side_to_move(), Budget::time(budget));
            worst = worst.max(t.elapsed());
        }
    }
    assert!(
        worst < budget + Duration::from_millis(400),
        "worst analysis took {worst:?} for a {budget:?} budget"
    );
}
