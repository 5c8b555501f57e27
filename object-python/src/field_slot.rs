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
//!
//! Also `Object`'s `tp_getattro` ([`install_getattro`]): CPython's generic attribute
//! read, and only when that finds nothing (an `AttributeError`), a look-up in the
//! process's method table (`crate::pytype::bound_method`), so that `e.eval(env)` finds
//! a method registered in Rust or C, also after the class was made. A read that finds
//! its attribute (every field read) pays one call for it, where pyo3's `__getattr__`
//! would put its trampoline around every read.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::attached_entry::{panic_error, run_attached};
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

/// Puts [`getattro`] in `cls`'s `tp_getattro` slot: `cls` is `Object`'s class (before
/// any class deriving from it is made: pyo3's classes inherit the slot) or a class
/// deriving from it whose slot is CPython's generic read (a class with a `__getattr__`
/// or `__getattribute__` of its own keeps its slot).
pub(crate) fn install_getattro(cls: &Bound<'_, PyType>) {
    let tp = cls.as_type_ptr();
    // The slot is replaced only when it holds the generic read (or is already ours),
    // which `getattro` performs first, so nothing the class had is lost; instances of a
    // class deriving from `Object` are `PyObj`s, which `getattro` checks anyway.
    // SAFETY: `tp` is a live type object, read and changed while attached.
    unsafe {
        let generic: ffi::getattrofunc = ffi::PyObject_GenericGetAttr;
        let ours: ffi::getattrofunc = getattro;
        let keep = match (*tp).tp_getattro {
            Some(f) => !std::ptr::fn_addr_eq(f, generic) && !std::ptr::fn_addr_eq(f, ours),
            None => false,
        };
        if keep {
            return;
        }
        (*tp).tp_getattro = Some(getattro);
        ffi::PyType_Modified(tp);
    }
}

/// An attribute read of an object: CPython's generic read, then, if that found nothing,
/// a method of the object's type from the method table.
unsafe extern "C" fn getattro(
    obj: *mut ffi::PyObject,
    name: *mut ffi::PyObject,
) -> *mut ffi::PyObject {
    // SAFETY: CPython calls `tp_getattro` attached, with a live object and name.
    let found = unsafe { ffi::PyObject_GenericGetAttr(obj, name) };
    if !found.is_null() {
        return found;
    }
    // SAFETY: as above.
    unsafe { method_fallback(obj, name) }
}

/// The method `name` of `obj`'s type, bound, after the generic read raised: only an
/// `AttributeError` falls back; if no method is found, that error is raised again.
///
/// # Safety
///
/// Called attached, with a live object and name, and the generic read's exception set.
#[cold]
#[inline(never)]
unsafe fn method_fallback(obj: *mut ffi::PyObject, name: *mut ffi::PyObject) -> *mut ffi::PyObject {
    // SAFETY: attached (the caller's contract); an exception is set.
    if unsafe { ffi::PyErr_ExceptionMatches(ffi::PyExc_AttributeError) } == 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: the caller's contract (attached).
    unsafe {
        run_attached(|py| {
            let missing = PyErr::fetch(py);
            // SAFETY: `obj` and `name` are live, borrowed for the call.
            let (obj, name) = (
                pyo3::Borrowed::from_ptr(py, obj),
                pyo3::Borrowed::from_ptr(py, name),
            );
            let (Ok(o), Ok(n)) = (obj.cast::<PyObj>(), name.cast::<PyString>()) else {
                return Err(missing);
            };
            match crate::pytype::bound_method(&o, n.to_str()?)? {
                Some(m) => Ok(m.into_ptr()),
                None => Err(missing),
            }
        })
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
