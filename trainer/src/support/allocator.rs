//! The C allocator's settings for training. libtorch takes and frees tensors of tens to hundreds
//! of megabytes each step (the pattern network's `[batch, D, 15, 15]` activations are 59 MB at
//! batch 1,024, D = 64). glibc serves every block over its mmap threshold (at most 32 MB) by a
//! fresh mapping and unmaps it on free, so each step faults all of them in again: a pattern warm
//! start spent three quarters of its time in the kernel. Keeping freed memory in the heap instead
//! made it about twice as fast (904 -> 1,929 samples/s on the 2-core Xeon, 2026-12-07); the
//! process keeps its peak memory until it exits (docs/training.md).
//!
//! Depends on libc only.

/// Serves every allocation from the heap and never gives freed memory back to the system
/// (glibc on Linux; elsewhere the allocator is left as it is).
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets two of glibc's tunables; any value is valid for both.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, libc::c_int::MAX);
    }
}
