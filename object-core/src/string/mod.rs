//! `ffi.String` and `ffi.Bytes`: immutable byte strings in one allocation (header,
//! data pointer, size, then the bytes and a trailing NUL for C readers).
//!
//! The `String` handle is a 16-byte `Any` cell, as tvm-ffi's: text of up to 7 bytes
//! stays in the handle (`ffi.SmallStr`, no allocation), longer text is a `StringObj`.
//! `Bytes` is one object pointer.
//!
//! They live in `object-core`, not with the other containers, because `Any` (also in
//! core) must turn a `&str` into a string object, and Rust's orphan rule puts
//! `From<&str> for Any` next to `Any`. `object-containers` re-exports them.

use core::borrow::Borrow;
use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::Deref;

use crate::any::Any;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::type_index as ti;

// The objects hold a raw pointer to their own bytes and promise the allocator their size.
#[allow(unsafe_code)]
mod repr;

pub use self::repr::{BytesObj, StringObj};

/// An immutable string (`ffi.String`): up to [`String::INLINE_MAX`] (7) bytes stored
/// in the handle itself with no allocation, longer text in one reference-counted
/// `ffi.String` object. Cheap to clone, compared and hashed by value.
///
/// ```
/// use object_core::String;
/// let s = String::from("hello");
/// let t = s.clone(); // a copy of 16 bytes (inline) or a count increment (object)
/// assert_eq!(&*t, "hello");
/// assert_eq!(s, "hello");
/// assert!(s.is_inline());
/// assert!(String::from("a") < String::from("b"));
/// ```
///
/// # Layout
///
/// A `String` is an [`Any`] (`#[repr(transparent)]`, 16 bytes, tvm-ffi's `TVMFFIAny`)
/// that holds one of two kinds, as tvm-ffi's own `String` handle does:
///
/// - type index 11 (`ffi.SmallStr`): the length (0 to 7) in the 32-bit `small` field
///   and the bytes at the start of the 8-byte payload, zero-padded (so C sees a
///   NUL-terminated string there);
/// - type index 65 (`ffi.String`): the payload is a pointer to a `StringObj` holding
///   one strong reference (its bytes are NUL-terminated too).
///
/// This is the layout of a `String` field, of an `Array<String>` item and of a
/// `Map<String, _>` key alike, so typed containers read their slots as `&String`
/// without a copy, and C code reads a `String` field (`OBJ_FIELD_KIND_STR`) as an
/// `ObjAny`.
///
/// Long strings are objects; the handle converts to and from its object pointer
/// (an inline string is copied into a new object when an object is asked for):
///
/// ```
/// use object_core::{ObjectPtr, ObjectRef, String, StringObj};
/// let s = String::from("shared text");
/// let t = s.clone();
/// assert!(String::ptr_eq(&s, &t)); // an associated function, as `Arc::ptr_eq`
/// assert!(!String::ptr_eq(&s, &String::from("shared text"))); // equal, not the same
/// let p: ObjectPtr<StringObj> = t.into_object_ptr();
/// assert_eq!(ObjectPtr::strong_count(&p), 2);
/// let back = String::from_object_ptr(p);
/// assert_eq!(back.as_heap_object().map(|o| o.as_str()), Some("shared text"));
/// let erased: ObjectRef = back.into();
/// assert_eq!(erased.type_key(), "ffi.String");
/// // A short string has no object until one is asked for.
/// assert!(String::from("short").as_heap_object().is_none());
/// assert_eq!(String::from("short").into_object_ptr().as_str(), "short");
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct String(Any);

/// An immutable, reference-counted byte string (`ffi.Bytes`).
///
/// ```
/// use object_core::Bytes;
/// let b = Bytes::from(&[1u8, 2, 3][..]);
/// assert_eq!(&*b, &[1, 2, 3]);
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct Bytes(ObjectPtr<BytesObj>);

impl String {
    /// The longest text stored in the handle itself (7 bytes, as tvm-ffi).
    pub const INLINE_MAX: usize = crate::any::SMALL_STR_MAX;

    /// A string with a copy of `s`: inline when it is at most
    /// [`INLINE_MAX`](Self::INLINE_MAX) bytes, else a new `ffi.String` object.
    #[inline]
    pub fn new(s: &str) -> Self {
        String(Any::from(s))
    }
    /// Whether the text is stored in the handle (no object).
    #[inline]
    pub fn is_inline(&self) -> bool {
        self.0.type_index() == ti::SMALL_STR
    }
    /// The string object, when the text is in one (not inline).
    #[inline]
    pub fn as_heap_object(&self) -> Option<&ObjectPtr<StringObj>> {
        self.0.as_object_of::<StringObj>()
    }
    /// Wraps a string object (the inverse of [`into_object_ptr`](Self::into_object_ptr)).
    #[inline]
    pub fn from_object_ptr(ptr: ObjectPtr<StringObj>) -> Self {
        String(Any::from(ptr))
    }
    /// The text as a string object: the handle's own object (no count change), or a
    /// new one holding a copy of an inline string.
    #[inline]
    pub fn into_object_ptr(self) -> ObjectPtr<StringObj> {
        match self.0.into_object_ptr::<StringObj>() {
            Ok(p) => p,
            Err(inline) => StringObj::make(inline.as_str().unwrap_or("").as_bytes()),
        }
    }
    /// The handle as an [`Any`] (the same 16 bytes).
    #[inline]
    pub fn as_any(&self) -> &Any {
        &self.0
    }
    /// The handle as an [`Any`] (the same 16 bytes, moved).
    #[inline]
    pub fn into_any(self) -> Any {
        self.0
    }
    /// Whether two handles are the same object, or the same inline text. An associated
    /// function, as [`Arc::ptr_eq`](std::sync::Arc::ptr_eq), so that it never shadows a
    /// method of `str`.
    #[inline]
    pub fn ptr_eq(this: &Self, other: &Self) -> bool {
        this.0.same_bits(&other.0)
    }
    /// Whether `self` and `other` are the same object or the same inline text
    /// (identity, as TVM's `same_as`; [`ptr_eq`](Self::ptr_eq) as a method).
    #[inline]
    pub fn same_as(&self, other: &Self) -> bool {
        String::ptr_eq(self, other)
    }
    /// The handle, if `a` holds an inline string or a string object (the only values
    /// a `String` wraps: `as_str` relies on it); `a` back otherwise.
    #[inline]
    pub(crate) fn from_string_any(a: Any) -> Result<Self, Any> {
        if String::holds(&a) {
            Ok(String(a))
        } else {
            Err(a)
        }
    }

    /// Whether `a` is a value a `String` may wrap: an inline string or a string
    /// object (the rule every unchecked view of an `Any` as a `String` rests on).
    #[inline(always)]
    pub(crate) fn holds(a: &Any) -> bool {
        matches!(a.type_index(), ti::SMALL_STR | ti::STRING)
    }
}

impl From<String> for ObjectRef {
    /// Erases the static type: a string object (an inline string is copied into one).
    #[inline]
    fn from(s: String) -> ObjectRef {
        s.into_object_ptr().into_object_ref()
    }
}

impl From<ObjectPtr<StringObj>> for String {
    #[inline]
    fn from(p: ObjectPtr<StringObj>) -> String {
        String::from_object_ptr(p)
    }
}

impl Bytes {
    /// A bytes object with a copy of `b`.
    #[inline]
    pub fn new(b: &[u8]) -> Self {
        Bytes(BytesObj::make(b))
    }
    /// The bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// A string object is a built-in of shape text: its contents are its text, and one is
/// built from text.
pub(crate) static STRING_HOOKS: crate::builtin::BuiltinHooks = crate::builtin::BuiltinHooks {
    shape: crate::builtin::BuiltinShape::Text,
    mutable: false,
    contents: |obj| match obj.downcast_ref::<StringObj>() {
        // (Only `String::new` makes one, from a `&str`.)
        Some(s) => match core::str::from_utf8(s.as_bytes()) {
            Ok(text) => crate::builtin::Contents::Text(text),
            Err(_) => crate::builtin::Contents::Bytes(s.as_bytes()),
        },
        None => crate::builtin::Contents::Identity,
    },
    build: |parts| match parts {
        // An object even when short, as JSON loading has always made: typed views
        // (`Map<String, _>`, `Array<String>`) take only objects.
        crate::builtin::Parts::Text(text) => Ok(String::new(&text).into_any()),
        other => Err(crate::builtin::BuiltinError::wrong_shape(
            crate::builtin::BuiltinShape::Text,
            &other,
        )),
    },
};

/// A bytes object is a built-in of shape bytes.
pub(crate) static BYTES_HOOKS: crate::builtin::BuiltinHooks = crate::builtin::BuiltinHooks {
    shape: crate::builtin::BuiltinShape::Bytes,
    mutable: false,
    contents: |obj| match obj.downcast_ref::<BytesObj>() {
        Some(b) => crate::builtin::Contents::Bytes(b.as_bytes()),
        None => crate::builtin::Contents::Identity,
    },
    build: |parts| match parts {
        crate::builtin::Parts::Bytes(bytes) => Ok(Any::from(Bytes::new(&bytes))),
        other => Err(crate::builtin::BuiltinError::wrong_shape(
            crate::builtin::BuiltinShape::Bytes,
            &other,
        )),
    },
};

macro_rules! value_semantics {
    ($t:ident, $target:ty, $get:ident, $same:path) => {
        impl Deref for $t {
            type Target = $target;
            #[inline]
            fn deref(&self) -> &$target {
                self.$get()
            }
        }
        impl AsRef<$target> for $t {
            fn as_ref(&self) -> &$target {
                self.$get()
            }
        }
        impl Borrow<$target> for $t {
            fn borrow(&self) -> &$target {
                self.$get()
            }
        }
        impl PartialEq for $t {
            #[inline]
            fn eq(&self, other: &Self) -> bool {
                $same(self, other) || self.$get() == other.$get()
            }
        }
        impl Eq for $t {}
        impl PartialEq<$target> for $t {
            fn eq(&self, other: &$target) -> bool {
                self.$get() == other
            }
        }
        impl PartialEq<&$target> for $t {
            fn eq(&self, other: &&$target) -> bool {
                self.$get() == *other
            }
        }
        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for $t {
            fn cmp(&self, other: &Self) -> Ordering {
                self.$get().cmp(other.$get())
            }
        }
        impl Hash for $t {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.$get().hash(state)
            }
        }
        impl From<&$target> for $t {
            #[inline]
            fn from(s: &$target) -> Self {
                $t::new(s)
            }
        }
    };
}

// `Bytes` takes the whole handle API (`from_object_ptr`, `as_object_ptr`,
// `into_object_ptr`, `ptr_eq`, the `Any` conversions); `String`'s are its own, above and
// in `any` (it is also an inline string, and a `Str` field, not an object field).
crate::__object_handle!(Bytes, BytesObj, "ffi.Bytes");

value_semantics!(String, str, as_str, String::ptr_eq);
value_semantics!(Bytes, [u8], as_bytes, Bytes::ptr_eq);

impl From<std::string::String> for String {
    fn from(s: std::string::String) -> Self {
        String::new(&s)
    }
}
impl From<&std::string::String> for String {
    fn from(s: &std::string::String) -> Self {
        String::new(s)
    }
}
impl From<String> for std::string::String {
    fn from(s: String) -> Self {
        s.as_str().to_owned()
    }
}
impl From<Vec<u8>> for Bytes {
    fn from(b: Vec<u8>) -> Self {
        Bytes::new(&b)
    }
}
impl Default for String {
    fn default() -> Self {
        String::new("")
    }
}

impl fmt::Display for String {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}
impl fmt::Debug for String {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}
impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.as_bytes().escape_ascii())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ObjectType;

    #[test]
    fn strings_are_one_block_nul_terminated_values() {
        let s = String::from("hello, world");
        assert_eq!(s.as_str(), "hello, world");
        let obj = s.as_heap_object().expect("12 bytes: an object");
        assert_eq!(obj.type_index(), 65);
        assert_eq!(StringObj::type_index(), 65);
        assert_eq!(BytesObj::TYPE_KEY, "ffi.Bytes");
        let items = ObjectPtr::items(obj);
        assert_eq!(items.last(), Some(&0), "NUL-terminated for C readers");
        let start = ObjectPtr::as_ptr(obj) as usize;
        assert!(
            (items.as_ptr() as usize) - start < 64,
            "bytes follow the header"
        );
        assert_eq!(String::from(""), "");
        assert_eq!(format!("{:?}", String::from("a\"b")), "\"a\\\"b\"");
        let big = "x".repeat(5000);
        assert_eq!(String::from(&big).len(), 5000);
        // Up to 7 bytes inline, NUL included in the payload's padding.
        for text in ["", "a", "abc", "abcd", "abcdefg"] {
            let s = String::from(text);
            assert!(s.is_inline(), "{text:?}");
            assert_eq!(s.as_str(), text);
            assert_eq!(s.as_any().type_index(), crate::type_index::SMALL_STR);
            assert_eq!(s.clone().into_object_ptr().as_str(), text);
        }
        assert!(!String::from("abcdefgh").is_inline());
        assert_eq!(core::mem::size_of::<String>(), 16);
        let b = Bytes::from(vec![0u8, 255, 10]);
        assert_eq!(format!("{b:?}"), "b\"\\x00\\xff\\n\"");
    }
}
