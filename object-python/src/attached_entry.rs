//! The construction entry of object classes (`crate::vectorcall`, `Add(lhs=x, rhs=y)`),
//! run without pyo3's trampoline, as `Field`'s `tp_descr_get` (`crate::field_slot`)
//! is.
//!
//! pyo3's trampoline around an entry marks the thread attached in a thread-local count
//! (two thread-local accesses per call, each a `__tls_get_addr` call in a shared
//! library), drains references dropped while detached, and turns a panic or an error
//! into a raised exception: some 90 instructions of a construction. CPython calls these
//! entries with the thread attached, so [`run_attached`] takes the `Python` token as
//! given (`Python::assume_attached`) and catches a panic itself. What pyo3's count
//! would change stays correct without it: a `Py` dropped meanwhile is released at
//! pyo3's next entry instead of at once (a construction drops one only when it fails,
//! and the wrapper it makes goes through pyo3's own deallocation later), and a callback
//! that attaches (`Python::attach`) finds the thread already holding the interpreter
//! and goes on.
//!
//! `Function` calls keep pyo3's trampoline: they run arbitrary Rust functions, which
//! may drop any number of `Py` handles (each would wait for pyo3's next entry). The
//! field read keeps its own `catch_unwind` in line (going through [`run_attached`]
//! cost it 12 of its 324 instructions) and shares [`panic_error`].

use pyo3::ffi;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body` for an entry point that returns a new reference or null with an
/// exception set: the value on success; on an error or a panic, the exception raised
/// and null. (In line: each entry point gets its own copy, as with a hand-written
/// `catch_unwind`; the failure is handled out of line.)
///
/// # Safety
///
/// The calling thread is attached to the interpreter (CPython calls slots and
/// vectorcall entries so).
#[inline(always)]
pub(crate) unsafe fn run_attached(
    body: impl FnOnce(Python<'_>) -> PyResult<*mut ffi::PyObject>,
) -> *mut ffi::PyObject {
    // SAFETY: the caller's contract.
    let py = unsafe { Python::assume_attached() };
    match catch_unwind(AssertUnwindSafe(|| body(py))) {
        Ok(Ok(value)) => value,
        failed => raise(py, failed),
    }
}

/// The failure of a [`run_attached`] body raised as a Python exception (a panic as
/// `PanicException`); null, for the entry point to return.
#[cold]
#[inline(never)]
fn raise(
    py: Python<'_>,
    failed: std::thread::Result<PyResult<*mut ffi::PyObject>>,
) -> *mut ffi::PyObject {
    let err = match failed {
        Ok(Ok(value)) => return value,
        Ok(Err(e)) => e,
        Err(payload) => panic_error(&*payload, "a panic in an entry point called by Python"),
    };
    err.restore(py);
    std::ptr::null_mut()
}

/// A panic caught in an entry point, as the `PanicException` to raise: its message, or
/// `otherwise` for a payload that is not a string.
#[cold]
pub(crate) fn panic_error(payload: &(dyn std::any::Any + Send), otherwise: &str) -> PyErr {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| otherwise.to_owned());
    PanicException::new_err(msg)
}
