//! The classical pattern evaluator: scores every candidate move by the line patterns it makes for
//! the side to move (attack) and breaks for the opponent (defence), and the position by the
//! balance of the best threats on each side. No network: the engine's fallback, the foundation
//! move choice, and a cheap prior for MCTS. Knows nothing of search or inference runtimes.

use super::{Evaluation, Evaluator};
use crate::game::{Board, CellThreats, Color, Pattern, Pos};

/// Points a move can score, by what it makes on one colour's lines.
pub fn threat_score(t: &CellThreats) -> f32 {
    if t.makes_five() {
        return 1_000_000.0;
    }
    let fours = t.fours();
    let flex3 = t.count(Pattern::Flex3);
    if t.unstoppable_four() {
        return 100_000.0;
    }
    if fours >= 1 && flex3 >= 1 {
        return 50_000.0;
    }
    if flex3 >= 2 {
        return 20_000.0;
    }
    t.patterns
        .iter()
        .map(|p| match p {
            Pattern::Block4 => 3_000.0,
            Pattern::Flex3 => 2_500.0,
            Pattern::Block3 => 500.0,
            Pattern::Flex2 => 400.0,
            Pattern::Block2 => 100.0,
            Pattern::Flex1 => 30.0,
            Pattern::Block1 => 10.0,
            _ => 0.0,
        })
        .sum()
}

/// How much breaking the opponent's threats is worth relative to making one's own.
const DEFENCE_WEIGHT: f32 = 0.85;

/// A candidate move with its attack and defence scores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredMove {
    pub pos: Pos,
    pub attack: f32,
    pub defence: f32,
}

impl ScoredMove {
    pub fn score(&self) -> f32 {
        // Blocking a five outranks everything but making one.
        let block_five = if self.defence >= 1_000_000.0 {
            500_000.0
        } else {
            0.0
        };
        self.attack + DEFENCE_WEIGHT * self.defence + block_five
    }
}

/// A candidate point (empty, near the stones) with both sides' threats there, read once per
/// position: the move scores and the position's value both come from them.
struct Candidate {
    pos: Pos,
    /// What the side to move makes by playing here, and what the opponent would, with their
    /// `threat_score`s.
    mine: CellThreats,
    theirs: CellThreats,
    attack: f32,
    defence: f32,
    /// Forbidden to the side to move (renju black), or to the opponent.
    mine_forbidden: bool,
    theirs_forbidden: bool,
}

fn candidates(board: &Board) -> Vec<Candidate> {
    let me = board.side_to_move();
    board
        .candidates(2)
        .into_iter()
        .map(|p| {
            // Only black has forbidden points: one check serves whichever side is black.
            let forbidden = board.is_forbidden(p);
            let (mine, theirs) = (board.threats(p, me), board.threats(p, me.opp()));
            Candidate {
                pos: p,
                mine,
                theirs,
                attack: threat_score(&mine),
                defence: threat_score(&theirs),
                mine_forbidden: me == Color::Black && forbidden,
                theirs_forbidden: me.opp() == Color::Black && forbidden,
            }
        })
        .collect()
}

/// Legal candidate moves near the stones, scored, best first (ties broken by point, so the order
/// is reproducible).
pub fn scored_moves(board: &Board) -> Vec<ScoredMove> {
    moves_of(board, &candidates(board))
}

fn moves_of(board: &Board, candidates: &[Candidate]) -> Vec<ScoredMove> {
    let mut moves: Vec<ScoredMove> = candidates
        .iter()
        .filter(|c| !c.mine_forbidden)
        .map(|c| ScoredMove {
            pos: c.pos,
            attack: c.attack,
            defence: c.defence,
        })
        .collect();
    if moves.is_empty() {
        moves = board
            .legal_moves()
            .into_iter()
            .map(|p| ScoredMove {
                pos: p,
                attack: 0.0,
                defence: 0.0,
            })
            .collect();
    }
    moves.sort_by(|a, b| b.score().total_cmp(&a.score()).then(a.pos.cmp(&b.pos)));
    moves
}

/// The position's value for the side to move, in [-1, 1], from the best threats of each side.
pub fn position_value(board: &Board) -> f32 {
    value_of(board, &candidates(board))
}

fn value_of(board: &Board, candidates: &[Candidate]) -> f32 {
    if board.winner().is_some() {
        return -1.0; // the side that just moved won
    }
    let mut mine = Vec::new();
    let mut theirs = Vec::new();
    let mut their_fives = 0;
    for c in candidates {
        if c.mine.makes_five() && !c.mine_forbidden {
            return 0.97;
        }
        if c.theirs.makes_five() && !c.theirs_forbidden {
            their_fives += 1;
        }
        if !c.mine_forbidden {
            mine.push(c.attack);
        }
        if !c.theirs_forbidden {
            theirs.push(c.defence);
        }
    }
    if their_fives >= 2 {
        return -0.97;
    }
    // The four largest, largest first (the order a full sort gave them, so the same sum).
    let top = |v: &mut Vec<f32>| {
        let desc = |a: &f32, b: &f32| b.total_cmp(a);
        if v.len() > 4 {
            v.select_nth_unstable_by(3, desc);
            v.truncate(4);
        }
        v.sort_by(desc);
        v.iter().sum::<f32>()
    };
    let my_best = mine.iter().copied().fold(0.0, f32::max);
    if their_fives == 0 && my_best >= 100_000.0 {
        return 0.93; // an unstoppable four the opponent cannot race
    }
    // Moving first is worth about a third of a threat level.
    let (mut my_weight, mut their_weight) = (1.3, 1.0);
    // A threat of the opponent that one move answers (a single five to block, or the open-four
    // points of one open three) costs the side to move its move, not the game: it counts as a
    // three, and the opponent, who moves after the answer, gets the first move's weight.
    if let Some(forcing) = single_forcing_threat(candidates, their_fives) {
        for t in theirs.iter_mut().filter(|t| **t >= forcing) {
            *t = ANSWERED_THREAT;
        }
        (my_weight, their_weight) = (1.0, 1.3);
    }
    let balance = my_weight * top(&mut mine) - their_weight * top(&mut theirs);
    (balance / 30_000.0).tanh() * 0.9
}

/// What an opponent's threat counts for once the side to move has answered it: a three's worth.
const ANSWERED_THREAT: f32 = 2_500.0;

/// The threat score of the opponent's threat that the side to move must answer at once, when
/// one move can answer it: its single five point (1,000,000), or the open-four points of one open
/// three (100,000 and above, every such point on one line within a five's span). `None` when
/// nothing forces the answer, or when two threats do (two five points, or open-four points on two
/// lines): one move cannot answer those, and the position stays as lost as it looks.
fn single_forcing_threat(candidates: &[Candidate], their_fives: usize) -> Option<f32> {
    if their_fives == 1 {
        return Some(1_000_000.0);
    }
    if their_fives > 1 {
        return None;
    }
    let mut open_four_points = candidates
        .iter()
        .filter(|c| !c.theirs_forbidden && c.theirs.unstoppable_four())
        .map(|c| c.pos);
    let first = open_four_points.next()?;
    let on_one_line = open_four_points.all(|p| {
        let (dx, dy) = (
            p.x() as i64 - first.x() as i64,
            p.y() as i64 - first.y() as i64,
        );
        let collinear = dx == 0 || dy == 0 || dx.abs() == dy.abs();
        collinear && dx.abs().max(dy.abs()) <= 5
    });
    on_one_line.then_some(100_000.0)
}

/// The classical evaluator as an `Evaluator`: priors proportional to a power of the move score,
/// concentrated on points near the stones.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClassicalEvaluator;

impl ClassicalEvaluator {
    pub fn evaluate_one(board: &Board, out: &mut Evaluation) {
        out.policy.clear();
        out.policy.resize(board.width() * board.height(), 0.0);
        // The candidates' threats once, for the value and the prior both.
        let candidates = candidates(board);
        out.value = value_of(board, &candidates);
        let moves = moves_of(board, &candidates);
        let weights: Vec<f32> = moves.iter().map(|m| (m.score() + 1.0).powf(0.75)).collect();
        let sum: f32 = weights.iter().sum();
        for (m, w) in moves.iter().zip(&weights) {
            out.policy[board.dense_index(m.pos)] = if sum > 0.0 {
                w / sum
            } else {
                1.0 / moves.len() as f32
            };
        }
    }
}

impl Evaluator for ClassicalEvaluator {
    fn name(&self) -> String {
        "classical".into()
    }
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        out.resize_with(boards.len(), Evaluation::default);
        for (board, e) in boards.iter().zip(out.iter_mut()) {
            Self::evaluate_one(board, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Rule;

    fn board_with(rule: Rule, black: &[(usize, usize)], white: &[(usize, usize)]) -> Board {
        let mut b = Board::new(15, 15, rule).unwrap();
        for &(x, y) in black {
            b.place(Pos::new(x, y), Color::Black).unwrap();
        }
        for &(x, y) in white {
            b.place(Pos::new(x, y), Color::White).unwrap();
        }
        b
    }

    #[test]
    fn sees_immediate_win() {
        let b = board_with(
            Rule::Freestyle,
            &[(3, 7), (4, 7), (5, 7), (6, 7)],
            &[(3, 8), (4, 8), (5, 8), (9, 9)],
        );
        let best = scored_moves(&b)[0].pos;
        assert!(best == Pos::new(7, 7) || best == Pos::new(2, 7));
        assert!(position_value(&b) > 0.9);
    }

    #[test]
    fn blocks_a_five() {
        // White to move; black threatens five at (7,7) only (blocked at 2,7).
        let b = board_with(
            Rule::Freestyle,
            &[(3, 7), (4, 7), (5, 7), (6, 7), (0, 0)],
            &[(2, 7), (9, 9), (10, 10), (12, 3)],
        );
        assert_eq!(b.side_to_move(), Color::White);
        assert_eq!(scored_moves(&b)[0].pos, Pos::new(7, 7));
    }

    #[test]
    fn makes_open_four_and_answers_open_three() {
        let b = board_with(
            Rule::Standard,
            &[(5, 7), (6, 7), (7, 7)],
            &[(5, 9), (7, 12), (12, 12)],
        );
        let best = scored_moves(&b)[0].pos;
        assert!(best == Pos::new(4, 7) || best == Pos::new(8, 7), "{best:?}");
        // The opponent (white) to move must answer black's open three.
        let b = board_with(
            Rule::Standard,
            &[(5, 7), (6, 7), (7, 7), (0, 14)],
            &[(5, 9), (12, 12), (0, 0)],
        );
        let best = scored_moves(&b)[0].pos;
        assert!(
            [
                Pos::new(4, 7),
                Pos::new(8, 7),
                Pos::new(3, 7),
                Pos::new(9, 7)
            ]
            .contains(&best),
            "{best:?}"
        );
    }

    #[test]
    fn a_threat_one_move_answers_is_a_tempo_not_a_loss() {
        let quiet_white = [(5, 9), (12, 12), (0, 0), (1, 13), (14, 0)];
        let open_three = board_with(
            Rule::Freestyle,
            &[(5, 7), (6, 7), (7, 7), (0, 14)],
            &quiet_white[..3],
        );
        let closed_four = board_with(
            Rule::Freestyle,
            &[(5, 7), (6, 7), (7, 7), (8, 7)],
            &[(4, 7), (5, 9), (12, 12)],
        );
        let two_threes = board_with(
            Rule::Freestyle,
            &[(5, 7), (6, 7), (7, 7), (10, 2), (10, 3), (10, 4)],
            &quiet_white,
        );
        let three_and_four = board_with(
            Rule::Freestyle,
            &[(5, 7), (6, 7), (7, 7), (10, 2), (10, 3), (10, 4), (10, 5)],
            &[(10, 1), (5, 9), (12, 12), (0, 0), (1, 13), (14, 0)],
        );
        for b in [&open_three, &closed_four, &two_threes, &three_and_four] {
            assert_eq!(b.side_to_move(), Color::White);
        }
        let v = |b: &Board| position_value(b);
        // Answered, each is a disadvantage (the opponent keeps the initiative), not a loss.
        for (b, what) in [
            (&open_three, "an open three"),
            (&closed_four, "a closed four"),
        ] {
            assert!((-0.6..-0.05).contains(&v(b)), "{what}: {}", v(b));
        }
        // One move cannot answer two threats: as lost as before.
        for (b, what) in [
            (&two_threes, "two open threes"),
            (&three_and_four, "a four and an open three"),
        ] {
            assert!(v(b) < -0.85, "{what}: {}", v(b));
        }
    }

    #[test]
    fn policy_is_a_distribution_on_legal_points() {
        let b = board_with(
            Rule::Renju,
            &[(7, 7), (7, 5), (5, 7), (6, 7)],
            &[(0, 0), (14, 14), (0, 14)],
        );
        let mut e = Evaluation::default();
        ClassicalEvaluator::evaluate_one(&b, &mut e);
        let sum: f32 = e.policy.iter().sum();
        assert!((sum - 1.0).abs() < 1e-4);
        for p in b.points() {
            if !b.is_legal(p) {
                assert_eq!(e.policy[b.dense_index(p)], 0.0);
            }
        }
    }
}
