"""Benchmarks of the Python bindings, each beside a plain pyo3 counterpart built into the
same extension and, when its package is installed (`pip install apache-tvm-ffi pytest`:
its `testing` module imports pytest),
tvm-ffi's Python package, in one process and one run. The columns of a row take
turns in each of the rounds (best of 7 each).

    MATURIN_PEP517_ARGS="--features testing" pip install ./object-python
    python object-python/bench/bench.py

It needs the extension built with the crate's `testing` feature (the `testing.*`
globals and the plain pyo3 functions below are compiled only then; the wheel a user
installs has none of them), as the first line does: a release build, with the
`testing` feature in place of pyproject.toml's features (so without `live-count`'s
atomic count of live objects, which is for the tests' leak checks).

The plain pyo3 counterparts: a no-op `#[pyfunction]`, `add(i64, i64)`, a
`#[pyclass]` with one `#[pyo3(get)]` integer field built by keyword, and a function
that takes a float32 array's data address through the buffer protocol (`PyBuffer`,
what `testing.tensor_data_ptr` returns; a function taking only the array's `len()` is
printed below the table).

The tvm-ffi counterparts: `testing.nop` (no-op), `add` from a C library written to the
tvm-ffi convention (object-capi/tests/c/tvmffi_lib.c, compiled here with `cc` and
loaded with `tvm_ffi.load_module`), a field read and a construction of
`tvm_ffi.testing.TestIntPair` (two int fields, built positionally), and `testing.nop`
taking a NumPy array (which tvm-ffi converts through DLPack; ours reads an exact
`numpy.ndarray` in place, see `object-python/src/numpy_struct.rs`), and its global
`ffi.Array(1, 2, 3)` for the call returning a container (ours: `testing.make_array`,
an `Array` of its arguments; plain pyo3: a function returning a list). The last row
calls that C library's `add` through each package's loader (`op.load_module` and
`tvm_ffi.load_module`), the plain pyo3 `add` beside them.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import object_python as op
from object_python import _native

ROUNDS = 7


def per_op(fn, n):
    """The best of ROUNDS runs of ``fn(n)`` (a loop of n operations), in ns per op."""
    return per_op_in_turn([fn], n)[0]


def per_op_in_turn(fns, n):
    """The best of ROUNDS runs of each ``fn(n)``, in ns per op, the functions taking
    turns within each round: a slow phase of the machine (they last seconds here, and
    once made a row 1.5-2x slower on both of its first two columns) meets all of a
    row's columns alike instead of one of them."""
    best = [float("inf")] * len(fns)
    for _ in range(ROUNDS):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter_ns()
            fn(n)
            best[i] = min(best[i], (time.perf_counter_ns() - t0) / n)
    return best


def loop_empty(n):
    for _ in range(n):
        pass


def kernel_library():
    """object-capi/tests/c/tvmffi_lib.c (packed functions in tvm-ffi's convention),
    compiled here, or None without a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    src = os.path.join(os.path.dirname(__file__), "..", "..", "object-capi", "tests", "c", "tvmffi_lib.c")
    if not cc or not os.path.exists(src):
        return None
    lib = os.path.join(tempfile.mkdtemp(), "tvmffi_lib.so")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", lib, src], check=True)
    return lib


def tvm_ffi_rows(a, lib):
    """tvm-ffi's counterpart of each row (None where it cannot be measured), and its
    version; all None if the package is not installed."""
    try:
        import tvm_ffi
        import tvm_ffi.testing as tt  # which imports pytest
    except ImportError as e:
        return None, f"not measured ({e})"
    nop = tvm_ffi.get_global_func("testing.nop")
    add = tvm_ffi.load_module(lib)["add"] if lib else None
    pair = tt.TestIntPair(3, 4)
    TestIntPair = tt.TestIntPair

    def noop(n):
        for _ in range(n):
            nop()

    def add_(n):
        for _ in range(n):
            add(1, 2)

    def field(n):
        for _ in range(n):
            pair.a

    def make(n):
        for _ in range(n):
            TestIntPair(3, 4)

    def array(n):
        for _ in range(n):
            nop(a)

    make_array = tvm_ffi.get_global_func("ffi.Array")

    def container(n):
        for _ in range(n):
            make_array(1, 2, 3)

    # The same kernel, loaded by each package: tvm-ffi's loader against ours.
    # (None for the keyword row: tvm-ffi's functions take no keyword arguments.)
    return [noop, add_ if add else None, field, make, array, None, container, add_ if add else None], tvm_ffi.__version__


def main():
    if not _native._testing:
        sys.exit(
            "object_python was built without the `testing` feature, which the benchmarks "
            'call into: MATURIN_PEP517_ARGS="--features testing" pip install ./object-python'
        )
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    tour = op.namespace("tour")
    noop = op.get_global("testing.noop")
    add = op.get_global("testing.add")
    data_ptr = op.get_global("testing.tensor_data_ptr")
    plain_noop = _native._bench_plain_noop
    plain_add = _native._bench_plain_add
    plain_len = _native._bench_plain_len
    plain_buffer_ptr = _native._bench_plain_buffer_ptr
    Point = _native._BenchPlainPoint
    IntImm = tour.IntImm
    p = Point(value=3)
    imm = IntImm(value=3)
    a = np.zeros(16, dtype=np.float32)

    def ours_noop(n):
        for _ in range(n):
            noop()

    def plain_noop_(n):
        for _ in range(n):
            plain_noop()

    def ours_add(n):
        for _ in range(n):
            add(1, 2)

    def plain_add_(n):
        for _ in range(n):
            plain_add(1, 2)

    add_sig = op.get_global("tour.add")  # (x, y=1), declared in Rust

    def ours_add_positional(n):
        for _ in range(n):
            add_sig(1, 2)

    def ours_add_keyword(n):
        for _ in range(n):
            add_sig(1, y=2)

    def ours_add_default(n):
        for _ in range(n):
            add_sig(1)

    def plain_add_keyword(n):
        for _ in range(n):
            plain_add(1, b=2)

    def ours_field(n):
        for _ in range(n):
            imm.value

    def plain_field(n):
        for _ in range(n):
            p.value

    def ours_make(n):
        for _ in range(n):
            IntImm(value=3)

    def plain_make(n):
        for _ in range(n):
            Point(value=3)

    def ours_array(n):
        for _ in range(n):
            data_ptr(a)

    def plain_array(n):
        for _ in range(n):
            plain_buffer_ptr(a)

    make_array = op.get_global("testing.make_array")
    plain_list = _native._bench_plain_list

    def ours_container(n):
        for _ in range(n):
            make_array(1, 2, 3)

    def plain_container(n):
        for _ in range(n):
            plain_list(1, 2, 3)

    def plain_len_(n):
        for _ in range(n):
            plain_len(a)

    plain_detach = _native._bench_plain_detach

    def plain_detach_(n):
        for _ in range(n):
            plain_detach()

    lib = kernel_library()
    kernel_add = op.load_module(lib)["add"] if lib else None

    def ours_kernel_add(n):
        for _ in range(n):
            kernel_add(1, 2)

    tvm, tvm_version = tvm_ffi_rows(a, lib)
    base = per_op(loop_empty, n)
    rows = [
        ("no-op call", ours_noop, plain_noop_),
        ("add(int, int)", ours_add, plain_add_),
        ("field read", ours_field, plain_field),
        ("construct an object", ours_make, plain_make),
        ("call taking a NumPy array", ours_array, plain_array),
        ("add(1, y=2) (keyword)", ours_add_keyword, plain_add_keyword),
        ("call returning a container", ours_container, plain_container),
    ]
    if kernel_add is not None:
        # A C kernel in tvm-ffi's convention, loaded with op.load_module (ours) and
        # tvm_ffi.load_module (tvm-ffi); plain pyo3's add beside them.
        rows.append(("tvm-ffi kernel add(int, int)", ours_kernel_add, plain_add_))
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {n} ops per run, best of {ROUNDS}; loop overhead {base:.1f} ns subtracted")
    print(f"tvm-ffi {tvm_version}" if tvm else f"tvm-ffi: {tvm_version} (pip install apache-tvm-ffi pytest)")
    print(f"{'operation':28} {'ours ns':>9} {'plain pyo3 ns':>14} {'ratio':>7} {'tvm-ffi ns':>11} {'ratio':>7}")
    for i, (name, ours, plain) in enumerate(rows):
        t = tvm[i] if tvm else None
        times = per_op_in_turn([ours, plain] + ([t] if t is not None else []), n)
        o, q = times[0] - base, times[1] - base
        line = f"{name:28} {o:9.1f} {q:14.1f} {o / q:7.2f}"
        if t is not None:
            tn = times[2] - base
            line += f" {tn:11.1f} {o / tn:7.2f}"
        print(line)
    # The keyword call beside the positional call of the same function (the target: at
    # most 2x), and a call that leaves out `y` (its default filled by the entry point).
    pos, kw, dflt = per_op_in_turn([ours_add_positional, ours_add_keyword, ours_add_default], n)
    pos, kw, dflt = pos - base, kw - base, dflt - base
    print(f"(tour.add: positional {pos:.1f} ns, keyword {kw:.1f} ns ({kw / pos:.2f}x), default {dflt:.1f} ns ({dflt / pos:.2f}x))")
    d = per_op(plain_detach_, n) - base
    print(f"(a plain pyo3 function that only releases and retakes the GIL: {d:.1f} ns)")
    ln = per_op(plain_len_, n) - base
    print(f"(a plain pyo3 function taking the array's len(), no buffer: {ln:.1f} ns)")


if __name__ == "__main__":
    main()
