//! The workspace's seeded generator: SplitMix64 (a Weyl sequence through `mix64`), with uniform,
//! normal (Box-Muller), gamma (Marsaglia-Tsang) and Dirichlet draws. The same seed gives the same
//! numbers on every platform and build, so self-play, random weights and the Zobrist keys are
//! replayable; the state is one visible `u64` (serde: a struct with one `state` field), so a
//! trainer checkpoint stores it and a resumed run draws what an uninterrupted one would.
//!
//! Used by `game` (Zobrist keys, at compile time), `net` (random weights), `mcts` (root noise,
//! move sampling), the trainer and the tools. Depends on nothing.

use serde::{Deserialize, Serialize};

/// The Weyl step of SplitMix64 (2^64 / the golden ratio, odd).
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function: a bijective 64-bit mix in which every input bit reaches every
/// output bit (the generator's output, the Zobrist keys, hash-table indices).
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rng {
    pub state: u64,
}

impl Rng {
    /// A generator whose state starts at `seed`. Two users that must not draw the same numbers
    /// from one seed each mix their own constant into it (`seed ^ SALT`).
    pub const fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    pub const fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// Uniform in 0..n (n > 0); the modulo bias is negligible for the sizes used here.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.unit(); // (0, 1]: ln stays finite
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
    fn the_stream_is_splitmix64() {
        // The reference values of SplitMix64 from seed 1234567 (Vigna's splitmix64.c).
        let mut r = Rng::new(1234567);
        let first: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(
            first,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423
            ]
        );
        assert_eq!(
            r.state,
            1234567u64.wrapping_add(3u64.wrapping_mul(GOLDEN_GAMMA))
        );
    }

    #[test]
    fn dirichlet_sums_to_one_and_is_seeded() {
        let a = Rng::new(7).dirichlet(0.3, 50);
        let b = Rng::new(7).dirichlet(0.3, 50);
        assert_eq!(a, b);
        assert!((a.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!(a.iter().all(|&x| x >= 0.0));
    }

    #[test]
    fn gamma_mean_is_alpha() {
        let mut r = Rng::new(1);
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
