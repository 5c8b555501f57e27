//! Objects of types with a run-time field table (`reflection::runtime`): the table's
//! address in the word before the object, then the Rust ancestor's struct, then the
//! cells, in one block. They are built through their table (`reflection::build`); this
//! module holds how they are placed and freed: the same two deleters for every such
//! type, which find everything they need through the word (a deleter may not read the
//! header).

use core::alloc::Layout;
use core::ptr::NonNull;

use super::{size_classes, Placed, TypeAlloc};
use crate::header::{Deleter, Object};
use crate::reflection::RuntimeFields;

impl TypeAlloc {
    /// The placement of a run-time field table's objects: blocks of `layout` whose
    /// object starts `lead` bytes in (after the word), from the size-class pool when
    /// the block has a class, freed by the fields deleters.
    pub(crate) fn fields(layout: Layout, lead: usize) -> TypeAlloc {
        debug_assert!(lead >= core::mem::size_of::<usize>() && lead < layout.size());
        TypeAlloc {
            layout,
            lead,
            pooled: size_classes::class_of(layout.size(), layout.align())
                .map(|class| (class, fields_deleter_pooled as Deleter)),
            global: fields_deleter_global as Deleter,
            drop_value: None,
        }
    }
}

/// The deleter of a run-time table's object whose block came from the global allocator.
unsafe extern "C" fn fields_deleter_global(obj: *mut Object) {
    // SAFETY: the header's deleter, called once on the last release, and installed by
    // `reflection::build` for a block `TypeAlloc::allocate` took from the global
    // allocator for a run-time table's object.
    unsafe { release_fields(obj, Placed::Global) }
}

/// The deleter of a run-time table's object whose block came from the size-class pool.
unsafe extern "C" fn fields_deleter_pooled(obj: *mut Object) {
    // SAFETY: as `fields_deleter_global`, for a block from the pool.
    unsafe { release_fields(obj, Placed::Pool) }
}

/// Drops the cells (the table found through the word before the object, not through the
/// header, which the release path may have reused), then the Rust ancestor's value as
/// `drop_in_place` of its type does, and frees the block.
///
/// # Safety
///
/// `obj` is a dead object (its last reference gone) that `reflection::build` built
/// through a run-time table in a block from that table's `TypeAlloc::allocate`, placed
/// as `placed` says; it is not used afterwards.
unsafe fn release_fields(obj: *mut Object, placed: Placed) {
    let base = obj.cast::<u8>();
    // The caller's guarantee: the word holds the table of the object's type, whose
    // cells are initialized and whose Rust part is a live value of the ancestor's type;
    // each is dropped once (`drop_rust` aborts rather than unwind), then the block goes
    // back where it came from, with the layout it was taken with.
    // SAFETY: as just said: each value dropped once, the block freed as it was taken.
    unsafe {
        let table = RuntimeFields::of_object(base);
        table.drop_cells(base);
        (table.drop_rust())(obj);
        table
            .alloc()
            .free_block(NonNull::new_unchecked(base), placed);
    }
}
