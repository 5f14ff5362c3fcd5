//! What long trainer work shows while it runs: a `Progress` reporter that draws an indicatif bar
//! refreshed every second when stderr is a terminal, and otherwise prints a plain line every
//! `FIVEZERO_PROGRESS_SECS` seconds (default 15); the self-play and training status lines (rates
//! and an ETA from the measured speed); and the up-front estimate of an epoch's self-play time
//! from a timed forward, with a warning naming a lighter profile when it runs to hours.
//!
//! Callers own their reporter and pass it in (self-play takes a status callback): nothing global.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use engine::eval::features;
use engine::eval::network::{Backend, NetEvaluator};
use indicatif::{ProgressBar, ProgressStyle};

/// Environment variable: seconds between plain progress lines when stderr is not a terminal.
pub const INTERVAL_ENV: &str = "FIVEZERO_PROGRESS_SECS";
const DEFAULT_LINE_SECS: f64 = 15.0;
const BAR_REFRESH: Duration = Duration::from_secs(1);
/// An epoch estimated longer than this gets the warning.
pub const SLOW_EPOCH: Duration = Duration::from_secs(3600);

/// Reports one phase (self-play, training) as a bar on a terminal or as timed plain lines.
pub struct Progress {
    label: String,
    bar: Option<ProgressBar>,
    every: Duration,
    last: Instant,
}

impl Progress {
    /// A reporter for `total` units of `label`; a bar when stderr is a terminal.
    pub fn new(label: &str, total: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total);
            let template = format!("{{spinner}} {label} [{{bar:24}}] {{pos}}/{{len}} {{msg}}");
            b.set_style(
                ProgressStyle::with_template(&template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b.enable_steady_tick(BAR_REFRESH);
            b
        });
        let every = if bar.is_some() {
            BAR_REFRESH
        } else {
            line_interval()
        };
        Progress {
            label: label.to_string(),
            bar,
            every,
            last: Instant::now(),
        }
    }

    /// Records `done` units; `message` is built only when something will be shown.
    pub fn update(&mut self, done: u64, message: impl FnOnce() -> String) {
        if let Some(b) = &self.bar {
            b.set_position(done);
        }
        if self.last.elapsed() < self.every {
            return;
        }
        self.last = Instant::now();
        match &self.bar {
            Some(b) => b.set_message(message()),
            None => eprintln!("{}: {}", self.label, message()),
        }
    }

    /// Removes the bar (plain lines stay).
    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// Seconds between plain lines: `FIVEZERO_PROGRESS_SECS` when it is a number, 0 meaning every
/// update (tests count lines that way, independent of the machine's speed).
pub fn line_interval() -> Duration {
    std::env::var(INTERVAL_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e6)
        .map_or(
            Duration::from_secs_f64(DEFAULT_LINE_SECS),
            Duration::from_secs_f64,
        )
}

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

/// Time to do `left` more units at the rate of `done` units in `elapsed`; None without a rate.
pub fn eta(done: f64, left: f64, elapsed: Duration) -> Option<Duration> {
    if done <= 0.0 || elapsed.is_zero() {
        return None;
    }
    let secs = left.max(0.0) * elapsed.as_secs_f64() / done;
    secs.is_finite()
        .then(|| Duration::from_secs_f64(secs.min(1e9)))
}

/// `1h05m`, `3m07s`, `12s`.
pub fn duration_text(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

/// One training status line.
pub fn train_line(
    step: u64,
    steps: u64,
    samples: usize,
    elapsed: Duration,
    losses: (f64, f64),
) -> String {
    let secs = elapsed.as_secs_f64().max(1e-9);
    format!(
        "step {step}/{steps}, {:.0} samples/s, policy {:.3} value {:.3}, ETA {}",
        samples as f64 / secs,
        losses.0,
        losses.1,
        eta(step as f64, steps.saturating_sub(step) as f64, elapsed)
            .map_or("?".to_string(), duration_text)
    )
}

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
    pub fn of(cfg: &crate::selfplay::SelfPlayConfig, games: usize) -> EpochShape {
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
    fn durations_read_as_hours_minutes_seconds() {
        assert_eq!(duration_text(Duration::from_secs(12)), "12s");
        assert_eq!(duration_text(Duration::from_secs(187)), "3m07s");
        assert_eq!(duration_text(Duration::from_secs(3900)), "1h05m");
    }

    #[test]
    fn eta_follows_the_measured_rate() {
        assert_eq!(eta(0.0, 10.0, Duration::from_secs(5)), None);
        assert_eq!(
            eta(10.0, 30.0, Duration::from_secs(5)),
            Some(Duration::from_secs(15))
        );
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
        let t = train_line(25, 100, 25 * 256, Duration::from_secs(5), (1.5, 0.25));
        assert_eq!(
            t,
            "step 25/100, 1280 samples/s, policy 1.500 value 0.250, ETA 15s"
        );
    }

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
