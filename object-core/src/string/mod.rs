//! `ffi.String` and `ffi.Bytes`: immutable byte strings in one allocation (header,
//! data pointer, size, then the bytes and a trailing NUL for C readers).
//!
//! They live in `object-core`, not with the other containers, because `Any` (also in
//! core) must turn a `&str` into a string object, and Rust's orphan rule puts
//! `From<&str> for Any` next to `Any`. `object-containers` re-exports them.

use core::borrow::Borrow;
use core::cmp::Ordering;
use core::fmt;
use core::hash::{Hash, Hasher};
use core::ops::Deref;

use crate::ptr::ObjectPtr;

// The objects hold a raw pointer to their own bytes and promise the allocator their size.
#[allow(unsafe_code)]
mod repr;

pub use self::repr::{BytesObj, StringObj};

/// An immutable, reference-counted string object (`ffi.String`): one allocation, cheap
/// to clone, compared and hashed by value.
///
/// ```
/// use object_core::String;
/// let s = String::from("hello");
/// let t = s.clone(); // a count increment
/// assert_eq!(&*t, "hello");
/// assert_eq!(s, "hello");
/// assert!(String::from("a") < String::from("b"));
/// ```
///
/// Like every object handle, it converts to and from its object pointer:
///
/// ```
/// use object_core::{ObjectPtr, ObjectRef, String, StringObj};
/// let s = String::from("shared");
/// let t = s.clone();
/// assert!(String::ptr_eq(&s, &t)); // an associated function, as `Arc::ptr_eq`
/// assert!(!String::ptr_eq(&s, &String::from("shared"))); // equal, not the same
/// let p: ObjectPtr<StringObj> = t.into_object_ptr();
/// assert_eq!(ObjectPtr::strong_count(&p), 2);
/// let back = String::from_object_ptr(p);
/// assert_eq!(back.as_object_ptr().as_str(), "shared");
/// let erased: ObjectRef = back.into();
/// assert_eq!(erased.type_key(), "ffi.String");
/// ```
#[repr(transparent)]
#[derive(Clone)]
pub struct String(ObjectPtr<StringObj>);

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
    /// A string object with a copy of `s`.
    #[inline]
    pub fn new(s: &str) -> Self {
        String(StringObj::make(s.as_bytes()))
    }
    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        self.0.as_str()
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

macro_rules! value_semantics {
    ($t:ident, $target:ty, $get:ident) => {
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
                ObjectPtr::ptr_eq(&self.0, &other.0) || self.$get() == other.$get()
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

// The handle API (`from_object_ptr`, `as_object_ptr`, `into_object_ptr`, `ptr_eq`,
// `From<_> for ObjectRef`). `String`'s value conversions are its own (it also stands for
// inline strings, and is a `Str` field, not an object field); `Bytes` takes them all.
crate::__object_handle!(@methods String, StringObj);
crate::__object_handle!(Bytes, BytesObj, "ffi.Bytes");

value_semantics!(String, str, as_str);
value_semantics!(Bytes, [u8], as_bytes);

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
        assert_eq!(s.as_object_ptr().type_index(), 65);
        assert_eq!(StringObj::type_index(), 65);
        assert_eq!(BytesObj::TYPE_KEY, "ffi.Bytes");
        let items = ObjectPtr::items(s.as_object_ptr());
        assert_eq!(items.last(), Some(&0), "NUL-terminated for C readers");
        let start = ObjectPtr::as_ptr(s.as_object_ptr()) as usize;
        assert!(
            (items.as_ptr() as usize) - start < 64,
            "bytes follow the header"
        );
        assert_eq!(String::from(""), "");
        assert_eq!(format!("{:?}", String::from("a\"b")), "\"a\\\"b\"");
        let big = "x".repeat(5000);
        assert_eq!(String::from(&big).len(), 5000);
        let b = Bytes::from(vec![0u8, 255, 10]);
        assert_eq!(format!("{b:?}"), "b\"\\x00\\xff\\n\"");
    }
}
