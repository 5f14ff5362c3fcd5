//! Zobrist keys: one fixed pseudo-random 64-bit key per (colour, point), the same in every run so
//! hashes (and anything keyed by them) are reproducible.

use super::pos::CELLS;

/// splitmix64's output function: a bijective 64-bit mix in which every input bit reaches every
/// output bit (the Zobrist keys, the search's generator, hash-table indices).
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const fn splitmix64(state: u64) -> (u64, u64) {
    let next = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    (next, mix64(next))
}

const fn build() -> [[u64; CELLS]; 2] {
    let mut keys = [[0u64; CELLS]; 2];
    let mut state = 0x5EED_F1E0_2E20_0000u64;
    let mut color = 0;
    while color < 2 {
        let mut i = 0;
        while i < CELLS {
            let (next, value) = splitmix64(state);
            state = next;
            keys[color][i] = value;
            i += 1;
        }
        color += 1;
    }
    keys
}

pub(crate) static ZOBRIST: [[u64; CELLS]; 2] = build();
