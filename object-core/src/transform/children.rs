//! Enumerating a node's child objects: its reflected fields that hold objects, or a
//! container's items through its [`ContainerHooks`](super::ContainerHooks).

use super::rebuild::{container_hooks, ChildRef, Children};
use super::TransformError;
use crate::ptr::{ObjectPtr, ObjectRef};
use crate::reflection::raw::describe;
use crate::reflection::ValueRef;

/// Calls `f` with every child object of `obj`, borrowed from it where it stores them.
#[inline]
pub(crate) fn each_child<'a>(obj: &'a ObjectRef, f: &mut impl FnMut(ChildRef<'a>)) {
    let d = describe(obj);
    if !d.reflection().is_opaque() {
        for (_, v) in d.views() {
            if let ValueRef::Object(o) = v {
                f(ChildRef::Borrowed(o));
            }
        }
    } else if let Some(h) = container_hooks(obj.type_index()) {
        (h.children)(obj, f);
    }
}

/// A copy of `obj` with its children replaced by `children` (in the order
/// [`each_child`] listed them).
pub(crate) fn rebuild_node(
    obj: &ObjectRef,
    children: &mut Children<'_>,
) -> Result<ObjectRef, TransformError> {
    let info = obj.type_info();
    let refl = info.reflection();
    if !refl.is_opaque() {
        return match refl.rebuild {
            Some(rebuild) => rebuild(obj, children, info),
            None => Err(TransformError::not_rebuildable(info.key())),
        };
    }
    match container_hooks(obj.type_index()) {
        Some(h) => (h.rebuild)(obj, children),
        None => Err(TransformError::not_rebuildable(info.key())),
    }
}

/// The address of an object, as a memo key.
#[inline]
pub(crate) fn addr(o: &ObjectRef) -> usize {
    ObjectPtr::as_ptr(o) as usize
}

/// A hasher for object addresses (already unique; spread the bits a little).
#[derive(Default, Clone, Copy)]
pub(crate) struct AddrHasher(u64);

impl core::hash::Hasher for AddrHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        // Objects are at least 16-byte aligned: drop the zero bits, then mix.
        self.0 = ((n as u64) >> 4)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

pub(crate) type AddrMap<V> =
    std::collections::HashMap<usize, V, core::hash::BuildHasherDefault<AddrHasher>>;
