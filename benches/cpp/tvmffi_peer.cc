// tvm-ffi's C++ runtime, timed in C++ loops for the benches to show beside ours (each
// loop times itself, so no call across the language boundary is counted). Built and
// linked only when `TVM_FFI_ROOT` names tvm-ffi's Python package (see
// `benches/build.rs`).
//
// `tvmffi_bench_string_new`: a `tvm::ffi::String` made from `size` bytes and dropped,
// `iters` times (`containers`' `string_new` group).
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

// The peer's packed call: a C++ `(int64, int64) -> int64` add made a
// `tvm::ffi::Function` and called `iters` times with two ints (arguments packed into
// `AnyView`s, the call through the function object's packed entry, the result read
// back), in a C++ loop that times nothing else. Beside `c_api_call_i64_i64` (the
// benches' `plugin` group).
#include <tvm/ffi/function.h>

extern "C" std::int64_t tvmffi_bench_packed_add(std::uint64_t iters) {
  static const tvm::ffi::Function add =
      tvm::ffi::Function::FromTyped([](std::int64_t a, std::int64_t b) { return a + b; });
  const tvm::ffi::Function* f = &add;
  std::int64_t total = 0;
  for (std::uint64_t i = 0; i < iters; ++i) {
    asm volatile("" : "+r"(f));
    std::int64_t a = static_cast<std::int64_t>(i), b = 2;
    asm volatile("" : "+r"(a), "+r"(b));
    total += (*f)(a, b).cast<std::int64_t>();
  }
  return total;
}

// The peer's exact type check: `IsInstance<T>()` of an object whose type is the final
// type `T` asked for, through the handle that holds it (`ref->IsInstance<T>()`, as
// C++ code checks an `ObjectRef`), `iters` times in a C++ loop. The handle's address
// is opaque to the optimizer on every round and kept in a register, as the Rust
// side's barrier keeps it (`benches/object.rs`' `type_check` group), so both loops
// read the handle, then the object's type index.
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>

namespace {
class BenchLeafObj : public tvm::ffi::Object {
 public:
  std::int64_t value = 1;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench.cpp.Leaf", BenchLeafObj, tvm::ffi::Object);
};
}  // namespace

extern "C" std::uint64_t tvmffi_bench_is_final(std::uint64_t iters) {
  static const tvm::ffi::ObjectRef leaf(tvm::ffi::make_object<BenchLeafObj>());
  const tvm::ffi::ObjectRef* ref = &leaf;
  std::uint64_t hits = 0;
  for (std::uint64_t i = 0; i < iters; ++i) {
    // Not `volatile`: a function of `ref` and `i` with no other effect (see
    // `opaque_at` in support.rs, the same barrier on our side).
    asm("" : "+r"(ref) : "r"(i));
    hits += (*ref)->IsInstance<BenchLeafObj>();
  }
  return hits;
}
