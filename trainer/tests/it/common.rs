//! What several trainer test modules share: the arguments that keep the real `trainer` binary on
//! one CPU thread.

/// The trainer on the CPU, one torch thread, one self-play worker: tests run beside each other
/// on small CI machines, and one thread each keeps them from crowding one another out.
pub const ONE_CPU_THREAD: [&str; 6] = [
    "--device",
    "cpu",
    "--threads",
    "1",
    "--parallel-workers",
    "1",
];
