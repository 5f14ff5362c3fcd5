//! The trainer's integration tests as one binary (one link against libtorch instead of one per
//! file): each module is the test file of one concern, run as before (`cargo test --release -p
//! trainer --test it MODULE::`). `common` and `distributed_support` are what they share.

mod common;
mod distributed_support;

mod bootstrap;
mod distributed_auth_tls;
mod distributed_backpressure;
mod distributed_e2e;
mod distributed_faults;
mod distributed_payload;
mod distributed_process_faults;
mod distributed_stop;
mod equal_time;
mod kill_resume;
mod network;
mod old_run_resumes;
mod pattern_net;
mod progress;
mod replay_store;
mod selfplay;
mod selfplay_backend;
mod trainer_eval;
mod training_run;
mod value_teacher;
