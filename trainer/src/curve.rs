//! The learning curve across runs (`trainer curve RUN...`): each run's Elo against the classical
//! evaluator (its `eval_vs_classical` evaluations) as a function of the CPU-hours it had spent and
//! of the games it had played, bootstrap included, drawn side by side into one PNG so pure
//! self-play and a warm start can be compared.
//!
//! CPU-hours are the run's processes' own CPU time, from each record's `cpu_s` (every thread
//! counted, so work beside the run does not inflate it), and the time between processes (an
//! interrupted run and its `--resume auto` a day later) is not counted. Records without `cpu_s`
//! (written before it existed, or off Unix) count wall time since the previous record (for a
//! bootstrap that comes first, its own duration) times the cores the run was given: `threads`
//! (all cores when 0) or `parallel_workers`, whichever is more, from the folder's `settings.toml`.
//!
//! Depends on `config` (the run's settings) and plotters; reads `metrics.jsonl` records written
//! by `metrics`.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::config::Settings;

/// One evaluation against the classical evaluator, where the run stood when it was played.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub hours: f64,
    /// Games played by then: bootstrap and self-play.
    pub games: u64,
    pub elo: f64,
    /// The 95% error; 0 for a sweep, whose `elo` is its bound.
    pub error: f64,
}

/// One run's curve.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    pub label: String,
    pub points: Vec<Point>,
    /// Clean sweeps, which have no finite Elo, at their 95% bound: a loss of every game is "at
    /// most" it, a win of every game "at least".
    pub sweeps: Vec<Point>,
    /// Games played by the last record (bootstrap included).
    pub games: u64,
}

/// The curve of `text` (a metrics.jsonl) for a run given `cores` cores.
pub fn parse(label: &str, text: &str, cores: f64) -> Curve {
    let mut seconds = 0.0;
    // The previous record: its time, and its (process, CPU seconds) when it has them.
    let mut previous: Option<(f64, Option<(f64, f64)>)> = None;
    let (mut points, mut sweeps) = (Vec::new(), Vec::new());
    // Bootstrap games; self-play games as of the last epoch record, and since (an evaluation is
    // logged before its epoch's record).
    let (mut boot_games, mut selfplay_games, mut selfplay_since) = (0, 0, 0);
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(t) = v.get("time_s").and_then(|t| t.as_f64()) else {
            continue;
        };
        let kind = v.get("kind").and_then(|k| k.as_str());
        let cpu = v
            .get("process_start_s")
            .and_then(|p| p.as_f64())
            .zip(v.get("cpu_s").and_then(|c| c.as_f64()));
        seconds += match (cpu, previous) {
            (Some((process, cpu)), Some((_, Some((before, cpu_before))))) if process == before => {
                (cpu - cpu_before).max(0.0)
            }
            // A new process: all of its CPU time so far.
            (Some((_, cpu)), _) => cpu.max(0.0),
            (None, Some((t_before, _))) => (t - t_before).max(0.0) * cores,
            (None, None) if kind == Some("bootstrap") => {
                v.get("seconds").and_then(|s| s.as_f64()).unwrap_or(0.0) * cores
            }
            (None, None) => 0.0,
        };
        previous = Some((t, cpu));
        // Epoch records count the run's self-play games so far; bootstrap and self-play records
        // their own.
        match (kind, v.get("games").and_then(|g| g.as_u64())) {
            (Some("bootstrap"), Some(g)) => boot_games += g,
            (Some("selfplay"), Some(g)) => selfplay_since += g,
            (Some("epoch"), Some(g)) => (selfplay_games, selfplay_since) = (g, 0),
            _ => {}
        }
        let Some(m) = v.get("vs_classical").filter(|m| !m.is_null()) else {
            continue;
        };
        let (Some(elo), Some(err)) = (m["elo"].as_f64(), m["elo_error"].as_f64()) else {
            continue;
        };
        let count = |k: &str| m[k].as_u64().unwrap_or(0) as u32;
        let (w, d, l) = (count("wins"), count("draws"), count("losses"));
        let (lo, hi) = crate::elo::elo_bounds(w, d, l);
        let point = |elo, error| Point {
            hours: seconds / 3600.0,
            games: boot_games + selfplay_games + selfplay_since,
            elo,
            error,
        };
        match (w, d, l) {
            (0, 0, l) if l > 0 => sweeps.push(point(hi, 0.0)),
            (w, 0, 0) if w > 0 => sweeps.push(point(lo, 0.0)),
            _ if elo.is_finite() && err.is_finite() => points.push(point(elo, err)),
            _ => {}
        }
    }
    Curve {
        label: label.into(),
        points,
        sweeps,
        games: boot_games + selfplay_games + selfplay_since,
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
    let root = BitMapBackend::new(out, (1200, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "Elo vs the classical evaluator (equal visits, 95% bars; x: a 0-N sweep, Elo at most there)",
        ("sans-serif", 18),
    )?;
    let (by_hours, by_games) = root.split_horizontally(600);
    panel(&by_hours, curves, "CPU-hours", |p| p.hours, &|x| {
        format!("{x:.2}")
    })?;
    panel(
        &by_games,
        curves,
        "games played (bootstrap included)",
        |p| p.games as f64,
        &|x| format!("{x:.0}"),
    )?;
    root.present()?;
    Ok(())
}

/// One chart: every run's Elo against `x` of its evaluations.
fn panel(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    curves: &[Curve],
    x_desc: &str,
    x: impl Fn(&Point) -> f64 + Copy,
    x_format: &dyn Fn(&f64) -> String,
) -> Result<(), Box<dyn std::error::Error>> {
    let all = || curves.iter().flat_map(|c| c.points.iter().chain(&c.sweeps));
    let x1 = all().map(x).fold(0.0f64, f64::max).max(1e-3) * 1.05;
    let lo = all().map(|p| p.elo - p.error).fold(0.0f64, f64::min);
    let hi = all().map(|p| p.elo + p.error).fold(0.0f64, f64::max);
    let pad = (hi - lo).max(1.0) * 0.08;
    let (floor, ceiling) = (lo - pad, hi + pad);
    let mut chart = ChartBuilder::on(area)
        .margin(14)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..x1, floor..ceiling)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc("Elo")
        .x_label_formatter(x_format)
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 13))
        .draw()?;
    let colors = [BLUE, RED, GREEN, MAGENTA, BLACK];
    for (c, color) in curves.iter().zip(colors.iter().cycle()) {
        let color = *color;
        chart
            .draw_series(LineSeries::new(
                c.points.iter().map(|p| (x(p), p.elo)),
                color.stroke_width(2),
            ))?
            .label(format!("{} ({} games)", c.label, c.games))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        chart.draw_series(c.points.iter().map(|p| {
            ErrorBar::new_vertical(
                x(p),
                p.elo - p.error,
                p.elo,
                p.elo + p.error,
                color.filled(),
                8,
            )
        }))?;
        // A sweep: a cross at its 95% bound and a line towards where the Elo lies.
        chart.draw_series(c.sweeps.iter().map(|p| {
            let end = if p.elo < 0.0 { floor } else { ceiling };
            PathElement::new(vec![(x(p), p.elo), (x(p), end)], color.stroke_width(1))
        }))?;
        chart.draw_series(
            c.sweeps
                .iter()
                .map(|p| Cross::new((x(p), p.elo), 6, color.stroke_width(2))),
        )?;
    }
    chart
        .configure_series_labels()
        // Curves climb to the right, and sweeps lie along the bottom: the upper left is free.
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()?;
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
        let at = |p: &Point| (p.hours, p.elo, p.error);
        assert_eq!(
            c.points.iter().map(at).collect::<Vec<_>>(),
            [(2.0, -300.0, 120.0), (4.0, -100.0, 90.0)]
        );
        // The sweep is kept apart at its 95% bound, not at the -1200 placeholder.
        let (_, hi) = crate::elo::elo_bounds(0, 0, 20);
        assert_eq!(
            c.sweeps.iter().map(at).collect::<Vec<_>>(),
            [(4.0, hi, 0.0)]
        );
        assert_eq!(c.games, 228);
    }

    #[test]
    fn hours_are_the_processes_cpu_time_and_a_resume_gap_is_not_counted() {
        // A bootstrap process (900 CPU-s), a run process to epoch 2 (eval at 2,700 CPU-s of its
        // own), then a resume a day later (86,400 s of wall time not counted; it starts its own
        // CPU count again) with an eval 1,800 CPU-s in. Wall time beside other work (the run's
        // first process took 5,400 s of wall time for its 2,700 CPU-s) does not count either.
        let text = r#"{"kind":"bootstrap","games":10,"seconds":1000,"time_s":1000,"process_start_s":0,"cpu_s":900}
{"kind":"selfplay","games":64,"time_s":2000,"process_start_s":1001,"cpu_s":700}
{"kind":"epoch","games":64,"time_s":3000,"process_start_s":1001,"cpu_s":1200}
{"kind":"selfplay","games":64,"time_s":4000,"process_start_s":1001,"cpu_s":1700}
{"kind":"eval","epoch":2,"vs_classical":{"wins":5,"draws":0,"losses":15,"elo":-190.0,"elo_error":100.0},"time_s":6400,"process_start_s":1001,"cpu_s":2700}
{"kind":"epoch","games":128,"time_s":6401,"process_start_s":1001,"cpu_s":2700}
{"kind":"selfplay","games":64,"time_s":92800,"process_start_s":92700,"cpu_s":600}
{"kind":"eval","epoch":3,"vs_classical":{"wins":8,"draws":0,"losses":12,"elo":-70.0,"elo_error":90.0},"time_s":95000,"process_start_s":92700,"cpu_s":1800}"#;
        // Cores matter only for records without CPU time.
        let c = parse("resumed", text, 16.0);
        let hours = |s: f64| s / 3600.0;
        let at = |p: &Point| (p.hours, p.games, p.elo, p.error);
        assert_eq!(
            c.points.iter().map(at).collect::<Vec<_>>(),
            [
                (hours(900.0 + 2700.0), 10 + 128, -190.0, 100.0),
                (hours(900.0 + 2700.0 + 1800.0), 10 + 192, -70.0, 90.0)
            ]
        );
        assert_eq!(c.games, 202);
        // A run begun before records carried CPU time goes on counting from where it was.
        let mixed = r#"{"kind":"epoch","games":64,"time_s":1000}
{"kind":"eval","epoch":2,"vs_classical":{"wins":5,"draws":0,"losses":15,"elo":-190.0,"elo_error":100.0},"time_s":4600}
{"kind":"eval","epoch":4,"vs_classical":{"wins":8,"draws":0,"losses":12,"elo":-70.0,"elo_error":90.0},"time_s":500000,"process_start_s":490000,"cpu_s":3600}"#;
        let c = parse("mixed", mixed, 1.0);
        assert_eq!(c.points[0].hours, 1.0);
        assert_eq!(c.points[1].hours, 2.0);
    }
}
