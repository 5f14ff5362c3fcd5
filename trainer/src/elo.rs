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

/// The 95% Wilson score interval of the score, as Elo (lower, upper). Unlike the normal
/// approximation of `elo` it stays informative for a clean sweep (100% of n games still leaves
/// the true score somewhere above n / (n + 1.96²)); an end at 0 or 1 is reported as -/+infinity.
pub fn elo_bounds(wins: u32, draws: u32, losses: u32) -> (f64, f64) {
    let n = (wins + draws + losses) as f64;
    if n == 0.0 {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    let s = (wins as f64 + 0.5 * draws as f64) / n;
    let z2 = 1.96f64 * 1.96;
    let centre = (s + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = 1.96 / (1.0 + z2 / n) * (s * (1.0 - s) / n + z2 / (4.0 * n * n)).sqrt();
    let to_elo = |p: f64| {
        if p <= 0.0 {
            f64::NEG_INFINITY
        } else if p >= 1.0 {
            f64::INFINITY
        } else {
            -400.0 * (1.0 / p - 1.0).log10()
        }
    };
    (to_elo(centre - half), to_elo(centre + half))
}

#[cfg(test)]
mod tests {
    use super::{elo, elo_bounds};

    #[test]
    fn wilson_bounds_bracket_the_estimate_and_survive_a_sweep() {
        let (lo, hi) = elo_bounds(15, 0, 5);
        let (e, _) = elo(15, 0, 5);
        assert!(lo < e && e < hi, "{lo} {e} {hi}");
        // 200 wins out of 200: the score is above 200/203.84 = 0.981 (Elo 688) with 95%.
        let (lo, hi) = elo_bounds(200, 0, 0);
        assert!((lo - 688.0).abs() < 2.0, "{lo}");
        assert!(hi.is_infinite() && hi > 0.0);
        let (lo, hi) = elo_bounds(0, 0, 200);
        assert!(
            lo.is_infinite() && lo < 0.0 && (hi + 688.0).abs() < 2.0,
            "{hi}"
        );
    }

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
