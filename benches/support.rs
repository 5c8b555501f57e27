//! What the benches share: the optional bridge to tvm-ffi's C++ runtime
//! ([`tvm_ffi_cpp`]: its `String` and its packed call, built when `TVM_FFI_ROOT` is set;
//! see `build.rs`).

/// tvm-ffi's C++ `String`, through the shim `build.rs` compiles when `TVM_FFI_ROOT` is
/// set (`cpp/tvmffi_peer.cc`).
#[cfg(tvm_ffi_cpp)]
pub mod tvm_ffi_cpp {
    use std::time::{Duration, Instant};

    extern "C" {
        fn tvmffi_bench_string_new(data: *const u8, size: usize, iters: u64) -> usize;
        fn tvmffi_bench_packed_add(iters: u64) -> i64;
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

    /// The time of `iters` calls of a C++ `tvm::ffi::Function` adding two ints (the
    /// peer's packed call), in one C++ loop.
    pub fn packed_add(iters: u64) -> Duration {
        let start = Instant::now();
        // SAFETY: the shim takes no pointers; it calls a function it made itself.
        let total = unsafe { tvmffi_bench_packed_add(iters) };
        let elapsed = start.elapsed();
        // The sum of `i + 2` over `i < iters`.
        let expected = (iters as i64).wrapping_mul(iters as i64 - 1) / 2 + 2 * iters as i64;
        assert_eq!(total, expected);
        elapsed
    }
}
