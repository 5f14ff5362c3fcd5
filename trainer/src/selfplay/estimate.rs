//! The up-front estimate of an epoch's self-play time: the epoch's shape (`EpochShape`: games,
//! parallel games, leaves per step, simulations, board), a timed forward of its full batch
//! through the network that will play it (`time_forward`), and a warning naming a lighter profile
//! when the estimate runs to hours. The measurement lives here, beside the work it predicts;
//! `support::progress` only formats durations.

use std::time::{Duration, Instant};

use engine::eval::features;
use engine::eval::network::{Backend, NetEvaluator};

use super::SelfPlayConfig;
use super::status::expected_plies;
use crate::support::progress::duration_text;

/// An epoch estimated longer than this gets the warning.
pub const SLOW_EPOCH: Duration = Duration::from_secs(3600);

/// The self-play shape of an epoch, for the time estimate.
#[derive(Clone, Copy, Debug)]
pub struct EpochShape {
    pub games: usize,
    pub parallel_games: usize,
    /// Leaves one game contributes per step.
    pub leaves_per_game: usize,
    pub simulations: u32,
    pub board_size: usize,
}

impl EpochShape {
    /// The shape of `games` games played with `cfg`.
    pub fn of(cfg: &SelfPlayConfig, games: usize) -> EpochShape {
        EpochShape {
            games,
            parallel_games: cfg.parallel_games,
            leaves_per_game: cfg.batch_size_mcts,
            simulations: cfg.simulations,
            board_size: cfg.board_size,
        }
    }

    /// Leaves in one full step's forward.
    pub fn forward_batch(&self) -> usize {
        self.games.min(self.parallel_games).max(1) * self.leaves_per_game.max(1)
    }

    /// Forwards of an epoch's self-play: rounds of parallel games x plies x steps per move.
    pub fn forwards(&self) -> f64 {
        let rounds = self.games.div_ceil(self.parallel_games.max(1)) as f64;
        let steps_per_move =
            (self.simulations.max(1) as usize).div_ceil(self.leaves_per_game.max(1));
        rounds * expected_plies(self.board_size) * steps_per_move as f64
    }

    /// Self-play time of an epoch when one full-batch forward takes `forward`.
    pub fn estimate(&self, forward: Duration) -> Duration {
        Duration::from_secs_f64((self.forwards() * forward.as_secs_f64()).min(1e9))
    }
}

/// The warning for an epoch estimated at `estimate`, or None when it fits in `SLOW_EPOCH`.
pub fn slow_epoch_warning(
    estimate: Duration,
    forward: Duration,
    shape: &EpochShape,
) -> Option<String> {
    (estimate > SLOW_EPOCH).then(|| {
        format!(
            "self-play of one epoch will take about {} on this device ({:.0} forwards of {} positions at {:.2} s each); \
             for this machine try `--config trainer/presets.toml --profile train-fast` (small net, 9x9) \
             or `--profile train-proof` (tiny net, 9x9, CPU), or fewer --mcts-simulations / --selfplay-games",
            duration_text(estimate),
            shape.forwards(),
            shape.forward_batch(),
            forward.as_secs_f64()
        )
    })
}

/// Times a forward of `shape`'s batch through `net` (about a second at most): batches double
/// from 8 until one takes 0.3 s or the full batch is reached, and the last is scaled linearly.
pub fn time_forward<B: Backend + ?Sized>(
    net: &NetEvaluator<B>,
    shape: &EpochShape,
) -> anyhow::Result<Duration> {
    let n = shape.board_size;
    let full = shape.forward_batch();
    let run = |batch: usize| -> anyhow::Result<Duration> {
        let planes = vec![0.0f32; batch * features::PLANES * n * n];
        let t0 = Instant::now();
        net.forward(&planes, batch, n, n)
            .map_err(|e| anyhow::anyhow!("timing a forward: {e}"))?;
        Ok(t0.elapsed())
    };
    run(1)?; // warm-up: first-call allocation is not the steady cost
    let mut batch = 8.min(full);
    loop {
        let took = run(batch)?;
        if batch >= full || took >= Duration::from_millis(300) {
            return Ok(took.mul_f64(full as f64 / batch as f64));
        }
        batch = (batch * 2).min(full);
    }
}

/// Times the network and prints the slow-epoch warning when it applies (a failed timing only
/// skips the warning: the run itself reports forward errors).
pub fn warn_if_slow<B: Backend + ?Sized>(net: &NetEvaluator<B>, shape: &EpochShape) {
    let Ok(forward) = time_forward(net, shape) else {
        return;
    };
    let estimate = shape.estimate(forward);
    match slow_epoch_warning(estimate, forward, shape) {
        Some(w) => eprintln!("trainer: WARNING: {w}"),
        None => eprintln!(
            "trainer: self-play of one epoch estimated at {}",
            duration_text(estimate)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_depends_on_the_shape_and_the_forward_time() {
        let medium = EpochShape {
            games: 64,
            parallel_games: 32,
            leaves_per_game: 8,
            simulations: 100,
            board_size: 15,
        };
        // 2 rounds x 75 plies x 13 steps per move.
        assert_eq!(medium.forwards(), 1950.0);
        assert_eq!(medium.forward_batch(), 256);
        let slow = Duration::from_secs(2);
        let w = slow_epoch_warning(medium.estimate(slow), slow, &medium).expect("hours");
        assert!(w.contains("1h05m") && w.contains("train-fast"), "{w}");
        let tiny = EpochShape {
            games: 4,
            parallel_games: 4,
            leaves_per_game: 8,
            simulations: 16,
            board_size: 7,
        };
        let quick = Duration::from_millis(5);
        assert_eq!(slow_epoch_warning(tiny.estimate(quick), quick, &tiny), None);
    }
}
