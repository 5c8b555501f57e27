#!/usr/bin/env bash
# Builds object-capi/tests/cpp/tvm_kernels.cc (a kernel library written with the real
# tvm-ffi headers) into OUTDIR/libtvm_kernels.so and prints the library's path.
# tvm-ffi is found through $TVM_FFI_CONFIG (the `tvm-ffi-config` executable of an
# `apache-tvm-ffi` install), else `tvm-ffi-config` on PATH. The library is linked to
# that install's libtvm_ffi.so with an rpath, so it loads without LD_LIBRARY_PATH.
# (-Wno-unused-parameter: the metadata getters of tvm-ffi's export macro ignore theirs.)
#
#   TVM_FFI_CONFIG=target/tvm-ffi-venv/bin/tvm-ffi-config bash scripts/build_tvm_kernels.sh /tmp/k
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: build_tvm_kernels.sh OUTDIR}"
config="${TVM_FFI_CONFIG:-$(command -v tvm-ffi-config || true)}"
if [ -z "$config" ]; then
    echo "build_tvm_kernels.sh: no tvm-ffi-config (set TVM_FFI_CONFIG or put it on PATH)" >&2
    exit 1
fi
cxx="${CXX:-g++}"
mkdir -p "$out"
libdir="$("$config" --libdir)"
# shellcheck disable=SC2046 # the flags are words
"$cxx" -shared -fPIC -O1 -g -Wall -Wextra -Wno-unused-parameter -Werror \
    -DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1 \
    $("$config" --cxxflags) \
    "$here/object-capi/tests/cpp/tvm_kernels.cc" \
    -o "$out/libtvm_kernels.so" \
    $("$config" --ldflags) $("$config" --libs) "-Wl,-rpath,$libdir"
echo "$out/libtvm_kernels.so"
