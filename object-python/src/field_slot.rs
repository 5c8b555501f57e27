//! The `tp_descr_get` slot of `Field`, the descriptor every reflected field is: an
//! attribute read (`e.lhs`) calls it directly, without pyo3's trampoline.
//!
//! pyo3's trampoline around a slot marks the thread attached in a thread-local count
//! (two thread-local accesses per call, each a `__tls_get_addr` call in a shared
//! library), drains references dropped while detached, and extracts the arguments:
//! about a fifth of a field read. A descriptor read is called by CPython with the
//! thread attached, so the slot takes the `Python` token as given
//! (`Python::assume_attached`) and catches a panic itself. What pyo3's count would
//! change stays correct without it: a `Py` dropped meanwhile is released at pyo3's
//! next entry instead of at once, and a callback that attaches (`Python::attach`)
//! finds the thread already holding the interpreter and goes on.
//!
//! `Field.__get__` stays pyo3's method (what an explicit call uses), and the `abi3`
//! build, which cannot reach type objects' fields, leaves this module out.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::attached_entry::panic_error;
use crate::object::{FieldDescr, PyObj};

/// `Field`'s type object (set by [`install`]): the slot's one-compare check of the
/// descriptor it is called for.
static FIELD_TYPE: AtomicPtr<ffi::PyTypeObject> = AtomicPtr::new(std::ptr::null_mut());

/// Puts [`descr_get`] in `Field`'s `tp_descr_get` slot.
pub(crate) fn install(field_type: &Bound<'_, PyType>) {
    let tp = field_type.as_type_ptr();
    FIELD_TYPE.store(tp, Ordering::Relaxed);
    // SAFETY: `tp` is `Field`'s live type object, changed while attached and before
    // any field is read (module initialisation). Its instances are `FieldDescr`s (the
    // class cannot be subclassed), which `descr_get` checks anyway.
    unsafe {
        (*tp).tp_descr_get = Some(descr_get);
        ffi::PyType_Modified(tp);
    }
}

/// `Field.__get__(descr, obj, type)`, as CPython calls it for an attribute read.
unsafe extern "C" fn descr_get(
    descr: *mut ffi::PyObject,
    obj: *mut ffi::PyObject,
    _owner: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls `tp_descr_get` attached to the interpreter.
    let py = unsafe { Python::assume_attached() };
    let result = catch_unwind(AssertUnwindSafe(|| -> PyResult<*mut ffi::PyObject> {
        // SAFETY: `descr` is the live descriptor the slot belongs to, borrowed for
        // the call.
        let d = unsafe { pyo3::Borrowed::from_ptr(py, descr) };
        if obj.is_null() {
            // Read on the class: the descriptor itself.
            return Ok(d.to_owned().into_ptr());
        }
        // SAFETY: a non-null `obj` is the live instance read, borrowed for the call.
        let obj = unsafe { pyo3::Borrowed::from_ptr(py, obj) };
        if obj.is_none() {
            return Ok(d.to_owned().into_ptr());
        }
        // SAFETY: `descr` is live (above); reading its type is always sound.
        let exact_field = unsafe { ffi::Py_TYPE(descr) } == FIELD_TYPE.load(Ordering::Relaxed);
        let d = if exact_field {
            // SAFETY: an instance of exactly `Field`, whose instances are `FieldDescr`s.
            unsafe { d.cast_unchecked::<FieldDescr>() }
        } else {
            d.cast::<FieldDescr>()?
        };
        let d = d.get();
        // An instance of exactly the class the field was declared in needs no walk of
        // its type's MRO.
        let exact = d
            .class
            .get()
            .is_some_and(|c| std::ptr::eq(obj.get_type_ptr(), c.as_ptr().cast()));
        let this = if exact {
            // SAFETY: `obj`'s type is a generated object class (it derives from
            // `Object`, whose instances are `PyObj`s).
            unsafe { obj.cast_unchecked::<PyObj>() }
        } else {
            obj.cast::<PyObj>()?
        };
        Ok(d.read(&this)?.into_ptr())
    }));
    let err = match result {
        Ok(Ok(value)) => return value,
        Ok(Err(e)) => e,
        Err(payload) => panic_error(&*payload, "a panic in a field read"),
    };
    err.restore(py);
    std::ptr::null_mut()
}
