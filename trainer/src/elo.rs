//! Elo difference from a match score, with a 95% interval from the normal approximation of the
//! per-game score variance. A few lines of standard math kept here rather than a dependency on
//! `tools` (the trainer must not depend on the tools crate).

/// (elo, half-width of the 95% interval) for `wins`, `draws`, `losses` of the first player.
pub fn elo(wins: u32, draws: u32, losses: u32) -> (f64, f64) {
    let n = (wins + draws + losses) as f64;
    if n == 0.0 {
        return (0.0, f64::INFINITY);
    }
    let s = (wins as f64 + 0.5 * draws as f64) / n;
    let to_elo = |p: f64| {
        let p = p.clamp(1e-3, 1.0 - 1e-3); // a clean sweep has no finite Elo; cap it
        -400.0 * (1.0 / p - 1.0).log10()
    };
    let var = (wins as f64 * (1.0 - s).powi(2)
        + draws as f64 * (0.5 - s).powi(2)
        + losses as f64 * s.powi(2))
        / n;
    let se = (var / n).sqrt();
    let lo = to_elo(s - 1.96 * se);
    let hi = to_elo(s + 1.96 * se);
    (to_elo(s), (hi - lo) / 2.0)
}

#[cfg(test)]
mod tests {
    use super::elo;

    #[test]
    fn even_score_is_zero_and_more_wins_is_positive() {
        let (e, err) = elo(10, 0, 10);
        assert!(e.abs() < 1e-9 && err > 0.0);
        let (e, _) = elo(15, 0, 5);
        assert!((e - 190.8).abs() < 1.0, "{e}");
        assert!(elo(5, 0, 15).0 < 0.0);
        assert!(elo(0, 0, 0).1.is_infinite());
    }
}
