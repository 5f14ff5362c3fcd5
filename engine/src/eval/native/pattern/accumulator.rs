//! The pattern network's accumulator (`net::pattern`): every point's line-shape keys in the four
//! directions and the int16 sum of their table rows, kept for both colours' views (the side to
//! move alternates, so each move would otherwise change every key). A board is reached from the
//! last one by taking back the moves past the common prefix of their histories and playing the
//! new ones: a stone changes its own four keys and those of the on-board points within 4 of it
//! along each line, at most 36 rows per view. A full refresh when the size differs or the paths
//! are far apart.

use super::super::simd::{Elementwise, Simd, vectorized};
use super::table::QTable;
use crate::game::{Board, Color, Pos};
use crate::net::pattern::{DIRECTIONS, REACH, key_weight};

/// Changed stones above which a refresh is cheaper than the updates (a stone is about 72 row
/// updates against about 1,800 row adds for a 15x15 refresh).
const MAX_INCREMENTAL: usize = 24;

/// How `PatternState::sync` reached the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sync {
    /// Stones taken back and stones played.
    Incremental {
        undone: usize,
        played: usize,
    },
    Refresh,
}

/// The keys and accumulators of one board, for both views. View 0 sees black's stones as own.
#[derive(Clone, Debug, Default)]
pub struct Accumulator {
    width: usize,
    height: usize,
    dim: usize,
    history: Vec<(Pos, Color)>,
    /// `[view][direction][point]`.
    keys: Vec<u32>,
    /// `[view][point][dim]`.
    acc: Vec<i16>,
    /// Row updates waiting for one vectorized pass: (accumulator offset, old key, new key).
    pending: Vec<(u32, u32, u32)>,
}

impl Accumulator {
    /// The accumulator of view `view` (0: black's stones are own), `[point][dim]` row-major.
    pub fn view(&self, view: usize) -> &[i16] {
        let n = self.width * self.height * self.dim;
        &self.acc[view * n..(view + 1) * n]
    }

    /// Brings the accumulator to `board`, incrementally when it is near the last board.
    pub fn sync(&mut self, table: &QTable, board: &Board, simd: Simd) -> Sync {
        let same_size =
            (self.width, self.height, self.dim) == (board.width(), board.height(), table.dim());
        let new = board.history();
        let common = self
            .history
            .iter()
            .zip(new)
            .take_while(|(a, b)| a == b)
            .count();
        let (undone, played) = (self.history.len() - common, new.len() - common);
        if !same_size || undone + played > MAX_INCREMENTAL {
            self.refresh(table, board, simd);
            return Sync::Refresh;
        }
        while self.history.len() > common {
            let (p, c) = self.history.pop().expect("longer than the common prefix");
            self.stone(p, c, false);
        }
        for &(p, c) in &new[common..] {
            self.stone(p, c, true);
            self.history.push((p, c));
        }
        self.flush(table, simd);
        Sync::Incremental { undone, played }
    }

    /// Recomputes every key and accumulator of `board` from its cells.
    pub fn refresh(&mut self, table: &QTable, board: &Board, simd: Simd) {
        let (w, h, dim) = (board.width(), board.height(), table.dim());
        (self.width, self.height, self.dim) = (w, h, dim);
        self.history.clear();
        self.history.extend_from_slice(board.history());
        self.pending.clear();
        let area = w * h;
        self.keys.clear();
        self.keys.resize(2 * 4 * area, 0);
        for view in 0..2 {
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
                        self.keys[(view * 4 + d) * area + y * w + x] = key;
                    }
                }
            }
        }
        self.acc.clear();
        self.acc.resize(2 * area * dim, 0);
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

    /// Queues the row updates of a stone of `c` at `p` placed (`put`) or taken back.
    fn stone(&mut self, p: Pos, c: Color, put: bool) {
        let (w, h, area) = (
            self.width as i64,
            self.height as i64,
            self.width * self.height,
        );
        let (x, y) = (p.x() as i64, p.y() as i64);
        for view in 0..2 {
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
                    if qx < 0 || qy < 0 || qx >= w || qy >= h {
                        continue;
                    }
                    let i = (qy * w + qx) as usize;
                    let slot = &mut self.keys[(view * 4 + d) * area + i];
                    let old = *slot;
                    let delta = code * key_weight(k);
                    *slot = if put { old + delta } else { old - delta };
                    let at = ((view * area + i) * self.dim) as u32;
                    self.pending.push((at, old, *slot));
                }
            }
        }
    }

    fn flush(&mut self, table: &QTable, simd: Simd) {
        let pending = std::mem::take(&mut self.pending);
        vectorized(
            simd,
            UpdateRows {
                acc: &mut self.acc,
                pending: &pending,
                table,
            },
        );
        self.pending = pending;
        self.pending.clear();
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
        for (r, row) in self.acc.chunks_exact_mut(dim).enumerate() {
            let (view, i) = (r / self.area, r % self.area);
            for d in 0..4 {
                let t = self.table.row(self.keys[(view * 4 + d) * self.area + i]);
                for (a, &v) in row.iter_mut().zip(t) {
                    *a = a.wrapping_add(v);
                }
            }
        }
    }
}

/// `acc[at..at + dim] += T[new] - T[old]` for every queued change (wrapping: the true sums fit
/// in int16 by the table's scale, whatever the order of the updates).
struct UpdateRows<'a> {
    acc: &'a mut [i16],
    pending: &'a [(u32, u32, u32)],
    table: &'a QTable,
}

impl Elementwise for UpdateRows<'_> {
    #[inline(always)]
    fn run(self) {
        let dim = self.table.dim();
        for &(at, old, new) in self.pending {
            let (o, n) = (self.table.row(old), self.table.row(new));
            let row = &mut self.acc[at as usize..at as usize + dim];
            for ((a, &vo), &vn) in row.iter_mut().zip(o).zip(n) {
                *a = a.wrapping_add(vn.wrapping_sub(vo));
            }
        }
    }
}
