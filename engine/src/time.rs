//! The time manager: turns the protocol's limits (`timeout_turn`, `timeout_match`, `time_left`)
//! into a per-move budget with a safety margin, so a loaded machine still answers in time.
//!
//! Managers allow 1000 ms beyond min(turn limit, time left) (GomocupJudge, c-gomoku-cli; the
//! latter sends YXSTOP at half of it). That tolerance is left whole to the scheduling delays of a
//! loaded machine (replies 600-900 ms past the engine's own stop were seen at load average 7); the
//! engine itself keeps back a small reserve of the turn (see `budget`).

use std::time::Duration;

/// Limits as the manager sent them, in milliseconds (`None` = not sent / unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeLimits {
    /// Per-move limit; 0 means "move as fast as possible".
    pub timeout_turn_ms: Option<i64>,
    /// Whole-game limit; 0 means unlimited.
    pub timeout_match_ms: Option<i64>,
    /// Time left in the game (sent before every move); may be negative.
    pub time_left_ms: Option<i64>,
}

impl Default for TimeLimits {
    fn default() -> Self {
        // Piskvork's defaults when nothing is sent: 30 s a move, 180 s a game.
        TimeLimits {
            timeout_turn_ms: Some(30_000),
            timeout_match_ms: Some(180_000),
            time_left_ms: None,
        }
    }
}

/// What one move may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveBudget {
    /// Aim to finish by this.
    pub soft: Duration,
    /// Never think past this.
    pub hard: Duration,
}

/// Moves a game is still expected to last, for sharing the match clock.
const EXPECTED_MOVES_LEFT_MIN: i64 = 12;
const EXPECTED_MOVES_LEFT_MAX: i64 = 40;
/// Always kept back for reading input, writing the reply and process scheduling.
const SAFETY_MS: i64 = 60;
/// The turn's reserve: a twentieth of it, at least this (short turns) ...
const TURN_RESERVE_MIN_MS: i64 = SAFETY_MS + 20;
/// ... and at most this: the search's last batch and the reply; the managers' tolerance covers
/// the rest. (A fifth, as before, left 200 ms of every 1 s turn unused: replies under
/// c-gomoku-cli-style managers came 12 ms past the engine's own stop at the slowest.)
const TURN_RESERVE_MAX_MS: i64 = 250;
const TURN_RESERVE_SHARE: i64 = 20;
const UNLIMITED: i64 = 2_147_483_647;

impl TimeLimits {
    /// The budget for a move when `stones` stones are on a board of `area` points.
    pub fn budget(&self, stones: usize, area: usize) -> MoveBudget {
        let mut hard = i64::MAX;
        if let Some(turn) = self.timeout_turn_ms {
            if turn <= 0 {
                return MoveBudget {
                    soft: Duration::ZERO,
                    hard: Duration::from_millis(10),
                };
            }
            // A twentieth of the turn (80-250 ms) back: a 1 s turn keeps 80 ms, a 30 s turn 250 ms.
            hard = hard.min(
                turn - (turn / TURN_RESERVE_SHARE).clamp(TURN_RESERVE_MIN_MS, TURN_RESERVE_MAX_MS),
            );
        }
        let match_left = match (self.time_left_ms, self.timeout_match_ms) {
            (Some(left), _) if left < UNLIMITED => Some(left),
            (None, Some(total)) if total > 0 && total < UNLIMITED => Some(total),
            _ => None,
        };
        let mut soft = hard;
        if let Some(left) = match_left {
            let empties = area.saturating_sub(stones) as i64;
            let moves_left = (empties / 4).clamp(EXPECTED_MOVES_LEFT_MIN, EXPECTED_MOVES_LEFT_MAX);
            let share = (left - SAFETY_MS) / moves_left;
            // Never spend more than a third of what is left on one move.
            hard = hard.min((left - SAFETY_MS) / 3);
            soft = soft.min(share);
        }
        let hard = hard.clamp(5, 3_600_000);
        let soft = soft.clamp(1, hard);
        MoveBudget {
            soft: Duration::from_millis(soft as u64),
            hard: Duration::from_millis(hard as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_limit_bounds_the_hard_limit() {
        let t = TimeLimits {
            timeout_turn_ms: Some(1000),
            timeout_match_ms: Some(0),
            time_left_ms: None,
        };
        let b = t.budget(10, 225);
        assert_eq!(b.hard, Duration::from_millis(920));
        assert!(b.soft <= b.hard);
    }

    #[test]
    fn long_turns_are_spent_but_for_a_small_reserve() {
        let t = TimeLimits {
            timeout_turn_ms: Some(30_000),
            timeout_match_ms: Some(0),
            time_left_ms: None,
        };
        assert_eq!(t.budget(10, 225).hard, Duration::from_millis(30_000 - 250));
        let t = TimeLimits {
            timeout_turn_ms: Some(300),
            timeout_match_ms: Some(0),
            time_left_ms: None,
        };
        assert_eq!(t.budget(10, 225).hard, Duration::from_millis(300 - 80));
        // The match clock still caps it: a third of what is left.
        let t = TimeLimits {
            timeout_turn_ms: Some(30_000),
            timeout_match_ms: Some(60_000),
            time_left_ms: Some(9_060),
        };
        assert_eq!(t.budget(10, 225).hard, Duration::from_millis(3_000));
    }

    #[test]
    fn match_clock_is_shared() {
        let t = TimeLimits {
            timeout_turn_ms: Some(30_000),
            timeout_match_ms: Some(30_000),
            time_left_ms: Some(6_000),
        };
        let b = t.budget(20, 225);
        assert!(b.soft <= Duration::from_millis(500), "{b:?}");
        assert!(b.hard <= Duration::from_millis(2_000));
    }

    #[test]
    fn zero_or_negative_time_still_answers() {
        let t = TimeLimits {
            timeout_turn_ms: Some(0),
            timeout_match_ms: None,
            time_left_ms: None,
        };
        assert!(t.budget(0, 225).hard <= Duration::from_millis(10));
        let t = TimeLimits {
            timeout_turn_ms: Some(5000),
            timeout_match_ms: Some(100_000),
            time_left_ms: Some(-50),
        };
        let b = t.budget(0, 225);
        assert!(b.hard <= Duration::from_millis(5));
    }
}
