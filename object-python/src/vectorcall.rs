//! The vectorcall entry of `Function` objects.
//!
//! pyo3 gives a class's `__call__` only the `tp_call` slot: CPython packs the arguments
//! into a new tuple for each call, pyo3 unpacks `*args` from it, and the tuple is freed
//! again: about a third of a two-argument call. CPython's vectorcall protocol
//! (PEP 590) instead hands the callee the caller's own argument array. A type takes
//! part by naming, in `tp_vectorcall_offset`, where in each instance the entry point
//! lives, and by setting `Py_TPFLAGS_HAVE_VECTORCALL`.
//!
//! Here: every `PyFunction` holds [`ENTRY`] in a field; [`install`] finds that field's
//! offset in a probe instance (the layout is pyo3's, the same for every instance of the
//! class and of its subclasses, which extend it) and sets the offset and the flag on
//! `FunctionBase` and on each generated subclass (`ffi.Function` and the classes of
//! types derived from it: CPython 3.11 does not pass the flag down to heap subclasses).
//! `tp_call` (pyo3's `__call__`) stays, for callers that use it (a call with a
//! `**kwargs` dict, `PyObject_Call`) and for the `abi3` build, which has no access to
//! type objects' fields and leaves this module out.
//!
//! [`ENTRY`] runs inside pyo3's own trampoline (`fastcall_cfunction_with_keywords`, the
//! one its `#[pyfunction]`s use): it marks the thread attached for pyo3, releases
//! references deferred while it was not, turns a panic into `PanicException` and a
//! `PyErr` into a raised exception. That trampoline is pyo3's doc-hidden `impl_` API,
//! pinned by `Cargo.lock`; a pyo3 upgrade that changes it fails to compile here.

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};
use std::sync::atomic::{AtomicIsize, Ordering};

use crate::function::PyFunction;

/// The entry point each `PyFunction` holds at the class's `tp_vectorcall_offset`.
pub(crate) const ENTRY: ffi::vectorcallfunc = entry;

/// The offset of a `PyFunction`'s entry field in its Python object; 0 until `install`.
static OFFSET: AtomicIsize = AtomicIsize::new(0);

/// pyo3's trampoline around [`call`].
const TRAMPOLINE: unsafe extern "C" fn(
    *mut ffi::PyObject,
    *const *mut ffi::PyObject,
    ffi::Py_ssize_t,
    *mut ffi::PyObject,
) -> *mut ffi::PyObject =
    pyo3::impl_::trampoline::get_trampoline_function!(fastcall_cfunction_with_keywords, call);

/// What CPython calls: `vectorcallfunc`'s signature (`nargsf` unsigned) around pyo3's
/// trampoline (`Py_ssize_t`).
unsafe extern "C" fn entry(
    callable: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: usize,
    kwnames: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls a vectorcall entry attached to the interpreter, with
    // `callable` the object whose field held it, `args` its argument array and
    // `kwnames` a tuple or null: what the trampoline and `call` require. `nargsf` is
    // passed on bit for bit (the offset flag is its top bit; `call` strips it).
    unsafe { TRAMPOLINE(callable, args, nargsf as ffi::Py_ssize_t, kwnames) }
}

/// The call: the positional arguments straight from CPython's array.
///
/// # Safety
///
/// The thread is attached; `slf` is a live object; `args` holds
/// `PyVectorcall_NARGS(nargsf)` borrowed references followed by one per name in
/// `kwnames`, which is null or a tuple of strings.
unsafe fn call(
    py: Python<'_>,
    slf: *mut ffi::PyObject,
    args: *const *mut ffi::PyObject,
    nargsf: ffi::Py_ssize_t,
    kwnames: *mut ffi::PyObject,
) -> PyResult<*mut ffi::PyObject> {
    // SAFETY: `slf` is live and borrowed for the call (the caller's contract).
    let slf = unsafe { pyo3::Borrowed::from_ptr(py, slf) };
    // Checked, although only a `PyFunction` (or subclass) instance holds this entry.
    let f = slf.cast::<PyFunction>()?;
    if !kwnames.is_null() {
        // SAFETY: a non-null `kwnames` is a live tuple (the caller's contract).
        let names = unsafe { pyo3::Borrowed::from_ptr(py, kwnames) }.cast::<PyTuple>()?;
        if !names.is_empty() {
            return Err(keyword_error(&*names.get_borrowed_item(0)?));
        }
    }
    // SAFETY: `PyVectorcall_NARGS` strips `PY_VECTORCALL_ARGUMENTS_OFFSET` from the
    // count it is given; it reads nothing else.
    let n = unsafe { ffi::PyVectorcall_NARGS(nargsf as usize) } as usize;
    let args: &[*mut ffi::PyObject] = if n == 0 {
        &[]
    } else {
        // SAFETY: `args` holds at least `n` pointers, live for the call.
        unsafe { std::slice::from_raw_parts(args, n) }
    };
    let out = f.get().call_python(py, n, |i| {
        // SAFETY: each item of `args` is a live object borrowed for the call.
        Ok(unsafe { pyo3::Borrowed::from_ptr(py, args[i]) })
    })?;
    Ok(out.into_ptr())
}

/// The error for a call with a keyword argument, in the words of pyo3's `tp_call`
/// path.
pub(crate) fn keyword_error(name: &Bound<'_, PyAny>) -> PyErr {
    let name = name
        .cast::<PyString>()
        .map_or_else(|_| "?".into(), |s| s.to_string_lossy().into_owned());
    PyTypeError::new_err(format!(
        "FunctionBase.__call__() got an unexpected keyword argument '{name}'"
    ))
}

/// Makes the instances of `cls` (`FunctionBase` or a subclass of it) callable through
/// their vectorcall entry. `probe`, any `PyFunction` instance, shows where the entry
/// lies; it is needed only on the first call (for `FunctionBase` itself).
pub(crate) fn install(cls: &Bound<'_, PyType>, probe: Option<&Bound<'_, PyFunction>>) {
    if let Some(p) = probe {
        let field = std::ptr::from_ref(&p.get().entry) as isize;
        OFFSET.store(field - p.as_ptr() as isize, Ordering::Relaxed);
    }
    let offset = OFFSET.load(Ordering::Relaxed);
    if offset <= 0 {
        return; // not installed: calls take `tp_call`
    }
    let tp = cls.as_type_ptr();
    // SAFETY: `tp` is a live type object of ours (FunctionBase, or a heap class made
    // from it by `make_class`), changed while attached and before any instance is
    // called through it. Its instances are `PyFunction`s, whose entry field lies
    // `offset` bytes in (measured on an instance above; subclasses extend the layout,
    // and none adds a field before it) and is always set. `tp_flags` is read and
    // written as the plain integer it is on GIL builds (an atomic of the same layout
    // on free-threaded ones); `PyType_Modified` drops what CPython cached of the type.
    unsafe {
        (*tp).tp_vectorcall_offset = offset;
        let flags = std::ptr::addr_of_mut!((*tp).tp_flags).cast::<std::ffi::c_ulong>();
        *flags |= ffi::Py_TPFLAGS_HAVE_VECTORCALL;
        ffi::PyType_Modified(tp);
    }
}
