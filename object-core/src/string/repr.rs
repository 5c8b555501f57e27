//! The string objects' representation: `StringObj` and `BytesObj` hold a pointer to their
//! bytes, which follow them in the same block (NUL-terminated for C readers).
//!
//! The fenced part of `string`: the objects promise the allocator how many bytes follow
//! them (`InlineItems`), are shared across threads although they hold a raw pointer,
//! and a `StringObj`'s bytes are UTF-8 because only `String::new` makes one, from a
//! `&str`.

use core::fmt;

use crate::alloc::{make_object_with_slice, InlineItems};
use crate::ptr::ObjectPtr;
use crate::Object;

macro_rules! byte_string_object {
    ($(#[$doc:meta])* $obj:ident, $key:literal, $index:literal, $hooks:path) => {
        $(#[$doc])*
        #[derive(crate::Object)]
        #[repr(C)]
        #[object(key = $key, index = $index, final, opaque, builtin = $hooks)]
        pub struct $obj {
            base: Object,
            data: *const u8,
            size: usize,
        }

        // SAFETY: the bytes are immutable after construction and owned by the object;
        // `data` only ever points into the object's own block.
        unsafe impl Send for $obj {}
        // SAFETY: as above; shared access is read-only.
        unsafe impl Sync for $obj {}

        // SAFETY: values are built only by `$obj::make` (private fields), through
        // `make_object_with_slice`; capacity is `size + 1` (the NUL), and the count and
        // capacity move only through the setters, which just record.
        unsafe impl InlineItems for $obj {
            type Item = u8;
            // Fixed at creation: the setters below only record, so nothing may resize.
            const RESIZABLE: bool = false;
            fn item_capacity(&self) -> usize {
                self.size + 1
            }
            fn item_len(&self) -> usize {
                self.size + 1
            }
            unsafe fn set_item_len(&mut self, _len: usize) {}
            unsafe fn set_item_capacity(&mut self, _cap: usize) {}
            fn set_items_ptr(&mut self, ptr: *const u8) {
                self.data = ptr;
            }
        }

        impl $obj {
            #[inline]
            pub(crate) fn make(bytes: &[u8]) -> ObjectPtr<$obj> {
                let value = $obj { base: Object::new(), data: core::ptr::null(), size: bytes.len() };
                // One more slot, padded with the NUL terminator.
                make_object_with_slice(value, bytes.len() + 1, bytes, 0)
            }

            /// The bytes (without the trailing NUL).
            #[inline]
            pub fn as_bytes(&self) -> &[u8] {
                // SAFETY: `data` points at `size + 1` initialized bytes in this object's
                // own block (set by the allocator), immutable while the object lives.
                unsafe { core::slice::from_raw_parts(self.data, self.size) }
            }
        }

        impl fmt::Debug for $obj {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let bytes = self.as_bytes();
                match core::str::from_utf8(bytes) {
                    Ok(s) if $key == "ffi.String" => fmt::Debug::fmt(s, f),
                    _ => write!(f, "b\"{}\"", bytes.escape_ascii()),
                }
            }
        }
    };
}

byte_string_object!(
    /// The object behind [`String`](super::String) (`ffi.String`, static index 65).
    StringObj,
    "ffi.String",
    65,
    super::STRING_HOOKS
);
byte_string_object!(
    /// The object behind [`Bytes`](super::Bytes) (`ffi.Bytes`, static index 66).
    BytesObj,
    "ffi.Bytes",
    66,
    super::BYTES_HOOKS
);

impl super::String {
    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        // A `String`'s constructors (`String::new`, `from_object_ptr`, `from_string_any`)
        // make nothing else, and `AnyItem::from_slot` lends a slot as a `String` only
        // when it holds one of the two.
        // SAFETY: a `String` holds an inline string or a string object.
        unsafe { self.as_any().string_text_unchecked() }
    }
}

impl StringObj {
    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        // SAFETY: `StringObj`s are only made from `&str` (see `String::new`).
        unsafe { core::str::from_utf8_unchecked(self.as_bytes()) }
    }
}
