//! What the benches share: the optional bridge to tvm-ffi's C++ runtime
//! (`tvm_ffi_cpp`: its `String`, its packed call and its exact type check, built when
//! `TVM_FFI_ROOT` is set; see `build.rs`), and the optimization barriers the
//! self-timed loops put where the C++ loops put `asm volatile("" : "+r"(p))`
//! ([`opaque_ptr`], [`opaque_i64`]) or `asm("" : "+r"(p) : "r"(i))` ([`opaque_at`]).

/// `x`, which the optimizer can no longer see through: it stays in a register (where
/// `std::hint::black_box` stores it to memory and loads it back), as the C++ loops'
/// barrier keeps their values, so that a loop of ours and one of theirs pay the same.
#[inline(always)]
pub fn opaque_i64(mut x: i64) -> i64 {
    // SAFETY: the assembly is empty: it neither reads nor writes memory, nor changes
    // `x` (the compiler only assumes it may have).
    unsafe {
        core::arch::asm!("/* {0} */", inout(reg) x, options(nomem, nostack, preserves_flags))
    };
    x
}

/// `p`, kept in a register and opaque to the optimizer, as [`opaque_i64`] keeps an
/// integer.
#[inline(always)]
#[allow(
    clippy::pointers_in_nomem_asm_block,
    reason = "the assembly is empty: the pointer only passes through a register"
)]
pub fn opaque_ptr<T>(mut p: *mut T) -> *mut T {
    // SAFETY: the assembly is empty: it neither reads nor writes memory, nor changes
    // `p` (the compiler only assumes it may have).
    unsafe {
        core::arch::asm!("/* {0} */", inout(reg) p, options(nomem, nostack, preserves_flags))
    };
    p
}

/// `r`, its address opaque to the optimizer in round `i` of a loop: the address is
/// taken as a new value each round, as if it came from an array, but unlike
/// [`opaque_ptr`] the barrier is no side effect (`pure`: a function of `r` and `i`), so it
/// does not stop the optimizer from moving a loop-invariant read out of the loop.
/// An `asm volatile` barrier (or `opaque_ptr`) may, as far as the optimizer knows, never
/// return, so only reads that are safe to do early anyway (a plain load of a global)
/// may be moved above it: a real loop has no such barrier. The C++ loop it is set
/// against uses the same barrier, `asm("" : "+r"(p) : "r"(i))`.
#[inline(always)]
#[allow(
    clippy::pointers_in_nomem_asm_block,
    reason = "the assembly is empty: the pointer only passes through a register"
)]
pub fn opaque_at<T>(r: &T, i: u64) -> &T {
    let mut p = (r as *const T).cast_mut();
    // SAFETY: the assembly is empty: it neither reads nor writes memory, nor changes
    // `p` (the compiler only assumes it may have, as a function of `p` and `i`).
    unsafe {
        core::arch::asm!(
            "/* {0} {1} */",
            inout(reg) p,
            in(reg) i,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    // SAFETY: `p` is `r`'s address, unchanged, so it points to the live value `r`
    // borrows, for `r`'s lifetime; it is only read.
    unsafe { &*p }
}

/// tvm-ffi's C++ `String`, through the shim `build.rs` compiles when `TVM_FFI_ROOT` is
/// set (`cpp/tvmffi_peer.cc`).
#[cfg(tvm_ffi_cpp)]
pub mod tvm_ffi_cpp {
    use std::time::{Duration, Instant};

    extern "C" {
        fn tvmffi_bench_string_new(data: *const u8, size: usize, iters: u64) -> usize;
        fn tvmffi_bench_packed_add(iters: u64) -> i64;
        fn tvmffi_bench_is_final(iters: u64) -> u64;
    }

    /// The time of `iters` exact type checks (`IsInstance<T>()` of an object of the
    /// final type `T`) in one C++ loop.
    pub fn is_final(iters: u64) -> Duration {
        let start = Instant::now();
        // SAFETY: the shim takes no pointers; it checks an object it made itself.
        let hits = unsafe { tvmffi_bench_is_final(iters) };
        let elapsed = start.elapsed();
        assert_eq!(hits, iters, "every check answers true");
        elapsed
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
