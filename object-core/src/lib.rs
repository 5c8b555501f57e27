//! # object-core: a unified object protocol for Rust
//!
//! The runtime object system a compiler or deep-learning runtime is built on, in the
//! style of TVM's Object/ObjectRef design: every value that such a system passes
//! around — AST nodes, runtime values, containers, functions, tensors — is one kind of
//! thing, an *object*, with
//!
//! - one 16-byte `#[repr(C)]` header ([`Object`](struct@Object)): type index, atomic count, deleter;
//! - one intrusive pointer ([`ObjectPtr<T>`], and [`ObjectRef`] when type-erased) with
//!   `Arc`'s counting discipline, free up-casts and O(1) checked down-casts, including
//!   to intermediate base types, without Rust's `Any` or a vtable;
//! - one type [`registry`] that numbers types so that each type's subtree is an index
//!   range, with reserved slots for run-time descendants and a lock-free fallback for
//!   descendants that overflow them;
//! - allocators that pick the deleter ([`make_object`], [`ObjectPool`],
//!   [`make_object_with_items`]);
//! - [`reflection`] of every derived type's fields, and on it [`structural`] equality
//!   and hashing (alpha-equivalence through variables bound at definition sites, stable
//!   hashes, access paths to the first difference);
//! - on reflection, [`transform`]: dispatch by type ([`TypeDispatch`](transform::TypeDispatch)),
//!   a generic visitor and a mutator that rebuilds only what changed.
//!
//! ```
//! use object_core::{Object, ObjectRef};
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.Expr", slots = 4)]
//! struct Expr {
//!     base: Object,
//! }
//!
//! #[derive(Object)]
//! #[repr(C)]
//! #[object(key = "doc.IntImm", parent = Expr, final)]
//! struct IntImm {
//!     base: Expr,
//!     value: i64,
//! }
//!
//! let e: ObjectRef = IntImm::new(7).into_object_ref();
//! assert!(e.is::<Expr>());
//! assert_eq!(e.downcast_ref::<IntImm>().map(|i| i.value), Some(7));
//! assert_eq!(e.type_key(), "doc.IntImm");
//! ```
//!
//! Every handle over an object pointer ([`String`], [`Bytes`], [`Error`], and the
//! containers, functions and tensors of `object-containers`) offers the same API:
//! `from_object_ptr`, `as_object_ptr`, `into_object_ptr`, `ptr_eq` (an associated
//! function, as on `Arc`), `From<_> for ObjectRef`, and the `Any` conversions.
//!
//! See `ARCHITECTURE.md` at the repository root for the architecture (the crates, the
//! header and index ranges, where `unsafe` lives and why), and the `object-examples`
//! crate's `tour` for a guided walk through an expression language built on it.

#![deny(unsafe_code)]

#[allow(unused_extern_crates)] // lets generated `::object_core` paths resolve inside this crate
extern crate self as object_core;

// Unsafe code is denied here and allowed only in the modules (or submodules) below that
// say why: see "Unsafe" in `ARCHITECTURE.md` at the repository root.
mod addr_map;
// Allocation: raw blocks, deleters, the pool's free lists, trailing items.
#[allow(unsafe_code)]
pub mod alloc;
mod any;
pub mod builtin;
mod dtype;
mod error;
mod handle;
// The header: initializing it in place, the count, the deleter and the release path.
#[allow(unsafe_code)]
mod header;
// The `ObjectType`, `NonFinal` and `FieldsMut` contracts, the type cache's entry, and
// the one-instruction load of its word that `is::<T>()` makes.
#[allow(unsafe_code)]
mod object_type;
// The intrusive pointer: raw pointer ownership, casts justified by `ObjectType`.
#[allow(unsafe_code)]
mod ptr;
pub mod reflection;
pub mod registry;
// The root `Object`'s `ObjectType`, `NonFinal` and `FieldsMut` impls.
#[allow(unsafe_code)]
mod root;
mod string;
pub mod structural;
pub mod transform;
pub mod type_index;
// Typed references: a reference read as the `ObjectPtr` it is `repr(transparent)`
// over (in place, in containers' slots and in object fields).
#[allow(unsafe_code)]
mod typed_ref;
// Views: the unchecked reference of the variant the view's table chose.
#[allow(unsafe_code)]
pub mod view;

pub use crate::alloc::{
    drop_object_in_place, make_object, make_object_as, make_object_with_extra,
    make_object_with_items, make_object_with_slice, Allocator, GlobalAllocator, InlineItems,
    ObjectPool, SizeClassAllocator,
};
pub use crate::any::{
    Any, AnyItem, AnyView, FromArg, FromRet, IntoRet, PtrArg, TypeError, SMALL_STR_MAX,
};
pub use crate::dtype::{
    DataType, Device, ParseDataTypeError, ParseDataTypeReason, ParseDeviceError,
};
pub use crate::error::{Error, ErrorKind, ErrorObj};
#[cfg(feature = "live-count")]
pub use crate::header::live_objects;
pub use crate::header::{Deleter, Object};
pub use crate::object_type::{FieldsMut, IsA, NonFinal, ObjectType};
pub use crate::ptr::{IntoObjectPtr, NotUnique, NotUniqueReason, ObjectPtr, ObjectRef};
pub use crate::reflection::IntoField;
pub use crate::registry::{RegistryError, TypeInfo};
pub use crate::string::{Bytes, BytesObj, String, StringObj};
pub use crate::typed_ref::{HasRef, TypedRef};

/// The constructor list of the root `Object` (empty), for the generated constructors of
/// its direct children. Not public API: see `object-derive`'s `ctor.rs`.
#[doc(hidden)]
#[macro_export]
macro_rules! __object_ctor_root {
    ([$($krate:tt)*] $($rest:tt)*) => {
        $($krate)*::__private::object_ctor! { [] [$($krate)*] $($rest)* }
    };
}

#[doc = include_str!("../docs/derive_object.md")]
pub use object_derive::Object;

/// `#[derive(ObjectEnum)]` (a field-less enum as a reflected field) and the trait it
/// implements: see [`reflection::ObjectEnum`] and the `object-derive` crate.
pub use crate::reflection::ObjectEnum;
pub use object_derive::ObjectEnum;

/// Declares an exhaustive view of a base type: see [`view`].
pub use object_derive::object_view;

/// The names most code needs: `use object_core::prelude::*;`.
///
/// ```
/// use object_core::prelude::*;
/// let o: ObjectRef = make_object(Object::new());
/// assert!(o.is::<Object>());
/// ```
pub mod prelude {
    pub use crate::{
        make_object, FieldsMut, IntoObjectPtr, Object, ObjectEnum, ObjectPtr, ObjectRef,
        ObjectType, TypedRef,
    };
}

/// Not public API. Used by generated code.
#[doc(hidden)]
pub mod __private {
    pub use crate::object_type::{
        AncestorAt, AncestorIs, DepthSub, SameType, Succ, TypeCache, Zero,
    };
    pub use crate::reflection::build::TableBuild;
    pub use crate::reflection::create::{finish_create, not_creatable, probe};
    pub use crate::reflection::field::{concat_fields, has_reflected_field};
    pub use crate::reflection::print::debug_reflected;
    pub use crate::reflection::raw::{
        debug_entry, reflected_field, skipped_field, skipped_field_default, type_reflection,
    };
    pub use crate::registry::{LinkedType, TypeRegistration};
    pub use crate::structural::can_define;
    pub use core::any::TypeId;
    pub use core::marker::{PhantomData, Send, Sync};
    pub use core::ptr::NonNull;
    pub use inventory;

    /// Compile-time check that the first field of an object struct is its parent.
    #[diagnostic::on_unimplemented(
        message = "the first field of an object struct must be its parent `{P}`",
        label = "expected `{P}` here",
        note = "object structs embed their parent as their first field, so a pointer to the object is a pointer to the parent"
    )]
    pub trait FirstFieldIs<P>: Sized {
        /// The first field's value from the parent's (the identity).
        fn from_parent(p: P) -> Self;
    }
    impl<P> FirstFieldIs<P> for P {
        #[inline(always)]
        fn from_parent(p: P) -> Self {
            p
        }
    }

    /// Compile-time check that object types can be shared across threads.
    #[diagnostic::on_unimplemented(
        message = "object type `{Self}` must be `Send + Sync`",
        label = "contains a field that is not `Send + Sync`",
        note = "objects are reference-counted across threads and down-cast from type-erased handles; wrap thread-bound data in a `Mutex` or keep it outside the object"
    )]
    pub trait ThreadSafe {}
    // Not recommended, so that a failure reports `ThreadSafe` (and the note above)
    // rather than only the missing `Send` or `Sync` of one field.
    #[diagnostic::do_not_recommend]
    impl<T: Send + Sync + ?Sized> ThreadSafe for T {}

    pub use crate::view::{
        assert_exhaustive as view_assert_exhaustive, unlisted as view_unlisted, view_cast,
        ViewTable,
    };
    pub use object_derive::__object_ctor as object_ctor;

    /// Builds a value of an object type from its parent's value and its own constructor
    /// fields (skipped fields are `Default::default()`). Written by the derive (in the
    /// type's module, so private fields are fine); generated constructors call it for
    /// each level.
    ///
    /// (No `ObjectType` supertrait, so that a type failing its own checks is not
    /// reported again here.)
    pub trait ObjectInit: Sized {
        /// The parent type.
        type Base;
        /// The own constructor fields, in declaration order.
        type Own;
        /// The value.
        fn __object_init(base: Self::Base, own: Self::Own) -> Self;
    }

    /// The type of an object type's constructor field at position `N` (in its struct).
    /// Written by the derive; generated constructors name ancestors' field types
    /// through it.
    pub trait FieldType<const N: usize> {
        /// The field's type.
        type Type;
    }

    /// The type of the constructor field at position `N` of the ancestor `L` levels
    /// up (0: the type itself), as the type's own constructors name it.
    pub trait FieldTypeAt<const L: usize, const N: usize> {
        /// The field's type.
        type Type;
    }

    /// The declared default (`#[object(default)]`) of the field at position `N`.
    pub trait FieldDefault<const N: usize>: FieldType<N> {
        /// A fresh default value.
        fn default_value() -> Self::Type;
    }

    /// `ObjectPtr<T>` → `T`: what an object field's constructor parameter up-casts to.
    pub trait PtrTarget {
        /// The pointee type.
        type Target: crate::ObjectType;
    }
    impl<T: crate::ObjectType> PtrTarget for crate::ObjectPtr<T> {
        type Target = T;
    }

    pub use crate::reflection::IntoField;
    pub use crate::typed_ref::__support as typed_ref;

    /// What an `abstract` type's `new` asks of it, and no type has: calling it reports
    /// this message.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is `abstract`: it has no constructor",
        label = "an abstract type is made only through its subtypes",
        note = "call the constructor of one of its subtypes (`Add::new(…)`), or drop `abstract` from its `#[object(...)]` to make it instantiable"
    )]
    pub trait Instantiable<'a> {}

    pub const fn assert_first_field(offset: usize) {
        assert!(offset == 0, "the parent field must be at offset 0");
    }
}
