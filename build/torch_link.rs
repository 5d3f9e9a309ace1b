//! Build script shared by the crates that link LibTorch: an rpath to its
//! `lib/` folder, so binaries start without LD_LIBRARY_PATH, and
//! `libtorch_cuda.so` kept against the linker's `--as-needed` (otherwise the
//! CUDA backend is never registered and a GPU box silently runs on the CPU).
//! The CUDA library is linked only when the wheel's CUDA dependencies are
//! installed beside it.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=LIBTORCH");
    let Ok(dir) = std::env::var("LIBTORCH") else { return };
    let Ok(torch) = std::fs::canonicalize(&dir) else { return };
    let lib = torch.join("lib");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    let cuda_deps = torch.parent().map(|site| site.join("nvidia")).is_some_and(|p| p.is_dir());
    if lib.join("libtorch_cuda.so").exists() && cuda_deps && Path::new(&lib).is_dir() {
        println!("cargo:rustc-link-arg=-L{}", lib.display());
        println!("cargo:rustc-link-arg=-Wl,--no-as-needed,-ltorch_cuda,--as-needed");
    }
}
