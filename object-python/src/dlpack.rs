//! DLPack capsules: the one place this crate calls the Python C API directly.
//!
//! Export: a `DLManagedTensor(Versioned)` from `object-containers` goes into a capsule
//! named `"dltensor"` / `"dltensor_versioned"` whose destructor calls the managed
//! tensor's deleter unless a consumer has renamed the capsule to `"used_…"` (taking
//! ownership, as the DLPack Python specification says).
//!
//! Import: the capsule a producer's `__dlpack__` returns is renamed to `"used_…"`
//! first (so its destructor does nothing) and its managed tensor handed to
//! `NDArray::from_dlpack(_versioned)`, which owns it from then on and calls its deleter
//! exactly once — when the last handle goes, or at once if the import fails.

use std::ffi::{c_void, CStr};

use object_containers::dlpack::{DLManagedTensor, DLManagedTensorVersioned};
use object_containers::NDArray;
use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::ffi;
use pyo3::prelude::*;

const LEGACY: &CStr = c"dltensor";
const LEGACY_USED: &CStr = c"used_dltensor";
const VERSIONED: &CStr = c"dltensor_versioned";
const VERSIONED_USED: &CStr = c"used_dltensor_versioned";

/// The destructor of an exported versioned capsule.
unsafe extern "C" fn versioned_capsule_destructor(capsule: *mut ffi::PyObject) {
    // CPython calls a capsule's destructor with the capsule, holding the GIL; a capsule
    // still named "dltensor_versioned" was not consumed (`PyCapsule_IsValid` sets no
    // exception).
    // SAFETY: so its pointer is the managed tensor this module exported and still
    // owns, whose deleter is called once, here.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, VERSIONED.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, VERSIONED.as_ptr())
                as *mut DLManagedTensorVersioned;
            if let Some(d) = m.as_ref().and_then(|m| m.deleter) {
                d(m);
            }
        }
    }
}

/// Exports `nd` into a new versioned capsule, read-only for the consumer; the legacy
/// struct (`versioned` false) is refused.
pub(crate) fn export<'py>(
    py: Python<'py>,
    nd: &NDArray,
    versioned: bool,
) -> PyResult<Bound<'py, PyAny>> {
    // The Python object keeps its handle, which Rust code may be reading through: the
    // export is read-only for the consumer, which only the versioned struct can say.
    if !versioned {
        return Err(PyBufferError::new_err(
            "a shared NDArray exports read-only, which the legacy DLPack struct cannot say \
             (ask for max_version=(1, 0) or later)",
        ));
    }
    let (ptr, name, destructor): (*mut c_void, &CStr, ffi::PyCapsule_Destructor) = (
        nd.to_dlpack_versioned() as *mut c_void,
        VERSIONED,
        versioned_capsule_destructor,
    );
    // SAFETY: `ptr` is a fresh export that the capsule now owns (its destructor calls
    // the deleter unless a consumer takes it); `name` is a static C string, as the
    // capsule requires its name to outlive it.
    let capsule = unsafe { ffi::PyCapsule_New(ptr, name.as_ptr(), Some(destructor)) };
    if capsule.is_null() {
        // SAFETY: the capsule was not made, so the export is still ours to release,
        // once.
        unsafe {
            if versioned {
                let m = ptr as *mut DLManagedTensorVersioned;
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            } else {
                let m = ptr as *mut DLManagedTensor;
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            }
        }
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference, just made.
    Ok(unsafe { Bound::from_owned_ptr(py, capsule) })
}

/// Imports the managed tensor in the capsule `capsule` (consuming it).
pub(crate) fn import(capsule: &Bound<'_, PyAny>) -> PyResult<NDArray> {
    let p = capsule.as_ptr();
    // SAFETY: `p` is a live object (borrowed through `capsule`) and we hold the GIL.
    // `PyCapsule_IsValid` sets no exception.
    let (versioned, legacy) = unsafe {
        (
            ffi::PyCapsule_IsValid(p, VERSIONED.as_ptr()) == 1,
            ffi::PyCapsule_IsValid(p, LEGACY.as_ptr()) == 1,
        )
    };
    if versioned {
        // SAFETY: a valid capsule of that name, so the pointer is the producer's
        // managed tensor; renaming it hands the tensor over to us (the producer's
        // destructor then leaves it alone), and `from_dlpack_versioned` takes it.
        let nd = unsafe {
            let m =
                ffi::PyCapsule_GetPointer(p, VERSIONED.as_ptr()) as *mut DLManagedTensorVersioned;
            if ffi::PyCapsule_SetName(p, VERSIONED_USED.as_ptr()) != 0 {
                return Err(PyErr::fetch(capsule.py()));
            }
            NDArray::from_dlpack_versioned(m)
        };
        nd.map_err(|e| PyBufferError::new_err(e.to_string()))
    } else if legacy {
        // SAFETY: as above, for the legacy struct.
        let nd = unsafe {
            let m = ffi::PyCapsule_GetPointer(p, LEGACY.as_ptr()) as *mut DLManagedTensor;
            if ffi::PyCapsule_SetName(p, LEGACY_USED.as_ptr()) != 0 {
                return Err(PyErr::fetch(capsule.py()));
            }
            NDArray::from_dlpack(m)
        };
        nd.map_err(|e| PyBufferError::new_err(e.to_string()))
    } else {
        Err(PyTypeError::new_err(
            "__dlpack__ returned something that is not an unused \"dltensor\" or \"dltensor_versioned\" capsule",
        ))
    }
}
