import ctypes
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


def test_zero_copy_to_numpy_is_read_only():
    # The tensor stays shared with its Python object (Rust code may be reading it
    # through a slice), so NumPy gets it read-only: no write can happen under a borrow.
    t = op.empty([2, 3], "float32")
    b = np.from_dlpack(t)
    assert b.ctypes.data == t.data_ptr and b.shape == (2, 3) and b.dtype == np.float32
    assert not b.flags.writeable
    with pytest.raises(ValueError):
        b[1, 2] = 5.0
    assert tensor_sum(t) == 0.0
    c = t.numpy()
    assert c.ctypes.data == t.data_ptr and not c.flags.writeable
    del t
    assert b[1, 2] == 0.0  # NumPy keeps the tensor alive


def test_round_trip_is_the_same_memory():
    a = np.ones((4, 4), dtype=np.int32)
    back = np.from_dlpack(op.from_dlpack(a))
    assert back.ctypes.data == a.ctypes.data
    assert not back.flags.writeable  # exported from a shared NDArray
    a[0, 0] = 9  # its owner still writes it
    assert back[0, 0] == 9


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
    # A shared tensor exports read-only, which only the versioned struct can say.
    with pytest.raises(BufferError, match="max_version"):
        t.__dlpack__()
    with pytest.raises(BufferError, match="max_version"):
        t.__dlpack__(max_version=(0, 8))
    versioned = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(versioned)
    assert "dltensor_versioned" in repr(t.__dlpack__(max_version=(2, 0)))
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    del versioned  # unconsumed capsules release their export


def test_legacy_only_producer():
    a = np.arange(4, dtype=np.int64)

    class Legacy:
        def __dlpack__(self):
            return a.__dlpack__()

        def __dlpack_device__(self):
            return a.__dlpack_device__()

    t = op.from_dlpack(Legacy())
    assert t.data_ptr == a.ctypes.data and tensor_sum(t) == 6.0



# A producer written with ctypes, whose capsules follow the DLPack Python protocol: the
# capsule's destructor calls the managed tensor's deleter unless a consumer renamed the
# capsule "used_...". Both structs, with the deleter and destructor counting calls.
class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device_type", ctypes.c_int32),
        ("device_id", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("code", ctypes.c_uint8),
        ("bits", ctypes.c_uint8),
        ("lanes", ctypes.c_uint16),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Versioned(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _DELETER),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


class _Legacy(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", _DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _DELETER),
    ]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
# Capsule names must outlive their capsules: module-level bytes.
_CAPSULE_NAMES = {False: b"dltensor_versioned", True: b"dltensor"}


class _CtypesProducer:
    """One managed tensor (3 doubles) in a capsule; `calls` records the deleter and
    the capsule destructor's calls on it."""

    def __init__(self, legacy, spoil=lambda m: None):
        self.calls = []
        self.data = (ctypes.c_double * 3)(1.0, 2.0, 3.0)
        self.shape = (ctypes.c_int64 * 1)(3)
        self.managed = _Legacy() if legacy else _Versioned(major=1, minor=1)
        t = self.managed.dl_tensor
        t.data = ctypes.addressof(self.data)
        t.device_type, t.ndim, t.code, t.bits, t.lanes = 1, 1, 2, 64, 1
        t.shape = self.shape
        self.deleter = _DELETER(lambda _m: self.calls.append("deleter"))
        self.managed.deleter = self.deleter
        spoil(self.managed)
        name = _CAPSULE_NAMES[legacy]

        def destroy(capsule):
            if _capsule_is_valid(capsule, name):
                self.calls.append("destructor")
                self.deleter(ctypes.addressof(self.managed))

        self.destructor = _DESTRUCTOR(destroy)
        self.capsule = _capsule_new(
            ctypes.addressof(self.managed), name, ctypes.cast(self.destructor, ctypes.c_void_p)
        )

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def _spoil_major(m):
    m.major = 2


def _spoil_ndim(m):
    m.dl_tensor.ndim = -1


def _spoil_lanes(m):
    m.dl_tensor.lanes = 0


def _spoil_shape(m):
    m.dl_tensor.shape = None


@pytest.mark.parametrize(
    "legacy, spoil, message",
    [
        (False, _spoil_major, "DLPack version 2.1 is not supported"),
        (False, _spoil_ndim, "ndim -1"),
        (True, _spoil_lanes, "unsupported data type"),
        (True, _spoil_shape, "shape pointer is null"),
    ],
)
def test_a_refused_capsule_stays_the_producers(legacy, spoil, message):
    # The refused import takes nothing: the capsule keeps its name, so the producer's
    # destructor frees the tensor, once, when the capsule goes.
    p = _CtypesProducer(legacy, spoil)
    with pytest.raises(BufferError, match=message):
        op.from_dlpack(p)
    assert p.calls == []
    assert repr(p.capsule).startswith(f'<capsule object "{_CAPSULE_NAMES[legacy].decode()}"')
    del p.capsule
    assert p.calls == ["destructor", "deleter"]


@pytest.mark.parametrize("legacy", [False, True])
def test_a_consumed_capsule_is_the_arrays(legacy):
    p = _CtypesProducer(legacy)
    t = op.from_dlpack(p)
    assert t.data_ptr == ctypes.addressof(p.data) and tensor_sum(t) == 6.0
    assert repr(p.capsule).startswith('<capsule object "used_')
    del p.capsule
    assert p.calls == []  # renamed: the destructor leaves the tensor alone
    del t
    assert p.calls == ["deleter"]

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


class _NotExactlyNumPy(np.ndarray):
    """A subclass: never read in place, so its import takes `__dlpack__`."""


def _described(t):
    return (t.shape, t.strides, str(t.dtype), t.data_ptr, t.read_only, t.ndim)


def _in_place_cases():
    base = np.arange(2 * 3 * 4, dtype=np.float64).reshape(2, 3, 4)
    ro = np.arange(6, dtype=np.int16)
    ro.flags.writeable = False
    cases = [
        base,
        base[:, ::2, 1:],  # strided
        base[::-1, :, ::-2],  # negative strides
        base.transpose(2, 0, 1),  # Fortran-like order
        np.array(3.5),  # zero dimensions
        np.zeros((0, 5), dtype=np.int32),  # no elements
        ro,  # read-only
        np.arange(10, dtype=np.uint8)[::3],
    ]
    for dtype in [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                  np.int64, np.uint64, np.intc, np.uint, np.longlong, np.float16,
                  np.float32, np.float64, np.complex64, np.complex128]:
        cases.append(np.ones((3, 2), dtype=dtype))
    return cases


@pytest.mark.parametrize("i", range(len(_in_place_cases())))
def test_numpy_read_in_place_agrees_with_dlpack(i):
    # An exact `numpy.ndarray` is read in place (its C struct, no `__dlpack__` call);
    # the same array seen through a subclass goes through `__dlpack__`: the two
    # imports describe the same memory alike.
    a = _in_place_cases()[i]
    before = sys.getrefcount(a)
    assert op._native._numpy_read_in_place(a)
    assert not op._native._numpy_read_in_place(a.view(_NotExactlyNumPy))
    fast = op.from_dlpack(a)
    slow = op.from_dlpack(a.view(_NotExactlyNumPy))
    assert _described(fast) == _described(slow)
    assert fast.data_ptr == a.__array_interface__["data"][0]
    assert fast.read_only == (not a.flags.writeable)
    back = np.from_dlpack(fast)
    assert back.shape == a.shape and back.dtype == a.dtype
    if a.size and str(a.dtype) in ("float32", "float64", "int32", "int64") and a.flags.c_contiguous:
        assert tensor_sum(fast) == pytest.approx(float(a.sum()))
    del fast, slow, back
    assert sys.getrefcount(a) == before  # the array's reference was let go, once


def test_numpy_arrays_the_in_place_path_leaves_to_dlpack():
    # A byte order other than the machine's, and an unaligned array: NumPy's own
    # `__dlpack__` answers (an error for the first, as NumPy gives; the second is
    # refused by the import's alignment check), with the same error as a subclass.
    swapped = np.arange(4, dtype=">i4" if sys.byteorder == "little" else "<i4")
    raw = np.zeros(4 * 8 + 1, dtype=np.uint8)
    unaligned = raw[1:].view(np.float64)
    for a in [swapped, unaligned]:
        assert not op._native._numpy_read_in_place(a)
        before = sys.getrefcount(a)
        with pytest.raises(Exception) as fast:
            op.from_dlpack(a)
        with pytest.raises(Exception) as slow:
            op.from_dlpack(a.view(_NotExactlyNumPy))
        assert type(fast.value) is type(slow.value)
        del fast, slow
        assert sys.getrefcount(a) == before
    # Structured and string arrays have no DLPack data type.
    for a in [np.zeros(3, dtype=[("x", np.int32)]), np.array(["ab", "c"])]:
        assert not op._native._numpy_read_in_place(a)
        with pytest.raises(Exception):
            data_ptr(a)


def test_a_module_posing_as_numpy_is_not_read_in_place():
    # In a fresh process (the real NumPy type is remembered once found): a fake `numpy`
    # in `sys.modules` naming `type` (a C type whose instances are large enough) must
    # not make a class object be read as an array — it goes through `__dlpack__`.
    import subprocess
    code = (
        "import sys, types\n"
        "sys.modules['numpy'] = types.SimpleNamespace(ndarray=type)\n"
        "import object_python as op\n"
        "class Fake:\n"
        "    def __dlpack__(self, **kw):\n"
        "        raise BufferError('asked through __dlpack__')\n"
        "assert not op._native._numpy_read_in_place(Fake)\n"
        "try:\n"
        "    op.from_dlpack(Fake())\n"
        "except BufferError as e:\n"
        "    assert '__dlpack__' in str(e)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_tensor_repr_and_attributes():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = op.from_dlpack(a)
    assert repr(t) == "NDArray(shape=(2, 3), dtype=float32, device=cpu:0)"
    assert t.shape == (2, 3) and t.strides == (3, 1) and t.ndim == 2 and t.size == 6
    assert t.dtype == op.DataType("float32") and t.device == op.Device("cpu", 0)
    assert np.array_equal(t.numpy(), a)
    v = op.from_dlpack(np.zeros(4, dtype=np.int64))
    assert repr(v) == "NDArray(shape=(4,), dtype=int64, device=cpu:0)" and v.size == 4
    assert repr(op.empty([], "float64")) == "NDArray(shape=(), dtype=float64, device=cpu:0)"


def test_tvm_ffi_tensors_are_accepted():
    tvm_ffi = pytest.importorskip("tvm_ffi", reason="apache-tvm-ffi is not installed")
    a = np.arange(4, dtype=np.float32)
    tt = tvm_ffi.from_dlpack(a)
    assert op.get_global("testing.tensor_sum")(tt) == 6.0
    t = op.from_dlpack(tt)
    assert t.data_ptr == a.ctypes.data and t.shape == (4,)
    # (tvm-ffi 0.1.15's from_dlpack asks for the legacy struct, which cannot carry the
    # read-only flag of a shared NDArray: refused, as for any such consumer)
    with pytest.raises(BufferError, match="read-only"):
        tvm_ffi.from_dlpack(t)
    del t, tt
