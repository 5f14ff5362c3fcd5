//! The integer dot-product kernels of the native runtime and the choice between them: AVX-512
//! VNNI (`vpdpbusd`), AVX2 (uint8 and int8 widened to int16, `vpmaddwd`: exact for any weight)
//! and portable scalar code (also the kernel of every other architecture). All three compute
//! the same int32 sums, so they give bit-identical answers.
//!
//! A kernel computes the accumulators of `PIX` consecutive pixels of a padded NHWC uint8 image
//! for every output channel of a convolution (`QConv`); the caller turns them into outputs.
//! `FIVEZERO_SIMD=auto|avx512vnni|avx2|scalar` overrides the choice (measurements, tests).

use std::fmt;
use std::sync::OnceLock;

/// Pixels one kernel call computes.
pub const PIX: usize = 8;
/// Output channels are padded to a multiple of this (one AVX-512 vector of int32).
pub const OUT_BLOCK: usize = 16;

/// A kernel family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    Avx512Vnni,
    Avx2,
    Scalar,
}

impl fmt::Display for Simd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Simd::Avx512Vnni => "avx512vnni",
            Simd::Avx2 => "avx2",
            Simd::Scalar => "scalar",
        })
    }
}

impl Simd {
    /// Whether this CPU can run the kernel.
    pub fn supported(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            // BW and VL for the element-wise steps (`with_avx512`); every VNNI CPU has them.
            Simd::Avx512Vnni => {
                is_x86_feature_detected!("avx512f")
                    && is_x86_feature_detected!("avx512bw")
                    && is_x86_feature_detected!("avx512vl")
                    && is_x86_feature_detected!("avx512vnni")
                    // The pattern kernels' 8-lane fallback and FMA (every AVX-512 CPU has them;
                    // checked, since unsafe code relies on it).
                    && is_x86_feature_detected!("avx2")
                    && is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "x86_64")]
            // FMA for the pattern policy's kernel (every AVX2 CPU but a few VIA ones has it).
            Simd::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            Simd::Scalar => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    /// Every kernel this CPU runs, fastest first.
    pub fn available() -> Vec<Simd> {
        [Simd::Avx512Vnni, Simd::Avx2, Simd::Scalar]
            .into_iter()
            .filter(|s| s.supported())
            .collect()
    }

    /// The fastest kernel this CPU runs.
    pub fn best() -> Simd {
        Simd::available()[0]
    }

    /// The kernel to use: `FIVEZERO_SIMD` when set to one this CPU runs, else the fastest (a
    /// refused or unknown value is said once on stderr).
    pub fn chosen() -> Simd {
        static CHOSEN: OnceLock<Simd> = OnceLock::new();
        *CHOSEN.get_or_init(|| {
            let wanted = std::env::var("FIVEZERO_SIMD").unwrap_or_default();
            match Simd::from_env(&wanted) {
                Ok(s) => s,
                Err(why) => {
                    eprintln!("FIVEZERO_SIMD: {why}; using {}", Simd::best());
                    Simd::best()
                }
            }
        })
    }

    /// The kernel a `FIVEZERO_SIMD` value asks for, or why it cannot be had here.
    pub fn from_env(value: &str) -> Result<Simd, String> {
        let s = match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => return Ok(Simd::best()),
            "avx512vnni" | "avx512" => Simd::Avx512Vnni,
            "avx2" => Simd::Avx2,
            "scalar" => Simd::Scalar,
            other => {
                return Err(format!(
                    "`{other}` is not one of auto, avx512vnni, avx2, scalar"
                ));
            }
        };
        if s.supported() {
            Ok(s)
        } else {
            Err(format!("this CPU lacks {s}"))
        }
    }
}

/// A convolution's integer weights, packed for every kernel.
#[derive(Clone, Debug)]
pub struct QConv {
    /// Kernel taps (9 for 3x3, 1 for 1x1) and their pixel offsets in the padded image.
    pub taps: usize,
    /// Input channels padded to a multiple of 4, output channels padded to `OUT_BLOCK`.
    pub cin_p: usize,
    pub cout: usize,
    pub cout_p: usize,
    /// `[tap][cin_p / 4][cout_p][4]` int8: one `vpdpbusd` operand per (tap, 4 channels).
    pub w8: Vec<i8>,
    /// `[tap][cin_p / 2][cout_p][2]` int16: one `vpmaddwd` operand per (tap, 2 channels).
    pub w16: Vec<i16>,
}

impl QConv {
    /// Packs `weight` (`[cout][cin][k][k]` int8, as ONNX stores a conv's weights) for an input
    /// image of `cin_p` bytes a pixel (`cin` rounded up to a multiple of 4 at least; the
    /// padding channels get zero weights, so whatever they hold adds nothing).
    pub fn pack(weight: &[i8], cout: usize, cin: usize, k: usize, cin_p: usize) -> QConv {
        let taps = k * k;
        assert!(
            cin_p >= cin && cin_p.is_multiple_of(4),
            "bad input stride {cin_p} for {cin}"
        );
        let cout_p = cout.div_ceil(OUT_BLOCK) * OUT_BLOCK;
        let mut w8 = vec![0i8; taps * cin_p * cout_p];
        let mut w16 = vec![0i16; taps * cin_p * cout_p];
        for o in 0..cout {
            for i in 0..cin {
                for t in 0..taps {
                    let v = weight[(o * cin + i) * taps + t];
                    w8[((t * (cin_p / 4) + i / 4) * cout_p + o) * 4 + i % 4] = v;
                    w16[((t * (cin_p / 2) + i / 2) * cout_p + o) * 2 + i % 2] = v as i16;
                }
            }
        }
        QConv {
            taps,
            cin_p,
            cout,
            cout_p,
            w8,
            w16,
        }
    }

    /// Sum of each output channel's weights (the zero point's share of its accumulator).
    pub fn weight_sums(&self) -> Vec<i32> {
        let mut sums = vec![0i32; self.cout_p];
        for chunk in self.w8.chunks(self.cout_p * 4) {
            for (o, s) in sums.iter_mut().enumerate() {
                *s += chunk[o * 4..o * 4 + 4]
                    .iter()
                    .map(|&v| v as i32)
                    .sum::<i32>();
            }
        }
        sums
    }
}

/// Element-wise work around the kernels (requantization, residual adds): plain loops, which
/// `vectorized` compiles for the vector width of the chosen kernels. `run` must be
/// `#[inline(always)]`, so that it is compiled inside the wrapper that enables the features.
pub trait Elementwise {
    fn run(self);
}

/// Runs `e` compiled for the vector width of `simd`.
pub fn vectorized<E: Elementwise>(simd: Simd, e: E) {
    match simd {
        // SAFETY: the CPU has the features (`Simd::supported`).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512Vnni => unsafe { x86::with_avx512(e) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { x86::with_avx2(e) },
        _ => e.run(),
    }
}

/// A convolution's input image: padded NHWC uint8, `cin_p` bytes a pixel, and for the AVX2
/// kernel the same values widened to int16 (`widen`; empty for the other kernels).
#[derive(Clone, Copy)]
pub struct Input<'a> {
    pub x: &'a [u8],
    pub wide: &'a [i16],
}

/// The int16 copy of `x` the AVX2 kernel reads (a pair of its channels is then one broadcast).
pub fn widen(simd: Simd, x: &[u8], wide: &mut Vec<i16>) {
    wide.clear();
    if simd == Simd::Avx2 {
        wide.extend(x.iter().map(|&v| v as i16));
    }
}

/// `acc[p * cout_p + o]` = the sum over taps and input channels of pixel `p0 + p` (p < PIX) of
/// the input (`conv.cin_p` channels a pixel) times the weights; `offsets` are the taps' pixel
/// offsets. Panics if a pixel read would fall outside the input.
pub fn accumulate(
    simd: Simd,
    conv: &QConv,
    input: Input,
    offsets: &[isize],
    p0: usize,
    acc: &mut [i32],
) {
    debug_assert_eq!(acc.len(), PIX * conv.cout_p);
    debug_assert_eq!(offsets.len(), conv.taps);
    let lowest = p0 as isize + offsets.iter().copied().min().unwrap_or(0);
    let highest = p0 as isize + offsets.iter().copied().max().unwrap_or(0) + PIX as isize;
    let len = match simd {
        Simd::Avx2 => input.wide.len(),
        _ => input.x.len(),
    };
    assert!(
        lowest >= 0 && highest as usize * conv.cin_p <= len,
        "kernel reads outside its image"
    );
    let x = input.x;
    match simd {
        // SAFETY: the CPU has the features (`Simd` values other than Scalar are only made
        // after `supported`), and every read is inside the input (checked above).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512Vnni => unsafe { x86::accumulate_vnni(conv, x, offsets, p0, acc) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { x86::accumulate_avx2(conv, input.wide, offsets, p0, acc) },
        _ => accumulate_scalar(conv, x, offsets, p0, acc),
    }
}

fn accumulate_scalar(conv: &QConv, x: &[u8], offsets: &[isize], p0: usize, acc: &mut [i32]) {
    // Pairs of channels against the int16 weights: the loop over outputs is contiguous and
    // multiplies 16-bit values into 32-bit sums, which compilers vectorize on any SIMD ISA.
    let (cs, cout_p, pairs) = (conv.cin_p, conv.cout_p, conv.cin_p / 2);
    acc.fill(0);
    for (t, &off) in offsets.iter().enumerate() {
        for p in 0..PIX {
            let base = (p0 as isize + p as isize + off) as usize * cs;
            let a = &mut acc[p * cout_p..(p + 1) * cout_p];
            for q in 0..pairs {
                let (x0, x1) = (x[base + 2 * q] as i32, x[base + 2 * q + 1] as i32);
                let ws = &conv.w16[(t * pairs + q) * cout_p * 2..][..cout_p * 2];
                for (av, w) in a.iter_mut().zip(ws.chunks_exact(2)) {
                    *av += x0 * w[0] as i32 + x1 * w[1] as i32;
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{PIX, QConv};
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn with_avx512<E: super::Elementwise>(e: E) {
        e.run()
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn with_avx2<E: super::Elementwise>(e: E) {
        e.run()
    }

    /// Four input bytes as one int32, broadcast by the caller.
    #[inline(always)]
    unsafe fn quad(x: *const u8) -> i32 {
        unsafe { (x as *const i32).read_unaligned() }
    }

    #[target_feature(enable = "avx512f,avx512vnni")]
    pub(super) unsafe fn accumulate_vnni(
        conv: &QConv,
        x: &[u8],
        offsets: &[isize],
        p0: usize,
        acc: &mut [i32],
    ) {
        let blocks = conv.cout_p / 16;
        let mut ob = 0;
        while ob < blocks {
            // Two blocks of 16 outputs at once: 16 accumulators, each broadcast used twice.
            if blocks - ob >= 2 {
                unsafe { vnni_blocks::<2>(conv, x, offsets, p0, acc, ob) };
                ob += 2;
            } else {
                unsafe { vnni_blocks::<1>(conv, x, offsets, p0, acc, ob) };
                ob += 1;
            }
        }
    }

    #[target_feature(enable = "avx512f,avx512vnni")]
    unsafe fn vnni_blocks<const NB: usize>(
        conv: &QConv,
        x: &[u8],
        offsets: &[isize],
        p0: usize,
        acc: &mut [i32],
        ob: usize,
    ) {
        let (cs, cout_p, groups) = (conv.cin_p, conv.cout_p, conv.cin_p / 4);
        let mut a = [[_mm512_setzero_si512(); NB]; PIX];
        let xp = x.as_ptr();
        for (t, &off) in offsets.iter().enumerate() {
            // SAFETY (whole block): `accumulate` checked the pixel range; weights are indexed
            // inside `w8` by construction (`QConv::pack`).
            unsafe {
                let xb = xp.offset((p0 as isize + off) * cs as isize);
                let wt = conv.w8.as_ptr().add(t * groups * cout_p * 4 + ob * 64);
                for g in 0..groups {
                    let mut wv = [_mm512_setzero_si512(); NB];
                    for (b, w) in wv.iter_mut().enumerate() {
                        *w = _mm512_loadu_si512(wt.add(g * cout_p * 4 + b * 64) as *const _);
                    }
                    for (p, ap) in a.iter_mut().enumerate() {
                        let xv = _mm512_set1_epi32(quad(xb.add(p * cs + 4 * g)));
                        for b in 0..NB {
                            ap[b] = _mm512_dpbusd_epi32(ap[b], xv, wv[b]);
                        }
                    }
                }
            }
        }
        for (p, ap) in a.iter().enumerate() {
            for (b, v) in ap.iter().enumerate() {
                let dst = &mut acc[p * cout_p + (ob + b) * 16..][..16];
                // SAFETY: `dst` holds 16 int32.
                unsafe { _mm512_storeu_si512(dst.as_mut_ptr() as *mut _, *v) };
            }
        }
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn accumulate_avx2(
        conv: &QConv,
        x: &[i16],
        offsets: &[isize],
        p0: usize,
        acc: &mut [i32],
    ) {
        // Four pixels x 16 outputs (8 accumulators of 8 int32) per pass.
        for half in 0..PIX / 4 {
            for ob in 0..conv.cout_p / 16 {
                unsafe { avx2_block(conv, x, offsets, p0 + 4 * half, acc, 4 * half, ob) };
            }
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn avx2_block(
        conv: &QConv,
        x: &[i16],
        offsets: &[isize],
        p0: usize,
        acc: &mut [i32],
        acc_pixel: usize,
        ob: usize,
    ) {
        let (cs, cout_p, pairs) = (conv.cin_p, conv.cout_p, conv.cin_p / 2);
        let mut a = [[_mm256_setzero_si256(); 2]; 4];
        let xp = x.as_ptr();
        for (t, &off) in offsets.iter().enumerate() {
            // SAFETY (whole block): as in `vnni_blocks`.
            unsafe {
                let xb = xp.offset((p0 as isize + off) * cs as isize);
                let wt = conv.w16.as_ptr().add(t * pairs * cout_p * 2 + ob * 32);
                for q in 0..pairs {
                    let w0 = _mm256_loadu_si256(wt.add(q * cout_p * 2) as *const _);
                    let w1 = _mm256_loadu_si256(wt.add(q * cout_p * 2 + 16) as *const _);
                    for (p, ap) in a.iter_mut().enumerate() {
                        // Two int16 channels as one int32: a broadcast straight from memory.
                        let pair = (xb.add(p * cs + 2 * q) as *const i32).read_unaligned();
                        let xv = _mm256_set1_epi32(pair);
                        ap[0] = _mm256_add_epi32(ap[0], _mm256_madd_epi16(xv, w0));
                        ap[1] = _mm256_add_epi32(ap[1], _mm256_madd_epi16(xv, w1));
                    }
                }
            }
        }
        for (p, ap) in a.iter().enumerate() {
            for (b, v) in ap.iter().enumerate() {
                let dst = &mut acc[(acc_pixel + p) * cout_p + ob * 16 + b * 8..][..8];
                // SAFETY: `dst` holds 8 int32.
                unsafe { _mm256_storeu_si256(dst.as_mut_ptr() as *mut _, *v) };
            }
        }
    }
}
