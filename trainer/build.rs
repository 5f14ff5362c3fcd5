//! Build script: every binary and test of this crate links libtorch, so it needs an rpath to the
//! libtorch folder (`rustc-link-arg` from torch-sys does not reach our binaries). The folder is
//! also compiled in so the trainer can find `libtorch_cuda.so` at start (see `device.rs`).

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    if let Ok(dir) = std::env::var("LIBTORCH") {
        let lib = std::path::Path::new(&dir).join("lib");
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
        println!("cargo:rustc-env=FIVEZERO_LIBTORCH_LIB={}", lib.display());
    } else {
        println!("cargo:rustc-env=FIVEZERO_LIBTORCH_LIB=");
    }
}
