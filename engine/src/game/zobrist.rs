//! Zobrist keys: one fixed pseudo-random 64-bit key per (colour, point), the same in every run so
//! hashes (and anything keyed by them) are reproducible. Drawn at compile time from `rng`.

use super::pos::CELLS;
use crate::rng::Rng;

const fn build() -> [[u64; CELLS]; 2] {
    let mut keys = [[0u64; CELLS]; 2];
    let mut rng = Rng::new(0x5EED_F1E0_2E20_0000);
    let mut color = 0;
    while color < 2 {
        let mut i = 0;
        while i < CELLS {
            keys[color][i] = rng.next_u64();
            i += 1;
        }
        color += 1;
    }
    keys
}

pub(crate) static ZOBRIST: [[u64; CELLS]; 2] = build();
