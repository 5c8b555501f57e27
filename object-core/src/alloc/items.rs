//! Objects with trailing items in one block (header, fields, items): the
//! [`InlineItems`] contract, [`make_object_with_items`] / [`make_object_with_slice`],
//! and the in-place item operations on a unique handle.

use core::alloc::Layout;
use core::ptr::{self, NonNull};
use std::alloc::{alloc, dealloc, handle_alloc_error};

use super::{drop_object_in_place, drop_or_abort, size_classes};
use crate::header::{Deleter, Object};
use crate::object_type::ObjectType;
use crate::ptr::ObjectPtr;

/// An object type followed in memory by a variable number of items (a string's bytes,
/// an array's elements), allocated in one block: header, fields, items.
///
/// # Safety
///
/// - Values of the type become objects only through [`make_object_with_items`] (keep
///   the fields private to the implementing module, so no other code can build a value
///   and hand it to `make_object` or a pool);
/// - `item_capacity` returns the number of item slots allocated after the value, and
///   changes only through `set_item_capacity`; `item_len` returns how many leading slots
///   hold initialized items, never more than the capacity, and changes only through
///   `set_item_len`.
///
/// The deleter drops exactly `item_len()` items and frees a block sized from
/// `item_capacity()`.
pub unsafe trait InlineItems: ObjectType {
    /// The trailing item type.
    type Item;
    /// Whether the items may change after creation (`Array`). For `false` (strings,
    /// shapes: fixed at creation), `items_mut`, `push_item`, `pop_item`,
    /// `truncate_items` and `grow_items` refuse, and `set_item_len` /
    /// `set_item_capacity` are only called while the object is made.
    const RESIZABLE: bool = true;
    /// Allocated item slots.
    fn item_capacity(&self) -> usize;
    /// Initialized items.
    fn item_len(&self) -> usize;
    /// Records how many items are initialized. Called while items are written.
    ///
    /// # Safety
    ///
    /// `len` leading slots must hold initialized items and `len <= capacity()`.
    unsafe fn set_item_len(&mut self, len: usize);
    /// Records a new capacity. Called when the block is reallocated; must not panic.
    ///
    /// # Safety
    ///
    /// The block after the value must have room for `cap` items.
    unsafe fn set_item_capacity(&mut self, cap: usize);
    /// Told where the items live, after allocation and after every reallocation, for
    /// types that keep a pointer to them (e.g. a string's `data`, as C readers expect).
    /// The default ignores it.
    fn set_items_ptr(&mut self, ptr: *const Self::Item) {
        let _ = ptr;
    }
}

fn items_layout<T: InlineItems>(capacity: usize) -> Option<(Layout, usize)> {
    let (layout, offset) = Layout::new::<T>()
        .extend(Layout::array::<T::Item>(capacity).ok()?)
        .ok()?;
    Some((layout.pad_to_align(), offset))
}

/// The offset of the first item from the object's address.
#[inline]
pub(crate) fn items_offset<T: InlineItems>() -> usize {
    let size = core::mem::size_of::<T>();
    let align = core::mem::align_of::<T::Item>();
    size.div_ceil(align) * align
}

/// Drops the items and the value of a dying object made by [`make_object_with_items`],
/// and returns its block's layout (recomputed from the same capacity).
///
/// # Safety
///
/// Called once, on the last release, with such an object (its `len` items are
/// initialized: InlineItems' contract).
#[inline(always)]
unsafe fn drop_items_and_value<T: InlineItems>(p: *mut T) -> Layout {
    // SAFETY: the caller's guarantee.
    unsafe {
        let (len, cap) = ((*p).item_len(), (*p).item_capacity());
        let items = (p as *mut u8).add(items_offset::<T>()) as *mut T::Item;
        drop_or_abort(ptr::slice_from_raw_parts_mut(items, len), T::TYPE_KEY);
        drop_object_in_place(p);
        items_layout::<T>(cap).unwrap_unchecked().0
    }
}

unsafe extern "C" fn items_deleter<T: InlineItems>(obj: *mut Object) {
    let p = obj as *mut T;
    // SAFETY: called once on the last release of a block that `make_object_with_items`
    // allocated with the global allocator, with this layout.
    unsafe {
        let layout = drop_items_and_value(p);
        dealloc(p as *mut u8, layout);
    }
}

unsafe extern "C" fn pooled_items_deleter<T: InlineItems>(obj: *mut Object) {
    let p = obj as *mut T;
    // SAFETY: called once on the last release of a block that `make_object_with_items`
    // took from the size-class pool for this layout (its capacity never changes: the
    // type is not resizable).
    unsafe {
        let layout = drop_items_and_value(p);
        size_classes::give_back_block(layout, p as *mut u8);
    }
}

/// Allocates `value` with room for `capacity` items, and up to that many items from
/// `items`, in one block: from the size-class pool if the type is not resizable (a
/// string, a shape) and the block fits a class (at most 128 bytes: a string of up to
/// 95 bytes), else with the global allocator.
///
/// The value's capacity and count are set here (whatever it said before); the count is
/// set as items are written (so a panicking iterator leaves a consistent object that is
/// dropped normally). Items beyond the capacity are not taken from the iterator. A `Drop`
/// of the value or an item that panics on release aborts the process, naming `T` (see
/// [`make_object`](super::make_object)).
///
/// # Panics
///
/// If the block size overflows `isize` (like `Vec::with_capacity`).
#[inline]
pub fn make_object_with_items<T: InlineItems>(
    mut value: T,
    capacity: usize,
    items: impl IntoIterator<Item = T::Item>,
) -> ObjectPtr<T> {
    let index = T::type_index();
    let cap = capacity;
    let Some((layout, offset)) = items_layout::<T>(cap) else {
        panic!("object with {cap} trailing items is too large")
    };
    debug_assert_eq!(offset, items_offset::<T>());
    // SAFETY: the block allocated below has `cap` slots, none initialized yet.
    unsafe {
        value.set_item_len(0);
        value.set_item_capacity(cap);
    }
    // A block whose size never changes (the type is not resizable) and fits a size
    // class comes from the size-class pool; any other from the global allocator.
    let pooled = if T::RESIZABLE {
        None
    } else {
        size_classes::take_block(layout)
    };
    let (p, deleter): (*mut T, Deleter) = match pooled {
        Some(p) => (p.as_ptr() as *mut T, pooled_items_deleter::<T>),
        None => {
            // SAFETY: the layout has nonzero size (it contains the header).
            let p = unsafe { alloc(layout) } as *mut T;
            if p.is_null() {
                handle_alloc_error(layout);
            }
            (p, items_deleter::<T>)
        }
    };
    let base = (p as *mut u8).wrapping_add(offset) as *mut T::Item;
    // SAFETY: fresh block of the right layout; header first (ObjectType's contract).
    let obj = unsafe {
        p.write(value);
        Object::init(p as *mut Object, index, Some(deleter));
        (*p).set_items_ptr(base);
        ObjectPtr::from_raw(p)
    };
    for (i, item) in items.into_iter().take(cap).enumerate() {
        // SAFETY: `i < cap`, inside the block; we hold the only handle; `len` grows
        // only after the slot is written.
        unsafe {
            base.add(i).write(item);
            (*p).set_item_len(i + 1);
        }
    }
    obj
}

/// [`make_object_with_items`] for `Copy` items taken from a slice (one `memcpy`), the
/// rest of the capacity filled with `pad` (a string's NUL terminator, say): every slot
/// is initialized and counted.
#[inline]
pub fn make_object_with_slice<T: InlineItems>(
    value: T,
    capacity: usize,
    items: &[T::Item],
    pad: T::Item,
) -> ObjectPtr<T>
where
    T::Item: Copy,
{
    let obj = make_object_with_items(value, capacity, core::iter::empty());
    let n = items.len().min(capacity);
    let base = ObjectPtr::items_base(&obj);
    // SAFETY: the fresh object is unshared and has `capacity` slots at `base`; `Copy`
    // items need no drop; the count is set once every slot is written.
    unsafe {
        core::ptr::copy_nonoverlapping(items.as_ptr(), base, n);
        if n < capacity {
            // The common case (a string's single NUL) without a `memset` call.
            base.add(n).write(pad);
            for i in n + 1..capacity {
                base.add(i).write(pad);
            }
        }
        (*(ObjectPtr::as_ptr(&obj) as *mut T)).set_item_len(capacity);
    }
    obj
}

impl<T: InlineItems> ObjectPtr<T> {
    /// The initialized trailing items.
    #[inline]
    pub fn items(this: &Self) -> &[T::Item] {
        // Objects of an `InlineItems` type are made by `make_object_with_items`, so
        // `item_len` initialized items follow at `items_offset`.
        // SAFETY: as said; the pointer is the handle's, with provenance over the whole
        // block (not a `&T`'s, which covers the value only); the borrow is the handle's.
        unsafe { core::slice::from_raw_parts(Self::items_base(this), this.item_len()) }
    }

    #[inline]
    fn items_base(this: &Self) -> *mut T::Item {
        (ObjectPtr::as_ptr(this) as *mut u8).wrapping_add(items_offset::<T>()) as *mut T::Item
    }

    /// The items, mutably, when this is the only handle.
    #[inline]
    pub fn items_mut(this: &mut Self) -> Option<&mut [T::Item]> {
        if !T::RESIZABLE || ObjectPtr::strong_count(this) != 1 {
            return None;
        }
        let base = Self::items_base(this);
        // SAFETY: unique handle (count 1 and `&mut self`), `item_len` initialized items
        // at `items_offset` (InlineItems' contract); items are not part of any header.
        Some(unsafe { core::slice::from_raw_parts_mut(base, this.item_len()) })
    }

    /// Appends an item in place when this is the only handle and there is room;
    /// gives the item back otherwise.
    ///
    /// # Errors
    ///
    /// The item, back, if the type's items are fixed at creation, the object is shared,
    /// or it is full (grow it with [`grow_items`](Self::grow_items)).
    #[inline]
    pub fn push_item(this: &mut Self, item: T::Item) -> Result<(), T::Item> {
        let len = this.item_len();
        if !T::RESIZABLE || ObjectPtr::strong_count(this) != 1 || len >= this.item_capacity() {
            return Err(item);
        }
        let base = Self::items_base(this);
        // SAFETY: unique handle; slot `len < capacity` is inside the block and free; the
        // count grows only after the slot is written.
        unsafe {
            base.add(len).write(item);
            Self::header_mut(this).set_item_len(len + 1);
        }
        Ok(())
    }

    /// Removes the last item when this is the only handle.
    #[inline]
    pub fn pop_item(this: &mut Self) -> Option<T::Item> {
        let len = this.item_len();
        if !T::RESIZABLE || ObjectPtr::strong_count(this) != 1 || len == 0 {
            return None;
        }
        let base = Self::items_base(this);
        // SAFETY: unique handle; the count shrinks first, then the (initialized) last
        // slot is moved out and is no longer counted.
        unsafe {
            Self::header_mut(this).set_item_len(len - 1);
            Some(base.add(len - 1).read())
        }
    }

    /// Drops the items past `len` when this is the only handle; false if shared.
    pub fn truncate_items(this: &mut Self, len: usize) -> bool {
        if !T::RESIZABLE || ObjectPtr::strong_count(this) != 1 {
            return false;
        }
        while this.item_len() > len {
            drop(Self::pop_item(this));
        }
        true
    }

    /// Reallocates the block for `capacity` item slots (at least the current count)
    /// when this is the only handle; false if shared. The object may move: this handle
    /// is updated.
    ///
    /// # Panics
    ///
    /// If the block size overflows `isize` (like `Vec::reserve`).
    pub fn grow_items(this: &mut Self, capacity: usize) -> bool {
        if !T::RESIZABLE || ObjectPtr::strong_count(this) != 1 {
            return false;
        }
        let capacity = capacity.max(this.item_len());
        let old_cap = this.item_capacity();
        if capacity == old_cap {
            return true;
        }
        let (Some((old, _)), Some((new, _))) =
            (items_layout::<T>(old_cap), items_layout::<T>(capacity))
        else {
            panic!("object with {capacity} trailing items is too large")
        };
        let p = ObjectPtr::as_ptr(this) as *mut T;
        // Every object of an `InlineItems` type is a global-allocator block of
        // `items_layout(item_capacity())` (the trait's contract).
        // SAFETY: that block; we hold the only reference, so it may move (items move
        // bitwise with it); on failure it is untouched and `handle_alloc_error` diverges.
        unsafe {
            let q = std::alloc::realloc(p as *mut u8, old, new.size()) as *mut T;
            let Some(q) = NonNull::new(q) else {
                handle_alloc_error(new)
            };
            ObjectPtr::set_raw(this, q);
            (*q.as_ptr()).set_item_capacity(capacity);
            let base = Self::items_base(this);
            (*q.as_ptr()).set_items_ptr(base);
        }
        true
    }

    /// `&mut T` for the allocator's own bookkeeping (count and capacity fields).
    ///
    /// # Safety
    ///
    /// Unique handle; the caller must not move the value or touch its header.
    #[inline]
    unsafe fn header_mut(this: &mut Self) -> &mut T {
        // SAFETY: see the function's contract.
        unsafe { &mut *(ObjectPtr::as_ptr(this) as *mut T) }
    }
}
