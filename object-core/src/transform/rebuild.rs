//! Rebuilding a node with new children: [`Children`], the new children in order, and
//! [`RebuildFn`], the entry a type's reflection holds (for a derived type, the copy
//! through its field table in `reflection::build`; built-in containers are rebuilt from
//! their [`BuiltinHooks`](crate::builtin::BuiltinHooks)).

use core::fmt;

use super::error::TransformError;
use crate::any::TypeError;
use crate::ptr::ObjectRef;
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

/// The type-erased rebuild entry a type's reflection holds: a copy of the object with
/// its child objects taken from the `Children`, in the order the walkers list them.
pub type RebuildFn =
    fn(&ObjectRef, &mut Children<'_>, &'static TypeInfo) -> Result<ObjectRef, TransformError>;

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
