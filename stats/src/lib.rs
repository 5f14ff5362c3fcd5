//! Match statistics, once for the workspace: Elo from wins/draws/losses with a 95% error bar
//! (the tournament manager's, and the trainer's that stays finite for a clean sweep), the 95%
//! Wilson interval as Elo, likelihood of superiority, and the sequential probability ratio test
//! (GSPRT, normal approximation of the trinomial log-likelihood ratio, as fishtest's
//! pre-pentanomial version and cutechess-cli compute it).
//!
//! Pure math on counts: depends on nothing, no I/O. `tools` (tournaments, the `elo` command) and
//! `trainer` (evaluation matches, the learning curve) use it.

/// Two-sided 95% quantile of the standard normal distribution.
pub const Z95: f64 = 1.959_963_984_540_054;
/// `Z95` as the trainer's figures have always used it, rounded: its Elo bars and Wilson bounds
/// stay the numbers its run records and notes hold.
const Z95_ROUNDED: f64 = 1.96;

/// Game results from the first player's point of view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wdl {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Wdl {
    pub const fn new(wins: u64, draws: u64, losses: u64) -> Self {
        Self {
            wins,
            draws,
            losses,
        }
    }

    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Mean score per game in [0, 1]; `None` without games.
    pub fn score(&self) -> Option<f64> {
        let n = self.games();
        (n > 0).then(|| (self.wins as f64 + 0.5 * self.draws as f64) / n as f64)
    }

    /// Per-game variance of the score under the trinomial model (sample estimate).
    pub fn variance(&self) -> Option<f64> {
        let n = self.games() as f64;
        let s = self.score()?;
        let (w, d, l) = (
            self.wins as f64 / n,
            self.draws as f64 / n,
            self.losses as f64 / n,
        );
        Some(w * (1.0 - s).powi(2) + d * (0.5 - s).powi(2) + l * s.powi(2))
    }

    /// The same results seen from the other player.
    pub fn flipped(&self) -> Self {
        Self::new(self.losses, self.draws, self.wins)
    }
}

/// Counts as the trainer keeps them.
impl From<(u32, u32, u32)> for Wdl {
    fn from((wins, draws, losses): (u32, u32, u32)) -> Self {
        Self::new(wins.into(), draws.into(), losses.into())
    }
}

/// Logistic Elo difference for an expected score; infinite at 0 and 1.
pub fn elo_from_score(score: f64) -> f64 {
    if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / score - 1.0).log10()
    }
}

/// Expected score for a logistic Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// An Elo estimate with its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EloEstimate {
    pub elo: f64,
    /// Half-width of the 95% interval in Elo (cutechess-cli's "+/-"); infinite when the interval
    /// touches a score of 0 or 1.
    pub error95: f64,
    pub lower95: f64,
    pub upper95: f64,
}

/// Elo and 95% error bar from the score, its standard error from the trinomial variance.
pub fn elo_estimate(r: &Wdl) -> Option<EloEstimate> {
    normal_interval(r, Z95, elo_from_score)
}

/// The score's normal-approximation interval of `z` standard errors, each end and the score
/// turned into Elo by `to_elo`.
fn normal_interval(r: &Wdl, z: f64, to_elo: impl Fn(f64) -> f64) -> Option<EloEstimate> {
    let s = r.score()?;
    let stderr = (r.variance()? / r.games() as f64).sqrt();
    let lo = to_elo(s - z * stderr);
    let hi = to_elo(s + z * stderr);
    Some(EloEstimate {
        elo: to_elo(s),
        error95: (hi - lo) / 2.0,
        lower95: lo,
        upper95: hi,
    })
}

/// `capped_elo` holds scores inside [SCORE_CAP, 1 - SCORE_CAP]: ±1200 Elo at most.
const SCORE_CAP: f64 = 1e-3;

/// (Elo, half-width of its 95% interval) with every score held inside [0.001, 0.999], so a clean
/// sweep still gets a number to store and plot (±1200, with a bar of 0); (0, infinity) without
/// games. The trainer's evaluation figures; `wilson_bounds` is the honest bound for a sweep.
pub fn capped_elo(r: &Wdl) -> (f64, f64) {
    normal_interval(r, Z95_ROUNDED, |p| {
        elo_from_score(p.clamp(SCORE_CAP, 1.0 - SCORE_CAP))
    })
    .map_or((0.0, f64::INFINITY), |e| (e.elo, e.error95))
}

/// The 95% Wilson score interval of the score, as Elo (lower, upper). Unlike the normal
/// approximation it stays informative for a clean sweep (100% of n games still leaves the true
/// score somewhere above n / (n + 1.96²)); an end at 0 or 1 is -/+infinity, and so are both
/// without games.
pub fn wilson_bounds(r: &Wdl) -> (f64, f64) {
    let (Some(s), n) = (r.score(), r.games() as f64) else {
        return (f64::NEG_INFINITY, f64::INFINITY);
    };
    let z2 = Z95_ROUNDED * Z95_ROUNDED;
    let centre = (s + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95_ROUNDED / (1.0 + z2 / n) * (s * (1.0 - s) / n + z2 / (4.0 * n * n)).sqrt();
    (elo_from_score(centre - half), elo_from_score(centre + half))
}

/// Likelihood of superiority: P(first player is stronger), from decisive games only.
pub fn los(r: &Wdl) -> Option<f64> {
    let decisive = (r.wins + r.losses) as f64;
    (decisive > 0.0)
        .then(|| 0.5 * (1.0 + erf((r.wins as f64 - r.losses as f64) / (2.0 * decisive).sqrt())))
}

/// Error function, Abramowitz & Stegun 7.1.26; absolute error below 1.5e-7, ample for LOS.
pub fn erf(x: f64) -> f64 {
    let sign = if x < 0.0 { -1.0 } else { 1.0 };
    let x = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    sign * (1.0 - poly * (-x * x).exp())
}

/// SPRT hypotheses and error rates, e.g. `elo0=0,elo1=5,alpha=0.05,beta=0.05`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SprtParams {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// Where an SPRT stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SprtDecision {
    /// LLR at or below the lower bound: H0 (elo <= elo0) accepted.
    AcceptH0,
    /// LLR at or above the upper bound: H1 (elo >= elo1) accepted.
    AcceptH1,
    Continue,
}

impl SprtParams {
    /// Parses `elo0=0,elo1=5,alpha=0.05,beta=0.05` (any order; alpha and beta default to 0.05).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (mut elo0, mut elo1, mut alpha, mut beta) = (None, None, 0.05, 0.05);
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("expected key=value, got `{part}`"))?;
            let v: f64 = value
                .trim()
                .parse()
                .map_err(|_| format!("`{key}` needs a number, got `{value}`"))?;
            match key.trim() {
                "elo0" => elo0 = Some(v),
                "elo1" => elo1 = Some(v),
                "alpha" => alpha = v,
                "beta" => beta = v,
                other => {
                    return Err(format!(
                        "unknown SPRT key `{other}` (elo0, elo1, alpha, beta)"
                    ));
                }
            }
        }
        let p = Self {
            elo0: elo0.ok_or("SPRT needs elo0")?,
            elo1: elo1.ok_or("SPRT needs elo1")?,
            alpha,
            beta,
        };
        if p.elo1 <= p.elo0 {
            return Err(format!(
                "SPRT needs elo1 > elo0 (got {} and {})",
                p.elo0, p.elo1
            ));
        }
        for (name, v) in [("alpha", p.alpha), ("beta", p.beta)] {
            if !(v > 0.0 && v < 0.5) {
                return Err(format!("SPRT {name} must be in (0, 0.5), got {v}"));
            }
        }
        Ok(p)
    }

    /// Lower and upper LLR bounds (Wald): ln(beta/(1-alpha)) and ln((1-beta)/alpha).
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// Log-likelihood ratio of H1 against H0 for these results, normal approximation:
    /// LLR = n (s1 - s0) (2 s - s0 - s1) / (2 var), with s the mean score and var the sample
    /// per-game variance. When every game had the same result the sample variance is zero; then
    /// the variance of the counts with one extra win and one extra loss stands in (a weak prior),
    /// so a side that wins every game still reaches a decision. Zero without games.
    pub fn llr(&self, r: &Wdl) -> f64 {
        let (Some(s), Some(mut var)) = (r.score(), r.variance()) else {
            return 0.0;
        };
        if var <= 0.0 {
            var = Wdl::new(r.wins + 1, r.draws, r.losses + 1)
                .variance()
                .unwrap_or(0.25);
        }
        let (s0, s1) = (score_from_elo(self.elo0), score_from_elo(self.elo1));
        r.games() as f64 * (s1 - s0) * (2.0 * s - s0 - s1) / (2.0 * var)
    }

    pub fn decide(&self, r: &Wdl) -> SprtDecision {
        let (lo, hi) = self.bounds();
        let llr = self.llr(r);
        if llr >= hi {
            SprtDecision::AcceptH1
        } else if llr <= lo {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, eps: f64) -> bool {
        (a - b).abs() < eps
    }

    #[test]
    fn elo_of_known_scores() {
        assert!(close(elo_from_score(0.5), 0.0, 1e-12));
        // 0.75 expected score is the textbook 190.85 Elo.
        assert!(close(elo_from_score(0.75), 190.848_501_887_865, 1e-9));
        assert!(close(elo_from_score(0.25), -190.848_501_887_865, 1e-9));
        assert!(close(score_from_elo(400.0), 10.0 / 11.0, 1e-12));
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
    }

    #[test]
    fn error_bar_matches_hand_computation() {
        // 60 wins, 40 losses: s = 0.6, var = 0.24, stderr = sqrt(0.0024);
        // interval [elo(0.6 - 1.96*0.04899), elo(0.6 + 1.96*0.04899)] = [2.7669, 143.9092].
        let e = elo_estimate(&Wdl::new(60, 0, 40)).unwrap();
        assert!(close(e.elo, 70.436_503_6, 1e-6), "{e:?}");
        assert!(close(e.lower95, 2.766_9, 1e-3), "{e:?}");
        assert!(close(e.upper95, 143.909_2, 1e-3), "{e:?}");
        assert!(close(e.error95, 70.571_2, 1e-3), "{e:?}");
        // Draws shrink the variance: same score, narrower bar.
        let with_draws = elo_estimate(&Wdl::new(40, 40, 20)).unwrap();
        assert!(close(with_draws.elo, e.elo, 1e-9));
        assert!(with_draws.error95 < e.error95);
        assert!(elo_estimate(&Wdl::default()).is_none());
    }

    #[test]
    fn wilson_bounds_bracket_the_estimate_and_survive_a_sweep() {
        let (lo, hi) = wilson_bounds(&Wdl::new(15, 0, 5));
        let (e, _) = capped_elo(&Wdl::new(15, 0, 5));
        assert!(lo < e && e < hi, "{lo} {e} {hi}");
        // 200 wins out of 200: the score is above 200/203.84 = 0.981 (Elo 688) with 95%.
        let (lo, hi) = wilson_bounds(&Wdl::new(200, 0, 0));
        assert!((lo - 688.0).abs() < 2.0, "{lo}");
        assert!(hi.is_infinite() && hi > 0.0);
        let (lo, hi) = wilson_bounds(&Wdl::new(0, 0, 200));
        assert!(
            lo.is_infinite() && lo < 0.0 && (hi + 688.0).abs() < 2.0,
            "{hi}"
        );
        assert_eq!(
            wilson_bounds(&Wdl::default()),
            (f64::NEG_INFINITY, f64::INFINITY)
        );
    }

    #[test]
    fn capped_elo_is_even_at_an_even_score_and_finite_for_a_sweep() {
        let (e, err) = capped_elo(&Wdl::new(10, 0, 10));
        assert!(e.abs() < 1e-9 && err > 0.0);
        let (e, _) = capped_elo(&Wdl::new(15, 0, 5));
        assert!((e - 190.8).abs() < 1.0, "{e}");
        assert!(capped_elo(&Wdl::new(5, 0, 15)).0 < 0.0);
        assert!(capped_elo(&Wdl::default()).1.is_infinite());
        let (e, err) = capped_elo(&Wdl::new(20, 0, 0));
        assert!((e - 1199.8).abs() < 0.1 && err == 0.0, "{e} {err}");
        // Away from the cap it is the tournament manager's estimate (with z rounded to 1.96).
        let est = elo_estimate(&Wdl::new(30, 12, 18)).unwrap();
        let (e, err) = capped_elo(&Wdl::new(30, 12, 18));
        assert!(
            close(e, est.elo, 1e-9) && close(err, est.error95, 1e-3 * err),
            "{err}"
        );
    }

    #[test]
    fn los_values() {
        assert!(close(los(&Wdl::new(10, 5, 10)).unwrap(), 0.5, 1e-7));
        // (W-L)/sqrt(2(W+L)) = 10/sqrt(200) = 0.7071; 0.5(1+erf(0.7071)) = Phi(1) = 0.841345.
        assert!(close(
            los(&Wdl::new(55, 0, 45)).unwrap(),
            0.841_344_746,
            1e-6
        ));
        assert!(los(&Wdl::new(0, 7, 0)).is_none());
    }

    #[test]
    fn erf_known_values() {
        assert!(close(erf(0.0), 0.0, 1e-9));
        assert!(close(erf(1.0), 0.842_700_792_9, 2e-7));
        assert!(close(erf(-2.0), -0.995_322_265, 2e-7));
    }

    #[test]
    fn sprt_bounds_and_llr() {
        let p = SprtParams::parse("elo0=0,elo1=5,alpha=0.05,beta=0.05").unwrap();
        let (lo, hi) = p.bounds();
        assert!(close(lo, -2.944_438_979, 1e-8) && close(hi, 2.944_438_979, 1e-8));
        // Hand computation: W=300 D=400 L=260, s = 0.520833, var = 0.145399,
        // s0 = 0.5, s1 = score_from_elo(5) = 0.507195; LLR = n ds (2s - s0 - s1) / (2 var).
        let r = Wdl::new(300, 400, 260);
        let s1 = score_from_elo(5.0);
        let s: f64 = 500.0 / 960.0;
        let var = (300.0 * (1.0 - s).powi(2) + 400.0 * (0.5 - s).powi(2) + 260.0 * s * s) / 960.0;
        let expect = 960.0 * (s1 - 0.5) * (2.0 * s - 0.5 - s1) / (2.0 * var);
        assert!(close(p.llr(&r), expect, 1e-9));
        assert!(close(expect, 0.818_8, 1e-3), "{expect}");
        assert_eq!(p.decide(&r), SprtDecision::Continue);
        assert_eq!(p.decide(&Wdl::new(700, 100, 200)), SprtDecision::AcceptH1);
        assert_eq!(p.decide(&Wdl::new(200, 100, 700)), SprtDecision::AcceptH0);
        assert_eq!(p.llr(&Wdl::default()), 0.0);
        // All wins: the prior variance keeps the LLR finite and growing with the games.
        let wide = SprtParams::parse("elo0=0,elo1=200").unwrap();
        let (a, b) = (wide.llr(&Wdl::new(3, 0, 0)), wide.llr(&Wdl::new(6, 0, 0)));
        assert!(a > 0.0 && b > a && b.is_finite(), "{a} {b}");
        assert!(wide.llr(&Wdl::new(0, 0, 6)) < 0.0);
    }

    #[test]
    fn sprt_parse_errors() {
        assert!(SprtParams::parse("elo0=5,elo1=0").is_err());
        assert!(SprtParams::parse("elo0=0").is_err());
        assert!(SprtParams::parse("elo0=0,elo1=5,gamma=1").is_err());
        assert!(SprtParams::parse("elo0=0,elo1=5,alpha=0.7").is_err());
        assert_eq!(SprtParams::parse("elo1=5, elo0=-1").unwrap().alpha, 0.05);
    }
}
