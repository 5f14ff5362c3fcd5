//! The trainer's own seeded generator (splitmix64) with visible state, so a checkpoint can store
//! it and a resumed run samples exactly what an uninterrupted one would. Depends on `engine::game`'s
//! `mix64` only.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rng {
    pub state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng {
            state: seed ^ 0x7A11_F1FE_0000_0001,
        }
    }
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        engine::game::mix64(self.state)
    }
    /// Uniform in 0..n (n > 0); the modulo bias is negligible for the sizes used here.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}
