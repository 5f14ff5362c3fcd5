//! Choosing where the network runs: `--device auto|cpu|cuda|cuda:N`. CUDA comes from the same
//! binary when a full libtorch is installed: `libtorch_cuda.so` is opened at start (before the
//! first tch call) so its kernels register; with the CPU-only layout it is simply absent.
//!
//! Depends on tch and libloading only; knows nothing of games or training.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// What the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DeviceArg {
    #[default]
    Auto,
    Cpu,
    Cuda(usize),
}

impl FromStr for DeviceArg {
    type Err = String;
    /// "auto", or a device in the grammar of `engine::device::Device` (cpu, cuda, cuda:N).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().eq_ignore_ascii_case("auto") {
            return Ok(DeviceArg::Auto);
        }
        match s.parse::<engine::device::Device>() {
            Ok(engine::device::Device::Cpu) => Ok(DeviceArg::Cpu),
            Ok(engine::device::Device::Cuda(i)) => Ok(DeviceArg::Cuda(i as usize)),
            Err(_) => Err(format!(
                "unknown device `{}` (expected auto, cpu, cuda or cuda:N)",
                s.trim()
            )),
        }
    }
}

engine::serde_via_str!(DeviceArg);

impl fmt::Display for DeviceArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceArg::Auto => f.write_str("auto"),
            DeviceArg::Cpu => f.write_str("cpu"),
            DeviceArg::Cuda(i) => write!(f, "cuda:{i}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    #[error(
        "CUDA device {requested} was requested but {why}; use --device cpu or install the full \
         CUDA libtorch (pip install torch==2.13.0, then LIBTORCH=<site-packages>/torch)"
    )]
    CudaUnavailable { requested: usize, why: String },
}

/// Opens `libtorch_cuda.so` now, when one is there. Call it first thing in `main`: libtorch
/// looks its CUDA hooks up once, on the first call that asks (`tch::manual_seed` does), and keeps
/// the CPU-only stub for good when the library was not loaded by then ("0 CUDA devices" on a GPU
/// machine, seen on the lent H200).
pub fn load_cuda_early() {
    let _ = cuda_load();
}

/// Why CUDA could not be loaded (None when it loaded). Computed once per process.
fn cuda_load() -> &'static Option<String> {
    static LOADED: OnceLock<Option<String>> = OnceLock::new();
    LOADED.get_or_init(|| {
        let baked = env!("FIVEZERO_LIBTORCH_LIB");
        let mut candidates = Vec::new();
        if let Ok(dir) = std::env::var("LIBTORCH") {
            candidates.push(std::path::Path::new(&dir).join("lib/libtorch_cuda.so"));
        }
        if !baked.is_empty() {
            candidates.push(std::path::Path::new(baked).join("libtorch_cuda.so"));
        }
        let mut last = "libtorch_cuda.so not found (CPU-only libtorch)".to_string();
        for path in candidates
            .iter()
            .map(|p| p.as_os_str().to_owned())
            .chain(["libtorch_cuda.so".into()])
        {
            // RTLD_GLOBAL so libtorch's registry sees the CUDA kernels; never closed (leaked on
            // purpose: unloading a torch backend while tensors live would be unsound).
            let flags = libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_GLOBAL;
            match unsafe { libloading::os::unix::Library::open(Some(&path), flags) } {
                Ok(lib) => {
                    std::mem::forget(lib);
                    return None;
                }
                Err(e) => {
                    if std::path::Path::new(&path).exists() {
                        last = format!("loading {}: {e}", path.to_string_lossy());
                    }
                }
            }
        }
        Some(last)
    })
}

/// Resolves the argument to a tch device; says which one it is (`describe`).
pub fn resolve(arg: DeviceArg) -> Result<tch::Device, DeviceError> {
    match arg {
        DeviceArg::Cpu => Ok(tch::Device::Cpu),
        DeviceArg::Auto => {
            if cuda_load().is_none() && tch::Cuda::is_available() {
                Ok(tch::Device::Cuda(0))
            } else {
                Ok(tch::Device::Cpu)
            }
        }
        DeviceArg::Cuda(i) => {
            if let Some(why) = cuda_load() {
                return Err(DeviceError::CudaUnavailable {
                    requested: i,
                    why: why.clone(),
                });
            }
            let count = tch::Cuda::device_count();
            if count <= i as i64 {
                return Err(DeviceError::CudaUnavailable {
                    requested: i,
                    why: format!("{count} CUDA device(s) are visible"),
                });
            }
            Ok(tch::Device::Cuda(i))
        }
    }
}

/// "cpu (N threads)" or "cuda:N".
pub fn describe(d: tch::Device) -> String {
    match d {
        tch::Device::Cuda(i) => format!("cuda:{i}"),
        _ => format!("cpu ({} threads)", tch::get_num_threads()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_devices() {
        assert_eq!("auto".parse::<DeviceArg>().unwrap(), DeviceArg::Auto);
        assert_eq!("CPU".parse::<DeviceArg>().unwrap(), DeviceArg::Cpu);
        assert_eq!("cuda".parse::<DeviceArg>().unwrap(), DeviceArg::Cuda(0));
        assert_eq!("cuda:3".parse::<DeviceArg>().unwrap(), DeviceArg::Cuda(3));
        assert!("tpu".parse::<DeviceArg>().is_err());
        assert!("cuda:x".parse::<DeviceArg>().is_err());
    }
}
