// A kernel library built with the real tvm-ffi headers (the `apache-tvm-ffi` wheel):
// every function is exported with TVM_FFI_DLL_EXPORT_TYPED_FUNC as `__tvm_ffi_<name>`,
// and with TVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1 (set by scripts/build_tvm_kernels.sh)
// each one also gets `__tvm_ffi__metadata_<name>`; some get `__tvm_ffi__doc_<name>`.
//
// Built and loaded by object-capi/tests/tvm_ffi_real.rs and tests/c/tvm_kernels.c, one
// kernel per value kind and per error the tests check.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace ffi = tvm::ffi;

namespace {

// Plain values.
int64_t AddInt(int64_t a, int64_t b) { return a + b; }
double MulFloat(double a, double b) { return a * b; }
bool NotBool(bool b) { return !b; }
void ReturnNone() {}
DLDataType EchoDType(DLDataType t) { return t; }
int64_t DTypeBits(DLDataType t) { return t.bits; }
DLDevice EchoDevice(DLDevice d) { return d; }

// Strings: a small one (inline), a long one (an ffi.String object), echoes.
ffi::String SmallString() { return ffi::String("tiny"); }
ffi::String LongString(int64_t n) {
  std::string s(static_cast<size_t>(n), 'x');
  for (size_t i = 0; i < s.size(); i += 97) s[i] = static_cast<char>('a' + (i / 97) % 26);
  return ffi::String(std::move(s));
}
ffi::String EchoString(ffi::String s) { return s; }
int64_t StringSize(ffi::String s) { return static_cast<int64_t>(s.size()); }
int64_t StdStringSize(std::string s) { return static_cast<int64_t>(s.size()); }
int64_t CStrLen(const char* s) { return static_cast<int64_t>(std::string(s).size()); }

// Bytes: a small one (inline) and an echo.
ffi::Bytes SmallBytes() { return ffi::Bytes(std::string("\x01\x00\x02", 3)); }
ffi::Bytes EchoBytes(ffi::Bytes b) { return b; }
ffi::Bytes LongBytes(int64_t n) { return ffi::Bytes(std::string(static_cast<size_t>(n), '\xff')); }

// Shapes.
ffi::Shape MakeShape(int64_t n) {
  std::vector<int64_t> dims;
  for (int64_t i = 1; i <= n; ++i) dims.push_back(i);
  return ffi::Shape(dims);
}
int64_t ShapeNumel(ffi::Shape s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Tensors: one allocated here (float32, [n], element i = i / 2), and a
// destination-passing add on float32 tensors of one dimension.
struct CPUAlloc {
  void AllocData(DLTensor* t) { t->data = std::malloc(ffi::GetDataSize(*t)); }
  void FreeData(DLTensor* t) { std::free(t->data); }
};
ffi::Tensor MakeTensor(int64_t n) {
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(CPUAlloc(), ffi::Shape({n}), DLDataType{kDLFloat, 32, 1},
                                           DLDevice{kDLCPU, 0});
  float* d = static_cast<float*>(t.data_ptr());
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(i) / 2.0f;
  return t;
}
void AddInto(ffi::TensorView a, ffi::TensorView b, ffi::TensorView out) {
  TVM_FFI_CHECK(a.ndim() == 1 && b.ndim() == 1 && out.ndim() == 1, ValueError)
      << "add_into: one-dimensional tensors only";
  TVM_FFI_CHECK(a.size(0) == b.size(0) && a.size(0) == out.size(0), ValueError)
      << "add_into: shapes differ";
  const float* x = static_cast<const float*>(a.data_ptr());
  const float* y = static_cast<const float*>(b.data_ptr());
  float* z = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < a.size(0); ++i) z[i] = x[i] + y[i];
}
double SumTensor(ffi::TensorView a) {
  TVM_FFI_CHECK(a.ndim() == 1 && a.dtype().code == kDLFloat && a.dtype().bits == 32, TypeError)
      << "sum_tensor: a one-dimensional float32 tensor";
  const float* x = static_cast<const float*>(a.data_ptr());
  double s = 0;
  for (int64_t i = 0; i < a.size(0); ++i) s += x[i];
  return s;
}

// Callbacks: the caller's function, called here.
int64_t ApplyTwice(ffi::Function f, int64_t x) {
  int64_t once = f(x).cast<int64_t>();
  return f(once).cast<int64_t>();
}
ffi::Any ApplyAny(ffi::Function f, ffi::Any x) { return f(x); }
ffi::Function MakeAdder(int64_t k) {
  return ffi::Function::FromTyped([k](int64_t x) { return x + k; });
}

// Errors.
int64_t RaiseValueError(int64_t x) {
  TVM_FFI_THROW(ValueError) << "boom " << x;
  return 0;
}
void RaiseTypeError() { TVM_FFI_THROW(TypeError) << "not a type I know"; }
void RaiseCustom() { TVM_FFI_THROW(KernelFault) << "a kind of the kernel's own"; }
void RaiseStd() { throw std::runtime_error("a std::exception"); }

// An object this runtime has no form for.
ffi::Array<int64_t> ReturnArray() { return ffi::Array<int64_t>({1, 2, 3}); }

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_int, AddInt);
TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC(add_int, "Adds two integers.");
TVM_FFI_DLL_EXPORT_TYPED_FUNC(mul_float, MulFloat);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(not_bool, NotBool);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(return_none, ReturnNone);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_dtype, EchoDType);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_bits, DTypeBits);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_device, EchoDevice);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(small_string, SmallString);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(long_string, LongString);
TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC(long_string, "A string of n bytes.");
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_string, EchoString);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(string_size, StringSize);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(std_string_size, StdStringSize);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(cstr_len, CStrLen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(small_bytes, SmallBytes);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_bytes, EchoBytes);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(long_bytes, LongBytes);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_shape, MakeShape);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shape_numel, ShapeNumel);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_tensor, MakeTensor);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_into, AddInto);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum_tensor, SumTensor);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_twice, ApplyTwice);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(apply_any, ApplyAny);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_adder, MakeAdder);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_value_error, RaiseValueError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_type_error, RaiseTypeError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_custom, RaiseCustom);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_std, RaiseStd);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(return_array, ReturnArray);
