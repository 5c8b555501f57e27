//! Optional: with `TVM_FFI_ROOT` set to tvm-ffi's Python package directory
//! (`python -c "import tvm_ffi, os; print(os.path.dirname(tvm_ffi.__file__))"`), builds
//! `cpp/tvmffi_peer.cc` against the package's C++ headers and `lib/libtvm_ffi.so`, so
//! that `containers`' `string_new` group measures the peer's 7-byte `String` in the same
//! run (`cfg(tvm_ffi_cpp)`). Without it nothing is built and that row is left out.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=TVM_FFI_ROOT");
    println!("cargo:rerun-if-changed=cpp/tvmffi_peer.cc");
    println!("cargo:rustc-check-cfg=cfg(tvm_ffi_cpp)");
    let Some(root) = std::env::var_os("TVM_FFI_ROOT").map(PathBuf::from) else {
        return;
    };
    let lib = root.join("lib");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .opt_level(2)
        .flag_if_supported("-falign-loops=64")
        .include(root.join("include"))
        .file("cpp/tvmffi_peer.cc")
        .compile("tvmffi_bench_shim");
    println!("cargo:rustc-link-search=native={}", lib.display());
    println!("cargo:rustc-link-lib=dylib=tvm_ffi");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    println!("cargo:rustc-cfg=tvm_ffi_cpp");
}
