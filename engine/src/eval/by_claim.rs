//! `ByClaim`: several networks as one evaluator, each playing the games it claims (its rules and
//! board sizes). The engine's embedded defaults are one network per rule; the search sees one
//! evaluator whichever rule a game has, and the brain's "does the network play this game?" is
//! asked once, of the set.
//!
//! Depends only on the `Evaluator` trait.

use std::sync::Arc;

use super::{Evaluation, Evaluator};
use crate::game::Board;

/// A claim of one member: the game it plays ("freestyle on 15x15, 20x20").
pub struct Member {
    pub evaluator: Arc<dyn Evaluator>,
    pub claim: String,
}

pub struct ByClaim {
    members: Vec<Member>,
}

impl ByClaim {
    /// # Panics
    /// With no member (a caller bug: there is nothing to evaluate with).
    pub fn new(members: Vec<Member>) -> ByClaim {
        assert!(!members.is_empty(), "ByClaim needs at least one evaluator");
        ByClaim { members }
    }

    /// The member that plays `board`'s game: the first that does not refuse it.
    fn claiming(&self, board: &Board) -> Option<&Member> {
        self.members
            .iter()
            .find(|m| m.evaluator.refuses(board).is_none())
    }

    /// "native:cpu32(4x32 step 28916) avx512vnni for freestyle on 15x15, 20x20; native:... for
    /// renju on 15x15".
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .members
            .iter()
            .map(|m| format!("{} for {}", m.evaluator.name(), m.claim))
            .collect();
        parts.join("; ")
    }
}

impl Evaluator for ByClaim {
    fn name(&self) -> String {
        let names: Vec<String> = self.members.iter().map(|m| m.evaluator.name()).collect();
        names.join(" + ")
    }

    /// The boards of one call come from one search, so one game: the member that plays the first
    /// board evaluates them all (the first member when none claims it; the brain does not give
    /// such a game to this evaluator).
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        let Some(first) = boards.first() else {
            out.clear();
            return;
        };
        let member = self.claiming(first).unwrap_or(&self.members[0]);
        member.evaluator.evaluate(boards, out);
    }

    fn preferred_batch(&self) -> usize {
        self.members
            .iter()
            .map(|m| m.evaluator.preferred_batch())
            .max()
            .unwrap_or(1)
    }

    fn model_id(&self) -> u64 {
        self.members.iter().fold(0x9E37_79B9_7F4A_7C15, |h, m| {
            (h ^ m.evaluator.model_id())
                .rotate_left(17)
                .wrapping_mul(0xBF58_476D_1CE4_E5B9)
        })
    }

    fn member_for(&self, board: &Board) -> Option<Arc<dyn Evaluator>> {
        self.claiming(board).map(|m| m.evaluator.clone())
    }

    fn refuses(&self, board: &Board) -> Option<String> {
        if self.claiming(board).is_some() {
            return None;
        }
        let claims: Vec<&str> = self.members.iter().map(|m| m.claim.as_str()).collect();
        Some(format!(
            "the networks play {}, not {} on {}x{}",
            claims.join("; "),
            board.rule(),
            board.width(),
            board.height()
        ))
    }

    /// The members share one cache (`slot::load_embedded`) and each reports all of it, so the
    /// first member's figures are the set's.
    fn cache_stats(&self) -> Option<(u64, u64)> {
        self.members[0].evaluator.cache_stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Pos, Rule};

    /// Plays only `rule`, and answers every position with `value`.
    struct Fixed {
        rule: Rule,
        value: f32,
        id: u64,
    }

    impl Evaluator for Fixed {
        fn name(&self) -> String {
            format!("fixed {}", self.rule)
        }
        fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
            super::super::UniformEvaluator.evaluate(boards, out);
            out.iter_mut().for_each(|e| e.value = self.value);
        }
        fn model_id(&self) -> u64 {
            self.id
        }
        fn refuses(&self, board: &Board) -> Option<String> {
            (board.rule() != self.rule).then(|| format!("plays {}", self.rule))
        }
    }

    fn set() -> ByClaim {
        let member = |rule, value, id| Member {
            evaluator: Arc::new(Fixed { rule, value, id }) as Arc<dyn Evaluator>,
            claim: format!("{rule} on 15x15"),
        };
        ByClaim::new(vec![
            member(Rule::Freestyle, 0.25, 1),
            member(Rule::Renju, -0.5, 2),
        ])
    }

    fn board(rule: Rule) -> Board {
        let mut b = Board::new(15, 15, rule).unwrap();
        b.play(Pos::new(7, 7)).unwrap();
        b
    }

    #[test]
    fn each_game_is_evaluated_by_the_network_that_claims_it() {
        let set = set();
        let mut out = Vec::new();
        let (free, renju) = (board(Rule::Freestyle), board(Rule::Renju));
        set.evaluate(&[&free, &free], &mut out);
        assert_eq!(
            out.iter().map(|e| e.value).collect::<Vec<_>>(),
            [0.25, 0.25]
        );
        set.evaluate(&[&renju], &mut out);
        assert_eq!(out[0].value, -0.5);
        assert!(set.refuses(&free).is_none() && set.refuses(&renju).is_none());
        assert_eq!(set.member_for(&renju).map(|m| m.model_id()), Some(2));
        assert!(set.member_for(&board(Rule::Standard)).is_none());
        set.evaluate(&[], &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn a_game_no_network_claims_is_refused_naming_every_claim() {
        let why = set()
            .refuses(&board(Rule::Standard))
            .expect("standard is refused");
        assert_eq!(
            why,
            "the networks play freestyle on 15x15; renju on 15x15, not standard on 15x15"
        );
    }

    #[test]
    fn the_identity_changes_with_any_member() {
        let a = set();
        let b = ByClaim::new(vec![Member {
            evaluator: Arc::new(Fixed {
                rule: Rule::Freestyle,
                value: 0.0,
                id: 1,
            }),
            claim: String::new(),
        }]);
        assert_ne!(a.model_id(), b.model_id());
        assert_eq!(a.model_id(), set().model_id());
    }
}
