//! The pattern network's table as int16 rows, one cache line per row at `D` = 32, and the scale
//! that maps it back: `scale` units are 1.0, chosen so that no point's accumulator (four rows
//! and the two vectors) can leave int16.

use crate::net::pattern::KEYS;

#[derive(Clone, Debug)]
pub struct QTable {
    dim: usize,
    /// Rows from `start` on; the offset aligns row 0 to 64 bytes.
    data: Vec<i16>,
    start: usize,
}

impl QTable {
    /// `table` (`[KEYS][dim]`) rounded at `scale` units per 1.0.
    pub fn new(table: &[f32], dim: usize, scale: f32) -> QTable {
        debug_assert_eq!(table.len(), KEYS * dim);
        let mut data = vec![0i16; KEYS * dim + 32];
        let start = data.as_ptr().align_offset(64).min(32);
        for (q, &v) in data[start..].iter_mut().zip(table) {
            *q = quantize(v, scale);
        }
        QTable { dim, data, start }
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The row of `key`.
    ///
    /// # Panics
    /// If `key` is not below `KEYS` (the keys' arithmetic keeps it there).
    #[inline(always)]
    pub fn row(&self, key: u32) -> &[i16] {
        let at = self.start + key as usize * self.dim;
        &self.data[at..at + self.dim]
    }
}

impl QTable {
    /// Asks the CPU for the row of `key` ahead of its use (a hint: no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, key: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(row) = self.data.get(self.start + key as usize * self.dim) {
            // SAFETY: a prefetch of an address inside the table; SSE is part of x86-64.
            unsafe {
                std::arch::x86_64::_mm_prefetch(
                    row as *const i16 as *const i8,
                    std::arch::x86_64::_MM_HINT_T0,
                )
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }
}

/// `v` at `scale` units per 1.0, rounded to the nearest.
pub fn quantize(v: f32, scale: f32) -> i16 {
    (v * scale).round().clamp(i16::MIN as f32, i16::MAX as f32) as i16
}

/// Units per 1.0 for a table whose entries reach `table_max` and vectors `black_max` and
/// `forbidden_max` (absolute values): the largest accumulator, with rounding, stays under 32,000.
pub fn scale_for(table_max: f32, black_max: f32, forbidden_max: f32) -> f32 {
    let bound = 4.0 * table_max + black_max + forbidden_max;
    // Six rounded terms add at most 3 units of rounding.
    (31_990.0 / bound.max(1e-3)).min(16_384.0)
}
