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
//! Next to those equal-visit evaluations, each run's equal-time results (`equal-time.jsonl`,
//! written by `trainer equal-time`: the engine on the run's export of an epoch against the engine
//! on the classical evaluator, at equal time per move) are drawn dashed, each at where the run
//! stood when it wrote that epoch's export.
//!
//! Depends on `config::RunFolder` (the run's settings and files), `equal_time` (its records),
//! `support::plot` and plotters; reads `metrics.jsonl` records written by `support::metrics`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::config::RunFolder;
use crate::support::plot::{DrawResult, EloChart as Chart};

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
    /// Its evaluations at equal visits (the training run's own).
    pub points: Vec<Point>,
    /// Clean sweeps, which have no finite Elo, at their 95% bound: a loss of every game is "at
    /// most" it, a win of every game "at least".
    pub sweeps: Vec<Point>,
    /// Its equal-time results, one series per time per move.
    pub equal_time: Vec<TimeSeries>,
    /// Games played by the last record (bootstrap included).
    pub games: u64,
    /// Where the run stood (CPU-hours, games) when it wrote each epoch's export.
    pub epochs: BTreeMap<u64, (f64, u64)>,
}

/// Equal-time results at one time per move.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeSeries {
    pub turn_ms: u64,
    pub points: Vec<Point>,
    pub sweeps: Vec<Point>,
}

/// A match result at where the run stood, onto `points`, or onto `sweeps` at its 95% bound when
/// it has no finite Elo.
fn place(
    (points, sweeps): (&mut Vec<Point>, &mut Vec<Point>),
    (w, d, l): (u32, u32, u32),
    (elo, error): (f64, f64),
    (hours, games): (f64, u64),
) {
    let (lo, hi) = stats::wilson_bounds(&(w, d, l).into());
    let point = |elo, error| Point {
        hours,
        games,
        elo,
        error,
    };
    match (w, d, l) {
        (0, 0, l) if l > 0 => sweeps.push(point(hi, 0.0)),
        (w, 0, 0) if w > 0 => sweeps.push(point(lo, 0.0)),
        _ if elo.is_finite() && error.is_finite() => points.push(point(elo, error)),
        _ => {}
    }
}

impl Curve {
    /// Adds a run's equal-time records, each at its epoch's place; records of the same epoch and
    /// time per move (a rerun with more games or other openings) are one point of all their
    /// games. A record of an epoch the metrics do not reach is left out: there is nowhere to
    /// draw it.
    pub fn add_equal_time(&mut self, records: &[crate::matches::equal_time::Record]) {
        let mut summed: BTreeMap<(u64, u64), (u32, u32, u32)> = BTreeMap::new();
        for r in records {
            let wdl = summed.entry((r.turn_ms, r.epoch)).or_default();
            *wdl = (wdl.0 + r.wins, wdl.1 + r.draws, wdl.2 + r.losses);
        }
        for ((turn_ms, epoch), (wins, draws, losses)) in summed {
            let Some(&at) = self.epochs.get(&epoch) else {
                continue;
            };
            let i = match self.equal_time.iter().position(|t| t.turn_ms == turn_ms) {
                Some(i) => i,
                None => {
                    self.equal_time.push(TimeSeries {
                        turn_ms,
                        points: Vec::new(),
                        sweeps: Vec::new(),
                    });
                    self.equal_time.len() - 1
                }
            };
            let t = &mut self.equal_time[i];
            place(
                (&mut t.points, &mut t.sweeps),
                (wins, draws, losses),
                stats::capped_elo(&(wins, draws, losses).into()),
                at,
            );
        }
        for t in &mut self.equal_time {
            t.points.sort_by(|a, b| a.hours.total_cmp(&b.hours));
        }
        self.equal_time.sort_by_key(|t| t.turn_ms);
    }
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
    let mut epochs = BTreeMap::new();
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
        // An epoch record comes with its export, and a warm start's with epoch 0's.
        let epoch = match kind {
            Some("epoch") => v.get("epoch").and_then(|e| e.as_u64()),
            Some("warm_start") => Some(0),
            _ => None,
        };
        if let Some(e) = epoch {
            let games = boot_games + selfplay_games + selfplay_since;
            epochs.insert(e, (seconds / 3600.0, games));
        }
        let Some(m) = v.get("vs_classical").filter(|m| !m.is_null()) else {
            continue;
        };
        let (Some(elo), Some(err)) = (m["elo"].as_f64(), m["elo_error"].as_f64()) else {
            continue;
        };
        let count = |k: &str| m[k].as_u64().unwrap_or(0) as u32;
        place(
            (&mut points, &mut sweeps),
            (count("wins"), count("draws"), count("losses")),
            (elo, err),
            (
                seconds / 3600.0,
                boot_games + selfplay_games + selfplay_since,
            ),
        );
    }
    Curve {
        label: label.into(),
        points,
        sweeps,
        equal_time: Vec::new(),
        games: boot_games + selfplay_games + selfplay_since,
        epochs,
    }
}

/// Cores a run was given, from its `settings.toml`: the defaults' for a folder from before the
/// file existed, 1 when the file does not read.
fn cores(run: &RunFolder) -> f64 {
    let s = match run.settings() {
        Ok(s) => s.unwrap_or_default(),
        Err(_) => return 1.0,
    };
    s.torch_threads().max(s.parallel_workers).max(1) as f64
}

/// Reads every run folder and draws their curves into the PNG `out`.
pub fn draw_runs(runs: &[PathBuf], out: &Path) -> anyhow::Result<Vec<Curve>> {
    let mut curves = Vec::new();
    for dir in runs {
        let run = RunFolder::new(dir);
        let path = run.metrics_path();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
        let mut c = parse(&run.name(), &text, cores(&run));
        c.add_equal_time(&crate::matches::equal_time::read(dir));
        if c.points.is_empty() && c.sweeps.is_empty() && c.equal_time.is_empty() {
            anyhow::bail!(
                "{}: no evaluation against the classical evaluator (eval_vs_classical) and no {}",
                path.display(),
                crate::matches::equal_time::FILE
            );
        }
        curves.push(c);
    }
    draw(&curves, out).map_err(|e| anyhow::anyhow!("drawing {}: {e}", out.display()))?;
    Ok(curves)
}

fn draw(curves: &[Curve], out: &Path) -> DrawResult<()> {
    crate::support::plot::register_font();
    let root = BitMapBackend::new(out, (1200, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "Elo vs the classical evaluator: solid at equal visits, dashed at equal time per move \
         (95% bars; x: a 0-N sweep, Elo at most there)",
        ("sans-serif", 17),
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
) -> DrawResult<()> {
    let all = || {
        curves.iter().flat_map(|c| {
            let timed = c
                .equal_time
                .iter()
                .flat_map(|t| t.points.iter().chain(&t.sweeps));
            c.points.iter().chain(&c.sweeps).chain(timed)
        })
    };
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
        let label = format!("{} ({} games), equal visits", c.label, c.games);
        series(&mut chart, (&c.points, &c.sweeps), *color, false, label, x)?;
        for t in &c.equal_time {
            let label = format!("{}, {} ms/move", c.label, t.turn_ms);
            series(&mut chart, (&t.points, &t.sweeps), *color, true, label, x)?;
        }
    }
    crate::support::plot::legend(&mut chart)
}

/// One series: a line through its points (dashed when `dashed`) with their 95% bars, and each
/// clean sweep as a cross at its bound with a line towards where the Elo lies.
fn series(
    chart: &mut Chart,
    (points, sweeps): (&[Point], &[Point]),
    color: RGBColor,
    dashed: bool,
    label: String,
    x: impl Fn(&Point) -> f64 + Copy,
) -> DrawResult<()> {
    let (floor, ceiling) = (chart.y_range().start, chart.y_range().end);
    let line = points.iter().map(|p| (x(p), p.elo));
    let style = color.stroke_width(2);
    let drawn = if dashed {
        chart.draw_series(DashedLineSeries::new(line, 7, 5, style))?
    } else {
        chart.draw_series(LineSeries::new(line, style))?
    };
    // The legend's sample: two strokes that meet, or a dash and the start of the next.
    let gap = if dashed { 12 } else { 7 };
    drawn.label(label).legend(move |p| {
        EmptyElement::at(p)
            + PathElement::new(vec![(0, 0), (7, 0)], style)
            + PathElement::new(vec![(gap, 0), (18, 0)], style)
    });
    chart.draw_series(points.iter().map(|p| {
        ErrorBar::new_vertical(
            x(p),
            p.elo - p.error,
            p.elo,
            p.elo + p.error,
            color.filled(),
            8,
        )
    }))?;
    chart.draw_series(sweeps.iter().map(|p| {
        let end = if p.elo < 0.0 { floor } else { ceiling };
        PathElement::new(vec![(x(p), p.elo), (x(p), end)], color.stroke_width(1))
    }))?;
    chart.draw_series(
        sweeps
            .iter()
            .map(|p| Cross::new((x(p), p.elo), 6, color.stroke_width(2))),
    )?;
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
        let (_, hi) = stats::wilson_bounds(&(0, 0, 20).into());
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

    #[test]
    fn equal_time_results_sit_where_their_epoch_was_exported() {
        // A bootstrap (900 CPU-s, 10 games), the warm start's epoch 0 (100 CPU-s of a new
        // process), epoch 1 (900 more) and epoch 2 (1,700 more: one CPU-hour in all).
        let text = r#"{"kind":"bootstrap","games":10,"seconds":950,"time_s":1000,"process_start_s":0,"cpu_s":900}
{"kind":"warm_start","games":10,"time_s":1200,"process_start_s":1100,"cpu_s":100}
{"kind":"epoch","epoch":1,"games":64,"time_s":2000,"process_start_s":1100,"cpu_s":1000}
{"kind":"epoch","epoch":2,"games":128,"time_s":4000,"process_start_s":1100,"cpu_s":2700}"#;
        let mut c = parse("warm", text, 1.0);
        assert_eq!(c.epochs[&0], (1000.0 / 3600.0, 10));
        assert_eq!(c.epochs[&2], (1.0, 138));
        let record = |epoch, turn_ms, (wins, draws, losses)| crate::matches::equal_time::Record {
            epoch,
            model: format!("models/model-{epoch:06}.onnx"),
            turn_ms,
            match_ms: turn_ms * 60,
            wins,
            draws,
            losses,
            forfeits: 0,
            openings: "o.txt".into(),
        };
        c.add_equal_time(&[
            record(2, 1000, (9, 2, 9)),
            record(0, 1000, (2, 0, 18)),
            record(2, 250, (0, 0, 20)),
            // No export record of epoch 5 in the metrics: nowhere to draw it.
            record(5, 1000, (10, 0, 10)),
            // A second match of epoch 0 at 1 s/move: one point of all 40 games.
            record(0, 1000, (3, 1, 16)),
        ]);
        let at = |p: &Point| (p.hours, p.games, p.elo, p.error);
        let turns: Vec<u64> = c.equal_time.iter().map(|t| t.turn_ms).collect();
        assert_eq!(turns, [250, 1000]);
        let (_, hi) = stats::wilson_bounds(&(0, 0, 20).into());
        assert!(c.equal_time[0].points.is_empty());
        assert_eq!(at(&c.equal_time[0].sweeps[0]), (1.0, 138, hi, 0.0));
        let (e0, err0) = stats::capped_elo(&(5, 1, 34).into());
        assert_eq!(
            c.equal_time[1].points.iter().map(at).collect::<Vec<_>>(),
            [
                (1000.0 / 3600.0, 10, e0, err0),
                (1.0, 138, 0.0, stats::capped_elo(&(9, 2, 9).into()).1)
            ]
        );
        // The equal-visit evaluations are untouched (this run had none).
        assert!(c.points.is_empty() && c.sweeps.is_empty());
    }
}
