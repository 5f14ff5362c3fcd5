//! Distributed self-play and training over Redis: self-play workers push finished games to a
//! Redis Stream, one train worker consumes them through a consumer group into its replay store,
//! trains, and publishes new model versions that the workers hot-swap between games.
//!
//! Modules: `payload` (versioned, checksummed, size-capped frames through `store::encode`),
//! `conn` (one Redis connection with reconnect/backoff and the key layout), `queue` (stream,
//! consumer group, models, heartbeats, counters), `selfplay_worker`, `train_worker`, `monitor`,
//! `cli` (the subcommands; their flags are declared in `config::commands`). Depends on every room
//! of the trainer (`support`, `config`, `network`, `training`, `selfplay`, `run::set_threads`);
//! nothing in the trainer depends on this module.

pub mod cli;
pub mod conn;
pub mod monitor;
pub mod payload;
pub mod queue;
pub mod selfplay_worker;
pub mod train_worker;

/// Errors of the distributed layer; Redis errors that survive the reconnect policy end up here.
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("redis unreachable for {secs:.0} s (last error: {last})")]
    Unreachable { secs: f64, last: String },
    /// A stop signal came while Redis did not answer.
    #[error("stopped while redis did not answer (last error: {last})")]
    Stopped { last: String },
    #[error("unexpected redis reply to {cmd}: {why}")]
    Reply { cmd: &'static str, why: String },
    #[error("payload: {0}")]
    Payload(#[from] payload::PayloadError),
    #[error("{0}")]
    Other(String),
}

/// Seconds since the Unix epoch (0 on a clock set before it): the time stamps of heartbeats,
/// model versions and the monitor's ages, which workers on other machines compare.
pub(crate) fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `--gpus 0,1`: device indices; empty input is an error, duplicates are refused.
pub fn parse_gpus(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let i: usize = part
            .parse()
            .map_err(|_| format!("--gpus: {part:?} is not a device index"))?;
        if out.contains(&i) {
            return Err(format!("--gpus: device {i} listed twice"));
        }
        out.push(i);
    }
    if out.is_empty() {
        return Err("--gpus: no device listed".into());
    }
    Ok(out)
}

/// The tch device for GPU index `i`, or the CPU when CUDA is not available (the same flags then
/// run CPU workers), saying so on stderr. Goes through `device::resolve`, which opens
/// `libtorch_cuda.so` first: asking tch alone reports no CUDA even on a GPU machine, and every
/// `--gpus` worker would then have run on the CPU without a word.
pub fn device_for(i: usize) -> tch::Device {
    match crate::support::device::resolve(crate::support::device::DeviceArg::Cuda(i)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("--gpus {i}: running on the CPU instead: {e}");
            tch::Device::Cpu
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_list() {
        assert_eq!(parse_gpus("0,1, 3").unwrap(), vec![0, 1, 3]);
        assert!(parse_gpus("").is_err());
        assert!(parse_gpus("0,x").is_err());
        assert!(parse_gpus("1,1").is_err());
        // Without CUDA every listed device runs on the CPU.
        if !tch::Cuda::is_available() {
            assert_eq!(device_for(0), tch::Device::Cpu);
        }
    }
}
