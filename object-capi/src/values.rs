//! `ObjAny` helpers, errors, strings and bytes, arrays and maps.

use core::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use object_containers::{set_last_error, take_last_error, Array, Map};
use object_core::{
    Any, Bytes, BytesObj, Error, ErrorKind, ErrorObj, ObjectPtr, ObjectRef, String, StringObj,
};

use crate::fence::{
    any_from_c_owned, any_to_c, borrow, bytes, c_str, give, guard, interned, null, out,
    slot_from_c, str_out, utf8, Borrowed, Slot, FAILED,
};
use crate::types::*;

/// The handle as a typed object pointer (a new reference), or a type error.
pub(crate) fn typed<T: object_core::ObjectType>(
    o: &Borrowed,
    what: &str,
) -> Result<ObjectPtr<T>, Error> {
    ObjectRef::clone(o).downcast::<T>().map_err(|o| {
        Error::type_error(format!(
            "`{what}` must be a `{}`, got `{}`",
            T::TYPE_KEY,
            o.type_key()
        ))
    })
}

/// An owned value from a checked slot (a borrowed string is copied; a tensor pointer
/// cannot be owned).
pub(crate) fn owned(slot: Slot<'_>) -> Result<Any, Error> {
    match slot {
        Slot::Empty => Ok(Any::NONE),
        Slot::Owned(a) => Ok(a),
        Slot::Str(s) => Ok(Any::from(s)),
        Slot::Tensor(_) => Err(Error::type_error(
            "a borrowed DLTensor* cannot be stored; import it as an NDArray first",
        )),
    }
}

// ---------------------------------------------------------------------------------
// ObjAny
// ---------------------------------------------------------------------------------

/// Releases an owned value (drops the reference of an object kind) and sets it to None.
/// A value that breaks the header's rules is an error, and is still set to None, its
/// object (if any) released: an object kind whose object is of another type, a null
/// object pointer, a borrowed `DLTensor*`, a value kind the C API does not know.
///
/// # Safety
///
/// `value` is null (an error) or an owned value following the header's rules.
#[no_mangle]
pub unsafe extern "C" fn obj_any_release(value: *mut ObjAny) -> i32 {
    guard(|| {
        let v = out(value, "value")?;
        let taken = core::mem::replace(v, ObjAny::NONE);
        // SAFETY: the caller gives up an owned value.
        drop(unsafe { any_from_c_owned(taken) }?);
        Ok(())
    })
}

/// Copies a value into an owned one (`dst` gets a new reference for object kinds; a
/// raw string becomes an owned string). On failure `*dst` is left as it was.
///
/// # Safety
///
/// `src` follows the header's rules; `dst` is writable (its old content is overwritten,
/// not released).
#[no_mangle]
pub unsafe extern "C" fn obj_any_copy(src: *const ObjAny, dst: *mut ObjAny) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let s = unsafe { src.as_ref() }.ok_or_else(|| null("src"))?;
        let d = out(dst, "dst")?;
        // SAFETY: the caller's guarantee.
        *d = any_to_c(owned(unsafe { slot_from_c(s) }?)?);
        Ok(())
    })
}

/// The type key of a value (`"int"`, `"ffi.SmallStr"`, `"demo.Add"`, …), NUL-terminated.
///
/// # Safety
///
/// `value` follows the header's rules; `out_key` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_any_type_key(value: *const ObjAny, out_key: *mut ObjStr) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let v = unsafe { value.as_ref() }.ok_or_else(|| null("value"))?;
        let o = out(out_key, "out_key")?;
        let info = object_core::registry::type_info(v.type_index).ok_or_else(|| {
            Error::new(
                ErrorKind::KeyError,
                format!("no type has index {}", v.type_index),
            )
        })?;
        *o = interned(info.key());
        Ok(())
    })
}

/// The text of a string value (inline, `ffi.String`, or a raw C string), borrowed from
/// the value: valid while the value is and, for inline strings, while it stays where it
/// is. Not NUL-terminated in general.
///
/// # Safety
///
/// `value` follows the header's rules; `out_str` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_any_get_str(value: *const ObjAny, out_str: *mut ObjStr) -> i32 {
    guard(|| {
        use object_core::type_index as ti;
        // SAFETY: the caller's guarantee.
        let v = unsafe { value.as_ref() }.ok_or_else(|| null("value"))?;
        let o = out(out_str, "out_str")?;
        match v.type_index {
            ti::SMALL_STR if v.small <= 7 => {
                // `v_bytes` is the member of inline strings; the pointer is to the
                // caller's value itself.
                let p = core::ptr::addr_of!(v.v.v_bytes);
                // SAFETY: `small` (at most 7) of the 8 inline bytes.
                let b = unsafe { core::slice::from_raw_parts(p.cast::<u8>(), v.small as usize) };
                core::str::from_utf8(b).map_err(|e| Error::value_error(e.to_string()))?;
                *o = ObjStr {
                    data: p.cast(),
                    len: v.small as usize,
                };
            }
            ti::RAW_STR => {
                // SAFETY: the member of raw strings.
                let p = unsafe { v.v.v_c_str };
                let s = if v.small == 0 {
                    // SAFETY: the caller's guarantee.
                    unsafe { c_str(p, "string") }?
                } else {
                    // SAFETY: the caller's guarantee.
                    unsafe { utf8(p, v.small as usize, "string") }?
                };
                *o = str_out(s);
            }
            ti::STRING => {
                // SAFETY: the member of objects; a live string (the caller's guarantee).
                let b = unsafe { borrow(v.v.v_obj, "string") }?;
                let s = typed::<StringObj>(&b, "value")?;
                *o = str_out(s.as_str());
            }
            other => {
                return Err(Error::type_error(format!(
                    "expected a string, got type index {other}"
                )))
            }
        }
        Ok(())
    })
}

/// Makes an owned string value from `len` bytes of UTF-8 (inline when short).
///
/// # Safety
///
/// `data` points to `len` bytes; `out_value` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_any_from_str(
    data: *const c_char,
    len: usize,
    out_value: *mut ObjAny,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let s = unsafe { utf8(data, len, "data") }?;
        *out(out_value, "out_value")? = any_to_c(Any::from(s));
        Ok(())
    })
}

/// An int value (`OBJ_KIND_INT`): `ObjAny args[2] = {obj_any_int(40), obj_any_int(2)};`.
/// Cannot fail.
#[no_mangle]
pub extern "C" fn obj_any_int(value: i64) -> ObjAny {
    ObjAny {
        type_index: object_core::type_index::INT,
        small: 0,
        v: ObjAnyPayload { v_int64: value },
    }
}

/// A float value (`OBJ_KIND_FLOAT`). Cannot fail.
#[no_mangle]
pub extern "C" fn obj_any_float(value: f64) -> ObjAny {
    ObjAny {
        type_index: object_core::type_index::FLOAT,
        small: 0,
        v: ObjAnyPayload { v_float64: value },
    }
}

/// A bool value (`OBJ_KIND_BOOL`): 1 for any nonzero `value`, else 0. Cannot fail.
#[no_mangle]
pub extern "C" fn obj_any_bool(value: i32) -> ObjAny {
    ObjAny {
        type_index: object_core::type_index::BOOL,
        small: 0,
        v: ObjAnyPayload {
            v_int64: i64::from(value != 0),
        },
    }
}

/// A *borrowed* string value (`OBJ_KIND_RAW_STR`, NUL-terminated) pointing at `text`,
/// for arguments: the text must stay valid while the value is used; a call checks that
/// it is UTF-8 (and that it is not null). Cannot fail itself.
#[no_mangle]
pub extern "C" fn obj_any_str(text: *const c_char) -> ObjAny {
    ObjAny {
        type_index: object_core::type_index::RAW_STR,
        small: 0,
        v: ObjAnyPayload { v_c_str: text },
    }
}

/// Prints a value with the library's printer (`42`, `"text"`, `tour.Add(...)`), and a
/// newline, to standard output.
///
/// # Safety
///
/// `value` is null (an error) or a value following the header's rules.
#[no_mangle]
pub unsafe extern "C" fn obj_any_print(value: *const ObjAny) -> i32 {
    guard(|| {
        // SAFETY: null or a readable value (the caller's guarantee).
        let c = unsafe { value.as_ref() }.ok_or_else(|| null("value"))?;
        // SAFETY: the caller's guarantee.
        let slot = unsafe { slot_from_c(c) }?;
        use std::io::Write;
        writeln!(std::io::stdout().lock(), "{:?}", slot.view())
            .map_err(|e| Error::new(ErrorKind::IOError, format!("printing a value: {e}")))
    })
}

// ---------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------

/// Leaves an error of `kind` with `message` in this thread's slot, and returns -1, so a
/// C callback can `return obj_error_raise("ValueError", "…");`.
///
/// # Safety
///
/// `kind` and `message` are null (then "Error" / an empty message) or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn obj_error_raise(kind: *const c_char, message: *const c_char) -> i32 {
    let rc = guard(|| {
        let k = if kind.is_null() {
            "Error"
        } else {
            // SAFETY: the caller's guarantee.
            unsafe { c_str(kind, "kind") }?
        };
        let m = if message.is_null() {
            ""
        } else {
            // SAFETY: the caller's guarantee.
            unsafe { c_str(message, "message") }?
        };
        set_last_error(Error::new(k, m));
        Ok(())
    });
    if rc == 0 {
        FAILED
    } else {
        rc
    }
}

/// Leaves an existing error object (`ffi.Error`) in the slot, with one more frame when
/// `frame` is not null; returns -1. The caller keeps its own reference, and its error
/// is not changed (the frame goes on a copy).
///
/// # Safety
///
/// `error` is null (an error) or a live object; `frame` null or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn obj_error_set(error: ObjHandle, frame: *const c_char) -> i32 {
    let rc = guard(|| {
        // SAFETY: the caller's guarantee.
        let o = unsafe { borrow(error, "error") }?;
        let mut e = Error::from_object_ptr(typed::<ErrorObj>(&o, "error")?);
        if !frame.is_null() {
            // SAFETY: the caller's guarantee.
            e = e.with_frame(unsafe { c_str(frame, "frame") }?);
        }
        set_last_error(e);
        Ok(())
    });
    if rc == 0 {
        FAILED
    } else {
        rc
    }
}

/// Takes the error waiting in this thread's slot (an `ffi.Error` the caller owns), or
/// null when there is none.
///
/// # Safety
///
/// `out_error` is writable.
#[no_mangle]
pub unsafe extern "C" fn obj_error_take(out_error: *mut ObjHandle) -> i32 {
    guard(|| {
        let o = out(out_error, "out_error")?;
        *o = match take_last_error() {
            Some(e) => give(e.into_object_ptr()),
            None => core::ptr::null_mut(),
        };
        Ok(())
    })
}

/// Prints the error waiting in this thread's slot to standard error (`Kind: message`,
/// then one indented line per frame) and empties the slot. Returns 1 if there was one,
/// 0 if not, so that a program can end with `return obj_error_print();` after a failed
/// call. Never fails.
#[no_mangle]
pub extern "C" fn obj_error_print() -> i32 {
    let printed = catch_unwind(|| {
        let Some(e) = take_last_error() else {
            return 0;
        };
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}: {}", e.kind(), e.message());
        for frame in e.frames() {
            let _ = writeln!(err, "    in {frame}");
        }
        1
    });
    match printed {
        Ok(n) => n,
        // A panic (only while printing) still means an error was there; its payload is
        // dropped where a panicking `Drop` cannot unwind out of here.
        Err(payload) => {
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            1
        }
    }
}

fn with_error<R>(error: ObjHandle, f: impl FnOnce(&Error) -> Result<R, Error>) -> Result<R, Error> {
    // SAFETY: every caller's contract: `error` is null or a live object.
    let o = unsafe { borrow(error, "error") }?;
    let e = Error::from_object_ptr(typed::<ErrorObj>(&o, "error")?);
    f(&e)
}

/// The kind of an error (`"TypeError"`, …), borrowed from the error object.
///
/// # Safety
///
/// `error` is null (an error) or a live object; `out_str` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_error_kind(error: ObjHandle, out_str: *mut ObjStr) -> i32 {
    guard(|| {
        let o = out(out_str, "out_str")?;
        // The text is static (a well-known kind) or lives in the object (`Other`), which
        // the caller's reference keeps alive.
        *o = with_error(error, |e| Ok(str_out(e.kind().as_str())))?;
        Ok(())
    })
}

/// The message of an error, borrowed from the error object.
///
/// # Safety
///
/// `error` is null (an error) or a live object; `out_str` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_error_message(error: ObjHandle, out_str: *mut ObjStr) -> i32 {
    guard(|| {
        let o = out(out_str, "out_str")?;
        *o = with_error(error, |e| Ok(str_out(e.message())))?;
        Ok(())
    })
}

/// The number of call frames an error crossed.
///
/// # Safety
///
/// `error` is null (an error) or a live object; `out_count` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_error_num_frames(error: ObjHandle, out_count: *mut usize) -> i32 {
    guard(|| {
        let o = out(out_count, "out_count")?;
        *o = with_error(error, |e| Ok(e.frames().len()))?;
        Ok(())
    })
}

/// Frame `i` of an error (innermost first), borrowed from the error object.
///
/// # Safety
///
/// `error` is null (an error) or a live object; `out_str` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_error_frame(error: ObjHandle, i: usize, out_str: *mut ObjStr) -> i32 {
    guard(|| {
        let o = out(out_str, "out_str")?;
        *o = with_error(error, |e| {
            e.frames()
                .get(i)
                .map(|f| str_out(f))
                .ok_or_else(|| Error::new(ErrorKind::IndexError, format!("no frame {i}")))
        })?;
        Ok(())
    })
}

// ---------------------------------------------------------------------------------
// Strings and bytes
// ---------------------------------------------------------------------------------

/// A new `ffi.String` from `len` bytes of UTF-8.
///
/// # Safety
///
/// `data` points to `len` bytes; `out_obj` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_string_create(
    data: *const c_char,
    len: usize,
    out_obj: *mut ObjHandle,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let s = unsafe { utf8(data, len, "data") }?;
        *out(out_obj, "out_obj")? = give(String::new(s).into_object_ptr());
        Ok(())
    })
}

/// The text of an `ffi.String`, borrowed from it (NUL-terminated as well).
///
/// # Safety
///
/// `obj` is null (an error) or a live object; `out_str` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_string_get(obj: ObjHandle, out_str: *mut ObjStr) -> i32 {
    guard(|| {
        let o = out(out_str, "out_str")?;
        // SAFETY: the caller's guarantee.
        let b = unsafe { borrow(obj, "obj") }?;
        let s = typed::<StringObj>(&b, "obj")?;
        *o = str_out(s.as_str());
        Ok(())
    })
}

/// A new `ffi.Bytes` from `len` bytes.
///
/// # Safety
///
/// `data` points to `len` bytes; `out_obj` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_bytes_create(
    data: *const c_char,
    len: usize,
    out_obj: *mut ObjHandle,
) -> i32 {
    guard(|| {
        // SAFETY: the caller's guarantee.
        let b = unsafe { bytes(data, len, "data") }?;
        *out(out_obj, "out_obj")? = give(Bytes::new(b).into_object_ptr());
        Ok(())
    })
}

/// The content of an `ffi.Bytes`, borrowed from it.
///
/// # Safety
///
/// `obj` is null (an error) or a live object; `out_str` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_bytes_get(obj: ObjHandle, out_str: *mut ObjStr) -> i32 {
    guard(|| {
        let o = out(out_str, "out_str")?;
        // SAFETY: the caller's guarantee.
        let b = unsafe { borrow(obj, "obj") }?;
        let s = typed::<BytesObj>(&b, "obj")?;
        let bytes = s.as_bytes();
        *o = ObjStr {
            data: bytes.as_ptr().cast(),
            len: bytes.len(),
        };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------
// Arrays and maps
// ---------------------------------------------------------------------------------

/// Checks `n` C values and makes owned values of them.
///
/// # Safety
///
/// `items` points to `n` values following the header's rules (null when `n` is 0).
unsafe fn owned_items(items: *const ObjAny, n: usize, what: &str) -> Result<Vec<Any>, Error> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if items.is_null() {
        return Err(null(what));
    }
    // SAFETY: the caller's guarantee.
    let items = unsafe { core::slice::from_raw_parts(items, n) };
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            // SAFETY: the caller's guarantee, per value.
            unsafe { slot_from_c(v) }
                .and_then(owned)
                .map_err(|e| e.with_frame(format!("{what}[{i}]")))
        })
        .collect()
}

/// A new `ffi.Array` of `n` values (copied: objects get a new reference).
///
/// # Safety
///
/// `items` points to `n` values (null when `n` is 0); `out_obj` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_array_create(
    items: *const ObjAny,
    n: usize,
    out_obj: *mut ObjHandle,
) -> i32 {
    guard(|| {
        let o = out(out_obj, "out_obj")?;
        // SAFETY: the caller's guarantee.
        let items = unsafe { owned_items(items, n, "items") }?;
        *o = give(Array::<Any>::from(items).into_object_ptr());
        Ok(())
    })
}

fn array_of(obj: ObjHandle) -> Result<Array<Any>, Error> {
    // SAFETY: every caller's contract: `obj` is null or a live object.
    let b = unsafe { borrow(obj, "array") }?;
    Ok(Array::<Any>::from_object_ptr(typed::<
        object_containers::ArrayObj,
    >(&b, "array")?)?)
}

/// The number of items of an `ffi.Array`.
///
/// # Safety
///
/// `array` is null (an error) or a live object; `out_size` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_array_size(array: ObjHandle, out_size: *mut usize) -> i32 {
    guard(|| {
        let o = out(out_size, "out_size")?;
        *o = array_of(array)?.len();
        Ok(())
    })
}

/// Item `i` of an `ffi.Array`, as an owned value.
///
/// # Safety
///
/// `array` is null (an error) or a live object; `out_value` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_array_get(array: ObjHandle, i: usize, out_value: *mut ObjAny) -> i32 {
    guard(|| {
        let o = out(out_value, "out_value")?;
        let a = array_of(array)?;
        let v = a.get(i).ok_or_else(|| {
            Error::new(
                ErrorKind::IndexError,
                format!("index {i} out of range for an array of {}", a.len()),
            )
        })?;
        *o = any_to_c(v.clone());
        Ok(())
    })
}

/// A new `ffi.Map` of `n` key/value pairs (copied).
///
/// # Safety
///
/// `keys` and `values` point to `n` values each (null when `n` is 0); `out_obj`
/// writable.
#[no_mangle]
pub unsafe extern "C" fn obj_map_create(
    keys: *const ObjAny,
    values: *const ObjAny,
    n: usize,
    out_obj: *mut ObjHandle,
) -> i32 {
    guard(|| {
        let o = out(out_obj, "out_obj")?;
        // SAFETY: the caller's guarantee.
        let ks = unsafe { owned_items(keys, n, "keys") }?;
        // SAFETY: the caller's guarantee.
        let vs = unsafe { owned_items(values, n, "values") }?;
        let mut m: Map<Any, Any> = Map::with_capacity(n);
        for (k, v) in ks.into_iter().zip(vs) {
            m.insert(k, v);
        }
        *o = give(m.into_object_ptr());
        Ok(())
    })
}

fn map_of(obj: ObjHandle) -> Result<Map<Any, Any>, Error> {
    // SAFETY: every caller's contract: `obj` is null or a live object.
    let b = unsafe { borrow(obj, "map") }?;
    Ok(Map::<Any, Any>::from_object_ptr(typed::<
        object_containers::MapObj,
    >(&b, "map")?)?)
}

/// The number of entries of an `ffi.Map`.
///
/// # Safety
///
/// `map` is null (an error) or a live object; `out_size` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_map_size(map: ObjHandle, out_size: *mut usize) -> i32 {
    guard(|| {
        let o = out(out_size, "out_size")?;
        *o = map_of(map)?.len();
        Ok(())
    })
}

/// Looks `key` up in an `ffi.Map`: `*out_found` is 1 and `*out_value` an owned value if
/// present, else 0 (and `*out_value` None).
///
/// # Safety
///
/// `map` is null (an error) or a live object; `key` follows the header's rules;
/// `out_value` and `out_found` writable.
#[no_mangle]
pub unsafe extern "C" fn obj_map_get(
    map: ObjHandle,
    key: *const ObjAny,
    out_value: *mut ObjAny,
    out_found: *mut i32,
) -> i32 {
    guard(|| {
        let o = out(out_value, "out_value")?;
        let f = out(out_found, "out_found")?;
        let m = map_of(map)?;
        // SAFETY: the caller's guarantee.
        let k = unsafe { key.as_ref() }.ok_or_else(|| null("key"))?;
        // SAFETY: the caller's guarantee.
        let slot = unsafe { slot_from_c(k) }?;
        match m.get(slot.view()) {
            Some(v) => {
                *o = any_to_c(v.clone());
                *f = 1;
            }
            None => {
                *o = ObjAny::NONE;
                *f = 0;
            }
        }
        Ok(())
    })
}
