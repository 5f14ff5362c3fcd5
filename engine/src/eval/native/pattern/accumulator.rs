//! The pattern network's accumulator (`net::pattern`): every point's line-shape keys in the four
//! directions and the int16 sum of their table rows, kept for both colours' views (the side to
//! move alternates, so each move would otherwise change every key). A view is brought from its
//! last board to the next by taking back the moves past the common prefix of their histories
//! and playing the new ones: a stone changes its own four keys and those of the on-board points
//! within 4 of it along each line, at most 36; a key changed several times is one row update.
//! A full refresh when the size differs or the paths are far apart.

use super::super::simd::{Elementwise, Simd, vectorized};
use super::table::QTable;
use crate::game::{Board, Color, Pos};
use crate::net::pattern::{DIRECTIONS, REACH, key_weight};

/// Changed stones above which a refresh is cheaper than the updates (a stone is about 72 row
/// updates against about 1,800 row adds for a 15x15 refresh).
const MAX_INCREMENTAL: usize = 24;

/// How `Accumulator::sync` reached the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reached {
    /// Stones taken back and stones played.
    Incremental {
        undone: usize,
        played: usize,
    },
    Refresh,
}

/// The keys and accumulator of one board seen from one colour. Each view follows the boards it
/// is asked for on its own: a search alternates the side to move, and a view brought up to date
/// only when its colour is to move does half the work.
#[derive(Clone, Debug, Default)]
struct View {
    /// The board's size this view was computed for (0: never).
    size: (usize, usize),
    history: Vec<(Pos, Color)>,
    /// `[direction][point]`.
    keys: Vec<u32>,
    /// `[point][dim]`.
    acc: Vec<i16>,
    /// A key's value before this sync's first change of it (`UNTOUCHED` otherwise), and the
    /// keys changed with their points: a key changed by several stones costs one row update.
    before: Vec<u32>,
    touched: Vec<(u32, u32)>,
    /// Row updates for one vectorized pass: (accumulator offset, old key, new key).
    pending: Vec<(u32, u32, u32)>,
}

const UNTOUCHED: u32 = u32::MAX;

/// Both colours' views of the last boards. View 0 sees black's stones as own.
#[derive(Clone, Debug, Default)]
pub struct Accumulator {
    views: [View; 2],
}

impl Accumulator {
    /// The accumulator of view `view` (0: black's stones are own), `[point][dim]` row-major,
    /// as of the last board that view was brought to.
    pub fn view(&self, view: usize) -> &[i16] {
        &self.views[view].acc
    }

    /// Brings view `view` to `board`, incrementally when it is near that view's last board.
    pub fn sync(&mut self, table: &QTable, board: &Board, simd: Simd, view: usize) -> Reached {
        let v = &mut self.views[view];
        let same_size = v.size == (board.width(), board.height())
            && v.acc.len() == board.width() * board.height() * table.dim();
        let new = board.history();
        let common = v
            .history
            .iter()
            .zip(new)
            .take_while(|(a, b)| a == b)
            .count();
        let (undone, played) = (v.history.len() - common, new.len() - common);
        if !same_size || undone + played > MAX_INCREMENTAL {
            v.refresh(table, board, simd, view);
            return Reached::Refresh;
        }
        while v.history.len() > common {
            let (p, c) = v.history.pop().expect("longer than the common prefix");
            v.stone(p, c, false, view, board.width(), board.height());
        }
        for &(p, c) in &new[common..] {
            v.stone(p, c, true, view, board.width(), board.height());
            v.history.push((p, c));
        }
        v.flush(table, simd);
        Reached::Incremental { undone, played }
    }

    /// Recomputes both views of `board` from its cells.
    pub fn refresh(&mut self, table: &QTable, board: &Board, simd: Simd) {
        for (view, v) in self.views.iter_mut().enumerate() {
            v.refresh(table, board, simd, view);
        }
    }
}

impl View {
    fn refresh(&mut self, table: &QTable, board: &Board, simd: Simd, view: usize) {
        let (w, h, dim) = (board.width(), board.height(), table.dim());
        self.size = (w, h);
        self.history.clear();
        self.history.extend_from_slice(board.history());
        let area = w * h;
        self.keys.clear();
        self.keys.resize(4 * area, 0);
        self.before.clear();
        self.before.resize(4 * area, UNTOUCHED);
        self.touched.clear();
        let codes = padded_codes(board, view);
        let pw = w + 2 * REACH;
        for (d, &(dx, dy)) in DIRECTIONS.iter().enumerate() {
            let step = dy as isize * pw as isize + dx as isize;
            for y in 0..h {
                for x in 0..w {
                    let centre = ((y + REACH) * pw + x + REACH) as isize;
                    let key = (-(REACH as isize)..=REACH as isize)
                        .map(|k| codes[(centre + k * step) as usize] * key_weight(k as i64))
                        .sum();
                    self.keys[d * area + y * w + x] = key;
                }
            }
        }
        self.acc.clear();
        self.acc.resize(area * dim, 0);
        vectorized(
            simd,
            SumRows {
                acc: &mut self.acc,
                keys: &self.keys,
                table,
                area,
            },
        );
    }

    /// Changes the keys a stone of `c` at `p` placed (`put`) or taken back changes.
    fn stone(&mut self, p: Pos, c: Color, put: bool, view: usize, w: usize, h: usize) {
        let (wi, hi, area) = (w as i64, h as i64, w * h);
        let (x, y) = (p.x() as i64, p.y() as i64);
        let own = if view == 0 {
            Color::Black
        } else {
            Color::White
        };
        let code: u32 = if c == own { 1 } else { 2 };
        for (d, &(dx, dy)) in DIRECTIONS.iter().enumerate() {
            for k in -(REACH as i64)..=REACH as i64 {
                // `p` is `k` steps from `q` along the line.
                let (qx, qy) = (x - k * dx, y - k * dy);
                if qx < 0 || qy < 0 || qx >= wi || qy >= hi {
                    continue;
                }
                let point = (qy * wi + qx) as usize;
                let slot = d * area + point;
                let key = self.keys[slot];
                if self.before[slot] == UNTOUCHED {
                    self.before[slot] = key;
                    self.touched.push((slot as u32, point as u32));
                }
                let delta = code * key_weight(k);
                self.keys[slot] = if put { key + delta } else { key - delta };
            }
        }
    }

    /// One row update per key this sync changed, then the updates in one pass.
    fn flush(&mut self, table: &QTable, simd: Simd) {
        let dim = table.dim();
        self.pending.clear();
        for &(slot, point) in &self.touched {
            let slot = slot as usize;
            let (old, new) = (self.before[slot], self.keys[slot]);
            self.before[slot] = UNTOUCHED;
            if old != new {
                self.pending.push((point * dim as u32, old, new));
            }
        }
        self.touched.clear();
        update_rows(simd, &mut self.acc, &self.pending, table);
    }
}

/// Codes of view `view` on a board padded by `REACH` points of 3 (off the board).
fn padded_codes(board: &Board, view: usize) -> Vec<u32> {
    let (w, h) = (board.width(), board.height());
    let pw = w + 2 * REACH;
    let mut codes = vec![3u32; pw * (h + 2 * REACH)];
    let own = if view == 0 {
        Color::Black
    } else {
        Color::White
    };
    for y in 0..h {
        for x in 0..w {
            codes[(y + REACH) * pw + x + REACH] = match board.cell(Pos::new(x, y)).color() {
                None => 0,
                Some(c) if c == own => 1,
                Some(_) => 2,
            };
        }
    }
    codes
}

/// Every accumulator row = the sum of its four table rows.
struct SumRows<'a> {
    acc: &'a mut [i16],
    keys: &'a [u32],
    table: &'a QTable,
    area: usize,
}

impl Elementwise for SumRows<'_> {
    #[inline(always)]
    fn run(self) {
        let dim = self.table.dim();
        for (i, row) in self.acc.chunks_exact_mut(dim).enumerate() {
            for d in 0..4 {
                let t = self.table.row(self.keys[d * self.area + i]);
                for (a, &v) in row.iter_mut().zip(t) {
                    *a = a.wrapping_add(v);
                }
            }
        }
    }
}

/// `acc[at..at + dim] += T[new] - T[old]` for every queued change (wrapping: the true sums fit
/// in int16 by the table's scale, whatever the order of the updates). Integer adds, so every
/// path gives the same bits; the x86 ones a row at a time in explicit vectors (the compiler's
/// own loop ran 8 lanes at a time).
fn update_rows(simd: Simd, acc: &mut [i16], pending: &[(u32, u32, u32)], table: &QTable) {
    let dim = table.dim();
    // The rows are scattered over megabytes: ask for all of them before the first add.
    for &(_, old, new) in pending {
        table.prefetch(old);
        table.prefetch(new);
    }
    let rows = pending.iter().map(|&(at, old, new)| {
        let (o, n) = (table.row(old), table.row(new));
        (at as usize, o, n)
    });
    match simd {
        // SAFETY: the CPU has the features (`Simd::supported`).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512Vnni if dim.is_multiple_of(32) => unsafe { x86::rows512(acc, rows) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512Vnni | Simd::Avx2 if dim.is_multiple_of(16) => unsafe {
            x86::rows256(acc, rows)
        },
        _ => {
            for (at, o, n) in rows {
                let row = &mut acc[at..at + dim];
                for ((a, &vo), &vn) in row.iter_mut().zip(o).zip(n) {
                    *a = a.wrapping_add(vn.wrapping_sub(vo));
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// `acc[at..at + dim] += new - old` for each `(at, old, new)`, 32 lanes a vector.
    ///
    /// # Safety
    /// The CPU has AVX-512BW; `old` and `new` are as long, a multiple of 32.
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn rows512<'a>(
        acc: &mut [i16],
        rows: impl Iterator<Item = (usize, &'a [i16], &'a [i16])>,
    ) {
        for (at, old, new) in rows {
            let row = &mut acc[at..at + old.len()];
            for j in (0..old.len()).step_by(32) {
                // SAFETY: j + 32 <= the three slices' length.
                unsafe {
                    let (o, n) = (
                        _mm512_loadu_si512(old.as_ptr().add(j).cast()),
                        _mm512_loadu_si512(new.as_ptr().add(j).cast()),
                    );
                    let a = row.as_mut_ptr().add(j).cast();
                    let sum = _mm512_add_epi16(_mm512_loadu_si512(a), _mm512_sub_epi16(n, o));
                    _mm512_storeu_si512(a, sum);
                }
            }
        }
    }

    /// The same, 16 lanes a vector.
    ///
    /// # Safety
    /// The CPU has AVX2; `old` and `new` are as long, a multiple of 16.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn rows256<'a>(
        acc: &mut [i16],
        rows: impl Iterator<Item = (usize, &'a [i16], &'a [i16])>,
    ) {
        for (at, old, new) in rows {
            let row = &mut acc[at..at + old.len()];
            for j in (0..old.len()).step_by(16) {
                // SAFETY: j + 16 <= the three slices' length.
                unsafe {
                    let (o, n) = (
                        _mm256_loadu_si256(old.as_ptr().add(j).cast()),
                        _mm256_loadu_si256(new.as_ptr().add(j).cast()),
                    );
                    let a = row.as_mut_ptr().add(j).cast();
                    let sum = _mm256_add_epi16(_mm256_loadu_si256(a), _mm256_sub_epi16(n, o));
                    _mm256_storeu_si256(a, sum);
                }
            }
        }
    }
}
