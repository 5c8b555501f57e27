//! The fence every entry point goes through: panics caught, errors into the
//! thread-local slot, and the checked conversions between C values and Rust values.

use core::ffi::{c_char, c_void, CStr};
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Mutex, OnceLock};

use object_containers::set_last_error;
use object_core::{Any, AnyView, Bytes, DataType, Device, Error, Object, ObjectRef};

use crate::types::{ObjAny, ObjHandle, ObjStr};

/// The code every entry point returns on failure (an error waits in the slot).
pub(crate) const FAILED: i32 = -1;

/// Runs `f`, turning an `Err` or a panic into an error in this thread's slot and
/// `FAILED`; 0 on success. Nothing unwinds out of it.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), Error>) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            set_last_error(e);
            FAILED
        }
        Err(payload) => {
            set_last_error(object_containers::panic_error(payload));
            FAILED
        }
    }
}

/// A null-pointer error naming the argument.
pub(crate) fn null(what: &str) -> Error {
    Error::value_error(format!("`{what}` is null"))
}

/// Checks an output pointer.
pub(crate) fn out<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Error> {
    // SAFETY: the C caller passes a valid, writable, unaliased pointer or null (the
    // header's rule for every `out` parameter); null is refused.
    unsafe { p.as_mut() }.ok_or_else(|| null(what))
}

/// Borrows a C string (NUL-terminated UTF-8).
///
/// # Safety
///
/// `p` is null or a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn c_str<'a>(p: *const c_char, what: &str) -> Result<&'a str, Error> {
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: the caller's guarantee.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map_err(|e| Error::value_error(format!("`{what}` is not UTF-8: {e}")))
}

/// Borrows `len` bytes (null allowed when `len` is 0).
///
/// # Safety
///
/// `p` points to `len` readable bytes that outlive `'a`.
pub(crate) unsafe fn bytes<'a>(
    p: *const c_char,
    len: usize,
    what: &str,
) -> Result<&'a [u8], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: the caller's guarantee.
    Ok(unsafe { core::slice::from_raw_parts(p.cast::<u8>(), len) })
}

/// Borrows `len` bytes of UTF-8.
///
/// # Safety
///
/// As [`bytes`].
pub(crate) unsafe fn utf8<'a>(p: *const c_char, len: usize, what: &str) -> Result<&'a str, Error> {
    // SAFETY: the caller's guarantee.
    let b = unsafe { bytes(p, len, what) }?;
    core::str::from_utf8(b).map_err(|e| Error::value_error(format!("`{what}` is not UTF-8: {e}")))
}

/// A slice handed to C for a string that lives at least as long as its owner.
pub(crate) fn str_out(s: &str) -> ObjStr {
    ObjStr {
        data: s.as_ptr().cast(),
        len: s.len(),
    }
}

/// A NUL-terminated copy of a `'static` string, made once per string and kept for the
/// process (type keys, field names): C compares them with `strcmp`. (Ordered maps, not
/// hash tables, so that leak checkers see what they hold as reachable.)
pub(crate) fn interned(s: &'static str) -> ObjStr {
    static TABLE: OnceLock<Mutex<BTreeMap<&'static str, &'static CStr>>> = OnceLock::new();
    let table = TABLE.get_or_init(Default::default);
    let mut t = table.lock().unwrap_or_else(|e| e.into_inner());
    let c: &'static CStr = t.entry(s).or_insert_with(|| {
        let owned = std::ffi::CString::new(s.replace('\0', "?")).unwrap_or_default();
        Box::leak(owned.into_boxed_c_str())
    });
    ObjStr {
        data: c.as_ptr(),
        len: s.len(),
    }
}

/// An object handle borrowed from C for the length of a call: no count change.
pub(crate) struct Borrowed(core::mem::ManuallyDrop<ObjectRef>);

impl core::ops::Deref for Borrowed {
    type Target = ObjectRef;
    fn deref(&self) -> &ObjectRef {
        &self.0
    }
}

/// Borrows an object handle (no count change), checking for null.
///
/// # Safety
///
/// `h` is null or a live object that the caller keeps alive while the result lives.
pub(crate) unsafe fn borrow(h: ObjHandle, what: &str) -> Result<Borrowed, Error> {
    if h.is_null() {
        return Err(null(what));
    }
    // SAFETY: a live object (the caller's guarantee); the handle is never dropped
    // (`ManuallyDrop`), so the reference it stands for stays the caller's.
    Ok(Borrowed(core::mem::ManuallyDrop::new(unsafe {
        ObjectRef::from_raw(h.cast::<Object>())
    })))
}

/// A new strong reference to a borrowed object handle.
///
/// # Safety
///
/// `h` is null or a live object.
pub(crate) unsafe fn clone_handle(h: ObjHandle, what: &str) -> Result<ObjectRef, Error> {
    if h.is_null() {
        return Err(null(what));
    }
    // SAFETY: the caller guarantees a live object; every object is an `Object`.
    Ok(unsafe { ObjectRef::clone_from_raw(h.cast::<Object>()) })
}

/// Gives one strong reference to C.
pub(crate) fn give<T: object_core::ObjectType>(o: object_core::ObjectPtr<T>) -> ObjHandle {
    object_core::ObjectPtr::into_raw(o).cast()
}

/// Moves an owned Rust value into C's representation (C now owns any object in it).
pub(crate) fn any_to_c(a: Any) -> ObjAny {
    let raw: AnyView<'static> = a.into_raw();
    view_to_c(raw)
}

/// Copies a view's bits into C's representation (no ownership).
pub(crate) fn view_to_c(v: AnyView<'_>) -> ObjAny {
    // SAFETY: `AnyView` is `repr(C)` `{ u32, u32, 8-byte union }` plus a zero-sized
    // marker; `ObjAny` has the same size and layout (asserted in `types`), and every
    // kind initializes all payload bytes.
    unsafe { core::mem::transmute::<AnyView<'_>, ObjAny>(v) }
}

/// A C argument, checked, as something a view can borrow from.
#[derive(Default)]
pub(crate) enum Slot<'a> {
    #[default]
    Empty,
    Owned(Any),
    Str(&'a str),
    Tensor(*mut c_void),
}

impl Slot<'_> {
    pub(crate) fn view(&self) -> AnyView<'_> {
        match self {
            Slot::Empty => AnyView::NONE,
            Slot::Owned(a) => a.view(),
            Slot::Str(s) => AnyView::from(*s),
            // SAFETY: a `DLTensor*` argument from C is valid for the call (the header's
            // rule for `OBJ_KIND_DL_TENSOR_PTR`), which outlives this view.
            Slot::Tensor(p) => unsafe { AnyView::from_dl_tensor_ptr(*p) },
        }
    }
}

/// Checks a borrowed C value.
///
/// # Safety
///
/// `c` follows the header's rules for its kind: a raw string points to its bytes, a
/// tensor pointer to a valid `DLTensor`, an object kind to a live object; all valid
/// for `'a`.
pub(crate) unsafe fn slot_from_c<'a>(c: &'a ObjAny) -> Result<Slot<'a>, Error> {
    use object_core::type_index as ti;
    // SAFETY (for the union reads below): each arm reads the member its kind selects;
    // every member is plain data, so any bits are a valid value of it.
    let v = c.v;
    Ok(match c.type_index {
        ti::NONE => Slot::Owned(Any::NONE),
        // SAFETY: see above.
        ti::INT => Slot::Owned(Any::from(unsafe { v.v_int64 })),
        // SAFETY: see above.
        ti::BOOL => Slot::Owned(Any::from(unsafe { v.v_int64 } != 0)),
        // SAFETY: see above.
        ti::FLOAT => Slot::Owned(Any::from(unsafe { v.v_float64 })),
        // SAFETY: see above.
        ti::OPAQUE_PTR => Slot::Owned(Any::opaque_ptr(unsafe { v.v_ptr })),
        ti::DATA_TYPE => {
            // SAFETY: see above.
            let d = unsafe { v.v_dtype };
            Slot::Owned(Any::from(DataType::new(d.code, d.bits, d.lanes)))
        }
        ti::DEVICE => {
            // SAFETY: see above.
            let d = unsafe { v.v_device };
            Slot::Owned(Any::from(Device::new(d.device_type, d.device_id)))
        }
        ti::DL_TENSOR_PTR => {
            // SAFETY: see above.
            let p = unsafe { v.v_ptr };
            if p.is_null() {
                return Err(null("DLTensor* argument"));
            }
            Slot::Tensor(p)
        }
        ti::RAW_STR => {
            // SAFETY: see above.
            let p = unsafe { v.v_c_str };
            let s = if c.small == 0 {
                // SAFETY: the caller's guarantee (NUL-terminated when `small` is 0).
                unsafe { c_str(p, "string argument") }?
            } else {
                // SAFETY: the caller's guarantee (`small` bytes).
                unsafe { utf8(p, c.small as usize, "string argument") }?
            };
            Slot::Str(s)
        }
        ti::SMALL_STR | ti::SMALL_BYTES => {
            if c.small > 7 {
                return Err(Error::value_error(format!(
                    "an inline string or bytes value of length {} (at most 7)",
                    c.small
                )));
            }
            // SAFETY: see above.
            let b = unsafe { v.v_bytes };
            let b = &b[..c.small as usize];
            if c.type_index == ti::SMALL_STR {
                let s = core::str::from_utf8(b).map_err(|e| {
                    Error::value_error(format!("an inline string is not UTF-8: {e}"))
                })?;
                Slot::Owned(Any::from(s))
            } else {
                Slot::Owned(Any::from(Bytes::new(b)))
            }
        }
        index if index >= ti::STATIC_OBJECT_BEGIN => {
            // SAFETY: see above.
            let p = unsafe { v.v_obj };
            // SAFETY: the caller's guarantee: a live object.
            let obj = unsafe { clone_handle(p, "object argument") }?;
            if obj.type_index() != index {
                return Err(Error::type_error(format!(
                    "a value says type index {index} but holds an object of type `{}` ({})",
                    obj.type_key(),
                    obj.type_index()
                )));
            }
            Slot::Owned(Any::from(obj))
        }
        other => {
            return Err(Error::type_error(format!(
                "value kind {other} cannot be passed through the C API"
            )))
        }
    })
}

/// Checks a borrowed array of C values.
///
/// # Safety
///
/// `args` points to `n` values following [`slot_from_c`]'s rules (null when `n` is 0).
pub(crate) unsafe fn slots_from_c<'a>(args: *const ObjAny, n: i32) -> Result<Vec<Slot<'a>>, Error> {
    let n = usize::try_from(n).map_err(|_| Error::value_error(format!("negative count {n}")))?;
    if n == 0 {
        return Ok(Vec::new());
    }
    if args.is_null() {
        return Err(null("args"));
    }
    // SAFETY: the caller's guarantee.
    let args: &'a [ObjAny] = unsafe { core::slice::from_raw_parts(args, n) };
    args.iter()
        .enumerate()
        // SAFETY: the caller's guarantee, per value.
        .map(|(i, a)| unsafe { slot_from_c(a) }.map_err(|e| e.with_frame(format!("argument {i}"))))
        .collect()
}

/// Takes ownership of an owned C value (what a C callback wrote into its return slot,
/// or what C hands back to be released).
///
/// # Safety
///
/// `c` follows [`slot_from_c`]'s rules, and an object in it carries one reference the
/// caller gives up.
pub(crate) unsafe fn any_from_c_owned(c: ObjAny) -> Result<Any, Error> {
    use object_core::type_index as ti;
    // The commonest results first, without the checked slot: any bits are an int or a
    // float.
    match c.type_index {
        // SAFETY: the member of ints.
        ti::INT => return Ok(Any::from(unsafe { c.v.v_int64 })),
        // SAFETY: the member of floats.
        ti::FLOAT => return Ok(Any::from(unsafe { c.v.v_float64 })),
        _ => {}
    }
    if c.type_index >= ti::STATIC_OBJECT_BEGIN {
        // SAFETY: object kinds hold `v_obj`.
        let p = unsafe { c.v.v_obj };
        if p.is_null() {
            return Err(null("object value"));
        }
        // SAFETY: the caller gives us its reference to a live object.
        let obj = unsafe { ObjectRef::from_raw(p.cast::<Object>()) };
        if obj.type_index() != c.type_index {
            return Err(Error::type_error(format!(
                "a value says type index {} but holds an object of type `{}` ({})",
                c.type_index,
                obj.type_key(),
                obj.type_index()
            )));
        }
        return Ok(Any::from(obj));
    }
    if c.type_index == ti::DL_TENSOR_PTR {
        return Err(Error::type_error(
            "a borrowed DLTensor* cannot be owned; return an NDArray instead",
        ));
    }
    // SAFETY: the caller's guarantee.
    let slot = unsafe { slot_from_c(&c) }?;
    Ok(match slot {
        Slot::Empty => Any::NONE,
        Slot::Owned(a) => a,
        Slot::Str(s) => Any::from(s),
        Slot::Tensor(_) => unreachable!("refused above"),
    })
}
