//! Our values into tvm-ffi's (arguments of a call into a kernel, results of a callback)
//! and back (results of a kernel, arguments of a callback). Plain kinds are the same
//! 16 bytes on both sides; objects never cross as they are (the headers differ): each
//! kind is converted, borrowed where the other side's rules allow, and every foreign
//! reference taken is released.

use core::ffi::{c_char, c_void};
use std::ffi::CString;

use object_containers::{
    ForeignWrite, Function, FunctionObj, NDArray, NDArrayObj, Shape, ShapeObj,
};
use object_core::{type_index as ti, Any, AnyView, Bytes, BytesObj, Error, StringObj};

use super::runtime::{ByteArray, Foreign, Runtime};
use super::{callback, tvm_error};
use crate::fence::{slot_from_c, view_to_c, Slot};
use crate::types::ObjAny;

/// What the converted arguments of one call borrow from and hold: released after the
/// call (the foreign references with `TVMFFIObjectDecRef`, the leases ended).
#[derive(Default)]
pub(super) struct Held {
    /// NUL-terminated copies of borrowed strings.
    strings: Vec<CString>,
    /// The `TVMFFIByteArray`s that `kTVMFFIByteArrayPtr` arguments point to (boxed:
    /// their addresses must not move while the vector grows).
    #[allow(clippy::vec_box)]
    arrays: Vec<Box<ByteArray>>,
    /// tvm-ffi objects made for the call (strings with a NUL, shapes, functions).
    objects: Vec<Foreign>,
    /// The lent tensors the callee may write, recorded as written until it returns.
    writes: Vec<ForeignWrite>,
}

/// A plain value in tvm-ffi's form: the kind, zero padding, the payload.
fn plain(type_index: u32, set: impl FnOnce(&mut ObjAny)) -> ObjAny {
    let mut v = ObjAny::NONE;
    v.type_index = type_index;
    set(&mut v);
    v
}

/// Converts argument `i` of a call of `name` into tvm-ffi's form. `rt` is the
/// library's tvm-ffi runtime (`None` for a library written to the convention without
/// it: strings as `const char*` only, no objects made).
pub(super) fn argument(
    rt: Option<&'static Runtime>,
    name: &str,
    i: usize,
    may_write: bool,
    a: AnyView<'_>,
    held: &mut Held,
) -> Result<ObjAny, Error> {
    Ok(match a.type_index() {
        ti::DL_TENSOR_PTR if may_write => {
            return Err(tvm_error(format!(
                "argument {i} of `{name}`: a borrowed DLTensor* cannot be lent writable, \
                 and a tvm-ffi function may write its tensor arguments: pass an NDArray \
                 lent with `NDArray::lend_mut`, or declare the parameter read-only \
                 (`TvmFfiLibrary::function_reading`)"
            )))
        }
        ti::NONE
        | ti::INT
        | ti::BOOL
        | ti::FLOAT
        | ti::OPAQUE_PTR
        | ti::DATA_TYPE
        | ti::DEVICE
        | ti::DL_TENSOR_PTR => {
            let mut v = view_to_c(a);
            v.small = 0;
            v
        }
        _ => {
            if let Some(s) = a.as_str() {
                return string_argument(rt, name, i, a, s, held);
            }
            if let Some(b) = a.as_object_of::<BytesObj>() {
                // Borrowed: the caller's argument keeps the bytes alive for the call.
                let array = Box::new(ByteArray::of(b.as_bytes()));
                let p: *const ByteArray = &*array;
                held.arrays.push(array);
                return Ok(plain(ti::BYTE_ARRAY_PTR, |v| {
                    v.v.v_ptr = p.cast_mut().cast()
                }));
            }
            if let Some(arr) = a.as_object_of::<NDArrayObj>() {
                return tensor_argument(
                    name,
                    i,
                    may_write,
                    NDArray::from_object_ptr(arr.clone()),
                    held,
                );
            }
            let Some(rt) = rt else {
                return Err(tvm_error(format!(
                    "argument {i} of `{name}`: a `{}` cannot be passed to a library \
                     without the tvm-ffi runtime (only plain values, strings, bytes, \
                     DLTensor* and NDArray)",
                    a.type_key()
                )));
            };
            let object = if let Some(s) = a.as_object_of::<ShapeObj>() {
                rt.make_shape(Shape::from_object_ptr(s.clone()).as_slice())
                    .map_err(|e| e.with_frame(format!("argument {i} of `{name}`")))?
            } else if let Some(f) = a.as_object_of::<FunctionObj>() {
                callback::wrap(rt, Function::from_object_ptr(f.clone()))
                    .map_err(|e| e.with_frame(format!("argument {i} of `{name}`")))?
            } else {
                return Err(tvm_error(format!(
                    "argument {i} of `{name}`: a `{}` cannot be passed to a tvm-ffi \
                     function (plain values, strings, bytes, DLTensor*, NDArray, Shape \
                     and Function can)",
                    a.type_key()
                )));
            };
            let v = object.view();
            held.objects.push(object);
            v
        }
    })
}

/// A string argument: a `const char*` when it has no NUL (borrowed from our string
/// object, whose bytes are NUL-terminated; a copy otherwise), else a tvm-ffi `String`
/// (which `ffi::String` and `std::string` parameters take; a `const char*` one
/// cannot hold a NUL) or, without the runtime, a `TVMFFIByteArray*`.
fn string_argument(
    rt: Option<&'static Runtime>,
    name: &str,
    i: usize,
    a: AnyView<'_>,
    s: &str,
    held: &mut Held,
) -> Result<ObjAny, Error> {
    if s.as_bytes().contains(&0) {
        let Some(rt) = rt else {
            let array = Box::new(ByteArray::of(s.as_bytes()));
            let p: *const ByteArray = &*array;
            held.arrays.push(array);
            return Ok(plain(ti::BYTE_ARRAY_PTR, |v| {
                v.v.v_ptr = p.cast_mut().cast()
            }));
        };
        let mut out = ObjAny::NONE;
        let bytes = ByteArray::of(s.as_bytes());
        // SAFETY: `c_api.h`: copies the bytes into an owned tvm-ffi string.
        let rc = unsafe { (rt.string_from_byte_array)(&bytes, &mut out) };
        if rc != 0 {
            return Err(rt
                .failure("`TVMFFIStringFromByteArray`", rc)
                .with_frame(format!("argument {i} of `{name}`")));
        }
        // SAFETY: an owned tvm-ffi value (an inline string, or an object whose
        // reference is now ours).
        if let Some(obj) = unsafe { rt.owned_object(out) } {
            held.objects.push(obj);
        }
        return Ok(out);
    }
    let p: *const c_char = match a.as_object_of::<StringObj>() {
        // NUL-terminated in the object, which the caller's argument keeps alive.
        Some(obj) => obj.as_bytes().as_ptr().cast(),
        None => {
            let c = CString::new(s).map_err(|_| tvm_error("unreachable: a NUL checked"))?;
            let p = c.as_ptr();
            held.strings.push(c);
            p
        }
    };
    Ok(plain(ti::RAW_STR, |v| v.v.v_c_str = p))
}

/// An NDArray argument, passed as its `DLTensor*` (tvm-ffi's `TensorView` takes it).
fn tensor_argument(
    name: &str,
    i: usize,
    may_write: bool,
    arr: NDArray,
    held: &mut Held,
) -> Result<ObjAny, Error> {
    if may_write {
        let write = arr.foreign_write().ok_or_else(|| {
            tvm_error(format!(
                "argument {i} of `{name}`: a tvm-ffi function may write its tensor \
                 arguments, and this NDArray is {}: lend it writable with \
                 `NDArray::lend_mut`, or declare the parameter read-only \
                 (`TvmFfiLibrary::function_reading`)",
                if arr.is_read_only() {
                    "read-only"
                } else {
                    "shared (Rust may be reading it)"
                }
            ))
        })?;
        held.writes.push(write);
    }
    // The tensor lives in the object, which the caller's argument keeps alive.
    let p = arr.as_dl_tensor_ptr();
    Ok(plain(ti::DL_TENSOR_PTR, |v| v.v.v_ptr = p.cast()))
}

/// A kernel's result (an owned tvm-ffi `Any`) as our value; a foreign object in it is
/// released whatever happens.
pub(super) fn result(rt: Option<&'static Runtime>, name: &str, r: ObjAny) -> Result<Any, Error> {
    if r.type_index >= ti::STATIC_OBJECT_BEGIN {
        let Some(rt) = rt else {
            return Err(tvm_error(format!(
                "tvm-ffi function `{name}` returned an object (type index {}): the \
                 library has no tvm-ffi runtime to release it through, so its reference \
                 is leaked",
                r.type_index
            )));
        };
        // SAFETY: a result is owned: its object's reference is ours.
        let Some(obj) = (unsafe { rt.owned_object(r) }) else {
            return Err(tvm_error(format!(
                "tvm-ffi function `{name}` returned a null object"
            )));
        };
        return object_result(name, obj);
    }
    plain_value(name, &r, "returned")
}

/// A plain tvm-ffi value (kind below 64) as our owned value.
fn plain_value(name: &str, r: &ObjAny, what: &str) -> Result<Any, Error> {
    // SAFETY (for the union reads below): each arm reads the member its kind selects;
    // every member is plain data.
    Ok(match r.type_index {
        ti::NONE => Any::NONE,
        // SAFETY: see above.
        ti::INT => Any::from(unsafe { r.v.v_int64 }),
        // SAFETY: see above.
        ti::BOOL => Any::from(unsafe { r.v.v_int64 } != 0),
        // SAFETY: see above.
        ti::FLOAT => Any::from(unsafe { r.v.v_float64 }),
        // SAFETY: see above.
        ti::OPAQUE_PTR => Any::opaque_ptr(unsafe { r.v.v_ptr }),
        ti::DATA_TYPE => {
            // SAFETY: see above.
            let d = unsafe { r.v.v_dtype };
            Any::from(object_core::DataType::new(d.code, d.bits, d.lanes))
        }
        ti::DEVICE => {
            // SAFETY: see above.
            let d = unsafe { r.v.v_device };
            Any::from(object_core::Device::new(d.device_type, d.device_id))
        }
        ti::SMALL_STR | ti::SMALL_BYTES if r.small <= 7 => {
            // SAFETY: see above.
            let b = unsafe { r.v.v_bytes };
            let b = &b[..r.small as usize];
            if r.type_index == ti::SMALL_BYTES {
                Any::from(Bytes::new(b))
            } else {
                Any::from(core::str::from_utf8(b).map_err(|e| {
                    tvm_error(format!("`{name}` {what} a string that is not UTF-8: {e}"))
                })?)
            }
        }
        other => {
            return Err(tvm_error(format!(
                "tvm-ffi function `{name}` {what} a value of kind {other}, which has no \
                 owned form here"
            )))
        }
    })
}

/// A tvm-ffi object as our value: strings, bytes and shapes copied, a tensor imported
/// through DLPack without copying, a function wrapped; anything else an error naming
/// its type key. `obj` is released (the tensor and the function keep their own
/// references as long as they need them).
fn object_result(name: &str, obj: Foreign) -> Result<Any, Error> {
    let rt = obj.runtime();
    match obj.type_index() as u32 {
        ti::STRING => {
            let s = core::str::from_utf8(obj.byte_cell()).map_err(|e| {
                tvm_error(format!(
                    "tvm-ffi function `{name}` returned a string that is not UTF-8: {e}"
                ))
            })?;
            Ok(Any::from(s))
        }
        ti::BYTES => Ok(Any::from(Bytes::new(obj.byte_cell()))),
        ti::SHAPE => Ok(Any::from(Shape::new(obj.shape_cell()))),
        ti::TENSOR => {
            let mut m: *mut object_containers::dlpack::DLManagedTensorVersioned =
                core::ptr::null_mut();
            // SAFETY: `c_api.h`: exports a live tensor (taking its own reference).
            let rc = unsafe { (rt.tensor_to_dlpack_versioned)(obj.as_ptr(), &mut m) };
            drop(obj);
            if rc != 0 {
                return Err(rt.failure("`TVMFFITensorToDLPackVersioned`", rc));
            }
            // SAFETY: a managed tensor tvm-ffi just made for us; on success the NDArray
            // owns it, on failure it is still ours to delete.
            match unsafe { NDArray::from_dlpack_versioned(m) } {
                Ok(a) => Ok(Any::from(a)),
                Err(e) => {
                    // SAFETY: still ours (a refused import leaves it to the caller).
                    unsafe {
                        if let Some(d) = m.as_ref().and_then(|m| m.deleter) {
                            d(m);
                        }
                    }
                    Err(tvm_error(format!(
                        "tvm-ffi function `{name}` returned a tensor that cannot be \
                         imported: {e}"
                    )))
                }
            }
        }
        ti::FUNCTION => Ok(Any::from(callback::foreign_function(obj, None))),
        _ => Err(tvm_error(format!(
            "tvm-ffi function `{name}` returned a `{}` (tvm-ffi type index {}), which has \
             no form here; it was released",
            obj.type_key(),
            obj.type_index()
        ))),
    }
}

/// What a tvm-ffi argument of a callback is borrowed as.
pub(super) enum Arg<'a> {
    /// A value checked as C's (`fence::slot_from_c`).
    Slot(Slot<'a>),
    /// A string borrowed from a tvm-ffi string object.
    Str(&'a str),
    /// Our copy of what tvm-ffi held.
    Owned(Any),
}

impl Arg<'_> {
    pub(super) fn view(&self) -> AnyView<'_> {
        match self {
            Arg::Slot(s) => s.view(),
            Arg::Str(s) => AnyView::from(*s),
            Arg::Owned(a) => a.view(),
        }
    }
}

/// A tvm-ffi argument of a callback, borrowed for the call.
///
/// # Safety
///
/// `v` is a valid tvm-ffi `AnyView` of `rt`'s runtime for `'a` (its objects alive, its
/// pointers valid).
pub(super) unsafe fn callback_argument<'a>(
    rt: &'static Runtime,
    v: &'a ObjAny,
) -> Result<Arg<'a>, Error> {
    match v.type_index {
        ti::BYTE_ARRAY_PTR => {
            // SAFETY: a byte array valid for the call (the caller's guarantee).
            let b = unsafe { (*v.v.v_ptr.cast::<ByteArray>()).bytes() };
            Ok(Arg::Owned(Any::from(Bytes::new(b))))
        }
        ti::RAW_STR => {
            // SAFETY: the union member of the kind.
            let p = unsafe { v.v.v_c_str };
            // tvm-ffi's `const char*` is NUL-terminated (its length word is zero).
            // SAFETY: the caller's guarantee: valid for `'a`.
            let s = unsafe { crate::fence::c_str(p, "string argument") }?;
            Ok(Arg::Str(s))
        }
        index if index < ti::STATIC_OBJECT_BEGIN && index != ti::OBJECT_RVALUE_REF => {
            // SAFETY: plain kinds, the DLTensor* and inline strings and bytes read
            // as C's (the same layout); the caller's guarantee covers the pointers.
            Ok(Arg::Slot(unsafe { slot_from_c(v) }?))
        }
        index if index >= ti::STATIC_OBJECT_BEGIN => {
            // SAFETY: the caller's guarantee: a live object, borrowed.
            let obj = unsafe { Foreign::from_borrowed(rt, v.v.v_ptr) }
                .ok_or_else(|| Error::type_error("a null tvm-ffi object"))?;
            Ok(match index {
                ti::STRING => {
                    // Borrowed from the argument's object, alive for the call.
                    let b: &'a [u8] = {
                        let b = obj.byte_cell();
                        // SAFETY: the caller's reference keeps the bytes alive for `'a`.
                        unsafe { core::slice::from_raw_parts(b.as_ptr(), b.len()) }
                    };
                    Arg::Str(core::str::from_utf8(b).map_err(|e| {
                        Error::value_error(format!("a tvm-ffi string that is not UTF-8: {e}"))
                    })?)
                }
                ti::BYTES => Arg::Owned(Any::from(Bytes::new(obj.byte_cell()))),
                ti::SHAPE => Arg::Owned(Any::from(Shape::new(obj.shape_cell()))),
                ti::TENSOR => {
                    // A tensor's DLTensor follows its header; lent for the call.
                    let p = obj.cell::<c_void>().cast_mut();
                    Arg::Slot(Slot::Tensor(p))
                }
                ti::FUNCTION => Arg::Owned(Any::from(callback::foreign_function(obj, None))),
                _ => {
                    return Err(Error::type_error(format!(
                        "a tvm-ffi `{}` cannot be passed to this runtime's functions",
                        obj.type_key()
                    )))
                }
            })
        }
        other => Err(Error::type_error(format!(
            "a tvm-ffi value of kind {other} cannot be passed to this runtime's functions"
        ))),
    }
}

/// Our callback's result as an owned tvm-ffi `Any`.
pub(super) fn callback_result(rt: &'static Runtime, a: Any) -> Result<ObjAny, Error> {
    let index = a.type_index();
    if index < ti::STATIC_OBJECT_BEGIN && index != ti::SMALL_STR {
        let mut v = view_to_c(a.view());
        v.small = 0;
        return Ok(v);
    }
    let from_bytes = |f: unsafe extern "C" fn(*const ByteArray, *mut ObjAny) -> i32,
                      b: &[u8]|
     -> Result<ObjAny, Error> {
        let mut out = ObjAny::NONE;
        let array = ByteArray::of(b);
        // SAFETY: `c_api.h`: copies the bytes into an owned tvm-ffi value.
        let rc = unsafe { f(&array, &mut out) };
        if rc != 0 {
            return Err(rt.failure("making a tvm-ffi string", rc));
        }
        Ok(out)
    };
    if let Some(s) = a.as_str() {
        return from_bytes(rt.string_from_byte_array, s.as_bytes());
    }
    if let Some(b) = a.as_object_of::<BytesObj>() {
        return from_bytes(rt.bytes_from_byte_array, b.as_bytes());
    }
    let object = if let Some(s) = a.as_object_of::<ShapeObj>() {
        rt.make_shape(Shape::from_object_ptr(s.clone()).as_slice())?
    } else if let Some(f) = a.as_object_of::<FunctionObj>() {
        callback::wrap(rt, Function::from_object_ptr(f.clone()))?
    } else if a.as_object_of::<NDArrayObj>().is_some() {
        let arr = NDArray::try_from(a).map_err(|_| tvm_error("unreachable: an NDArray"))?;
        return tensor_result(rt, arr);
    } else {
        return Err(Error::type_error(format!(
            "a `{}` cannot be returned to a tvm-ffi caller (plain values, strings, bytes, \
             NDArray, Shape and Function can)",
            a.type_key()
        )));
    };
    Ok(object_any(object))
}

/// An owned tvm-ffi `Any` holding `obj`'s reference.
fn object_any(obj: Foreign) -> ObjAny {
    let index = obj.type_index() as u32;
    let p = obj.into_raw();
    plain(index, |v| v.v.v_ptr = p)
}

/// An NDArray handed to tvm-ffi as a `Tensor` through DLPack, without copying. tvm-ffi's
/// tensors have no read-only flag, so only an NDArray that may be written passes: the
/// only handle to writable memory, not lent.
fn tensor_result(rt: &'static Runtime, arr: NDArray) -> Result<ObjAny, Error> {
    let m = arr.into_dlpack_versioned();
    // SAFETY: our export, alive until its deleter runs.
    let flags = unsafe { (*m).flags };
    let release = |m: *mut object_containers::dlpack::DLManagedTensorVersioned| {
        // SAFETY: our export, deleted once.
        unsafe {
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
    };
    if flags & object_containers::dlpack::DLPACK_FLAG_BITMASK_READ_ONLY != 0 {
        release(m);
        return Err(Error::type_error(
            "an NDArray returned to tvm-ffi must be the only handle to writable memory \
             (a tvm-ffi Tensor cannot be read-only, and its holder may write it)",
        ));
    }
    let mut out: *mut c_void = core::ptr::null_mut();
    // SAFETY: `c_api.h`: takes the managed tensor on success.
    let rc = unsafe { (rt.tensor_from_dlpack_versioned)(m, 0, 0, &mut out) };
    if rc != 0 {
        release(m);
        return Err(rt.failure("`TVMFFITensorFromDLPackVersioned`", rc));
    }
    // SAFETY: one reference to the new tensor, ours.
    let t = unsafe { Foreign::from_owned(rt, out) }
        .ok_or_else(|| tvm_error("`TVMFFITensorFromDLPackVersioned` returned null"))?;
    Ok(object_any(t))
}
