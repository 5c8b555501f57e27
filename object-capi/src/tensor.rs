//! NDArray and DLPack, and the JSON graph.

use core::ffi::c_char;

use object_containers::dlpack::{DLManagedTensor, DLManagedTensorVersioned};
use object_containers::{NDArray, NDArrayObj};
use object_core::{DataType, Device, Error, String};

use crate::fence::{any_to_c, borrow, give, guard, null, out, slot_from_c, utf8};
use crate::types::*;
use crate::values::{owned, typed};

fn ndarray_of(obj: ObjHandle) -> Result<NDArray, Error> {
    // SAFETY: every caller's contract: `obj` is null or a live object.
    let b = unsafe { borrow(obj, "array") }?;
    Ok(NDArray::from_object_ptr(typed::<NDArrayObj>(&b, "array")?))
}

/// A new, zero-filled CPU `NDArray` (`ffi.Tensor`) of `ndim` extents.
///
/// # Safety
///
/// `shape` points to `ndim` extents (null when 0); `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_empty(
    shape: *const i64,
    ndim: i32,
    dtype: ObjDataType,
    out_array: *mut ObjHandle,
) -> i32 {
    guard(|| {
        let o = out(out_array, "out_array")?;
        let n = usize::try_from(ndim).map_err(|_| Error::value_error(format!("ndim {ndim}")))?;
        let shape: &[i64] = if n == 0 {
            &[]
        } else if shape.is_null() {
            return Err(null("shape"));
        } else {
            // SAFETY: the caller's guarantee.
            unsafe { core::slice::from_raw_parts(shape, n) }
        };
        let a = NDArray::empty(
            shape,
            DataType::new(dtype.code, dtype.bits, dtype.lanes),
            Device::cpu(),
        )?;
        *o = give(a.into_object_ptr());
        Ok(())
    })
}

/// The `DLTensor` inside an `NDArray` (borrowed: valid while the array lives). Its
/// description must never be written. **Its data is read-only to C** unless the array
/// is lent writable: C lends an array it holds the only reference to with
/// `obj_ndarray_lend` (and may write it until `obj_ndarray_end_lend`), and a callee may
/// write a tensor argument only if `obj_ndarray_is_lent` says so (its caller lent it for
/// the call). While an array is lent, Rust refuses to read its data.
///
/// # Safety
///
/// `array` null (an error) or a live object; `out_tensor` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_dltensor(
    array: ObjHandle,
    out_tensor: *mut *mut ObjDLTensor,
) -> i32 {
    guard(|| {
        let o = out(out_tensor, "out_tensor")?;
        // The tensor sits inside the object, which the caller's reference keeps alive.
        *o = ndarray_of(array)?.as_dl_tensor_ptr().cast();
        Ok(())
    })
}

/// Imports a legacy DLPack tensor (zero-copy). On success the array owns `managed` and
/// calls its deleter once, when the last reference to the array goes. On failure
/// (nonzero) nothing was called and nothing kept: the caller still owns `managed` and
/// releases it itself (calls its deleter), and `*out_array` is left as it was. A null
/// `managed` is an error.
///
/// # Safety
///
/// `managed` is null or a valid managed tensor the caller owns and gives up if the call
/// succeeds, as `NDArray::from_dlpack` requires; `out_array` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_from_dlpack(
    managed: *mut ObjDLManagedTensor,
    out_array: *mut ObjHandle,
) -> i32 {
    guard(|| {
        let o = out(out_array, "out_array")?;
        // SAFETY: the caller's guarantee; `ObjDLManagedTensor` has the layout of
        // `DLManagedTensor` (asserted in `types`).
        let a = unsafe { NDArray::from_dlpack(managed.cast::<DLManagedTensor>()) }?;
        *o = give(a.into_object_ptr());
        Ok(())
    })
}

/// Imports a versioned DLPack tensor (zero-copy), with the ownership rule of
/// [`obj_ndarray_from_dlpack`]: on failure the caller still owns `managed`. A tensor of
/// another major version is refused having read only its version; dlpack.h then asks
/// its owner (the caller) to call its deleter.
///
/// # Safety
///
/// As [`obj_ndarray_from_dlpack`], for the versioned struct.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_from_dlpack_versioned(
    managed: *mut ObjDLManagedTensorVersioned,
    out_array: *mut ObjHandle,
) -> i32 {
    guard(|| {
        let o = out(out_array, "out_array")?;
        // SAFETY: the caller's guarantee; the layouts match (asserted in `types`).
        let a =
            unsafe { NDArray::from_dlpack_versioned(managed.cast::<DLManagedTensorVersioned>()) }?;
        *o = give(a.into_object_ptr());
        Ok(())
    })
}

/// Takes over the caller's reference to `array` as an owned `NDArray` for a call that
/// may give it back (`ManuallyDrop`: on failure the reference stays the caller's).
///
/// # Safety
///
/// `array` is null (an error) or a live object on which the caller owns a reference.
unsafe fn take_ndarray(array: ObjHandle) -> Result<core::mem::ManuallyDrop<NDArray>, Error> {
    // Checks the handle and its type first (a borrowed copy, released at once).
    drop(ndarray_of(array)?);
    // SAFETY: the caller owns one reference to this live `ffi.Tensor` (checked above),
    // which the `ManuallyDrop` holds without counting it again.
    let obj = unsafe { object_core::ObjectPtr::<NDArrayObj>::from_raw(array.cast()) };
    Ok(core::mem::ManuallyDrop::new(NDArray::from_object_ptr(obj)))
}

/// Exports an array as a legacy DLPack tensor (zero-copy), **taking over the caller's
/// reference** on success. The legacy struct cannot say "read-only", so the consumer
/// may write: the array must be writable, not lent, and the caller's reference the
/// only one. On failure nothing changes: the caller keeps its reference. The export
/// keeps the array alive until its deleter is called, which the consumer must do once.
///
/// # Safety
///
/// `array` null (an error) or a live object on which the caller owns a reference;
/// `out_managed` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_to_dlpack(
    array: ObjHandle,
    out_managed: *mut *mut ObjDLManagedTensor,
) -> i32 {
    guard(|| {
        let o = out(out_managed, "out_managed")?;
        // SAFETY: the caller's guarantee.
        let a = unsafe { take_ndarray(array) }?;
        match core::mem::ManuallyDrop::into_inner(a).into_dlpack() {
            Ok(m) => {
                *o = m.cast();
                Ok(())
            }
            Err((a, e)) => {
                // The reference is the caller's again.
                core::mem::forget(a);
                Err(e.into())
            }
        }
    })
}

/// Exports an array as a versioned DLPack tensor (zero-copy), **read-only** for the
/// consumer (`DLPACK_FLAG_BITMASK_READ_ONLY`): the array stays shared with its other
/// handles, the caller's included, which Rust may be reading. The export holds a
/// reference of its own until its deleter is called, which the consumer must do once.
/// To hand a consumer writable memory, see `obj_ndarray_into_dlpack_versioned`.
///
/// # Safety
///
/// `array` null (an error) or a live object; `out_managed` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_to_dlpack_versioned(
    array: ObjHandle,
    out_managed: *mut *mut ObjDLManagedTensorVersioned,
) -> i32 {
    guard(|| {
        let o = out(out_managed, "out_managed")?;
        *o = ndarray_of(array)?.to_dlpack_versioned().cast();
        Ok(())
    })
}

/// Exports an array as a versioned DLPack tensor, **taking over the caller's
/// reference** (on success: always, unless an argument is invalid): writable for the
/// consumer if that reference was the only one and the array is writable and not lent,
/// read-only otherwise (see the flags).
///
/// # Safety
///
/// `array` null (an error) or a live object on which the caller owns a reference;
/// `out_managed` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_into_dlpack_versioned(
    array: ObjHandle,
    out_managed: *mut *mut ObjDLManagedTensorVersioned,
) -> i32 {
    guard(|| {
        let o = out(out_managed, "out_managed")?;
        // SAFETY: the caller's guarantee.
        let a = unsafe { take_ndarray(array) }?;
        *o = core::mem::ManuallyDrop::into_inner(a)
            .into_dlpack_versioned()
            .cast();
        Ok(())
    })
}

/// Lends an array writable to foreign code (see `obj_ndarray_dltensor`): until
/// `obj_ndarray_end_lend`, C (and callees it passes the array to, such as a tvm-ffi
/// kernel's output parameter) may write its data, and Rust refuses to read it. The
/// array must be writable and `array` a reference the caller owns and the only one;
/// otherwise nothing changes.
///
/// # Safety
///
/// `array` null (an error) or a live object on which the caller owns a reference.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_lend(array: ObjHandle) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let mut a = unsafe { take_ndarray(array) }?;
        a.start_lease()?;
        Ok(())
    })
}

/// Ends a lease that `obj_ndarray_lend` started (a no-op for an array not lent). A
/// foreign call still writing the array keeps Rust from reading it until it returns.
///
/// # Safety
///
/// `array` null (an error) or a live object.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_end_lend(array: ObjHandle) -> i32 {
    guard(|| {
        ndarray_of(array)?.end_lease();
        Ok(())
    })
}

/// Whether the array is lent writable right now (1 or 0 in `out_lent`): what a C
/// callee checks before it writes a tensor argument's data.
///
/// # Safety
///
/// `array` null (an error) or a live object; `out_lent` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_is_lent(array: ObjHandle, out_lent: *mut i32) -> i32 {
    guard(|| {
        let o = out(out_lent, "out_lent")?;
        *o = ndarray_of(array)?.is_lent_writable().into();
        Ok(())
    })
}

/// Saves a value (and the graph it reaches) as a JSON graph: an `ffi.String`.
///
/// # Safety
///
/// `value` follows the header's rules; `out_json` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_json_save(value: *const ObjAny, out_json: *mut ObjHandle) -> i32 {
    guard(|| {
        let o = out(out_json, "out_json")?;
        // SAFETY: the caller's guarantee.
        let v = unsafe { value.as_ref() }.ok_or_else(|| null("value"))?;
        // SAFETY: the caller's guarantee.
        let v = owned(unsafe { slot_from_c(v) }?)?;
        let text = object_json::to_json_graph(&v)?;
        *o = give(String::new(&text).into_object_ptr());
        Ok(())
    })
}

/// Loads a JSON graph (`len` bytes of UTF-8) into an owned value.
///
/// # Safety
///
/// `text` points to `len` bytes; `out_value` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_json_load(
    text: *const c_char,
    len: usize,
    out_value: *mut ObjAny,
) -> i32 {
    guard(|| {
        let o = out(out_value, "out_value")?;
        // SAFETY: the caller's guarantee.
        let text = unsafe { utf8(text, len, "text") }?;
        *o = any_to_c(object_json::from_json_graph(text)?);
        Ok(())
    })
}
