//! The learning curve across runs (`trainer curve RUN...`): each run's Elo against the classical
//! evaluator (its `eval_vs_classical` evaluations) as a function of the CPU-hours it had spent,
//! bootstrap included, drawn into one PNG so pure self-play and a warm start can be compared.
//!
//! CPU-hours are wall time from the run's first metrics record (minus the bootstrap's own
//! duration, which its record carries) times the cores the run was given: `threads` (all cores
//! when 0) or `parallel_workers`, whichever is more, from the folder's `settings.toml`.
//!
//! Depends on `config` (the run's settings) and plotters; reads `metrics.jsonl` records written
//! by `metrics`.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::config::Settings;

/// One run's curve: (CPU-hours, Elo, 95% error) per evaluation against the classical evaluator.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    pub label: String,
    pub points: Vec<(f64, f64, f64)>,
    /// (CPU-hours, Elo bound) of clean sweeps, which have no finite Elo: a loss of every game
    /// is "at most" its 95% bound, a win of every game "at least".
    pub sweeps: Vec<(f64, f64)>,
    /// Self-play games by the last point (bootstrap games included).
    pub games: u64,
}

/// The curve of `text` (a metrics.jsonl) for a run given `cores` cores.
pub fn parse(label: &str, text: &str, cores: f64) -> Curve {
    let mut start: Option<f64> = None;
    let (mut points, mut sweeps, mut boot_games, mut selfplay_games) =
        (Vec::new(), Vec::new(), 0, 0);
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(t) = v.get("time_s").and_then(|t| t.as_f64()) else {
            continue;
        };
        let began = match v.get("kind").and_then(|k| k.as_str()) {
            Some("bootstrap") => t - v.get("seconds").and_then(|s| s.as_f64()).unwrap_or(0.0),
            _ => t,
        };
        start = Some(start.map_or(began, |s: f64| s.min(began)));
        // Epoch records count the run's self-play games so far; bootstrap records their own.
        match (
            v.get("kind").and_then(|k| k.as_str()),
            v.get("games").and_then(|g| g.as_u64()),
        ) {
            (Some("bootstrap"), Some(g)) => boot_games += g,
            (Some("epoch"), Some(g)) => selfplay_games = selfplay_games.max(g),
            _ => {}
        }
        let Some(m) = v.get("vs_classical").filter(|m| !m.is_null()) else {
            continue;
        };
        let (Some(elo), Some(err)) = (m["elo"].as_f64(), m["elo_error"].as_f64()) else {
            continue;
        };
        let hours = (t - start.unwrap_or(t)) * cores / 3600.0;
        let count = |k: &str| m[k].as_u64().unwrap_or(0) as u32;
        let (w, d, l) = (count("wins"), count("draws"), count("losses"));
        let (lo, hi) = crate::elo::elo_bounds(w, d, l);
        match (w, d, l) {
            (0, 0, l) if l > 0 => sweeps.push((hours, hi)),
            (w, 0, 0) if w > 0 => sweeps.push((hours, lo)),
            _ if elo.is_finite() && err.is_finite() => points.push((hours, elo, err)),
            _ => {}
        }
    }
    Curve {
        label: label.into(),
        points,
        sweeps,
        games: boot_games + selfplay_games,
    }
}

/// Cores a run was given, from its `settings.toml` (1 when it has none).
fn cores(dir: &Path) -> f64 {
    let text = std::fs::read_to_string(dir.join("settings.toml")).unwrap_or_default();
    let Ok(s) = toml::from_str::<Settings>(&text) else {
        return 1.0;
    };
    s.torch_threads().max(s.parallel_workers).max(1) as f64
}

/// Reads every run folder and draws their curves into the PNG `out`.
pub fn draw_runs(runs: &[PathBuf], out: &Path) -> anyhow::Result<Vec<Curve>> {
    let mut curves = Vec::new();
    for dir in runs {
        let path = dir.join("metrics.jsonl");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        let label = dir
            .file_name()
            .map_or("run".into(), |n| n.to_string_lossy().into_owned());
        let c = parse(&label, &text, cores(dir));
        if c.points.is_empty() && c.sweeps.is_empty() {
            anyhow::bail!(
                "{}: no evaluation against the classical evaluator (eval_vs_classical)",
                path.display()
            );
        }
        curves.push(c);
    }
    draw(&curves, out).map_err(|e| anyhow::anyhow!("drawing {}: {e}", out.display()))?;
    Ok(curves)
}

fn draw(curves: &[Curve], out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    crate::plot::register_font();
    let root = BitMapBackend::new(out, (900, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let all = || curves.iter().flat_map(|c| c.points.iter());
    let bounds = || curves.iter().flat_map(|c| c.sweeps.iter());
    let x1 = all()
        .map(|p| p.0)
        .chain(bounds().map(|p| p.0))
        .fold(0.0f64, f64::max)
        .max(1e-3)
        * 1.05;
    let lo = all()
        .map(|p| p.1 - p.2)
        .chain(bounds().map(|p| p.1))
        .fold(0.0f64, f64::min);
    let hi = all()
        .map(|p| p.1 + p.2)
        .chain(bounds().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let pad = (hi - lo).max(1.0) * 0.08;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Elo vs the classical evaluator (equal visits, 95% bars; x: a 0-N sweep, Elo at most there)",
            ("sans-serif", 18),
        )
        .margin(14)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..x1, (lo - pad)..(hi + pad))?;
    chart
        .configure_mesh()
        .x_desc("CPU-hours")
        .y_desc("Elo")
        .x_label_formatter(&|x| format!("{x:.2}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 13))
        .draw()?;
    let colors = [BLUE, RED, GREEN, MAGENTA, BLACK];
    for (c, color) in curves.iter().zip(colors.iter().cycle()) {
        let color = *color;
        chart
            .draw_series(LineSeries::new(
                c.points.iter().map(|p| (p.0, p.1)),
                color.stroke_width(2),
            ))?
            .label(format!("{} ({} games)", c.label, c.games))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart.draw_series(c.points.iter().map(|&(h, elo, err)| {
            ErrorBar::new_vertical(h, elo - err, elo, elo + err, color.filled(), 8)
        }))?;
        // A sweep: a cross at its 95% bound and a line towards where the Elo lies.
        let floor = lo - pad;
        let ceiling = hi + pad;
        chart.draw_series(c.sweeps.iter().map(|&(h, bound)| {
            let end = if bound < 0.0 { floor } else { ceiling };
            PathElement::new(vec![(h, bound), (h, end)], color.stroke_width(1))
        }))?;
        chart.draw_series(
            c.sweeps
                .iter()
                .map(|&(h, bound)| Cross::new((h, bound), 6, color.stroke_width(2))),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()?;
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hours_count_from_the_bootstrap_start_and_scale_with_cores() {
        let text = r#"{"kind":"bootstrap","games":100,"seconds":1800,"time_s":11800}
{"kind":"epoch","games":64,"time_s":12000}
{"kind":"eval","epoch":2,"vs_classical":{"wins":3,"draws":0,"losses":17,"elo":-300.0,"elo_error":120.0},"time_s":13600}
not json
{"kind":"eval","epoch":4,"vs_classical":null,"time_s":14000}
{"kind":"epoch","games":128,"time_s":15000}
{"kind":"eval","epoch":6,"vs_classical":{"wins":7,"draws":0,"losses":13,"elo":-100.0,"elo_error":90.0},"time_s":17200}
{"kind":"eval","epoch":8,"vs_classical":{"wins":0,"draws":0,"losses":20,"elo":-1200.0,"elo_error":0.0},"time_s":17200}"#;
        let c = parse("warm", text, 2.0);
        assert_eq!(c.points[..2], [(2.0, -300.0, 120.0), (4.0, -100.0, 90.0)]);
        // The sweep is kept apart at its 95% bound, not at the -1200 placeholder.
        let (_, hi) = crate::elo::elo_bounds(0, 0, 20);
        assert_eq!(c.points.len(), 2);
        assert_eq!(c.sweeps, vec![(4.0, hi)]);
        assert_eq!(c.games, 228);
    }
}
