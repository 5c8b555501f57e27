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

/// The `DLTensor` inside an `NDArray` (borrowed: valid while the array lives). C may
/// write the data of an array it holds the only reference to, unless read-only.
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

/// Exports an array as a legacy DLPack tensor (zero-copy; the export keeps the array
/// alive until its deleter is called, which the consumer must do once).
///
/// # Safety
///
/// `array` null (an error) or a live object; `out_managed` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_ndarray_to_dlpack(
    array: ObjHandle,
    out_managed: *mut *mut ObjDLManagedTensor,
) -> i32 {
    guard(|| {
        let o = out(out_managed, "out_managed")?;
        *o = ndarray_of(array)?.to_dlpack()?.cast();
        Ok(())
    })
}

/// Exports an array as a versioned DLPack tensor; see [`obj_ndarray_to_dlpack`].
///
/// # Safety
///
/// As [`obj_ndarray_to_dlpack`].
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
