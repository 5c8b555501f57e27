import sys

import numpy as np
import pytest

import object_python as op

tensor_sum = op.get_global("testing.tensor_sum")
data_ptr = op.get_global("testing.tensor_data_ptr")
read_only = op.get_global("testing.tensor_read_only")


def test_zero_copy_from_numpy_and_deleter_once():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    before = sys.getrefcount(a)
    t = op.from_dlpack(a)
    assert isinstance(t, op.NDArray) and t.data_ptr == a.ctypes.data
    assert sys.getrefcount(a) == before + 1  # NumPy's export holds the array
    a[0, 0] = 42.0
    assert tensor_sum(t) == sum(range(12)) + 42.0
    del t
    assert sys.getrefcount(a) == before  # the deleter ran, once


def test_zero_copy_to_numpy():
    t = op.empty([2, 3], "float32")
    b = np.from_dlpack(t)
    assert b.ctypes.data == t.data_ptr and b.shape == (2, 3) and b.dtype == np.float32
    b[1, 2] = 5.0
    assert tensor_sum(t) == 5.0
    c = t.numpy()
    assert c.ctypes.data == t.data_ptr
    del t
    assert b[1, 2] == 5.0  # NumPy keeps the tensor alive


def test_round_trip_is_the_same_memory():
    a = np.ones((4, 4), dtype=np.int32)
    back = np.from_dlpack(op.from_dlpack(a))
    assert back.ctypes.data == a.ctypes.data
    back[0, 0] = 9
    assert a[0, 0] == 9


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "int64", "uint8", "uint16", "bool", "float16", "complex64"])
def test_dtypes(dtype):
    a = np.zeros((2, 3), dtype=dtype)
    t = op.from_dlpack(a)
    assert str(t.dtype) == dtype or (dtype == "bool" and str(t.dtype).startswith("bool"))
    back = np.from_dlpack(t)
    assert back.dtype == a.dtype and back.ctypes.data == a.ctypes.data


def test_strides():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)[::2, 1::2]
    t = op.from_dlpack(a)
    assert t.shape == (2, 3) and t.strides == (12, 2)
    assert t.data_ptr == a.ctypes.data
    back = np.from_dlpack(t)
    np.testing.assert_array_equal(back, a)
    assert back.strides == a.strides


def test_tensor_parameter_takes_numpy_directly():
    a = np.arange(5, dtype=np.float64)
    before = sys.getrefcount(a)
    assert tensor_sum(a) == 10.0
    assert data_ptr(a) == a.ctypes.data
    assert sys.getrefcount(a) == before


def test_read_only_stays_read_only():
    a = np.arange(3.0)
    a.flags.writeable = False
    t = op.from_dlpack(a)
    assert t.read_only and read_only(a)
    back = np.from_dlpack(t)
    assert not back.flags.writeable
    with pytest.raises(BufferError):
        t.__dlpack__()  # the legacy struct cannot say read-only
    del back, t


def test_capsule_versions_follow_max_version():
    t = op.empty([3])
    legacy = t.__dlpack__()
    assert 'dltensor"' in repr(legacy) and "versioned" not in repr(legacy)
    versioned = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(versioned)
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(2, 0)))
    assert 'dltensor"' in repr(t.__dlpack__(max_version=(0, 8)))
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    del legacy, versioned  # unconsumed capsules release their export


def test_legacy_only_producer():
    a = np.arange(4, dtype=np.int64)

    class Legacy:
        def __dlpack__(self):
            return a.__dlpack__()

        def __dlpack_device__(self):
            return a.__dlpack_device__()

    t = op.from_dlpack(Legacy())
    assert t.data_ptr == a.ctypes.data and tensor_sum(t) == 6.0


def test_tensors_in_containers_and_threads():
    a = np.arange(1000, dtype=np.float64)
    arr = op.Array([a, a])
    assert arr[0].data_ptr == a.ctypes.data == arr[1].data_ptr
    total = op.get_global("testing.call_in_threads")(lambda t, i: int(tensor_sum(arr[0])), 3, 5)
    assert total == 15 * int(a.sum())


def test_values_after_the_dlpack_type_is_remembered():
    # The first type converted through __dlpack__ (NumPy's) is checked first from then
    # on; other values and other producers still convert as before.
    tensor_sum = op.get_global("testing.tensor_sum")
    echo = op.get_global("testing.echo")
    a = np.arange(4, dtype=np.float64)
    assert tensor_sum(a) == 6.0 and tensor_sum(a) == 6.0
    assert list(echo([1, 2.5, "x"])) == [1, 2.5, "x"]
    assert echo(3) == 3 and echo(None) is None and echo(True) is True

    class Producer:
        def __init__(self, arr):
            self.arr = arr

        def __dlpack__(self, **kwargs):
            return self.arr.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.arr.__dlpack_device__()

    assert tensor_sum(Producer(np.ones(3))) == 3.0
    assert tensor_sum(a) == 6.0
