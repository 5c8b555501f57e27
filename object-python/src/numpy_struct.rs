//! NumPy arrays imported by reading their C struct in place, without a `__dlpack__`
//! call: the fast path of every conversion of a `numpy.ndarray` to an `NDArray`.
//!
//! `__dlpack__` makes a capsule, a managed tensor with its own shape and strides, and a
//! keyword dictionary's worth of argument parsing on every call — most of the cost of
//! passing an array to a function. The fields it reads are public C API and have kept
//! their layout since NumPy 1.7, NumPy 2 included (`PyArrayObject_fields`: data, nd,
//! dimensions, strides, base, descr, flags; `PyArray_Descr`: the type number after
//! the typeobj and four chars). So for an exact `numpy.ndarray` this module reads them,
//! and imports with [`NDArray::from_dl_tensor_owned_by`], whose owner is a reference to
//! the array, let go with the GIL (taken if need be) when the last handle goes.
//!
//! Anything unusual — another type or a subclass, a non-native byte order, an
//! unaligned array, a data type other than the booleans, integers, floats and
//! complexes DLPack names, strides that are not a multiple of the item size, more
//! than [`MAX_DIMS`] dimensions — takes the `__dlpack__` path instead, so the results
//! (and errors) are NumPy's own. The two paths agree: same memory, shape, strides in
//! elements, data type, read-only flag.
//!
//! Which type is NumPy's is found once, from the `numpy` module already imported
//! (`sys.modules`), and accepted only if it is a static type (defined in C, so no
//! Python class can pose as it) named `numpy.ndarray` whose instances are at least as
//! large as the fields read here.

use std::ffi::{c_char, c_int, c_long};

use object_containers::dlpack::DLTensor;
use object_containers::NDArray;
use object_core::{DataType, Device};
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// The most dimensions taken on this path (NumPy allows 64; more go through
/// `__dlpack__`).
pub(crate) const MAX_DIMS: usize = 16;

/// The leading fields of NumPy's `PyArrayObject_fields` (`ndarraytypes.h`).
#[repr(C)]
struct ArrayFields {
    ob_base: ffi::PyObject,
    data: *mut c_char,
    nd: c_int,
    dimensions: *const ffi::Py_ssize_t,
    strides: *const ffi::Py_ssize_t,
    base: *mut ffi::PyObject,
    descr: *const DescrFields,
    flags: c_int,
}

/// The leading fields of NumPy's `PyArray_Descr` (the same in NumPy 1 and 2).
#[repr(C)]
struct DescrFields {
    ob_base: ffi::PyObject,
    typeobj: *mut ffi::PyTypeObject,
    kind: c_char,
    type_char: c_char,
    byteorder: c_char,
    former_flags: c_char,
    type_num: c_int,
}

/// `NPY_ARRAY_ALIGNED`, `NPY_ARRAY_WRITEABLE`.
const ALIGNED: c_int = 0x0100;
const WRITEABLE: c_int = 0x0400;

/// `numpy.ndarray`, once found and checked (see the module docs).
static NDARRAY_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `numpy.ndarray` if NumPy is imported and its type passes the checks.
fn ndarray_type(py: Python<'_>) -> Option<&Bound<'_, PyType>> {
    if let Some(t) = NDARRAY_TYPE.get(py) {
        return Some(t.bind(py));
    }
    let modules = py.import("sys").ok()?.getattr("modules").ok()?;
    let numpy = modules.cast::<PyDict>().ok()?.get_item("numpy").ok()??;
    let t = numpy.getattr("ndarray").ok()?.cast_into::<PyType>().ok()?;
    // SAFETY: `t` is a live type object, and we hold the GIL.
    let flags = unsafe { ffi::PyType_GetFlags(t.as_type_ptr()) };
    let basic_size: usize = t.getattr("__basicsize__").ok()?.extract().ok()?;
    // (The name too: a module posing as `numpy` in `sys.modules` could name another C
    // type, such as `type`, whose instances are large enough but are no arrays.)
    let named =
        t.module().ok()?.to_cow().ok()? == "numpy" && t.name().ok()?.to_cow().ok()? == "ndarray";
    if !named || flags & ffi::Py_TPFLAGS_HEAPTYPE != 0 || basic_size < size_of::<ArrayFields>() {
        return None;
    }
    let _ = NDARRAY_TYPE.set(py, t.unbind());
    NDARRAY_TYPE.get(py).map(|t| t.bind(py))
}

/// The DLPack data type and item size of a NumPy type number, for the built-in types
/// DLPack names, in native byte order.
fn data_type(type_num: c_int, byteorder: c_char) -> Option<(DataType, isize)> {
    let native = match byteorder as u8 {
        b'=' | b'|' => true,
        b'<' => cfg!(target_endian = "little"),
        b'>' => cfg!(target_endian = "big"),
        _ => false,
    };
    if !native {
        return None;
    }
    const LONG_BITS: u8 = c_long::BITS as u8;
    let (code, bits) = match type_num {
        0 => (6, 8),         // NPY_BOOL
        1 => (0, 8),         // NPY_BYTE
        2 => (1, 8),         // NPY_UBYTE
        3 => (0, 16),        // NPY_SHORT
        4 => (1, 16),        // NPY_USHORT
        5 => (0, 32),        // NPY_INT
        6 => (1, 32),        // NPY_UINT
        7 => (0, LONG_BITS), // NPY_LONG
        8 => (1, LONG_BITS), // NPY_ULONG
        9 => (0, 64),        // NPY_LONGLONG
        10 => (1, 64),       // NPY_ULONGLONG
        11 => (2, 32),       // NPY_FLOAT
        12 => (2, 64),       // NPY_DOUBLE
        14 => (5, 64),       // NPY_CFLOAT
        15 => (5, 128),      // NPY_CDOUBLE
        23 => (2, 16),       // NPY_HALF
        _ => return None,
    };
    Some((DataType::new(code, bits, 1), isize::from(bits / 8)))
}

/// The NDArray's hold on the array: let go at once with the GIL, also where pyo3 does
/// not know the thread holds it (a capsule's deleter called by CPython) and from
/// threads that do not — where a plain `Py` would wait for pyo3's next hold of the GIL.
struct ArrayRef(Option<Py<PyAny>>);

impl Drop for ArrayRef {
    fn drop(&mut self) {
        if let Some(array) = self.0.take() {
            // (While the interpreter shuts down, `try_attach` runs nothing and the
            // reference is dropped as a plain `Py`.)
            let _ = Python::try_attach(move |_| drop(array));
        }
    }
}

/// `obj` as an NDArray sharing its memory, if it is an exact `numpy.ndarray` this path
/// takes (`None`: take `__dlpack__`).
pub(crate) fn import(obj: &Bound<'_, PyAny>) -> Option<PyResult<NDArray>> {
    let t = ndarray_type(obj.py())?;
    if !obj.get_type().is(t) {
        return None;
    }
    let a = obj.as_ptr() as *const ArrayFields;
    // SAFETY: `obj` is a live instance of exactly `numpy.ndarray` (checked just now),
    // a C type whose instances start with `ArrayFields` (and are at least that large,
    // checked in `ndarray_type`); we hold the GIL, so nothing changes them meanwhile.
    let (data, nd, dims, strides, descr, flags) = unsafe {
        (
            (*a).data,
            (*a).nd,
            (*a).dimensions,
            (*a).strides,
            (*a).descr,
            (*a).flags,
        )
    };
    if flags & ALIGNED == 0 || descr.is_null() {
        return None;
    }
    // SAFETY: an array's descriptor is a live `PyArray_Descr` (held by the array).
    let (type_num, byteorder) = unsafe { ((*descr).type_num, (*descr).byteorder) };
    let (dtype, item) = data_type(type_num, byteorder)?;
    let n = usize::try_from(nd).ok().filter(|&n| n <= MAX_DIMS)?;
    // Shape and strides in arrays sized to the rank (each is zeroed first).
    // SAFETY: the array's own fields, read above: `n` extents and strides.
    unsafe {
        match n {
            0..=4 => import_dims::<4>(obj, data, n, dims, strides, dtype, item, flags),
            _ => import_dims::<MAX_DIMS>(obj, data, n, dims, strides, dtype, item, flags),
        }
    }
}

/// The rest of [`import`], for an array of rank `n <= N`.
///
/// # Safety
///
/// `obj` is an exact `numpy.ndarray` whose data, `dimensions` and `strides` are
/// `data`, `dims` and `strides`, with `nd = n`; the GIL is held.
#[allow(
    clippy::too_many_arguments,
    reason = "the fields `import` read, passed on"
)]
#[inline(always)]
unsafe fn import_dims<const N: usize>(
    obj: &Bound<'_, PyAny>,
    data: *mut c_char,
    n: usize,
    dims: *const ffi::Py_ssize_t,
    strides: *const ffi::Py_ssize_t,
    dtype: DataType,
    item: isize,
    flags: c_int,
) -> Option<PyResult<NDArray>> {
    let mut shape = [0i64; N];
    let mut steps = [0i64; N];
    for i in 0..n {
        // SAFETY: an array's `dimensions` and `strides` hold `nd` values each (the
        // caller's contract: `n = nd`).
        let (d, s) = unsafe { (*dims.add(i), *strides.add(i)) };
        if s % item != 0 {
            return None;
        }
        shape[i] = d as i64;
        steps[i] = (s / item) as i64;
    }
    let tensor = DLTensor {
        data: data.cast(),
        device: Device::cpu(),
        ndim: n as i32,
        dtype,
        shape: shape.as_mut_ptr(),
        strides: steps.as_mut_ptr(),
        byte_offset: 0,
    };
    let read_only = flags & WRITEABLE == 0;
    let owner = ArrayRef(Some(obj.clone().unbind()));
    // (Writers: the DLPack rule, as for an array imported through `__dlpack__`.)
    // SAFETY: memory the array keeps alive while the owner (a reference to it) lives;
    // shape and strides are read during the call only.
    let r = unsafe { NDArray::from_dl_tensor_owned_by(&tensor, read_only, owner) };
    Some(r.map_err(|e| PyBufferError::new_err(e.to_string())))
}
