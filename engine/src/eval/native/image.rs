//! The padded image geometry the native runtime's convolutions run on: an `h` x `w` board with a
//! one-pixel border, row-major, a few pixels of slack after it. Kernels compute `PIX` pixels at a
//! time over the flat run from the first to the last board pixel; the border columns inside
//! that run are computed too (no edge cases in the kernels) and reset afterwards.

use super::simd::PIX;

#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub h: usize,
    pub w: usize,
    /// Padded row length.
    pub wp: usize,
}

impl Geometry {
    pub fn new(h: usize, w: usize) -> Geometry {
        Geometry { h, w, wp: w + 2 }
    }

    /// Pixels a buffer holds: the padded image plus slack for the last chunk and its taps.
    pub fn pixels(&self) -> usize {
        (self.h + 2) * self.wp + 2 * PIX + self.wp
    }

    /// The padded pixel of board point `i` (`y * w + x`).
    pub fn interior(&self, i: usize) -> usize {
        let (y, x) = (i / self.w, i % self.w);
        (y + 1) * self.wp + x + 1
    }

    /// The pixels from the first board point to the last.
    pub fn run(&self) -> std::ops::Range<usize> {
        self.wp + 1..self.h * self.wp + self.w + 1
    }

    /// First pixel of each chunk of `PIX` pixels covering every board point.
    pub fn chunks(&self) -> impl Iterator<Item = usize> {
        self.run().step_by(PIX)
    }

    /// The pixel offsets of a convolution's taps (3x3: the neighbours in row-major order;
    /// 1x1: the pixel itself).
    pub fn offsets(&self, taps: usize) -> Vec<isize> {
        if taps == 1 {
            return vec![0];
        }
        let wp = self.wp as isize;
        (0..9).map(|t| (t / 3 - 1) * wp + (t % 3 - 1)).collect()
    }

    /// Sets the border pixels (and the slack) of an image of `cs` channels a pixel to `value`.
    pub fn reset_border<T: Copy>(&self, img: &mut [T], cs: usize, value: T) {
        let wp = self.wp;
        img[..wp * cs].fill(value);
        img[(self.h + 1) * wp * cs..].fill(value);
        for y in 1..=self.h {
            img[y * wp * cs..(y * wp + 1) * cs].fill(value);
            img[(y * wp + self.w + 1) * cs..((y + 1) * wp) * cs].fill(value);
        }
    }
}
