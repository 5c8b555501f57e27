//! What a built-in object holds: the one description every walker reads.
//!
//! A *built-in* is an `#[object(opaque)]` type with a representation of its own (a
//! string, an array, a map, a tensor …) rather than reflected fields. It says what it
//! holds once, in a [`BuiltinHooks`] value registered with its type
//! (`#[object(opaque, builtin = PATH)]`):
//!
//! - its [`BuiltinShape`]: items, entries, integers, bytes, text, a big integer or a
//!   tensor, and whether the container is *mutable* (its contents can change behind a
//!   shared handle, so walkers read a snapshot);
//! - `contents`: an object's [`Contents`] in that shape, borrowed from the object where
//!   it stores them (a map's entries as a borrowed iterator, [`Entries`]), or a snapshot
//!   of a mutable container;
//! - `build`: a new object of the same type from [`Parts`] of the same shape.
//!
//! Structural equality and hashing, the [`transform`](crate::transform) visitor and
//! mutator, the printer, the JSON graph (save and load) and the Python conversions read
//! a built-in through these hooks and nothing else: a node is either a reflected object
//! or a built-in of some shape. A new container is one type and one hooks value.
//!
//! # Examples
//!
//! A pair of values, as a built-in of shape [`Items`](BuiltinShape::Items):
//!
//! ```
//! use object_core::builtin::{BuiltinError, BuiltinHooks, BuiltinShape, Contents, Parts};
//! use object_core::prelude::*;
//! use object_core::structural::structural_equal;
//! use object_core::Any;
//!
//! #[derive(Object, Debug)]
//! #[repr(C)]
//! #[object(key = "doc.builtin.Pair", final, opaque, builtin = PAIR)]
//! struct Pair { base: Object, items: [Any; 2] }
//!
//! static PAIR: BuiltinHooks = BuiltinHooks {
//!     shape: BuiltinShape::Items,
//!     mutable: false,
//!     contents: |obj| match obj.downcast_ref::<Pair>() {
//!         Some(p) => Contents::Items(&p.items),
//!         None => Contents::Identity,
//!     },
//!     build: |parts| match parts {
//!         Parts::Items(items) => {
//!             let [a, b]: [Any; 2] = items.collect::<Vec<_>>().try_into().map_err(|v: Vec<Any>| {
//!                 BuiltinError::data(format!("a pair holds 2 items, not {}", v.len()))
//!             })?;
//!             // Built by hand: an `opaque` type has no generated constructor.
//!             Ok(Any::from(make_object(Pair { base: Object::new(), items: [a, b] })))
//!         }
//!         other => Err(BuiltinError::wrong_shape(BuiltinShape::Items, &other)),
//!     },
//! };
//!
//! let pair = |a: i64, b: i64| {
//!     // (By hand too: no constructor for an `opaque` type.)
//!     make_object(Pair { base: Object::new(), items: [Any::from(a), Any::from(b)] })
//!         .into_object_ref()
//! };
//! assert!(structural_equal(&pair(1, 2), &pair(1, 2)));
//! assert!(!structural_equal(&pair(1, 2), &pair(2, 1)));
//! ```

mod entries;
mod error;

use std::borrow::Cow;

pub use self::entries::{Entries, EntryList, EntrySlot};
pub use self::error::{BuiltinError, BuiltinErrorKind};
use crate::any::Any;
use crate::dtype::{DataType, Device};
use crate::ptr::ObjectRef;
use crate::registry::TypeInfo;

/// How a built-in shows what it holds, and how one is made from such contents:
/// plain data (function pointers), registered with the type by
/// `#[object(opaque, builtin = PATH)]`, where `PATH` names a `static` of this type.
/// See the [module docs](self) for an example.
#[derive(Debug, Clone, Copy)]
pub struct BuiltinHooks {
    /// The shape of the type's contents: `contents` returns it (or
    /// [`Contents::Identity`]) and `build` takes it.
    pub shape: BuiltinShape,
    /// Whether an object's contents can change behind a shared handle (`List`,
    /// `Dict`): `contents` then returns a snapshot
    /// ([`SnapshotItems`](Contents::SnapshotItems),
    /// [`SnapshotEntries`](Contents::SnapshotEntries)), and walkers keep in mind that
    /// such a container can contain itself.
    pub mutable: bool,
    /// The contents of `obj` (always an object of the type). Called once per object
    /// per walk; may allocate (a mutable container's snapshot, a big integer's digits).
    pub contents: for<'a> fn(obj: &'a ObjectRef) -> Contents<'a>,
    /// A new value of the type holding `parts` (of the type's shape): an object, or
    /// for a string short enough, the inline string of the same text.
    ///
    /// # Errors
    ///
    /// A [`BuiltinError`] for parts of another shape, or that the type cannot hold
    /// (odd lengths, a tensor larger than memory).
    pub build: fn(parts: Parts<'_>) -> Result<Any, BuiltinError>,
}

impl BuiltinHooks {
    /// The built-in hooks of the type `info`, if it is a built-in.
    ///
    /// ```
    /// use object_core::builtin::{BuiltinHooks, BuiltinShape};
    /// use object_core::Any;
    ///
    /// let s = Any::from("a string object, not inline");
    /// let hooks = BuiltinHooks::of(s.as_object().unwrap().type_info()).unwrap();
    /// assert_eq!(hooks.shape, BuiltinShape::Text);
    /// ```
    #[inline]
    pub fn of(info: &'static TypeInfo) -> Option<&'static BuiltinHooks> {
        info.reflection().builtin()
    }

    /// The built-in hooks of `obj`'s type, if it is a built-in.
    #[inline]
    pub fn of_object(obj: &ObjectRef) -> Option<&'static BuiltinHooks> {
        obj.type_info().reflection().builtin()
    }

    /// Whether objects of the type are values compared by content wherever objects
    /// are otherwise compared by identity (text and bytes).
    #[inline]
    pub fn is_value(&self) -> bool {
        matches!(self.shape, BuiltinShape::Text | BuiltinShape::Bytes)
    }
}

/// The kinds of contents a built-in can hold (see [`Contents`] and [`Parts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BuiltinShape {
    /// A sequence of values, in order (`Array`, `List`).
    Items,
    /// Key-value entries, in insertion order; keys are unique (`Map`, `Dict`).
    Entries,
    /// A sequence of 64-bit integers (`Shape`).
    Ints,
    /// Bytes (`Bytes`).
    Bytes,
    /// UTF-8 text (`String`).
    Text,
    /// An integer of any size, as decimal text (`BigInt`).
    Integer,
    /// A tensor: element type, shape, device and elements (`Tensor`).
    Tensor,
}

impl BuiltinShape {
    /// The shape's name, as errors word it.
    pub fn name(self) -> &'static str {
        match self {
            BuiltinShape::Items => "items",
            BuiltinShape::Entries => "entries",
            BuiltinShape::Ints => "integers",
            BuiltinShape::Bytes => "bytes",
            BuiltinShape::Text => "text",
            BuiltinShape::Integer => "an integer",
            BuiltinShape::Tensor => "a tensor",
        }
    }
}

/// What a built-in object holds, lent by its [`BuiltinHooks::contents`].
#[derive(Debug)]
#[non_exhaustive]
pub enum Contents<'a> {
    /// Values in order (shape [`Items`](BuiltinShape::Items)).
    Items(&'a [Any]),
    /// Key-value entries, borrowed (shape [`Entries`](BuiltinShape::Entries)).
    Entries(Entries<'a>),
    /// A snapshot of a *mutable* container's items, taken under its lock.
    SnapshotItems(Vec<Any>),
    /// A snapshot of a *mutable* container's entries, taken under its lock.
    SnapshotEntries(Vec<(Any, Any)>),
    /// 64-bit integers (shape [`Ints`](BuiltinShape::Ints)).
    Ints(&'a [i64]),
    /// Bytes (shape [`Bytes`](BuiltinShape::Bytes)).
    Bytes(&'a [u8]),
    /// Text (shape [`Text`](BuiltinShape::Text)).
    Text(&'a str),
    /// An integer of any size as decimal text: an optional `-` and digits without
    /// leading zeros (shape [`Integer`](BuiltinShape::Integer)).
    Integer(Cow<'a, str>),
    /// A tensor (shape [`Tensor`](BuiltinShape::Tensor)).
    Tensor(TensorContents<'a>),
    /// Nothing to show (an object the hooks do not recognise): walkers treat it by
    /// identity.
    Identity,
}

impl Contents<'_> {
    /// The number of items, entries, integers or bytes held (text: its length in
    /// bytes; a tensor, an integer and [`Identity`](Self::Identity): 0).
    pub fn len(&self) -> usize {
        match self {
            Contents::Items(v) => v.len(),
            Contents::Entries(e) => e.len(),
            Contents::SnapshotItems(v) => v.len(),
            Contents::SnapshotEntries(v) => v.len(),
            Contents::Ints(v) => v.len(),
            Contents::Bytes(v) => v.len(),
            Contents::Text(v) => v.len(),
            Contents::Integer(_) | Contents::Tensor(_) | Contents::Identity => 0,
        }
    }

    /// Whether [`len`](Self::len) is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shape these contents have ([`None`] for [`Identity`](Self::Identity)).
    pub fn shape(&self) -> Option<BuiltinShape> {
        Some(match self {
            Contents::Items(_) | Contents::SnapshotItems(_) => BuiltinShape::Items,
            Contents::Entries(_) | Contents::SnapshotEntries(_) => BuiltinShape::Entries,
            Contents::Ints(_) => BuiltinShape::Ints,
            Contents::Bytes(_) => BuiltinShape::Bytes,
            Contents::Text(_) => BuiltinShape::Text,
            Contents::Integer(_) => BuiltinShape::Integer,
            Contents::Tensor(_) => BuiltinShape::Tensor,
            Contents::Identity => return None,
        })
    }

    /// Calls `f` with every value held, in order (items; entries' keys and values in
    /// turn), borrowed from the contents.
    pub fn for_each_value<'s>(&'s self, mut f: impl FnMut(&'s Any)) {
        match self {
            Contents::Items(v) => v.iter().for_each(f),
            Contents::SnapshotItems(v) => v.iter().for_each(f),
            Contents::Entries(e) => e.clone().for_each(|(k, v)| {
                f(k);
                f(v);
            }),
            Contents::SnapshotEntries(v) => v.iter().for_each(|(k, v)| {
                f(k);
                f(v);
            }),
            _ => {}
        }
    }
}

/// A tensor's contents (see [`Contents::Tensor`]): its metadata, and its elements read
/// on demand (a walker that does not compare elements never copies a strided tensor's).
#[derive(Clone, Copy)]
pub struct TensorContents<'a> {
    /// The element type.
    pub dtype: DataType,
    /// The shape.
    pub shape: &'a [i64],
    /// Where the elements live.
    pub device: Device,
    obj: &'a ObjectRef,
    read: fn(&'a ObjectRef) -> Result<Cow<'a, [u8]>, BuiltinError>,
}

impl<'a> TensorContents<'a> {
    /// The contents of the tensor `obj`, whose elements `read` gives.
    pub fn new(
        obj: &'a ObjectRef,
        dtype: DataType,
        shape: &'a [i64],
        device: Device,
        read: fn(&'a ObjectRef) -> Result<Cow<'a, [u8]>, BuiltinError>,
    ) -> Self {
        TensorContents {
            dtype,
            shape,
            device,
            obj,
            read,
        }
    }

    /// The elements' bytes, packed in row-major order (borrowed from a contiguous host
    /// tensor, copied from a strided one).
    ///
    /// # Errors
    ///
    /// [`Unsupported`](BuiltinErrorKind::Unsupported) for a tensor not readable on the
    /// host, [`Memory`](BuiltinErrorKind::Memory) if the copy cannot be made.
    pub fn bytes(&self) -> Result<Cow<'a, [u8]>, BuiltinError> {
        (self.read)(self.obj)
    }
}

impl core::fmt::Debug for TensorContents<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TensorContents")
            .field("dtype", &self.dtype)
            .field("shape", &self.shape)
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

/// What a built-in is made of: the input of [`BuiltinHooks::build`]. Values come one
/// at a time from a borrowed exact-size iterator (the built object takes them; no
/// collection is made to hand them over); text and numbers may be borrowed (from the
/// text being loaded, say), since building copies them anyway.
#[non_exhaustive]
pub enum Parts<'a> {
    /// Values in order.
    Items(&'a mut dyn ExactSizeIterator<Item = Any>),
    /// Key-value entries in order (a later entry with an equal key replaces an
    /// earlier one).
    Entries(&'a mut dyn ExactSizeIterator<Item = (Any, Any)>),
    /// 64-bit integers.
    Ints(Cow<'a, [i64]>),
    /// Bytes.
    Bytes(Cow<'a, [u8]>),
    /// Text.
    Text(Cow<'a, str>),
    /// An integer as decimal text (an optional `-` and digits).
    Integer(Cow<'a, str>),
    /// A tensor.
    Tensor(TensorParts<'a>),
}

impl core::fmt::Debug for Parts<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Parts::Items(i) => f.debug_struct("Items").field("len", &i.len()).finish(),
            Parts::Entries(e) => f.debug_struct("Entries").field("len", &e.len()).finish(),
            Parts::Ints(v) => f.debug_tuple("Ints").field(v).finish(),
            Parts::Bytes(v) => f.debug_tuple("Bytes").field(v).finish(),
            Parts::Text(v) => f.debug_tuple("Text").field(v).finish(),
            Parts::Integer(v) => f.debug_tuple("Integer").field(v).finish(),
            Parts::Tensor(v) => f.debug_tuple("Tensor").field(v).finish(),
        }
    }
}

impl Parts<'_> {
    /// The shape of these parts.
    pub fn shape(&self) -> BuiltinShape {
        match self {
            Parts::Items(_) => BuiltinShape::Items,
            Parts::Entries(_) => BuiltinShape::Entries,
            Parts::Ints(_) => BuiltinShape::Ints,
            Parts::Bytes(_) => BuiltinShape::Bytes,
            Parts::Text(_) => BuiltinShape::Text,
            Parts::Integer(_) => BuiltinShape::Integer,
            Parts::Tensor(_) => BuiltinShape::Tensor,
        }
    }
}

/// A tensor's parts (see [`Parts::Tensor`]).
#[derive(Debug, Clone)]
pub struct TensorParts<'a> {
    /// The element type.
    pub dtype: DataType,
    /// The shape.
    pub shape: Cow<'a, [i64]>,
    /// Where the tensor is to live.
    pub device: Device,
    /// The elements' bytes, packed in row-major order.
    pub bytes: Cow<'a, [u8]>,
}

/// Whether `obj` is a value that [`Any`]'s equality and hash compare by content
/// wherever objects are otherwise compared by identity: a string or bytes object (the
/// built-ins of shape [`Text`](BuiltinShape::Text) and [`Bytes`](BuiltinShape::Bytes)
/// that `Any` itself knows). One compare of the type index.
///
/// ```
/// use object_core::{builtin, Any};
///
/// let s = Any::from("long enough to be an object");
/// assert!(builtin::is_value_object(s.as_object().unwrap()));
/// ```
#[inline]
pub fn is_value_object(obj: &ObjectRef) -> bool {
    matches!(
        obj.type_index(),
        crate::type_index::STRING | crate::type_index::BYTES
    )
}

/// Builds a built-in of the type `info` from `parts`.
///
/// # Errors
///
/// [`NotBuiltin`](BuiltinErrorKind::NotBuiltin) if the type is not a built-in, else
/// what its `build` says.
pub fn build(info: &'static TypeInfo, parts: Parts<'_>) -> Result<Any, BuiltinError> {
    match BuiltinHooks::of(info) {
        Some(h) => (h.build)(parts),
        None => Err(BuiltinError::not_builtin(info.key())),
    }
}
