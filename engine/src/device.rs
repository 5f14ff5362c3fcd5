//! `Device`: where a network runs (`cpu`, `cuda`, `cuda:N`). Outside `eval::onnx` so the engine
//! built without ONNX Runtime (no `onnx` feature) still parses and carries the setting.
//!
//! Depends on nothing: no runtime is named here.

use std::fmt;
use std::str::FromStr;

/// Where inference runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Device {
    #[default]
    Cpu,
    /// CUDA device ordinal.
    Cuda(i32),
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

crate::serde_via_str!(Device);

impl FromStr for Device {
    type Err = String;
    /// "cpu", "cuda" (device 0) or "cuda:N".
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "cpu" => Ok(Device::Cpu),
            "cuda" | "gpu" => Ok(Device::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse::<i32>().ok())
                .filter(|&n| n >= 0)
                .map(Device::Cuda)
                .ok_or_else(|| format!("unknown device `{s}` (expected cpu, cuda or cuda:N)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_parses() {
        assert_eq!("cpu".parse::<Device>().unwrap(), Device::Cpu);
        assert_eq!("CUDA".parse::<Device>().unwrap(), Device::Cuda(0));
        assert_eq!("cuda:3".parse::<Device>().unwrap(), Device::Cuda(3));
        assert!("cuda:-1".parse::<Device>().is_err());
        assert!("tpu".parse::<Device>().is_err());
        assert_eq!(Device::Cuda(2).to_string(), "cuda:2");
    }
}
