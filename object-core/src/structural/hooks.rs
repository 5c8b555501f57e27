//! [`StructuralHooks`]: how a built-in with a representation of its own (an `opaque`
//! type such as `Array`, `Map`, `Shape` or `NDArray`) shows its contents to structural
//! equality and hashing. Core knows no container: each fills in its hooks beside its
//! type, with `#[object(structural_hooks = PATH)]`.

use std::borrow::Cow;

use super::StructuralOptions;
use crate::any::Any;
use crate::dtype::DataType;
use crate::ptr::ObjectRef;

/// The structural hooks of a type: plain data (a function pointer), registered with the
/// type's reflection by `#[object(structural_hooks = PATH)]`, where `PATH` names a
/// `static` of this type.
///
/// ```
/// use object_core::prelude::*;
/// use object_core::structural::{structural_equal, Contents, StructuralHooks, StructuralOptions};
///
/// // A built-in whose contents are a list of ints the derive does not reflect.
/// #[derive(Object, Debug)]
/// #[repr(C)]
/// #[object(key = "doc.hooks.Digits", opaque, structural_hooks = DIGITS_HOOKS)]
/// struct Digits { base: Object, digits: Vec<i64> }
///
/// fn digits<'a>(obj: &'a ObjectRef, _: &StructuralOptions) -> Contents<'a> {
///     match obj.downcast_ref::<Digits>() {
///         Some(d) => Contents::Ints(&d.digits),
///         None => Contents::Identity,
///     }
/// }
/// static DIGITS_HOOKS: StructuralHooks = StructuralHooks { contents: digits };
///
/// let a = make_object(Digits { base: Object::new(), digits: vec![1, 2] }).into_object_ref();
/// let b = make_object(Digits { base: Object::new(), digits: vec![1, 2] }).into_object_ref();
/// assert!(structural_equal(&a, &b));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct StructuralHooks {
    /// The contents of an object of the type (`obj` is always one). Called once per
    /// object per comparison; may allocate (a map's entries, a strided tensor's bytes).
    pub contents: for<'a> fn(obj: &'a ObjectRef, options: &StructuralOptions) -> Contents<'a>,
}

/// What an object of a built-in type holds, as structural equality sees it.
#[derive(Debug)]
#[non_exhaustive]
pub enum Contents<'a> {
    /// A sequence of values compared position by position (`Array`).
    Items(&'a [Any]),
    /// Key-value entries compared regardless of order, matched by key (`Map`). Keys
    /// match as `Map` keys do: strings by text, plain values by value, objects by
    /// identity — or, for a bound variable, through its binding.
    Entries(Vec<(&'a Any, &'a Any)>),
    /// A snapshot of a *mutable* container's items (`List`), taken under its lock:
    /// compared like [`Items`](Self::Items). The engine keeps the snapshot alive for
    /// the rest of the walk, so no lock is held while the items are compared. Such a
    /// container can reach itself: see the module docs on cycles.
    SnapshotItems(Vec<Any>),
    /// A snapshot of a *mutable* container's entries (`Dict`): compared like
    /// [`Entries`](Self::Entries), kept alive like
    /// [`SnapshotItems`](Self::SnapshotItems).
    SnapshotEntries(Vec<(Any, Any)>),
    /// Integers compared as a whole (`Shape`).
    Ints(&'a [i64]),
    /// Bytes compared as a whole: borrowed from the object, or made for the comparison
    /// (`BigInt`: its sign and magnitude, since its words are not bytes in place).
    Bytes(Cow<'a, [u8]>),
    /// A tensor: dtype, shape, and contents unless skipped.
    Tensor(TensorContents<'a>),
    /// Nothing to compare: objects are equal only if they are the same object.
    Identity,
}

/// A tensor's contents (see [`Contents::Tensor`]).
#[derive(Debug)]
pub struct TensorContents<'a> {
    /// The element type.
    pub dtype: DataType,
    /// The shape.
    pub shape: &'a [i64],
    /// The elements, packed in row-major order.
    pub data: TensorData<'a>,
}

/// The elements of a tensor, as far as they can be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum TensorData<'a> {
    /// The elements' bytes, packed in row-major order.
    Bytes(Cow<'a, [u8]>),
    /// Not compared ([`StructuralOptions::skip_tensor_contents`]).
    Skipped,
    /// Not readable here (not on the host): tensors are then equal only if they are the
    /// same object.
    Unreadable,
}
