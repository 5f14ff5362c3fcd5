//! Plumbing that knows nothing of self-play or training: checksummed atomic files (`store`), the
//! board's eight symmetries (`symmetry`), where the network runs (`device`), how the C allocator
//! keeps its memory (`allocator`), stop requests from SIGINT/SIGTERM (`stop`), what long work
//! shows while it runs (`progress`), the metrics file (`metrics`) and the training plot drawn
//! from it (`plot`).
//!
//! Depends on nothing else of the trainer.

pub mod allocator;
pub mod device;
pub mod metrics;
pub mod plot;
pub mod progress;
pub mod stop;
pub mod store;
pub mod symmetry;
