//! A built-in's [`builtin::Contents`](crate::builtin::Contents) as structural equality
//! and hashing compare them: [`contents`] turns the shape every walker reads into the
//! engines' own form (entries collected for matching by key, text and integers as
//! bytes, a tensor's elements read unless the options skip them).

use std::borrow::Cow;

use super::StructuralOptions;
use crate::any::Any;
use crate::builtin::{self, BuiltinHooks};
use crate::dtype::DataType;
use crate::ptr::ObjectRef;

/// What an object of a built-in type holds, as the engines compare it.
#[derive(Debug)]
pub(crate) enum Contents<'a> {
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
    /// Bytes compared as a whole (`Bytes`; `String`'s text and `BigInt`'s decimal
    /// digits as their bytes).
    Bytes(Cow<'a, [u8]>),
    /// A tensor: dtype, shape, and contents unless skipped.
    Tensor(TensorContents<'a>),
    /// Nothing to compare: objects are equal only if they are the same object.
    Identity,
}

/// A tensor's contents (see [`Contents::Tensor`]).
#[derive(Debug)]
pub(crate) struct TensorContents<'a> {
    /// The element type.
    pub(crate) dtype: DataType,
    /// The shape.
    pub(crate) shape: &'a [i64],
    /// The elements, packed in row-major order.
    pub(crate) data: TensorData<'a>,
}

/// The elements of a tensor, as far as they can be read.
#[derive(Debug)]
pub(crate) enum TensorData<'a> {
    /// The elements' bytes, packed in row-major order.
    Bytes(Cow<'a, [u8]>),
    /// Not compared ([`StructuralOptions::skip_tensor_contents`]).
    Skipped,
    /// Not readable here (not on the host): tensors are then equal only if they are the
    /// same object.
    Unreadable,
}

/// The contents of `obj` (a built-in of `hooks`' type), as the engines compare them.
#[inline(always)]
pub(crate) fn contents<'a>(
    hooks: &'static BuiltinHooks,
    obj: &'a ObjectRef,
    options: &StructuralOptions,
) -> Contents<'a> {
    match (hooks.contents)(obj) {
        builtin::Contents::Items(items) => Contents::Items(items),
        builtin::Contents::Entries(entries) => Contents::Entries(entries.collect()),
        builtin::Contents::SnapshotItems(items) => Contents::SnapshotItems(items),
        builtin::Contents::SnapshotEntries(entries) => Contents::SnapshotEntries(entries),
        builtin::Contents::Ints(ints) => Contents::Ints(ints),
        builtin::Contents::Bytes(bytes) => Contents::Bytes(Cow::Borrowed(bytes)),
        builtin::Contents::Text(text) => Contents::Bytes(Cow::Borrowed(text.as_bytes())),
        builtin::Contents::Integer(Cow::Borrowed(digits)) => {
            Contents::Bytes(Cow::Borrowed(digits.as_bytes()))
        }
        builtin::Contents::Integer(Cow::Owned(digits)) => {
            Contents::Bytes(Cow::Owned(digits.into_bytes()))
        }
        builtin::Contents::Tensor(t) => Contents::Tensor(TensorContents {
            dtype: t.dtype,
            shape: t.shape,
            data: if options.skips_tensor_contents() {
                TensorData::Skipped
            } else {
                t.bytes().map_or(TensorData::Unreadable, TensorData::Bytes)
            },
        }),
        builtin::Contents::Identity => Contents::Identity,
    }
}
