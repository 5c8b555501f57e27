//! Objects with an extra, type-erased tail: a registered object type followed by data
//! the registry does not know (a packed function's callable), in one block.

use core::alloc::Layout;
use std::alloc::{alloc, dealloc, handle_alloc_error};

use super::drop_or_abort;
use crate::header::Object;
use crate::object_type::ObjectType;
use crate::ptr::ObjectPtr;

/// An object of registered type `T` followed by data of a type the registry does not
/// know (`E`): the layout of a packed function, whose callable is a generic sub-object
/// after the fixed `#[repr(C)]` part.
#[repr(C)]
struct WithExtra<T, E> {
    /// The registered part, at offset 0.
    value: T,
    /// The tail.
    extra: E,
}

unsafe extern "C" fn extra_deleter<T: ObjectType, E>(obj: *mut Object) {
    let p = obj as *mut WithExtra<T, E>;
    // SAFETY: called once on the last release of a block that `make_object_with_extra`
    // allocated for exactly this `WithExtra<T, E>`.
    unsafe {
        drop_or_abort(p, T::TYPE_KEY);
        dealloc(p as *mut u8, Layout::new::<WithExtra<T, E>>());
    }
}

/// Allocates `value` (registered type `T`, a final type) followed by `extra`, in one
/// block whose deleter drops both. Only code that knows `E` can reach `extra`, through
/// [`extra_of`]. A `Drop` of either that panics aborts the process, naming `T` (see
/// [`make_object`](super::make_object)).
///
/// `T` must be final: a subtype's fields would overlap `extra`.
pub fn make_object_with_extra<T: ObjectType, E: Send + Sync + 'static>(
    value: T,
    extra: E,
) -> ObjectPtr<T> {
    const { assert!(T::FINAL, "make_object_with_extra needs a final object type") };
    let index = T::type_index();
    let layout = Layout::new::<WithExtra<T, E>>();
    // SAFETY: the layout is nonzero (it contains the header).
    let p = unsafe { alloc(layout) } as *mut WithExtra<T, E>;
    if p.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: fresh block of this exact layout; `value` is first (repr(C)), so the object
    // address is the block address; the deleter matches the layout.
    unsafe {
        p.write(WithExtra { value, extra });
        Object::init(p as *mut Object, index, Some(extra_deleter::<T, E>));
        ObjectPtr::from_raw(p as *mut T)
    }
}

/// The tail of an object made by [`make_object_with_extra`].
///
/// # Safety
///
/// `obj` must point to a live object made by `make_object_with_extra::<T, E>` with this
/// same `E`, with provenance over the whole block (a raw pointer from the handle, not a
/// `&T`), and the returned reference must not outlive the object.
#[inline]
pub unsafe fn extra_of<'a, T: ObjectType, E>(obj: *const T) -> &'a E {
    // SAFETY: the caller guarantees `obj` is the `value` field of a live
    // `WithExtra<T, E>` (offset 0, repr(C)).
    unsafe { &(*(obj as *const WithExtra<T, E>)).extra }
}
