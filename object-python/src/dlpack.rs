//! DLPack capsules: the one place this crate calls the Python C API directly.
//!
//! Export: a `DLManagedTensor(Versioned)` from `object-containers` goes into a capsule
//! named `"dltensor"` / `"dltensor_versioned"` whose destructor calls the managed
//! tensor's deleter unless a consumer has renamed the capsule to `"used_…"` (taking
//! ownership, as the DLPack Python specification says).
//!
//! Import: the capsule a producer's `__dlpack__` returns is renamed to `"used_…"`
//! (so its destructor does nothing) and its managed tensor handed to
//! `NDArray::from_dlpack(_versioned)`, which owns it if the import succeeds and then
//! calls its deleter exactly once, when the last handle goes. A refused import takes
//! nothing (the rule of `object_containers::dlpack`), so the capsule gets its name back
//! and stays the producer's: its destructor frees the tensor, once, as it does for a
//! capsule nobody consumed. (Renamed before the import rather than after, so that a
//! rename that failed could only leak the tensor, never leave two owners.)

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

/// Imports the managed tensor in the capsule `capsule`, consuming the capsule if the
/// import succeeds; a refused capsule is left as it was, unconsumed.
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
        // managed tensor; `consume` renames the capsule only for as long as the import
        // owns the tensor.
        unsafe {
            let m =
                ffi::PyCapsule_GetPointer(p, VERSIONED.as_ptr()) as *mut DLManagedTensorVersioned;
            consume(capsule, VERSIONED, VERSIONED_USED, || {
                NDArray::from_dlpack_versioned(m)
            })
        }
    } else if legacy {
        // SAFETY: as above, for the legacy struct.
        unsafe {
            let m = ffi::PyCapsule_GetPointer(p, LEGACY.as_ptr()) as *mut DLManagedTensor;
            consume(capsule, LEGACY, LEGACY_USED, || NDArray::from_dlpack(m))
        }
    } else {
        Err(PyTypeError::new_err(
            "__dlpack__ returned something that is not an unused \"dltensor\" or \"dltensor_versioned\" capsule",
        ))
    }
}

/// Renames the capsule `name` → `used` (its destructor then leaves the tensor alone),
/// runs the import, and on a refusal renames it back, so that the producer's
/// destructor frees the tensor the import did not take.
///
/// # Safety
///
/// `capsule` is a valid capsule called `name` whose pointer is the managed tensor
/// `import` imports, with `from_dlpack`'s ownership rule: the tensor is the import's on
/// success and untouched on an error.
unsafe fn consume(
    capsule: &Bound<'_, PyAny>,
    name: &'static CStr,
    used: &'static CStr,
    import: impl FnOnce() -> Result<NDArray, object_containers::NDArrayError>,
) -> PyResult<NDArray> {
    let p = capsule.as_ptr();
    // SAFETY: a live capsule (the caller's contract); the names are static C strings,
    // as a capsule needs its name to outlive it.
    if unsafe { ffi::PyCapsule_SetName(p, used.as_ptr()) } != 0 {
        return Err(PyErr::fetch(capsule.py()));
    }
    match import() {
        Ok(nd) => Ok(nd),
        Err(e) => {
            // SAFETY: as above. (If this failed, which a valid capsule cannot, the
            // tensor would leak: the capsule would keep the used name.)
            if unsafe { ffi::PyCapsule_SetName(p, name.as_ptr()) } != 0 {
                return Err(PyErr::fetch(capsule.py()));
            }
            Err(PyBufferError::new_err(e.to_string()))
        }
    }
}
