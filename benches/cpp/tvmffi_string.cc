// The peer's side of `containers`' `string_new` group: tvm-ffi's C++ `String` made
// from `size` bytes and dropped, `iters` times (the loop lives here, so that no call
// across the language boundary is counted). Built and linked only when `TVM_FFI_ROOT`
// names tvm-ffi's Python package (see `benches/build.rs`).
#include <cstddef>
#include <cstdint>

#include <tvm/ffi/string.h>

extern "C" std::size_t tvmffi_bench_string_new(const char* data, std::size_t size,
                                               std::uint64_t iters) {
  std::size_t total = 0;
  for (std::uint64_t i = 0; i < iters; ++i) {
    // The source pointer is opaque to the optimizer on every round, as `black_box`
    // makes it on the Rust side.
    asm volatile("" : "+r"(data));
    tvm::ffi::String s(data, size);
    total += s.size();
    asm volatile("" : : "r"(s.data()) : "memory");
  }
  return total;
}
