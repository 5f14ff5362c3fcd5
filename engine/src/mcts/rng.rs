//! A small seeded generator for root noise and move sampling: SplitMix64, normal by Box-Muller,
//! gamma by Marsaglia-Tsang, Dirichlet as normalised gammas. Seeded, so self-play is replayable.
//!
//! Depends on nothing.

#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        crate::game::mix64(self.0)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        let u2 = self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Gamma(alpha, 1) for alpha > 0.
    pub fn gamma(&mut self, alpha: f64) -> f64 {
        if alpha < 1.0 {
            // Boost to alpha + 1, then scale by U^(1/alpha).
            let u = 1.0 - self.unit();
            return self.gamma(alpha + 1.0) * u.powf(1.0 / alpha);
        }
        let d = alpha - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = 1.0 - self.unit();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v;
            }
        }
    }

    /// A Dirichlet(alpha, ..., alpha) sample of length `n`.
    pub fn dirichlet(&mut self, alpha: f64, n: usize) -> Vec<f64> {
        let mut v: Vec<f64> = (0..n).map(|_| self.gamma(alpha)).collect();
        let sum: f64 = v.iter().sum();
        if sum > 0.0 && sum.is_finite() {
            v.iter_mut().for_each(|x| *x /= sum);
        } else {
            v.iter_mut().for_each(|x| *x = 1.0 / n.max(1) as f64);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirichlet_sums_to_one_and_is_seeded() {
        let a = SplitMix64::new(7).dirichlet(0.3, 50);
        let b = SplitMix64::new(7).dirichlet(0.3, 50);
        assert_eq!(a, b);
        assert!((a.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(a.iter().all(|&x| x >= 0.0));
    }

    #[test]
    fn gamma_mean_is_alpha() {
        let mut r = SplitMix64::new(1);
        for alpha in [0.3, 1.0, 2.5] {
            let n = 20000;
            let mean = (0..n).map(|_| r.gamma(alpha)).sum::<f64>() / n as f64;
            assert!(
                (mean - alpha).abs() < 0.05 * alpha.max(1.0),
                "alpha {alpha}: mean {mean}"
            );
        }
    }
}
