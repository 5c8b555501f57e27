//! [`ChildField`]: where a child object sits in its parent, as the walkers report it.

use core::fmt;

use crate::reflection::{FieldFlags, FieldInfo};

/// Where a child object sits in its parent: the reflected field holding it (its name,
/// its [`FieldInfo`], whether it is a definition site, `#[object(def)]`), or, for the
/// value of a built-in container (`Array`, `List`, `Map`, `Dict`), its index in the
/// container; and its [`position`](Self::position) among the parent's children.
///
/// [`for_each_child_field`](super::for_each_child_field), [`Visitor::child`] and
/// [`Rewriter::child`] hand one out for each child. It is a small `Copy` value made from
/// what the walk reads anyway (the field's entry in the type's table, a counter), so a
/// pass that does not look at it costs nothing.
///
/// [`Visitor::child`]: super::Visitor::child
/// [`Rewriter::child`]: super::Rewriter::child
///
/// ```
/// use object_core::prelude::*;
/// use object_core::transform::for_each_child_field;
///
/// #[derive(Object)]
/// #[repr(C)]
/// #[object(key = "doc.cf.Let")]
/// struct Let {
///     base: Object,
///     #[object(def)]
///     var: ObjectRef,
///     value: Option<ObjectRef>,
///     body: ObjectRef,
/// }
///
/// let leaf = || make_object(Object::new()).into_object_ref();
/// let l = Let::new(leaf(), None, leaf()).into_object_ref();
/// let mut seen = Vec::new();
/// for_each_child_field(&l, |field, _child| {
///     seen.push((field.name(), field.position(), field.is_definition()));
/// });
/// // `value` holds `None`: not a child, so `body` is child 1.
/// assert_eq!(seen, [(Some("var"), 0, true), (Some("body"), 1, false)]);
/// ```
#[derive(Clone, Copy)]
pub struct ChildField {
    site: Site,
    position: usize,
}

/// The place itself: a field of the parent's table, or a container's value.
#[derive(Clone, Copy)]
pub(crate) enum Site {
    /// A reflected field (of kind `Object` or `Any`).
    Field(&'static FieldInfo),
    /// The item at this index of an `Array` or `List` (counting every item, objects or
    /// not).
    Item(usize),
    /// The key of the entry at this index of a `Map` or `Dict` (in its iteration order).
    Key(usize),
    /// The value of the entry at this index of a `Map` or `Dict`.
    Value(usize),
}

impl ChildField {
    /// The child at `position` among its parent's children, held at `site`.
    #[inline(always)]
    pub(crate) fn new(site: Site, position: usize) -> Self {
        ChildField { site, position }
    }

    /// The name of the reflected field holding the child (its `#[object(rename)]` if it
    /// has one); `None` for a container's value, which is in no field of its own.
    #[inline]
    pub fn name(&self) -> Option<&'static str> {
        self.info().map(FieldInfo::name)
    }

    /// The field's entry in the parent's table (kind, flags, static type, …); `None`
    /// for a container's value.
    #[inline]
    pub fn info(&self) -> Option<&'static FieldInfo> {
        match self.site {
            Site::Field(f) => Some(f),
            _ => None,
        }
    }

    /// The child's position among its parent's children, from 0, in the order the
    /// walkers list them (reflected fields, the parent type's first; a container's
    /// items; a map's keys and values in turn). Fields and items that hold no object
    /// (`None`, a string, an integer) are not children and take no position, so a
    /// [`Rewriter::child`](super::Rewriter::child) hook's `earlier` slice is always
    /// `position` long.
    #[inline]
    pub fn position(&self) -> usize {
        self.position
    }

    /// For a container's value: its item's index in an `Array` or `List` (counting the
    /// items that are not objects), or its entry's index in a `Map` or `Dict` (in the
    /// map's iteration order; see [`is_map_key`](Self::is_map_key)). `None` for a
    /// field.
    #[inline]
    pub fn item_index(&self) -> Option<usize> {
        match self.site {
            Site::Field(_) => None,
            Site::Item(i) | Site::Key(i) | Site::Value(i) => Some(i),
        }
    }

    /// Whether the child is the key (not the value) of a `Map` or `Dict` entry.
    #[inline]
    pub fn is_map_key(&self) -> bool {
        matches!(self.site, Site::Key(_))
    }

    /// Whether the field is a definition site (`#[object(def)]`,
    /// [`FieldFlags::DEFINITION`]): the binder of a `let`, a function's parameters. A
    /// container's value is not (the container itself may sit in such a field: a pass
    /// that cares looks at the container's own field).
    #[inline]
    pub fn is_definition(&self) -> bool {
        match self.site {
            Site::Field(f) => f.flags().contains(FieldFlags::DEFINITION),
            _ => false,
        }
    }
}

impl PartialEq for ChildField {
    fn eq(&self, other: &Self) -> bool {
        let same_site = match (self.site, other.site) {
            (Site::Field(a), Site::Field(b)) => core::ptr::eq(a, b),
            (Site::Item(a), Site::Item(b))
            | (Site::Key(a), Site::Key(b))
            | (Site::Value(a), Site::Value(b)) => a == b,
            _ => false,
        };
        same_site && self.position == other.position
    }
}

impl Eq for ChildField {}

impl fmt::Debug for ChildField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ChildField");
        match self.site {
            Site::Field(info) => d.field("name", &info.name()),
            Site::Item(i) => d.field("item", &i),
            Site::Key(i) => d.field("key_of_entry", &i),
            Site::Value(i) => d.field("value_of_entry", &i),
        };
        d.field("position", &self.position)
            .field("definition", &self.is_definition())
            .finish()
    }
}
