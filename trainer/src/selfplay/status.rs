//! Where a self-play batch stands after each step (`SelfPlayStatus`: games done and running,
//! moves, evaluated positions), its ETA from the measured move rate and its status line. Self-play
//! and `bootstrap` fill it in; a `support::progress::Progress` shows the line.

use std::time::Duration;

use crate::support::progress::{duration_text, eta};

/// Where a self-play batch stands after a step.
#[derive(Clone, Copy, Debug, Default)]
pub struct SelfPlayStatus {
    pub games_total: usize,
    pub games_done: usize,
    pub games_running: usize,
    /// Moves played in all games, finished or not.
    pub moves: usize,
    /// Moves of the finished games (the positions they store).
    pub finished_moves: usize,
    /// Positions the network evaluated (search leaves).
    pub leaves: usize,
    pub elapsed: Duration,
}

/// Plies a game is expected to last before any has finished: a third of the board.
pub fn expected_plies(board_size: usize) -> f64 {
    (board_size * board_size / 3).max(1) as f64
}

impl SelfPlayStatus {
    /// Time left at the measured move rate, for games as long as the finished ones (or
    /// `guess_plies` while none has finished). None before the first move.
    pub fn eta(&self, guess_plies: f64) -> Option<Duration> {
        let plies = if self.games_done > 0 {
            self.finished_moves as f64 / self.games_done as f64
        } else {
            guess_plies
        };
        let left = (self.games_total as f64 * plies - self.moves as f64).max(0.0);
        eta(self.moves as f64, left, self.elapsed)
    }

    /// One status line: games, rates, ETA.
    pub fn line(&self, guess_plies: f64) -> String {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        format!(
            "{}/{} games done, {} playing, {} moves ({:.1} moves/s), {:.0} positions/s evaluated, elapsed {}, ETA {}",
            self.games_done,
            self.games_total,
            self.games_running,
            self.moves,
            self.moves as f64 / secs,
            self.leaves as f64 / secs,
            duration_text(self.elapsed),
            self.eta(guess_plies).map_or("?".to_string(), duration_text)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eta_follows_the_measured_move_rate() {
        let s = SelfPlayStatus {
            games_total: 4,
            games_done: 0,
            games_running: 4,
            moves: 20,
            finished_moves: 0,
            leaves: 400,
            elapsed: Duration::from_secs(10),
        };
        // No game over yet: 4 games x 25 guessed plies, 80 moves left at 2 moves/s.
        assert_eq!(s.eta(25.0), Some(Duration::from_secs(40)));
        // Two games of 10 plies over: 40 moves in all, 20 left.
        let s = SelfPlayStatus {
            games_done: 2,
            finished_moves: 20,
            ..s
        };
        assert_eq!(s.eta(25.0), Some(Duration::from_secs(10)));
        let line = s.line(25.0);
        assert!(
            line.contains("2/4 games done") && line.contains("2.0 moves/s"),
            "{line}"
        );
        assert!(
            line.contains("40 positions/s") && line.contains("ETA 10s"),
            "{line}"
        );
    }
}
