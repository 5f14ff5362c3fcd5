//! What long trainer work shows while it runs: a `Progress` reporter that draws an indicatif bar
//! refreshed every second when stderr is a terminal, and otherwise prints a plain line every
//! `FIVEZERO_PROGRESS_SECS` seconds (default 15); an ETA from the measured rate, durations in
//! words, and the training status line. The self-play status line is `selfplay::status`'s, the
//! up-front epoch estimate `selfplay::estimate`'s: this module reports, it measures nothing.
//!
//! Callers own their reporter and pass it in (self-play takes a status callback): nothing global.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Environment variable: seconds between plain progress lines when stderr is not a terminal.
pub const INTERVAL_ENV: &str = "FIVEZERO_PROGRESS_SECS";
const DEFAULT_LINE_SECS: f64 = 15.0;
const BAR_REFRESH: Duration = Duration::from_secs(1);

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
        let t = train_line(25, 100, 25 * 256, Duration::from_secs(5), (1.5, 0.25));
        assert_eq!(
            t,
            "step 25/100, 1280 samples/s, policy 1.500 value 0.250, ETA 15s"
        );
    }
}
