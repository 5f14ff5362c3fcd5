//! The 8 symmetries of a square board (dihedral group D4) on point indices. Training samples are
//! stored in their original orientation and transformed lazily at sampling: the move list is
//! mapped before the position is replayed, so stone planes, last-move planes, renju forbidden
//! points and the policy target all move together by construction.
//!
//! Pure index arithmetic; depends on nothing.

/// Number of symmetries.
pub const COUNT: usize = 8;

/// Maps (x, y) on a `size` x `size` board by symmetry `sym` (0 = identity, 1..=3 rotations by
/// 90/180/270 degrees, 4..=7 the reflections).
pub fn map_xy(sym: usize, size: usize, x: usize, y: usize) -> (usize, usize) {
    let m = size - 1;
    match sym % COUNT {
        0 => (x, y),
        1 => (m - y, x),
        2 => (m - x, m - y),
        3 => (y, m - x),
        4 => (m - x, y),
        5 => (x, m - y),
        6 => (y, x),
        _ => (m - y, m - x),
    }
}

/// The symmetry that undoes `sym`.
pub fn inverse(sym: usize) -> usize {
    match sym % COUNT {
        1 => 3,
        3 => 1,
        s => s, // identity, the half turn and the reflections are their own inverses
    }
}

/// Maps a dense index `y * size + x`.
pub fn map_index(sym: usize, size: usize, i: usize) -> usize {
    let (x, y) = map_xy(sym, size, i % size, i / size);
    y * size + x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_undoes_every_symmetry_and_each_is_a_permutation() {
        let n = 7;
        for s in 0..COUNT {
            let mut seen = vec![false; n * n];
            for i in 0..n * n {
                let j = map_index(s, n, i);
                assert!(!seen[j], "sym {s} maps two points to {j}");
                seen[j] = true;
                assert_eq!(map_index(inverse(s), n, j), i, "sym {s}");
            }
        }
    }

    #[test]
    fn all_eight_differ_on_an_asymmetric_pattern() {
        let n = 9;
        let pts = [(1usize, 0usize), (2, 0), (1, 3)];
        let images: Vec<Vec<usize>> = (0..COUNT)
            .map(|s| {
                let mut v: Vec<usize> = pts
                    .iter()
                    .map(|&(x, y)| map_index(s, n, y * n + x))
                    .collect();
                v.sort();
                v
            })
            .collect();
        for a in 0..COUNT {
            for b in a + 1..COUNT {
                assert_ne!(images[a], images[b], "symmetries {a} and {b} agree");
            }
        }
    }
}
