//! The training plot: `<checkpoint-dir>/training.png` drawn from `metrics.jsonl` after every epoch
//! (and by `trainer plot`): policy and value loss over training steps on top, the evaluation Elo
//! below (the best network's cumulative rating, and each epoch's match against the best and
//! against the uniform evaluator with 95% error bars).
//!
//! Text is rendered with a font embedded in the binary (no system fonts needed on a bare server).
//! Lines of the metrics file that do not parse are skipped (a run killed mid-write leaves one).
//! The PNG is written to a temporary name and renamed, so a reader never sees half a file.
//!
//! Depends on plotters, serde_json and the metrics file's record kinds (`metrics`).

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::FontStyle;

/// What the plot shows, read from a metrics file.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Series {
    /// (training step, policy loss, value loss) per logged step, or per epoch when steps were
    /// not logged.
    pub losses: Vec<(f64, f64, f64)>,
    /// (epoch, cumulative Elo of the best network).
    pub best_elo: Vec<(f64, f64)>,
    /// (epoch, Elo, 95% error) of the epoch's network against the previous best.
    pub vs_best: Vec<(f64, f64, f64)>,
    /// (epoch, Elo, 95% error) against the uniform evaluator at equal visits.
    pub vs_uniform: Vec<(f64, f64, f64)>,
    /// (epoch, Elo, 95% error) against the classical evaluator at equal visits.
    pub vs_classical: Vec<(f64, f64, f64)>,
}

fn num(v: &serde_json::Value, key: &str) -> Option<f64> {
    v.get(key)?.as_f64().filter(|x| x.is_finite())
}

fn elo_point(epoch: f64, m: &serde_json::Value) -> Option<(f64, f64, f64)> {
    Some((epoch, num(m, "elo")?, num(m, "elo_error").unwrap_or(0.0)))
}

impl Series {
    /// Reads `metrics.jsonl` text; unparsable lines are skipped.
    pub fn parse(text: &str) -> Series {
        let mut s = Series::default();
        let mut epoch_losses = Vec::new();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            match v.get("kind").and_then(|k| k.as_str()) {
                Some("step") => {
                    if let (Some(step), Some(p), Some(val)) = (
                        num(&v, "step"),
                        num(&v, "policy_loss"),
                        num(&v, "value_loss"),
                    ) {
                        s.losses.push((step, p, val));
                    }
                }
                Some("epoch") => {
                    if let (Some(step), Some(p), Some(val)) = (
                        num(&v, "step"),
                        num(&v, "policy_loss"),
                        num(&v, "value_loss"),
                    ) {
                        epoch_losses.push((step, p, val));
                    }
                }
                Some("eval") => {
                    let Some(epoch) = num(&v, "epoch") else {
                        continue;
                    };
                    if let Some(e) = num(&v, "best_elo") {
                        s.best_elo.push((epoch, e));
                    }
                    if let Some(p) = v.get("vs_best").and_then(|m| elo_point(epoch, m)) {
                        s.vs_best.push(p);
                    }
                    if let Some(p) = v.get("vs_uniform").and_then(|m| elo_point(epoch, m)) {
                        s.vs_uniform.push(p);
                    }
                    if let Some(p) = v.get("vs_classical").and_then(|m| elo_point(epoch, m)) {
                        s.vs_classical.push(p);
                    }
                }
                _ => {}
            }
        }
        if s.losses.is_empty() {
            s.losses = epoch_losses;
        }
        s
    }

    pub fn is_empty(&self) -> bool {
        self.losses.is_empty()
            && self.best_elo.is_empty()
            && self.vs_best.is_empty()
            && self.vs_uniform.is_empty()
            && self.vs_classical.is_empty()
    }
}

/// The embedded font, registered once for plotters' "sans-serif" family.
pub(crate) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is a constant of the binary; a failure here would be a build defect, and the
        // plot then simply has no text (plotters skips glyphs it cannot draw).
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            epaint_default_fonts::HACK_REGULAR,
        );
    });
}

fn range(values: impl Iterator<Item = f64>, pad: f64) -> (f64, f64) {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    let span = (hi - lo).max(1e-6);
    (lo - span * pad, hi + span * pad)
}

pub(crate) type DrawResult<T> = Result<T, Box<dyn std::error::Error>>;

fn draw(series: &Series, path: &Path, title: &str) -> DrawResult<()> {
    register_font();
    let root = BitMapBackend::new(path, (1000, 760)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 22))?;
    let (top, bottom) = root.split_vertically(360);
    draw_losses(&top, series)?;
    draw_elo(&bottom, series)?;
    root.present()?;
    Ok(())
}

/// Policy and value loss over training steps.
fn draw_losses(top: &DrawingArea<BitMapBackend<'_>, Shift>, series: &Series) -> DrawResult<()> {
    let (x0, x1) = range(series.losses.iter().map(|l| l.0), 0.0);
    let (y0, y1) = range(series.losses.iter().flat_map(|l| [l.1, l.2]), 0.05);
    let mut chart = ChartBuilder::on(top)
        .caption("loss", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(56)
        .build_cartesian_2d(x0..x1.max(x0 + 1.0), y0.min(0.0)..y1)?;
    chart
        .configure_mesh()
        .x_desc("training step")
        .y_desc("loss")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.2}"))
        .label_style(("sans-serif", 13))
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            series.losses.iter().map(|l| (l.0, l.1)),
            BLUE.stroke_width(2),
        ))?
        .label("policy (cross-entropy)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLUE.stroke_width(2)));
    chart
        .draw_series(LineSeries::new(
            series.losses.iter().map(|l| (l.0, l.2)),
            RED.stroke_width(2),
        ))?
        .label("value (MSE)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()?;
    Ok(())
}

/// Evaluation Elo over epochs, with 95% error bars.
fn draw_elo(bottom: &DrawingArea<BitMapBackend<'_>, Shift>, series: &Series) -> DrawResult<()> {
    let matches = [&series.vs_best, &series.vs_uniform, &series.vs_classical];
    let epochs = series
        .best_elo
        .iter()
        .map(|p| p.0)
        .chain(matches.iter().flat_map(|m| m.iter().map(|p| p.0)));
    let (e0, e1) = range(epochs, 0.05);
    let elos = series
        .best_elo
        .iter()
        .map(|p| p.1)
        .chain(
            matches
                .iter()
                .flat_map(|m| m.iter().flat_map(|p| [p.1 - p.2, p.1 + p.2])),
        )
        .chain([0.0]);
    let (r0, r1) = range(elos, 0.08);
    let mut chart = ChartBuilder::on(bottom)
        .caption("evaluation Elo (95% error bars)", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(56)
        .build_cartesian_2d(e0..e1.max(e0 + 1.0), r0..r1)?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .y_desc("Elo")
        .x_labels(((e1 - e0).ceil() as usize + 1).clamp(2, 12))
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 13))
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            series.best_elo.iter().copied(),
            BLACK.stroke_width(2),
        ))?
        .label("best network (cumulative)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.stroke_width(2)));
    error_bars(
        &mut chart,
        &series.vs_best,
        GREEN,
        "new network vs previous best",
    )?;
    error_bars(
        &mut chart,
        &series.vs_uniform,
        MAGENTA,
        "vs uniform evaluator (equal visits)",
    )?;
    error_bars(
        &mut chart,
        &series.vs_classical,
        BLUE,
        "vs classical evaluator (equal visits)",
    )?;
    legend(&mut chart)
}

/// An Elo chart over CPU-hours, games or epochs.
pub(crate) type EloChart<'a> =
    ChartContext<'a, BitMapBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The series' labels in the upper left, where Elo curves leave room: they climb to the right,
/// and the curve's sweeps lie along the bottom.
pub(crate) fn legend(chart: &mut EloChart<'_>) -> DrawResult<()> {
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()?;
    Ok(())
}

/// (epoch, Elo, 95% error) points as dots with vertical error bars.
fn error_bars(
    chart: &mut EloChart<'_>,
    points: &[(f64, f64, f64)],
    color: RGBColor,
    label: &str,
) -> DrawResult<()> {
    chart
        .draw_series(points.iter().map(|&(e, elo, err)| {
            ErrorBar::new_vertical(e, elo - err, elo, elo + err, color.filled(), 8)
        }))?
        .label(label)
        .legend(move |(x, y)| Circle::new((x + 9, y), 4, color.filled()));
    chart.draw_series(
        points
            .iter()
            .map(|&(e, elo, _)| Circle::new((e, elo), 4, color.filled())),
    )?;
    Ok(())
}

/// Draws `metrics` into the PNG `out` (atomically). Errors name the file.
pub fn plot_file(metrics: &Path, out: &Path, title: &str) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(metrics)
        .map_err(|e| anyhow::anyhow!("cannot read metrics {}: {e}", metrics.display()))?;
    let series = Series::parse(&text);
    if series.is_empty() {
        anyhow::bail!(
            "{}: no epoch, step or evaluation records to plot",
            metrics.display()
        );
    }
    plot_series(&series, out, title)
}

/// Draws `series` into the PNG `out`, through a temporary file renamed into place.
pub fn plot_series(series: &Series, out: &Path, title: &str) -> anyhow::Result<()> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plot".into());
    // The backend picks the encoder from the extension, so the temporary name ends in .png too.
    let tmp: PathBuf = out.with_file_name(format!(".{name}.tmp.png"));
    let drawn =
        draw(series, &tmp, title).map_err(|e| anyhow::anyhow!("drawing {}: {e}", out.display()));
    if let Err(e) = drawn {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    std::fs::rename(&tmp, out).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: &str = r#"{"kind":"step","epoch":1,"step":10,"policy_loss":3.1,"value_loss":0.9,"lr":0.01}
{"kind":"step","epoch":1,"step":20,"policy_loss":2.7,"value_loss":0.8,"lr":0.01}
{"kind":"eval","epoch":1,"vs_best":{"wins":6,"draws":0,"losses":4,"elo":70.4,"elo_error":200.0},"vs_uniform":{"wins":9,"draws":0,"losses":1,"elo":381.7,"elo_error":300.0},"promoted":true,"best_epoch":1,"best_elo":70.4}
this line was cut by a kill -9 {"kind":
{"kind":"epoch","epoch":1,"step":20,"policy_loss":2.8,"value_loss":0.85}
{"kind":"step","epoch":2,"step":30,"policy_loss":2.2,"value_loss":0.7,"lr":0.01}
{"kind":"eval","epoch":2,"vs_best":{"wins":5,"draws":1,"losses":4,"elo":34.9,"elo_error":210.0},"vs_uniform":null,"promoted":false,"best_epoch":1,"best_elo":70.4}
"#;

    #[test]
    fn parses_records_and_skips_broken_lines() {
        let s = Series::parse(METRICS);
        assert_eq!(
            s.losses,
            vec![(10.0, 3.1, 0.9), (20.0, 2.7, 0.8), (30.0, 2.2, 0.7)]
        );
        assert_eq!(s.best_elo, vec![(1.0, 70.4), (2.0, 70.4)]);
        assert_eq!(s.vs_best.len(), 2);
        assert_eq!(s.vs_uniform, vec![(1.0, 381.7, 300.0)]);
        // Without step records the epoch summaries are plotted.
        let epochs_only: String = METRICS
            .lines()
            .filter(|l| !l.contains("\"step\","))
            .collect::<Vec<_>>()
            .join("\n");
        assert_eq!(Series::parse(&epochs_only).losses, vec![(20.0, 2.8, 0.85)]);
    }

    #[test]
    fn writes_a_png_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let metrics = dir.path().join("metrics.jsonl");
        std::fs::write(&metrics, METRICS).unwrap();
        let out = dir.path().join("training.png");
        plot_file(&metrics, &out, "fivezero test run").unwrap();
        let png = std::fs::read(&out).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR: width and height as drawn.
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), 1000);
        assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), 760);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "no temporary file left behind: {names:?}");
    }

    #[test]
    fn empty_or_missing_metrics_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("training.png");
        let missing = plot_file(&dir.path().join("nope.jsonl"), &out, "t")
            .unwrap_err()
            .to_string();
        assert!(missing.contains("nope.jsonl"), "{missing}");
        let empty = dir.path().join("empty.jsonl");
        std::fs::write(&empty, "garbage\n").unwrap();
        let e = plot_file(&empty, &out, "t").unwrap_err().to_string();
        assert!(e.contains("empty.jsonl") && e.contains("no epoch"), "{e}");
        assert!(!out.exists());
    }
}
