//! The representation of [`Any`] and [`AnyView`]: a type index, a 32-bit `small` field
//! and an 8-byte payload union, laid out as tvm-ffi's `TVMFFIAny`.
//!
//! This is the fenced part of `any`: the fields are private to this module, and every
//! value is built here, so the one invariant the rest of the crate relies on holds by
//! construction:
//!
//! - `NONE`: payload zero;
//! - `INT` and `BOOL` (0 or 1): `int`; `FLOAT`: `float`; `DATA_TYPE`: `dtype`, the
//!   unused half of the payload zeroed; `DEVICE`: `device`; `OPAQUE_PTR` and
//!   `DL_TENSOR_PTR` (views only, valid for `'a`): `ptr`;
//! - `SMALL_STR`: `small` bytes of UTF-8 (at most [`SMALL_STR_MAX`](super::SMALL_STR_MAX))
//!   in `bytes`, zero-padded;
//! - `RAW_STR` (views only): `cstr` points at `small` bytes of UTF-8 that live for `'a`;
//! - an object index (64 and up): `obj` is a live object of that dynamic type, on which
//!   an `Any` owns one strong reference and an `AnyView<'a>` borrows one for `'a`.
//!
//! Every kind's 8 payload bytes are initialized. The conversions (`From`, `TryFrom`),
//! equality, hashing and printing in the parent module are safe code over the
//! constructors and accessors below.

use core::ffi::c_void;
use core::marker::PhantomData;
use core::mem::{align_of, offset_of, size_of};

use super::small_str_payload;
use crate::dtype::{DataType, Device};
use crate::header::Object;
use crate::object_type::{is_instance, ObjectType};
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::string::StringObj;
use crate::type_index as ti;

#[repr(C)]
#[derive(Clone, Copy)]
union Payload {
    int: i64,
    float: f64,
    ptr: *mut c_void,
    obj: *mut Object,
    cstr: *const u8,
    bytes: [u8; 8],
    dtype: DataType,
    device: Device,
}

/// Accessors shared by `Any` and `AnyView` that borrow from the value itself: a view is
/// a copy of the 16 bytes, so `Any` cannot hand these out through a temporary view.
macro_rules! borrowed_accessors {
    () => {
        /// A string stored in the value itself: inline (`ffi.SmallStr`) or an
        /// `ffi.String` object.
        #[inline]
        fn stored_str(&self) -> Option<&str> {
            match self.type_index {
                // SAFETY: a SmallStr payload holds `small` bytes of UTF-8 (see
                // `from_small_str`).
                ti::SMALL_STR => Some(unsafe {
                    core::str::from_utf8_unchecked(&self.payload.bytes[..self.small as usize])
                }),
                ti::STRING => self.as_object_of::<StringObj>().map(|s| s.as_str()),
                _ => None,
            }
        }

        /// The object, if the value is one (borrowed: no count change).
        ///
        /// # Examples
        ///
        /// ```
        /// use object_core::{Any, ObjectPtr, String};
        /// let a = Any::from(String::from("long enough to be an object"));
        /// let o = a.as_object().unwrap();
        /// assert_eq!((o.type_key(), ObjectPtr::strong_count(o)), ("ffi.String", 1));
        /// assert!(a.view().as_object().is_some());
        /// assert!(Any::from(1).as_object().is_none());
        /// ```
        #[inline]
        pub fn as_object(&self) -> Option<&ObjectRef> {
            if self.is_object() {
                // SAFETY: object kinds hold a non-null object pointer in the payload, kept
                // alive by this value (an `Any` owns a reference; a view borrows one for
                // `'a`, which outlives `&self`); `ObjectRef` is `repr(transparent)` over it.
                Some(unsafe { &*(core::ptr::addr_of!(self.payload.obj) as *const ObjectRef) })
            } else {
                None
            }
        }

        /// The object as a `T` handle, if the value is a `T` (or a subtype).
        ///
        /// # Examples
        ///
        /// ```
        /// use object_core::{make_object, Any, Object, StringObj};
        /// let a = Any::from(make_object(Object::new()));
        /// assert!(a.as_object_of::<Object>().is_some());
        /// assert!(a.view().as_object_of::<StringObj>().is_none());
        /// ```
        #[inline]
        pub fn as_object_of<T: ObjectType>(&self) -> Option<&ObjectPtr<T>> {
            if self.is_object() && is_instance::<T>(self.type_index) {
                // SAFETY: as in `as_object`, and the object is a `T` (checked), so a `T`
                // handle to it is valid (same representation for every parameter).
                Some(unsafe { &*(core::ptr::addr_of!(self.payload.obj) as *const ObjectPtr<T>) })
            } else {
                None
            }
        }

        /// Borrows the object as a `T`, if the value is one.
        ///
        /// # Examples
        ///
        /// ```
        /// use object_core::{Any, String, StringObj};
        /// let a = Any::from(String::from("long enough to be an object"));
        /// let s: &StringObj = a.downcast_ref().unwrap();
        /// assert_eq!(s.as_str(), "long enough to be an object");
        /// assert!(a.view().downcast_ref::<StringObj>().is_some());
        /// ```
        #[inline]
        pub fn downcast_ref<T: ObjectType>(&self) -> Option<&T> {
            self.as_object_of::<T>().map(|p| &**p)
        }

        /// The value's type index (a value kind below 64, or the object's type).
        ///
        /// # Examples
        ///
        /// ```
        /// use object_core::{Any, String};
        /// assert_eq!(Any::from(1).type_index(), 1); // `int`
        /// assert_eq!(Any::from(String::from("an ffi.String object")).view().type_index(), 65);
        /// ```
        #[inline]
        pub fn type_index(&self) -> u32 {
            self.type_index
        }

        /// Whether the value is an object.
        ///
        /// # Examples
        ///
        /// ```
        /// use object_core::{Any, String};
        /// assert!(Any::from(String::from("an ffi.String object")).is_object());
        /// assert!(!Any::from("short").view().is_object()); // stored inline
        /// ```
        #[inline]
        pub fn is_object(&self) -> bool {
            self.type_index >= ti::STATIC_OBJECT_BEGIN
        }
    };
}

/// An owned, dynamically typed value: 16 bytes, `#[repr(C)]`.
///
/// Holds `None`, an integer, a boolean, a float, an opaque pointer, a [`DataType`], a
/// [`Device`], a string (inline when at most 7 bytes, else an `ffi.String` object), or
/// any object (holding one reference).
///
/// Conversions: `From` every supported Rust type, `TryFrom<Any>` back with a
/// [`TypeError`](crate::TypeError) naming the expected and the actual type key.
///
/// Equality and hashing (what `Map` keys use): numbers and other plain values by value
/// (floats by their bits), strings by their text whether inline or objects, `ffi.Bytes`
/// by content, every other object by identity.
///
/// ```
/// use object_core::{Any, String};
/// let a = Any::from(42);
/// assert_eq!(i64::try_from(a.clone()), Ok(42));
/// let e = bool::try_from(a).unwrap_err();
/// assert_eq!(e.to_string(), "expected bool, got int");
/// assert_eq!(Any::from("hi"), Any::from(String::from("hi")));
/// assert_eq!(Any::from("hi").type_key(), "ffi.SmallStr");
/// ```
#[repr(C)]
pub struct Any {
    type_index: u32,
    small: u32,
    payload: Payload,
}

/// A borrowed [`Any`]: same layout, no ownership. Objects are borrowed (no count
/// change) and strings may point at a Rust `&str` (`RawStr`, length in `small`).
///
/// ```
/// use object_core::{Any, AnyView};
/// let owned = Any::from("a longer string");
/// let v: AnyView<'_> = owned.view();
/// assert_eq!(v.as_str(), Some("a longer string"));
/// let raw = AnyView::from("borrowed");
/// assert_eq!(raw.type_key(), "const char*");
/// assert_eq!(raw.to_any(), Any::from("borrowed"));
/// ```
#[repr(C)]
#[derive(Clone, Copy)]
pub struct AnyView<'a> {
    type_index: u32,
    small: u32,
    payload: Payload,
    _borrow: PhantomData<&'a ()>,
}

const _: () = {
    assert!(size_of::<Any>() == 16);
    assert!(align_of::<Any>() == 8);
    assert!(offset_of!(Any, small) == 4);
    assert!(offset_of!(Any, payload) == 8);
    assert!(size_of::<AnyView<'static>>() == 16);
    assert!(offset_of!(AnyView<'static>, payload) == 8);
};

// SAFETY: objects are `Send + Sync` (ObjectType's supertraits) and their counts atomic;
// the other kinds are plain data. An opaque pointer is an address the `Any` never
// dereferences; what it points to is its user's business, as with `*mut c_void` in C.
unsafe impl Send for Any {}
// SAFETY: as above; `&Any` only reads.
unsafe impl Sync for Any {}
// SAFETY: a view is a borrowed `Any`; the same reasoning applies for its lifetime.
unsafe impl Send for AnyView<'_> {}
// SAFETY: as above.
unsafe impl Sync for AnyView<'_> {}

impl Any {
    /// `None`.
    pub const NONE: Any = Any::pod(ti::NONE, Payload { int: 0 });

    #[inline]
    const fn pod(type_index: u32, payload: Payload) -> Any {
        Any {
            type_index,
            small: 0,
            payload,
        }
    }

    /// An opaque pointer (never dereferenced or freed by the `Any`).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::Any;
    /// let p = core::ptr::null_mut::<core::ffi::c_void>();
    /// let a = Any::opaque_ptr(p);
    /// assert_eq!((a.type_key(), a.as_opaque_ptr()), ("void*", Some(p)));
    /// ```
    pub fn opaque_ptr(p: *mut c_void) -> Any {
        Any::pod(ti::OPAQUE_PTR, Payload { ptr: p })
    }

    /// An `int`.
    #[inline]
    pub(super) const fn from_int(v: i64) -> Any {
        Any::pod(ti::INT, Payload { int: v })
    }

    /// A `bool`.
    #[inline]
    pub(super) const fn from_bool(v: bool) -> Any {
        Any::pod(ti::BOOL, Payload { int: v as i64 })
    }

    /// A `float`.
    #[inline]
    pub(super) const fn from_float(v: f64) -> Any {
        Any::pod(ti::FLOAT, Payload { float: v })
    }

    /// A `DataType`.
    pub(super) fn from_data_type(v: DataType) -> Any {
        // The unused half of the payload is zeroed so equality and hashing are stable.
        let mut bytes = [0u8; 8];
        bytes[0] = v.code;
        bytes[1] = v.bits;
        bytes[2..4].copy_from_slice(&v.lanes.to_ne_bytes());
        Any::pod(ti::DATA_TYPE, Payload { bytes })
    }

    /// A `Device`.
    pub(super) fn from_device(v: Device) -> Any {
        Any::pod(ti::DEVICE, Payload { device: v })
    }

    /// An inline string (`ffi.SmallStr`).
    ///
    /// # Panics
    ///
    /// If `s` is longer than [`SMALL_STR_MAX`](super::SMALL_STR_MAX) bytes (callers
    /// check first; the check here then folds away).
    #[inline]
    pub(super) fn from_small_str(s: &str) -> Any {
        assert!(s.len() <= super::SMALL_STR_MAX, "not a small string");
        Any {
            type_index: ti::SMALL_STR,
            small: s.len() as u32,
            payload: Payload {
                bytes: small_str_payload(s.as_bytes()),
            },
        }
    }

    /// An object, moving the handle's reference in.
    #[inline]
    pub(super) fn from_object_ptr<T: ObjectType>(p: ObjectPtr<T>) -> Any {
        // Every object of a final type carries that type's own index, so take it from
        // the (hot) type cache rather than from the header, a load that would wait for
        // the locked increment of a just-cloned handle.
        let index = if T::FINAL {
            T::type_index()
        } else {
            p.type_index()
        };
        let raw = ObjectPtr::into_raw(p) as *mut Object;
        Any {
            type_index: index,
            small: 0,
            payload: Payload { obj: raw },
        }
    }

    /// The object as a `T` handle, moving the reference out; the value back if it is
    /// not a `T`.
    #[inline]
    pub(crate) fn into_object_ptr<T: ObjectType>(self) -> Result<ObjectPtr<T>, Any> {
        if self.is_object() && is_instance::<T>(self.type_index) {
            // SAFETY: the payload owns one reference to an object that is a `T`; we move
            // it into the handle and forget the `Any`.
            let p = unsafe { ObjectPtr::from_raw(self.payload.obj as *mut T) };
            core::mem::forget(self);
            Ok(p)
        } else {
            Err(self)
        }
    }

    /// The text of a value that holds a string itself: inline, or an `ffi.String`
    /// object. One compare, no type-cache look-up (what `String::as_str` reads).
    ///
    /// # Safety
    ///
    /// The value's type index is `SMALL_STR` or `STRING`.
    #[inline]
    pub(crate) unsafe fn string_text_unchecked(&self) -> &str {
        if self.type_index == ti::SMALL_STR {
            // SAFETY: a SmallStr payload holds `small` (at most 7) bytes of UTF-8 (see
            // `from_small_str`).
            unsafe {
                core::str::from_utf8_unchecked(
                    self.payload.bytes.get_unchecked(..self.small as usize),
                )
            }
        } else {
            // SAFETY: the caller guarantees the value is an `ffi.String` object, which
            // it keeps alive (one owned reference) for as long as `&self`.
            unsafe { (*(self.payload.obj as *const StringObj)).as_str() }
        }
    }

    /// Whether two values are the same 16 bytes: the same object, or equal plain values
    /// (an inline string's text, an integer, …). Never reads an object.
    #[inline]
    pub(crate) fn same_bits(&self, other: &Any) -> bool {
        self.type_index == other.type_index
            && self.small == other.small
            // SAFETY: every kind's 8 payload bytes are initialized (module invariant), so
            // reading them as an integer reads initialized memory.
            && unsafe { self.payload.int == other.payload.int }
    }

    /// Borrows the value as a view.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Any, AnyView};
    /// let a = Any::from("text");
    /// let v: AnyView<'_> = a.view(); // 16 bytes copied, no count change
    /// assert_eq!(v, AnyView::from("text"));
    /// assert_eq!(v.as_str(), Some("text"));
    /// ```
    #[inline]
    pub fn view(&self) -> AnyView<'_> {
        AnyView {
            type_index: self.type_index,
            small: self.small,
            payload: self.payload,
            _borrow: PhantomData,
        }
    }

    /// The text, if the value is a string (inline or an `ffi.String` object).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Any, String};
    /// assert_eq!(Any::from("inline").as_str(), Some("inline"));
    /// assert_eq!(Any::from(String::from("an ffi.String object")).as_str(), Some("an ffi.String object"));
    /// assert_eq!(Any::from(1).as_str(), None);
    /// ```
    #[inline]
    pub fn as_str(&self) -> Option<&str> {
        self.stored_str()
    }

    borrowed_accessors!();

    /// The integer payload by reference (for typed container views over `Any` slots).
    #[inline]
    pub(crate) fn int_ref(&self) -> Option<&i64> {
        if self.type_index == ti::INT {
            // SAFETY: `int` is the active field for the INT kind.
            Some(unsafe { &self.payload.int })
        } else {
            None
        }
    }

    /// The float payload by reference.
    #[inline]
    pub(crate) fn float_ref(&self) -> Option<&f64> {
        if self.type_index == ti::FLOAT {
            // SAFETY: `float` is the active field for the FLOAT kind.
            Some(unsafe { &self.payload.float })
        } else {
            None
        }
    }

    /// The payload as a `T` handle, by reference, without checking.
    ///
    /// # Safety
    ///
    /// The value must hold an object that is a `T` (or a subtype).
    #[inline]
    pub(crate) unsafe fn object_ptr_unchecked<T: ObjectType>(&self) -> &ObjectPtr<T> {
        // SAFETY: the caller guarantees a `T` object; the payload holds its pointer, kept
        // alive by this value, and `ObjectPtr<T>` is `repr(transparent)` over it.
        unsafe { &*(core::ptr::addr_of!(self.payload.obj) as *const ObjectPtr<T>) }
    }

    /// Moves the value out as the raw 16-byte ABI form, without dropping it. Pair with
    /// [`Any::from_raw`].
    pub fn into_raw(self) -> AnyView<'static> {
        let v = AnyView {
            type_index: self.type_index,
            small: self.small,
            payload: self.payload,
            _borrow: PhantomData,
        };
        core::mem::forget(self);
        v
    }

    /// Takes ownership of a raw value.
    ///
    /// # Safety
    ///
    /// `raw` must be an owned value from [`Any::into_raw`] (or the C ABI's equivalent):
    /// for object kinds it carries one strong reference, which the `Any` now owns; a
    /// borrowed-only kind (`RawStr`, `DLTensor*`) is not allowed.
    pub unsafe fn from_raw(raw: AnyView<'static>) -> Any {
        Any {
            type_index: raw.type_index,
            small: raw.small,
            payload: raw.payload,
        }
    }
}

impl Clone for Any {
    #[inline]
    fn clone(&self) -> Self {
        if let Some(o) = self.as_object() {
            core::mem::forget(o.clone());
        }
        Any {
            type_index: self.type_index,
            small: self.small,
            payload: self.payload,
        }
    }
}

impl Drop for Any {
    #[inline]
    fn drop(&mut self) {
        if self.is_object() {
            // SAFETY: object kinds own one reference in the payload; we give it back by
            // rebuilding the handle and dropping it.
            unsafe { drop(ObjectRef::from_raw(self.payload.obj)) };
        }
    }
}

impl<'a> AnyView<'a> {
    /// `None`.
    pub const NONE: AnyView<'static> = AnyView::pod(ti::NONE, Payload { int: 0 });

    #[inline]
    const fn pod(type_index: u32, payload: Payload) -> Self {
        AnyView {
            type_index,
            small: 0,
            payload,
            _borrow: PhantomData,
        }
    }

    /// An `int`.
    #[inline]
    pub(super) const fn from_int(v: i64) -> Self {
        AnyView::pod(ti::INT, Payload { int: v })
    }

    /// A `bool`.
    #[inline]
    pub(super) const fn from_bool(v: bool) -> Self {
        AnyView::pod(ti::BOOL, Payload { int: v as i64 })
    }

    /// A `float`.
    #[inline]
    pub(super) const fn from_float(v: f64) -> Self {
        AnyView::pod(ti::FLOAT, Payload { float: v })
    }

    /// A `Device`.
    pub(super) fn from_device(v: Device) -> Self {
        AnyView::pod(ti::DEVICE, Payload { device: v })
    }

    /// A borrowed string (`RawStr`, length in `small`).
    ///
    /// # Panics
    ///
    /// If the string is 4 GiB or longer (the length field is 32 bits).
    #[inline]
    pub(super) fn from_raw_str(s: &'a str) -> Self {
        let len =
            u32::try_from(s.len()).unwrap_or_else(|_| panic!("string views are limited to 4 GiB"));
        AnyView {
            type_index: ti::RAW_STR,
            small: len,
            payload: Payload { cstr: s.as_ptr() },
            _borrow: PhantomData,
        }
    }

    /// A borrowed object.
    #[inline]
    pub(super) fn from_object_ptr<T: ObjectType>(p: &'a ObjectPtr<T>) -> Self {
        AnyView {
            type_index: p.type_index(),
            small: 0,
            payload: Payload {
                obj: ObjectPtr::as_ptr(p) as *mut Object,
            },
            _borrow: PhantomData,
        }
    }

    /// The integer, if the value is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::AnyView;
    /// assert_eq!(AnyView::from(7).as_int(), Some(7));
    /// assert_eq!(AnyView::from(true).as_int(), None);
    /// ```
    #[inline]
    pub fn as_int(&self) -> Option<i64> {
        if self.type_index == ti::INT {
            // SAFETY: `int` is the active field for the INT kind.
            Some(unsafe { self.payload.int })
        } else {
            None
        }
    }
    /// The boolean, if the value is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::AnyView;
    /// assert_eq!(AnyView::from(false).as_bool(), Some(false));
    /// assert_eq!(AnyView::from(0).as_bool(), None);
    /// ```
    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        if self.type_index == ti::BOOL {
            // SAFETY: BOOL stores 0 or 1 in `int`.
            Some(unsafe { self.payload.int != 0 })
        } else {
            None
        }
    }
    /// The float, if the value is one (integers widen).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::AnyView;
    /// assert_eq!(AnyView::from(0.25).as_float(), Some(0.25));
    /// assert_eq!(AnyView::from(3).as_float(), Some(3.0));
    /// ```
    #[inline]
    pub fn as_float(&self) -> Option<f64> {
        match self.type_index {
            // SAFETY: `float` is the active field for FLOAT.
            ti::FLOAT => Some(unsafe { self.payload.float }),
            // SAFETY: `int` is the active field for INT.
            ti::INT => Some(unsafe { self.payload.int } as f64),
            _ => None,
        }
    }
    /// The data type, if the value is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{AnyView, DataType};
    /// assert_eq!(AnyView::from(DataType::int(8)).as_data_type(), Some(DataType::int(8)));
    /// assert_eq!(AnyView::from(8).as_data_type(), None);
    /// ```
    pub fn as_data_type(&self) -> Option<DataType> {
        if self.type_index == ti::DATA_TYPE {
            // SAFETY: `dtype` is the active field for DATA_TYPE.
            Some(unsafe { self.payload.dtype })
        } else {
            None
        }
    }
    /// The device, if the value is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{AnyView, Device};
    /// assert_eq!(AnyView::from(Device::cpu()).as_device(), Some(Device::cpu()));
    /// assert_eq!(AnyView::NONE.as_device(), None);
    /// ```
    pub fn as_device(&self) -> Option<Device> {
        if self.type_index == ti::DEVICE {
            // SAFETY: `device` is the active field for DEVICE.
            Some(unsafe { self.payload.device })
        } else {
            None
        }
    }
    /// The opaque pointer, if the value is one.
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Any, AnyView};
    /// let p = core::ptr::null_mut::<core::ffi::c_void>();
    /// let a = Any::opaque_ptr(p);
    /// assert_eq!(a.view().as_opaque_ptr(), Some(p));
    /// assert_eq!(AnyView::from(0).as_opaque_ptr(), None);
    /// ```
    pub fn as_opaque_ptr(&self) -> Option<*mut c_void> {
        if self.type_index == ti::OPAQUE_PTR {
            // SAFETY: `ptr` is the active field for OPAQUE_PTR.
            Some(unsafe { self.payload.ptr })
        } else {
            None
        }
    }

    /// A borrowed `DLTensor*` (type index 7, the RFC's calling convention for tensors
    /// that are not objects): what a C caller passes for a tensor it owns.
    ///
    /// Core does not know the `DLTensor` struct (it lives in `object-containers`), so the
    /// pointer is untyped here; `object_containers::TensorView` reads it.
    ///
    /// # Safety
    ///
    /// `p` must be non-null and point to a DLPack `DLTensor` that stays valid and
    /// unchanged for `'a`, together with everything it points to: its `shape` array (and
    /// `strides` array, if non-null), and, on a host device, the bytes its `data`,
    /// `byte_offset`, shape and strides describe, which nobody may write while `'a` lasts.
    /// Safe code reads the tensor through views of this kind, relying on this.
    #[inline]
    pub unsafe fn from_dl_tensor_ptr(p: *mut c_void) -> Self {
        AnyView::pod(ti::DL_TENSOR_PTR, Payload { ptr: p })
    }

    /// The `DLTensor*`, if the value is a borrowed one (see
    /// [`AnyView::from_dl_tensor_ptr`]); valid for `'a`.
    #[inline]
    pub fn as_dl_tensor_ptr(&self) -> Option<*mut c_void> {
        if self.type_index == ti::DL_TENSOR_PTR {
            // SAFETY: `ptr` is the active field for DL_TENSOR_PTR.
            Some(unsafe { self.payload.ptr })
        } else {
            None
        }
    }

    /// The text, if the value is a string (borrowed, inline, or an `ffi.String`).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Any, AnyView};
    /// let text = std::string::String::from("a borrowed Rust string");
    /// assert_eq!(AnyView::from(text.as_str()).as_str(), Some("a borrowed Rust string"));
    /// assert_eq!(Any::from("inline").view().as_str(), Some("inline"));
    /// assert_eq!(AnyView::from(1).as_str(), None);
    /// ```
    pub fn as_str(&self) -> Option<&str> {
        if self.type_index == ti::RAW_STR {
            // SAFETY: RAW_STR views are made from `&'a str` only: `cstr` points at
            // `small` bytes of UTF-8 that live for `'a`, which outlives `&self`.
            return Some(unsafe {
                core::str::from_utf8_unchecked(core::slice::from_raw_parts(
                    self.payload.cstr,
                    self.small as usize,
                ))
            });
        }
        self.stored_str()
    }

    borrowed_accessors!();

    /// The 8 payload bytes as one word (for equality and hashing of plain kinds, and
    /// identity of objects).
    #[inline]
    pub(crate) fn payload_bits(&self) -> u64 {
        // SAFETY: every kind initializes all 8 payload bytes (see the module's
        // invariant); reading them as an integer is reading plain bytes.
        unsafe { self.payload.int as u64 }
    }

    /// An owned copy: objects get a new reference, borrowed strings are copied.
    ///
    /// A borrowed `DLTensor*` has no owned form (an `Any` may outlive the tensor, and
    /// views of that kind are trusted to be valid): its address is kept as an opaque
    /// pointer (`void*`), which nothing dereferences. To keep the tensor, copy it into
    /// an `NDArray` (`object_containers::TensorView::to_ndarray`).
    ///
    /// # Examples
    ///
    /// ```
    /// use object_core::{Any, AnyView, ObjectPtr, String};
    /// let owned = AnyView::from("a borrowed str, copied").to_any();
    /// assert_eq!((owned.type_key(), owned.as_str()), ("ffi.String", Some("a borrowed str, copied")));
    /// let s = String::from("an ffi.String object");
    /// let a = Any::from(s.clone());
    /// let again = a.view().to_any(); // a new reference to the same object
    /// assert_eq!(ObjectPtr::strong_count(again.as_object().unwrap()), 3);
    /// ```
    pub fn to_any(&self) -> Any {
        if self.type_index == ti::RAW_STR {
            return self.as_str().map_or(Any::NONE, Any::from);
        }
        if let Some(p) = self.as_dl_tensor_ptr() {
            return Any::opaque_ptr(p);
        }
        if let Some(o) = self.as_object() {
            return Any::from(o.clone());
        }
        Any {
            type_index: self.type_index,
            small: self.small,
            payload: self.payload,
        }
    }
}
