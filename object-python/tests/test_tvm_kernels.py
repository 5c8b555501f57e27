"""A kernel library built with the real tvm-ffi headers, loaded with ``load_module``
beside tvm-ffi's own Python package in the same process.

``TVM_KERNELS`` names the library (``scripts/python.sh`` builds
``object-capi/tests/cpp/tvm_kernels.cc`` with ``scripts/build_tvm_kernels.sh``, against
the ``apache-tvm-ffi`` wheel it installs); without it the tests are skipped outside CI.
"""

import os

import numpy as np
import pytest

import object_python as op

KERNELS = os.environ.get("TVM_KERNELS")
if KERNELS is None and os.environ.get("CI"):
    raise RuntimeError("TVM_KERNELS is not set: scripts/python.sh sets it in CI")
pytestmark = pytest.mark.skipif(KERNELS is None, reason="TVM_KERNELS is not set")


@pytest.fixture(scope="module")
def m():
    return op.load_module(KERNELS)


def test_the_functions_are_discovered_from_the_library(m):
    assert m.name == "libtvm_kernels"
    assert {"add_int", "long_string", "make_tensor", "raise_value_error"} <= set(m.functions())
    assert not any(name.startswith("_") for name in m.functions())


def test_plain_values(m):
    assert m.add_int(40, 2) == 42
    assert m.mul_float(1.5, 2.0) == 3.0
    assert m.not_bool(True) is False
    assert m.return_none() is None
    assert m.dtype_bits(op.DataType("float16")) == 16
    assert m.echo_dtype(op.DataType("int8")) == op.DataType("int8")
    assert m.echo_device(op.Device("cpu:0")) == op.Device("cpu:0")


def test_strings_and_bytes(m):
    assert m.small_string() == "tiny"
    long = m.long_string(1 << 20)  # a tvm-ffi String object, copied and released
    assert isinstance(long, str) and len(long) == 1 << 20 and long[0] == "a"
    assert m.echo_string("with\0nul") == "with\0nul"
    assert m.string_size("x" * 1000) == 1000
    assert m.std_string_size("a\0b") == 3
    assert m.small_bytes() == b"\x01\x00\x02"
    assert m.echo_bytes(b"\x00\xff" * 100) == b"\x00\xff" * 100
    assert m.long_bytes(1 << 16) == b"\xff" * (1 << 16)


def test_shapes_and_tensors(m):
    assert list(m.make_shape(4)) == [1, 2, 3, 4]
    assert m.shape_numel(op.Shape([2, 3, 4])) == 24
    t = m.make_tensor(6)  # allocated by the kernel, imported through DLPack
    assert isinstance(t, op.NDArray) and t.shape == (6,)
    a = np.from_dlpack(t)
    assert a.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    # A kernel may write its tensor arguments: a shared array is refused, not raced.
    with pytest.raises(op.ObjectError, match="may write its tensor arguments"):
        m.sum_tensor(np.ones(3, dtype=np.float32))


def test_callbacks_both_ways(m):
    assert m.apply_twice(lambda x: 3 * x, 2) == 18
    assert m.apply_any(lambda s: s + "!", "hi") == "hi!"
    add5 = m.make_adder(5)  # a tvm-ffi Function, callable here
    assert add5(1) == 6

    def fail(x):
        raise KeyError(f"no {x}")

    with pytest.raises(KeyError, match="no 1"):
        m.apply_twice(fail, 1)


def test_errors_keep_their_kind(m):
    with pytest.raises(ValueError, match="boom 3") as err:
        m.raise_value_error(3)
    assert err.value.kind == "ValueError"
    with pytest.raises(TypeError, match="not a type I know"):
        m.raise_type_error()
    with pytest.raises(op.ObjectError) as err:
        m.raise_custom()
    assert err.value.kind == "KernelFault"
    with pytest.raises(op.ObjectError) as err:
        m.raise_std()
    assert err.value.kind == "InternalError" and "a std::exception" in str(err.value)
    # tvm-ffi's own argument check, with its message.
    with pytest.raises(TypeError, match="Mismatched type on argument #0"):
        m.add_int("x", 1)
    # An object this runtime has no form for is released and named.
    with pytest.raises(op.ObjectError, match="ffi.Array"):
        m.return_array()


def test_repeated_calls_release_what_they_return(m):
    before = op._native._live_objects()
    for _ in range(64):
        assert len(m.long_string(1 << 20)) == 1 << 20
        np.from_dlpack(m.make_tensor(1 << 18))
    assert op._native._live_objects() == before


def test_tvm_ffi_loads_the_same_library_in_the_same_process(m):
    tvm_ffi = pytest.importorskip("tvm_ffi")
    theirs = tvm_ffi.load_module(KERNELS)
    assert theirs["add_int"](40, 2) == m.add_int(40, 2)
    with pytest.raises(ValueError, match="boom 7"):
        theirs["raise_value_error"](7)
    with pytest.raises(ValueError, match="boom 7"):
        m.raise_value_error(7)
