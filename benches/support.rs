//! What the benches share: the optional bridge to tvm-ffi's C++ runtime
//! ([`tvm_ffi_cpp`], built when `TVM_FFI_ROOT` is set; see `build.rs`).

/// tvm-ffi's C++ `String`, through the shim `build.rs` compiles when `TVM_FFI_ROOT` is
/// set (`cpp/tvmffi_string.cc`).
#[cfg(tvm_ffi_cpp)]
pub mod tvm_ffi_cpp {
    use std::time::{Duration, Instant};

    extern "C" {
        fn tvmffi_bench_string_new(data: *const u8, size: usize, iters: u64) -> usize;
    }

    /// The time of `iters` rounds of `tvm::ffi::String(s)` + drop, in one C++ loop.
    pub fn string_new(s: &str, iters: u64) -> Duration {
        let start = Instant::now();
        // SAFETY: `s` is readable for `s.len()` bytes for the call; the shim only
        // copies from it.
        let total = unsafe { tvmffi_bench_string_new(s.as_ptr(), s.len(), iters) };
        let elapsed = start.elapsed();
        assert_eq!(total as u64, s.len() as u64 * iters);
        elapsed
    }
}
