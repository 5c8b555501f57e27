//! Rebuilding a node with new children: [`Children`], the [`Rebuild`] trait the derive
//! implements. (Built-in containers are rebuilt from their
//! [`BuiltinHooks`](crate::builtin::BuiltinHooks).)

use core::fmt;

use super::error::TransformError;
use crate::any::TypeError;
use crate::header::Object;
use crate::object_type::ObjectType;
use crate::ptr::ObjectRef;
use crate::reflection::ReflectError;
use crate::registry::TypeInfo;

/// The new children of a node being rebuilt, in the order the node lists them (its
/// reflected fields, the parent's first; a container's items). Each field takes its
/// own from the front with [`next_child`](Self::next_child).
pub struct Children<'a> {
    items: std::vec::Drain<'a, ObjectRef>,
}

impl fmt::Debug for Children<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Children")
            .field("remaining", &self.items.len())
            .finish()
    }
}

impl<'a> Children<'a> {
    /// The children drained from `items`.
    pub fn new(items: std::vec::Drain<'a, ObjectRef>) -> Self {
        Children { items }
    }

    /// The next child.
    ///
    /// # Errors
    ///
    /// A `TypeError` if none is left.
    #[inline]
    pub fn next_child(&mut self) -> Result<ObjectRef, TypeError> {
        self.items
            .next()
            .ok_or_else(|| TypeError::new("a child object", "None"))
    }

    /// How many children are left.
    pub fn remaining(&self) -> usize {
        self.items.len()
    }
}

/// Copying a node with its child objects replaced: implemented by `#[derive(Object)]`
/// (field by field, the parent's part through the parent's impl; a skipped field takes
/// its `Default`, as in [`create`](crate::reflection::create)). `#[object(opaque)]`
/// types keep the default, which refuses.
pub trait Rebuild: Sized {
    /// A copy of `self` whose child objects come from `children`, in order.
    ///
    /// # Errors
    ///
    /// [`WrongChildType`](super::TransformErrorKind::WrongChildType) for a child that
    /// does not fit its field, [`NotRebuildable`](super::TransformErrorKind::NotRebuildable)
    /// for a type that cannot be rebuilt field by field.
    fn rebuild_from(&self, children: &mut Children<'_>) -> Result<Self, TransformError> {
        let _ = children;
        Err(TransformError::not_rebuildable(
            core::any::type_name::<Self>(),
        ))
    }
}

impl Rebuild for Object {
    fn rebuild_from(&self, _: &mut Children<'_>) -> Result<Self, TransformError> {
        Ok(Object::new())
    }
}

/// The type-erased rebuild entry a type's reflection holds.
pub type RebuildFn =
    fn(&ObjectRef, &mut Children<'_>, &'static TypeInfo) -> Result<ObjectRef, TransformError>;

/// The rebuild entry of `T`: a copy of `obj` (a `T` or a run-time descendant of it with
/// `T`'s layout, of type `info`) with new children. Used by the derive.
///
/// # Errors
///
/// As [`Rebuild::rebuild_from`], and [`NotRebuildable`](super::TransformErrorKind::NotRebuildable)
/// if `obj` is not a `T`.
pub fn rebuild_entry<T: ObjectType + Rebuild>(
    obj: &ObjectRef,
    children: &mut Children<'_>,
    info: &'static TypeInfo,
) -> Result<ObjectRef, TransformError> {
    let this = obj
        .downcast_ref::<T>()
        .ok_or_else(|| TransformError::not_rebuildable(info.key()))?;
    let value = this
        .rebuild_from(children)
        .map_err(|e| e.at_node(info.key()))?;
    crate::reflection::create::finish_create(value, info)
        .map_err(|e: ReflectError| TransformError::reflect(info.key(), e))
}

/// The child objects of one node, as the walkers hand them out: borrowed from the node
/// where it stores them, or owned where the node can only give a snapshot (the shared
/// mutable `List` and `Dict`).
#[derive(Debug)]
pub enum ChildRef<'a> {
    /// A child stored in the node (a field, an `Array` item, a `Map` key or value).
    Borrowed(&'a ObjectRef),
    /// A child from a snapshot.
    Owned(ObjectRef),
}

impl ChildRef<'_> {
    /// The child.
    #[inline]
    pub fn get(&self) -> &ObjectRef {
        match self {
            ChildRef::Borrowed(r) => r,
            ChildRef::Owned(o) => o,
        }
    }
}

/// Autoref-based dispatch for generated code (see `reflection::create::probe`): a
/// parent or field type that fails its own checks is reported there, not again here.
/// Not public API.
#[doc(hidden)]
#[allow(clippy::new_without_default)]
pub mod probe {
    use core::marker::PhantomData;

    use super::{Children, Rebuild};
    use crate::reflection::FieldValue;
    use crate::transform::TransformError;

    /// Probes a parent, a field or a skipped field's type.
    #[derive(Debug)]
    pub struct RebuildProbe<T>(PhantomData<T>);

    impl<T> RebuildProbe<T> {
        /// A probe for `T`.
        pub const fn new() -> Self {
            RebuildProbe(PhantomData)
        }
    }

    /// Rebuilds a parent part.
    pub trait ParentReal<T> {
        /// The parent part, rebuilt.
        fn rebuild_parent(&self, v: &T, c: &mut Children<'_>) -> Result<T, TransformError>;
    }
    impl<T: Rebuild> ParentReal<T> for RebuildProbe<T> {
        #[inline]
        fn rebuild_parent(&self, v: &T, c: &mut Children<'_>) -> Result<T, TransformError> {
            v.rebuild_from(c)
        }
    }
    /// The fallback for a parent that fails its own checks.
    pub trait ParentFallback<T> {
        /// An error.
        fn rebuild_parent(&self, _: &T, _: &mut Children<'_>) -> Result<T, TransformError> {
            Err(TransformError::not_rebuildable(core::any::type_name::<T>()))
        }
    }
    impl<T> ParentFallback<T> for &RebuildProbe<T> {}

    /// Rebuilds a reflected field.
    pub trait FieldReal<T> {
        /// The field, rebuilt.
        fn rebuild_field(
            &self,
            key: &'static str,
            name: &'static str,
            v: &T,
            c: &mut Children<'_>,
        ) -> Result<T, TransformError>;
    }
    impl<T: FieldValue> FieldReal<T> for RebuildProbe<T> {
        #[inline]
        fn rebuild_field(
            &self,
            key: &'static str,
            name: &'static str,
            v: &T,
            c: &mut Children<'_>,
        ) -> Result<T, TransformError> {
            v.rebuild_field(c)
                .map_err(|e| TransformError::wrong_child(key, name, e))
        }
    }
    /// The fallback for a field type that fails its own checks.
    pub trait FieldFallback<T> {
        /// An error.
        fn rebuild_field(
            &self,
            key: &'static str,
            _: &'static str,
            _: &T,
            _: &mut Children<'_>,
        ) -> Result<T, TransformError> {
            Err(TransformError::not_rebuildable(key))
        }
    }
    impl<T> FieldFallback<T> for &RebuildProbe<T> {}

    /// A skipped field's `Default`.
    pub trait SkippedReal<T> {
        /// The default.
        fn skipped_default(&self, key: &'static str) -> Result<T, TransformError>;
    }
    impl<T: Default> SkippedReal<T> for RebuildProbe<T> {
        #[inline]
        fn skipped_default(&self, _: &'static str) -> Result<T, TransformError> {
            Ok(T::default())
        }
    }
    /// The fallback for a skipped field without `Default` (reported by `create`'s code).
    pub trait SkippedFallback<T> {
        /// An error.
        fn skipped_default(&self, key: &'static str) -> Result<T, TransformError> {
            Err(TransformError::not_rebuildable(key))
        }
    }
    impl<T> SkippedFallback<T> for &RebuildProbe<T> {}
}
