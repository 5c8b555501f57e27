//! `Any` (owning) and `AnyView<'a>` (borrowing): the 16-byte tagged value that crosses
//! the function ABI and fills containers. Same layout as tvm-ffi's `TVMFFIAny`:
//! `{ type_index: u32, small: u32, payload: 8-byte union }`.
//!
//! Kinds: `None`, `int` (i64), `bool`, `float` (f64), opaque pointers, `DataType`,
//! `Device`, short strings inline (`ffi.SmallStr`, up to 7 bytes), borrowed strings
//! and borrowed `DLTensor*` (views only), and objects (type index 64 and up; an owned
//! reference in `Any`, a borrowed one in `AnyView`).

use core::ffi::c_void;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;
use core::mem::{align_of, offset_of, size_of};

use crate::dtype::{DataType, Device};
use crate::header::Object;
use crate::object_type::{is_instance, ObjectType};
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::string::{Bytes, String, StringObj};
use crate::type_index as ti;

/// The longest string stored inline in an `Any` (the rest of the 8-byte payload is a
/// NUL, so C readers see a C string).
pub const SMALL_STR_MAX: usize = 7;

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
                // `From<&str> for Any`).
                ti::SMALL_STR => Some(unsafe {
                    core::str::from_utf8_unchecked(&self.payload.bytes[..self.small as usize])
                }),
                ti::STRING => self.as_object_of::<StringObj>().map(|s| s.as_str()),
                _ => None,
            }
        }

        /// The object, if the value is one (borrowed: no count change).
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
        #[inline]
        pub fn downcast_ref<T: ObjectType>(&self) -> Option<&T> {
            self.as_object_of::<T>().map(|p| &**p)
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
/// [`TypeError`] naming the expected and the actual type key.
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

/// A failed conversion out of an `Any`: what was expected, what was there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeError {
    /// The expected type (a type key, or a Rust-side name such as `int32`).
    pub expected: std::borrow::Cow<'static, str>,
    /// The type key of the value that was there.
    pub actual: &'static str,
}

impl TypeError {
    /// An error for a value of type `actual` where `expected` was wanted.
    /// Inline short strings and bytes are reported as the string and bytes types they
    /// stand for.
    pub fn new(expected: impl Into<std::borrow::Cow<'static, str>>, actual: &'static str) -> Self {
        TypeError {
            expected: expected.into(),
            actual: ti::canonical_key(actual),
        }
    }
}

impl fmt::Display for TypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {}, got {}", self.expected, self.actual)
    }
}

impl std::error::Error for TypeError {}

fn key_of(index: u32) -> &'static str {
    crate::registry::type_info(index).map_or("<unregistered>", |i| i.key())
}

/// The inline payload of a string of at most `SMALL_STR_MAX` bytes, zero-padded, built
/// in a register: two overlapping 4-byte reads (4 to 7 bytes) or three byte reads (1 to
/// 3), so there is no `memcpy` call and no narrow-stores-then-wide-load stall.
#[inline]
fn small_str_payload(s: &[u8]) -> [u8; 8] {
    let n = s.len();
    debug_assert!(n <= SMALL_STR_MAX);
    let v: u64 = if n >= 4 {
        let lo = u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as u64;
        let hi = u32::from_le_bytes([s[n - 4], s[n - 3], s[n - 2], s[n - 1]]) as u64;
        lo | (hi << ((n - 4) * 8))
    } else if n > 0 {
        (s[0] as u64) | ((s[n / 2] as u64) << ((n / 2) * 8)) | ((s[n - 1] as u64) << ((n - 1) * 8))
    } else {
        0
    };
    v.to_le_bytes()
}

impl Any {
    /// `None`.
    pub const NONE: Any = Any {
        type_index: ti::NONE,
        small: 0,
        payload: Payload { int: 0 },
    };

    #[inline]
    const fn pod(type_index: u32, payload: Payload) -> Any {
        Any {
            type_index,
            small: 0,
            payload,
        }
    }

    /// An opaque pointer (never dereferenced or freed by the `Any`).
    pub fn opaque_ptr(p: *mut c_void) -> Any {
        Any::pod(ti::OPAQUE_PTR, Payload { ptr: p })
    }

    /// The value's type index (a value kind below 64, or the object's type).
    #[inline]
    pub fn type_index(&self) -> u32 {
        self.type_index
    }

    /// The value's type key (`"int"`, `"ffi.SmallStr"`, `"ffi.String"`, `"my.Node"`, …).
    pub fn type_key(&self) -> &'static str {
        key_of(self.type_index)
    }

    /// Whether the value is `None`.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.type_index == ti::NONE
    }

    /// Whether the value is an object.
    #[inline]
    pub fn is_object(&self) -> bool {
        self.type_index >= ti::STATIC_OBJECT_BEGIN
    }

    /// Borrows the value as a view.
    #[inline]
    pub fn view(&self) -> AnyView<'_> {
        AnyView {
            type_index: self.type_index,
            small: self.small,
            payload: self.payload,
            _borrow: PhantomData,
        }
    }

    /// The integer, if the value is one.
    #[inline]
    pub fn as_int(&self) -> Option<i64> {
        self.view().as_int()
    }
    /// The boolean, if the value is one.
    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        self.view().as_bool()
    }
    /// The float, if the value is one (integers widen).
    #[inline]
    pub fn as_float(&self) -> Option<f64> {
        self.view().as_float()
    }
    /// The data type, if the value is one.
    pub fn as_data_type(&self) -> Option<DataType> {
        self.view().as_data_type()
    }
    /// The device, if the value is one.
    pub fn as_device(&self) -> Option<Device> {
        self.view().as_device()
    }
    /// The opaque pointer, if the value is one.
    pub fn as_opaque_ptr(&self) -> Option<*mut c_void> {
        self.view().as_opaque_ptr()
    }

    /// The text, if the value is a string (inline or an `ffi.String` object).
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

impl Default for Any {
    fn default() -> Self {
        Any::NONE
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

impl PartialEq for Any {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.view() == other.view()
    }
}
impl Eq for Any {}

impl Hash for Any {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.view().hash(state)
    }
}

/// Equality as for [`Any`]: strings by text (borrowed, inline or object alike), other
/// objects by identity, plain values by value (floats by bits).
impl PartialEq for AnyView<'_> {
    fn eq(&self, other: &Self) -> bool {
        if let (Some(a), Some(b)) = (self.as_str(), other.as_str()) {
            return a == b;
        }
        if let (Some(a), Some(b)) = (self.bytes_content(), other.bytes_content()) {
            return a == b;
        }
        if self.type_index != other.type_index {
            return false;
        }
        match self.type_index {
            ti::NONE => true,
            // SAFETY: object kinds hold pointers; identity is pointer equality.
            _ if self.is_object() => unsafe { self.payload.obj == other.payload.obj },
            // SAFETY: the same plain kind on both sides, whose 8 payload bytes are
            // initialized data (zero-padded where narrower).
            _ => unsafe { self.payload.bytes == other.payload.bytes },
        }
    }
}
impl Eq for AnyView<'_> {}

impl Hash for AnyView<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if let Some(s) = self.as_str() {
            // Every string representation hashes alike.
            state.write_u8(0xff);
            state.write(s.as_bytes());
            state.write_u8(0xff);
            return;
        }
        if let Some(b) = self.bytes_content() {
            state.write_u8(0xfe);
            state.write(b);
            state.write_u8(0xfe);
            return;
        }
        state.write_u32(self.type_index);
        if self.type_index != ti::NONE {
            // SAFETY: every kind other than None has 8 initialized payload bytes.
            state.write_u64(unsafe { self.payload.int } as u64);
        }
    }
}

impl fmt::Debug for Any {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Any(")?;
        fmt::Debug::fmt(&self.view(), f)?;
        write!(f, ")")
    }
}

// ---------------------------------------------------------------------------------
// Views.
// ---------------------------------------------------------------------------------

impl<'a> AnyView<'a> {
    /// `None`.
    pub const NONE: AnyView<'static> = AnyView {
        type_index: ti::NONE,
        small: 0,
        payload: Payload { int: 0 },
        _borrow: PhantomData,
    };

    #[inline]
    const fn pod(type_index: u32, payload: Payload) -> Self {
        AnyView {
            type_index,
            small: 0,
            payload,
            _borrow: PhantomData,
        }
    }

    /// The value's type index.
    #[inline]
    pub fn type_index(&self) -> u32 {
        self.type_index
    }
    /// The value's type key.
    #[inline]
    pub fn type_key(&self) -> &'static str {
        key_of(self.type_index)
    }
    /// Whether the value is `None`.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.type_index == ti::NONE
    }
    /// Whether the value is an object.
    #[inline]
    pub fn is_object(&self) -> bool {
        self.type_index >= ti::STATIC_OBJECT_BEGIN
    }

    /// The integer, if the value is one.
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
    pub fn as_data_type(&self) -> Option<DataType> {
        if self.type_index == ti::DATA_TYPE {
            // SAFETY: `dtype` is the active field for DATA_TYPE.
            Some(unsafe { self.payload.dtype })
        } else {
            None
        }
    }
    /// The device, if the value is one.
    pub fn as_device(&self) -> Option<Device> {
        if self.type_index == ti::DEVICE {
            // SAFETY: `device` is the active field for DEVICE.
            Some(unsafe { self.payload.device })
        } else {
            None
        }
    }
    /// The opaque pointer, if the value is one.
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

    /// The content of an `ffi.Bytes` object.
    fn bytes_content(&self) -> Option<&[u8]> {
        self.as_object_of::<crate::string::BytesObj>()
            .map(|b| b.as_bytes())
    }

    /// An owned copy: objects get a new reference, borrowed strings are copied.
    ///
    /// A borrowed `DLTensor*` has no owned form (an `Any` may outlive the tensor, and
    /// views of that kind are trusted to be valid): its address is kept as an opaque
    /// pointer (`void*`), which nothing dereferences. To keep the tensor, copy it into
    /// an `NDArray` (`object_containers::TensorView::to_ndarray`).
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

impl Default for AnyView<'_> {
    fn default() -> Self {
        AnyView::NONE
    }
}

impl fmt::Debug for AnyView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = self.as_str() {
            return write!(f, "{s:?}");
        }
        match self.type_index {
            ti::NONE => f.write_str("None"),
            ti::INT => write!(f, "{}", self.as_int().unwrap_or_default()),
            ti::BOOL => write!(f, "{}", self.as_bool().unwrap_or_default()),
            ti::FLOAT => write!(f, "{:?}", self.as_float().unwrap_or_default()),
            ti::DATA_TYPE => write!(
                f,
                "{}",
                self.as_data_type()
                    .map(|d| d.to_string())
                    .unwrap_or_default()
            ),
            ti::DEVICE => write!(
                f,
                "{}",
                self.as_device().map(|d| d.to_string()).unwrap_or_default()
            ),
            ti::OPAQUE_PTR => write!(
                f,
                "{:p}",
                self.as_opaque_ptr().unwrap_or(core::ptr::null_mut())
            ),
            ti::DL_TENSOR_PTR => write!(
                f,
                "DLTensor*@{:p}",
                self.as_dl_tensor_ptr().unwrap_or(core::ptr::null_mut())
            ),
            _ => match self.as_object() {
                Some(o) => crate::reflection::debug_object(o, f),
                None => write!(f, "<{}>", self.type_key()),
            },
        }
    }
}

// ---------------------------------------------------------------------------------
// Conversions into Any / AnyView.
// ---------------------------------------------------------------------------------

macro_rules! int_into {
    ($($t:ty),*) => {$(
        impl From<$t> for Any {
            #[inline]
            fn from(v: $t) -> Any {
                Any::pod(ti::INT, Payload { int: v as i64 })
            }
        }
        impl From<$t> for AnyView<'_> {
            #[inline]
            fn from(v: $t) -> Self {
                AnyView::pod(ti::INT, Payload { int: v as i64 })
            }
        }
    )*};
}
int_into!(i8, i16, i32, i64, u8, u16, u32);

const _: () = assert!(size_of::<isize>() <= size_of::<i64>());
impl From<isize> for Any {
    #[inline]
    fn from(v: isize) -> Any {
        // Lossless: `isize` is at most 64 bits (asserted above).
        Any::pod(ti::INT, Payload { int: v as i64 })
    }
}

macro_rules! unsigned_try_into {
    ($($t:ty),*) => {$(
        impl TryFrom<$t> for Any {
            type Error = TypeError;
            /// Fails above `i64::MAX` (`Any` integers are 64-bit signed).
            fn try_from(v: $t) -> Result<Any, TypeError> {
                i64::try_from(v).map(Any::from).map_err(|_| TypeError::new("int (at most i64::MAX)", stringify!($t)))
            }
        }
    )*};
}
unsigned_try_into!(u64, usize);

impl From<bool> for Any {
    #[inline]
    fn from(v: bool) -> Any {
        Any::pod(ti::BOOL, Payload { int: v as i64 })
    }
}
impl From<bool> for AnyView<'_> {
    #[inline]
    fn from(v: bool) -> Self {
        AnyView::pod(ti::BOOL, Payload { int: v as i64 })
    }
}
impl From<f64> for Any {
    #[inline]
    fn from(v: f64) -> Any {
        Any::pod(ti::FLOAT, Payload { float: v })
    }
}
impl From<f32> for Any {
    #[inline]
    fn from(v: f32) -> Any {
        Any::from(f64::from(v))
    }
}
impl From<f64> for AnyView<'_> {
    #[inline]
    fn from(v: f64) -> Self {
        AnyView::pod(ti::FLOAT, Payload { float: v })
    }
}
impl From<DataType> for Any {
    fn from(v: DataType) -> Any {
        // The unused half of the payload is zeroed so equality and hashing are stable.
        let mut bytes = [0u8; 8];
        bytes[0] = v.code;
        bytes[1] = v.bits;
        bytes[2..4].copy_from_slice(&v.lanes.to_ne_bytes());
        Any::pod(ti::DATA_TYPE, Payload { bytes })
    }
}
impl From<DataType> for AnyView<'_> {
    fn from(v: DataType) -> Self {
        Any::from(v).into_raw()
    }
}
impl From<Device> for Any {
    fn from(v: Device) -> Any {
        Any::pod(ti::DEVICE, Payload { device: v })
    }
}
impl From<Device> for AnyView<'_> {
    fn from(v: Device) -> Self {
        AnyView::pod(ti::DEVICE, Payload { device: v })
    }
}
impl From<()> for Any {
    fn from((): ()) -> Any {
        Any::NONE
    }
}

impl From<&str> for Any {
    /// Strings of up to [`SMALL_STR_MAX`] bytes are stored inline; longer ones become an
    /// `ffi.String` object.
    #[inline]
    fn from(s: &str) -> Any {
        if s.len() <= SMALL_STR_MAX {
            Any {
                type_index: ti::SMALL_STR,
                small: s.len() as u32,
                payload: Payload {
                    bytes: small_str_payload(s.as_bytes()),
                },
            }
        } else {
            Any::from(String::new(s))
        }
    }
}
impl From<std::string::String> for Any {
    fn from(s: std::string::String) -> Any {
        Any::from(s.as_str())
    }
}
impl From<&std::string::String> for Any {
    fn from(s: &std::string::String) -> Any {
        Any::from(s.as_str())
    }
}
impl From<String> for Any {
    #[inline]
    fn from(s: String) -> Any {
        // Move the handle in: no count increment and decrement.
        Any::from(s.into_object_ref())
    }
}
impl From<Bytes> for Any {
    fn from(b: Bytes) -> Any {
        Any::from(b.as_object_ptr().clone())
    }
}

impl<'a> From<&'a str> for AnyView<'a> {
    /// A borrowed string (`RawStr`, length in `small`).
    ///
    /// # Panics
    ///
    /// If the string is 4 GiB or longer (the length field is 32 bits).
    #[inline]
    fn from(s: &'a str) -> Self {
        let len =
            u32::try_from(s.len()).unwrap_or_else(|_| panic!("string views are limited to 4 GiB"));
        AnyView {
            type_index: ti::RAW_STR,
            small: len,
            payload: Payload { cstr: s.as_ptr() },
            _borrow: PhantomData,
        }
    }
}
impl<'a> From<&'a String> for AnyView<'a> {
    fn from(s: &'a String) -> Self {
        AnyView::from(s.as_object_ptr())
    }
}
impl<'a> From<&'a std::string::String> for AnyView<'a> {
    fn from(s: &'a std::string::String) -> Self {
        AnyView::from(s.as_str())
    }
}
impl<'a, T: Into<AnyView<'a>>> From<Option<T>> for AnyView<'a> {
    fn from(v: Option<T>) -> Self {
        v.map_or(AnyView::NONE, Into::into)
    }
}
impl<'a> From<&'a Any> for AnyView<'a> {
    #[inline]
    fn from(a: &'a Any) -> Self {
        a.view()
    }
}

impl<T: ObjectType> From<ObjectPtr<T>> for Any {
    #[inline]
    fn from(p: ObjectPtr<T>) -> Any {
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
}
impl<T: ObjectType> From<&ObjectPtr<T>> for Any {
    #[inline]
    fn from(p: &ObjectPtr<T>) -> Any {
        Any::from(p.clone())
    }
}
impl<'a, T: ObjectType> From<&'a ObjectPtr<T>> for AnyView<'a> {
    #[inline]
    fn from(p: &'a ObjectPtr<T>) -> Self {
        AnyView {
            type_index: p.type_index(),
            small: 0,
            payload: Payload {
                obj: ObjectPtr::as_ptr(p) as *mut Object,
            },
            _borrow: PhantomData,
        }
    }
}
impl<T: Into<Any>> From<Option<T>> for Any {
    #[inline]
    fn from(v: Option<T>) -> Any {
        v.map_or(Any::NONE, Into::into)
    }
}

// ---------------------------------------------------------------------------------
// Conversions out of Any.
// ---------------------------------------------------------------------------------

macro_rules! int_out {
    ($($t:ty => $name:literal),*) => {$(
        impl TryFrom<Any> for $t {
            type Error = TypeError;
            #[inline]
            fn try_from(a: Any) -> Result<$t, TypeError> {
                <$t>::try_from(a.view())
            }
        }
        impl TryFrom<AnyView<'_>> for $t {
            type Error = TypeError;
            #[inline]
            fn try_from(a: AnyView<'_>) -> Result<$t, TypeError> {
                match a.as_int() {
                    Some(v) => <$t>::try_from(v).map_err(|_| TypeError::new(concat!($name, " (in range)"), "int")),
                    None => Err(TypeError::new($name, a.type_key())),
                }
            }
        }
    )*};
}
int_out!(i64 => "int", i32 => "int32", u32 => "uint32", i16 => "int16", u16 => "uint16", i8 => "int8", u8 => "uint8", u64 => "uint64", usize => "usize");

macro_rules! pod_out {
    ($t:ty, $name:literal, $get:ident) => {
        impl TryFrom<Any> for $t {
            type Error = TypeError;
            #[inline]
            fn try_from(a: Any) -> Result<$t, TypeError> {
                <$t>::try_from(a.view())
            }
        }
        impl TryFrom<AnyView<'_>> for $t {
            type Error = TypeError;
            #[inline]
            fn try_from(a: AnyView<'_>) -> Result<$t, TypeError> {
                a.$get().ok_or_else(|| TypeError::new($name, a.type_key()))
            }
        }
    };
}
pod_out!(bool, "bool", as_bool);
pod_out!(f64, "float", as_float);
pod_out!(DataType, "DataType", as_data_type);
pod_out!(Device, "Device", as_device);

impl TryFrom<Any> for () {
    type Error = TypeError;
    fn try_from(a: Any) -> Result<(), TypeError> {
        if a.is_none() {
            Ok(())
        } else {
            Err(TypeError::new("None", a.type_key()))
        }
    }
}

impl TryFrom<Any> for std::string::String {
    type Error = TypeError;
    fn try_from(a: Any) -> Result<Self, TypeError> {
        a.as_str()
            .map(str::to_owned)
            .ok_or_else(|| TypeError::new("ffi.String", a.type_key()))
    }
}
impl TryFrom<AnyView<'_>> for std::string::String {
    type Error = TypeError;
    fn try_from(a: AnyView<'_>) -> Result<Self, TypeError> {
        a.as_str()
            .map(str::to_owned)
            .ok_or_else(|| TypeError::new("ffi.String", a.type_key()))
    }
}

impl TryFrom<Any> for String {
    type Error = TypeError;
    /// Inline strings become an `ffi.String` object; string objects are shared.
    fn try_from(a: Any) -> Result<Self, TypeError> {
        if let Some(s) = a.as_object_of::<StringObj>() {
            return Ok(String::from_object_ptr(s.clone()));
        }
        a.as_str()
            .map(String::new)
            .ok_or_else(|| TypeError::new("ffi.String", a.type_key()))
    }
}
impl TryFrom<AnyView<'_>> for String {
    type Error = TypeError;
    fn try_from(a: AnyView<'_>) -> Result<Self, TypeError> {
        if let Some(s) = a.as_object_of::<StringObj>() {
            return Ok(String::from_object_ptr(s.clone()));
        }
        a.as_str()
            .map(String::new)
            .ok_or_else(|| TypeError::new("ffi.String", a.type_key()))
    }
}

impl TryFrom<Any> for Bytes {
    type Error = TypeError;
    fn try_from(a: Any) -> Result<Self, TypeError> {
        ObjectPtr::<crate::string::BytesObj>::try_from(a).map(Bytes::from_object_ptr)
    }
}

impl<T: ObjectType> TryFrom<Any> for ObjectPtr<T> {
    type Error = TypeError;
    #[inline]
    fn try_from(a: Any) -> Result<Self, TypeError> {
        if a.is_object() && is_instance::<T>(a.type_index) {
            // SAFETY: the payload owns one reference to an object that is a `T`; we move
            // it into the handle and forget the `Any`.
            let p = unsafe { ObjectPtr::from_raw(a.payload.obj as *mut T) };
            core::mem::forget(a);
            Ok(p)
        } else {
            Err(TypeError::new(T::TYPE_KEY, a.type_key()))
        }
    }
}
impl<T: ObjectType> TryFrom<AnyView<'_>> for ObjectPtr<T> {
    type Error = TypeError;
    #[inline]
    fn try_from(a: AnyView<'_>) -> Result<Self, TypeError> {
        a.as_object_of::<T>()
            .cloned()
            .ok_or_else(|| TypeError::new(T::TYPE_KEY, a.type_key()))
    }
}

macro_rules! option_out {
    ($($t:ty),*) => {$(
        impl TryFrom<Any> for Option<$t> {
            type Error = TypeError;
            fn try_from(a: Any) -> Result<Self, TypeError> {
                if a.is_none() { Ok(None) } else { <$t>::try_from(a).map(Some) }
            }
        }
    )*};
}
option_out!(
    i64,
    i32,
    u32,
    bool,
    f64,
    std::string::String,
    String,
    DataType,
    Device
);

impl<T: ObjectType> TryFrom<Any> for Option<ObjectPtr<T>> {
    type Error = TypeError;
    fn try_from(a: Any) -> Result<Self, TypeError> {
        if a.is_none() {
            Ok(None)
        } else {
            ObjectPtr::<T>::try_from(a).map(Some)
        }
    }
}

// ---------------------------------------------------------------------------------
// Container items: typed views over `Any` slots.
// ---------------------------------------------------------------------------------

/// A type a container can hold in an `Any` slot and hand out by reference: `Any`
/// itself, object handles (`ObjectPtr<T>`, `String`, …), `i64` and `f64`.
///
/// Containers (`Array`, `Map`) store `Any`s; a typed container `Array<T>` checks on the
/// way in and on a typed view that every slot [`matches`](AnyItem::matches), and then
/// reads slots as `&T` without copying.
///
/// # Safety
///
/// `from_slot` must return a reference valid for the slot's lifetime whenever `matches`
/// is true, and `into_any` must produce a slot that `matches`.
pub unsafe trait AnyItem: Clone + Sized + 'static {
    /// The type's name in errors (a type key where there is one).
    fn expected() -> std::borrow::Cow<'static, str>;
    /// Converts into a slot.
    fn into_any(self) -> Any;
    /// Whether a slot holds a valid `Self`.
    fn matches(slot: &Any) -> bool;
    /// Reads a slot that `matches`; `None` otherwise.
    fn from_slot(slot: &Any) -> Option<&Self>;
    /// Reads a slot known to match, without checking again.
    ///
    /// # Safety
    ///
    /// `Self::matches(slot)` must be true.
    #[inline]
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        match Self::from_slot(slot) {
            Some(v) => v,
            // SAFETY: the caller guarantees the slot matches, so `from_slot` is `Some`.
            None => unsafe { core::hint::unreachable_unchecked() },
        }
    }
    /// Takes a value out of a slot (converting where `TryFrom<Any>` would).
    fn try_from_any(slot: Any) -> Result<Self, TypeError>;
}

// SAFETY: the identity.
unsafe impl AnyItem for Any {
    fn expected() -> std::borrow::Cow<'static, str> {
        "Any".into()
    }
    #[inline]
    fn into_any(self) -> Any {
        self
    }
    #[inline]
    fn matches(_: &Any) -> bool {
        true
    }
    #[inline]
    fn from_slot(slot: &Any) -> Option<&Self> {
        Some(slot)
    }
    #[inline]
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        slot
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        Ok(slot)
    }
}

// SAFETY: `as_object_of` returns a reference into the slot exactly when the slot holds a
// `T`, which is what `From<ObjectPtr<T>>` produces.
unsafe impl<T: ObjectType> AnyItem for ObjectPtr<T> {
    fn expected() -> std::borrow::Cow<'static, str> {
        T::TYPE_KEY.into()
    }
    #[inline]
    fn into_any(self) -> Any {
        Any::from(self)
    }
    #[inline]
    fn matches(slot: &Any) -> bool {
        slot.is_object() && is_instance::<T>(slot.type_index)
    }
    #[inline]
    fn from_slot(slot: &Any) -> Option<&Self> {
        slot.as_object_of::<T>()
    }
    #[inline]
    unsafe fn from_slot_unchecked(slot: &Any) -> &Self {
        // SAFETY: the slot matches, so it holds a `T` object pointer in its payload.
        unsafe { &*(core::ptr::addr_of!(slot.payload.obj) as *const ObjectPtr<T>) }
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        ObjectPtr::try_from(slot)
    }
}

// SAFETY: `String` is `repr(transparent)` over `ObjectPtr<StringObj>`; slots that hold
// an `ffi.String` object are read through that handle. (Inline short strings are not
// `String` objects, so a typed `String` view of them is refused; `Array<String>` and
// `Map<String, _>` always store objects, and `String::try_from(Any)` accepts both.)
unsafe impl AnyItem for String {
    fn expected() -> std::borrow::Cow<'static, str> {
        "ffi.String".into()
    }
    #[inline]
    fn into_any(self) -> Any {
        Any::from(self)
    }
    #[inline]
    fn matches(slot: &Any) -> bool {
        slot.type_index == ti::STRING
    }
    #[inline]
    fn from_slot(slot: &Any) -> Option<&Self> {
        let p = slot.as_object_of::<StringObj>()?;
        // SAFETY: `String` is `repr(transparent)` over `ObjectPtr<StringObj>`.
        Some(unsafe { &*(p as *const ObjectPtr<StringObj> as *const String) })
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        String::try_from(slot)
    }
}

// SAFETY: `int_ref` returns the payload exactly for INT slots, which `From<i64>` makes.
unsafe impl AnyItem for i64 {
    fn expected() -> std::borrow::Cow<'static, str> {
        "int".into()
    }
    #[inline]
    fn into_any(self) -> Any {
        Any::from(self)
    }
    #[inline]
    fn matches(slot: &Any) -> bool {
        slot.type_index == ti::INT
    }
    #[inline]
    fn from_slot(slot: &Any) -> Option<&Self> {
        slot.int_ref()
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        i64::try_from(slot)
    }
}

// SAFETY: `float_ref` returns the payload exactly for FLOAT slots, which `From<f64>` makes.
unsafe impl AnyItem for f64 {
    fn expected() -> std::borrow::Cow<'static, str> {
        "float".into()
    }
    #[inline]
    fn into_any(self) -> Any {
        Any::from(self)
    }
    #[inline]
    fn matches(slot: &Any) -> bool {
        slot.type_index == ti::FLOAT
    }
    #[inline]
    fn from_slot(slot: &Any) -> Option<&Self> {
        slot.float_ref()
    }
    fn try_from_any(slot: Any) -> Result<Self, TypeError> {
        match slot.type_index {
            ti::FLOAT => f64::try_from(slot),
            _ => Err(TypeError::new("float", slot.type_key())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip() {
        assert_eq!(i64::try_from(Any::from(-5i64)), Ok(-5));
        assert_eq!(i32::try_from(Any::from(7i32)), Ok(7));
        assert!(i32::try_from(Any::from(1i64 << 40)).is_err());
        assert_eq!(u32::try_from(Any::from(9u32)), Ok(9));
        assert!(u32::try_from(Any::from(-1)).is_err());
        assert_eq!(bool::try_from(Any::from(true)), Ok(true));
        assert_eq!(f64::try_from(Any::from(1.5)), Ok(1.5));
        assert_eq!(f64::try_from(Any::from(2)), Ok(2.0), "ints widen");
        let dt = DataType::float(16);
        assert_eq!(DataType::try_from(Any::from(dt)), Ok(dt));
        assert_eq!(
            Device::try_from(Any::from(Device::cpu())),
            Ok(Device::cpu())
        );
        assert_eq!(<()>::try_from(Any::NONE), Ok(()));
        assert_eq!(Option::<i64>::try_from(Any::from(None::<i64>)), Ok(None));
        assert_eq!(Option::<i64>::try_from(Any::from(Some(3))), Ok(Some(3)));
        let p = core::ptr::null_mut::<c_void>().wrapping_add(0x1000);
        assert_eq!(Any::opaque_ptr(p).as_opaque_ptr(), Some(p));
    }

    #[test]
    fn dl_tensor_ptr_is_borrowed_only() {
        // Never dereferenced here: the test only checks how the kind travels.
        let p = core::ptr::null_mut::<c_void>().wrapping_add(0x40);
        // SAFETY: nothing reads through the view (the contract is about readers).
        let v = unsafe { AnyView::from_dl_tensor_ptr(p) };
        assert_eq!(v.type_index(), ti::DL_TENSOR_PTR);
        assert_eq!(v.type_key(), "DLTensor*");
        assert_eq!(v.as_dl_tensor_ptr(), Some(p));
        assert_eq!(v.as_opaque_ptr(), None);
        assert!(!v.is_object());
        assert!(format!("{v:?}").starts_with("DLTensor*@0x"));
        // No owned form: the address survives as an opaque pointer.
        let owned = v.to_any();
        assert_eq!(owned.type_index(), ti::OPAQUE_PTR);
        assert_eq!(owned.as_opaque_ptr(), Some(p));
        assert_eq!(owned.view().as_dl_tensor_ptr(), None);
        assert_eq!(AnyView::from(1).as_dl_tensor_ptr(), None);
    }

    #[test]
    fn strings_inline_or_object() {
        let short = Any::from("1234567");
        assert_eq!(short.type_index(), ti::SMALL_STR);
        let long = Any::from("12345678");
        assert_eq!(long.type_index(), ti::STRING);
        assert_eq!(short.as_str(), Some("1234567"));
        assert_eq!(long.as_str(), Some("12345678"));
        assert_eq!(
            std::string::String::try_from(long.clone()).unwrap(),
            "12345678"
        );
        let s = String::try_from(short.clone()).unwrap();
        assert_eq!(s, "1234567");
        // Inline and object strings are equal and hash alike.
        assert_eq!(Any::from("abc"), Any::from(String::from("abc")));
        use std::hash::BuildHasher;
        let st =
            std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
        assert_eq!(
            st.hash_one(Any::from("abc")),
            st.hash_one(Any::from(String::from("abc")))
        );
        assert_eq!(Any::from("").as_str(), Some(""));
        assert_eq!(Any::from("é").as_str(), Some("é"));
    }

    #[test]
    fn errors_name_both_types() {
        let e = i64::try_from(Any::from("text")).unwrap_err();
        assert_eq!(e.to_string(), "expected int, got ffi.String");
        let e = ObjectRef::try_from(Any::from(1)).unwrap_err();
        assert_eq!(e.to_string(), "expected ffi.Object, got int");
        let e = ObjectPtr::<StringObj>::try_from(Any::from(crate::make_object(Object::new())))
            .unwrap_err();
        assert_eq!(e.to_string(), "expected ffi.String, got ffi.Object");
    }

    #[test]
    fn objects_are_counted() {
        let o = crate::make_object(Object::new());
        let a = Any::from(o.clone());
        assert_eq!(ObjectPtr::strong_count(&o), 2);
        let b = a.clone();
        assert_eq!(ObjectPtr::strong_count(&o), 3);
        assert!(a.as_object().is_some_and(|r| ObjectPtr::ptr_eq(r, &o)));
        assert_eq!(a, b, "objects compare by identity");
        assert_ne!(a, Any::from(crate::make_object(Object::new())));
        let v = a.view();
        assert_eq!(ObjectPtr::strong_count(&o), 3, "views borrow");
        let back = v.to_any();
        assert_eq!(ObjectPtr::strong_count(&o), 4);
        drop((a, b, back));
        assert_eq!(ObjectPtr::strong_count(&o), 1);
        let raw = Any::from(o.clone()).into_raw();
        // SAFETY: `raw` came from `into_raw` and owns its reference.
        drop(unsafe { Any::from_raw(raw) });
        assert_eq!(ObjectPtr::strong_count(&o), 1);
        assert_eq!(format!("{:?}", Any::from(o)), "Any(ffi.Object)");
        assert_eq!(format!("{:?}", Any::from(1.5)), "Any(1.5)");
    }

    #[test]
    fn small_str_payload_matches_a_plain_copy() {
        let src = "abcdefg\u{e9}";
        for start in 0..3 {
            for n in 0..=SMALL_STR_MAX {
                let Some(s) = src.as_bytes().get(start..start + n) else {
                    continue;
                };
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(s);
                assert_eq!(small_str_payload(s), b, "n={n}");
            }
        }
    }
}
